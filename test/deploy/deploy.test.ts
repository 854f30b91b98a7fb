import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freePort, freshDatabaseUrl, serve } from '../process.js';
import { startReceiver } from '../webhooks/receiver.js';
import { nginxBinary, startNginx, type Balancer } from './balancer.js';

/**
 * The deployment of docs/deploy.md, as it runs: two `standin serve` processes on one PostgreSQL schema and
 * one Redis, nginx in front of them with the recipe's configuration (examples/deploy/nginx.conf), and the
 * openai SDK talking to nginx only. No sticky sessions: nginx sends requests round robin, and says which
 * instance answered (`X-Standin-Upstream`).
 */
const nginx = nginxBinary();
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;
const redisUrl = process.env.STANDIN_TEST_REDIS_URL;
if (!nginx) console.warn('test/deploy skipped: nginx is not installed (apt-get install -y nginx; CI installs it)');

const ADMIN_KEY = `sk-admin-deploy-${randomBytes(12).toString('hex')}`;
const API_KEY = `sk-proj-deploy-${randomBytes(12).toString('hex')}`;
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
// Model names of this run's own: rate-limit counters in the shared Redis are kept per model.
const MODEL = `deploy-${randomUUID()}`;
const LIMITED = `deploy-limited-${randomUUID()}`;
const DAILY_LIMIT = 6;

