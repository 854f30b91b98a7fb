import ranks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { describe, expect, it } from 'vitest';
import { decodeVocabulary, encodeVocabulary, rankOf, vocabularyOfRanks } from './vocabulary.js';

const v = vocabularyOfRanks(ranks);
/** Whether two typed arrays hold the same bytes (a deep equality of 500,000 numbers takes seconds). */
const same = (a: ArrayBufferView, b: ArrayBufferView) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const bytesOf = (entry: string | readonly number[]) => (typeof entry === 'string' ? Buffer.from(entry, 'utf8') : Uint8Array.from(entry));

describe('the ranks as typed arrays', () => {
  it('finds every token of o200k by its bytes, and nothing for bytes that are no token', () => {
    expect(v.count).toBe(ranks.length);
    let missed = 0;
    ranks.forEach((entry, t) => {
      const b = bytesOf(entry!);
      if (rankOf(v, b, 0, b.length) !== t || v.lengths[t] !== b.length) missed++;
    });
    expect(missed).toBe(0);
    // A token's bytes inside a longer buffer, and stretches that are no token.
    const text = Buffer.from('xx hello world!', 'utf8');
    expect(rankOf(v, text, 2, 8)).toBe(rankOf(v, Buffer.from(' hello'), 0, 6));
    expect(rankOf(v, Buffer.from('qzxjqzxjqzxj'), 0, 12)).toBe(-1);
    expect(rankOf(v, new Uint8Array(300), 0, 300)).toBe(-1);
    expect(Array.from(v.byteToken.subarray(0, 3))).toEqual([0, 1, 2].map((b) => rankOf(v, Uint8Array.of(b), 0, 1)));
  });

  it('reads back the file the build writes, and refuses what is not one', () => {
    const file = encodeVocabulary(v);
    const back = decodeVocabulary(file);
    expect(back.count).toBe(v.count);
    expect(same(back.bytes, v.bytes) && same(back.offsets, v.offsets) && same(back.slots, v.slots)).toBe(true);
    // Read from a view into a larger buffer.
    const padded = new Uint8Array(file.length + 16);
    padded.set(file, 8);
    expect(same(decodeVocabulary(padded.subarray(8, 8 + file.length)).slots, v.slots)).toBe(true);

    expect(() => decodeVocabulary(new Uint8Array(4))).toThrow(/not a vocabulary/);
    const wrongMagic = file.slice();
    wrongMagic[0] ^= 1;
    expect(() => decodeVocabulary(wrongMagic)).toThrow(/not a vocabulary/);
    expect(() => decodeVocabulary(file.subarray(0, 1000))).toThrow(/cut short/);
    expect(() => decodeVocabulary(file.subarray(0, file.length - 1))).toThrow(/cut short/);
    const longer = new Uint8Array(file.length + 4);
    longer.set(file);
    expect(() => decodeVocabulary(longer)).toThrow(/longer than it says/);
    // A token's length that is not its offsets'.
    const lengths = file.slice();
    lengths[20] ^= 1;
    expect(() => decodeVocabulary(lengths)).toThrow(/tables are not of its tokens/);
    // Slots that are not of its tokens: one token missing (token 0, one of those checked), or the table
    // moved by one slot.
    const slotsAt = file.length - 4 * v.slots.length;
    const missing = file.slice();
    const filled = v.slots.indexOf(1);
    missing.fill(0, slotsAt + 4 * filled, slotsAt + 4 * filled + 4);
    expect(() => decodeVocabulary(missing)).toThrow(/tables are not of its tokens/);
    const moved = file.slice();
    moved.set(file.subarray(slotsAt, file.length - 4), slotsAt + 4);
    moved.set(file.subarray(file.length - 4), slotsAt);
    expect(() => decodeVocabulary(moved)).toThrow(/tables are not of its tokens/);
    // A table with no empty slot: a look-up of bytes that are no token still ends.
    const full = { ...v, slots: v.slots.map((x, i) => x || 1 + (i % v.count)) };
    expect(rankOf(full, Buffer.from('qzxjqzxjqzxj'), 0, 12)).toBe(-1);
    // A file whose single bytes are not all tokens cannot merge every text.
    expect(() => vocabularyOfRanks(['ab', 'cd'])).toThrow(/single byte/);
  });
});
