import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** Starts `node dist/main.js …` (built by `npm test`) and resolves with its output once it listens. */
function startProcess(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; out: string; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['dist/main.js', ...args], { env: { ...process.env, STANDIN_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no start in time:\n${out}\n${err}`)), 20_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
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
      const curl = /curl -s '([^']+)' -H 'Authorization: Bearer (\S+)'/.exec(out);
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
    await expect(startProcess(['serve', '--port', '0', '--host', '0.0.0.0', '--data', dir])).rejects.toThrow(/refusing to listen on 0.0.0.0 without an admin key/);
    await expect(startProcess(['serve', '--port', '0', '--host', '0.0.0.0', '--data', join(dir, 'fresh')], { STANDIN_ADMIN_KEY: 'sk-admin-operator-set-000000000000' })).rejects.toThrow(
      /generated demo keys/,
    );
  });

  it('migrate runs the migrations and says so', async () => {
    const child = spawn(process.execPath, ['dist/main.js', 'migrate', '--data', join(dir, 'm')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    expect(await exitCode(child)).toBe(0);
    expect(out).toMatch(/applied: .*ads_init/);
  });
});
