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
});
