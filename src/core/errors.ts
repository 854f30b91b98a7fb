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

/**
 * Every code Fastify (and its plugins) raises on a request, as the platform's error: a client never sees a
 * framework's code or wording (`FST_…`, "reach fields limit"). Codes not listed here that still carry a 4xx
 * status get a generic 400 (`frameworkError`); the multipart limits have their own wording in files/.
 */
const FRAMEWORK: Record<string, (message: string) => ApiError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: (m) =>
    invalid(
      `We could not parse the JSON body of your request. (${m.replace(/^Body is not valid JSON but content-type is set to 'application\/json'$/, 'invalid JSON')})`,
      null,
      'invalid_json',
    ),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    invalid("We could not parse the JSON body of your request. (The body is empty but 'Content-Type' says JSON.)", null, 'invalid_json'),
  FST_ERR_CTP_BODY_TOO_LARGE: () =>
    new ApiError('invalid_request_error', 'The request body is too large.', { status: 413, code: 'request_too_large' }),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new ApiError('invalid_request_error', `Unsupported Content-Type; send 'application/json'.`, {
      status: 415,
      code: 'unsupported_media_type',
    }),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => invalid('The Content-Length header does not match the body.', null, 'invalid_content_length'),
  FST_ERR_CTP_INVALID_TYPE: () => invalid('The Content-Type header is not valid.', null, 'invalid_content_type'),
  FST_ERR_BAD_URL: () => invalid('The URL is not valid: it has a malformed percent-encoding.', null, 'invalid_url'),
  FST_ERR_INVALID_URL: () => invalid('The URL is not valid.', null, 'invalid_url'),
  FST_ERR_MAX_PARAM_LENGTH: () => invalid('The URL is not valid: a path parameter is longer than 500 characters.', null, 'invalid_url'),
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: () => invalid('This request needs a Content-Type header.', null, 'invalid_content_type'),
  FST_ERR_ROUTE_MISSING_CONTENT: () => invalid('This request needs a body.', null, 'missing_body'),
  FST_ERR_NOT_FOUND: () => new ApiError('not_found_error', 'Invalid URL.', { code: 'unknown_url' }),
  FST_ERR_HANDLER_TIMEOUT: () =>
    new ApiError('service_unavailable_error', 'The request took too long to process. You can retry it.', { code: 'timeout' }),
  // @fastify/multipart, outside the upload route's own wording (src/files/multipart.ts).
  FST_PARTS_LIMIT: () => invalid('The form has too many parts.', null, 'too_many_parts'),
  FST_FILES_LIMIT: () => invalid('The form has too many files.', null, 'too_many_files'),
  FST_FIELDS_LIMIT: () => invalid('The form has too many fields.', null, 'too_many_fields'),
  FST_REQ_FILE_TOO_LARGE: () => new ApiError('invalid_request_error', 'The file is too large.', { status: 413, code: 'file_too_large' }),
  FST_PROTO_VIOLATION: () => invalid('A form field has a reserved name.', null, 'invalid_value'),
  FST_INVALID_MULTIPART_CONTENT_TYPE: () => invalid('Send the request as multipart/form-data.', null, 'invalid_content_type'),
  FST_INVALID_JSON_FIELD_ERROR: () => invalid('A form field declared as JSON is not valid JSON.', null, 'invalid_json'),
  FST_MP_PREMATURE_CLOSE: () => invalid('The request ended before the multipart body was complete.', null, 'invalid_multipart'),
};

/**
 * A framework's error (a `code` and a `statusCode`) as the platform's, or undefined when it is not one
 * (a server error keeps its meaning). A 4xx with an unknown code is a generic 400: its code never reaches the client.
 */
export function frameworkError(e: { code?: unknown; statusCode?: unknown; message?: unknown }): ApiError | undefined {
  const make = typeof e.code === 'string' ? FRAMEWORK[e.code] : undefined;
  if (make) return make(String(e.message ?? ''));
  const status = Number(e.statusCode);
  if (status >= 400 && status < 500)
    return new ApiError('invalid_request_error', 'The request is not valid.', {
      status: status === 413 || status === 415 ? status : 400,
      code: 'invalid_request',
    });
  return undefined;
}
