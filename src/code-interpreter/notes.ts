import type { RunStatus } from './protocol.js';

/** What an executor reports of an execution besides its logs: which limits cut or stopped it. */
export interface LimitsHit {
  status: RunStatus;
  /** The output cap cut the logs. */
  truncated: boolean;
  /** A file or folder was refused: the session holds `max_files` already. */
  filesRefused: boolean;
  /** Changed files left out of the result: returning them would pass `output_files_limit_bytes`. */
  omitted: { path: string; size: number }[];
}

/** The limits the notes name (a kernel's limits). */
interface NoteLimits {
  memoryMb: number;
  outputLimitBytes: number;
  maxFiles: number;
  outputFilesLimitBytes: number;
}

/** The logs as the caller sees them: the notes of the limits that were hit appended (both executors). */
export function withNotes(logs: string, hit: LimitsHit, limits: NoteLimits): string {
  let out = logs;
  if (hit.truncated) out += `\n[output truncated: the logs are limited to ${limits.outputLimitBytes} bytes]`;
  if (hit.filesRefused) out += `\n[a file was refused: a session holds at most ${limits.maxFiles} files and folders in /mnt/data and /tmp]`;
  if (hit.omitted.length) {
    const list = hit.omitted.map((f) => `${f.path} (${f.size} bytes)`).join(', ');
    out += `\n[files not returned: ${list}; the files returned by one execution are limited to ${limits.outputFilesLimitBytes} bytes in all]`;
  }
  if (hit.status === 'timeout') out += '\n[execution stopped: the time limit was reached]';
  if (hit.status === 'memory') out += `\n[execution stopped: the memory limit of ${limits.memoryMb} MB was reached]`;
  return out;
}
