import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress, createOutbound, embeddedIPv4, readCapped } from './outbound.js';

describe('classifyAddress', () => {
  it.each([
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['169.254.10.10', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.170.2', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd12:3456::1', 'private'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['::ffff:a9fe:a9fe', 'cloud metadata'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['2002:c0a8:0101::1', 'private'],
    ['::127.0.0.1', 'loopback'],
  ])('%s is %s', (address, reason) => {
    expect(classifyAddress(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:0808:0808::1'])(
    '%s is public',
    (address) => {
      expect(classifyAddress(address)).toBeNull();
    },
  );

  it('reads the IPv4 address inside IPv6 forms', () => {
    expect(embeddedIPv4('::ffff:192.168.0.1')).toBe('192.168.0.1');
    expect(embeddedIPv4('64:ff9b::0a00:0001')).toBe('10.0.0.1');
    expect(embeddedIPv4('2606:4700::1')).toBeNull();
  });
});

describe('createOutbound', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < 64 && res.write(chunk)) sent++;
          if (sent >= 64) res.end();
          else res.once('drain', pump);
        };
        pump();
        return;
      }
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2_000);
      if (req.url === '/redirect') return void res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      res.end('hello');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses loopback by default, before any byte is sent', async () => {
    const out = createOutbound();
    await expect(out.fetch(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ cause: { code: 'ERR_SSRF_BLOCKED' } });
    await expect(out.request(`http://localhost:${port}/`)).rejects.toMatchObject({ code: 'ERR_SSRF_BLOCKED' });
    await expect(out.request(`http://[::ffff:127.0.0.1]:${port}/`)).rejects.toMatchObject({ code: 'ERR_SSRF_BLOCKED' });
    await out.close();
  });

  it('refuses metadata and private addresses even with loopback allowed', async () => {
    const out = createOutbound({ allowLoopback: true, timeoutMs: 1_000 });
    await expect(out.request('http://169.254.169.254/latest/meta-data/')).rejects.toMatchObject({ code: 'ERR_SSRF_BLOCKED' });
    await expect(out.request('http://10.0.0.1/')).rejects.toMatchObject({ code: 'ERR_SSRF_BLOCKED' });
    await expect(out.request('http://[fe80::1]/')).rejects.toMatchObject({ code: 'ERR_SSRF_BLOCKED' });
    expect(out.allowed('127.0.0.1')).toBe(true);
    expect(out.allowed('::1')).toBe(true);
    await out.close();
  });

  it('connects to loopback when allowed, by flag, CIDR or host name', async () => {
    for (const opts of [{ allowLoopback: true }, { allow: ['127.0.0.0/8'] }, { allow: ['localhost'] }]) {
      const out = createOutbound(opts);
      const res = await out.fetch(`http://localhost:${port}/`);
      expect(await res.text()).toBe('hello');
      await out.close();
    }
  });

  it('does not follow redirects by default', async () => {
    const out = createOutbound({ allowLoopback: true });
    const res = await out.fetch(`http://127.0.0.1:${port}/redirect`);
    expect(res.status).toBe(302);
    // Following it on request still goes through the guard, which refuses the metadata address.
    await expect(out.fetch(`http://127.0.0.1:${port}/redirect`, { redirect: 'follow' })).rejects.toMatchObject({
      cause: { code: 'ERR_SSRF_BLOCKED' },
    });
    await out.close();
  });

  it('times out', async () => {
    const out = createOutbound({ allowLoopback: true, timeoutMs: 200 });
    await expect(out.request(`http://127.0.0.1:${port}/slow`)).rejects.toThrow();
    await expect(out.fetch(`http://127.0.0.1:${port}/slow`)).rejects.toThrow();
    await out.close();
  });

  it('reads bodies up to a cap, from both client styles', async () => {
    const out = createOutbound({ allowLoopback: true });
    const a = await readCapped(await out.fetch(`http://127.0.0.1:${port}/big`), 1000);
    expect(a).toMatchObject({ truncated: true, bytes: 1000 });
    expect(a.text).toBe('x'.repeat(1000));
    const b = await readCapped(await out.request(`http://127.0.0.1:${port}/big`), 100_000);
    expect(b).toMatchObject({ truncated: true, bytes: 100_000 });
    const c = await readCapped(await out.request(`http://127.0.0.1:${port}/`), 1000);
    expect(c).toEqual({ text: 'hello', truncated: false, bytes: 5 });
    await out.close();
  });

  it('rejects malformed allow entries', () => {
    expect(() => createOutbound({ allow: ['10.0.0.0/40'] })).toThrow(/prefix/);
    expect(() => createOutbound({ allow: ['example.com/8'] })).toThrow(/CIDR/);
  });
});
