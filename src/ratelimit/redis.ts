import type { Redis } from 'ioredis';
import { lazy } from '../store/lazy.js';

const ioredis = lazy<typeof import('ioredis')>('ioredis');
import {
  BackendUnavailable,
  type AdmitPlan,
  type BucketState,
  type Decision,
  type LimiterBackend,
  type Refusal,
  type Settlement,
} from './interface.js';
import { EPOCH_BASE } from './gcra.js';

/**
 * One script decides a batch of requests, each one atomically and all or nothing: every bucket, the
 * monthly quota, the model's concurrency slots and the ramp detector, on Redis `TIME` (one clock for
 * every Standin instance — so the control plane's moved clock does not move Redis-backed counters).
 * Decisions of one batch run one after another inside the script, so a batch is exactly the same as
 * sending them one by one; it only saves round trips and script calls. Mirrors memory.ts and gcra.ts.
 *
 * State: one string key per owner and model (`<owner>:<limit key>`) holding a MessagePack map — each
 * bucket's arrival time under its metric's name, the organization's ramp state (rt, rl, u<j>, s<j>) and
 * x, the key's expiry. Binary doubles: no number is ever formatted or parsed, and one GET and one SET
 * (with its expiry) are all a decision costs per key.
 */
const STATE = `
local t = redis.call('TIME')
local now = (tonumber(t[1]) - ${EPOCH_BASE / 1000}) * 1000 + tonumber(t[2]) / 1000
local states, needs = {}, {}
local function load(key)
  local st = states[key]
  if st == nil then
    local raw = redis.call('GET', key)
    st = raw and cmsgpack.unpack(raw) or {}
    states[key] = st
  end
  return st
end
-- Marks a key written, needing to live at least \`ms\` more.
local function touch(key, ms)
  if needs[key] == nil or ms > needs[key] then needs[key] = ms end
end
-- The key's expiry (x) moves only when a field needs longer, and then 10 minutes beyond: an idle key
-- vanishes at most 10 minutes late.
local function flush()
  for key, ms in pairs(needs) do
    local st = states[key]
    local need = now + ms + 1000
    if st.x == nil or need > st.x then st.x = need + 600000 end
    redis.call('SET', key, cmsgpack.pack(st), 'PX', math.ceil(st.x - now))
  end
  needs = {}
end
`;

