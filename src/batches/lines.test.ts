import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines } from './lines.js';

const chunks = (text: string, size: number) => {
  const b = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < b.length; i += size) out.push(b.subarray(i, i + size));
  return Readable.from(out);
};

const all = async (it: AsyncIterable<unknown>) => {
  const out = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('readLines', () => {
  const text = '{"a":1}\r\n\n  \n{"b":"é"}\n{"c":3}';
  it.each([1, 2, 3, 7, 1000])('splits lines across chunks of %i bytes, skipping blank ones, with their end offsets', async (size) => {
    const lines = await all(readLines(chunks(text, size), { maxBytes: 100 }));
    expect(lines).toEqual([
      { text: '{"a":1}', number: 1, end: 9 },
      { text: '{"b":"é"}', number: 4, end: 24 },
      { text: '{"c":3}', number: 5, end: 31 },
    ]);
  });

  it('resumes at a byte offset with the line numbering given', async () => {
    const lines = await all(readLines(chunks(text, 4), { maxBytes: 100, start: 9, firstNumber: 2 }));
    expect(lines.map((l: any) => [l.text, l.number, l.end])).toEqual([
      ['{"b":"é"}', 4, 24],
      ['{"c":3}', 5, 31],
    ]);
  });

  it('marks a line over the limit without holding it', async () => {
    const lines = await all(readLines(chunks(`short\n${'x'.repeat(50)}\nafter`, 8), { maxBytes: 10 }));
    expect(lines).toEqual([
      { text: 'short', number: 1, end: 6 },
      { text: '', number: 2, end: 57, tooLong: true },
      { text: 'after', number: 3, end: 62 },
    ]);
  });
});
