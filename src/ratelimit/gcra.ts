/**
 * The arithmetic both backends share (redis.ts repeats it in Lua, line for line): GCRA buckets and the
 * ramp detector. Times are ms since `EPOCH_BASE`, which keeps doubles precise to ~1e-5 ms.
 */
import type { BucketState, RampSpec } from './interface.js';

/** 2023-11-14T22:13:20Z: subtracted from every timestamp the counters store. */
export const EPOCH_BASE = 1_700_000_000_000;
/** Slack for floating-point noise when comparing against a full window. */
export const EPS = 1e-6;

/** Where a bucket's arrival time lands if `cost` more units are charged now. */
export function nextTat(tat: number | undefined, now: number, cost: number, limit: number, windowMs: number): number {
  const base = tat === undefined || tat < now ? now : tat;
  return base + (cost * windowMs) / limit;
}

/** Whether an arrival time stays within the burst the limit allows. */
export const fits = (tat: number, now: number, windowMs: number) => tat - now <= windowMs + EPS;

/** Remaining units and time to full for a bucket whose arrival time is `tat`. */
export function bucketState(tat: number | undefined, now: number, limit: number, windowMs: number): BucketState {
  if (tat === undefined || tat <= now) return { remaining: limit, resetMs: 0 };
  const busy = tat - now;
  const remaining = Math.floor(((windowMs - busy) * limit) / windowMs + EPS);
  return { remaining: Math.max(0, Math.min(limit, remaining)), resetMs: busy };
}

/**
 * The arrival time after a refused request is counted (failed requests count toward the per-minute
 * limit). Debt is capped at one extra window: a client that keeps retrying stays refused, and once it
 * stops it waits at most one window, as with a sliding count of attempts — never more than 60 s for RPM.
 */
export function refusalTat(tat: number | undefined, now: number, cost: number, limit: number, windowMs: number): number {
  return Math.min(nextTat(tat, now, cost, limit, windowMs), now + 2 * windowMs);
}

/** Minutes per slot of the ramp history: few slots keep a decision cheap (one hash read in Redis). */
export const SLOT_MINUTES = 5;
/** Slots of history a ramp state keeps for a lag of `lag` minutes. */
export const ringSize = (lag: number) => Math.floor((lag + 2) / SLOT_MINUTES) + 3;

export interface RampState {
  /** Last update, ms since EPOCH_BASE. */
  t: number;
  /** Meter level: input tokens still counted in the current window (drains at the ceiling's rate). */
  level: number;
  /** Admitted input tokens per 5-minute slot (a ring indexed by slot number mod size) … */
  slots: number[];
  /** … and the slot number each holds (a slot of another number counts as empty). */
  units: number[];
}

export interface RampStep {
  allowed: boolean;
  retryAfterMs: number;
}

/**
 * Where the baseline window (the five minutes centred `lag` minutes before minute `m`) falls in the
 * slots: slot `a` covers its first `5 − o` minutes, slot `a + 1` the other `o`.
 */
export function baselineSlots(m: number, lag: number): { a: number; o: number } {
  const start = m - lag - 2;
  const a = Math.floor(start / SLOT_MINUTES);
  return { a, o: start - a * SLOT_MINUTES };
}

/** Average admitted input tokens per minute over the five minutes centred `lag` minutes before minute `m`. */
export function baseline(state: RampState, m: number, lag: number): number {
  const { a, o } = baselineSlots(m, lag);
  const size = state.slots.length;
  const tokensOf = (u: number) => (state.units[u % size] === u ? state.slots[u % size] : 0);
  // Tokens within a slot count as spread evenly over its minutes.
  return ((tokensOf(a) * (SLOT_MINUTES - o)) / SLOT_MINUTES + (tokensOf(a + 1) * o) / SLOT_MINUTES) / 5;
}

/**
 * The ramp detector (spec rule 6, "once traffic reaches the threshold, increase by no more than
 * ratio per period"), taken literally: the ceiling is C = max(threshold, ratio × the input TPM of one
 * period ago), and the current input TPM, measured by a meter (a leaky bucket of capacity C that drains
 * C per minute, i.e. "tokens in the last minute" with a minute of burst), must stay within C. A request
 * that would overflow the meter is refused with slow_down; Retry-After is when the meter has drained
 * enough. Only admitted requests move the meter and the history. `state` is updated in place when admitted.
 */
export function rampStep(state: RampState | undefined, now: number, spec: RampSpec): RampStep & { state: RampState } {
  const m = Math.floor(now / 60_000);
  const size = ringSize(spec.lagMinutes);
  const st = state ?? { t: now, level: 0, slots: new Array(size).fill(0), units: new Array(size).fill(-1) };
  const ceiling = Math.max(spec.thresholdPerMin, spec.ratio * baseline(st, m, spec.lagMinutes));
  const dt = Math.max(0, now - st.t);
  const level = Math.max(0, st.level - (ceiling * dt) / spec.windowMs);
  const over = level + spec.tokens - ceiling;
  if (over > EPS) return { allowed: false, retryAfterMs: Math.min(60_000, Math.ceil((over * spec.windowMs) / ceiling)), state: st };
  st.t = now;
  st.level = level + spec.tokens;
  const u = Math.floor(m / SLOT_MINUTES);
  const i = u % size;
  if (st.units[i] !== u) {
    st.units[i] = u;
    st.slots[i] = 0;
  }
  st.slots[i] += spec.tokens;
  return { allowed: true, retryAfterMs: 0, state: st };
}
