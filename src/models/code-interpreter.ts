import type { ChatTool } from './types.js';

/**
 * code_interpreter as a model sees it: a function (`code_interpreter` with a `code` argument) that
 * Standin executes itself in the thread's Python session (the run names it in
 * `ChatRequest.interpreter`), and its result as the text of the tool message — what the code printed,
 * then a line naming the files it wrote as `sandbox:/mnt/data/…` links, which the model copies into its
 * answer to link them. The built-in provider reads the same text back (`parseCodeOutput`).
 */

/** The function offered for code_interpreter (its name may differ when a function of the run already has it). */
export const CODE_INTERPRETER_FUNCTION: ChatTool['function'] = {
  name: 'code_interpreter',
  description:
    'Run Python 3 code in a sandbox that keeps its variables and files between calls of this conversation. ' +
    'It has no network access. Files given to you are under /mnt/data/; save files for the user under /mnt/data/ and ' +
    'link them in your answer as sandbox:/mnt/data/<name>. Returns what the code printed (and the traceback of an error).',
  parameters: {
    type: 'object',
    properties: { code: { type: 'string', description: 'The Python code to run.' } },
    required: ['code'],
  },
};

/** The function's description with the files the session holds named (path and original file name). */
export function interpreterFunction(name: string, files: readonly { path: string; filename: string }[]): ChatTool['function'] {
  const listed = files.length
    ? ` Files available: ${files.map((f) => (f.filename && f.filename !== f.path ? `${f.path} (${f.filename})` : f.path)).join(', ')}.`
    : '';
  return { ...CODE_INTERPRETER_FUNCTION, name, description: `${CODE_INTERPRETER_FUNCTION.description}${listed}` };
}

/** The code of a code_interpreter call: `code` of its JSON arguments, else the arguments as text. */
export function codeOf(args: string | undefined): string {
  try {
    const parsed: unknown = JSON.parse(args ?? '');
    if (typeof parsed === 'object' && parsed !== null && 'code' in parsed && typeof parsed.code === 'string') return parsed.code;
  } catch {
    /* not JSON: the text itself */
  }
  return args ?? '';
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/**
 * Decodes the `code` member of a call's JSON arguments as they stream in, so the step shows the code
 * piece by piece as the platform does: `push` takes the next piece of arguments and returns the code
 * text it completes (escapes split across pieces wait for their end).
 */
export class CodeArgumentDecoder {
  private raw = '';
  /** Where the string value starts in `raw`, once seen; then how far it has been decoded. */
  private at = -1;
  private done = false;

  push(piece: string): string {
    if (this.done) return '';
    this.raw += piece;
    if (this.at < 0) {
      const m = /"code"\s*:\s*"/.exec(this.raw);
      if (!m) return '';
      this.at = m.index + m[0].length;
    }
    let out = '';
    let i = this.at;
    while (i < this.raw.length) {
      const ch = this.raw[i];
      if (ch === '"') {
        this.done = true;
        i++;
        break;
      }
      if (ch !== '\\') {
        out += ch;
        i++;
        continue;
      }
      const next = this.raw[i + 1];
      if (next === undefined) break;
      if (next === 'u') {
        const hex = this.raw.slice(i + 2, i + 6);
        if (hex.length < 4) break;
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
        continue;
      }
      out += ESCAPES[next] ?? next;
      i += 2;
    }
    this.at = i;
    return out;
  }
}

const FILES_LINE = /\n?\[files written: ([^\n]*)\]$/;
const LINK = /sandbox:\/mnt\/data\/[^\s,\]]+/g;
const NO_OUTPUT = '(no output)';

/** The sandbox link of a file under /mnt/data (`sandbox:/mnt/data/report.csv`). */
export const sandboxLink = (path: string) => `sandbox:${path}`;

/** The tool message of a code_interpreter call: its logs, then the files it wrote as sandbox links. */
export function formatCodeOutput(logs: string, paths: readonly string[]): string {
  const text = logs.trim() ? logs.replace(/\s+$/, '') : NO_OUTPUT;
  return paths.length ? `${text}\n[files written: ${paths.map(sandboxLink).join(', ')}]` : text;
}

/** The logs and file links of a code_interpreter tool message (formatCodeOutput read back). */
export function parseCodeOutput(output: string): { logs: string; links: string[] } {
  const m = FILES_LINE.exec(output);
  const logs = (m ? output.slice(0, m.index) : output).trim();
  return { logs: logs === NO_OUTPUT ? '' : logs, links: m ? [...m[1].matchAll(LINK)].map((x) => x[0]) : [] };
}

const FENCE = /```(?:python|py|python3)[^\S\n]*\n([\s\S]*?)```/gi;

/** The fenced Python blocks of a text (```python … ```), in order. */
export const pythonBlocks = (text: string): string[] => [...text.matchAll(FENCE)].map((m) => m[1]);
