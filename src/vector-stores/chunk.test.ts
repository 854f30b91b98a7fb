import { decode, encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { tokenEnds } from '../core/tokenizer.js';
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

  it('gives each window its bytes decoded, halves at the edges dropped, whether it slices the text or decodes it, and its span of them', () => {
    // What a chunk is (the definition the slices must keep): the window's UTF-8 decoded, U+FFFD stripped at both ends.
    const reference = (text0: string, size: number, overlap: number) => {
      const { ends, count } = tokenEnds(text0, 1e9)!;
      const bytes = Buffer.from(text0, 'utf8');
      const out: { text: string; tokens: number; start: number }[] = [];
      for (let start = 0; start < count; start += size - overlap) {
        const end = Math.min(start + size, count);
        const from = start ? ends[start - 1] : 0;
        const text = bytes.toString('utf8', from, ends[end - 1]).replace(/^\uFFFD+|\uFFFD+$/g, '');
        // The first character that starts at or after the window's first byte, in UTF-16 units.
        let startUnit = 0;
        let byte = 0;
        for (const c of text0) {
          if (byte >= from) break;
          byte += Buffer.byteLength(c.isWellFormed() ? c : '\uFFFD');
          startUnit += c.length;
        }
        out.push({ text, tokens: end - start, start: startUnit });
        if (end === count) break;
      }
      return out;
    };
    // Characters of one to four bytes, U+FFFD itself, and (in some texts) a lone surrogate.
    const pieces = ['a', 'word ', ' ', '\n', 'é', 'ß', '語', '日本', '😀', '👍🏽', '\uFFFD', '\uFFFD\uFFFD', '1234', '\ud800', '\udc00'];
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    /** The chunks and starts of `text` in windows of `size` tokens (a random overlap), as the definition has them. */
    const check = (text: string, size: number) => {
      const overlap = random(size);
      const starts: number[] = [];
      const spans: number[] = [];
      const chunks = [...chunkText(text, { max_chunk_size_tokens: size, chunk_overlap_tokens: overlap }, starts, undefined, spans)];
      const expected = reference(text, size, overlap);
      expect(chunks, JSON.stringify(text)).toEqual(expected.map(({ text, tokens }) => ({ text, tokens })));
      expect(starts).toEqual(expected.map((e) => e.start));
      // Each chunk is exactly a span of the text's UTF-8 (what the server stores, ingest-protocol.ts).
      const utf8 = Buffer.from(text);
      expect(
        chunks.map((_, i) => utf8.toString('utf8', spans[2 * i], spans[2 * i + 1])),
        JSON.stringify(text),
      ).toEqual(chunks.map((c) => c.text));
    };
    for (let t = 0; t < 300; t++)
      check(
        Array.from({ length: 1 + random(120) }, () => pieces[random(t % 3 ? pieces.length - 2 : pieces.length)]).join(''),
        1 + random(9),
      );
    // Long stretches of ASCII between the edges (measured at once, not walked), a wider character now and then.
    const long = ['plain ASCII prose runs on, line after line, ', 'and on.\n', ...pieces];
    for (let t = 0; t < 100; t++)
      check(
        Array.from({ length: 20 + random(200) }, () => long[random(4) ? random(2) : 2 + random(long.length - 2)]).join(''),
        5 + random(60),
      );
  });
});
