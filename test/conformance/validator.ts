import { appendFileSync, readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../src/core/errors.js';
import type { Module } from '../../src/core/module.js';
import { DEVIATIONS, type Deviation } from './deviations.js';

/**
 * Replies held against the platform's official OpenAPI document (the subset of the operations Standin
 * shares, test/conformance/openai-subset.json, made by scripts/openapi-subset.mjs): a field, type, enum
 * value or nullability that differs from the platform fails the test that met it, as `checkResponses`
 * holds replies against Standin's own schemas. The deliberate deviations (deviations.ts, listed in
 * docs/conformance.md) loosen the official schema where they apply, and nowhere else.
 */

interface Subset {
  source: string;
  operations: Record<
    string,
    { operationId: string; responses: Record<string, object>; events?: Record<string, object>; examples: Example[] }
  >;
  components: { schemas: Record<string, object> };
}
export interface Example {
  title: string;
  body?: string;
  form?: Record<string, string>;
}

const DOC = 'openai.json';

/** `/v1/threads/:thread_id` and `/threads/{thread_id}` both read `/threads/{}` (scripts/openapi-subset.mjs). */
export const pathKey = (path: string) =>
  path
    .replace(/^\/v1(?=\/)/, '')
    .replace(/:\w+/g, '{}')
    .replace(/\{\w+\}/g, '{}');

/** OpenAPI 3.1 as the document writes it → JSON Schema 2020-12: `nullable`, `$ref`s into one document, no `discriminator`. */
function toJsonSchema(node: unknown, inMap = false): unknown {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  let nullable = false;
  for (const [k, v] of Object.entries(node)) {
    if (!inMap && k === 'nullable') nullable = v === true;
    else if (!inMap && k === 'discriminator') continue;
    else if (!inMap && k === '$ref' && typeof v === 'string') out.$ref = `${DOC}#/$defs/${v.split('/').pop()}`;
    else out[k] = toJsonSchema(v, !inMap && (k === 'properties' || k === 'patternProperties' || k === '$defs'));
  }
  return nullable && !inMap ? { anyOf: [out, { type: 'null' }] } : out;
}

/** A deviation applied: the field's schema in each component it names (`List*Response`: a pattern), loosened as the entry says. */
function loosen(schemas: Record<string, any>, d: Deviation & { component: string }): void {
  const pattern = new RegExp(`^${d.component.replaceAll('*', '\\w*')}$`);
  // A pattern covers the components that declare the field; an exact name must declare it.
  const names = Object.keys(schemas).filter(
    (n) => pattern.test(n) && (!d.component.includes('*') || !d.field || d.field === '*' || d.field in (schemas[n].properties ?? {})),
  );
  if (!names.length) throw new Error(`deviations.ts names '${d.component}', which the subset does not hold`);
  for (const name of names) {
    const component = schemas[name];
    const fields = d.field === '*' ? Object.keys(component.properties).filter((f) => !component.required?.includes(f)) : [d.field ?? ''];
    for (const field of fields) loosenField(schemas, name, field, d.allow);
  }
}

function loosenField(schemas: Record<string, any>, name: string, field: string, allow: Deviation['allow']): void {
  if (field === '') {
    if (allow !== 'any') throw new Error(`deviations.ts: a whole component ('${name}') can only be 'any'`);
    schemas[name] = {};
    return;
  }
  // The field is the component's own, or one of an `allOf` member written inline.
  // (A field the document requires but never defines can only be let absent.)
  const holder = [schemas[name], ...(schemas[name].allOf ?? [])].find(
    (m) => (m.properties && field in m.properties) || (allow === 'absent' && m.required?.includes(field)),
  );
  if (!holder) throw new Error(`deviations.ts names '${name}.${field}', which the document does not declare`);
  const props = holder.properties ?? {};
  if (allow === 'absent') holder.required = (holder.required ?? []).filter((r: string) => r !== field);
  else if (allow === 'any') props[field] = {};
  else if (allow === 'null') props[field] = { anyOf: [props[field], { type: 'null' }] };
  else if (allow === 'extra-values') props[field] = { anyOf: [props[field], { type: 'string' }] };
}

function compileDocument(subset: Subset) {
  // `$recursiveRef: '#'` (2019-09) names the component it sits in: a plain `$ref` to it says the same.
  const schemas = Object.fromEntries(
    Object.entries(subset.components.schemas).map(([name, schema]) => [
      name,
      JSON.parse(JSON.stringify(schema).replaceAll('"$recursiveRef":"#"', `"$ref":"#/components/schemas/${name}"`), (k, v) =>
        k === '$recursiveAnchor' ? undefined : v,
      ),
    ]),
  ) as Record<string, any>;
  for (const d of DEVIATIONS) if (d.component) loosen(schemas, { ...d, component: d.component });
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  ajv.addSchema({ $id: DOC, $defs: toJsonSchema(schemas, true) });
  return ajv;
}

let loaded: { subset: Subset; ajv: Ajv2020; byRoute: Map<string, string> } | undefined;
/** The subset and its compiled document, read on first use: a child process bundled from the test helpers never needs them. */
function doc() {
  if (loaded) return loaded;
  const subset: Subset = JSON.parse(readFileSync(new URL('./openai-subset.json', import.meta.url), 'utf8'));
  const byRoute = new Map<string, string>();
  for (const key of Object.keys(subset.operations)) {
    const [method, path] = key.split(' ');
    byRoute.set(`${method} ${pathKey(path)}`, key);
  }
  return (loaded = { subset, ajv: compileDocument(subset), byRoute });
}
/** The operations Standin shares with the official document (test/conformance/openai-subset.json). */
export const subset = (): Subset => doc().subset;
const validators = new Map<string, ValidateFunction | null>();

/** The official operation (`POST /threads`) a Standin route (`POST /v1/threads`) is, if the document has it. */
export const operationOf = (method: string, routeUrl: string): string | undefined => doc().byRoute.get(`${method} ${pathKey(routeUrl)}`);

/** What in `body` differs from the official schema of the operation's reply with `status`, or undefined when it matches. */
export function mismatch(operation: string, status: number, body: unknown): string | undefined {
  const { subset, ajv } = doc();
  const responses = subset.operations[operation].responses;
  const schema = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
  if (!schema) return undefined;
  const skip = DEVIATIONS.find((d) => d.operation === operation && d.status === status);
  if (skip) return undefined;
  const key = `${operation} ${status}`;
  if (!validators.has(key)) validators.set(key, ajv.compile(toJsonSchema(schema) as object));
  const validate = validators.get(key)!;
  if (validate(body)) return undefined;
  const e = validate.errors![0];
  const detail = e.keyword === 'additionalProperties' ? `has '${String(e.params.additionalProperty)}'` : e.message;
  return `${e.instancePath || '(the reply)'} ${detail} (${e.schemaPath})`;
}

const ref = (name: string) => ({ $ref: `${DOC}#/$defs/${name}` });

/**
 * The schema of one event of an operation's event stream: the document's (`text/event-stream`); a
 * response's stream picked up again (`GET /responses/{id}?stream=true`, which the document describes in
 * words only) has the events of `POST /responses`. A union of event schemas is narrowed by the event's
 * `type`, so a mismatch names the field of that event rather than "matches none".
 */
function eventSchema(operation: string, event: { type?: unknown }): { key: string; schema: object } | string | undefined {
  const ops = doc().subset.operations;
  const events =
    ops[operation]?.events?.['200'] ?? (operation.startsWith('GET /responses/') ? ops['POST /responses'].events?.['200'] : undefined);
  if (!events) return undefined;
  const union = (events as { $ref?: string }).$ref?.split('/').pop();
  const members = (doc().subset.components.schemas[union ?? ''] as { anyOf?: { $ref: string }[] } | undefined)?.anyOf;
  if (!members) return { key: operation, schema: toJsonSchema(events) as object };
  for (const m of members) {
    const name = m.$ref.split('/').pop()!;
    const types = (doc().subset.components.schemas[name] as { properties?: { type?: { enum?: unknown[] } } }).properties?.type?.enum;
    if (types?.includes(event.type)) return { key: name, schema: ref(name) };
  }
  return `has the type '${String(event.type)}', which no event of the document has`;
}

/** What in one streamed event differs from the official schema of the operation's events, or undefined when it matches. */
export function eventMismatch(operation: string, event: unknown): string | undefined {
  const found = eventSchema(operation, (event ?? {}) as { type?: unknown });
  if (found === undefined) return undefined;
  if (typeof found === 'string') return `the event ${found}`;
  const key = `event ${found.key}`;
  if (!validators.has(key)) validators.set(key, doc().ajv.compile(found.schema));
  const validate = validators.get(key)!;
  if (validate(event)) return undefined;
  const e = validate.errors![0];
  const detail = e.keyword === 'additionalProperties' ? `has '${String(e.params.additionalProperty)}'` : e.message;
  return `${found.key}: ${e.instancePath || '(the event)'} ${detail} (${e.schemaPath})`;
}

/**
 * Checks each frame an event stream writes (`event:`/`data:` frames written whole, as Standin's stream
 * writers do); a frame whose data differs is replaced by an error frame naming the event and the field,
 * which the SDKs raise, so the test reading the stream fails. `[DONE]` and error frames pass as they are.
 */
function checkFrames(operation: string, text: string): string {
  return text.replace(/(^|\n\n)((?:event: [^\n]*\n)?)data: ([^\n]*)/g, (whole, lead: string, eventLine: string, data: string) => {
    if (data === '[DONE]') return whole;
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return whole;
    }
    if ((event as { error?: unknown }).error !== undefined) return whole;
    checked.add(`${operation} 200 events`);
    const wrong = eventMismatch(operation, event);
    if (!wrong) return whole;
    if (process.env.STANDIN_CONFORMANCE_REPORT) {
      appendFileSync(process.env.STANDIN_CONFORMANCE_REPORT, `${operation} event: ${wrong}\n`);
      return whole;
    }
    const message = `An event of ${operation} differs from the official document: ${wrong}.`;
    const error = eventLine
      ? { type: 'error', code: 'official_schema_mismatch', message, param: null, sequence_number: 0 }
      : { error: { message, type: 'server_error', param: null, code: 'official_schema_mismatch' } };
    return `${lead}${eventLine ? 'event: error\n' : ''}data: ${JSON.stringify(error)}`;
  });
}

