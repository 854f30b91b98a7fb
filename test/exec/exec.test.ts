// `npx standin exec -- <command>` from a user's project, with the packed package installed there.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dialects } from '../helpers.js';
import { userProject, type UserProject } from './project.js';

// Each test starts processes of a user's project (npx, node, vitest, tsc): seconds each on a busy machine.
vi.setConfig({ testTimeout: 180_000 });

let project: UserProject;
beforeAll(() => {
  project = userProject();
}, 120_000);
afterAll(() => project?.remove());

const databaseEnv = (dialect: string): Record<string, string> =>
  dialect === 'postgres' ? { STANDIN_DATABASE_URL: process.env.STANDIN_TEST_DATABASE_URL! } : {};

describe.each(dialects())('standin exec on %s', (dialect) => {
  it('runs the command with the URLs and keys in its environment, and exits with its code', async () => {
    const { code, out } = await project.run('npx', ['standin', 'exec', '--', 'node', '--test', 'exec/env.test.mjs'], {
      env: databaseEnv(dialect),
    });
    expect(out).toMatch(/# pass 3/);
    expect(code).toBe(0);
    // Nothing secret is printed: the keys are in the command's environment only.
    expect(out).not.toMatch(/sk-(proj|ads|admin)-/);
  });

  it("exits with the command's exit code, and stops Standin and deletes its store", async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'standin-exec-tmp-'));
    try {
      const script = 'console.log("at", process.env.STANDIN_URL, process.env.STANDIN_DATABASE_URL); process.exit(7)';
      const { code, out } = await project.run('npx', ['standin', 'exec', '--', 'node', '-e', script], {
        env: { ...databaseEnv(dialect), TMPDIR: tmp },
      });
      expect(code).toBe(7);
      // Its own schema is gone (others' runs on this database may hold theirs meanwhile).
      if (dialect === 'postgres') {
        const schema = /search_path(?:%3D|=)(standin_exec_\w+)/.exec(out)?.[1];
        expect(schema, out).toBeDefined();
        expect(await execSchemas()).not.toContain(schema);
      }
      const url = /at (http:\/\/\S+)/.exec(out)![1];
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('standin exec', () => {
  it('commands of the command line run by the command reach the same store (standin trigger)', async () => {
    const script = `npx standin trigger batch.completed >/dev/null && node -e '
      fetch(process.env.OPENAI_BASE_URL + "/batches", { headers: { authorization: "Bearer " + process.env.OPENAI_API_KEY } })
        .then((r) => r.json()).then((b) => console.log("batches:", b.data.length))'`;
    const { code, out } = await project.run('npx', ['standin', 'exec', '--', script]);
    expect(code, out).toBe(0);
    expect(out).toContain('batches: 1');
  });

  it('passes flags after -- to the command, and one argument runs through the shell', async () => {
    const { code, out } = await project.run('npx', ['standin', 'exec', '--', 'echo "got --port $((1 + 1))" && exit 4']);
    expect(out).toContain('got --port 2');
    expect(code).toBe(4);
  });

  it('answers 127 for a command that does not exist, 2 without a command, and 1 for a host beyond loopback', async () => {
    const missing = await project.run('npx', ['standin', 'exec', '--', 'no-such-command-standin', '--version']);
    expect(missing.code).toBe(127);
    expect(missing.out).toContain("cannot run 'no-such-command-standin': command not found");
    const none = await project.run('npx', ['standin', 'exec']);
    expect(none.code).toBe(2);
    expect(none.out).toContain("give the command to run after '--'");
    // Keys made for the run are handed out: it never listens beyond this machine.
    const open = await project.run('npx', ['standin', 'exec', '--host', '0.0.0.0', '--', 'true']);
    expect(open.code).toBe(1);
    expect(open.out).toContain('a throwaway Standin listens on loopback only, not on 0.0.0.0');
  });

  it('forwards SIGTERM to the command, then stops Standin; the exit code is 128 + the signal', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'standin-exec-tmp-'));
    try {
      // The command dies of the signal (no handler): exec reports 143 only if the command got it.
      const script = `console.log("at", process.env.STANDIN_URL); setInterval(() => {}, 1000);`;
      const child = spawn(join(project.dir, 'node_modules/.bin/standin'), ['exec', '--', 'node', '-e', script], {
        cwd: project.dir,
        env: { PATH: process.env.PATH, TMPDIR: tmp },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const lines = createInterface({ input: child.stdout });
      const url = await new Promise<string>((resolve) =>
        lines.on('line', (line) => {
          out += line + '\n';
          const m = /^at (\S+)/.exec(line);
          if (m) resolve(m[1]);
        }),
      );
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited, out).toBe(128 + 15);
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('applies --config on top of the demo data, and the keys still work after a reset', async () => {
    const check = `
      const h = { authorization: 'Bearer ' + process.env.STANDIN_ADMIN_KEY, 'content-type': 'application/json' };
      const base = process.env.STANDIN_URL;
      const get = async (p, key) => (await fetch(base + p, { headers: { authorization: 'Bearer ' + key } })).status;
      const org = async () => (await (await fetch(base + '/admin/v1/organizations/org_config', { headers: h })).json()).id;
      const before = [await org(), await get('/v1/models', process.env.OPENAI_API_KEY), await get('/ads/v1/ad_groups?campaign_id=cmp_demo_clicks', process.env.STANDIN_ADS_KEY)];
      await fetch(base + '/admin/v1/reset', { method: 'POST', headers: h, body: '{}' });
      const after = [await org(), await get('/v1/models', process.env.OPENAI_API_KEY), await get('/ads/v1/ad_groups?campaign_id=cmp_demo_clicks', process.env.STANDIN_ADS_KEY)];
      console.log(JSON.stringify({ before, after }));`;
    const config = join(project.dir, 'standin.yaml');
    writeFileSync(config, 'organizations:\n  - id: org_config\n    name: From the config\n');
    const { code, out } = await project.run('npx', [
      'standin',
      'exec',
      '--config',
      'standin.yaml',
      '--',
      'node',
      '--input-type=module',
      '-e',
      check,
    ]);
    expect(code, out).toBe(0);
    const expected = ['org_config', 200, 200];
    expect(JSON.parse(out.split('\n').find((l) => l.startsWith('{'))!)).toEqual({ before: expected, after: expected });
  });
});

/** Checks run inside an exec'd command: each key's view of the fixture's assistant, and a reset's effect. */
const CHECK_IMPORTED = `
  const base = process.env.STANDIN_URL;
  const get = async (path, key) => (await fetch(base + path, { headers: { authorization: 'Bearer ' + key } })).status;
  const assistant = async (key) => {
    const r = await fetch(base + '/v1/assistants?limit=100', { headers: { authorization: 'Bearer ' + key } });
    return r.status === 200 ? (await r.json()).data.some((a) => a.name === 'Support bot') : r.status;
  };
  const own = { platform: await assistant(process.env.OLD_KEY) };
  const run = { platform: await assistant(process.env.OPENAI_API_KEY), ads: await get('/ads/v1/ad_groups?campaign_id=cmp_demo_clicks', process.env.STANDIN_ADS_KEY) };
  const h = { authorization: 'Bearer ' + process.env.STANDIN_ADMIN_KEY, 'content-type': 'application/json' };
  const made = await (await fetch(base + '/v1/threads', { method: 'POST', headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' }, body: '{}' })).json();
  await fetch(base + '/admin/v1/reset', { method: 'POST', headers: h, body: '{}' });
  const afterReset = { fixture: await assistant(process.env.OPENAI_API_KEY), own: await assistant(process.env.OLD_KEY), thread: await get('/v1/threads/' + made.id, process.env.OPENAI_API_KEY) };
  console.log(JSON.stringify({ own, run, afterReset }));`;

const lastJson = (out: string) => JSON.parse(out.split('\n').findLast((l) => l.startsWith('{'))!) as unknown;

describe.each(dialects())('standin exec with snapshots on %s', (dialect) => {
  it('--export-on-exit writes what the command made, also when it fails; --import starts from it, with keys old and new', async () => {
    rmSync(join(project.dir, 'world.jsonl.gz'), { force: true });
    const made = await project.run(
      'npx',
      [
        'standin',
        'exec',
        '--export-on-exit',
        'world.jsonl.gz',
        '--',
        'node exec/make-fixture.mjs && echo $OPENAI_API_KEY > old-key && exit 3',
      ],
      { env: databaseEnv(dialect) },
    );
    // The command's exit code stands, and the state it left is written anyway.
    expect(made.code, made.out).toBe(3);
    expect(made.out).toMatch(/exported \d+ tables, \d+ rows, 0 files \(0 bytes\) to world\.jsonl\.gz/);
    expect(existsSync(join(project.dir, 'world.jsonl.gz.part'))).toBe(false);
    const oldKey = readFileSync(join(project.dir, 'old-key'), 'utf8').trim();

    const fixture = await project.run(
      'npx',
      ['standin', 'exec', '--import', 'world.jsonl.gz', '--', 'node', '--test', 'exec/fixture.test.mjs'],
      {
        env: databaseEnv(dialect),
      },
    );
    expect(fixture.out).toMatch(/# pass 2/);
    expect(fixture.code, fixture.out).toBe(0);
    expect(fixture.out).toContain('(the state of world.jsonl.gz)');

    const checked = await project.run(
      'npx',
      ['standin', 'exec', '--import=world.jsonl.gz', '--', 'node', '--input-type=module', '-e', CHECK_IMPORTED],
      { env: { ...databaseEnv(dialect), OLD_KEY: oldKey } },
    );
    expect(checked.code, checked.out).toBe(0);
    // The earlier run's key came with the snapshot's rows; this run's keys were added to its demo project and ad account.
    expect(lastJson(checked.out)).toEqual({
      own: { platform: true },
      run: { platform: true, ads: 200 },
      afterReset: { fixture: true, own: true, thread: 404 },
    });
  });

  it("the example's npm scripts: fixture makes the snapshot, test:fixture starts from it", async () => {
    const made = await project.run('npm', ['run', 'fixture'], { env: databaseEnv(dialect) });
    expect(made.code, made.out).toBe(0);
    const ran = await project.run('npm', ['run', 'test:fixture'], { env: databaseEnv(dialect) });
    expect(ran.out).toMatch(/# pass 2/);
    expect(ran.code, ran.out).toBe(0);
  });

  it('--import takes a snapshot `standin export` made of a served store (SQLite), keys of that store included', async () => {
    const data = mkdtempSync(join(tmpdir(), 'standin-exec-served-'));
    try {
      const serve = spawn(join(project.dir, 'node_modules/.bin/standin'), ['serve', '--data', data, '--port', '0'], {
        cwd: project.dir,
        env: { PATH: process.env.PATH },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let banner = '';
      let errors = '';
      serve.stderr.on('data', (d) => (errors += d));
      const exited = new Promise<void>((resolve) => serve.on('exit', () => resolve()));
      // A server that ends before its banner fails the test at once, with what it printed.
      const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
        serve.stdout.on('data', (d) => {
          banner += d;
          const u = /listening on (http:\/\/[^\s"]+)/.exec(banner);
          const k = /platform API key \(project proj_demo\): (sk-[^\s"]+)/.exec(banner);
          if (u && k) resolve({ url: u[1], key: k[1] });
        });
        serve.on('exit', (code) => reject(new Error(`standin serve exited (${code}) before its banner:\n${banner}${errors}`)));
      });
      const created = await fetch(`${url}/v1/assistants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', name: 'Support bot' }),
      });
      expect(created.status).toBe(200);
      serve.kill('SIGTERM');
      await exited;
      const exported = await project.run('npx', ['standin', 'export', '--data', data, 'served.jsonl.gz']);
      expect(exported.code, exported.out).toBe(0);

      const checked = await project.run(
        'npx',
        ['standin', 'exec', '--import', 'served.jsonl.gz', '--', 'node', '--input-type=module', '-e', CHECK_IMPORTED],
        { env: { ...databaseEnv(dialect), OLD_KEY: key } },
      );
      expect(checked.code, checked.out).toBe(0);
      expect(lastJson(checked.out)).toEqual({
        own: { platform: true },
        run: { platform: true, ads: 200 },
        afterReset: { fixture: true, own: true, thread: 404 },
      });
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});

describe('standin exec with snapshots, refusals', () => {
  it('refuses a missing or broken snapshot, an export folder that does not exist, and unknown options, before running the command', async () => {
    const missing = await project.run('npx', ['standin', 'exec', '--import', 'no-such.jsonl.gz', '--', 'echo ran']);
    expect(missing.code).toBe(1);
    expect(missing.out).toContain('cannot import no-such.jsonl.gz: no such file');
    writeFileSync(join(project.dir, 'not-a-snapshot.gz'), 'hello');
    const broken = await project.run('npx', ['standin', 'exec', '--import', 'not-a-snapshot.gz', '--', 'echo ran']);
    expect(broken.code).toBe(1);
    expect(broken.out).toContain('cannot import not-a-snapshot.gz: ');
    expect(broken.out).toContain('not a gzip file');
    const folder = await project.run('npx', ['standin', 'exec', '--export-on-exit', 'no/such/dir/w.gz', '--', 'echo ran']);
    expect(folder.code).toBe(2);
    expect(folder.out).toContain('--export-on-exit no/such/dir/w.gz: the folder');
    const unknown = await project.run('npx', ['standin', 'exec', '--export-on-exits', 'w.gz', '--', 'echo ran']);
    expect(unknown.code).toBe(2);
    expect(unknown.out).toContain("unknown argument '--export-on-exits'");
    const bare = await project.run('npx', ['standin', 'exec', '--import', '--', 'echo ran']);
    expect(bare.code).toBe(2);
    expect(bare.out).toContain('--import needs a file');
    for (const r of [missing, broken, folder, unknown, bare]) expect(r.out).not.toContain('\nran\n');
  });

  it('without the demo project in the snapshot, the run hands out no platform key, and the snapshot keys work', async () => {
    const config = join(project.dir, 'own-keys.yaml');
    writeFileSync(
      config,
      [
        'organizations:',
        '  - id: org_own',
        '    name: Own',
        '    projects:',
        '      - id: proj_own',
        '        name: Own',
        '        api_keys:',
        '          - name: ci',
        '            value: sk-proj-own-fixture-key-0123456789',
        '',
      ].join('\n'),
    );
    const made = await project.run('npx', [
      'standin',
      'exec',
      '--no-seed',
      '--config',
      'own-keys.yaml',
      '--export-on-exit',
      'own.jsonl.gz',
      '--',
      'true',
    ]);
    expect(made.code, made.out).toBe(0);
    const check = `
      const r = await fetch(process.env.OPENAI_BASE_URL + '/models', { headers: { authorization: 'Bearer sk-proj-own-fixture-key-0123456789' } });
      console.log(JSON.stringify({ status: r.status, key: process.env.OPENAI_API_KEY ?? null }));`;
    const checked = await project.run('npx', [
      'standin',
      'exec',
      '--import',
      'own.jsonl.gz',
      '--',
      'node',
      '--input-type=module',
      '-e',
      check,
    ]);
    expect(checked.code, checked.out).toBe(0);
    expect(lastJson(checked.out)).toEqual({ status: 200, key: null });
  });
});

/** The schemas `standin exec` made in the test database (and not dropped yet). */
async function execSchemas(): Promise<string[]> {
  const c = new pg.Client({ connectionString: process.env.STANDIN_TEST_DATABASE_URL });
  await c.connect();
  try {
    const r = await c.query<{ n: string }>(`SELECT nspname AS n FROM pg_namespace WHERE nspname LIKE 'standin_exec_%'`);
    return r.rows.map((row) => row.n);
  } finally {
    await c.end();
  }
}
