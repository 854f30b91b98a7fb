/**
 * The code_interpreter executor as other areas see it (`ctx.services.codeInterpreter`). Runs import these
 * types from here (or from service.ts); the shape is agreed with the runs side, see /work/briefs/ci-interface.md
 * for any later change.
 */

/** A file of a session's sandbox. */
export interface SandboxFile {
  /** Under /mnt/data/, e.g. '/mnt/data/report.csv'. */
  path: string;
  bytes: Uint8Array;
}

export interface ExecuteRequest {
  /** Session key: the thread id (one session per thread). */
  session: string;
  code: string;
  /** Put into /mnt/data before running (idempotent: same path+bytes = no-op). */
  files?: SandboxFile[];
  /** Default from config. */
  timeoutMs?: number;
}

export interface ExecuteResult {
  /** stdout+stderr interleaved as printed, plus the traceback on exception, plus a note when stopped/truncated. */
  logs: string;
  status: 'ok' | 'exception' | 'timeout' | 'memory' | 'crashed';
  /** Files under /mnt/data created or changed by this execution (not the inputs unchanged). */
  files: SandboxFile[];
  /** PNG figures shown (plt.show / display), in order. */
  images: Uint8Array[];
  durationMs: number;
}

export interface CodeInterpreter {
  execute(req: ExecuteRequest): Promise<ExecuteResult>;
  closeSession(session: string): Promise<void>;
}
