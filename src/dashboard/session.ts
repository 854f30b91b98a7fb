import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { wallNow } from '../core/clock.js';
import { ApiError, forbidden } from '../core/errors.js';
import { sameSecret } from '../core/secrets.js';

/** The dashboard's session cookie: HttpOnly, SameSite=Strict, scoped to the whole origin (the pages read /admin/v1). */
export const COOKIE = 'standin_session';

/**
 * The session cookie's name for the host a request was sent to: `standin_session_<port>` when the Host
 * header names a port, else `standin_session`. Browsers keep one cookie jar per host name, not per port, so
 * with one name, signing in to a second Standin on the same host replaced the first one's cookie and signed
 * its page out. (It is not what keeps the session to its origin: the binding is, see boundSession.)
 */
export function cookieName(host: string | undefined): string {
  const port = /:(\d{1,5})$/.exec(host ?? '')?.[1];
  return port ? `${COOKIE}_${port}` : COOKIE;
}
/** The header every cookie-authenticated write must carry: a page on another site cannot set it without a CORS preflight. */
export const CSRF_HEADER = 'x-standin-csrf';
/**
 * The header that binds a request to its session: the session's binding, which the page holds in its own
 * origin's storage (never in a cookie). Cookies go to every port of a host; this does not, so a cookie
 * captured by another local server, or replayed from a script, signs nothing in.
 */
export const BINDING_HEADER = 'x-standin-dashboard';

/** How long a session lasts, and a sign-in link stays usable (real time: moving the Standin clock signs nobody out). */
export const SESSION_MS = 12 * 3_600_000;
export const LINK_MS = 3_600_000;

type Kind = 'session' | 'link';

/**
 * Signed, stateless tokens for sign-in links and sessions, keyed by the admin key: every instance that
 * shares the admin key accepts them, and changing the admin key signs everyone out. Used links and
 * signed-out sessions are spent in the store (`service.ts`), so every instance refuses them; this keeps
 * the copy each instance checks requests against (spent nonces, dropped as they expire).
 */
export class Sessions {
  private spent = new Map<string, number>();
  private keyFor = '';
  private key: Buffer = Buffer.alloc(0);

  constructor(private readonly adminKey: () => string) {}

  private mac(text: string): string {
    const admin = this.adminKey();
    if (admin !== this.keyFor) {
      this.key = createHmac('sha256', admin).update('standin dashboard session v1').digest();
      this.keyFor = admin;
    }
    return createHmac('sha256', this.key).update(text).digest('base64url');
  }

  /** A new token of `kind`, valid for `ms`. */
  mint(kind: Kind, ms: number): { token: string; nonce: string; expiresAt: number } {
    const expiresAt = wallNow() + ms;
    const nonce = randomBytes(18).toString('base64url');
    const body = `${kind}.${expiresAt}.${nonce}`;
    return { token: `${body}.${this.mac(body)}`, nonce, expiresAt };
  }

  /** The binding of a session: what the page sends in `x-standin-dashboard` beside the cookie. */
  binding(nonce: string): string {
    return this.mac(`binding.${nonce}`);
  }

  /** The token's nonce when it is a valid, unexpired, unspent token of `kind`; else null. */
  check(token: string, kind: Kind): { nonce: string; expiresAt: number } | null {
    if (token.length > 200) return null;
    const parts = token.split('.');
    if (parts.length !== 4 || parts[0] !== kind) return null;
    const expiresAt = Number(parts[1]);
    if (!Number.isSafeInteger(expiresAt) || expiresAt <= wallNow()) return null;
    if (!sameSecret(parts[3], this.mac(parts.slice(0, 3).join('.')))) return null;
    if (this.spent.has(parts[2])) return null;
    return { nonce: parts[2], expiresAt };
  }

  /** Marks a token used up here (a redeemed link, a signed-out session). */
  spend(nonce: string, expiresAt: number): void {
    const now = wallNow();
    for (const [n, until] of this.spent) if (until <= now) this.spent.delete(n);
    this.spent.set(nonce, expiresAt);
  }

  /** Adds tokens spent elsewhere (read from the store after another instance signed a session out). */
  spendAll(tokens: { nonce: string; expiresAt: number }[]): void {
    for (const t of tokens) this.spend(t.nonce, t.expiresAt);
  }
}

/** The value of one cookie in a Cookie header. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Whether an Origin header names the host the request was sent to (a same-origin request). */
export function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return !!host && new URL(origin).host === new URL(`http://${host}`).host;
  } catch {
    return false;
  }
}

/**
 * The session a request holds: a valid session cookie (null without one); throws 401 when the request does
 * not carry the session's binding, and 403 when the browser says it comes from another origin (Sec-Fetch-Site
 * or Origin). So a cookie alone — sent by a browser to another port of the host, or replayed — is refused.
 */
export function boundSession(request: FastifyRequest, sessions: Sessions): { nonce: string; expiresAt: number } | null {
  const token = cookieOf(request.headers.cookie, cookieName(request.headers.host));
  const session = token ? sessions.check(token, 'session') : null;
  if (!session) return null;
  const given = request.headers[BINDING_HEADER];
  if (typeof given !== 'string' || !sameSecret(given, sessions.binding(session.nonce))) {
    throw new ApiError(
      'authentication_error',
      `The dashboard session cookie needs the page's "${BINDING_HEADER}" header: a cookie alone signs nothing in. Sign in again, or use the admin key.`,
      { code: 'session_unbound' },
    );
  }
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  if ((site !== undefined && site !== 'same-origin') || (origin !== undefined && !sameOrigin(origin, request.headers.host))) {
    throw forbidden('A request signed in by the dashboard session must come from the dashboard itself (its origin).', 'cross_origin');
  }
  return session;
}

/**
 * Holds a cookie-authenticated write to the CSRF rules: the custom header (which forces a CORS preflight
 * that Standin never grants) and, when the browser sends one, an Origin of this host. SameSite=Strict
 * keeps the cookie off cross-site requests in the first place.
 */
export function checkCsrf(request: FastifyRequest): void {
  if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
  if (request.headers[CSRF_HEADER] !== '1') {
    throw forbidden(`A write signed in by the dashboard session needs the header "${CSRF_HEADER}: 1".`, 'csrf_header_missing');
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !sameOrigin(origin, request.headers.host)) {
    throw forbidden('A write signed in by the dashboard session must come from the dashboard itself (Origin).', 'cross_origin');
  }
}

/** The Set-Cookie header of a session for a request sent to `host` (Secure when the browser reached Standin over HTTPS). */
export function sessionCookie(host: string | undefined, token: string, maxAgeMs: number, secure: boolean): string {
  const attributes = `Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(maxAgeMs / 1000)}${secure ? '; Secure' : ''}`;
  return `${cookieName(host)}=${token}; ${attributes}`;
}
