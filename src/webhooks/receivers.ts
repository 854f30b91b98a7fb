/**
 * Keeps a slow receiver from taking every delivery slot of this instance. Deliveries share the job
 * queue's slots (128 at a time), and an attempt holds its slot until the receiver answers or the timeout
 * runs out: without a bound, a burst of events to one receiver that hangs would hold every slot, and every
 * other endpoint's deliveries would wait behind it (head-of-line blocking across projects).
 *
 * A receiver (the endpoint's URL) is slow once an attempt to it timed out or took half the timeout; while
 * it is, at most `share` attempts to it run at once, and an attempt beyond that is put off (no attempt is
 * counted: its delivery comes back later, `deferMs`). An attempt that ends quicker makes it fast again. A
 * fast receiver is never held back, so one endpoint alone still has every slot.
 */
export interface Receivers {
  /** Whether an attempt to `url` may start now; `mustRun` starts it in any case. Every start is followed by `end`. */
  begin(url: string, mustRun?: boolean): boolean;
  /** An attempt to `url` ended: how long it took, and whether the timeout ended it. */
  end(url: string, took: { ms: number; timedOut: boolean }): void;
  /** When a delivery put off comes back, its job claimed `claims` times: doubling from a second, at most a minute (ms from now). */
  deferMs(claims: number): number;
}

const FIRST_DEFER_MS = 1_000;
const LAST_DEFER_MS = 60_000;

export function createReceivers(opts: { timeoutMs: number; share: number; random?: () => number }): Receivers {
  const slow = new Set<string>();
  const inFlight = new Map<string, number>();
  const random = opts.random ?? Math.random;
  return {
    begin(url, mustRun = false) {
      const n = inFlight.get(url) ?? 0;
      if (!mustRun && n >= opts.share && slow.has(url)) return false;
      inFlight.set(url, n + 1);
      return true;
    },
    end(url, took) {
      const n = (inFlight.get(url) ?? 1) - 1;
      if (n > 0) inFlight.set(url, n);
      else inFlight.delete(url);
      if (took.timedOut || took.ms >= opts.timeoutMs / 2) slow.add(url);
      else slow.delete(url);
    },
    deferMs(claims) {
      const base = Math.min(FIRST_DEFER_MS * 2 ** Math.min(Math.max(0, claims - 1), 16), LAST_DEFER_MS);
      // Spread, so the deliveries put off together do not all come back in the same moment.
      return Math.round(base * (0.75 + random() / 2));
    },
  };
}
