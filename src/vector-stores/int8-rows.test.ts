import { describe, expect, it } from 'vitest';
import { BLOCK, Int8Rows } from './int8-rows.js';

let x = 7;
const rand = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;

/** What `dots` must give: the dot product of each row with the query as `setQuery` rounded it. */
function expected(rows: Int8Rows, q: Float32Array, from: number, count: number): number[] {
  const d = rows.d;
  let max = 0;
  for (const v of q) max = Math.max(max, Math.abs(v));
  const scale = Math.min(32_767, Math.floor(0x7fffffff / (127 * d))) / max;
  const qi = Array.from(q, (v) => Math.round(v * scale));
  return Array.from({ length: count }, (_, r) => qi.reduce((sum, v, i) => sum + v * rows.array[(from + r) * d + i], 0));
}

describe('int8 rows in WebAssembly memory', () => {
  it('gives the exact integer dot products for any dimension, also where a row is not a multiple of 16 bytes', () => {
    for (const d of [1, 3, 16, 17, 100, 256, 1536]) {
      const rows = new Int8Rows(d, 50);
      for (let i = 0; i < 50 * d; i++) rows.array[i] = Math.floor(rand() * 255) - 127;
      const q = Float32Array.from({ length: d }, () => rand() * 2 - 1);
      const unit = rows.setQuery(q);
      expect([...rows.dots(0, 50).subarray(0, 50)]).toEqual(expected(rows, q, 0, 50));
      expect([...rows.dots(7, 3).subarray(0, 3)]).toEqual(expected(rows, q, 7, 3));
      // Back in the query's units: close to the float dot product.
      const float = q.reduce((sum, v, i) => sum + v * rows.array[i], 0);
      expect(rows.dots(0, 1)[0] * unit).toBeCloseTo(float, 1);
    }
  });

  it('keeps every sum within int32 at the extremes, up to 3,072 dimensions', () => {
    for (const d of [256, 3072]) {
      const rows = new Int8Rows(d, 2);
      rows.array.fill(127, 0, d);
      rows.array.fill(-127, d, 2 * d);
      const q = new Float32Array(d).fill(1);
      const unit = rows.setQuery(q);
      const [a, b] = rows.dots(0, 2);
      expect(a * unit).toBeCloseTo(127 * d, 0);
      expect(b * unit).toBeCloseTo(-127 * d, 0);
    }
  });

  it('keeps its rows as it grows, and takes rows read into it without copying them', () => {
    const d = 32;
    const rows = new Int8Rows(d, 10);
    for (let i = 0; i < 10 * d; i++) rows.array[i] = (i % 200) - 100;
    const before = rows.array.slice(0, 10 * d);
    rows.reserve(100_000);
    expect(rows.array.length).toBeGreaterThanOrEqual(100_000 * d);
    expect(rows.array.slice(0, 10 * d)).toEqual(before);
    const q = Float32Array.from({ length: d }, (_, i) => i - 16);
    rows.setQuery(q);
    expect(rows.dots(99_999 - BLOCK + 1, BLOCK).every((v) => v === 0)).toBe(true);
    expect([...rows.dots(0, 10).subarray(0, 10)]).toEqual(expected(rows, q, 0, 10));
    expect(Int8Rows.of(rows.array, d)).toBe(rows);
    const copied = Int8Rows.of(before, d);
    expect(copied).not.toBe(rows);
    expect(copied.array.slice(0, 10 * d)).toEqual(before);
  });

  it('answers zero for a zero query', () => {
    const rows = new Int8Rows(16, 1);
    rows.array.fill(5, 0, 16);
    expect(rows.setQuery(new Float32Array(16))).toBe(0);
  });
});
