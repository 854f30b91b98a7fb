import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freePort, root } from '../process.js';

const ADMIN = 'sk-admin-log-line-test-key-00000000000000';

describe('one JSON log line per request at the default level', () => {
  const dir = mkdtempSync(join(tmpdir(), 'standin-log-'));
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('names method, route template, status, latency, project and request id, and no secret', async () => {
    ensureBuilt();
    const port = await freePort();
    // No STANDIN_LOG_LEVEL: the default level is what an operator gets.
    const env: NodeJS.ProcessEnv = { ...process.env, STANDIN_DATA: dir, STANDIN_ADMIN_KEY: ADMIN, STANDIN_PORT: String(port) };
    delete env.STANDIN_LOG_LEVEL;
    delete env.STANDIN_DATABASE_URL;
    child = spawn(process.execPath, ['dist/main.js', 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await expect.poll(() => out.includes('Standin is listening on'), { timeout: 30_000 }).toBe(true);
    // The banner is one JSON line too (the default --log-format), its text lines in `lines`.
    const banner = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { event?: string; msg: string; lines?: string[] })
      .find((l) => l.event === 'instance.started')!;
    expect(banner.msg).toMatch(/^Standin is listening on http:\/\/127\.0\.0\.1:\d+$/);
    const platformKey = /platform API key[^:]*:\s*(\S+)/.exec(banner.lines!.join('\n'))![1];
    // Written to a pipe: no sign-in link, but how to get one.
    expect(out).not.toContain('/dashboard/sign-in?token=');
    expect(banner.lines!.join('\n')).toContain('standin dashboard-link');
    const base = `http://127.0.0.1:${port}`;

    const models = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${platformKey}` } });
    const model = ((await models.json()) as { data: { id: string }[] }).data[0].id;
    const one = await fetch(`${base}/v1/models/${model}?api_key=sk-query-secret-0000`, {
      headers: { authorization: `Bearer ${platformKey}` },
    });
    const refused = await fetch(`${base}/v1/models`, { headers: { authorization: 'Bearer sk-wrong-secret-0000000000' } });
    expect([models.status, one.status, refused.status]).toEqual([200, 200, 401]);

    const lines = () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request');
    await expect.poll(() => lines().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    const [a, b, c] = lines();
    expect(a).toMatchObject({ level: 30, method: 'GET', route: '/v1/models', status: 200, project: 'proj_demo' });
    expect(a.reqId).toBe(models.headers.get('x-request-id'));
    expect(typeof a.ms).toBe('number');
    expect(b).toMatchObject({ route: '/v1/models/:model', status: 200, reqId: one.headers.get('x-request-id') });
    expect(c).toMatchObject({ route: '/v1/models', status: 401, project: null });
    const text = JSON.stringify(lines());
    for (const secret of [platformKey, 'sk-query-secret-0000', 'sk-wrong-secret-0000000000', ADMIN]) expect(text).not.toContain(secret);

    // The banner's way to a sign-in link: the CLI asks this instance for one, and it signs a browser in.
    const link = execFileSync(process.execPath, ['dist/main.js', 'dashboard-link'], { cwd: root, env, encoding: 'utf8' }).trim();
    expect(link).toMatch(new RegExp(`^${base}/dashboard/sign-in\\?token=`));
    const signIn = await fetch(link, { redirect: 'manual' });
    expect(signIn.status).toBeGreaterThanOrEqual(300);
    expect(signIn.status).toBeLessThan(400);
    expect(signIn.headers.get('set-cookie')).toBeTruthy();
    expect(out).not.toContain(link);

    // The instance's state changes, each an `event` at info; the stop's lines are written before the process ends.
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const all = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const events = all.filter((l) => typeof l.event === 'string');
    expect(events.filter((l) => l.event === 'instance.started')).toHaveLength(1);
    expect(events.map((l) => l.event).filter((e) => e !== 'instance.started')).toEqual([
      'migrations.started',
      'migrations.finished',
      'instance.listening',
      'instance.ready',
      'instance.signal',
      'instance.draining',
      'instance.stopped',
    ]);
    expect(events.every((l) => l.level === 30)).toBe(true);
    expect(events.find((l) => l.event === 'instance.listening')).toMatchObject({ listeners: { http: base } });
    expect(all.filter((l) => l.msg === 'request')).toHaveLength(lines().length);
    // No line of the log but the banner (which shows a first start's demo keys once, as on a terminal) carries a key.
    const logLines = JSON.stringify(all.filter((l) => l.event !== 'instance.started'));
    for (const secret of [platformKey, ADMIN]) expect(logLines).not.toContain(secret);
    expect(JSON.stringify(all)).not.toContain(ADMIN);
  });
});
