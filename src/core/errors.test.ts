import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { frameworkError } from './errors.js';

const require = createRequire(import.meta.url);

/** The error classes a package declares (`@fastify/error` constructors), built to read their code and status. */
function declared(module: Record<string, unknown>): { code: string; statusCode: number; message: string }[] {
  const out = [];
  for (const make of Object.values(module)) {
    if (typeof make !== 'function') continue;
    try {
      const e = new (make as new (...a: string[]) => { code?: unknown; statusCode?: unknown; message: string })('a', 'b', 'c');
      if (typeof e.code === 'string' && e.code.startsWith('FST_'))
        out.push({ code: e.code, statusCode: Number(e.statusCode), message: e.message });
    } catch {
      // not an error class
    }
  }
  return out;
}

describe('framework errors in the platform envelope', () => {
  it('words every client error Fastify declares with a code of its own (a new one fails here)', () => {
    const fastify = declared(require('fastify/lib/errors.js') as Record<string, unknown>).filter(
      (e) =>
        e.statusCode >= 400 && e.statusCode < 500 && e.code !== 'FST_ERR_VALIDATION' && e.code !== 'FST_ERR_CTP_INSTANCE_ALREADY_STARTED',
    );
    expect(fastify.length).toBeGreaterThan(8);
    for (const e of fastify) {
      const mapped = frameworkError(e);
      expect(mapped?.code, e.code).toBeTruthy();
      expect(mapped?.code, e.code).not.toBe('invalid_request');
      expect(mapped?.code, e.code).not.toMatch(/^FST_/);
      // The JSON parser's description of where the text breaks is kept; no other framework wording is.
      if (e.code !== 'FST_ERR_CTP_INVALID_JSON_BODY') expect(mapped?.message, e.code).not.toContain(e.message);
    }
  });

  it('gives an unknown framework code a generic 400 and leaves server errors alone', () => {
    expect(frameworkError({ code: 'FST_NEW_THING', statusCode: 422, message: 'internal words' })?.toBody().error).toMatchObject({
      code: 'invalid_request',
      type: 'invalid_request_error',
    });
    expect(frameworkError({ code: 'FST_NEW_THING', statusCode: 413 })?.status).toBe(413);
    expect(frameworkError({ code: '22021', message: 'invalid byte sequence' })).toBeUndefined();
    expect(frameworkError({ statusCode: 500 })).toBeUndefined();
  });
});
