import type { Clock } from '../core/clock.js';
import { EPOCH_BASE, bucketState, fits, nextTat, rampStep, refusalTat, type RampState } from './gcra.js';
import type { AdmitPlan, BucketState, Decision, LimiterBackend, Refusal, Settlement } from './interface.js';

/**
 * The in-process backend (default): plain maps, one decision at a time (JavaScript runs it without
 * interleaving), on Standin's clock — so moving the clock in a test refills the buckets.
 */
export function createMemoryBackend(clock: Clock): LimiterBackend {
  const tats = new Map<string, number>();
  const ramps = new Map<string, RampState>();
  const leases = new Map<string, Map<string, number>>();
  const spends = new Map<string, { amount: number; expires: number }>();
  let sinceSweep = 0;

  // Full buckets need no entry: drop them now and then so the maps stay as large as the active set.
  function sweep(now: number) {
    for (const [k, tat] of tats) if (tat <= now) tats.delete(k);
    for (const [k, r] of ramps) if (now - r.t > 6 * 3_600_000) ramps.delete(k);
    for (const [k, s] of spends) if (s.expires <= now) spends.delete(k);
  }

  /** The leases of a model; expired ones are dropped only when they would decide a refusal. */
  function inFlight(key: string, now: number, max: number): Map<string, number> {
    let set = leases.get(key);
    if (!set) leases.set(key, (set = new Map()));
    if (set.size >= max) for (const [id, expires] of set) if (expires <= now) set.delete(id);
    return set;
  }

  function refuse(plan: AdmitPlan, now: number, refusal: Refusal): Decision {
    const states: BucketState[] = new Array(plan.buckets.length);
    for (let i = 0; i < plan.buckets.length; i++) {
      const b = plan.buckets[i];
      let tat = tats.get(b.key);
      if (b.chargeOnRefusal) {
        const cost = plan.costs[i];
        tat = refusalTat(tat, now, cost, b.limit, b.windowMs);
        tats.set(b.key, tat);
        // The wait includes this refused request's own charge.
        if (refusal.kind === 'bucket' && refusal.index === i)
          refusal.retryAfterMs = nextTat(tat, now, cost, b.limit, b.windowMs) - b.windowMs - now;
      }
      states[i] = bucketState(tat, now, b.limit, b.windowMs);
    }
    return { ok: false, states, refusal };
  }

  return {
    name: 'memory',
    health: () => ({ status: 'ok' }),
    admit(plan) {
      const now = clock.now() - EPOCH_BASE;
      if (++sinceSweep >= 10_000) {
        sinceSweep = 0;
        sweep(now);
      }
      if (plan.quota) {
        const s = spends.get(plan.quota.key);
        if (s && s.expires > now && s.amount >= plan.quota.limit) return refuse(plan, now, { kind: 'quota' });
      }
      const next = new Array<number>(plan.buckets.length);
      for (let i = 0; i < plan.buckets.length; i++) {
        const b = plan.buckets[i];
        const tat = tats.get(b.key);
        const n = nextTat(tat, now, plan.costs[i], b.limit, b.windowMs);
        if (!fits(n, now, b.windowMs)) {
          const used = b.limit - bucketState(tat, now, b.limit, b.windowMs).remaining;
          return refuse(plan, now, { kind: 'bucket', index: i, retryAfterMs: n - b.windowMs - now, used });
        }
        next[i] = n;
      }
      // Concurrency is checked before the ramp, because an admitted ramp step updates its state in place.
      let lease: Map<string, number> | undefined;
      if (plan.concurrency) {
        lease = inFlight(plan.concurrency.key, now, plan.concurrency.max);
        if (lease.size >= plan.concurrency.max) return refuse(plan, now, { kind: 'concurrency' });
      }
      if (plan.ramp) {
        const step = rampStep(ramps.get(plan.ramp.key), now, plan.ramp);
        if (!step.allowed) return refuse(plan, now, { kind: 'ramp', retryAfterMs: step.retryAfterMs });
        ramps.set(plan.ramp.key, step.state);
      }
      if (lease) lease.set(plan.concurrency!.leaseId, now + plan.concurrency!.ttlMs);
      const states: BucketState[] = new Array(plan.buckets.length);
      for (let i = 0; i < plan.buckets.length; i++) {
        const b = plan.buckets[i];
        tats.set(b.key, next[i]);
        states[i] = bucketState(next[i], now, b.limit, b.windowMs);
      }
      return { ok: true, states };
    },
    settle(s: Settlement) {
      const now = clock.now() - EPOCH_BASE;
      for (const b of s.buckets) {
        if (b.delta === 0) continue;
        const tat = tats.get(b.key);
        const base = tat === undefined || tat < now ? now : tat;
        const moved = base + (b.delta * b.windowMs) / b.limit;
        if (moved <= now) tats.delete(b.key);
        else tats.set(b.key, moved);
      }
      if (s.concurrency) leases.get(s.concurrency.key)?.delete(s.concurrency.leaseId);
      if (s.spend && s.spend.amount > 0) {
        const cur = spends.get(s.spend.key);
        const live = cur && cur.expires > now ? cur.amount : 0;
        spends.set(s.spend.key, { amount: live + s.spend.amount, expires: now + s.spend.ttlMs });
      }
    },
    spend(key) {
      const s = spends.get(key);
      return s && s.expires > clock.now() - EPOCH_BASE ? s.amount : 0;
    },
    reset() {
      tats.clear();
      ramps.clear();
      leases.clear();
      spends.clear();
    },
    close() {},
  };
}
