import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freshDatabaseUrl, serve } from '../process.js';
import { freeRecipePorts, nginxBinary, startNginx, type Balancer, type RecipePorts } from './balancer.js';
import { opensslCertificates } from './openssl.js';

/**
 * Issue 37, "stops that drain for real": two instances behind the recipe's nginx (`keepalive 64`), clients
 * on kept-alive connections keep sending reads and writes through it, and one instance is stopped with
 * SIGHUP (the signal the no-systemd recipe must survive as a drain; SIGTERM takes the same path) while it
 * executes runs. No client sees an error, the instance exits 0 logging `instance.stopped`, and its runs
 * are taken over by the other instance at once — the lease here is 30 s, so a run left to lapse would
 * not complete within the test's wait. Figures (stop duration, requests, takeover delays) are printed.
 */
const nginx = nginxBinary();
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;
const redisUrl = process.env.STANDIN_TEST_REDIS_URL;

const ADMIN_KEY = `sk-admin-drain-${randomBytes(12).toString('hex')}`;
const API_KEY = `sk-proj-drain-${randomBytes(12).toString('hex')}`;
const MODEL = `drain-${randomUUID()}`;
const LEASE_MS = 30_000;
const REPLY = 'A slow answer in small pieces, long enough to be cut by a stop and made again elsewhere.';
const terminal = ['completed', 'failed', 'cancelled', 'expired', 'incomplete'];

interface Running {
  child: ChildProcess;
  log: () => string;
}

