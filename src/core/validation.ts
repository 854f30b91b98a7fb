import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { _, Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyError, FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import { ApiError, frameworkError, invalid } from './errors.js';

/**
 * Two ajv instances: bodies are validated strictly (no coercion, no removal, no defaults invented), while
 * query strings and path parameters are coerced, because every value arrives there as text. With
 * `standalone`, one whose validators can be written out as code (scripts/validators.ts).
 */
export function makeAjv(coerce: boolean, standalone = false) {
  const ajv = new Ajv({
    allErrors: false,
    removeAdditional: false,
    useDefaults: false,
    coerceTypes: coerce ? 'array' : false,
    strict: false,
    ...(standalone ? { code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` } } : {}),
  });
  addFormats.default(ajv);
  return ajv;
}
/** Each instance is made on its first compile, as validators are (below): none of them at start. */
const once = (make: () => Ajv) => {
  let ajv: Ajv | undefined;
  return () => (ajv ??= make());
};
const bodyAjv = once(() => makeAjv(false));
const paramAjv = once(() => makeAjv(true));

/** Where the build writes the validators of every route's schemas (scripts/validators.ts): beside the bundle. */
const PRECOMPILED = new URL('./validators/', import.meta.url);
const requireHere = createRequire(import.meta.url);

/** The name of a schema's precompiled validator: a hash of the schema and of how it is validated. */
export function schemaKey(schema: unknown, body: boolean): string {
  return createHash('sha256')
    .update(`${body ? 'body' : 'coerced'}\n${JSON.stringify(schema)}`)
    .digest('hex')
    .slice(0, 32);
}

/**
 * A schema's validator: the build's, written out as code (loading it takes a millisecond or two), else
 * compiled now (running from the sources, or a schema the build did not meet): 30–150 ms of the server's
 * thread for the larger bodies, on the route's first request.
 */
function validatorOf(schema: object, body: boolean): ValidateFunction {
  const file = fileURLToPath(new URL(`${schemaKey(schema, body)}.cjs`, PRECOMPILED));
  if (existsSync(file)) return requireHere(file) as ValidateFunction;
  return (body ? bodyAjv : paramAjv)().compile(schema);
}

/** At build time (scripts/validators.ts): told of every schema a route validates with, as routes are added. */
let collector: ((schema: object, body: boolean) => void) | undefined;
export const collectSchemas = (collect: typeof collector) => void (collector = collect);

/**
 * Validators are made on their route's first request, not at start: most routes of a stand-in are never
 * called in a given run. The build has written each as code (validatorOf), so making one is loading it.
 */
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart, method }) => {
  let compiled: ValidateFunction | undefined;
  const body = httpPart === 'body';
  collector?.(schema as object, body);
  // Query and path values are text: a number must be written in decimal ('0x10' is not 16).
  const numeric = numericMembers(body ? {} : schema);
  // A route with an object body takes no body (Fastify hands the validator null) as `{}` (the body rules of
  // server/app.ts): done here rather than by a hook of its own on every request of the route.
  const noBodyIsEmpty =
    body && (schema as { type?: unknown }).type === 'object' && method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
  const validate = (data: unknown): boolean | { value: unknown } => {
    if (noBodyIsEmpty && data === null) {
      const empty = {};
      return check(empty) ? { value: empty } : false;
    }
    return check(data);
  };
  const check = (data: unknown): boolean => {
    for (const name of numeric) {
      const v = (data as Record<string, unknown> | undefined)?.[name];
      if (typeof v === 'string' && !DECIMAL.test(v)) {
        validate.errors = [
          { keyword: 'type', instancePath: `/${name}`, schemaPath: '', params: { type: numeric.type(name) }, message: 'must be a number' },
        ];
        return false;
      }
    }
    compiled ??= validatorOf(schema as object, body);
    const ok = compiled(data);
    // The value refused goes with each error, so the 400 can name it (Fastify passes on the errors only).
    validate.errors = ok ? null : compiled.errors!.map((e) => ({ ...e, data: valueAt(data, e.instancePath) }));
    return ok;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
};

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** The value at a JSON pointer of ajv's (`/a/0/b`) in `data`. */
function valueAt(data: unknown, pointer: string): unknown {
  let v = data;
  for (const part of pointer.split('/').slice(1))
    v = (v as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return v;
}

/** The top-level members of a query or params schema that hold numbers, with their JSON type. */
function numericMembers(schema: unknown): string[] & { type(name: string): string } {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const names = Object.keys(properties).filter((k) => properties[k].type === 'integer' || properties[k].type === 'number');
  return Object.assign(names, { type: (name: string) => String(properties[name].type) });
}

/**
 * For a route whose body is all optional: no body at all reads as `{}` (a preValidation hook; a route with
 * an object body schema has it from its validator).
 */
export function absentBodyIsEmpty(request: { body?: unknown }, _reply: unknown, done: (err?: Error) => void): void {
  request.body ??= {};
  done();
}

/**
 * For a route that takes no body (`POST …/cancel`): a body with members is refused, not silently ignored.
 * No body, or `{}`, is fine.
 */
export function refuseBody(request: { body?: unknown }, _reply: unknown, done: (err?: Error) => void): void {
  const body = request.body;
  if (body === undefined || body === null) return done();
  if (typeof body !== 'object' || Array.isArray(body)) return done(invalid('This endpoint takes no request body.', null, 'invalid_type'));
  const first = Object.keys(body)[0];
  done(first === undefined ? undefined : invalid(`Unrecognized request argument supplied: '${first}'.`, first, 'unknown_parameter'));
}

const replyAjv = once(() => makeAjv(false));

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
      compiled ??= replyAjv().compile(schema as object);
      if (!compiled(data)) {
        const e = compiled.errors?.[0];
        const at = pointerToParam(e?.instancePath ?? '') || '(the reply)';
        const detail =
          e?.keyword === 'additionalProperties'
            ? `unexpected '${(e.params as { additionalProperty: string }).additionalProperty}'`
            : e?.message;
        throw new ApiError(
          'server_error',
          `The reply of ${method} ${url} (${httpStatus}) does not match its response schema: ${at} ${detail}.`,
          { code: 'response_schema_mismatch' },
        );
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
const describe = (v: unknown) => (v === null ? 'null' : v === undefined ? 'nothing' : Array.isArray(v) ? 'an array' : typeName(typeof v));

/**
 * Turns the first ajv error into the platform's 400: a message naming the field, the value given and the
 * rule, `param` its path. `all`: the other errors, for the values a union of constants allows.
 */
export function ajvErrorToApiError(err: ErrorObject, where: string, data?: unknown, all: readonly ErrorObject[] = [err]): ApiError {
  const base = pointerToParam(err.instancePath);
  const params = err.params as Record<string, unknown>;
  const given = () => ('data' in err ? err.data : valueAt(data, err.instancePath));
  switch (err.keyword) {
    case 'required': {
      const name = base ? `${base}.${params.missingProperty}` : String(params.missingProperty);
      return invalid(`Missing required parameter: '${name}'.`, name, 'missing_required_parameter');
    }
    case 'additionalProperties': {
      const extra = String(params.additionalProperty);
      const name = base ? `${base}.${extra}` : extra;
      return invalid(`Unrecognized request argument supplied: '${name}'.`, name, 'unknown_parameter');
    }
    case 'type':
      return invalid(
        `Invalid type for '${base}': expected ${typeName(String(params.type).split(',')[0])}, but got ${describe(given())} instead.`,
        base,
        'invalid_type',
      );
    case 'enum':
    case 'const': {
      // A union of constants (`429 | 503 | 500`) fails one branch per constant: every one is allowed.
      const allowed = all
        .filter((e) => e.instancePath === err.instancePath && (e.keyword === 'const' || e.keyword === 'enum'))
        .flatMap(
          (e) => ((e.params as Record<string, unknown>).allowedValues ?? [(e.params as Record<string, unknown>).allowedValue]) as unknown[],
        );
      return invalid(
        `Invalid value for '${base}': ${JSON.stringify(given())}. Supported values are: ${allowed.map((a) => `'${a}'`).join(', ')}.`,
        base,
        'invalid_value',
      );
    }
    case 'minLength':
      return invalid(`'${base}' must be at least ${params.limit} characters.`, base, 'string_too_short');
    case 'maxLength':
      return invalid(`'${base}' must be at most ${params.limit} characters.`, base, 'string_too_long');
    case 'minimum':
    case 'exclusiveMinimum':
      return invalid(
        `'${base}' must be ${err.keyword === 'minimum' ? 'at least' : 'greater than'} ${params.limit}.`,
        base,
        'invalid_value',
      );
    case 'maximum':
    case 'exclusiveMaximum':
      return invalid(`'${base}' must be ${err.keyword === 'maximum' ? 'at most' : 'less than'} ${params.limit}.`, base, 'invalid_value');
    case 'minItems':
      return invalid(`'${base}' must have at least ${params.limit} items.`, base, 'array_too_short');
    case 'maxItems':
      return invalid(`'${base}' must have at most ${params.limit} items.`, base, 'array_too_long');
    case 'maxProperties':
      return invalid(`'${base}' must have at most ${params.limit} entries.`, base, 'object_too_large');
    case 'pattern':
      return invalid(`'${base}' has an invalid format (must match ${params.pattern}).`, base, 'invalid_value');
    case 'format':
      return invalid(`'${base}' must be a valid ${params.format}.`, base, 'invalid_value');
    case 'anyOf':
    case 'oneOf':
      return invalid(`Invalid value for '${base || where}': it matches none of the allowed forms.`, base || null, 'invalid_value');
    default:
      return invalid(`Invalid value for '${base || where}': ${err.message ?? 'invalid'}.`, base || null, 'invalid_value');
  }
}

const UNREACHABLE = ['ECONNREFUSED', 'ECONNRESET', '57P01', '57P03', '08001', '08006'];

/** What keeps the store from working, in words, when `err` says so (SQLite, PostgreSQL and pg's own errors). */
export function storageFailure(err: { code?: string; message?: string }): string | undefined {
  const code = String(err.code ?? '');
  if (
    UNREACHABLE.includes(code) ||
    /^(timeout exceeded when trying to connect|Query read timeout|Connection terminated)/.test(err.message ?? '')
  ) {
    return 'the database does not answer';
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === '53100') return 'the disk is full';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS' || code === '25006') return 'the store is read-only';
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') return 'the disk failed a read or write';
  return undefined;
}

/** Maps anything thrown in a handler to an ApiError; bad input never becomes a 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as FastifyError & { validation?: ErrorObject[]; validationContext?: string };
  if (e.validation && e.validation.length)
    return ajvErrorToApiError(e.validation[0], e.validationContext ?? 'body', undefined, e.validation);
  const framework = frameworkError(e);
  if (framework) return framework;
  const storage = storageFailure(e);
  if (storage)
    return new ApiError('service_unavailable_error', `Standin's store is unavailable: ${storage}. Retry once it is fixed.`, {
      code: 'storage_unavailable',
    });
  return new ApiError('server_error', 'The server had an error while processing your request. Sorry about that!', { code: 'server_error' });
}

/**
 * A body check outside HTTP (a batch line runs the body of a request it never received): the strict rules
 * of request bodies, and the same 400 a route would answer. Compiled on first use.
 */
export function bodyChecker<T>(schema: object): (data: unknown) => T {
  let compiled: ValidateFunction | undefined;
  return (data) => {
    compiled ??= bodyAjv().compile(schema);
    if (!compiled(data)) throw ajvErrorToApiError(compiled.errors![0], 'body', data, compiled.errors!);
    return data as T;
  };
}

/**
 * A check of one member of a body (an item of a list whose kind its `type` picks): the rules of request
 * bodies, and a 400 whose message and `param` name the member from `at`, a JSON pointer (`/input/3`).
 */
export function partChecker<T>(schema: object): (data: unknown, at: string) => T {
  let compiled: ValidateFunction | undefined;
  return (data, at) => {
    compiled ??= bodyAjv().compile(schema);
    if (compiled(data)) return data as T;
    const e = compiled.errors![0];
    // The error's value is found by walking the pointer: the part is placed at `at` in an empty body.
    const root: Record<string, unknown> = {};
    const keys = at.split('/').slice(1);
    keys.reduce<Record<string, unknown>>((o, k, i) => (o[k] = i === keys.length - 1 ? data : {}) as Record<string, unknown>, root);
    throw ajvErrorToApiError({ ...e, instancePath: at + e.instancePath }, 'body', root);
  };
}
