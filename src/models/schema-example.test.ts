import { describe, expect, it } from 'vitest';
import { exampleFor } from './schema-example.js';

describe('exampleFor', () => {
  it('fills required properties with the plainest valid values', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 10 },
        count: { type: 'integer', minimum: 3 },
        ratio: { type: 'number', exclusiveMaximum: 0 },
        unit: { type: 'string', enum: ['c', 'f'] },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
        when: { type: 'string', format: 'date' },
        nested: { $ref: '#/$defs/n' },
        either: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
        optional: { type: 'string' },
      },
      required: ['name', 'count', 'ratio', 'unit', 'tags', 'when', 'nested', 'either'],
      $defs: { n: { type: 'object', properties: { ok: { const: true } }, required: ['ok'] } },
    };
    expect(exampleFor(schema)).toEqual({
      name: 'examplexxx',
      count: 3,
      ratio: -0.5,
      unit: 'c',
      tags: ['example', 'example'],
      when: '2026-01-01',
      nested: { ok: true },
      either: false,
    });
  });

  it('survives odd input', () => {
    expect(exampleFor(null)).toBeNull();
    expect(exampleFor({})).toBeNull();
    const loop: any = { type: 'object', properties: { self: { $ref: '#' } }, required: ['self'] };
    expect(() => exampleFor(loop)).not.toThrow();
  });
});
