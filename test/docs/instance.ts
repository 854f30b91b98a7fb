import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from '../process.js';

/** A Standin started as a user starts it, and what its first-start banner printed. */
export interface Live {
  child: ChildProcess;
  url: string;
  data: string;
  banner: string;
  /** The keys as a user copies them from the banner. */
  keys: { ads: string; platform: string; admin: string };
}

/** The environment of a user's shell: no STANDIN_* of the test run, `standin` on the PATH (as `npm link` puts it). */
export function userEnv(bin: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('STANDIN_')));
  return { ...env, PATH: `${bin}:${process.env.PATH}`, ...extra };
}

/** A folder holding a `standin` command: the package's own bin, as an install links it. */
export function standinOnPath(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(join(root, 'bin/standin.js'), join(bin, 'standin'));
  return bin;
}

/** Waits for `pattern` in what a child prints; rejects if it exits first or takes longer than `ms`. */
export function waitFor(child: ChildProcess, pattern: RegExp, ms = 30_000): Promise<{ match: RegExpExecArray; out: string }> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`nothing like ${pattern} within ${ms} ms:\n${out}`)), ms);
    const look = (d: Buffer) => {
      out += d.toString('utf8');
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ match, out });
      }
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ${pattern}:\n${out}`));
    });
  });
}

/** `node dist/main.js serve` on a fresh data folder and a free port; resolves once the banner is out. */
export async function startLive(env: NodeJS.ProcessEnv): Promise<Live> {
  const data = mkdtempSync(join(tmpdir(), 'standin-docs-'));
  const child = spawn(process.execPath, ['dist/main.js', 'serve'], {
    cwd: root,
    env: { ...env, STANDIN_DATA: data, STANDIN_PORT: '0', STANDIN_MTLS_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { out } = await waitFor(child, /docs: docs\/README\.md/);
  const key = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) throw new Error(`the banner shows no ${re}:\n${out}`);
    return m[1];
  };
  return {
    child,
    data,
    banner: out,
    url: key(/listening on (http:\/\/[^\s"]+)/),
    keys: { ads: key(/(sk-ads-[^\s"]+)/), platform: key(/(sk-proj-[^\s"]+)/), admin: key(/(sk-admin-[^\s"]+)/) },
  };
}

/** Stops a child with SIGTERM; resolves with its exit code. */
export function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

/** Removes a folder made for a test. */
export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true });
