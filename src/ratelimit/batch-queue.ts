import { ApiError } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import type { Exec } from '../store/db.js';
import { batchQueueLimit, defaultConfig } from './catalog.js';
import { batchQueueTokens, releaseBatchQueue, reserveBatchQueue } from './store.js';

/**
 * Rule 4: "batch queue limits count the input tokens of pending batch jobs per model; a completed job's
 * tokens no longer count." A batch holds its estimated input tokens from create until it ends; the sum per
 * organization and limit key lives in the store (`rate_limit_batch_queue`) and moves in the transaction of
 * the batch's own change, so it is exact across instances and a crash loses nothing.
 */

/** What a pending batch holds, to give back when it ends (kept with the batch). */
export interface BatchQueueHold {
  organizationId: string;
  limitKey: string;
  tokens: number;
}

/** Rule 4 as other areas use it (`ctx.services.batchQueue`): hold at create, release at the end, both in the batch's transaction. */
export interface BatchQueue {
  hold(exec: Exec, organizationId: string, model: string, tokens: number): Promise<BatchQueueHold>;
  release(exec: Exec, hold: BatchQueueHold): Promise<void>;
}

declare module '../core/module.js' {
  interface Services {
    /** Rule 4: the batch queue limit (batch-queue.ts). */
    batchQueue: BatchQueue;
  }
}

export function createBatchQueue(ctx: Ctx): BatchQueue {
  return {
    hold: (exec, organizationId, model, tokens) => holdBatchTokens(ctx, exec, organizationId, model, tokens),
    release: releaseBatchTokens,
  };
}

/**
 * Holds `tokens` for a new batch of `model`, in the transaction that creates it; over the limit, throws the
 * platform's `token_limit_exceeded` (429, not retried by the SDKs: only a batch ending frees room).
 */
export async function holdBatchTokens(
  ctx: Ctx,
  exec: Exec,
  organizationId: string,
  model: string,
  tokens: number,
): Promise<BatchQueueHold> {
  const config = ctx.services.ratelimit?.config() ?? defaultConfig();
  const { limitKey, limit } = batchQueueLimit(config, organizationId, model);
  if (!(await reserveBatchQueue(exec, organizationId, limitKey, tokens, limit))) {
    const held = await batchQueueTokens(exec, organizationId, limitKey);
    throw new ApiError(
      'rate_limit_error',
      `Enqueued token limit reached for ${model} in organization ${organizationId}. Limit: ${limit!.toLocaleString('en-US')} enqueued tokens, ` +
        `${held.toLocaleString('en-US')} held by pending batches, ${tokens.toLocaleString('en-US')} requested. ` +
        'Please try again once some in_progress batches have been completed.',
      { code: 'token_limit_exceeded', headers: { 'x-should-retry': 'false' } },
    );
  }
  return { organizationId, limitKey, tokens };
}

/** Frees what a batch held, in the transaction that ends it. */
export async function releaseBatchTokens(exec: Exec, hold: BatchQueueHold): Promise<void> {
  if (hold.tokens > 0) await releaseBatchQueue(exec, hold.organizationId, hold.limitKey, hold.tokens);
}
