import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { ApiError, invalid } from './errors.js';
import { pointerToParam } from './validation.js';

/** Deeper JSON than this is refused: no request body of the platform nests this far, and deeper input overflows the stack of recursive code (JSON.stringify, schema walkers). */
export const MAX_JSON_DEPTH = 64;

type JsonParser = (request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void) => void;

/**
 * The JSON body parser: Fastify's own (it refuses `__proto__` and `constructor` keys), and three rules of
 * the house around it (docs/core.md, "What Standin refuses"):
 * - a charset other than UTF-8 is a 415, not text read as UTF-8 (a UTF-8 BOM is accepted, RFC 8259 §8.1);
 * - nesting deeper than MAX_JSON_DEPTH is a 400 naming where it goes too deep;
 * - a string holding a NUL character is a 400 naming the field: PostgreSQL cannot store one, and both
 *   stores must answer alike.
 * The raw text is only scanned (`\u0000`, the count of brackets) unless it may break a rule, so the common
 * body costs what it did.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error') as unknown as JsonParser;
  // The text of a JSON body that was accepted (`jsonBodyTextOf`): the request log keeps it rather than the parsed objects.
  app.decorateRequest('jsonBodyText', null);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
    if (charset && !/^utf-?8$/i.test(charset)) {
      return done(
        new ApiError('invalid_request_error', `Unsupported charset '${charset}': send JSON as UTF-8.`, {
          status: 415,
          code: 'unsupported_media_type',
        }),
      );
    }
    const raw = text as string;
    const body = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
    parse(request, body, (err, value) => {
      if (err) return done(err);
      const refused = (mayNestTooDeep(raw) && tooDeep(value)) || (raw.includes('\\u0000') && nulField(value));
      if (!refused) (request as TextFields).jsonBodyText = body;
      done(refused || null, value);
    });
  });
}

type TextFields = FastifyRequest & { jsonBodyText: string | null };

/**
 * The text of the request's JSON body, as it came (without a BOM), once the parser accepted it; null for a
 * request without one (no body, another content type). It reads as the parsed body does (one flat string
 * to keep, not a tree of objects).
 */
export const jsonBodyTextOf = (request: FastifyRequest): string | null => (request as TextFields).jsonBodyText ?? null;

/** Whether the text has enough brackets to nest past MAX_JSON_DEPTH (a scan of the text, no objects walked). */
function mayNestTooDeep(text: string): boolean {
  if (text.length <= MAX_JSON_DEPTH * 2) return false;
  let open = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c === 123 || c === 91) && ++open >= MAX_JSON_DEPTH) return true; // { [
  }
  return false;
}

/** A 400 when `value` nests deeper than MAX_JSON_DEPTH (walked without recursion). */
function tooDeep(value: unknown): ApiError | null {
  const stack: [unknown, number, string][] = [[value, 0, '']];
  while (stack.length) {
    const [v, depth, at] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH)
      return invalid(
        `The request body nests deeper than ${MAX_JSON_DEPTH} levels (at '${pointerToParam(at)}').`,
        pointerToParam(at) || null,
        'nesting_too_deep',
      );
    for (const [k, child] of Object.entries(v)) stack.push([child, depth + 1, `${at}/${k}`]);
  }
  return null;
}

/** A 400 naming the first field (or key) that holds a NUL character. */
function nulField(value: unknown): ApiError | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) return nulError(pointerToParam(at));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\0')) return nulError(pointerToParam(at) || '(a key)');
        stack.push([child, `${at}/${k}`]);
      }
    }
  }
  return null;
}

const nulError = (param: string) => invalid(`'${param}' must not contain NUL (\\u0000) characters.`, param || null, 'invalid_value');

/**
 * A NUL (`%00`) in the path or query string: ids never hold one (a 404, as for any unknown id), and a
 * query parameter that does is a 400 naming it. Checked only when the URL holds `%00`.
 */
export function nulInUrl(url: string): ApiError | undefined {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path.includes('%00'))
    return new ApiError('not_found_error', `Invalid URL (${path.replaceAll('%00', '%2500')}): no object has an id with a NUL character.`, {
      code: 'unknown_url',
    });
  for (const pair of url.slice(q + 1).split('&')) {
    if (pair.includes('%00')) {
      const name = decodeURIComponentSafe(pair.split('=')[0]);
      return nulError(name);
    }
  }
  return undefined;
}

const decodeURIComponentSafe = (s: string) => {
  try {
    return decodeURIComponent(s).replaceAll('\0', '');
  } catch {
    return s;
  }
};

type PreParsingDone = (err: Error | null, payload?: Readable) => void;

/**
 * No body is no body, whatever the headers say: a request whose body is empty (`Content-Length: 0`, neither
 * length nor chunked, or a chunked body that ends at once) is handled as one sent without a body, so no
 * content type parser (JSON, multipart, form) ever sees it. SDKs send `Content-Type: application/json` on
 * every request, an empty DELETE or cancel included, and the platform accepts those. A preParsing hook:
 * it only drops the headers that would route the nothing to a parser; a chunked body is peeked at, one
 * chunk read and put back.
 */
export function emptyBodyIsNoBody(request: FastifyRequest, _reply: unknown, payload: Readable, done: PreParsingDone): void {
  const headers = request.raw.headers;
  if (headers['transfer-encoding'] === undefined) {
    const length = headers['content-length'];
    if (length === undefined || length === '0') delete headers['content-type'];
    return done(null, payload);
  }
  const settle = (err: Error | null) => {
    payload.off('readable', onReadable).off('end', onEnd).off('error', settle);
    done(err, payload);
  };
  const onReadable = () => {
    const chunk: unknown = payload.read();
    // null here is the end of the stream: 'end' follows.
    if (chunk === null) return;
    payload.unshift(chunk);
    settle(null);
  };
  const onEnd = () => {
    delete headers['content-type'];
    delete headers['transfer-encoding'];
    settle(null);
  };
  payload.on('readable', onReadable).on('end', onEnd).on('error', settle);
}
