/**
 * The one clock of Standin. Every module reads time here, never from Date directly, so the control
 * plane can move it: a test advances 72 hours and sees webhook retries end, runs expire, tokens lapse.
 * The clock is the wall clock plus an offset that only grows (time never runs backwards).
 */
export interface Clock {
  /** Milliseconds since the Unix epoch, as Standin sees them. */
  now(): number;
  /** Whole seconds since the Unix epoch (the unit of every `created_at`). */
  nowSeconds(): number;
  /** The current offset from the wall clock, in milliseconds. */
  offsetMs(): number;
  /** Moves the clock forward by `ms`; listeners run so timers can re-plan. */
  advance(ms: number): void;
  /** Sets the offset (used when another instance advanced the shared clock). Never moves backwards. */
  setOffset(ms: number): void;
  /** Sets the offset back (0: the real time). Only a reset of all state may: ids made before would sort after new ones. */
  reset(offsetMs?: number): void;
  /** Called after every move of the clock. Returns an unsubscribe function. */
  onChange(listener: (offsetMs: number) => void): () => void;
}

/**
 * How far the clock may move ahead of the real time, in all: 100 years. Ids carry the time in 50 bits of
 * milliseconds, and timestamps must stay valid dates; no test needs more.
 */
export const MAX_OFFSET_MS = 100 * 365 * 86_400_000;

export function createClock(initialOffsetMs = 0): Clock {
  let offset = initialOffsetMs;
  const listeners = new Set<(offsetMs: number) => void>();
  const notify = () => {
    for (const l of listeners) l(offset);
  };
  return {
    // The clock itself is where the wall clock is read.
    // eslint-disable-next-line no-restricted-syntax
    now: () => Date.now() + offset,
    // eslint-disable-next-line no-restricted-syntax
    nowSeconds: () => Math.floor((Date.now() + offset) / 1000),
    offsetMs: () => offset,
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the clock only moves forward');
      if (offset + ms > MAX_OFFSET_MS)
        throw new RangeError(
          `the clock moves at most 100 years ahead of the real time in all (${Math.floor((MAX_OFFSET_MS - offset) / 1000)} s are left)`,
        );
      offset += ms;
      notify();
    },
    setOffset(ms) {
      if (ms > offset) {
        offset = ms;
        notify();
      }
    },
    reset(offsetMs = 0) {
      offset = offsetMs;
      notify();
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * The real time in ms since the Unix epoch, which the control plane never moves. For a time that another
 * system checks against its own clock — the `webhook-timestamp` a delivery is signed with, which receivers
 * (Standard Webhooks: 5 minutes of tolerance) compare with theirs, and the `time` of a log line, which an
 * operator's log store orders and compares with every other service's; and how long a claim on a job or
 * a run's lease lasts, as the life of the process holding it does (core/jobs.ts). Everything Standin
 * schedules or stamps (`created_at`, retries, the 72-hour window) stays on the Standin clock.
 */
// eslint-disable-next-line no-restricted-syntax -- the one reading of unmoved time (see above)
export const wallNow = (): number => Date.now();

/**
 * A signal that aborts when the Standin clock reaches `at` (ms): by the passing of time, or at once when the
 * control plane moves it there. `stop` lets go of the timer and the clock listener.
 */
export function clockReaches(clock: Clock, at: number): { signal: AbortSignal; stop(): void } {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    clearTimeout(timer);
    const left = at - clock.now();
    if (left <= 0) {
      off();
      return ac.abort();
    }
    // setTimeout takes at most 2^31 - 1 ms; a later moment is looked at again then.
    timer = setTimeout(check, Math.min(left, 2 ** 31 - 1));
    timer.unref();
  };
  const off = clock.onChange(check);
  check();
  return {
    signal: ac.signal,
    stop() {
      clearTimeout(timer);
      off();
    },
  };
}

/** Parses durations such as `72h`, `15m`, `30s`, `250ms`, `1d` or a number of seconds. */
export function parseDuration(text: string | number): number {
  if (typeof text === 'number') return text * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * units[m[2]];
    consumed += m[0].length;
  }
  if (consumed === 0 || consumed !== text.replace(/\s+/g, '').length) {
    if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
    throw new RangeError(`'${text}' is not a duration (e.g. 72h, 15m, 30s, 250ms)`);
  }
  return total;
}
