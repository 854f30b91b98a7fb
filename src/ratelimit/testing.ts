import type { Clock } from '../core/clock.js';

/** A clock that stands still until told to move: header values become exact in tests and benchmarks. */
export function fixedClock(startMs = 1_800_000_000_000): Clock & { set(ms: number): void } {
  let t = startMs;
  return {
    now: () => t,
    nowSeconds: () => Math.floor(t / 1000),
    offsetMs: () => 0,
    advance(ms) {
      t += ms;
    },
    setOffset() {},
    reset(offsetMs = 0) {
      t = startMs + offsetMs;
    },
    onChange: () => () => {},
    set(ms) {
      t = ms;
    },
  };
}
