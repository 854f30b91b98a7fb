import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testSchemaName } from '../helpers.js';

/** Starts `node dist/main.js …` (built by `npm test`) and resolves with its output once it listens. */
function startProcess(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; out: string; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['dist/main.js', ...args], {
      env: { ...process.env, STANDIN_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no start in time:\n${out}\n${err}`));
    }, 20_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m && out.includes('docs:')) {
        clearTimeout(timer);
        resolve({ child, out, url: m[1] });
      }
    });
    child.stderr!.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${out}\n${err}`));
    });
  });
}

const exitCode = (child: ChildProcess) => new Promise<number | null>((r) => child.once('exit', (code) => r(code)));

describe('standin serve (the real process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'standin-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('first start seeds a demo, prints keys and a curl command that works, and stops gracefully on SIGTERM', async () => {
    const { child, out, url } = await startProcess(['serve', '--port', '0', '--data', dir]);
    try {
      expect(out).toContain('admin key');
      const curl = /curl -s '([^']+)' -H 'Authorization: Bearer ([^\s"]+)'/.exec(out);
      expect(curl).not.toBeNull();
      const res = await fetch(curl![1], { headers: { authorization: `Bearer ${curl![2]}` } });
      expect(res.status).toBe(200);
      expect((await res.json()).object).toBe('list');
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    } finally {
      const exited = exitCode(child);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
    // Second start: no new demo keys, the same admin key.
    const again = await startProcess(['serve', '--port', '0', '--data', dir]);
    expect(again.out).not.toContain('First start');
    const exited = exitCode(again.child);
    again.child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('refuses to listen beyond loopback with generated keys', async () => {
    await expect(startProcess(['serve', '--port', '0', '--host', '0.0.0.0', '--data', dir])).rejects.toThrow(
      /refusing to listen on 0.0.0.0 without an admin key/,
    );
    await expect(
      startProcess(['serve', '--port', '0', '--host', '0.0.0.0', '--data', join(dir, 'fresh')], {
        STANDIN_ADMIN_KEY: 'sk-admin-operator-set-000000000000',
      }),
    ).rejects.toThrow(/generated demo keys/);
    // The refused start wrote no demo: the next start on that folder seeds, and prints the keys it makes.
    const next = await startProcess(['serve', '--port', '0', '--data', join(dir, 'fresh')]);
    const exited = exitCode(next.child);
    next.child.kill('SIGTERM');
    await exited;
    expect(next.out).toContain('First start');
    expect(next.out).toMatch(/ads API key/);
  });

  it('picks free ports for every listener with 0 and reports each address from the control plane', async () => {
    const admin = 'sk-admin-listeners-test-0000000000000';
    const { child, url } = await startProcess(
      ['serve', '--port', '0', '--mtls-port', '0', '--mtls-api-port', '0', '--widget-port', '0', '--data', join(dir, 'ports')],
      {
        STANDIN_ADMIN_KEY: admin,
      },
    );
    try {
      const r = await fetch(`${url}/admin/v1/listeners`, { headers: { authorization: `Bearer ${admin}` } });
      const byName = Object.fromEntries(((await r.json()).data as { name: string; url: string }[]).map((l) => [l.name, l.url]));
      expect(Object.keys(byName).sort()).toEqual(['http', 'mtls_api', 'mtls_token', 'widgets']);
      expect(byName.http).toBe(url);
      for (const name of ['mtls_api', 'mtls_token', 'widgets']) expect(Number(new URL(byName[name]).port)).toBeGreaterThan(0);
      expect(new URL(byName.mtls_token).protocol).toBe('https:');
    } finally {
      const exited = exitCode(child);
      child.kill('SIGTERM');
      await exited;
    }
    const off = spawn(process.execPath, ['dist/main.js', 'serve', '--mtls-port', 'nope'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    off.stderr!.on('data', (d) => (err += d));
    expect(await exitCode(off)).toBe(1);
    expect(err).toMatch(/--mtls-port must be 'off' or a port/);
  });

  it('links no demo project it did not make (--no-seed)', async () => {
    const { child, out } = await startProcess(['serve', '--port', '0', '--no-seed', '--data', join(dir, 'noseed')]);
    const exited = exitCode(child);
    child.kill('SIGTERM');
    await exited;
    expect(out).not.toContain('proj_demo');
    expect(out).toContain('/apps');
  });

  it('prints all of a long answer into a pipe before it exits (config-schema)', async () => {
    const child = spawn(process.execPath, ['dist/main.js', 'config-schema'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => chunks.push(d));
    expect(await exitCode(child)).toBe(0);
    const text = Buffer.concat(chunks).toString('utf8');
    expect(text.length).toBeGreaterThan(65_536);
    expect(JSON.parse(text).title).toBe('Standin configuration');
  });

  it.runIf(process.env.STANDIN_TEST_DATABASE_URL)('two processes on one PostgreSQL database work side by side', async () => {
    const pg = (await import('pg')).default;
    const base = process.env.STANDIN_TEST_DATABASE_URL!;
    const schema = testSchemaName('cli');
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const u = new URL(base);
    u.searchParams.set('options', `-c search_path=${schema}`);
    const env = { STANDIN_DATABASE_URL: u.toString(), STANDIN_ADMIN_KEY: 'sk-admin-two-processes-0000000000' };
    // Both start at once: migrations are locked, the seed runs once.
    const started = await Promise.allSettled([
      startProcess(['serve', '--port', '0', '--data', join(dir, 'a')], env),
      startProcess(['serve', '--port', '0', '--data', join(dir, 'b')], env),
    ]);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) {
      for (const r of started) if (r.status === 'fulfilled') r.value.child.kill('SIGKILL');
      throw (failed as PromiseRejectedResult).reason;
    }
    const [a, b] = started.map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof startProcess>>>).value);
    try {
      const printed = [a.out, b.out].filter((o) => o.includes('First start'));
      expect(printed).toHaveLength(1);
      const adsKey = /ads API key[^:]*:\s*([^\s"]+)/.exec(printed[0])![1];
      const headers = { authorization: `Bearer ${adsKey}`, 'content-type': 'application/json' };
      const created = await fetch(`${a.url}/ads/v1/ad_groups`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          campaign_id: 'cmp_demo_clicks',
          name: 'Made on A',
          status: 'paused',
          bidding_config: { billing_event_type: 'click', max_bid_micros: 10 },
        }),
      }).then((r) => r.json());
      const onB = await fetch(`${b.url}/ads/v1/ad_groups/${created.id}`, { headers }).then((r) => r.json());
      expect(onB.name).toBe('Made on A');
      const clock = await fetch(`${b.url}/admin/v1/clock/advance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.STANDIN_ADMIN_KEY}`, 'content-type': 'application/json' },
        body: '{"duration":"1h"}',
      });
      expect(clock.status).toBe(200);
      const offset = (await clock.json()).offset_ms;
      // A follows the clock B moved.
      for (let i = 0; i < 50; i++) {
        const seen = await fetch(`${a.url}/admin/v1/clock`, { headers: { authorization: `Bearer ${env.STANDIN_ADMIN_KEY}` } }).then((r) =>
          r.json(),
        );
        if (seen.offset_ms === offset) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const seenByA = await fetch(`${a.url}/admin/v1/clock`, { headers: { authorization: `Bearer ${env.STANDIN_ADMIN_KEY}` } }).then((r) =>
        r.json(),
      );
      expect(seenByA.offset_ms).toBe(offset);
    } finally {
      const exits = [exitCode(a.child), exitCode(b.child)];
      a.child.kill('SIGTERM');
      b.child.kill('SIGTERM');
      expect(await Promise.all(exits)).toEqual([0, 0]);
      await admin.end();
    }
  });

  it('serves a declared config file: its keys work, no demo is seeded', async () => {
    const { child, out, url } = await startProcess([
      'serve',
      '--port',
      '0',
      '--data',
      join(dir, 'cfg'),
      '--config',
      'examples/standin.yaml',
    ]);
    try {
      expect(out).not.toContain('First start');
      expect(out).not.toContain('admin key');
      const r = await fetch(`${url}/ads/v1/campaigns`, { headers: { authorization: 'Bearer sk-ads-local-acme-000000000000000000' } });
      expect((await r.json()).data.map((c: any) => c.id).sort()).toEqual(['cmp_acme_clicks', 'cmp_acme_reach', 'cmp_acme_sales']);
      expect(
        (await fetch(`${url}/admin/v1/clock`, { headers: { authorization: 'Bearer sk-admin-local-example-0000000000' } })).status,
      ).toBe(200);
    } finally {
      const exited = exitCode(child);
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('each command of the areas answers its own --help; an unknown command is refused, --help or not', async () => {
    const run = async (...args: string[]) => {
      const child = spawn(process.execPath, ['dist/main.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.stderr!.on('data', (d) => (out += d));
      return { code: await exitCode(child), out };
    };
    const top = await run('--help');
    expect(top.code).toBe(0);
    for (const line of [
      'standin trigger <event-type>',
      'standin apps lint <server>',
      'standin apps validate-submission',
      'standin apps open',
    ])
      expect(top.out).toContain(line);
    const trigger = await run('trigger', '--help');
    expect(trigger).toMatchObject({ code: 0 });
    expect(trigger.out).toMatch(/^usage: standin trigger/);
    expect(trigger.out).toContain('batch.completed');
    for (const sub of ['lint', 'validate-submission', 'open']) {
      const r = await run('apps', sub, '--help');
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(/^standin apps — /);
    }
    const unknown = await run('nope', '--help');
    expect(unknown.code).toBe(2);
    expect(unknown.out).toContain("unknown command 'nope'");
  });

  it('migrate runs the migrations and says so', async () => {
    const child = spawn(process.execPath, ['dist/main.js', 'migrate', '--data', join(dir, 'm')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    expect(await exitCode(child)).toBe(0);
    expect(out).toMatch(/applied: .*ads_init/);
  });
});

describe('standin --version', () => {
  it("prints package.json's version, as the recipe and the changelog name it", async () => {
    const { execFileSync } = await import('node:child_process');
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', 'version'])
      expect(execFileSync(process.execPath, ['bin/standin.js', flag], { encoding: 'utf8' })).toBe(`standin ${pkg.version}\n`);
    expect(readFileSync('CHANGELOG.md', 'utf8')).toContain(`## [${pkg.version}]`);
  });
});
