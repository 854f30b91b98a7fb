/**
 * A model call that failed. `code` is the run's `last_error.code` vocabulary, so the run engine (and the
 * responses work) can report it unchanged: a 429 from an upstream is `rate_limit_exceeded`, a 400 is
 * `invalid_prompt`, everything else (network, timeout, 5xx, a malformed stream) is `server_error`.
 */
export type ModelErrorCode = 'server_error' | 'rate_limit_exceeded' | 'invalid_prompt';

export class ModelError extends Error {
  readonly code: ModelErrorCode;
  /** HTTP status of the upstream answer, when there was one. */
  readonly status: number | null;

  constructor(code: ModelErrorCode, message: string, status: number | null = null) {
    super(message);
    this.name = 'ModelError';
    this.code = code;
    this.status = status;
  }
}

/** Maps an upstream HTTP status to the error code a run reports. */
export function codeForStatus(status: number): ModelErrorCode {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 400 || status === 413 || status === 422) return 'invalid_prompt';
  return 'server_error';
}
