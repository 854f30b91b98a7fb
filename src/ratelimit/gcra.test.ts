import { describe, expect, it } from 'vitest';
import { bucketState, fits, nextTat, rampStep, refusalTat, type RampState } from './gcra.js';
import type { RampSpec } from './interface.js';

describe('GCRA buckets', () => {
  it('a limit of L per window refills one unit every window/L and holds at most L', () => {
    // 60 per minute: one per second.
    let tat: number | undefined;
    for (let i = 0; i < 60; i++) {
      const n = nextTat(tat, 0, 1, 60, 60_000);
      expect(fits(n, 0, 60_000)).toBe(true);
      tat = n;
    }
    expect(fits(nextTat(tat, 0, 1, 60, 60_000), 0, 60_000)).toBe(false);
    expect(bucketState(tat, 0, 60, 60_000)).toEqual({ remaining: 0, resetMs: 60_000 });
    expect(bucketState(tat, 1_000, 60, 60_000)).toEqual({ remaining: 1, resetMs: 59_000 });
    expect(bucketState(tat, 60_000, 60, 60_000)).toEqual({ remaining: 60, resetMs: 0 });
    expect(bucketState(undefined, 5, 60, 60_000)).toEqual({ remaining: 60, resetMs: 0 });
  });

  it('refused requests add debt, at most one extra window', () => {
    expect(refusalTat(60_000, 0, 1, 60, 60_000)).toBe(61_000);
    expect(refusalTat(120_000, 0, 1, 60, 60_000)).toBe(120_000);
  });
});

describe('ramp detector', () => {
  const spec = (tokens: number): RampSpec => ({
    key: 'k',
    tokens,
    thresholdPerMin: 1_000_000,
    ratio: 1.5,
    windowMs: 60_000,
    lagMinutes: 15,
  });

  /** Sends `rate(t)` input tokens per minute as one request every `stepMs`; returns the first refusal (minutes) or null. */
  function drive(rate: (minutes: number) => number, minutes: number, stepMs = 5_000, from?: { state: RampState; at: number }) {
    let state = from?.state;
    const t0 = from?.at ?? 0;
    for (let t = 0; t < minutes * 60_000; t += stepMs) {
      const r = rampStep(state, t0 + t, spec((rate(t / 60_000) * stepMs) / 60_000));
      if (!r.allowed) return { refusedAt: t / 60_000, state: r.state, at: t0 + t, retryAfterMs: r.retryAfterMs };
      state = r.state;
    }
    return { refusedAt: null, state: state!, at: t0 + minutes * 60_000, retryAfterMs: 0 };
  }
  const copy = (s: RampState): RampState => structuredClone(s);

  it('a newcomer may go straight to the threshold, not beyond', () => {
    expect(drive(() => 1_000_000, 60).refusedAt).toBeNull();
    const over = drive(() => 1_600_000, 60);
    expect(over.refusedAt).not.toBeNull();
    expect(over.refusedAt!).toBeLessThan(5);
  });

  it('never refuses below the threshold, however bursty', () => {
    expect(drive(() => 990_000, 120, 60_000).refusedAt).toBeNull();
    expect(drive((m) => (m % 10 < 1 ? 990_000 : 0), 120, 1_000).refusedAt).toBeNull();
  });

  it('admits sustained growth of 45 % per 15 minutes above the threshold', () => {
    const warm = drive(() => 1_000_000, 30);
    expect(drive((m) => 1_000_000 * Math.pow(1.45, m / 15), 120, 5_000, warm).refusedAt).toBeNull();
  });

  it('refuses sustained growth of 60 % per 15 minutes', () => {
    const warm = drive(() => 1_000_000, 30);
    const grow = drive((m) => 1_000_000 * Math.pow(1.6, m / 15), 120, 5_000, warm);
    expect(grow.refusedAt).not.toBeNull();
  });

  it('from a steady rate: +45 % at once passes; a doubling is refused, and waiting Retry-After admits the request', () => {
    const warm = drive(
      () => 1_200_000,
      30,
      5_000,
      drive(() => 1_000_000, 20),
    );
    expect(warm.refusedAt).toBeNull();
    expect(drive(() => 1_740_000, 15, 5_000, { state: copy(warm.state), at: warm.at }).refusedAt).toBeNull();
    const jump = drive(() => 2_400_000, 15, 5_000, { state: copy(warm.state), at: warm.at });
    expect(jump.refusedAt).not.toBeNull();
    expect(jump.retryAfterMs).toBeGreaterThan(0);
    expect(jump.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(rampStep(jump.state, jump.at + jump.retryAfterMs, spec(200_000)).allowed).toBe(true);
  });

  it('a staircase of +50 % every 15 minutes is admitted', () => {
    let at = drive(() => 1_000_000, 30);
    for (const level of [1_490_000, 2_220_000, 3_300_000]) {
      at = drive(() => level, 15, 5_000, at);
      expect(at.refusedAt).toBeNull();
    }
  });
});