const ADMIT = `${STATE}
-- Ramp field names, made once per call and only those used.
local U = setmetatable({}, {__index = function(tb, j) local v = 'u' .. j; rawset(tb, j, v); return v end})
local S = setmetatable({}, {__index = function(tb, j) local v = 's' .. j; rawset(tb, j, v); return v end})
-- P: {k = state key count, n = key count, b = {{key index, metric, limit, window, cost, charge on refusal}, ...},
--     q = quota limit, c = {max, lease id, ttl}, r = {key index, tokens, threshold, ratio, window, lag}}
local function decide(P, kb)
  local B = P.b
  local nb = #B
  local tat, st = {}, {}
  for i = 1, nb do
    st[i] = load(KEYS[kb + B[i][1]])
    tat[i] = st[i][B[i][2]]
  end
  local k = kb + P.k + 1
  local function state(out, x, i)
    local lim, win = B[i][3], B[i][4]
    if x == nil or x <= now then
      out[#out + 1] = lim; out[#out + 1] = 0
      return lim
    end
    local busy = x - now
    local rem = math.floor((win - busy) * lim / win + 1e-6)
    if rem < 0 then rem = 0 end
    if rem > lim then rem = lim end
    out[#out + 1] = rem; out[#out + 1] = math.ceil(busy - 1e-9)
    return rem
  end
  local function refuse(kind, index, retry, used)
    local out = {0, kind, index, 0, used}
    for i = 1, nb do
      local x = tat[i]
      local b = B[i]
      if b[6] == 1 then
        local base = x
        if base == nil or base < now then base = now end
        x = math.min(base + b[5] * b[4] / b[3], now + 2 * b[4])
        if kind == 2 and index == i - 1 then retry = x + b[5] * b[4] / b[3] - b[4] - now end
        st[i][b[2]] = x
        touch(KEYS[kb + b[1]], x - now)
      end
      state(out, x, i)
    end
    flush()
    out[4] = math.ceil(retry - 1e-9)
    return out
  end
  if P.q then
    local spent = tonumber(redis.call('GET', KEYS[k]) or '0')
    k = k + 1
    if spent >= P.q then return refuse(1, 0, 0, 0) end
  end
  local nxt = {}
  for i = 1, nb do
    local b = B[i]
    local base = tat[i]
    if base == nil or base < now then base = now end
    nxt[i] = base + b[5] * b[4] / b[3]
    if nxt[i] - now > b[4] + 1e-6 then
      local used = b[3] - state({}, tat[i], i)
      return refuse(2, i - 1, nxt[i] - b[4] - now, used)
    end
  end
  local C, ck = P.c, nil
  if C then
    ck = KEYS[k]; k = k + 1
    redis.call('ZREMRANGEBYSCORE', ck, '-inf', now)
    if redis.call('ZCARD', ck) >= C[1] then return refuse(4, 0, 0, 0) end
  end
  local R = P.r
  if R then
    local rkey = KEYS[kb + R[1]]
    local rs = load(rkey)
    local tokens, threshold, ratio, rwin, lag = R[2], R[3], R[4], R[5], R[6]
    -- 5-minute slots: the baseline window (the five minutes centred lag minutes ago) falls in slots a and a + 1.
    local size = math.floor((lag + 2) / 5) + 3
    local m = math.floor(now / 60000)
    local start = m - lag - 2
    local a = math.floor(start / 5)
    local o = start - a * 5
    local sa, sb = 0, 0
    if rs[U[a % size]] == a then sa = rs[S[a % size]] end
    if rs[U[(a + 1) % size]] == a + 1 then sb = rs[S[(a + 1) % size]] end
    local ceiling = math.max(threshold, ratio * (sa * (5 - o) / 5 + sb * o / 5) / 5)
    local level = 0
    if rs.rt then
      local dt = now - rs.rt
      if dt < 0 then dt = 0 end
      level = rs.rl - ceiling * dt / rwin
      if level < 0 then level = 0 end
    end
    local over = level + tokens - ceiling
    if over > 1e-6 then
      return refuse(3, 0, math.min(60000, over * rwin / ceiling), 0)
    end
    local u = math.floor(m / 5)
    local j = u % size
    if rs[U[j]] ~= u then rs[U[j]] = u; rs[S[j]] = 0 end
    rs[S[j]] = rs[S[j]] + tokens
    rs.rt = now
    rs.rl = level + tokens
    touch(rkey, (lag + 5) * 60000)
  end
  if C then
    redis.call('ZADD', ck, now + C[3], C[2])
    redis.call('PEXPIRE', ck, C[3] + 1000)
  end
  local out = {1, 0, 0, 0, 0}
  for i = 1, nb do
    local b = B[i]
    st[i][b[2]] = nxt[i]
    touch(KEYS[kb + b[1]], nxt[i] - now)
    state(out, nxt[i], i)
  end
  flush()
  return out
end
-- ARGV[1]: the batch as JSON (one plan after another); KEYS: each plan's keys in turn.
local reply = {}
local kb = 0
for _, P in ipairs(cjson.decode(ARGV[1])) do
  local out = decide(P, kb)
  reply[#reply + 1] = #out
  for i = 1, #out do reply[#reply + 1] = out[i] end
  kb = kb + P.n
end
return reply
`;

/**
 * Reconciles token buckets, frees concurrency slots and adds spend, for a batch of finished requests.
 * ARGV[1]: JSON list of {n = key count, b = {{key index, metric, limit, window, delta}}, c = lease id, s = {amount, ttl}};
 * KEYS: each settlement's state keys, then its concurrency key (with c), then its spend key (with s).
 */
const SETTLE = `${STATE}
local kb = 0
for _, P in ipairs(cjson.decode(ARGV[1])) do
  for _, b in ipairs(P.b) do
    local key = KEYS[kb + b[1]]
    local st = load(key)
    local x = st[b[2]]
    if x == nil or x < now then x = now end
    x = x + b[5] * b[4] / b[3]
    if x <= now then st[b[2]] = nil else st[b[2]] = x end
    touch(key, x - now)
  end
  local k = kb + #P.b + 1
  if P.c then
    redis.call('ZREM', KEYS[k], P.c); k = k + 1
  end
  if P.s then
    redis.call('INCRBYFLOAT', KEYS[k], P.s[1])
    redis.call('PEXPIRE', KEYS[k], P.s[2])
  end
  kb = kb + P.n
end
flush()
return 1
`;

