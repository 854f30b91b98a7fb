import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modules } from '../../src/server/modules.js';
import { caller, ensureBuilt, freePort, freshDatabaseUrl, root } from '../process.js';

/**
 * Upgrading one instance at a time (docs/deploy.md): a migration keeps the schema usable by the code one
 * version back. An instance built from the commit before the latest migration serves beside one built
 * from this tree, on one database that the newer one migrated; and the older one still starts on it (a
 * restart in the middle of an upgrade). The older version is built from git: `git archive` of that commit,
 * bundled with esbuild against this tree's node_modules, as bench/ingest.mjs does.
 */
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;

/** The newest migration of this tree, and the commit before the one that added it (or why there is none). */
function previousVersion(): { migration: string; commit: string } | { skip: string } {
  const names = modules.flatMap((m) => Object.keys(m.migrations ?? {})).sort();
  const migration = names.at(-1)!;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  try {
    git('rev-parse', '--git-dir');
  } catch {
    return { skip: 'not a git checkout' };
  }
  // The oldest commit of the mainline (first parents: a merge counts as its branch's change) that added the
  // name; its first parent is the version just before, as a fleet ran it.
  const added = git('log', '--first-parent', '--diff-merges=first-parent', '--format=%H', '--reverse', '-S', migration, '--', 'src').split(
    '\n',
  )[0];
  if (!added) return { skip: `the commit that added ${migration} is not in the history (a shallow clone, or not committed yet)` };
  try {
    return { migration, commit: git('rev-parse', '--verify', '--quiet', `${added}^1`) };
  } catch {
    return { skip: `the commit before ${added.slice(0, 12)} (which added ${migration}) is not in the history (a shallow clone)` };
  }
}

/** The older version's server, bundled once per commit into node_modules/.cache (where its packages resolve). */
async function bundleAt(commit: string): Promise<string> {
  const dir = join(root, 'node_modules/.cache/standin-upgrade', commit);
  const main = join(dir, 'main.js');
  if (existsSync(main)) return main;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${commit} src | tar -x -C '${dir}'`], { cwd: root });
  // The options `npm run build` bundles the server with (scripts/ is plain JavaScript, imported by path).
  const options = join(root, 'scripts/bundle-options.mjs');
  const { serverBundle } = (await import(options)) as { serverBundle: BuildOptions };
  await build({ entryPoints: [join(dir, 'src/main.ts')], outfile: join(dir, 'main.tmp.js'), ...serverBundle, logLevel: 'error' });
  execFileSync('mv', [join(dir, 'main.tmp.js'), main]);
  return main;
}

/**
 * The first commit whose migration runner starts on a store with migrations it does not know (when it has all
 * of its own: 'migrate skips the Migrator when every migration is applied'); the runner now also leaves them
 * alone when it has some of its own to apply (src/store/migrate.ts).
 */
const TOLERANT = '78569114d3ddb5b275c841ef40d7172ed8d6c674';

function restartsOnNewerSchema(commit: string): boolean {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', TOLERANT, commit], { cwd: root, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const previous = previousVersion();
if ('skip' in previous) console.warn(`test/deploy/upgrade skipped: ${previous.skip}`);

const ADMIN_KEY = `sk-admin-upgrade-${randomBytes(12).toString('hex')}`;
const API_KEY = `sk-proj-upgrade-${randomBytes(12).toString('hex')}`;

describe.runIf(databaseUrl && !('skip' in previous))('an upgrade one instance at a time', () => {
  const { migration, commit } = previous as { migration: string; commit: string };
  const children: ChildProcess[] = [];
  let dir: string;
  let url: string;
  let oldMain: string;

  /** Starts `script serve` on the shared database; resolves with its base URL once it listens. */
  const start = async (script: string) => {
    const port = await freePort();
    const child = spawn(process.execPath, [script, 'serve'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        STANDIN_DATABASE_URL: url,
        STANDIN_PORT: String(port),
        STANDIN_DATA: join(dir, `data-${port}`),
        STANDIN_ADMIN_KEY: ADMIN_KEY,
        STANDIN_CONFIG: join(dir, 'standin.json'),
        STANDIN_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stderr!.on('data', (d) => (out += d));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${script} did not start:\n${out}`)), 60_000);
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('Standin is listening on')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`${script} exited with ${code}:\n${out}`)));
    });
    return `http://127.0.0.1:${port}`;
  };
  const applied = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<{ name: string }>('select name from kysely_migration')).rows.map((r) => r.name);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'standin-upgrade-'));
    writeFileSync(
      join(dir, 'standin.json'),
      JSON.stringify({
        models: { 'upgrade-*': { provider: 'builtin' } },
        organizations: [
          { id: 'org_up', name: 'Up', projects: [{ id: 'proj_up', name: 'Up', api_keys: [{ name: 'app', value: API_KEY }] }] },
        ],
      }),
    );
    [url, oldMain] = await Promise.all([freshDatabaseUrl('upgrade'), bundleAt(commit)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(
      children
        .filter((c) => c.exitCode === null)
        .map((c) => {
          const exited = new Promise((r) => c.once('exit', r));
          c.kill('SIGTERM');
          return exited;
        }),
    );
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`the version before ${migration} serves beside this one on the database this one migrated (and restarts on it, from versions whose runner allows it)`, async () => {
    // The fleet runs the older version; then one instance is upgraded (it applies the newest migration).
    const older = await start(oldMain);
    expect(await applied()).not.toContain(migration);
    const newer = await start(join(root, 'dist/main.js'));
    expect(await applied()).toContain(migration);
    // And an older instance restarted meanwhile starts on the migrated database: from the version whose
    // migration runner leaves a newer one's migrations alone (before it, Kysely called them missing).
    const instances = [older, newer];
    if (restartsOnNewerSchema(commit)) instances.push(await start(oldMain));
    else
      console.warn(
        `test/deploy/upgrade: ${commit.slice(0, 12)} predates ${TOLERANT.slice(0, 12)}: its restart on a newer schema is not checked`,
      );

    const callers = instances.map((base) => caller(() => base, API_KEY));
    const v2 = { 'openai-beta': 'assistants=v2' };
    const call = (i: number, path: string, init: { method?: string; body?: unknown } = {}) =>
      fetch(`${instances[i]}${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...v2 },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

    // Each writes, the others read; a run started on each completes (its job is claimed by any of them).
    const n = instances.length;
    for (let i = 0; i < n; i++) {
      const made = await call(i, '/v1/assistants', { method: 'POST', body: { model: 'upgrade-model', name: `made by ${i}` } });
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      for (let j = 0; j < n; j++) expect((await call(j, `/v1/assistants/${made.body.id}`)).body.name).toBe(`made by ${i}`);
      const run = await call(i, '/v1/threads/runs', {
        method: 'POST',
        body: { assistant_id: made.body.id, thread: { messages: [{ role: 'user', content: `hello ${i}` }] } },
      });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      let status = run.body.status;
      for (let k = 0; k < 400 && !['completed', 'failed', 'cancelled', 'expired'].includes(status); k++) {
        await new Promise((r) => setTimeout(r, 25));
        status = (await call((i + 1) % n, `/v1/threads/${run.body.thread_id}/runs/${run.body.id}`)).body.status;
      }
      expect(status).toBe('completed');
      const messages = await call((i + 2) % n, `/v1/threads/${run.body.thread_id}/messages?order=asc`);
      expect(messages.body.data.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    }
    // The platform API's plain reads answer alike on both versions.
    for (const c of callers) expect((await c('/v1/models')).status).toBe(200);
  }, 120_000);
});
