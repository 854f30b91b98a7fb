import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { until } from '../fleet/instances.js';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { ensureBuilt, freePort, root } from '../process.js';
import { isLoopback, isUnspecified } from '../../src/core/settings.js';

/** The smaller findings of issue 34 that touch the request path: probes and client aborts. */

describe('a health probe names no internal address without the admin key', () => {
  let s: TestStandin;
  let redisPort: number;
  beforeAll(async () => {
    redisPort = await freePort();
    s = await startTestStandin({ settings: { redisUrl: `redis://127.0.0.1:${redisPort}`, rateLimitOutage: 'closed' } });
    // The limiter learns of the outage from its first attempt to reach Redis.
    await until(
      async () => (await s.req('GET', '/v1/models', { key: 'platform' }), (await s.req('GET', '/readyz')).status === 503),
      10_000,
    );
  });
  afterAll(async () => s?.close());

  it.each(['/readyz', '/healthz'])('%s: what is down, not where; the whole cause for the admin key', async (path) => {
    const anyone = JSON.stringify((await s.req('GET', path)).body);
    expect(anyone).toContain('Redis unreachable');
    expect(anyone).not.toContain(String(redisPort));
    expect(anyone).not.toContain('127.0.0.1');
    expect(JSON.stringify((await s.req('GET', path, { key: 'platform' })).body)).not.toContain(String(redisPort));
    expect(JSON.stringify((await s.req('GET', path, { key: 'admin' })).body)).toContain(String(redisPort));
  });
});

describe('a client that goes away mid-body is a client abort, not a store outage', () => {
  let s: TestStandin;
  let port: number;
  beforeAll(async () => {
    s = await startTestStandin();
    port = Number(new URL(await s.listen()).port);
  });
  afterAll(async () => s?.close());

  /** Sends the head and part of a body, then cuts the connection. */
  const cut = (head: string, part: string) =>
    new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(head + part, () => setTimeout(() => socket.destroy(), 100));
      });
      socket.on('close', () => resolve());
      socket.on('error', () => {});
    });

  it('an upload and a JSON body cut short: logged at info with the cause, never as the store', async () => {
    const error = vi.spyOn(s.ctx.log, 'error');
    const info = vi.spyOn(s.ctx.log, 'info');
    const boundary = 'xyz';
    const auth = `Authorization: Bearer ${s.keys.platform}\r\n`;
    await cut(
      `POST /v1/files HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello`,
    );
    await cut(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
      '{"model":"gpt-4o","messages":[',
    );
    await until(async () => info.mock.calls.filter((c) => /client closed/.test(String(c[1]))).length === 2, 5_000);
    expect(error.mock.calls.map((c) => String(c[1]))).toEqual([]);
  });
});

describe('--host is read as an address, however spelled', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['[::1]', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::ffff:127.0.0.1', true],
    ['localhost', true],
    ['127.example.com', false],
    ['::2', false],
    ['0.0.0.0', false],
    ['10.0.0.1', false],
  ])('%s is loopback: %s', (host, loopback) => expect(isLoopback(host)).toBe(loopback));

  it.each([
    ['0.0.0.0', true],
    ['::', true],
    ['0:0:0:0:0:0:0:0', true],
    ['::1', false],
    ['127.0.0.1', false],
  ])('%s is every interface: %s', (host, any) => expect(isUnspecified(host)).toBe(any));

  it('`serve --host 0:0:0:0:0:0:0:1` starts as loopback does and announces its loopback URL', async () => {
    ensureBuilt();
    const port = await freePort();
    const data = mkdtempSync(join(tmpdir(), 'standin-host-'));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('STANDIN_')));
    const args = ['dist/main.js', 'serve', '--host', '0:0:0:0:0:0:0:1', '--port', String(port), '--data', data, '--log-format', 'pretty'];
    const child = spawn(process.execPath, args, {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d));
      child.stderr!.on('data', (d: Buffer) => (out += d));
      await until(async () => out.includes('API reference') || child.exitCode !== null, 30_000);
      const banner = out.split('\n').find((l) => l.startsWith('Standin is listening on'));
      expect(banner, out).toBe(`Standin is listening on http://localhost:${port}`);
      // Loopback: the admin key is generated and printed, not refused for want of one.
      expect(out).toContain('admin key (control plane');
    } finally {
      child.kill();
      rmSync(data, { recursive: true, force: true });
    }
  }, 60_000);
});