const KINDS: Refusal['kind'][] = ['quota', 'quota', 'bucket', 'ramp', 'concurrency'];
/** Decisions sent in one script call at most. */
const MAX_BATCH = 64;

type Scripted = Redis & {
  rlAdmit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  rlSettle(numKeys: number, ...args: (string | number)[]): Promise<number>;
};

interface Waiting {
  keys: string[];
  plan: Encoded;
  resolve(d: Decision): void;
  reject(e: unknown): void;
}

interface Encoded {
  k: number;
  n: number;
  b: (string | number)[][];
  q?: number;
  c?: [number, string, number];
  r?: number[];
}

/** One plan as the script reads it: its keys (hashes deduplicated; the ramp lives in the organization's hash), and a JSON-able plan. */
function encode(plan: AdmitPlan, prefix: string): { keys: string[]; plan: Encoded } {
  const keys: string[] = [];
  const slot = (hash: string) => {
    const full = prefix + hash;
    const i = keys.indexOf(full);
    if (i >= 0) return i + 1;
    keys.push(full);
    return keys.length;
  };
  const b: (string | number)[][] = new Array(plan.buckets.length);
  for (let i = 0; i < plan.buckets.length; i++) {
    const x = plan.buckets[i];
    b[i] = [slot(x.hash), x.field, x.limit, x.windowMs, plan.costs[i], x.chargeOnRefusal ? 1 : 0];
  }
  const out: Encoded = { k: 0, n: 0, b };
  if (plan.ramp) {
    const r = plan.ramp;
    out.r = [slot(r.key), r.tokens, r.thresholdPerMin, r.ratio, r.windowMs, r.lagMinutes];
  }
  out.k = keys.length;
  if (plan.quota) {
    keys.push(prefix + plan.quota.key);
    out.q = plan.quota.limit;
  }
  if (plan.concurrency) {
    const c = plan.concurrency;
    keys.push(prefix + c.key);
    out.c = [c.max, c.leaseId, c.ttlMs];
  }
  out.n = keys.length;
  return { keys, plan: out };
}

function decode(out: number[], at: number): Decision {
  const states: BucketState[] = [];
  const end = at + 1 + out[at];
  for (let i = at + 6; i < end; i += 2) states.push({ remaining: out[i], resetMs: out[i + 1] });
  if (out[at + 1] === 1) return { ok: true, states };
  const kind = KINDS[out[at + 2]];
  const refusal: Refusal =
    kind === 'bucket'
      ? { kind, index: out[at + 3], retryAfterMs: out[at + 4], used: out[at + 5] }
      : kind === 'ramp'
        ? { kind, retryAfterMs: out[at + 4] }
        : { kind };
  return { ok: false, states, refusal };
}

/** How long one Redis command may take before Redis counts as unreachable (a frozen or stalled server). */
export const COMMAND_TIMEOUT_MS = 1_000;
/** While Redis is unreachable, how often it is probed (one PING in flight at a time). */
const PROBE_EVERY_MS = 250;
/** How often the command watchdog looks for overdue commands. */
const WATCH_EVERY_MS = 100;

/** Errors that mean Redis answered: a bug or a bad request, not an outage (these propagate as they are). */
const answered = (err: unknown) =>
  err instanceof Error && err.name === 'ReplyError' && !/^(LOADING|BUSY|MASTERDOWN|TRYAGAIN)\b/.test(err.message);

