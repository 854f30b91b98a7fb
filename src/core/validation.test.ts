import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { ajvErrorToApiError, partChecker, pointerToParam, serializerCompiler, toApiError } from './validation.js';

describe('validation', () => {
  it('turns JSON pointers into the platform param paths', () => {
    expect(pointerToParam('/bidding_config/custom_audience_bid_multipliers/0/bid_multiplier_micros')).toBe(
      'bidding_config.custom_audience_bid_multipliers[0].bid_multiplier_micros',
    );
    expect(pointerToParam('')).toBe('');
    expect(pointerToParam('/a~1b/2/c')).toBe('a/b[2].c');
  });

  it('says a value is missing as nothing, not "a undefined"', () => {
    const e = ajvErrorToApiError({ keyword: 'type', instancePath: '/input/0/text', schemaPath: '', params: { type: 'string' } }, 'body', {
      input: [{}],
    });
    expect(e.message).toBe("Invalid type for 'input[0].text': expected a string, but got nothing instead.");
  });

  it('names a member of a body from its pointer when checked on its own', () => {
    const check = partChecker(Type.Object({ text: Type.String() }, { additionalProperties: false }));
    expect(() => check({ text: 1 }, '/input/2/content/0')).toThrow(
      "Invalid type for 'input[2].content[0].text': expected a string, but got a number instead.",
    );
    expect(() => check({ text: 'a', x: 1 }, '/input/2')).toThrow("Unrecognized request argument supplied: 'input[2].x'.");
  });
});

describe('serializerCompiler', () => {
  const schema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false };
  const compile = (check: boolean) => serializerCompiler(check)({ schema, method: 'GET', url: '/v1/things/:id', httpStatus: '200' });

  it('serializes with JSON.stringify: a schema never drops a field', () => {
    expect(compile(false)({ id: 'a', extra: 1 })).toBe('{"id":"a","extra":1}');
  });

  it('with check, refuses a reply that does not match, naming the route and the field', () => {
    expect(compile(true)({ id: 'a' })).toBe('{"id":"a"}');
    expect(() => compile(true)({ id: 1 })).toThrow(/GET \/v1\/things\/:id \(200\).*id must be string/);
    expect(() => compile(true)({ id: 'a', extra: 1 })).toThrow(/unexpected 'extra'/);
  });
});

describe('storage failures', () => {
  it('become a 503 storage_unavailable naming the cause, never a bare 500', () => {
    const cases: [object, RegExp][] = [
      [{ code: 'SQLITE_FULL' }, /disk is full/],
      [{ code: 'SQLITE_IOERR_WRITE' }, /failed a read or write/],
      [{ code: 'SQLITE_READONLY_DBMOVED' }, /read-only/],
      [{ code: '53100' }, /disk is full/],
      [{ code: 'ECONNREFUSED' }, /does not answer/],
      [new Error('timeout exceeded when trying to connect'), /does not answer/],
      [new Error('Query read timeout'), /does not answer/],
    ];
    for (const [err, message] of cases) {
      const e = toApiError(err instanceof Error ? err : Object.assign(new Error('x'), err));
      expect(e.status).toBe(503);
      expect(e.code).toBe('storage_unavailable');
      expect(e.message).toMatch(message);
    }
    expect(toApiError(new Error('something else')).status).toBe(500);
  });
});
