import { afterEach, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { createProxyTrust } from '../../src/core/proxy-trust.js';
import { readSettings } from '../../src/core/settings.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

/**
 * trust_proxy: X-Forwarded-For names the client only when the peer is a listed load balancer. The project
 * IP allowlist is the judge here (it reads the client address Fastify derives).
 */
describe('proxy trust', () => {
  it('believes listed addresses and CIDRs, IPv4-mapped peers too, and refuses what is neither', () => {
    const trust = createProxyTrust(['10.0.0.5', '192.168.0.0/16', 'fd00::/8']);
    expect(['10.0.0.5', '::ffff:10.0.0.5', '192.168.4.4', 'fd00::1'].map((a) => trust.trusts(a))).toEqual([true, true, true, true]);
    expect(['10.0.0.6', '127.0.0.1', '::1', 'fe80::1'].map((a) => trust.trusts(a))).toEqual([false, false, false, false]);
    expect(createProxyTrust().trusts('127.0.0.1')).toBe(false);
    for (const bad of ['nope', '10.0.0.0/33', '10.0.0.0/8/1', '10.0.0.0/x']) expect(() => createProxyTrust([bad])).toThrow(/trust_proxy/);
    expect(readSettings(['--trust-proxy', '10.0.0.5, 10.1.0.0/16']).settings.trustProxy).toBe('10.0.0.5, 10.1.0.0/16');
    expect(readSettings([], { STANDIN_TRUST_PROXY: '10.0.0.5' }).settings.trustProxy).toBe('10.0.0.5');
  });
});

describe.each(dialects())('trust_proxy and the IP allowlist (%s)', (dialect) => {
  let s: TestStandin | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const probe = (remoteAddress: string, forwardedFor?: string) =>
    s!.app
      .inject({
        method: 'GET',
        url: '/v1/models',
        remoteAddress,
        headers: { authorization: `Bearer ${s!.keys.platform}`, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
      })
      .then((r) => ({ status: r.statusCode, body: r.json() }));
  async function allow(cidrs: string[]) {
    const set = await s!.req('PUT', '/admin/v1/projects/proj_demo/ip_allowlist', { key: 'admin', body: { cidrs } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    s!.ctx.clock.advance(2_000); // past the allowlist cache
  }

  it('off by default: a forged X-Forwarded-For changes nothing', async () => {
    s = await startTestStandin({ dialect });
    await allow(['203.0.113.0/24']);
    const forged = await probe('127.0.0.1', '203.0.113.9');
    expect(forged.status).toBe(403);
    expect(forged.body.error).toMatchObject({ code: 'ip_not_allowed' });
    expect(forged.body.error.message).toContain('127.0.0.1');
    expect((await probe('203.0.113.9')).status).toBe(200);
    // The other way round: an allowed peer stays allowed whatever it claims to forward.
    await allow(['127.0.0.1/32']);
    expect((await probe('127.0.0.1', '198.51.100.1')).status).toBe(200);
  });

  it('with the balancer listed, the client it names is judged, and only from that balancer', async () => {
    s = await startTestStandin({ dialect, settings: { trustProxy: '127.0.0.1' } });
    await allow(['203.0.113.0/24']);
    expect((await probe('127.0.0.1', '203.0.113.9')).status).toBe(200);
    const outside = await probe('127.0.0.1', '198.51.100.1');
    expect(outside.status).toBe(403);
    expect(outside.body.error.message).toContain('198.51.100.1');
    // A client that talks to Standin directly cannot claim an address.
    const direct = await probe('198.51.100.7', '203.0.113.9');
    expect(direct.status).toBe(403);
    expect(direct.body.error.message).toContain('198.51.100.7');
    // A chain: the client forged the first entry, the balancer appended the address it saw; that one counts.
    expect((await probe('127.0.0.1', '203.0.113.9, 198.51.100.1')).status).toBe(403);
  });

  it('the config file sets it when no flag does, and refuses an entry that is no address', async () => {
    s = await startTestStandin({ dialect });
    await allow(['203.0.113.0/24']);
    expect((await probe('127.0.0.1', '203.0.113.9')).status).toBe(403);
    await applyConfig(s.ctx, s.modules, { trust_proxy: ['127.0.0.0/8'] });
    expect((await probe('127.0.0.1', '203.0.113.9')).status).toBe(200);
    await expect(applyConfig(s.ctx, s.modules, { trust_proxy: ['not-an-address'] })).rejects.toThrow(/not an IP address or CIDR/);
    expect(s.ctx.services.proxyTrust.entries()).toEqual(['127.0.0.0/8']);
  });
});