export interface RedisBackendOptions {
  /** Key prefix (tests and benchmarks isolate runs with it). */
  prefix?: string;
  /** Where the one line per outage (and the one when it ends) goes; silent without. */
  log?: { error(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void };
  commandTimeoutMs?: number;
}

/**
 * The Redis backend: counters shared by every instance pointing at one Redis. Decisions requested in
 * the same event-loop turn go to Redis together, in one script call; a batch goes out as soon as it is
 * full (MAX_BATCH), so Redis decides it while this process prepares the next.
 *
 * Outages are bounded: every command gives up after `COMMAND_TIMEOUT_MS` (a frozen Redis), a dropped
 * connection fails what was in flight at once, and the first failure marks Redis down. While it is down,
 * nothing is sent or queued: `admit` throws `BackendUnavailable` at once (the limiter answers by its
 * outage policy), settlements are dropped (their counters are best effort), and a PING every 250 ms
 * (one at a time) notices the recovery, as does a reconnect every ≤ 500 ms. One log line when an outage
 * starts and one when it ends.
 */
export function createRedisBackend(url: string, opts: RedisBackendOptions = {}): LimiterBackend & { redis: Redis } {
  const prefix = opts.prefix ?? 'standin:rl:';
  const redis = new (ioredis().Redis)(url, {
    enableAutoPipelining: false,
    lazyConnect: false,
    // A dropped connection fails its commands at once instead of holding them for a later reconnect.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // Reconnect quickly and forever: back within a second of Redis.
    retryStrategy: (times: number) => Math.min(times * 50, 500),
  }) as Scripted;
  redis.defineCommand('rlAdmit', { lua: ADMIT });
  redis.defineCommand('rlSettle', { lua: SETTLE });

  // Bounded waits: a watchdog fails every command (also one queued before the first connection) that has
  // no answer after the timeout. Not ioredis' commandTimeout: its timers fire before the replies that
  // arrived while the event loop was busy are read, so a stalled process would declare a healthy Redis down.
  // The watchdog skips a round that comes late (the loop was stalled) and judges once replies were read.
  const timeoutMs = opts.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
  const waiting = new Set<{ at: number; fail(err: Error): void }>();
  let lastWatch = performance.now();
  const watchdog = setInterval(() => {
    const now = performance.now();
    const late = now - lastWatch > 2 * WATCH_EVERY_MS;
    lastWatch = now;
    if (late) return;
    for (const w of waiting) {
      if (now - w.at < timeoutMs) continue;
      waiting.delete(w);
      w.fail(new Error(`no answer from Redis within ${timeoutMs} ms`));
    }
  }, WATCH_EVERY_MS);
  watchdog.unref();
  function bounded<T>(pending: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const w = { at: performance.now(), fail: reject };
      waiting.add(w);
      pending.then(
        (v) => {
          waiting.delete(w);
          resolve(v);
        },
        (err) => {
          waiting.delete(w);
          reject(err);
        },
      );
    });
  }

  // The outage state. `down` is read on every decision; everything else only when it changes.
  let down = false;
  let downSince = 0;
  let downReason = '';
  let refused = 0;
  let dropped = 0;
  let closing = false;
  let probing = false;
  let probeTimer: NodeJS.Timeout | undefined;

  function markDown(err: unknown) {
    if (down || closing) return;
    down = true;
    downSince = performance.now();
    downReason = (err as Error)?.message ?? String(err);
    refused = 0;
    dropped = 0;
    opts.log?.error(
      { event: 'redis.down', backend: 'redis', err: downReason },
      'rate-limit backend (Redis) unreachable; deciding by the outage policy until it is back',
    );
    probeTimer = setInterval(probe, PROBE_EVERY_MS);
    probeTimer.unref();
  }

  function markUp() {
    if (!down) return;
    down = false;
    clearInterval(probeTimer);
    probeTimer = undefined;
    const seconds = Math.round((performance.now() - downSince) / 100) / 10;
    opts.log?.warn(
      { event: 'redis.up', backend: 'redis', down_seconds: seconds, requests_decided_by_policy: refused, settlements_dropped: dropped },
      `rate-limit backend (Redis) is back after ${seconds} s`,
    );
  }

  function probe() {
    if (probing || redis.status !== 'ready') return;
    probing = true;
    bounded(redis.ping())
      .then(markUp, () => {})
      .finally(() => (probing = false));
  }

  /** A command failed: an outage unless Redis itself answered with an error. */
  function failed(err: unknown): unknown {
    if (answered(err)) return err;
    markDown(err);
    return new BackendUnavailable(`Redis is unreachable: ${(err as Error)?.message ?? err}`);
  }

  // Connection errors arrive as events: handled here (no "Unhandled error event"), and logged once per outage.
  redis.on('error', markDown);
  redis.on('close', () => markDown(new Error('connection closed')));
  redis.on('ready', markUp);

  const unavailable = () => {
    refused++;
    return new BackendUnavailable(`Redis is unreachable: ${downReason}`);
  };

  let queue: Waiting[] = [];
  let scheduled = false;
  type Settling = { keys: string[]; plan: object; resolve(): void; reject(e: unknown): void };
  let settling: Settling[] = [];
  let settleScheduled = false;

  function flushSettlements() {
    settleScheduled = false;
    const all = settling;
    settling = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) {
      const batch = all.slice(i, i + MAX_BATCH);
      if (down) {
        dropped += batch.length;
        batch.forEach((w) => w.resolve());
        continue;
      }
      const keys = batch.flatMap((w) => w.keys);
      bounded(redis.rlSettle(keys.length, ...keys, JSON.stringify(batch.map((w) => w.plan)))).then(
        () => batch.forEach((w) => w.resolve()),
        (err) => {
          const e = failed(err);
          // Lost to an outage: released counters are best effort (docs/rate-limits.md, outages).
          if (e instanceof BackendUnavailable) {
            dropped += batch.length;
            batch.forEach((w) => w.resolve());
          } else batch.forEach((w) => w.reject(e));
        },
      );
    }
  }

  function send(batch: Waiting[]) {
    if (down) {
      for (const w of batch) w.reject(unavailable());
      return;
    }
    const keys: string[] = [];
    const plans: Encoded[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) {
      for (const k of batch[i].keys) keys.push(k);
      plans[i] = batch[i].plan;
    }
    bounded(redis.rlAdmit(keys.length, ...keys, JSON.stringify(plans))).then(
      (out) => {
        let at = 0;
        for (const w of batch) {
          w.resolve(decode(out, at));
          at += 1 + out[at];
        }
      },
      (err) => {
        const e = failed(err);
        if (e instanceof BackendUnavailable) refused += batch.length;
        for (const w of batch) w.reject(e);
      },
    );
  }

  function flush() {
    scheduled = false;
    const all = queue;
    queue = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) send(all.slice(i, i + MAX_BATCH));
  }

  /** A plain command under the outage rules. */
  async function command<T>(run: () => Promise<T>): Promise<T> {
    if (down) throw unavailable();
    try {
      return await bounded(run());
    } catch (err) {
      throw failed(err);
    }
  }

  return {
    name: 'redis',
    redis,
    health() {
      if (!down) return { status: 'ok' };
      return { status: 'down', detail: `Redis unreachable for ${Math.round((performance.now() - downSince) / 1000)} s: ${downReason}` };
    },
    admit(plan: AdmitPlan): Promise<Decision> {
      // During an outage nothing is sent or queued: the answer is immediate.
      if (down) return Promise.reject(unavailable());
      const { keys, plan: encoded } = encode(plan, prefix);
      return new Promise<Decision>((resolve, reject) => {
        queue.push({ keys, plan: encoded, resolve, reject });
        // A full batch goes out at once, so Redis works on it while this process prepares the next.
        if (queue.length >= MAX_BATCH) {
          send(queue);
          queue = [];
        } else if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    settle(s: Settlement): Promise<void> {
      const keys: string[] = [];
      const b: (string | number)[][] = [];
      for (const x of s.buckets) {
        if (x.delta === 0) continue;
        keys.push(prefix + x.hash);
        b.push([keys.length, x.field, x.limit, x.windowMs, x.delta]);
      }
      const plan: { n: number; b: (string | number)[][]; c?: string; s?: [string, number] } = { n: 0, b };
      if (s.concurrency) {
        keys.push(prefix + s.concurrency.key);
        plan.c = s.concurrency.leaseId;
      }
      if (s.spend && s.spend.amount > 0) {
        keys.push(prefix + s.spend.key);
        plan.s = [s.spend.amount.toFixed(9), Math.ceil(s.spend.ttlMs)];
      }
      if (keys.length === 0) return Promise.resolve();
      plan.n = keys.length;
      return new Promise<void>((resolve, reject) => {
        settling.push({ keys, plan, resolve, reject });
        if (!settleScheduled) {
          settleScheduled = true;
          setImmediate(flushSettlements);
        }
      });
    },
    spend(key) {
      return command(async () => Number((await redis.get(prefix + key)) ?? 0));
    },
    reset() {
      return command(async () => {
        let cursor = '0';
        do {
          const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = next;
          if (found.length) await redis.del(...found);
        } while (cursor !== '0');
      });
    },
    async close() {
      closing = true;
      clearInterval(probeTimer);
      // QUIT waits for an answer a frozen Redis never gives: bounded by the command timeout, then dropped.
      await bounded(redis.quit()).catch(() => {});
      clearInterval(watchdog);
      redis.disconnect();
    },
  };
}