/** Wraps the reply's socket writes of an operation whose document describes an event stream. */
function watchStream(operation: string, reply: FastifyReply): void {
  const raw = reply.raw;
  const frames = (chunk: unknown) => (typeof chunk === 'string' && /^(event|data): /.test(chunk) ? checkFrames(operation, chunk) : chunk);
  const write = raw.write.bind(raw) as (...args: unknown[]) => boolean;
  const end = raw.end.bind(raw) as (...args: unknown[]) => typeof raw;
  raw.write = ((chunk: unknown, ...rest: unknown[]) => write(frames(chunk), ...rest)) as typeof raw.write;
  raw.end = ((chunk?: unknown, ...rest: unknown[]) =>
    typeof chunk === 'function' || chunk === undefined ? end(chunk, ...rest) : end(frames(chunk), ...rest)) as typeof raw.end;
}

/** The operations replies were checked against in this process, for the walk of conformance.test.ts. */
export const checked = new Set<string>();

/**
 * The hook of the test Standins (test/helpers.ts): every JSON reply of a shared operation is validated; one
 * that differs becomes a 500 naming the operation and the field, which fails the test that asked.
 */
export function conformanceModule(): Module {
  return {
    name: 'conformance-check',
    routes(app) {
      app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
        const operation = request.routeOptions.url && operationOf(request.method, request.routeOptions.url);
        if (operation && (doc().subset.operations[operation].events || operation.startsWith('GET /responses/')))
          watchStream(operation, reply);
        done();
      });
      app.addHook(
        'onSend',
        (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, p?: unknown) => void) => {
          const operation = request.routeOptions.url && operationOf(request.method, request.routeOptions.url);
          const type = String(reply.getHeader('content-type') ?? '');
          if (!operation) return done(null, payload);
          checked.add(`${operation} ${reply.statusCode}`);
          // A file's bytes, an event stream: the document describes no JSON there.
          if (typeof payload !== 'string' || !type.startsWith('application/json')) return done(null, payload);
          const wrong = mismatch(operation, reply.statusCode, JSON.parse(payload));
          if (!wrong) return done(null, payload);
          // A survey instead of a failure: every mismatch of a run, appended to a file (docs/conformance.md).
          if (process.env.STANDIN_CONFORMANCE_REPORT) {
            appendFileSync(process.env.STANDIN_CONFORMANCE_REPORT, `${operation} ${reply.statusCode}: ${wrong}\n`);
            return done(null, payload);
          }
          // In the envelope, as checkResponses answers: the test that asked reads what differs.
          const refusal = new ApiError(
            'server_error',
            `The reply of ${operation} (${reply.statusCode}) differs from the official document: ${wrong}.`,
            { code: 'official_schema_mismatch' },
          );
          reply.code(refusal.status);
          done(null, JSON.stringify(refusal.toBody()));
        },
      );
    },
  };
}
