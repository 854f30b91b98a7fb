import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../process.js';
import { startInstances, until, type Instance } from './instances.js';

/**
 * The dashboard's sign-in across a fleet: two real processes on one PostgreSQL database. A link used on A
 * is refused by B, and a session signed out on A is refused by B, because spent tokens live in the store.
 */
const databaseUrl = process.env.STANDIN_TEST_DATABASE_URL;

describe.runIf(databaseUrl)('dashboard sign-in on two instances', () => {
  let fleet: Awaited<ReturnType<typeof startInstances>>;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    ensureBuilt();
    fleet = await startInstances('fleet_dashboard');
    [a, b] = fleet.instances;
  }, 120_000);
  afterAll(async () => {
    await fleet?.close();
  });

  /** A one-time link's path (minted through A's control plane; both instances share the admin key). */
  const link = async () => {
    const r = await a.call('POST', '/admin/v1/dashboard/sign_in_links');
    expect(r.status).toBe(201);
    return r.body.url.slice(r.body.url.indexOf('/dashboard/sign-in'));
  };
  /**
   * A session's cookie and binding header, as the page sends them to instance `i`: the cookie under the name
   * it reads (after its port). The instances sit on ports of their own here, where a fleet's browsers reach
   * them all through one address.
   */
  const headersOf = (i: Instance, session: { token: string; binding: string }) => ({
    cookie: `standin_session_${new URL(i.base).port}=${session.token}`,
    'x-standin-dashboard': session.binding,
  });
  const open = (i: Instance, path: string, session?: { token: string; binding: string }) =>
    fetch(`${i.base}${path}`, { redirect: 'manual', headers: session ? headersOf(i, session) : {} });
  const cookieOf = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';')[0];
  const sessionOf = (res: Response) => ({
    token: cookieOf(res).slice(cookieOf(res).indexOf('=') + 1),
    binding: (res.headers.get('location') ?? '').replace('/dashboard#binding=', ''),
  });

  it('a link used on A is refused on B (and on A)', async () => {
    const path = await link();
    const first = await open(a, path);
    expect(first.headers.get('location')).toMatch(/^\/dashboard#binding=[\w-]{43}$/);
    expect(cookieOf(first)).toMatch(new RegExp(`^standin_session_${new URL(a.base).port}=.+`));
    for (const i of [b, a]) {
      const again = await open(i, path);
      expect(again.headers.get('location')).toBe('/dashboard?sign_in=expired');
      expect(again.headers.get('set-cookie')).toBeNull();
    }
  });

  it('the same link opened on A and B at once signs in exactly one browser', async () => {
    const path = await link();
    const both = await Promise.all([open(a, path), open(b, path)]);
    expect(both.map((r) => r.headers.get('location')!.replace(/#binding=.*/, '')).sort()).toEqual([
      '/dashboard',
      '/dashboard?sign_in=expired',
    ]);
  });

  it('a session signed out on A is refused by B', async () => {
    const session = sessionOf(await open(b, await link()));
    for (const i of [a, b]) expect((await open(i, '/admin/v1/clock', session)).status).toBe(200);
    const out = await fetch(`${a.base}/dashboard/session`, {
      method: 'DELETE',
      headers: { ...headersOf(a, session), 'x-standin-csrf': '1' },
    });
    expect(out.status).toBe(200);
    expect((await open(a, '/admin/v1/clock', session)).status).toBe(401);
    await until(async () => (await open(b, '/admin/v1/clock', session)).status === 401, 3_000);
    expect(((await (await open(b, '/dashboard/session', session)).json()) as { signed_in: boolean }).signed_in).toBe(false);
  });
});
