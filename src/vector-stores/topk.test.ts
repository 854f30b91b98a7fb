import { describe, expect, it } from 'vitest';
import { kthLargest, TopK } from './topk.js';

describe('top k', () => {
  let x = 7;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const values = Array.from({ length: 1000 }, () => Math.floor(next() * 200) / 10);

  it('keeps the k best slots of a stream', () => {
    const top = new TopK(25);
    values.forEach((v, slot) => top.push(slot, v));
    const kept = [...top.scores.subarray(0, top.size)].sort((a, b) => b - a);
    expect(kept).toEqual([...values].sort((a, b) => b - a).slice(0, 25));
    expect(top.floor).toBe(kept[24]);
    for (let i = 0; i < top.size; i++) expect(values[top.slots[i]]).toBe(top.scores[i]);
  });

  it('finds the k-th largest value, 0 when there are fewer', () => {
    const sorted = [...values].sort((a, b) => b - a);
    const work = new Float64Array(values.length);
    for (const k of [1, 2, 50, 999, 1000]) expect(kthLargest(Float64Array.from(values), values.length, k, work)).toBe(sorted[k - 1]);
    expect(kthLargest(Float64Array.from([1, 2]), 2, 3, work)).toBe(0);
  });
});
