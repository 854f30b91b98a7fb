import { randomBytes } from 'node:crypto';
import { parseCodeOutput, pythonBlocks } from './code-interpreter.js';
import type { BuiltinOptions, BuiltinRule } from './config.js';
import { parseFileSearchOutput } from './file-search.js';
import { exampleFor } from './schema-example.js';
import { countPrompt, countTokens, truncateToTokens } from './tokens.js';
import type { ChatChunk, ChatMessage, ChatRequest, ChatResult, ChatTool, ChatToolCall } from './types.js';

/**
 * The built-in deterministic provider: everything runs offline and in CI. Given the same request it
 * gives the same reply (tool call ids aside), chosen by, in order:
 * 1. tool outputs came back since the last user message → the matching rule's `after_tool_outputs`, or
 *    the answer from the top file_search result (its best sentence and citation marker), what the code
 *    printed with links to the files it wrote (code_interpreter), or a plain summary of the outputs;
 * 2. the first rule whose `match`/`regex` fits the last user message → its tool calls (those offered in
 *    the request) and/or its reply;
 * 3. with the code interpreter function offered (`request.interpreter`): each fenced python block of the
 *    message (```python … ```) is run (a call with `{"code": <block>}`), with tool_choice `auto` or
 *    `required` or forcing that function; forced without a block, the message itself is run as code;
 * 4. tool_choice forces a function (`required` or a named function) → a call with arguments built from
 *    the function's JSON schema (a custom tool's function, `request.custom`: the message as its `input`);
 *    with `auto`, a function whose name appears in the message is called;
 *    with the file search function offered (`request.retrieval`), a message that asks something is
 *    searched for (`{"query": <message>}`);
 * 5. otherwise the default reply: `default_reply`, else an echo of the message (as JSON for
 *    `json_object`, a schema-shaped object for `json_schema`).
 * `max_tokens` cuts the text (finish_reason `length`); usage is counted with the tokenizer.
 */
export function createBuiltinProvider(opts: BuiltinOptions) {
  return {
    name: 'builtin',
    async complete(request: ChatRequest, onChunk?: (chunk: ChatChunk) => void): Promise<ChatResult> {
      const plan = planReply(request, opts);
      let content = plan.content;
      let finish: ChatResult['finish_reason'] = plan.toolCalls.length ? 'tool_calls' : plan.finishReason;
      if (content !== null && request.max_tokens != null) {
        const cut = truncateToTokens(content, request.max_tokens);
        if (cut.cut) {
          content = cut.text;
          finish = 'length';
        }
      }
      if (content !== null && onChunk) {
        for (const piece of chunks(content, opts.chunkChars)) {
          await pause(plan.delayMs, request.signal);
          onChunk({ type: 'text', delta: piece });
        }
      } else {
        await pause(plan.delayMs, request.signal);
      }
      const toolCalls = finish === 'length' ? [] : plan.toolCalls;
      if (onChunk) {
        toolCalls.forEach((call, index) => {
          onChunk({ type: 'tool_call', index, id: call.id, name: call.function.name });
          // Code and a custom tool's input stream in pieces, as a model writes them (the item shows its input growing).
          const piecewise = call.function.name === request.interpreter?.name || request.custom?.includes(call.function.name);
          const pieces = piecewise ? chunks(call.function.arguments, opts.chunkChars) : [];
          for (const piece of pieces.length ? pieces : [call.function.arguments]) onChunk({ type: 'tool_call', index, arguments: piece });
        });
      }
      if (request.signal?.aborted) throw request.signal.reason ?? new Error('aborted');
      const completion =
        countTokens(content ?? '') +
        toolCalls.reduce((n, c) => n + countTokens(c.function.name) + countTokens(c.function.arguments) + 3, 0);
      const prompt = countPrompt(request.messages, request.tools);
      return {
        content,
        tool_calls: toolCalls,
        finish_reason: finish,
        usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      };
    },
  };
}

interface Plan {
  content: string | null;
  toolCalls: ChatToolCall[];
  finishReason: 'stop' | 'content_filter';
  delayMs: number;
}

