import { describe, expect, it } from 'vitest';
import { stepsOf } from './ingest.js';
import { TEXT_PART } from './ingest-protocol.js';

describe("an ingestion's steps (stepsOf)", () => {
  const sizes = (items: number[], rows: number) => [...stepsOf(items, (n) => n, rows)];

  it('take rows up to the row limit and TEXT_PART bytes, in order, every row once', () => {
    expect(sizes([1, 1, 1, 1, 1], 2)).toEqual([
      [0, 2, 2],
      [2, 4, 2],
      [4, 5, 1],
    ]);
    const half = TEXT_PART / 2;
    expect(sizes([half, half, 1, half], Infinity)).toEqual([
      [0, 2, TEXT_PART],
      [2, 4, half + 1],
    ]);
  });

  it('put a row larger than TEXT_PART alone, and make no step of nothing', () => {
    expect(sizes([1, TEXT_PART * 3, 1], Infinity)).toEqual([
      [0, 1, 1],
      [1, 2, TEXT_PART * 3],
      [2, 3, 1],
    ]);
    expect(sizes([], 128)).toEqual([]);
  });

  it('on PostgreSQL, a 512 KB file of about 330 chunks in five steps where CHUNK_ROWS made nine', () => {
    const segments = Array.from({ length: 660 }, () => 800);
    const chunks = Array.from({ length: 330 }, () => 1_024);
    const count = (rows: number) => sizes(segments, rows).length + sizes(chunks, rows).length;
    expect(count(128)).toBe(9);
    expect(count(Infinity)).toBe(5);
  });
});