describe.runIf(nginx && databaseUrl && redisUrl)('two instances, PostgreSQL, Redis and nginx', () => {
  const instances: ChildProcess[] = [];
  const ports: number[] = [];
  let balancer: Balancer;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let client: OpenAI;
  let dir: string;

  beforeAll(async () => {
    ensureBuilt();
    rx = await startReceiver();
    dir = mkdtempSync(join(tmpdir(), 'standin-deploy-'));
    // The recipe's config file: one organization and project with a fixed key, a webhook endpoint, the
    // models, and the rate limits every instance applies alike.
    const config = {
      admin_key: ADMIN_KEY,
      models: { 'deploy-*': { provider: 'builtin' } },
      rate_limits: {
        ramp: { enabled: false },
        models: {
          [MODEL]: { tiers: { tier_1: { rpm: 100_000, tpm: 100_000_000 } } },
          [LIMITED]: { tiers: { tier_1: { rpd: DAILY_LIMIT, tpd: 100_000_000 } } },
        },
      },
      organizations: [
        {
          id: 'org_deploy',
          name: 'Deploy',
          projects: [
            {
              id: 'proj_deploy',
              name: 'Deploy',
              api_keys: [{ name: 'app', value: API_KEY }],
              webhooks: [{ name: 'receiver', url: rx.url, event_types: ['response.completed'], secret: SECRET }],
            },
          ],
        },
      ],
    };
    writeFileSync(join(dir, 'standin.json'), JSON.stringify(config));
    const database = await freshDatabaseUrl('deploy');
    for (let i = 0; i < 2; i++) {
      ports.push(await freePort());
      const env = {
        STANDIN_HOST: '127.0.0.1',
        STANDIN_PORT: String(ports[i]),
        STANDIN_DATABASE_URL: database,
        STANDIN_REDIS_URL: redisUrl!,
        STANDIN_CONFIG: join(dir, 'standin.json'),
        STANDIN_DATA: join(dir, `data-${i}`),
        STANDIN_OUTBOUND_ALLOW: '127.0.0.1',
        STANDIN_LOG_LEVEL: 'warn',
      };
      // One after the other: the first start migrates the schema (a second would wait on the migration lock).
      instances.push(await serve(env));
    }
    balancer = await startNginx(nginx!, await freePort(), ports);
    client = new OpenAI({
      apiKey: API_KEY,
      baseURL: `${balancer.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'OpenAI-Beta': 'assistants=v2' },
    });
  }, 120_000);

  afterAll(async () => {
    await balancer?.stop();
    for (const child of instances) {
      if (child.exitCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await rx?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A request through nginx; returns the status, the JSON body and which instance answered. */
  const through = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${balancer.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...init.headers },
    });
    return { status: res.status, body: await res.json(), upstream: res.headers.get('x-standin-upstream') };
  };

  it('nginx spreads requests over both instances', async () => {
    const seen = new Set<string | null>();
    for (let i = 0; i < 6; i++) {
      const r = await through('/v1/models');
      expect(r.status).toBe(200);
      seen.add(r.upstream);
    }
    expect([...seen].sort()).toEqual(ports.map((p) => `127.0.0.1:${p}`).sort());
  });

  it('threads and runs through the balancer: each request may land on either instance', async () => {
    const assistant = await client.beta.assistants.create({ model: MODEL, name: 'deploy' });
    // Read back at once, from whichever instance: read-your-writes across instances.
    expect((await client.beta.assistants.retrieve(assistant.id)).name).toBe('deploy');
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'hello through nginx' }] });
    const run = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id }, { pollIntervalMs: 50 });
    expect(run.status).toBe('completed');
    const messages = await client.beta.threads.messages.list(thread.id, { order: 'asc' });
    expect(messages.data.map((m) => m.role)).toEqual(['user', 'assistant']);

    // A streamed run: the SSE frames pass through nginx unbuffered, whichever instance executes the run.
    await client.beta.threads.messages.create(thread.id, { role: 'user', content: 'and a streamed one' });
    const stream = client.beta.threads.runs.stream(thread.id, { assistant_id: assistant.id });
    const events: string[] = [];
    for await (const e of stream) events.push(e.event);
    expect(events[0]).toBe('thread.run.created');
    expect(events).toContain('thread.message.delta');
    expect(events.at(-1)).toBe('thread.run.completed');
    const all = await client.beta.threads.messages.list(thread.id);
    expect(all.data).toHaveLength(4);
  });

  it('each webhook is delivered once, signed, whichever instance made the event', async () => {
    const made = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.responses.create({ model: MODEL, input: `background ${i}`, background: true })),
    );
    const ids = new Set(made.map((r) => r.id));
    const wh = new Webhook(SECRET);
    const completedIds = () =>
      rx.received.map((r) => {
        const headers = {
          'webhook-id': String(r.headers['webhook-id']),
          'webhook-timestamp': String(r.headers['webhook-timestamp']),
          'webhook-signature': String(r.headers['webhook-signature']),
        };
        return (wh.verify(r.body, headers) as { data: { id: string } }).data.id;
      });
    for (let i = 0; i < 400 && new Set(completedIds()).size < ids.size; i++) await new Promise((r) => setTimeout(r, 25));
    // Both instances had the chance to deliver again (the fan-out and delivery jobs are claimed once).
    await new Promise((r) => setTimeout(r, 1500));
    const delivered = completedIds();
    expect(new Set(delivered)).toEqual(ids);
    expect(delivered).toHaveLength(ids.size);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(ids.size);
  });

  it('a rate limit holds across instances: request N+1 gets 429 whichever instance takes it', async () => {
    const chat = (n: number) =>
      through('/v1/chat/completions', {
        method: 'POST',
        body: JSON.stringify({ model: LIMITED, messages: [{ role: 'user', content: `request ${n}` }], max_tokens: 5 }),
      });
    const admitted: (string | null)[] = [];
    for (let i = 1; i <= DAILY_LIMIT; i++) {
      const r = await chat(i);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      admitted.push(r.upstream);
    }
    // The admitted requests were served by both instances: the count is one, in Redis.
    expect(new Set(admitted).size).toBe(2);
    const refusedBy = new Set<string | null>();
    for (let i = 0; i < 4; i++) {
      const r = await chat(DAILY_LIMIT + 1 + i);
      expect(r.status).toBe(429);
      expect(r.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      refusedBy.add(r.upstream);
    }
    expect(refusedBy.size).toBe(2);
    // And through the SDK, as an application sees it.
    const err = await client.chat.completions.create({ model: LIMITED, messages: [{ role: 'user', content: 'one more' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
  });
});