/** Decides the reply; pure apart from the random tool call ids. */
export function planReply(request: ChatRequest, opts: BuiltinOptions): Plan {
  const messages = request.messages;
  let lastUser = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') {
      lastUser = i;
      break;
    }
  }
  const input = lastUser >= 0 ? (messages[lastUser].content ?? '') : '';
  const outputs = toolOutputsSince(messages, lastUser);
  const rule = opts.rules.find((r) => r.test(input));
  const delayMs = rule?.delayMs ?? opts.delayMs;
  const fill = (template: string) =>
    template.replace(/\{\{\s*input\s*\}\}/g, input).replace(/\{\{\s*output\s*\}\}/g, outputs.map((o) => o.output).join('\n'));

  const searchName = request.retrieval?.name;
  const codeName = request.interpreter?.name;
  if (outputs.length) {
    let text: string;
    if (rule?.afterToolOutputs !== undefined) text = fill(rule.afterToolOutputs);
    else {
      const searches = outputs.filter((o) => o.name === searchName);
      const runs = outputs.filter((o) => o.name === codeName);
      const others = outputs.filter((o) => o.name !== searchName && o.name !== codeName);
      const last = searches[searches.length - 1];
      text = [
        last ? answerFromFiles(`${input} ${last.arguments}`, last.output) : '',
        runs.length ? answerFromCode(runs.map((r) => r.output)) : '',
        others.length ? summarize(others) : '',
      ]
        .filter(Boolean)
        .join('\n');
    }
    return { content: text, toolCalls: [], finishReason: 'stop', delayMs };
  }

  const functions = request.tool_choice === 'none' ? [] : (request.tools ?? []).filter((t) => t.type === 'function');
  const single = request.parallel_tool_calls === false;
  if (rule) {
    let calls = rule.toolCalls.filter((c) => functions.some((f) => f.function.name === c.name));
    const forced = forcedName(request);
    if (forced) calls = calls.filter((c) => c.name === forced);
    if (single) calls = calls.slice(0, 1);
    // A forced tool choice must end in a call: a rule that offers none gives way to the forced call below.
    const mustCall = functions.length > 0 && (request.tool_choice === 'required' || forced !== undefined);
    if (calls.length || (!mustCall && (rule.reply !== undefined || rule.finishReason === 'content_filter'))) {
      return {
        content: rule.reply !== undefined ? fill(rule.reply) : calls.length ? null : '',
        toolCalls: calls.map((c) => ({
          id: callId(),
          type: 'function',
          // A custom tool's call carries the rule's `arguments` as its free-text input.
          function: { name: c.name, arguments: request.custom?.includes(c.name) ? customArguments(c.arguments) : c.arguments },
        })),
        finishReason: rule.finishReason,
        delayMs,
      };
    }
  }

  const code = codeName ? functions.find((f) => f.function.name === codeName) : undefined;
  const forced = forcedName(request);
  const blocks = pythonBlocks(input);
  if (code && codeName && (forced === codeName || (forced === undefined && blocks.length))) {
    const sources = blocks.length ? blocks : [input];
    return {
      content: null,
      toolCalls: (single ? sources.slice(0, 1) : sources).map((src) => ({
        id: callId(),
        type: 'function' as const,
        function: { name: codeName, arguments: JSON.stringify({ code: src }) },
      })),
      finishReason: 'stop',
      delayMs,
    };
  }

  const forcedTool = pickForced(request, functions, input, searchName, codeName);
  if (forcedTool) {
    const name = forcedTool.function.name;
    return {
      content: null,
      toolCalls: [
        {
          id: callId(),
          type: 'function',
          function: {
            name,
            arguments: request.custom?.includes(name)
              ? customArguments(input)
              : JSON.stringify(
                  name === searchName
                    ? { query: input }
                    : name === codeName
                      ? { code: input }
                      : (exampleFor(forcedTool.function.parameters ?? { type: 'object' }) ?? {}),
                ),
          },
        },
      ],
      finishReason: 'stop',
      delayMs,
    };
  }

  return { content: defaultReply(request, input, opts.defaultReply), toolCalls: [], finishReason: 'stop', delayMs };
}

/** The arguments of a call of a custom tool's function: its free text as `input` (ChatRequest.custom). */
const customArguments = (input: string) => JSON.stringify({ input });

function forcedName(request: ChatRequest): string | undefined {
  const choice = request.tool_choice;
  return choice && typeof choice === 'object' ? choice.function.name : undefined;
}

/**
 * The function a turn without a matching rule calls: the one tool_choice names; else one the message
 * names; else the file search function when the message asks something (or names it); else, for
 * `required`, the first function.
 */
