import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { ApiError } from '../../src/core/errors.js';
import { defaultConfig, mergeConfig } from '../../src/ratelimit/catalog.js';
import { createRedisBackend } from '../../src/ratelimit/redis.js';
import { createRateLimiter } from '../../src/ratelimit/service.js';
import { fixedClock } from '../../src/ratelimit/testing.js';
import { modules } from '../../src/server/modules.js';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { freePort } from '../process.js';
import { probeModule } from './probe.js';

/**
 * The rate limiter when Redis goes away: a Redis of this suite's own (another loopback port), frozen with
 * SIGSTOP and killed outright, while Standin keeps answering. Every wait is bounded by `within`, which
 * fails the test instead of hanging it; the Redis is killed in afterAll (and on exit).
 */
const haveRedis = spawnSync('redis-server', ['--version']).status === 0;

/** Fails (instead of hanging) when `p` has not settled within `ms`: a liveness bound, not a timing assertion. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Polls `check` until it is true, at most `ms`. */
async function until(check: () => Promise<boolean> | boolean, ms: number, what: string) {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ping = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.setTimeout(500, () => (s.destroy(), resolve(false)));
    s.on('error', () => resolve(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => (s.destroy(), resolve(d.toString().startsWith('+PONG'))));
  });

/** A redis-server of the suite's own on `port`: start, freeze (SIGSTOP), thaw (SIGCONT), kill. */
function ownRedis(port: number) {
  let child: ChildProcess | undefined;
  const kill = () => child?.kill('SIGKILL');
  process.once('exit', kill);
  return {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      await until(() => ping(port), 10_000, 'redis-server start');
    },
    freeze: () => child!.kill('SIGSTOP'),
    thaw: () => child!.kill('SIGCONT'),
    async kill() {
      const c = child!;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    },
    close: kill,
  };
}

describe.runIf(haveRedis)('Redis outages', () => {
  let redis: ReturnType<typeof ownRedis>;
  const standins: TestStandin[] = [];
  const all = [...modules, probeModule];

  beforeAll(async () => {
    redis = ownRedis(await freePort());
    await redis.start();
  });
  afterEach(() => {
    // Whatever a test left behind, the next one starts with a running Redis.
    redis.thaw();
  });
  afterAll(async () => {
    for (const s of standins) await s.close();
    redis?.close();
  });

  async function standin(rateLimitOutage: 'open' | 'closed') {
    const s = await startTestStandin({ modules: all, settings: { redisUrl: redis.url, rateLimitOutage } });
    standins.push(s);
    const model = `m-${randomUUID()}`;
    await applyConfig(s.ctx, all, {
      rate_limits: { replace_defaults: true, ramp: { enabled: false }, models: { [model]: { tiers: { tier_1: { rpm: 1_000_000 } } } } },
    });
    const probe = () => within(s.req('POST', '/v1/probe', { key: 'platform', body: { model } }), 10_000, 'a request while Redis is out');
    return { s, probe };
  }

  it('fail closed (default): the platform 503 at once while Redis is frozen or gone, /healthz degraded, back when Redis is', async () => {
    const { s, probe } = await standin('closed');
    expect((await probe()).status).toBe(200);
    expect((await s.req('GET', '/healthz')).body).toEqual({ status: 'ok' });

    redis.freeze();
    for (let i = 0; i < 3; i++) {
      const r = await probe();
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({ type: 'service_unavailable_error', code: 'server_is_overloaded', param: null });
      expect([r.headers['retry-after'], r.headers['retry-after-ms']]).toEqual(['1', '1000']);
    }
    // Only the rate-limited routes answer 503 (docs/rate-limits.md): a route that takes no limit is served.
    expect((await within(s.req('GET', '/v1/models', { key: 'platform' }), 10_000, 'an unlimited route')).status).toBe(200);
    const health = await s.req('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'degraded',
      checks: { ratelimit: { status: 'down', detail: expect.stringContaining('Redis') } },
    });
    // The control plane's Redis reads answer too (503, not a hang or a 500).
    expect(
      (await within(s.req('GET', '/admin/v1/rate_limits/organizations/org_demo', { key: 'admin' }), 10_000, 'admin read')).status,
    ).toBe(503);

    redis.thaw();
    await until(async () => (await probe()).status === 200, 5_000, 'recovery after SIGCONT');
    expect((await s.req('GET', '/healthz')).body).toEqual({ status: 'ok' });

    await redis.kill();
    expect((await probe()).status).toBe(503);
    expect((await s.req('GET', '/healthz')).body.status).toBe('degraded');
    await redis.start();
    await until(async () => (await probe()).status === 200, 5_000, 'recovery after a restart');
  });

  it('fail open: admitted uncounted (no x-ratelimit-* headers) while Redis is out', async () => {
    const { s, probe } = await standin('open');
    const before = await probe();
    expect(before.headers['x-ratelimit-limit-requests']).toBe('1000000');
    redis.freeze();
    for (let i = 0; i < 3; i++) {
      const r = await probe();
      expect(r.status).toBe(200);
      expect(r.headers['x-ratelimit-limit-requests']).toBeUndefined();
    }
    expect((await s.req('GET', '/healthz')).body.status).toBe('degraded');
    redis.thaw();
    await until(async () => (await probe()).headers['x-ratelimit-limit-requests'] === '1000000', 5_000, 'recovery after SIGCONT');
  });

  it('logs one line when an outage starts and one when it ends, whatever the number of requests', async () => {
    const lines: string[] = [];
    const log = {
      error: (_o: unknown, msg?: string) => void lines.push(`error ${msg}`),
      warn: (_o: unknown, msg?: string) => void lines.push(`warn ${msg}`),
    };
    const consoleError = vi.spyOn(console, 'error');
    const backend = createRedisBackend(redis.url, { prefix: `standin-test:${randomUUID()}:`, log });
    const limiter = createRateLimiter({
      backend,
      clock: fixedClock(),
      config: mergeConfig(defaultConfig(), {
        replace_defaults: true,
        ramp: { enabled: false },
        models: { m: { tiers: { tier_1: { rpm: 1_000_000 } } } },
      }),
    });
    const payer = { organizationId: 'org_a', projectId: 'proj_a' };
    const outcome = (p: Promise<unknown>) =>
      within(
        p.then(
          () => 'ok',
          (e) => (e instanceof ApiError ? `${e.status}` : `thrown ${e}`),
        ),
        10_000,
        'an admission while Redis is out',
      );
    try {
      expect(await outcome(limiter.admit(null, payer, { model: 'm' }))).toBe('ok');
      for (const [stop, start] of [
        [() => redis.freeze(), async () => redis.thaw()],
        [() => redis.kill(), () => redis.start()],
      ] as const) {
        await stop();
        const results = [];
        for (let i = 0; i < 20; i++) results.push(await outcome(limiter.admit(null, payer, { model: 'm' })));
        results.push(...(await Promise.all(Array.from({ length: 50 }, () => outcome(limiter.admit(null, payer, { model: 'm' }))))));
        expect(new Set(results)).toEqual(new Set(['503']));
        await start();
        await until(async () => (await outcome(limiter.admit(null, payer, { model: 'm' }))) === 'ok', 5_000, 'recovery');
      }
      expect(lines.map((l) => l.split(' ')[0])).toEqual(['error', 'warn', 'error', 'warn']);
      expect(lines[0]).toMatch(/unreachable/);
      expect(lines[1]).toMatch(/is back after/);
      expect(consoleError.mock.calls.filter((c) => String(c[0]).includes('Unhandled error event'))).toEqual([]);
    } finally {
      consoleError.mockRestore();
      await backend.close();
    }
  });
});
