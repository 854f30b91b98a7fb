/**
 * The limiter backend: one atomic, all-or-nothing decision over every counter a request touches.
 * Two implementations: `memory.ts` (one process, Standin's clock) and `redis.ts` (shared, Redis time).
 *
 * Counters are GCRA buckets (a token bucket with continuous refill, one number per bucket: the
 * "theoretical arrival time"). A limit of L per window W refills one unit every W/L ms, holds at most L,
 * and is back to full (W/L)·used ms after the last charge: that is what `x-ratelimit-reset-*` reports.
 */
export interface BucketSpec {
  /** Unique name of the bucket (`<owner>:<limit key>:<metric>`). */
  key: string;
  /** The same bucket as a field of a hash (`<owner>:<limit key>` / `<metric>`): Redis keeps one hash per owner and model. */
  hash: string;
  field: string;
  limit: number;
  windowMs: number;
  /** Charged even when the request is refused (request counters: failed requests still count, rule of C). */
  chargeOnRefusal: boolean;
}

export interface RampSpec {
  /** The organization's hash of this model (the ramp's fields live beside its buckets). */
  key: string;
  /** Input tokens of this request. */
  tokens: number;
  thresholdPerMin: number;
  /** 1 + allowed growth (1.5 for +50 %). */
  ratio: number;
  /** Window of the meter (one minute: the ceiling is per minute). */
  windowMs: number;
  /** How far back the baseline is taken, whole minutes (the spec's period: 15). At least 3. */
  lagMinutes: number;
}

export interface AdmitPlan {
  /** The buckets (fixed per organization, project and model: callers reuse them). */
  buckets: readonly BucketSpec[];
  /** Units this request takes of each bucket (1 request, n tokens, n images, n audio minutes). */
  costs: number[];
  /** Monthly spend counter and its limit (dollars): refused when spend already reached the limit. */
  quota?: { key: string; limit: number };
  ramp?: RampSpec;
  /** A model's in-flight slots, shared by everyone. */
  concurrency?: { key: string; max: number; leaseId: string; ttlMs: number };
}

export interface BucketState {
  /** Units left after this decision. */
  remaining: number;
  /** Ms until the bucket is full again. */
  resetMs: number;
}

export type Refusal =
  | { kind: 'quota' }
  | { kind: 'bucket'; index: number; retryAfterMs: number; used: number }
  | { kind: 'ramp'; retryAfterMs: number }
  | { kind: 'concurrency' };

export interface Decision {
  ok: boolean;
  /** One per plan bucket: after the charge when admitted, as found (plus refusal charges) when refused. */
  states: BucketState[];
  refusal?: Refusal;
}

/** What a finished request gives back or adds: token reconciliation, its concurrency slot, its spend. */
export interface Settlement {
  buckets: { key: string; hash: string; field: string; limit: number; windowMs: number; delta: number }[];
  concurrency?: { key: string; leaseId: string };
  spend?: { key: string; amount: number; ttlMs: number };
}

/** How a backend is doing, for `/healthz`. */
export interface BackendHealth {
  status: 'ok' | 'down';
  /** Why it is down (the first error of the outage). */
  detail?: string;
  /** Unix seconds (wall clock) since it is down. */
  since?: number;
}

/**
 * The backend cannot decide right now (Redis unreachable, frozen or refusing): the limiter answers by
 * its outage policy instead of a 500. Thrown at once while an outage lasts, without waiting on Redis.
 */
export class BackendUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackendUnavailable';
  }
}

export interface LimiterBackend {
  readonly name: 'memory' | 'redis';
  /** Cheap and synchronous: the state the backend last saw, never a round trip. */
  health(): BackendHealth;
  admit(plan: AdmitPlan): Decision | Promise<Decision>;
  settle(settlement: Settlement): void | Promise<void>;
  /** Current spend of a month key (dollars). */
  spend(key: string): number | Promise<number>;
  /** Forgets every counter (admin reset, tests). */
  reset(): void | Promise<void>;
  close(): void | Promise<void>;
}
