import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readerOf, watchSnapshots } from '../assistants/snapshots.js';
import { GRANT, X509_TYPE } from '../identity/setup.js';
import { tlsRequest } from '../identity/tls-client.js';
import { startTour } from '../apps/harness.js';
import { ensureBuilt, freePort, freshDatabaseUrl, root, serve } from '../process.js';
import { startReceiver } from '../webhooks/receiver.js';
import { freeRecipePorts, nginxBinary, startNginx, type Balancer, type RecipePorts } from './balancer.js';
import { opensslCertificates, type OpensslCertificates } from './openssl.js';
import { installRecipe, RECIPE, startUnit, unitService, type RecipeSite, type UnitProcess } from './recipe.js';

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

const execFileAsync = promisify(execFile);

/** An IPv4 address of this machine that is not loopback: "the team's network", where the receiver listens. */
const privateAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

describe.runIf(nginx && databaseUrl && redisUrl)('two instances, PostgreSQL, Redis and nginx', () => {
  const instances: ChildProcess[] = [];
  const units: UnitProcess[] = [];
  const ports: number[] = [];
  let recipe: RecipePorts;
  let site: RecipeSite;
  let certs: OpensslCertificates;
  let balancer: Balancer;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  let client: OpenAI;
  let dir: string;

  beforeAll(async () => {
    ensureBuilt();
    // The receiver on a private address of this machine: the instances reach it only through the recipe's
    // STANDIN_OUTBOUND_ALLOW (loopback they reach anyway, listening on loopback themselves).
    if (!privateAddress) console.warn('test/deploy: no non-loopback IPv4 address; the webhook receiver listens on 127.0.0.1');
    rx = await startReceiver(undefined, privateAddress ?? '127.0.0.1');
    dir = mkdtempSync(join(tmpdir(), 'standin-deploy-'));
    chmodSync(dir, 0o755);
    recipe = await freeRecipePorts();
    site = {
      dir,
      ports: recipe,
      databaseUrl: await freshDatabaseUrl('deploy'),
      redisUrl: redisUrl!,
      receiverUrl: rx.url,
      receiverAddress: privateAddress ?? '127.0.0.1',
    };
    // The recipe's files as docs/deploy.md installs them, its secrets written to files, and rate limits of
    // this run's own model names (counters in the shared Redis are kept per model).
    installRecipe(
      site,
      { adminKey: ADMIN_KEY, apiKey: API_KEY, webhookSecret: SECRET },
      {
        rate_limits: {
          ramp: { enabled: false },
          models: {
            [MODEL]: { tiers: { tier_1: { rpm: 100_000, tpm: 100_000_000 } } },
            [LIMITED]: { tiers: { tier_1: { rpd: DAILY_LIMIT, tpd: 100_000_000 } } },
          },
        },
      },
    );
    // The server certificate nginx and the instances' mTLS listeners present, and a client's, from openssl.
    mkdirSync(join(dir, 'etc/tls'), { recursive: true });
    certs = opensslCertificates(join(dir, 'etc/tls'));
    for (let i = 1; i <= 2; i++) {
      // One after the other: the first start migrates the schema (a second would wait on the migration lock).
      const unit = await startUnit(site, i);
      units.push(unit);
      instances.push(unit.child);
      ports.push(recipe.instances[i - 1]);
    }
    balancer = await startNginx(nginx!, recipe, join(dir, 'etc'));
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
    const snapshots = watchSnapshots(stream);
    const events: string[] = [];
    for await (const e of stream) events.push(e.event);
    expect(await snapshots.verify(readerOf(client))).toMatchObject({ messages: 1, textDone: 1 });
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

  /** A control-plane request through nginx. */
  const admin = (method: string, path: string, body?: unknown) =>
    through(path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  /** Retries `probe` until it holds (a change reaches the other instance with the change signal). */
  const eventually = async (probe: () => Promise<boolean>, what: string) => {
    for (let i = 0; i < 100; i++) {
      if (await probe()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`not so within 5 s: ${what}`);
  };

  it('an openssl-made client certificate exchanges for a token through nginx, and the token works there', async () => {
    const org = '/admin/v1/organizations/org_team';
    const sa = await admin('POST', '/admin/v1/projects/proj_team/service_accounts', {
      id: 'svc_acct_deploy',
      name: 'worker',
      role: 'member',
    });
    expect(sa.status, JSON.stringify(sa.body)).toBe(201);
    const provider = await admin('POST', `${org}/identity_providers`, {
      id: 'idp_deploy_mtls',
      kind: 'x509',
      name: 'deploy-mtls',
      mappings: [{ name: 'workers', service_account_id: 'svc_acct_deploy', project_id: 'proj_team' }],
    });
    expect(provider.status, JSON.stringify(provider.body)).toBe(201);
    const root = await admin('POST', `${org}/mtls_roots`, { id: 'mtlsroot_deploy', name: 'deploy', certificate: certs.rootCert });
    expect(root.status, JSON.stringify(root.body)).toBe(201);

    const exchange = (localAddress?: string) =>
      tlsRequest({
        port: recipe.mtlsToken,
        ca: certs.serverCert,
        localAddress,
        body: {
          grant_type: GRANT,
          subject_token_type: X509_TYPE,
          identity_provider_id: 'idp_deploy_mtls',
          service_account_id: 'svc_acct_deploy',
        },
        cert: certs.clientCert,
        key: certs.clientKey,
      });
    // Several exchanges: nginx sends the connections round robin, so both instances verify the certificate.
    const tokens: string[] = [];
    for (let i = 0; i < 4; i++) {
      let r = await exchange();
      await eventually(
        async () => (r.status === 200 ? true : ((r = await exchange()), r.status === 200)),
        'the root reached both instances',
      );
      expect(r.body).toMatchObject({ token_type: 'Bearer', issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' });
      tokens.push(r.body.access_token);
    }
    // nginx names the client in a PROXY header: a client on 127.0.0.2 is audited as 127.0.0.2, not as nginx.
    const fromElsewhere = await exchange('127.0.0.2');
    expect(fromElsewhere.status, JSON.stringify(fromElsewhere.body)).toBe(200);
    const audit = await admin('GET', `${org}/workload_identity/exchanges?limit=1`);
    expect(audit.body.data[0]).toMatchObject({ outcome: 'issued', client_ip: '127.0.0.2' });
    // The minted token, with the same certificate, on the mTLS API listener through nginx.
    for (const token of tokens.slice(0, 2)) {
      const models = await tlsRequest({
        port: recipe.mtlsApi,
        ca: certs.serverCert,
        method: 'GET',
        path: '/v1/models',
        headers: { authorization: `Bearer ${token}` },
        cert: certs.clientCert,
        key: certs.clientKey,
      });
      expect(models.status, JSON.stringify(models.body)).toBe(200);
      expect(models.body.object).toBe('list');
    }
    // Without a client certificate the token endpoint refuses: nothing on the way ended TLS.
    const bare = await tlsRequest({
      port: recipe.mtlsToken,
      ca: certs.serverCert,
      body: {
        grant_type: GRANT,
        subject_token_type: X509_TYPE,
        identity_provider_id: 'idp_deploy_mtls',
        service_account_id: 'svc_acct_deploy',
      },
    });
    expect(bare.status).toBe(401);
    expect(bare.body.error).toBe('invalid_subject_token');
  });

  it('the IP allowlist judges the client nginx names: allowed from 127.0.0.1, refused elsewhere, a forged header changes nothing', async () => {
    const models = (forwardedFor?: string) => through('/v1/models', forwardedFor ? { headers: { 'x-forwarded-for': forwardedFor } } : {});
    const allow = async (cidrs: string[]) => {
      const set = await admin('PUT', '/admin/v1/projects/proj_team/ip_allowlist', { cidrs });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
    };
    try {
      await allow(['127.0.0.1/32']);
      for (let i = 0; i < 4; i++) expect((await models()).status).toBe(200);
      await allow(['203.0.113.0/24']);
      // Both instances refuse (each reads the allowlist again at the change signal), whatever the client claims.
      const refusedBy = new Set<string | null>();
      await eventually(async () => {
        const r = await models('203.0.113.9');
        if (r.status === 403) {
          expect(r.body.error).toMatchObject({ code: 'ip_not_allowed' });
          expect(r.body.error.message).toContain('127.0.0.1');
          refusedBy.add(r.upstream);
        }
        return refusedBy.size === 2;
      }, 'both instances refuse');
      // The instances do believe X-Forwarded-For from 127.0.0.1, where nginx runs: the header that nginx
      // replaced above admits a request made straight to an instance from this address.
      const direct = await fetch(`http://127.0.0.1:${ports[0]}/v1/models`, {
        headers: { authorization: `Bearer ${API_KEY}`, 'x-forwarded-for': '203.0.113.9' },
      });
      expect(direct.status).toBe(200);
      await allow(['127.0.0.1/32']);
      await eventually(async () => (await models('203.0.113.9')).status === 200, 'allowed again');
    } finally {
      await allow([]);
    }
  });

  it('links name the balancer: a sign-in link minted through it is on the public https URL, and its session cookie is Secure', async () => {
    const publicUrl = `https://localhost:${recipe.https}`;
    // The banner of each instance names the public URL, not the instance.
    for (const u of units) expect(u.output()).toContain(`Standin is listening on ${publicUrl}`);
    const made = await admin('POST', '/admin/v1/dashboard/sign_in_links', {});
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const link = new URL(made.body.url);
    expect(link.origin).toBe(publicUrl);
    // Followed through nginx's TLS listener: TLS ends at nginx, the instance answers with a Secure cookie.
    const signIn = await tlsRequest({
      port: recipe.https,
      ca: certs.serverCert,
      method: 'GET',
      path: `${link.pathname}${link.search}`,
      headers: { host: link.host },
    });
    expect(signIn.status).toBe(303);
    // Named after the public port (nginx passes the browser's Host on), the same behind every instance.
    expect(String(signIn.headers['set-cookie'])).toMatch(new RegExp(`^standin_session_${recipe.https}=[^;]+;.*; Secure$`));
    expect(signIn.headers['x-standin-upstream']).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it("components are served through the balancer's widget listener, an origin of their own", async () => {
    const tour = await startTour();
    try {
      const host = (path: string, body: unknown) =>
        tlsRequest({ port: recipe.https, ca: certs.serverCert, path, body, headers: { host: `localhost:${recipe.https}` } });
      const connected = await host('/apps/api/connect', { server: tour.url });
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      const tool = (connected.body.tools as { descriptor: { name: string }; templateUri: string | null }[]).find((t) => t.templateUri);
      const widgetOrigin = `https://localhost:${recipe.widgetsHttps}`;
      const upstreams = new Set<unknown>();
      // Several renders: each document is made by one instance and fetched, through nginx, from either.
      for (let i = 0; i < 4; i++) {
        const rendered = await host('/apps/api/render', {
          connection: connected.body.id,
          tool: tool!.descriptor.name,
          globals: {},
          widgetSessionId: `deploy-${i}`,
        });
        expect(rendered.status, JSON.stringify(rendered.body)).toBe(200);
        const url = new URL(rendered.body.url);
        expect(url.origin).toBe(widgetOrigin);
        const doc = await tlsRequest({
          port: recipe.widgetsHttps,
          ca: certs.serverCert,
          method: 'GET',
          path: url.pathname,
          headers: { host: url.host },
        });
        expect(doc.status, String(doc.body)).toBe(200);
        expect(doc.headers['content-type']).toMatch(/^text\/html/);
        expect(doc.headers['content-security-policy']).toBeTruthy();
        upstreams.add(doc.headers['x-standin-upstream']);
      }
      expect([...upstreams].sort()).toEqual(recipe.instancesWidgets.map((p) => `127.0.0.1:${p}`).sort());
    } finally {
      await tour.stop();
    }
  });

  it('backups: pg_dump and `standin export`, each restored elsewhere, serve what was saved', async () => {
    const assistant = await client.beta.assistants.create({ model: MODEL, name: 'backed up' });
    const backups = join(dir, 'backups');
    mkdirSync(backups);
    const schema = new URL(site.databaseUrl).searchParams.get('options')!.replace('-c search_path=', '');
    const base = new URL(databaseUrl!);
    base.search = '';
    const run = (command: string, args: string[], env?: NodeJS.ProcessEnv) =>
      execFileAsync(command, args, { cwd: root, encoding: 'utf8', ...(env ? { env: { PATH: process.env.PATH, ...env } } : {}) });
    // `standin export` runs with the instances' own environment file (the store by its secret file).
    const instanceEnv = Object.fromEntries(
      readFileSync(join(dir, 'etc/standin.env'), 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => l.split(/=(.*)/s, 2)),
    );
    const [, exported] = await Promise.all([
      // pg_dump as docs/deploy.md runs it (the test's store is one schema of a shared database: that schema only).
      run('pg_dump', ['--format=custom', `--file=${join(backups, 'standin.dump')}`, `--schema=${schema}`, base.toString()]),
      run(process.execPath, ['dist/main.js', 'export', join(backups, 'standin.jsonl.gz')], instanceEnv),
    ]);
    expect(exported.stdout).toMatch(/^exported \d+ tables/);

    // Restores: pg_restore into a new database; `standin import` into an empty store.
    const restoredDb = `standin_restore_${randomBytes(4).toString('hex')}`;
    await run('psql', [base.toString(), '-qc', `CREATE DATABASE ${restoredDb}`]);
    const restoredBase = new URL(base);
    restoredBase.pathname = `/${restoredDb}`;
    const restored: ChildProcess[] = [];
    try {
      const fromDump = new URL(restoredBase);
      fromDump.searchParams.set('options', `-c search_path=${schema}`);
      const fromSnapshot = await freshDatabaseUrl('deploy_restore');
      const [, imported] = await Promise.all([
        run('pg_restore', ['--no-owner', `--dbname=${restoredBase}`, join(backups, 'standin.dump')]),
        run(process.execPath, ['dist/main.js', 'import', join(backups, 'standin.jsonl.gz')], {
          STANDIN_DATABASE_URL: fromSnapshot,
          STANDIN_ADMIN_KEY: ADMIN_KEY,
        }),
      ]);
      expect(imported.stdout).toMatch(/^imported \d+ tables/);
      await Promise.all(
        [fromDump.toString(), fromSnapshot].map(async (url) => {
          const port = await freePort();
          const child = await serve({
            STANDIN_DATABASE_URL: url,
            STANDIN_PORT: String(port),
            STANDIN_DATA: join(dir, `restored-${port}`),
            STANDIN_ADMIN_KEY: ADMIN_KEY,
            STANDIN_SEED: 'false',
            STANDIN_LOG_LEVEL: 'warn',
          });
          restored.push(child);
          const read = await fetch(`http://127.0.0.1:${port}/v1/assistants/${assistant.id}`, {
            headers: { authorization: `Bearer ${API_KEY}`, 'openai-beta': 'assistants=v2' },
          });
          expect(read.status).toBe(200);
          expect(((await read.json()) as { name: string }).name).toBe('backed up');
        }),
      );
    } finally {
      await Promise.all(
        restored.map((child) => {
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          return exited;
        }),
      );
      await run('psql', [base.toString(), '-qc', `DROP DATABASE IF EXISTS ${restoredDb} WITH (FORCE)`]);
    }
  }, 60_000);

  it('no secret is in any instance output: keys and the webhook secret are read from files, never printed', () => {
    for (const u of units) {
      const out = u.output();
      for (const secret of [ADMIN_KEY, API_KEY, SECRET, site.databaseUrl]) expect(out).not.toContain(secret);
    }
  });
});

describe('the recipe unit file', () => {
  const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
  if (!analyze) console.warn('test/deploy: systemd-analyze is not installed (apt-get install -y systemd); the unit is not verified');
  it.runIf(analyze)('passes systemd-analyze verify (as standin@1)', () => {
    const at = mkdtempSync(join(tmpdir(), 'standin-unit-'));
    try {
      copyFileSync(join(RECIPE, 'standin@.service'), join(at, 'standin@.service'));
      symlinkSync('standin@.service', join(at, 'standin@1.service'));
      const r = spawnSync(analyze!, ['verify', join(at, 'standin@1.service')], { encoding: 'utf8' });
      // verify exits 0 on unknown keys and values (it only warns): every line it prints is a finding. A node
      // that is not /usr/bin/node (a CI's own) is the one finding allowed; the deployment test runs it there.
      const findings = `${r.stdout}${r.stderr}`
        .split('\n')
        .filter((l) => l.trim())
        .filter((l) => existsSync('/usr/bin/node') || !l.includes('/usr/bin/node is not executable'));
      expect(findings).toEqual([]);
      expect(r.status === 0 || !existsSync('/usr/bin/node')).toBe(true);
    } finally {
      rmSync(at, { recursive: true, force: true });
    }
  });
  it('runs one instance per unit: its ExecStart, environment files and data folder', () => {
    const service = Object.fromEntries(unitService(2).filter(([k]) => k !== 'EnvironmentFile'));
    expect(service.ExecStart).toBe('/usr/bin/node /opt/standin/dist/main.js serve');
    expect(
      unitService(2)
        .filter(([k]) => k === 'EnvironmentFile')
        .map(([, v]) => v),
    ).toEqual(['/etc/standin/standin.env', '/etc/standin/instance-2.env']);
    expect(service.Environment).toBe('STANDIN_DATA=/var/lib/standin/2');
    expect(service.KillSignal).toBe('SIGTERM');
  });
});
