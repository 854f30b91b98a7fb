import { describe, expect, it } from 'vitest';
import { clockReaches, createClock, parseDuration } from './clock.js';

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

describe('clockReaches', () => {
  it('aborts when the clock is moved past the moment, and not before', async () => {
    const clock = createClock();
    const at = clock.now() + 3_600_000;
    const { signal } = clockReaches(clock, at);
    await new Promise((r) => setTimeout(r, 20));
    expect(signal.aborted).toBe(false);
    clock.advance(3_600_000);
    expect(signal.aborted).toBe(true);
  });

  it('aborts by the passing of time, at once for a moment already past, and never once stopped', async () => {
    const clock = createClock();
    const soon = clockReaches(clock, clock.now() + 30);
    await new Promise((r) => soon.signal.addEventListener('abort', r));
    expect(clockReaches(clock, clock.now() - 1).signal.aborted).toBe(true);
    const stopped = clockReaches(clock, clock.now() + 1_000);
    stopped.stop();
    clock.advance(2_000);
    expect(stopped.signal.aborted).toBe(false);
  });
});
