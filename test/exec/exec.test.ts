// `npx standin exec -- <command>` from a user's project, with the packed package installed there.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
    const schemasBefore = dialect === 'postgres' ? await execSchemas() : [];
    try {
      const { code, out } = await project.run(
        'npx',
        ['standin', 'exec', '--', 'node', '-e', 'console.log("at", process.env.STANDIN_URL); process.exit(7)'],
        { env: { ...databaseEnv(dialect), TMPDIR: tmp } },
      );
      expect(code).toBe(7);
      if (dialect === 'postgres') expect(await execSchemas()).toEqual(schemasBefore);
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
