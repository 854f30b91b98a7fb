import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freePort, root } from '../process.js';

/**
 * A signal sent to `npm start` reaches Standin. npm forwards SIGTERM to its script's shell; a shell that
 * ran `node …` as the last command of a chain died and left Standin running, orphaned, holding its port,
 * never drained (`docker stop` on `CMD ["npm", "start"]`, a CI job's `kill %1`, a supervisor of npm).
 * The scripts `exec` their last command, so Standin is npm's own child. Run here on package.json's own
 * `start` script, in a folder whose `build` does nothing and whose `dist` is this checkout's (a build of
 * the checkout's `dist` would change it under the other tests running from it).
 */
const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Whether process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start and signals', () => {
  it('every script that chains into node or vitest execs it, so a signal to npm reaches that process', () => {
    for (const [name, script] of Object.entries(scripts)) {
      if (!script.includes('&&')) continue;
      const last = script.split('&&').pop()!.trim();
      // A chain of short steps (lint) may end with one; those that start a process that lasts must exec it.
      if (/^(node|vitest)\b/.test(last)) expect.fail(`script ${name} runs \`${last}\` without exec`);
    }
    expect(scripts.start).toMatch(/&& exec node dist\/main\.js serve$/);
  });

  it('SIGTERM to npm start drains Standin, which exits; npm exits 0', async () => {
    ensureBuilt();
    const dir = mkdtempSync(join(tmpdir(), 'standin-npm-start-'));
    dirs.push(dir);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'npm-start-signals', private: true, scripts: { build: 'node -e 0', start: scripts.start } }),
    );
    symlinkSync(join(root, 'dist'), join(dir, 'dist'));
    mkdirSync(join(dir, 'data'));
    const port = await freePort();
    const npm = spawn('npm', ['start', '--', '--port', String(port), '--data', join(dir, 'data')], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // npm's own end ('exit', not 'close': an orphan left holding npm's pipes would keep them open).
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      npm.on('exit', (code, signal) => r({ code, signal })),
    );
    const closed = new Promise((r) => npm.on('close', r));
    let pid = 0;
    try {
      for (const deadline = Date.now() + 60_000; ;) {
        pid = Number(/"pid":(\d+),[^\n]*"event":"instance\.started"/.exec(out)?.[1] ?? 0);
        if (
          pid &&
          (await fetch(`http://127.0.0.1:${port}/readyz`).then(
            (r) => r.status === 200,
            () => false,
          ))
        )
          break;
        if (npm.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not get ready:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(pid).not.toBe(npm.pid);
      process.kill(npm.pid!, 'SIGTERM');
      expect(await exited, out).toEqual({ code: 0, signal: null });
      for (const deadline = Date.now() + 10_000; alive(pid) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 50));
      expect(alive(pid), `Standin (pid ${pid}) still runs after npm ended:\n${out}`).toBe(false);
      // Its last lines, once npm's pipes are closed (now that nothing holds them).
      await Promise.race([closed, new Promise((r) => setTimeout(r, 5_000))]);
      expect(out).toContain('"event":"instance.stopped"');
      await expect(fetch(`http://127.0.0.1:${port}/readyz`)).rejects.toThrow();
    } finally {
      // Whatever is left of npm's group (the test failed): gone.
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // none left
      }
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 90_000);
});
