/**
 * One error type for the HTTP APIs (`/v1`, `/ads/v1`, `/admin/v1`): a code from a closed set, a
 * code→status table, and one envelope `{"error":{"message","type","param","code"}}` whose statuses match
 * the openai SDK's error classes.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'unprocessable_entity_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'server_error'
  | 'service_unavailable_error';

const statusOf: Record<ErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  unprocessable_entity_error: 422,
  rate_limit_error: 429,
  insufficient_quota: 429,
  server_error: 500,
  service_unavailable_error: 503,
};

export interface ErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

export class ApiError extends Error {
  readonly type: ErrorType;
  readonly status: number;
  readonly param: string | null;
  readonly code: string | null;
  /** Extra response headers (Retry-After, x-should-retry …). */
  readonly headers: Record<string, string>;

  constructor(
    type: ErrorType,
    message: string,
    opts: { param?: string | null; code?: string | null; status?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.type = type;
    this.status = opts.status ?? statusOf[type];
    this.param = opts.param ?? null;
    this.code = opts.code ?? null;
    this.headers = opts.headers ?? {};
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** 400 invalid_request_error naming the field (`param`) and the rule. */
export const invalid = (message: string, param: string | null = null, code: string | null = null) =>
  new ApiError('invalid_request_error', message, { param, code });

/** 404 in the platform's wording: `No <thing> found with id '<id>'.` */
export const notFound = (thing: string, id: string, param: string | null = null) =>
  new ApiError('not_found_error', `No ${thing} found with id '${id}'.`, { param, code: null });

export const unauthorized = (message = 'Missing or invalid API key. Pass it as "Authorization: Bearer <API_KEY>".') =>
  new ApiError('authentication_error', message, { code: 'invalid_api_key' });

export const forbidden = (message: string, code: string | null = null) => new ApiError('permission_error', message, { code });
