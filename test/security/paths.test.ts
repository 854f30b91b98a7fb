import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Module } from '../../src/core/module.js';
import { modules as defaultModules } from '../../src/server/modules.js';
import { startTestStandin, type TestStandin } from '../helpers.js';

/**
 * The probe of issue 34, generated: every protected route of the built app, reached through the spellings a
 * router may read as that route (a percent-encoded letter, in either hex case; `%2F`; doubled slashes; dot
 * segments; a trailing slash; `;` parameters; a mixed-case prefix; an absolute-form request line), answers
 * 401 without a key or with a key of another kind, or a 404 of the router. Never 2xx, never an answer of
 * the route (a 400 of its validation, a 404 of its handler).
 */

interface Route {
  method: string;
  url: string;
}
type Kind = 'platform' | 'ads' | 'admin';

const PREFIXES: [string, Kind][] = [
  ['/admin/v1/', 'admin'],
  ['/ads/v1/', 'ads'],
  ['/v1/', 'platform'],
];
const kindOf = (url: string) => PREFIXES.find(([p]) => url.startsWith(p))?.[1];

/** Collects the routes as they are registered: a module whose routes() runs before every other's. */
function routeCollector(into: Route[]): Module {
  return {
    name: 'route-collector',
    routes(app) {
      app.addHook('onRoute', (route) => {
        for (const method of [route.method].flat()) into.push({ method, url: route.url });
      });
    },
  };
}

/** A concrete path of a template: each parameter and wildcard filled. */
const concrete = (template: string) => template.replace(/:[^/]+/g, 'x1').replace(/\*/g, 'x');

const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(2, '0');

/** The spellings of a path that a lax comparison could take for something else, the route's own included. */
function variants(path: string): string[] {
  const out = new Set<string>();
  for (let i = 1; i < path.length; i++) {
    const c = path[i];
    if (!/[A-Za-z0-9_]/.test(c)) continue;
    const h = hex(c);
    out.add(`${path.slice(0, i)}%${h.toLowerCase()}${path.slice(i + 1)}`);
    out.add(`${path.slice(0, i)}%${h.toUpperCase()}${path.slice(i + 1)}`);
  }
  const slashes = [...path.matchAll(/\//g)].map((m) => m.index).filter((i) => i > 0);
  for (const i of slashes) {
    out.add(`${path.slice(0, i)}%2F${path.slice(i + 1)}`);
    out.add(`${path.slice(0, i)}%2f${path.slice(i + 1)}`);
    out.add(`${path.slice(0, i)}/${path.slice(i)}`);
    out.add(`${path.slice(0, i)}/.${path.slice(i)}`);
    out.add(`${path.slice(0, i)}/x/..${path.slice(i)}`);
    out.add(`${path.slice(0, i)}/%2e${path.slice(i)}`);
  }
  out.add(`/${path}`);
  out.add(`${path}/`);
  out.add(`${path};x=1`);
  out.add(`${path}?x=1`);
  out.add(path.replace(/^\/[a-z]+/, (p) => p[0] + p[1].toUpperCase() + p.slice(2)));
  out.add(path.toUpperCase());
  return [...out];
}

/** The answer of a refusal: 401, or the router's 404 (no route matched that spelling). */
function refused({ status, body }: { status: number; body: any }): boolean {
  return status === 401 || (status === 404 && body?.error?.code === 'unknown_url');
}

/** One request over a raw socket, so the request line is exactly `line` (absolute form included). */
function raw(port: number, request: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const bodyText = text.slice(text.indexOf('\r\n\r\n') + 4);
      let body: unknown = bodyText;
      try {
        body = JSON.parse(bodyText);
      } catch {
        /* not JSON */
      }
      resolve({ status, body });
    });
    socket.write(request);
  });
}

