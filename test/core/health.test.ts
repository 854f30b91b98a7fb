import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dialects, pgSchema, startTestStandin, type TestStandin } from '../helpers.js';
import { until } from '../fleet/instances.js';
import { ensureBuilt, freePort, serve } from '../process.js';

type Ready = { status: string; checks: { name: string; ok: boolean; reason?: string }[] };
const check = (body: Ready, name: string) => body.checks.find((c) => c.name === name);

describe.each(dialects())('liveness and readiness (%s)', (dialect) => {
  it('/livez and /readyz answer without a credential, and ready names every check', async () => {
    const s = await startTestStandin({ dialect });
    try {
      expect(await s.req('GET', '/livez')).toMatchObject({ status: 200, body: { status: 'ok' } });
      const ready = await s.req('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.status).toBe('ready');
      expect(ready.body.checks.map((c: { name: string }) => c.name)).toEqual(expect.arrayContaining(['shutdown', 'store', 'ratelimit']));
      expect(ready.body.checks.every((c: { ok: boolean }) => c.ok)).toBe(true);
      // The compatible /healthz is unchanged.
      expect((await s.req('GET', '/healthz')).body).toEqual({ status: 'ok' });
    } finally {
      await s.close();
    }
  });

  it('Redis down while failing closed: 503 with the reason; failing open: ready, the outage reported', async () => {
    const redisUrl = `redis://127.0.0.1:${await freePort()}`;
    const closed = await startTestStandin({ dialect, settings: { redisUrl, rateLimitOutage: 'closed' } });
    const open = await startTestStandin({ dialect, settings: { redisUrl, rateLimitOutage: 'open' } });
    try {
      // The limiter learns of the outage from its first attempt to reach Redis.
      const probe = (s: TestStandin) => s.req('GET', '/v1/models', { key: 'platform' });
      await until(async () => (await probe(closed), (await closed.req('GET', '/readyz')).status === 503), 10_000);
      const r = await closed.req('GET', '/readyz');
      expect(r.body.status).toBe('not_ready');
      expect(check(r.body, 'ratelimit')).toMatchObject({ ok: false, reason: expect.stringContaining('Redis') });
      expect(check(r.body, 'store')).toEqual({ name: 'store', ok: true });

      await until(
        async () => (await probe(open), check((await open.req('GET', '/readyz')).body, 'ratelimit')?.reason !== undefined),
        10_000,
      );
      const o = await open.req('GET', '/readyz');
      expect(o.status).toBe(200);
      expect(check(o.body, 'ratelimit')).toMatchObject({ ok: true, reason: expect.stringContaining('not required') });
      // Liveness never depends on a backend.
      expect((await closed.req('GET', '/livez')).status).toBe(200);
    } finally {
      await closed.close();
      await open.close();
    }
  }, 30_000);
});

/** A TCP relay to the test PostgreSQL that the test can cut: the database becomes unreachable for one instance only. */
async function relay(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no relay port');
  return {
    port: address.port,
    cut() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('readiness while PostgreSQL is unreachable', () => {
  it('503 naming the store, liveness still 200', async () => {
    const url = new URL((await pgSchema()).url);
    const r = await relay({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(r.port);
    const s = await startTestStandin({ settings: { databaseUrl: url.toString() } });
    try {
      expect((await s.req('GET', '/readyz')).status).toBe(200);
      r.cut();
      const res = await s.req('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(check(res.body, 'store')).toMatchObject({ ok: false, reason: expect.stringContaining('postgres unreachable') });
      expect((await s.req('GET', '/livez')).status).toBe(200);
    } finally {
      await s.close().catch(() => {});
    }
  }, 30_000);
});

describe('shutdown drains (real process)', () => {
  const ADMIN = 'sk-admin-health-test-key-000000000000000';
  const dir = mkdtempSync(join(tmpdir(), 'standin-health-'));
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('on SIGTERM: readiness fails at once, new connections are refused, kept-alive ones close after their response, an in-flight request completes', async () => {
    ensureBuilt();
    const port = await freePort();
    child = await serve({ STANDIN_DATA: dir, STANDIN_ADMIN_KEY: ADMIN, STANDIN_LOG_LEVEL: 'info', STANDIN_PORT: String(port) });
    let log = '';
    child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    const base = `http://127.0.0.1:${port}`;
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    // One kept-alive connection, as a balancer's pool holds: idle when the signal comes.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const probe = () =>
      new Promise<{ status: number; connection?: string; body: string }>((resolve, reject) =>
        httpGet(`${base}/readyz`, { agent }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
        }).on('error', reject),
      );
    expect((await probe()).status).toBe(200);
    // A slow request: a latency-only fault on an unauthenticated route holds it for 2 s.
    const fault = await fetch(`${base}/admin/v1/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: '/openapi.json', latency_ms: 2000, count: 1 }),
    });
    expect(fault.status).toBe(201);
    const slow = fetch(`${base}/openapi.json`);
    // The slow request is in flight before the signal.
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGTERM');
    await until(async () => log.includes('"event":"instance.draining"'), 5_000);
    // The kept-alive connection still answers: readiness fails, and the connection closes after it.
    const ready = await probe();
    expect(ready.status).toBe(503);
    expect(ready.connection).toBe('close');
    expect(check(JSON.parse(ready.body) as Ready, 'shutdown')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('shutting down'),
    });
    // A new connection is refused: a balancer sends it elsewhere, the request never sent.
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve('accepted')));
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    expect(child.exitCode).toBeNull();
    const res = await slow;
    expect(res.status).toBe(200);
    expect(res.headers.get('connection')).toBe('close');
    expect(((await res.json()) as { openapi: string }).openapi).toBeTruthy();
    expect(await exited).toBe(0);
    expect(log).toContain('"event":"instance.stopped"');
    agent.destroy();
  }, 60_000);
});
