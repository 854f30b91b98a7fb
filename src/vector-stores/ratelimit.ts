import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import { queueReplyHeaders } from '../core/reply-headers.js';
import { backendDownError, formatDuration, retryHeaders } from '../ratelimit/service.js';

/**
 * Rate-limit rule 5: writes to `/vector_stores/{id}/files` and `/vector_stores/{id}/file_batches` share
 * 300 requests per minute per vector store. The rate-limit area's service admits model requests only;
 * its backend (`ctx.services.ratelimit.backend`: memory, or Redis shared by instances) is a generic
 * bucket limiter, so this window is one bucket there, with the area's headers and 429 shape.
 */
export const INGESTION_RPM = 300;

/** Admits one write of a store's file endpoints, queueing the `x-ratelimit-*` headers, or throws the 429. */
export async function admitIngestionWrite(ctx: Ctx, request: FastifyRequest, storeId: string): Promise<void> {
  const limiter = ctx.services.ratelimit;
  if (!limiter) return;
  const bucket = {
    key: `vs:${storeId}:rpm`,
    hash: `vs:${storeId}`,
    field: 'rpm',
    limit: INGESTION_RPM,
    windowMs: 60_000,
    chargeOnRefusal: true,
  };
  let decision;
  try {
    decision = await limiter.backend.admit({ buckets: [bucket], costs: [1] });
  } catch (err) {
    if ((err as Error).name !== 'BackendUnavailable') throw err;
    if (ctx.settings.rateLimitOutage === 'open') return;
    throw backendDownError();
  }
  const state = decision.states[0];
  const headers = {
    'x-ratelimit-limit-requests': String(INGESTION_RPM),
    'x-ratelimit-remaining-requests': String(state.remaining),
    'x-ratelimit-reset-requests': formatDuration(state.resetMs),
  };
  if (decision.ok) return queueReplyHeaders(request, headers);
  const refusal = decision.refusal;
  const wait = refusal?.kind === 'bucket' ? refusal.retryAfterMs : 1000;
  const used = refusal?.kind === 'bucket' ? refusal.used : INGESTION_RPM;
  throw new ApiError(
    'rate_limit_error',
    `Rate limit reached for vector store ${storeId} on file requests per minute (RPM): Limit ${INGESTION_RPM}, Used ${used}, Requested 1. Please try again in ${formatDuration(wait)}.`,
    { code: 'rate_limit_exceeded', headers: { ...headers, ...retryHeaders(wait) } },
  );
}

/**
 * The route hook of rule 5 (`preParsing`): the front door has authenticated and authorized the request,
 * and the store's window is taken before the body is read or validated, so a write refused as invalid
 * still counts ("failed requests still count toward the per-minute limit").
 */
export function ingestionLimit(ctx: Ctx) {
  return async (request: FastifyRequest, _reply: FastifyReply, _payload: unknown): Promise<undefined> => {
    await admitIngestionWrite(ctx, request, (request.params as { vector_store_id: string }).vector_store_id);
    return undefined;
  };
}
