import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, notFound } from '../core/errors.js';
import type { App, Ctx } from '../core/module.js';
import { sameSecret } from '../core/secrets.js';
import { CSP, shellPage } from './page.js';
import { lookup } from './lookup.js';
import {
  AssetParams,
  Document,
  LookupQuery,
  LookupView,
  OldWebhooksParams,
  SessionBody,
  SessionView,
  SignInLink,
  SignInQuery,
} from './schemas.js';
import { redeemLink, signOut } from './service.js';
import { LINK_MS, SESSION_MS, boundSession, checkCsrf, sameOrigin, sessionCookie } from './session.js';

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', map: 'application/json' };

const secure = (ctx: Ctx, request: FastifyRequest) => request.protocol === 'https' || !!ctx.settings.publicUrl?.startsWith('https:');

/** The pages under /dashboard: the app shell, its assets, and signing in and out. */
export function dashboardRoutes(app: App, ctx: Ctx) {
  const { sessions, assets } = ctx.services.dashboard;
  // The bundle's hash names this build in the asset URLs, so browsers may cache them for good.
  const version = createHash('sha256')
    .update(assets.get('app.js') ?? '')
    .digest('hex')
    .slice(0, 12);

  const shell = async (_req: FastifyRequest, reply: FastifyReply) => {
    reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').header('content-security-policy', CSP);
    reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
    return shellPage(version);
  };
  app.get('/dashboard', { schema: { hide: true, response: { 200: Document } } }, shell);
  app.get('/dashboard/*', { schema: { hide: true, response: { 200: Document } } }, shell);

  app.get('/dashboard/assets/:name', { schema: { hide: true, params: AssetParams } }, async (req, reply) => {
    const body = assets.get(req.params.name);
    if (!body) throw notFound('dashboard asset', req.params.name, 'name');
    reply.header('content-type', TYPES[req.params.name.split('.').pop()!]).header('x-content-type-options', 'nosniff');
    reply.header('cache-control', 'public, max-age=31536000, immutable');
    return reply.send(body);
  });

  // The one-time link of the banner: spent on first use, then a session cookie, then the app.
  app.get('/dashboard/sign-in', { schema: { hide: true, querystring: SignInQuery } }, async (req, reply) => {
    reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
    const link = req.query.token ? sessions.check(req.query.token, 'link') : null;
    if (!link || !(await redeemLink(ctx, link.nonce, link.expiresAt))) return reply.redirect('/dashboard?sign_in=expired', 303);
    const session = sessions.mint('session', SESSION_MS);
    reply.header('set-cookie', sessionCookie(req.headers.host, session.token, SESSION_MS, secure(ctx, req)));
    // The binding goes in the fragment, which the browser keeps to the page (never sent, never logged).
    return reply.redirect(`/dashboard#binding=${sessions.binding(session.nonce)}`, 303);
  });

  const sessionView = (expiresAt: number | null) => ({
    object: 'dashboard.session' as const,
    signed_in: expiresAt !== null,
    expires_at: expiresAt === null ? null : Math.floor(expiresAt / 1000),
  });
  // Signed in means the cookie and its binding: a page that lost the binding signs in again.
  const current = (req: FastifyRequest) => {
    try {
      return boundSession(req, sessions);
    } catch {
      return null;
    }
  };
  app.get('/dashboard/session', { schema: { hide: true, response: { 200: SessionView } } }, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    return sessionView(current(req)?.expiresAt ?? null);
  });
  // Signing in with the admin key: checked here, then the key is never stored in the browser.
  app.post('/dashboard/session', { schema: { hide: true, body: SessionBody, response: { 200: SessionView } } }, async (req, reply) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !sameOrigin(origin, req.headers.host)) {
      throw new ApiError('permission_error', 'Sign in from the dashboard itself.', { code: 'cross_origin' });
    }
    const key = ctx.auth.adminKey();
    if (!key || !sameSecret(req.body.admin_key, key)) {
      throw new ApiError('authentication_error', 'That is not the admin key.', { code: 'invalid_admin_key' });
    }
    const session = sessions.mint('session', SESSION_MS);
    reply
      .header('set-cookie', sessionCookie(req.headers.host, session.token, SESSION_MS, secure(ctx, req)))
      .header('cache-control', 'no-store');
    // Only this answer carries the binding: a same-origin page reads it, a cross-origin one cannot.
    return { ...sessionView(session.expiresAt), binding_token: sessions.binding(session.nonce) };
  });
  app.delete('/dashboard/session', { schema: { hide: true, response: { 200: SessionView } } }, async (req, reply) => {
    checkCsrf(req);
    const session = current(req);
    if (session) await signOut(ctx, session.nonce, session.expiresAt);
    reply.header('set-cookie', sessionCookie(req.headers.host, '', 0, secure(ctx, req)));
    return sessionView(null);
  });

  // The old webhooks settings page lives on in the app.
  app.get('/dashboard/projects/:project_id/webhooks', { schema: { hide: true, params: OldWebhooksParams } }, async (req, reply) =>
    reply.redirect(`/dashboard/webhooks?project=${encodeURIComponent(req.params.project_id)}`, 301),
  );
}

/** A sign-in link to hand a browser (scripts, and the banner); the search box's id lookup. */
export function dashboardAdminRoutes(app: App, ctx: Ctx) {
  // Any id a person brings (a webhook-id, a run id from their logs) → the page that shows it.
  app.get(
    '/dashboard/lookup',
    { schema: { tags: ['admin: dashboard'], querystring: LookupQuery, response: { 200: LookupView } } },
    async (req) => ({ object: 'dashboard.lookup' as const, id: req.query.id.trim(), ...(await lookup(ctx, req.query.id)) }),
  );
  app.post('/dashboard/sign_in_links', { schema: { tags: ['admin: dashboard'], response: { 201: SignInLink } } }, async (_req, reply) => {
    const { url, expiresAt } = signInLink(ctx);
    reply.code(201);
    return { object: 'dashboard.sign_in_link' as const, url, expires_at: Math.floor(expiresAt / 1000) };
  });
}

/** A one-time sign-in link on the address users reach Standin at. */
export function signInLink(ctx: Ctx): { url: string; expiresAt: number } {
  const { token, expiresAt } = ctx.services.dashboard.sessions.mint('link', LINK_MS);
  const base = (ctx.settings.publicUrl ?? ctx.listeners.http ?? '').replace(/\/$/, '').replace('[::1]', 'localhost');
  return { url: `${base}/dashboard/sign-in?token=${token}`, expiresAt };
}

/** Accepts the session cookie with its binding, from the dashboard's own origin, as the admin principal; writes also need the CSRF header. */
export function sessionPrincipal(ctx: Ctx) {
  const { sessions } = ctx.services.dashboard;
  return (request: FastifyRequest): boolean => {
    if (!boundSession(request, sessions)) return false;
    checkCsrf(request);
    return true;
  };
}
