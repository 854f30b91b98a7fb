import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { signInLink } from './routes.js';
import { cookieName } from './session.js';

const cookieFrom = (setCookie: unknown) => String(setCookie).split(';')[0];

describe.each(dialects())('dashboard sign-in and session (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(async () => {
    await s?.close();
  });

  /** The session cookie and its binding header, as the page sends them. */
  const signIn = async () => {
    const res = await s.req('POST', '/dashboard/session', { body: { admin_key: s.keys.admin } });
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']).toMatch(/HttpOnly; SameSite=Strict/);
    expect(res.body.binding_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    return { cookie: cookieFrom(res.headers['set-cookie']), 'x-standin-dashboard': res.body.binding_token as string };
  };

  it('a sign-in link works once and sets an HttpOnly session cookie', async () => {
    const { url } = signInLink(s.ctx);
    const path = url.slice(url.indexOf('/dashboard'));
    const first = await s.req('GET', path);
    expect(first.status).toBe(303);
    // The binding rides in the fragment, which the browser keeps to the page.
    const binding = /^\/dashboard#binding=([A-Za-z0-9_-]{43})$/.exec(first.headers.location)![1];
    const cookie = cookieFrom(first.headers['set-cookie']);
    expect((await s.req('GET', '/admin/v1/clock', { headers: { cookie, 'x-standin-dashboard': binding } })).status).toBe(200);
    const again = await s.req('GET', path);
    expect(again.headers.location).toBe('/dashboard?sign_in=expired');
    expect(again.headers['set-cookie']).toBeUndefined();
  });

  it('refuses a forged or tampered link and cookie', async () => {
    const { url } = signInLink(s.ctx);
    const token = url.split('token=')[1];
    const tampered = token.replace(/^link\.(\d+)/, (_, ms) => `link.${Number(ms) + 1000}`);
    expect((await s.req('GET', `/dashboard/sign-in?token=${tampered}`)).headers.location).toBe('/dashboard?sign_in=expired');
    // A link is not a session (the cookie under the name Standin reads for inject's Host, localhost:80).
    const named = cookieName('localhost:80');
    expect((await s.req('GET', '/admin/v1/clock', { headers: { cookie: `${named}=${token}` } })).status).toBe(401);
    expect((await s.req('GET', '/admin/v1/clock', { headers: { cookie: `${named}=session.9999999999999.x.y` } })).status).toBe(401);
  });

  it("names the cookie after the Host's port, so a second Standin on the same host leaves the first one's session alone", async () => {
    expect([
      cookieName('127.0.0.1:8080'),
      cookieName('[::1]:8081'),
      cookieName('example.com'),
      cookieName('[::1]'),
      cookieName(undefined),
      // A Host that is no host and port names nothing new: only digits ever reach the name.
      cookieName('h:80; Path=/x'),
      cookieName('h:123456'),
    ]).toEqual([
      'standin_session_8080',
      'standin_session_8081',
      'standin_session',
      'standin_session',
      'standin_session',
      'standin_session',
      'standin_session',
    ]);
    const at = async (host: string) => {
      const res = await s.req('POST', '/dashboard/session', { body: { admin_key: s.keys.admin }, headers: { host } });
      return { cookie: cookieFrom(res.headers['set-cookie']), binding: res.body.binding_token as string };
    };
    const a = await at('127.0.0.1:8080');
    const b = await at('127.0.0.1:8081');
    expect(a.cookie).toMatch(/^standin_session_8080=session\./);
    expect(b.cookie).toMatch(/^standin_session_8081=session\./);
    // The browser sends both cookies to both ports: each reads its own.
    const both = `${a.cookie}; ${b.cookie}`;
    const clock = (host: string, binding: string) =>
      s.req('GET', '/admin/v1/clock', { headers: { host, cookie: both, 'x-standin-dashboard': binding } });
    expect((await clock('127.0.0.1:8080', a.binding)).status).toBe(200);
    expect((await clock('127.0.0.1:8081', b.binding)).status).toBe(200);
    expect((await clock('127.0.0.1:8080', b.binding)).status).toBe(401);
    // Signing out clears the cookie of its own port only.
    const out = await s.req('DELETE', '/dashboard/session', {
      headers: { host: '127.0.0.1:8081', cookie: both, 'x-standin-dashboard': b.binding, 'x-standin-csrf': '1' },
    });
    expect(cookieFrom(out.headers['set-cookie'])).toBe('standin_session_8081=');
  });

  it('signs in with the admin key only', async () => {
    const wrong = await s.req('POST', '/dashboard/session', { body: { admin_key: 'sk-admin-nope-nope-nope-nope-nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_admin_key');
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const bad = await s.req('POST', '/dashboard/session', { body: { admin_key: s.keys.admin, extra: 1 } });
    expect(bad.status).toBe(400);
    const crossSite = await s.req('POST', '/dashboard/session', {
      body: { admin_key: s.keys.admin },
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
  });

  it("a cookie alone, or with another session's binding, signs nothing in", async () => {
    const { cookie, 'x-standin-dashboard': binding } = await signIn();
    const other = await signIn();
    for (const headers of <Record<string, string>[]>[
      { cookie },
      { cookie, 'x-standin-dashboard': other['x-standin-dashboard'] },
      { cookie, 'x-standin-dashboard': '' },
    ]) {
      const res = await s.req('GET', '/admin/v1/clock', { headers });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('session_unbound');
      expect((await s.req('GET', '/dashboard/session', { headers })).body.signed_in).toBe(false);
    }
    // The request log keeps neither half.
    const logged = (await s.req('GET', '/admin/v1/requests?path=/dashboard/session&limit=1', { key: 'admin' })).body.data[0];
    const detail = JSON.stringify((await s.req('GET', `/admin/v1/requests/${logged.id}`, { key: 'admin' })).body);
    expect(detail).toContain('binding_token');
    expect(detail).not.toContain(other['x-standin-dashboard']);
    expect(detail).not.toContain(other.cookie.split('=')[1]);
    // The binding alone is no credential either.
    expect((await s.req('GET', '/admin/v1/clock', { headers: { 'x-standin-dashboard': binding } })).status).toBe(401);
    expect((await s.req('GET', '/dashboard/session', { headers: { cookie, 'x-standin-dashboard': binding } })).body.signed_in).toBe(true);
  });

  it('a bound session is refused from another origin, reads and writes alike', async () => {
    const session = await signIn();
    for (const extra of <Record<string, string>[]>[
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'http://localhost:9999', host: 'localhost:80' },
    ]) {
      const res = await s.req('GET', '/admin/v1/clock', { headers: { ...session, ...extra } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('cross_origin');
    }
    expect((await s.req('GET', '/admin/v1/clock', { headers: { ...session, 'sec-fetch-site': 'same-origin' } })).status).toBe(200);
  });

  it('a session reads the control plane; writes need the CSRF header and a same-origin Origin', async () => {
    const session = await signIn();
    expect((await s.req('GET', '/admin/v1/faults', { headers: session })).status).toBe(200);
    const body = { path: '/v1/embeddings', status: 429 };
    const noHeader = await s.req('POST', '/admin/v1/faults', { body, headers: session });
    expect(noHeader.status).toBe(403);
    expect(noHeader.body.error.code).toBe('csrf_header_missing');
    const crossOrigin = await s.req('POST', '/admin/v1/faults', {
      body,
      headers: { ...session, 'x-standin-csrf': '1', origin: 'http://evil.example', host: 'localhost:80' },
    });
    expect(crossOrigin.body.error.code).toBe('cross_origin');
    expect((await s.req('GET', '/admin/v1/faults', { key: 'admin' })).body.data).toHaveLength(0);
    const ok = await s.req('POST', '/admin/v1/faults', {
      body,
      headers: { ...session, 'x-standin-csrf': '1', origin: 'http://localhost:80', host: 'localhost:80' },
    });
    expect(ok.status).toBe(201);
    await s.req('DELETE', '/admin/v1/faults', { key: 'admin' });
  });

  it('signing out spends the session; changing the admin key ends every session', async () => {
    const session = await signIn();
    expect((await s.req('GET', '/dashboard/session', { headers: session })).body.signed_in).toBe(true);
    expect((await s.req('DELETE', '/dashboard/session', { headers: session })).status).toBe(403);
    const out = await s.req('DELETE', '/dashboard/session', { headers: { ...session, 'x-standin-csrf': '1' } });
    expect(out.body.signed_in).toBe(false);
    expect((await s.req('GET', '/admin/v1/clock', { headers: session })).status).toBe(401);

    const other = await signIn();
    const key = s.ctx.auth.adminKey();
    s.ctx.auth.setAdminKey('sk-admin-rotated-key-000000000000000000');
    try {
      expect((await s.req('GET', '/admin/v1/clock', { headers: other })).status).toBe(401);
    } finally {
      s.ctx.auth.setAdminKey(key);
    }
  });

  it('a cookie never stands in for a platform key, and the admin key still works without one', async () => {
    const session = await signIn();
    expect((await s.req('GET', '/v1/models', { headers: session })).status).toBe(401);
    expect((await s.req('GET', '/admin/v1/clock', { key: 'admin' })).status).toBe(200);
    // A wrong admin key with a valid cookie is still refused: the key given is the one checked.
    expect((await s.req('GET', '/admin/v1/clock', { key: 'sk-admin-wrong-0000000000000000000', headers: session })).status).toBe(401);
  });

  it('serves the shell with a strict CSP, redirects the old webhooks page, mints links for scripts', async () => {
    const shell = await s.req('GET', '/dashboard/requests');
    expect(shell.status).toBe(200);
    expect(shell.headers['content-security-policy']).toContain("script-src 'self'");
    expect(shell.body).not.toContain('proj_demo');
    const old = await s.req('GET', '/dashboard/projects/proj_demo/webhooks');
    expect(old.status).toBe(301);
    expect(old.headers.location).toBe('/dashboard/webhooks?project=proj_demo');
    expect((await s.req('POST', '/admin/v1/dashboard/sign_in_links')).status).toBe(401);
    const link = await s.req('POST', '/admin/v1/dashboard/sign_in_links', { key: 'admin' });
    expect(link.status).toBe(201);
    expect(link.body.url).toMatch(/\/dashboard\/sign-in\?token=link\./);
    expect((await s.req('GET', '/dashboard/assets/nope.js')).status).toBe(404);
    expect((await s.req('GET', '/dashboard/assets/..%2Fpackage.json')).status).toBe(400);
  });
});
