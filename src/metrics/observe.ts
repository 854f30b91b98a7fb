import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../core/auth.js';
import type { Ctx } from '../core/module.js';
import { UNMATCHED } from './registry.js';

type Observer = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;

/**
 * The one onResponse hook of the app: the request's log line (info) and its metrics, each when its
 * setting is on; undefined when both are off, so a Standin without them pays for no hook at all.
 */
export function responseObserver(ctx: Ctx, log: FastifyBaseLogger): Observer | undefined {
  const metrics = ctx.settings.metrics ? ctx.services.metrics : undefined;
  const lines = ctx.settings.logRequests && ['trace', 'debug', 'info'].includes(log.level);
  if (!metrics && !lines) return undefined;
  return (request, reply, done) => {
    metrics?.observe(request, reply);
    if (lines) log.info(requestLine(request, reply), 'request');
    done();
  };
}

/** What an operator needs of a request, and no secret: the route template, never the URL (its query may hold a key). */
function requestLine(request: FastifyRequest, reply: FastifyReply) {
  const principal = (request as FastifyRequest & { principal?: Principal | null }).principal;
  return {
    reqId: request.id,
    method: request.method,
    route: request.routeOptions.url ?? UNMATCHED,
    status: reply.statusCode,
    ms: Math.round(reply.elapsedTime * 100) / 100,
    project: principal?.kind === 'platform' ? principal.projectId : null,
  };
}
