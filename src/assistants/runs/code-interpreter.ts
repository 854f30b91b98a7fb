import type { SandboxFile } from '../../code-interpreter/types.js';
import type { Ctx } from '../../core/module.js';
import { getFile, readFileBytes, stageGeneratedFile } from '../../files/service.js';
import { fromJson, type Tx } from '../../store/db.js';
import type { CodeInterpreterToolCall, ToolResources } from '../objects.js';
import { getAssistant } from '../store/assistants.js';
import type { RunRow } from '../store/runs.js';
import { getThread } from '../store/threads.js';
import { threadInterpreterFiles } from '../service/resources.js';

/**
 * code_interpreter executed by Standin inside a run: the code a model writes runs in the thread's Python
 * session (`ctx.services.codeInterpreter`, one session per thread). The session holds under /mnt/data/
 * the files of the assistant's and the thread's `tool_resources.code_interpreter.file_ids` and of the
 * thread's code_interpreter attachments, each at `/mnt/data/<file id>` as on the platform; the files the
 * code writes there become files of purpose `assistants_output`, PNG images (written or shown) also
 * `image` outputs of the call.
 */

type CodeOutput = CodeInterpreterToolCall['code_interpreter']['outputs'][number];

/** The largest input file copied into a session (the sandbox holds its files in memory). */
export const MAX_SANDBOX_FILE_BYTES = 64 * 1024 * 1024;
/** Purpose of the files code writes (OpenAPI: OpenAIFile.purpose). */
const OUTPUT_PURPOSE = 'assistants_output';
const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const isPng = (bytes: Uint8Array) => bytes.length > PNG.length && PNG.every((b, i) => bytes[i] === b);

/** Where a file given to code_interpreter sits in the sandbox. */
export const sandboxPath = (fileId: string) => `/mnt/data/${fileId}`;

/** One execution's outputs for its call, and the writes that make its files exist (in the transaction recording the call). */
export interface CodeResult {
  outputs: CodeOutput[];
  files: { path: string; file_id: string }[];
  insert: (tx: Tx) => Promise<void>;
}

/**
 * The sandbox of one run execution: which files it holds (named in the function offered to the model),
 * their bytes (read once, at the first call), and the executions of the run's code calls.
 */
export class RunSandbox {
  private ids?: Promise<string[]>;
  private names?: Promise<{ path: string; filename: string }[]>;
  private inputs?: Promise<{ files: SandboxFile[]; notes: string[] }>;
  private noted = false;

  constructor(
    private ctx: Ctx,
    private run: Pick<RunRow, 'id' | 'project_id' | 'thread_id' | 'assistant_id'>,
  ) {}

  /** The code_interpreter files of the run: the assistant's, then the thread's (tool_resources, attachments), each once. */
  private fileIds(): Promise<string[]> {
    this.ids ??= (async () => {
      const db = this.ctx.store.db;
      const [thread, assistant] = await Promise.all([
        getThread(db, this.run.project_id, this.run.thread_id),
        getAssistant(db, this.run.project_id, this.run.assistant_id),
      ]);
      const own = fromJson<ToolResources>(assistant?.tool_resources ?? null)?.code_interpreter?.file_ids ?? [];
      const threads = thread ? await threadInterpreterFiles(db, thread) : [];
      return [...new Set([...own, ...threads])];
    })();
    return this.ids;
  }

  /** The session's files as the model is told of them: path and original name (files deleted since are left out). */
  listed(): Promise<{ path: string; filename: string }[]> {
    this.names ??= (async () => {
      const out: { path: string; filename: string }[] = [];
      for (const id of await this.fileIds()) {
        const file = await getFile(this.ctx, this.run.project_id, id).catch(() => undefined);
        if (file) out.push({ path: sandboxPath(id), filename: file.filename });
      }
      return out;
    })();
    return this.names;
  }

  /** The bytes of the session's files; files gone or too large are left out, with a note for the logs. */
  private sandboxFiles(): Promise<{ files: SandboxFile[]; notes: string[] }> {
    this.inputs ??= (async () => {
      const files: SandboxFile[] = [];
      const notes: string[] = [];
      for (const id of await this.fileIds()) {
        try {
          const { data } = await readFileBytes(this.ctx, this.run.project_id, id, MAX_SANDBOX_FILE_BYTES);
          files.push({ path: sandboxPath(id), bytes: data });
        } catch {
          notes.push(`[Standin] ${id} is not in /mnt/data: the file was not found or is larger than ${MAX_SANDBOX_FILE_BYTES} bytes.`);
        }
      }
      return { files, notes };
    })();
    return this.inputs;
  }

  /**
   * Runs one call's code in the thread's session. Errors of the code (an exception, the time or memory
   * limit) are its logs, not a failure of the run. The files it wrote and the images it showed are stored
   * now; they exist once `insert` runs in the transaction that records the call.
   */
  async execute(callId: string, code: string): Promise<CodeResult> {
    const { files, notes } = await this.sandboxFiles();
    const result = await this.ctx.services.codeInterpreter.execute({ session: this.run.thread_id, code, files });
    const logs = [...(this.noted ? [] : notes), result.logs].filter(Boolean).join('\n');
    this.noted = true;
    const outputs: CodeOutput[] = logs ? [{ type: 'logs', logs }] : [];
    const written: CodeResult['files'] = [];
    const staged: ((tx: Tx) => Promise<void>)[] = [];
    const stage = async (filename: string, bytes: Uint8Array) => {
      const s = await stageGeneratedFile(this.ctx, this.run.project_id, { filename, purpose: OUTPUT_PURPOSE, bytes });
      staged.push(s.insert);
      return s.file.id;
    };
    for (const f of result.files) {
      const fileId = await stage(f.path, f.bytes);
      written.push({ path: f.path, file_id: fileId });
      // A PNG the code saved is shown as an image too (without matplotlib's plt.show, saving is how code draws).
      if (isPng(f.bytes)) outputs.push({ type: 'image', image: { file_id: fileId } });
    }
    for (const [i, png] of result.images.entries()) {
      outputs.push({ type: 'image', image: { file_id: await stage(`${callId}-image-${i + 1}.png`, png) } });
    }
    return {
      outputs,
      files: written,
      insert: async (tx) => {
        for (const insert of staged) await insert(tx);
      },
    };
  }
}
