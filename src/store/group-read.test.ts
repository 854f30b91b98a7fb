import { describe, expect, it } from 'vitest';
import { groupRead } from './group-read.js';

describe('groupRead', () => {
  it('answers the keys asked in one stretch of code with one read, each caller its own rows', async () => {
    const reads: string[][] = [];
    const rows = [
      { k: 'a', v: 1 },
      { k: 'a', v: 2 },
      { k: 'b', v: 3 },
    ];
    const get = groupRead(
      async (keys: string[]) => {
        reads.push(keys);
        return rows.filter((r) => keys.includes(r.k));
      },
      (r) => r.k,
    );
    const [a, b, c, a2] = await Promise.all([get('a'), get('b'), get('c'), get('a')]);
    expect(reads).toEqual([['a', 'b', 'c']]);
    expect(a.map((r) => r.v)).toEqual([1, 2]);
    expect(a2).toEqual(a);
    expect(b.map((r) => r.v)).toEqual([3]);
    expect(c).toEqual([]);
    // A later stretch is a read of its own.
    await get('b');
    expect(reads).toEqual([['a', 'b', 'c'], ['b']]);
  });

  it('splits a large stretch into reads of at most maxBatch keys, and fails only the callers of a failed read', async () => {
    const reads: number[][] = [];
    const get = groupRead(
      async (keys: number[]) => {
        reads.push(keys);
        if (keys.includes(3)) throw new Error('boom');
        return keys.map((k) => ({ k }));
      },
      (r) => r.k,
      2,
    );
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((k) => get(k)));
    expect(reads).toEqual([[1, 2], [3, 4], [5]]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
  });
});
