import { describe, expect, it } from 'vitest';
import { createClock } from './clock.js';
import { newId, newIdAt } from './ids.js';

describe('ids', () => {
  it('are the prefix and 24 ordered base-32 characters', () => {
    expect(newId('thread', createClock())).toMatch(/^thread_[0-9a-hjkmnp-tv-z]{24}$/);
  });
  it('sort by creation, also within one millisecond and across a moved clock', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => newIdAt('msg', 1_800_000_000_000 + Math.floor(i / 100)));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
    const clock = createClock();
    const before = newId('run', clock);
    clock.advance(86_400_000);
    expect(newId('run', clock) > before).toBe(true);
  });
  it('within one millisecond, each random part is the one before plus one (base 32, carried)', () => {
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    const value = (id: string) => [...id.slice(-14)].reduce((n, c) => n * 32n + BigInt(alphabet.indexOf(c)), 0n);
    const ms = 1_900_000_000_000;
    let before = newIdAt('step', ms);
    for (let i = 0; i < 2000; i++) {
      const id = newIdAt('step', ms);
      // Past the largest random part the next is random again: a new draw, not a successor.
      if (value(before) !== 32n ** 14n - 1n) expect(value(id)).toBe(value(before) + 1n);
      expect(id.slice(0, 15)).toBe(before.slice(0, 15));
      before = id;
    }
  });
});
