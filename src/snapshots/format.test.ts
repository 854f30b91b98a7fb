import { describe, expect, it } from 'vitest';
import { decodeValue, lines, MAX_LINE_CHARS, parseLine } from './format.js';

const collect = async (chunks: Buffer[]) => {
  const out: string[] = [];
  for await (const l of lines(
    (async function* () {
      yield* chunks;
    })(),
  ))
    out.push(l);
  return out;
};

describe('snapshot format', () => {
  it('splits lines across chunks, a character of several bytes cut between two included', async () => {
    const text = Buffer.from('{"a":"é"}\n["x","ü"]\nlast');
    const cut = text.indexOf(Buffer.from('é')) + 1;
    expect(await collect([text.subarray(0, cut), text.subarray(cut, cut + 3), text.subarray(cut + 3)])).toEqual([
      '{"a":"é"}',
      '["x","ü"]',
      'last',
    ]);
  });
  it('refuses a line longer than the limit without waiting for its end', async () => {
    const big = Buffer.alloc(64 * 1024, 'a');
    const chunks = Array.from({ length: Math.ceil(MAX_LINE_CHARS / big.length) + 1 }, () => big);
    await expect(collect(chunks)).rejects.toThrow(/longer than/);
  });
  it('refuses deep nesting before parsing, and values of the wrong kind', () => {
    expect(() => parseLine('[[[[[1]]]]]', 2)).toThrow(/nested deeper/);
    expect(parseLine('["[[[[[[", 1]', 2)).toEqual(['[[[[[[', 1]);
    expect(() => decodeValue('integer', 1.5, 'x')).toThrow(/kind integer/);
    expect(() => decodeValue('bytes', 'not base64!', 'x')).toThrow(/kind bytes/);
    expect(decodeValue('bytes', Buffer.from([0, 255]).toString('base64'), 'x')).toEqual(Buffer.from([0, 255]));
  });
});