function pickForced(
  request: ChatRequest,
  functions: ChatTool[],
  input: string,
  searchName?: string,
  codeName?: string,
): ChatTool | undefined {
  if (!functions.length) return undefined;
  const named = forcedName(request);
  if (named) return functions.find((f) => f.function.name === named);
  const own = functions.filter((f) => f.function.name !== searchName && f.function.name !== codeName);
  const mentioned = own.find((f) => mentions(input, f.function.name));
  if (mentioned) return mentioned;
  const search = functions.find((f) => f.function.name === searchName);
  if (search && (asksSomething(input) || mentions(input, search.function.name))) return search;
  if (request.tool_choice === 'required') return own[0] ?? functions[0];
  return undefined;
}

const QUESTION_START =
  /^\W*(what|who|whom|whose|when|where|which|why|how|is|are|was|were|do|does|did|can|could|should|would|will|may|tell|find|show|list|explain|describe|summari[sz]e|give|search|look)\b/i;

/** A message that asks something: it holds a question mark, or starts with a question word or a request to find or tell. */
export const asksSomething = (text: string) => text.includes('?') || QUESTION_START.test(text);

const wordsOf = (text: string) => new Set((text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 2));

/**
 * The answer from a file_search result: the sentence of the top passage sharing the most words with the
 * question (the user's message and the search's arguments; the first sentence on a tie), followed by
 * the passage's citation marker.
 */
export function answerFromFiles(question: string, output: string): string {
  const [top] = parseFileSearchOutput(output);
  if (!top) return 'I found nothing about that in the files.';
  const asked = wordsOf(question);
  const sentences = top.text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((x) => x.replace(/^[#>*\-\s]+/, '').trim())
    .filter(Boolean);
  let best = sentences[0] ?? top.text;
  let bestScore = -1;
  for (const sentence of sentences) {
    let score = 0;
    for (const w of wordsOf(sentence)) if (asked.has(w)) score++;
    if (score > bestScore) {
      best = sentence;
      bestScore = score;
    }
  }
  return `${best}${top.marker}`;
}

const mentions = (text: string, name: string) =>
  new RegExp(`(^|[^A-Za-z0-9_-])${name.replace(/[-]/g, '\\-')}($|[^A-Za-z0-9_-])`).test(text);

function defaultReply(request: ChatRequest, input: string, template: string | undefined): string {
  const format = request.response_format;
  if (format?.type === 'json_object') return JSON.stringify({ reply: input });
  if (format?.type === 'json_schema') {
    const schema = (format.json_schema as { schema?: unknown }).schema;
    return JSON.stringify(schema ? exampleFor(schema) : { reply: input });
  }
  if (template !== undefined) return template.replace(/\{\{\s*input\s*\}\}/g, input);
  return input ? `You said: ${input}` : 'Hello! How can I help you today?';
}

function toolOutputsSince(messages: ChatMessage[], from: number): { name: string; arguments: string; output: string }[] {
  const calls = new Map<string, ChatToolCall['function']>();
  const out: { name: string; arguments: string; output: string }[] = [];
  for (let i = Math.max(0, from + 1); i < messages.length; i++) {
    const m = messages[i];
    for (const c of m.tool_calls ?? []) calls.set(c.id, c.function);
    if (m.role === 'tool') {
      const call = calls.get(m.tool_call_id ?? '');
      out.push({ name: call?.name ?? 'tool', arguments: call?.arguments ?? '', output: m.content ?? '' });
    }
  }
  return out;
}

/** The answer from code_interpreter results: what each run printed, then links to the files it wrote. */
export function answerFromCode(outputs: readonly string[]): string {
  const parts: string[] = [];
  for (const output of outputs) {
    const { logs, links } = parseCodeOutput(output);
    if (logs) parts.push(`The code printed:\n\n\`\`\`text\n${logs}\n\`\`\``);
    for (const link of links) parts.push(`Download [${link.slice(link.lastIndexOf('/') + 1)}](${link})`);
  }
  return parts.length ? parts.join('\n\n') : 'The code ran and printed nothing.';
}

function summarize(outputs: { name: string; output: string }[]): string {
  return outputs.map((o) => `${o.name} returned: ${o.output}`).join('\n');
}

/** Splits text into chunks of about `size` characters, at spaces where possible. */
export function chunks(text: string, size: number): string[] {
  if (!text) return [];
  if (size <= 0 || text.length <= size) return [text];
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    let end = Math.min(text.length, i + size);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end - 1);
      if (space > i) end = space + 1;
    }
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

function callId(): string {
  return `call_${randomBytes(18).toString('base64url').replace(/[-_]/g, 'x')}`;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export type { BuiltinRule };
