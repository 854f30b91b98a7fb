import { describe, expect, it } from 'vitest';
import { argumentsOf, customFunction, InputDecoder, inputOf } from './custom-tools.js';

/** Feeds `args` to a decoder in pieces of `size` characters; the deltas joined. */
function decode(args: string, size: number): string {
  const d = new InputDecoder();
  let out = '';
  for (let i = 0; i < args.length; i += size) out += d.push(args.slice(i, i + size));
  return out;
}

describe('custom tools: the function an input stands in', () => {
  it('decodes a streamed input in any piece size to the input itself', () => {
    const input = 'SELECT "a"\\b FROM t;\n\ttab é 😀 \u2028 end';
    const args = argumentsOf(input);
    for (const size of [1, 2, 3, 5, 7, 64, args.length]) expect(decode(args, size)).toBe(input);
    // JSON's \u escapes, a surrogate pair cut anywhere, whitespace in the opening
    const escaped = '{ "input" :  "x\\u0041\\ud83d\\ude00\\/y" }';
    for (const size of [1, 3, 4, 9]) expect(decode(escaped, size)).toBe('xA😀/y');
    expect(inputOf(escaped)).toBe('xA😀/y');
  });

  it('gives nothing for arguments of another shape (the input then comes whole from inputOf)', () => {
    for (const args of ['{"other": 1, "input": "x"}', 'plain text', '{"input": 3}']) {
      expect(decode(args, 2)).toBe('');
      expect(inputOf(args)).toBe(args.startsWith('{"other"') ? 'x' : args);
    }
    // a bad escape stops the stream where it is
    expect(decode('{"input": "ab\\qcd"}', 1)).toBe('ab');
    expect(inputOf('{"input": "ab\\qcd"}')).toBe('{"input": "ab\\qcd"}');
  });

  it('reads a long input once, piece by piece (no rescan of what came before)', () => {
    const args = argumentsOf('x'.repeat(2_000_000));
    const d = new InputDecoder();
    const started = performance.now();
    let n = 0;
    for (let i = 0; i < args.length; i += 4) n += d.push(args.slice(i, i + 4)).length;
    expect(n).toBe(2_000_000);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('offers a custom tool as a function of one string `input`, its grammar in the description', () => {
    const f = customFunction({
      type: 'custom',
      name: 'sql',
      description: 'Runs SQL',
      format: { type: 'grammar', syntax: 'regex', definition: '^SELECT .+$' },
    });
    expect(f.function.name).toBe('sql');
    expect(f.function.parameters).toMatchObject({ type: 'object', required: ['input'], properties: { input: { type: 'string' } } });
    expect(JSON.stringify(f.function.parameters)).toContain('^SELECT .+$');
  });
});