describe('a protected route answers 401 under every spelling of its path', () => {
  let s: TestStandin;
  let port: number;
  const routes: Route[] = [];
  let protectedRoutes: (Route & { kind: Kind })[];

  beforeAll(async () => {
    s = await startTestStandin({ modules: [routeCollector(routes), ...defaultModules], settings: { metrics: true } });
    port = Number(new URL(await s.listen()).port);
    protectedRoutes = routes.flatMap((r) => {
      const kind = kindOf(r.url);
      return kind ? [{ ...r, kind }] : [];
    });
  }, 120_000);
  afterAll(async () => s?.close());

  it('finds the routes of every protected API, the snapshot among them', () => {
    for (const [prefix] of PREFIXES) expect(protectedRoutes.filter((r) => r.url.startsWith(prefix)).length).toBeGreaterThan(5);
    expect(protectedRoutes).toContainEqual({ method: 'GET', url: '/admin/v1/snapshot', kind: 'admin' });
    expect(protectedRoutes).toContainEqual({ method: 'HEAD', url: '/admin/v1/snapshot', kind: 'admin' });
  });

  /** Each route under each spelling with `key`; returns what was answered that is not a refusal. */
  async function sweep(key: string | null, which: (r: Route & { kind: Kind }) => boolean): Promise<string[]> {
    const leaks: string[] = [];
    for (const r of protectedRoutes.filter(which)) {
      for (const url of variants(concrete(r.url))) {
        const res = await s.req(r.method, url, { key });
        // A HEAD answer has no body to tell the router's 404 from the route's: the GET of the URL tells.
        const ok = r.method === 'HEAD' && res.status === 404 ? refused(await s.req('GET', url, { key })) : refused(res);
        if (!ok) leaks.push(`${r.method} ${url} → ${res.status}`);
      }
    }
    return leaks;
  }

  it('without a key', async () => {
    expect(await sweep(null, () => true)).toEqual([]);
  }, 300_000);

  it('with a key of another kind: ads or platform on the control plane, ads on /v1, platform on /ads/v1', async () => {
    expect(await sweep(s.keys.ads, (r) => r.kind !== 'ads')).toEqual([]);
    expect(await sweep(s.keys.platform, (r) => r.kind !== 'platform')).toEqual([]);
  }, 300_000);

  it('in absolute form on the request line, as written on the socket', async () => {
    const leaks: string[] = [];
    const authorities = [`http://127.0.0.1:${port}`, `HTTP://localhost`, `https://example.com`];
    for (const r of protectedRoutes) {
      const path = concrete(r.url);
      for (const target of [path, `${path.slice(0, 2)}%${hex(path[2])}${path.slice(3)}`])
        for (const authority of authorities) {
          const res = await raw(port, `${r.method} ${authority}${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
          if (!refused(res)) leaks.push(`${r.method} ${authority}${target} → ${res.status}`);
        }
    }
    expect(leaks).toEqual([]);
  }, 300_000);

  it('an unknown URL under a protected prefix asks for the key whatever its spelling', async () => {
    for (const url of ['/v1/no_such_thing', '/%761/no_such_thing', 'http://127.0.0.1/v1/no_such_thing']) {
      const res = url.startsWith('/')
        ? await s.req('GET', url)
        : await raw(port, `GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      expect(res.status, url).toBe(401);
    }
    for (const url of ['/admin/v1/no_such_thing', '/%61dmin/v1/no_such_thing', '/admin/%761/no_such_thing', '/%61dmin/v1/%zz']) {
      const res = await s.req('GET', url, { key: 'platform' });
      expect(res.status, url).toBe(401);
      expect(res.body.error.code, url).toBe('invalid_admin_key');
    }
  });

  it('the same spellings with the right key reach the route (the variants are real)', async () => {
    expect((await s.req('GET', '/%61dmin/v1/clock', { key: 'admin' })).status).toBe(200);
    expect((await s.req('GET', '/%761/models', { key: 'platform' })).status).toBe(200);
    const abs = await raw(
      port,
      `GET http://127.0.0.1:${port}/admin/v1/clock HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.keys.admin}\r\nConnection: close\r\n\r\n`,
    );
    expect(abs.status).toBe(200);
  });
});
