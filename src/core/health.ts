import type { FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { readinessLog } from './instance-events.js';
import type { App, Ctx, Module } from './module.js';

/** The probe paths: unauthenticated, never rate limited, faulted or recorded in the request log. */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz']);

/** A store round trip longer than this counts as unreachable: a balancer's probe must not hang on it. */
const STORE_TIMEOUT_MS = 1000;

const ReadyReply = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
  checks: Type.Array(Type.Object({ name: Type.String(), ok: Type.Boolean(), reason: Type.Optional(Type.String()) })),
});
type ReadyCheck = { name: string; ok: boolean; reason?: string };

/** Readiness of one instance: whether a balancer should send it traffic. `drain()` turns it off for good. */
export interface Readiness {
  drain(): void;
  readonly draining: boolean;
  /** Checks readiness every READY_WATCH_MS while the instance listens, logging each change (instance-events.ts). */
  watch(): void;
  unwatch(): void;
}

/** How often a listening instance checks its own readiness, so a change is logged even when no balancer probes. */
const READY_WATCH_MS = 5000;

/** Registers `/livez` (the process answers) and `/readyz` (store, modules' backends, not shutting down). */
export function healthRoutes(app: App, ctx: Ctx, modules: readonly Module[]): Readiness {
  let draining = false;
  let timer: NodeJS.Timeout | undefined;
  const changes = readinessLog(ctx.log);
  const check = async (): Promise<ReadyCheck[]> => {
    const checks: ReadyCheck[] = [
      draining ? { name: 'shutdown', ok: false, reason: 'shutting down: finishing in-flight requests' } : { name: 'shutdown', ok: true },
      await storeCheck(ctx),
      ...modules.flatMap((m) => {
        const h = m.health?.(ctx);
        if (!h) return [];
        // A backend the instance can serve without (the limiter failing open) is reported, not blocking.
        const ok = h.status === 'ok' || !h.required;
        return [{ name: m.name, ok, ...(h.status === 'ok' ? {} : { reason: ok ? `${h.detail}${NOT_REQUIRED}` : h.detail }) }];
      }),
    ];
    // Once draining, the stop logs itself; the reasons of a closing instance are not news.
    if (!draining) changes.report(checks);
    return checks;
  };
  app.get('/livez', { schema: { hide: true, response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({
    status: 'ok' as const,
  }));
  app.get('/readyz', { schema: { hide: true, response: { 200: ReadyReply, 503: ReadyReply } } }, async (req, reply) => {
    const checks = await check();
    const ready = checks.every((c) => c.ok);
    const full = holdsAdminKey(ctx, req);
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not_ready',
      checks: full ? checks : checks.map((c) => (c.reason ? { ...c, reason: publicReason(c.reason) } : c)),
    });
  });
  return {
    drain: () => void (draining = true),
    get draining() {
      return draining;
    },
    watch() {
      if (timer) return;
      void check();
      timer = setInterval(() => void check(), READY_WATCH_MS);
      timer.unref();
    },
    unwatch() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/** Whether a probe carries the admin key (or the dashboard's session): it may read the causes, addresses included. */
export function holdsAdminKey(ctx: Ctx, request: FastifyRequest): boolean {
  try {
    ctx.auth.admin(request);
    return true;
  } catch {
    return false;
  }
}

/**
 * A reason as anyone may read it: what is down and for how long, without its cause (`postgres unreachable:
 * connect ECONNREFUSED 10.0.0.5:5432` → `postgres unreachable`), which names internal addresses. The log and
 * a probe with the admin key have the whole reason.
 */
export function publicReason(reason: string): string {
  const cut = reason.indexOf(': ');
  if (cut < 0) return reason;
  return reason.slice(0, cut) + (reason.endsWith(NOT_REQUIRED) ? NOT_REQUIRED : '');
}
const NOT_REQUIRED = ' (not required)';

/** `select 1` against the store, bounded: a refused, dropped or frozen database is a reason, not a hang. */
async function storeCheck(ctx: Ctx): Promise<ReadyCheck> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${STORE_TIMEOUT_MS} ms`)), STORE_TIMEOUT_MS);
  });
  try {
    await Promise.race([sql`select 1`.execute(ctx.store.db), timeout]);
    return { name: 'store', ok: true };
  } catch (err) {
    return { name: 'store', ok: false, reason: `${ctx.store.dialect} unreachable: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    clearTimeout(timer);
  }
}
