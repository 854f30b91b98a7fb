import { decode, encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { AUTO_CHUNKING, chunkText, tokenize, TooManyTokens } from './chunk.js';

describe('token chunking', () => {
  const text = Array.from({ length: 600 }, (_, i) => `word${i}`).join(' ');

  it('cuts windows of the size with the overlap, covering every token', () => {
    const total = encode(text).length;
    const chunks = [...chunkText(text, { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 })];
    expect(chunks.slice(0, -1).every((c) => c.tokens === 100)).toBe(true);
    // Windows start 50 tokens apart and the last one reaches the end.
    expect(chunks.length).toBe(Math.ceil((total - 100) / 50) + 1);
    expect(chunks[0].text.startsWith('word0 ')).toBe(true);
    expect(chunks.at(-1)!.text.endsWith('word599')).toBe(true);
    // Neighbours share their overlap.
    const tail = chunks[0].text.slice(-20);
    expect(chunks[1].text).toContain(tail.trim().split(' ').slice(1).join(' '));
  });

  it('keeps a short text whole and gives an empty one no chunk', () => {
    expect([...chunkText('A short note.', AUTO_CHUNKING)]).toEqual([{ text: 'A short note.', tokens: encode('A short note.').length }]);
    expect([...chunkText('', AUTO_CHUNKING)]).toEqual([]);
  });

  it('treats special-token look-alikes as text and stops at the token limit', () => {
    expect(tokenize('before <|endoftext|> after').length).toBeGreaterThan(3);
    expect(() => tokenize(text, 100)).toThrow(TooManyTokens);
  });

  it('cuts ordinary text into the same chunks as windows over gpt-tokenizer’s tokens', () => {
    const prose = 'Chunking keeps every token, in order; 1,234 numbers and Ünïcödé stay whole.\n\n'.repeat(120);
    const ids = encode(prose);
    const chunks = [...chunkText(prose, AUTO_CHUNKING)];
    const windows: number[][] = [];
    for (let start = 0; windows.length === 0 || start - 400 + 800 < ids.length; start += 400) windows.push(ids.slice(start, start + 800));
    expect(windows.length).toBeGreaterThan(3);
    expect(chunks).toEqual(windows.map((w) => ({ text: decode(w), tokens: w.length })));
  });

  it.each([
    ['[', '['],
    ['a', 'a'],
    ['CJK character', '語'],
  ])(
    'chunks 1 MiB of one %s in linear time, windows covering every token',
    (_name, unit) => {
      const text = unit.repeat((1 << 20) / unit.length);
      const total = tokenize(text).length;
      const chunks = [...chunkText(text, AUTO_CHUNKING)];
      expect(chunks.length).toBe(Math.ceil((total - 800) / 400) + 1);
      expect(chunks.slice(0, -1).every((c) => c.tokens === 800 && /^(\[|a|語)+$/.test(c.text))).toBe(true);
    },
    15_000,
  );

  it('drops halves of a character cut at a window edge', () => {
    const chunks = [...chunkText('日本語のテキスト。'.repeat(60), { max_chunk_size_tokens: 100, chunk_overlap_tokens: 7 })];
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.text).not.toMatch(/^\uFFFD|\uFFFD$/);
  });
});
