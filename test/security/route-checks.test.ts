import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/admin/request-log.js';
import { lenientPath, routerPath } from '../../src/core/route-path.js';
import { startTestStandin, type TestStandin } from '../helpers.js';

/**
 * The checks around routing other than the front door read the path as the router does (or the route's
 * template), so a spelling of the URL cannot change what they decide (docs/security.md, "Request paths").
 */

describe('routerPath reads a URL as the router does', () => {
  it.each([
    ['/v1/models', '/v1/models'],
    ['/%761/models?x=%2F', '/v1/models'],
    ['/%61dmin/v1/snapshot/', '/admin/v1/snapshot'],
    ['/admin%2Fv1/snapshot', '/admin%2Fv1/snapshot'],
    ['/v1/files/a%252Fb', '/v1/files/a%252Fb'],
    ['http://127.0.0.1:8080/admin/v1/snapshot', '/admin/v1/snapshot'],
    ['HTTPS://h/%61dmin/v1/x?y', '/admin/v1/x'],
    ['http://h?q', '/'],
    ['/v1/models#frag', '/v1/models'],
    ['/v1/%zz', null],
    ['http:///v1/models', null],
    ['http://h/v1#/x', null],
  ])('%s → %s', (url, path) => expect(routerPath(url)).toBe(path));
});

describe('lenientPath reads a URL the router cannot decode for the API it was meant for', () => {
  it.each([
    ['/%61dmin/v1/%zz', '/admin/v1/%zz'],
    ['/%761/files/%E9%zz?x', '/v1/files/%E9%zz'],
    ['/a%2Fb/%zz', '/a%2Fb/%zz'],
    ['http://h/%61ds/v1/%zz', '/ads/v1/%zz'],
  ])('%s → %s', (url, path) => expect(lenientPath(url)).toBe(path));
});

describe('the request log masks a secret however the URL spells it', () => {
  const key = 'sk-proj-Abc123def456ghi789jkl012mno345pqr';
  it.each([
    `/v1/models?q=${key}`,
    `/v1/models?q=${key.replace('-', '%2D')}`,
    `/v1/models?q=${encodeURIComponent(key).replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)}`,
    `/v1/models?api%5Fkey=hunter2hunter2`,
  ])('%s', (url) => {
    const shown = redactUrl(url);
    expect(decodeURIComponent(shown)).not.toContain(key);
    expect(decodeURIComponent(shown)).not.toContain('hunter2');
  });
});

describe('faults and the request log decide on the routed path', () => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin();
  });
  afterAll(async () => s?.close());

  const fault = async (body: object) => {
    const r = await s.req('POST', '/admin/v1/faults', { key: 'admin', body: { status: 503, count: 100, ...body } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.id as string;
  };

  it('a fault on /v1/models takes /%761/models; no fault reaches the control plane however spelled', async () => {
    const id = await fault({ path: '/v1/models' });
    for (const url of ['/v1/models', '/%761/models', '/v%31/models/']) {
      const r = await s.req('GET', url, { key: 'platform' });
      expect(r.status, url).toBe(503);
      expect(r.headers['x-standin-fault'], url).toBe(id);
    }
    await fault({ path: '/**' });
    for (const url of ['/admin/v1/clock', '/%61dmin/v1/clock', '/admin/%761/clock', '/%68ealthz'])
      expect((await s.req('GET', url, { key: 'admin' })).status, url).toBe(200);
    expect((await s.req('DELETE', '/admin/v1/faults', { key: 'admin' })).status).toBe(200);
  });

  it('an unmatched /dashboard… URL is logged; a routed health probe is not, however spelled', async () => {
    s.requestLog.clear?.();
    await s.req('GET', '/%68ealthz');
    await s.req('GET', '/dashboardx/nothing', { headers: { 'x-standin-dashboard': '1' } });
    const logged = (await s.req('GET', '/admin/v1/requests?limit=100', { key: 'admin' })).body.data.map((r: { path: string }) => r.path);
    expect(logged).not.toContain('/%68ealthz');
    expect(logged).toContain('/dashboardx/nothing');
  });
});
