import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

type QueuedFields = FastifyRequest & { queuedHeaders: Record<string, string> | null };

/** Declares the request field queued headers live in (one shape for every request, no WeakMap). */
export function declareQueuedHeaders(app: FastifyInstance): void {
  app.decorateRequest('queuedHeaders', null);
}

/**
 * Queues headers for whatever reply the request gets, success or error: the rate-limit headers of an
 * admitted request. Headers the reply sets itself win.
 */
export function queueReplyHeaders(request: FastifyRequest, headers: Record<string, string>): void {
  (request as QueuedFields).queuedHeaders = headers;
}

/** The headers queued on a request (an admitted request's rate-limit headers), or null. */
export function queuedHeadersOf(request: FastifyRequest): Record<string, string> | null {
  return (request as QueuedFields).queuedHeaders;
}

/** The headers every platform API (`/v1`) reply carries: `openai-processing-ms` and the queued ones. */
export function writePlatformHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('openai-processing-ms', Math.max(0, Math.round(reply.elapsedTime)).toString());
  const queued = (request as QueuedFields).queuedHeaders;
  if (queued) for (const k in queued) if (!reply.hasHeader(k)) reply.header(k, queued[k]);
}
