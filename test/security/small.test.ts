import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { until } from '../fleet/instances.js';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { freePort } from '../process.js';

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
