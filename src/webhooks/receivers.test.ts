import { describe, expect, it } from 'vitest';
import { createReceivers } from './receivers.js';

describe('receivers', () => {
  const url = 'http://127.0.0.1:9/hook';

  it('never holds a fast receiver back; holds a slow one to its share until an attempt is quick again', () => {
    const r = createReceivers({ timeoutMs: 1_000, share: 2 });
    for (let i = 0; i < 10; i++) expect(r.begin(url)).toBe(true);
    for (let i = 0; i < 10; i++) r.end(url, { ms: 5, timedOut: false });
    // Slow: a timeout, or half the timeout taken.
    expect(r.begin(url)).toBe(true);
    r.end(url, { ms: 1_000, timedOut: true });
    expect([r.begin(url), r.begin(url), r.begin(url)]).toEqual([true, true, false]);
    // A fan-out run again after a crash starts its attempt in any case.
    expect(r.begin(url, true)).toBe(true);
    r.end(url, { ms: 600, timedOut: false });
    expect(r.begin(url)).toBe(false);
    r.end(url, { ms: 10, timedOut: false });
    // Fast again: no share.
    expect([r.begin(url), r.begin(url)]).toEqual([true, true]);
    // Another receiver was never slow.
    expect(r.begin('http://127.0.0.1:10/hook')).toBe(true);
  });

  it('puts deliveries off for a second, doubling with each claim of their job, at most a minute, spread by a quarter', () => {
    const r = createReceivers({ timeoutMs: 1_000, share: 2, random: () => 0.5 });
    expect([1, 2, 3, 7, 100].map((c) => r.deferMs(c))).toEqual([1_000, 2_000, 4_000, 60_000, 60_000]);
    expect(createReceivers({ timeoutMs: 1_000, share: 2, random: () => 0 }).deferMs(1)).toBe(750);
    expect(createReceivers({ timeoutMs: 1_000, share: 2, random: () => 1 }).deferMs(1)).toBe(1_250);
  });
});
