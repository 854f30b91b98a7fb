import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyError, FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import { ApiError, invalid } from './errors.js';

/**
 * Two ajv instances: bodies are validated strictly (no coercion, no removal, no defaults invented), while
 * query strings and path parameters are coerced, because every value arrives there as text.
 */
function makeAjv(coerce: boolean) {
  const ajv = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: false, coerceTypes: coerce ? 'array' : false, strict: false });
  addFormats.default(ajv);
  return ajv;
}
const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

/**
 * Validators compile on their route's first request, not at start: compiling a few hundred schemas
 * up front is most of a cold start, and most routes of a stand-in are never called in a given run.
 */
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown) => {
    compiled ??= (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema as object);
    const ok = compiled(data);
    validate.errors = compiled.errors;
    return ok;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate as any;
};

const replyAjv = makeAjv(false);

/**
 * Replies are serialized with JSON.stringify: a response schema documents the reply (`/openapi.json`), it
 * never drops or coerces a field. With `check` (the tests run so), every reply is first held against its
 * route's schema, and a reply that does not match is a 500 that names the route and the field.
 */
export function serializerCompiler(check: boolean): FastifySerializerCompiler<unknown> {
  return ({ schema, method, url, httpStatus }) => {
    if (!check) return (data) => JSON.stringify(data);
    let compiled: ValidateFunction | undefined;
    return (data) => {
      compiled ??= replyAjv.compile(schema as object);
      if (!compiled(data)) {
        const e = compiled.errors?.[0];
        const at = pointerToParam(e?.instancePath ?? '') || '(the reply)';
        const detail = e?.keyword === 'additionalProperties' ? `unexpected '${(e.params as { additionalProperty: string }).additionalProperty}'` : e?.message;
        throw new ApiError('server_error', `The reply of ${method} ${url} (${httpStatus}) does not match its response schema: ${at} ${detail}.`, { code: 'response_schema_mismatch' });
      }
      return JSON.stringify(data);
    };
  };
}

/** `/bidding_config/custom_audience_bid_multipliers/0/x` → `bidding_config.custom_audience_bid_multipliers[0].x` */
export function pointerToParam(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

const typeName = (t: string) => (t === 'integer' ? 'an integer' : t === 'object' ? 'an object' : t === 'array' ? 'an array' : `a ${t}`);
const describe = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeName(typeof v));

/** Turns the first ajv error into the platform's 400: a message naming the field and the rule, `param` its path. */
export function ajvErrorToApiError(err: ErrorObject, where: string, data?: unknown): ApiError {
  const base = pointerToParam(err.instancePath);
  const prefix = where === 'body' ? '' : '';
  const p = (name: string) => prefix + name;
  const valueAt = () => {
    let v: any = data;
    for (const part of err.instancePath.split('/').slice(1)) v = v?.[part];
    return v;
  };
  switch (err.keyword) {
    case 'required': {
      const name = base ? `${base}.${(err.params as any).missingProperty}` : (err.params as any).missingProperty;
      return invalid(`Missing required parameter: '${p(name)}'.`, p(name), 'missing_required_parameter');
    }
    case 'additionalProperties': {
      const extra = (err.params as any).additionalProperty;
      const name = base ? `${base}.${extra}` : extra;
      return invalid(`Unrecognized request argument supplied: '${p(name)}'.`, p(name), 'unknown_parameter');
    }
    case 'type':
      return invalid(`Invalid type for '${p(base)}': expected ${typeName(String((err.params as any).type).split(',')[0])}, but got ${describe(valueAt())} instead.`, p(base), 'invalid_type');
    case 'enum':
    case 'const': {
      const allowed = ((err.params as any).allowedValues ?? [(err.params as any).allowedValue]) as unknown[];
      return invalid(`Invalid value for '${p(base)}': ${JSON.stringify(valueAt())}. Supported values are: ${allowed.map((a) => `'${a}'`).join(', ')}.`, p(base), 'invalid_value');
    }
    case 'minLength':
      return invalid(`'${p(base)}' must be at least ${(err.params as any).limit} characters.`, p(base), 'string_too_short');
    case 'maxLength':
      return invalid(`'${p(base)}' must be at most ${(err.params as any).limit} characters.`, p(base), 'string_too_long');
    case 'minimum':
    case 'exclusiveMinimum':
      return invalid(`'${p(base)}' must be ${err.keyword === 'minimum' ? 'at least' : 'greater than'} ${(err.params as any).limit}.`, p(base), 'invalid_value');
    case 'maximum':
    case 'exclusiveMaximum':
      return invalid(`'${p(base)}' must be ${err.keyword === 'maximum' ? 'at most' : 'less than'} ${(err.params as any).limit}.`, p(base), 'invalid_value');
    case 'minItems':
      return invalid(`'${p(base)}' must have at least ${(err.params as any).limit} items.`, p(base), 'array_too_short');
    case 'maxItems':
      return invalid(`'${p(base)}' must have at most ${(err.params as any).limit} items.`, p(base), 'array_too_long');
    case 'maxProperties':
      return invalid(`'${p(base)}' must have at most ${(err.params as any).limit} entries.`, p(base), 'object_too_large');
    case 'pattern':
      return invalid(`'${p(base)}' has an invalid format (must match ${(err.params as any).pattern}).`, p(base), 'invalid_value');
    case 'format':
      return invalid(`'${p(base)}' must be a valid ${(err.params as any).format}.`, p(base), 'invalid_value');
    case 'anyOf':
    case 'oneOf':
      return invalid(`Invalid value for '${p(base) || where}': it matches none of the allowed forms.`, p(base) || null, 'invalid_value');
    default:
      return invalid(`Invalid value for '${p(base) || where}': ${err.message ?? 'invalid'}.`, p(base) || null, 'invalid_value');
  }
}

/** Maps anything thrown in a handler to an ApiError; bad input never becomes a 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as FastifyError & { validation?: any[]; validationContext?: string; body?: unknown };
  if (e.validation && e.validation.length) return ajvErrorToApiError(e.validation[0], e.validationContext ?? 'body');
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid(`We could not parse the JSON body of your request. (${e.message.replace(/^Body is not valid JSON but content-type is set to 'application\/json'$/, 'invalid JSON')})`, null, 'invalid_json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('invalid_request_error', 'The request body is too large.', { status: 413, code: 'request_too_large' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('invalid_request_error', `Unsupported Content-Type; send 'application/json'.`, { status: 415, code: 'unsupported_media_type' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalid('The Content-Length header does not match the body.', null, 'invalid_content_length');
  }
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return invalid(e.message, null, e.code ?? null);
  return new ApiError('server_error', 'The server had an error while processing your request. Sorry about that!', { code: 'server_error' });
}
