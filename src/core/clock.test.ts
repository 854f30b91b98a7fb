import { describe, expect, it } from 'vitest';
import { createClock, parseDuration } from './clock.js';

describe('clock', () => {
  it('advances, never goes back, and tells listeners', () => {
    const clock = createClock();
    const seen: number[] = [];
    clock.onChange((o) => seen.push(o));
    const t = clock.now();
    clock.advance(3_600_000);
    expect(clock.now() - t).toBeGreaterThanOrEqual(3_600_000);
    expect(() => clock.advance(-1)).toThrow();
    clock.setOffset(1000);
    expect(clock.offsetMs()).toBe(3_600_000);
    clock.setOffset(7_200_000);
    expect(seen).toEqual([3_600_000, 7_200_000]);
    expect(clock.nowSeconds()).toBe(Math.floor(clock.now() / 1000));
  });
  it('parses durations', () => {
    expect(parseDuration('72h')).toBe(72 * 3_600_000);
    expect(parseDuration('1d2h30m')).toBe(26.5 * 3_600_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('90')).toBe(90_000);
    expect(parseDuration(2)).toBe(2000);
    expect(() => parseDuration('soon')).toThrow(/not a duration/);
    expect(() => parseDuration('5h later')).toThrow();
  });
});