describe.runIf(nginx && databaseUrl && redisUrl)('a graceful stop behind nginx under load (PostgreSQL, Redis)', () => {
  let dir: string;
  let ports: RecipePorts;
  let balancer: Balancer;
  const instances: Running[] = [];

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'standin-drain-'));
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'etc/tls'), { recursive: true });
    opensslCertificates(join(dir, 'etc/tls'));
    ports = await freeRecipePorts();
    const config = {
      models: { [MODEL]: { provider: 'builtin', chunk_chars: 3, rules: [{ match: 'slow', reply: REPLY, delay: '150ms' }] } },
      rate_limits: { ramp: { enabled: false }, models: { [MODEL]: { tiers: { tier_1: { rpm: 1_000_000, tpm: 1_000_000_000 } } } } },
      organizations: [
        { id: 'org_drain', name: 'Drain', projects: [{ id: 'proj_drain', name: 'Drain', api_keys: [{ name: 'app', value: API_KEY }] }] },
      ],
    };
    writeFileSync(join(dir, 'standin.json'), JSON.stringify(config));
    const url = await freshDatabaseUrl('drain');
    for (let i = 0; i < 2; i++) {
      mkdirSync(join(dir, `var${i}`));
      const child = await serve({
        STANDIN_DATABASE_URL: url,
        STANDIN_REDIS_URL: redisUrl!,
        STANDIN_ADMIN_KEY: ADMIN_KEY,
        STANDIN_CONFIG: join(dir, 'standin.json'),
        STANDIN_DATA: join(dir, `var${i}`),
        STANDIN_PORT: String(ports.instances[i]),
        STANDIN_WIDGET_PORT: String(ports.instancesWidgets[i]),
        STANDIN_TRUST_PROXY: '127.0.0.1',
        STANDIN_LEASE_MS: String(LEASE_MS),
        STANDIN_LOG_LEVEL: 'info',
        STANDIN_LOG_REQUESTS: 'false',
      });
      let out = '';
      for (const s of [child.stdout!, child.stderr!]) s.on('data', (d: Buffer) => (out += d.toString()));
      instances.push({ child, log: () => out });
    }
    balancer = await startNginx(nginx!, ports, join(dir, 'etc'));
  }, 120_000);

  afterAll(async () => {
    await balancer?.stop();
    for (const { child } of instances) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('SIGHUP: no client error, exit 0 with instance.stopped, runs taken over at once', async () => {
    const [a, b] = instances;
    const direct = (i: number) =>
      new OpenAI({
        apiKey: API_KEY,
        baseURL: `http://127.0.0.1:${ports.instances[i]}/v1`,
        maxRetries: 0,
        defaultHeaders: { 'OpenAI-Beta': 'assistants=v2' },
      });
    const assistant = await direct(1).beta.assistants.create({ model: MODEL });
    // Runs executing on B (created there, so B's engine starts them) when it is stopped.
    const runs = await Promise.all(
      Array.from({ length: 6 }, () =>
        direct(1).beta.threads.createAndRun({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'slow' }] } }),
      ),
    );

    // The load: clients on kept-alive connections through nginx, reads and writes, until told to stop.
    let loading = true;
    const counts = { ok: 0, errors: [] as string[] };
    const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', 'openai-beta': 'assistants=v2' };
    const client = async (n: number) => {
      for (let i = 0; loading; i++) {
        const write = (n + i) % 3 === 0;
        try {
          const res = await fetch(`${balancer.url}/v1/${write ? 'threads' : 'models'}`, {
            method: write ? 'POST' : 'GET',
            headers,
            body: write ? JSON.stringify({ metadata: { n: String(n) } }) : undefined,
          });
          const body = await res.text();
          if (res.ok) counts.ok++;
          else counts.errors.push(`${res.status} ${body.slice(0, 200)}`);
        } catch (err) {
          counts.errors.push(String((err as Error).cause ?? err));
        }
      }
    };
    const load = Promise.all(Array.from({ length: 12 }, (_, n) => client(n)));
    await new Promise((r) => setTimeout(r, 1500));

    const signalled = Date.now();
    const exited = new Promise<number | null>((r) => b.child.once('exit', (code) => r(code)));
    b.child.kill('SIGHUP');
    const code = await exited;
    const stopMs = Date.now() - signalled;
    const okAtStop = counts.ok;
    // The load goes on through nginx on A alone for a moment, then ends.
    await new Promise((r) => setTimeout(r, 1000));
    loading = false;
    await load;

    // Every run completes through A, well within one lease.
    const onA = direct(0);
    const ended = await Promise.all(
      runs.map(async (run) => {
        for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
          const r = await onA.beta.threads.runs.retrieve(run.id, { thread_id: run.thread_id });
          if (terminal.includes(r.status)) return r.status;
        }
        return 'not ended';
      }),
    );
    const events = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { event?: string; kind?: string; id?: string; time: number; signal?: string });
    const takeovers = events(a.log()).filter((e) => e.event === 'work.taken_over' && e.kind === 'run');
    const delays = takeovers.map((t) => t.time - signalled).sort((x, y) => x - y);
    console.log(
      `drain figures: SIGHUP→exit ${stopMs} ms; ${okAtStop} requests answered before the exit, ${counts.ok} in all, ` +
        `${counts.errors.length} errors; runs taken over ${takeovers.length}/${runs.length} after ${delays.join(', ')} ms`,
    );

    if (process.env.DRAIN_LOG) console.log(balancer.errors());
    if (process.env.DRAIN_LOG)
      console.log(
        events(b.log())
          .map((e) => `${e.time - signalled} ${JSON.stringify(e)}`)
          .join('\n'),
      );
    expect(counts.errors).toEqual([]);
    expect(code).toBe(0);
    const ofB = events(b.log());
    expect(ofB.find((e) => e.event === 'instance.signal')?.signal).toBe('SIGHUP');
    expect(ofB.some((e) => e.event === 'instance.stopped')).toBe(true);
    expect(b.log()).not.toContain('server is closing');
    expect(ended).toEqual(runs.map(() => 'completed'));
    // Each run B executed is taken over by A and logged as such, each once.
    expect(new Set(takeovers.map((t) => t.id)).size).toBe(takeovers.length);
    expect(takeovers.map((t) => t.id).sort()).toEqual(runs.map((r) => r.id).sort());
    // Both instances answered through nginx before the stop.
    expect(okAtStop).toBeGreaterThan(0);
  }, 120_000);
});
