import { ApiError, invalid, notFound } from '../core/errors.js';
import { emitEvent } from '../core/events.js';
import { newId } from '../core/ids.js';
import type { Ctx } from '../core/module.js';
import type { ListPage, ListParams } from '../core/pagination.js';
import { getFile, openFileContent } from '../files/service.js';
import type { Exec } from '../store/db.js';
import { RUNNABLE_ENDPOINTS, type BatchError, type BatchObject, type BatchStatus, type CreateBatchBody } from './schemas.js';
import * as store from './store.js';
import { MAX_FILE_BYTES, scanInput } from './validate.js';

export type { BatchObject } from './schemas.js';

/** Job kind that runs a batch, a bounded group of lines per step. */
export const RUN_BATCH = 'batches.run';

/** The completion window, the only one of the document: 24 hours of the Standin clock. */
export const WINDOW_SECONDS = 24 * 3600;

export const TERMINAL: readonly BatchStatus[] = ['completed', 'failed', 'expired', 'cancelled'];

const num = (v: number | null) => (v === null ? null : Number(v));

/** The batch object of a row. */
export function batchObject(row: store.BatchRow): BatchObject {
  const input = Number(row.input_tokens);
  const output = Number(row.output_tokens);
  const running = row.status === 'validating';
  return {
    id: row.id,
    object: 'batch',
    endpoint: row.endpoint,
    model: row.model,
    errors: row.errors === null ? null : (JSON.parse(row.errors) as BatchObject['errors']),
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status as BatchStatus,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: Number(row.created_at),
    in_progress_at: num(row.in_progress_at),
    expires_at: Number(row.expires_at),
    finalizing_at: num(row.finalizing_at),
    completed_at: num(row.completed_at),
    failed_at: num(row.failed_at),
    expired_at: num(row.expired_at),
    cancelling_at: num(row.cancelling_at),
    cancelled_at: num(row.cancelled_at),
    // The platform reports no total until the batch leaves validation.
    request_counts: { total: running ? 0 : Number(row.lines), completed: Number(row.completed), failed: Number(row.failed) },
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + output,
    },
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, string>),
  };
}

/** metadata: up to 16 pairs, keys ≤ 64 and values ≤ 512 characters. */
function checkMetadata(metadata: Record<string, string> | null | undefined) {
  if (!metadata) return;
  const entries = Object.entries(metadata);
  if (entries.length > 16) throw invalid(`'metadata' may hold at most 16 pairs; it has ${entries.length}.`, 'metadata', 'invalid_value');
  for (const [k, v] of entries) {
    if (k.length > 64) throw invalid(`'metadata' keys must be at most 64 characters ('${k.slice(0, 70)}…').`, 'metadata', 'invalid_value');
    if (v.length > 512) throw invalid(`'metadata.${k}' must be at most 512 characters.`, `metadata.${k}`, 'invalid_value');
  }
}

/** The input file, refused with 400 when it is missing or not of purpose `batch` (as the platform does at create). */
async function inputFile(ctx: Ctx, projectId: string, fileId: string) {
  let file;
  try {
    file = await getFile(ctx, projectId, fileId);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      throw invalid(`No file found with id '${fileId}': 'input_file_id' must name an uploaded file.`, 'input_file_id', 'invalid_value');
    throw err;
  }
  if (file.purpose !== 'batch')
    throw invalid(
      `The file '${fileId}' has purpose '${file.purpose}': a batch's input file must be uploaded with purpose 'batch'.`,
      'input_file_id',
      'invalid_value',
    );
  return file;
}

/**
 * `POST /v1/batches`. The input file is validated as it streams, while the request waits (it is read once,
 * a line at a time): a file the platform would refuse makes a batch that is `failed` with `errors`; a good
 * one holds its estimated input tokens in the batch queue (rule 4, refused over the limit with 429
 * `token_limit_exceeded`) and is queued, `validating` until a worker takes it. An organization whose
 * spend has reached its monthly usage limit is refused with 429 `insufficient_quota` (rule 7).
 */
export async function createBatch(
  ctx: Ctx,
  payer: { organizationId: string; projectId: string },
  body: CreateBatchBody,
): Promise<BatchObject> {
  if (!RUNNABLE_ENDPOINTS.includes(body.endpoint))
    throw invalid(
      `Standin does not run batches for '${body.endpoint}'; supported endpoints are: ${RUNNABLE_ENDPOINTS.map((e) => `'${e}'`).join(', ')}.`,
      'endpoint',
      'unsupported_value',
    );
  checkMetadata(body.metadata);
  const file = await inputFile(ctx, payer.projectId, body.input_file_id);
  // An organization at its monthly usage limit gets no new work, as its requests get none (rule 7).
  await ctx.services.ratelimit?.checkQuota(payer.organizationId);
  let errors: BatchError[];
  let scan = { requests: 0, model: null as string | null, tokens: 0 };
  if (file.bytes > MAX_FILE_BYTES) {
    errors = [
      { code: 'file_too_large', message: `The batch input file is larger than ${MAX_FILE_BYTES} bytes (200 MB).`, param: null, line: null },
    ];
  } else {
    const { stream } = await openFileContent(ctx, payer.projectId, file.id);
    const s = await scanInput(stream, body.endpoint, ctx.settings.bodyLimit);
    errors = s.errors;
    scan = s;
  }
  const now = ctx.clock.nowSeconds();
  const row = {
    id: newId('batch', ctx.clock),
    project_id: payer.projectId,
    organization_id: payer.organizationId,
    endpoint: body.endpoint,
    model: scan.model,
    input_file_id: file.id,
    completion_window: body.completion_window,
    status: errors.length ? 'failed' : 'validating',
    errors: errors.length ? JSON.stringify({ object: 'list', data: errors }) : null,
    metadata: body.metadata ? JSON.stringify(body.metadata) : null,
    output_expires_seconds: body.output_expires_after?.seconds ?? null,
    output_file_id: null,
    error_file_id: null,
    created_at: now,
    in_progress_at: null,
    expires_at: now + WINDOW_SECONDS,
    finalizing_at: null,
    completed_at: null,
    failed_at: errors.length ? now : null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    lines: errors.length ? 0 : scan.requests,
    next_line: 0,
    next_offset: 0,
    completed: 0,
    failed: 0,
    input_tokens: 0,
    output_tokens: 0,
    queue_key: null as string | null,
    queued_tokens: 0,
  };
  await ctx.store.db.transaction().execute(async (tx) => {
    if (errors.length) {
      await store.insertBatch(tx, row);
      await emitEvent(ctx, tx, payer.projectId, 'batch.failed', { id: row.id });
      return;
    }
    const hold = await ctx.services.batchQueue.hold(tx, payer.organizationId, scan.model!, scan.tokens);
    row.queue_key = hold.limitKey;
    row.queued_tokens = hold.tokens;
    await store.insertBatch(tx, row);
    await ctx.jobs.enqueue(tx, RUN_BATCH, { batchId: row.id });
  });
  return batchObject(row);
}

/** `GET /v1/batches/{id}`. */
export async function getBatch(ctx: Ctx, projectId: string, id: string, exec: Exec = ctx.store.db): Promise<BatchObject> {
  const row = await store.getBatch(exec, projectId, id);
  if (!row) throw notFound('batch', id);
  return batchObject(row);
}

/** The project of a batch, found by its id alone (the dashboard's search); undefined when none. */
export async function locateBatch(exec: Exec, id: string): Promise<{ project_id: string } | undefined> {
  const row = await store.getBatchById(exec, id);
  return row && { project_id: row.project_id };
}

/** `GET /v1/batches`: the project's batches, newest first. */
export function listBatches(ctx: Ctx, projectId: string, params: ListParams): Promise<ListPage<BatchObject>> {
  return store.listBatches(ctx.store.db, projectId, params, batchObject);
}

/** A batch with its share of lines done (completed or failed) of the total, for the control plane. */
export function withProgress(batch: BatchObject): BatchObject & { progress: number } {
  const { total, completed, failed } = batch.request_counts;
  return { ...batch, progress: total > 0 ? Math.min(1, (completed + failed) / total) : 0 };
}

/**
 * `POST /v1/batches/{id}/cancel`: `cancelling` at once; the worker lets the lines in flight finish, then
 * ends the batch `cancelled` with what ran so far in its output. Cancelling twice answers the same.
 */
export async function cancelBatch(ctx: Ctx, projectId: string, id: string): Promise<BatchObject> {
  const row = await store.getBatch(ctx.store.db, projectId, id);
  if (!row) throw notFound('batch', id);
  if (row.status === 'cancelling') return batchObject(row);
  if (row.status !== 'validating' && row.status !== 'in_progress')
    throw new ApiError('conflict_error', `Cannot cancel a batch with status '${row.status}'.`, { code: 'invalid_state' });
  const cancellingAt = ctx.clock.nowSeconds();
  if (!(await store.updateBatch(ctx.store.db, id, ['validating', 'in_progress'], { status: 'cancelling', cancelling_at: cancellingAt })))
    return cancelBatch(ctx, projectId, id);
  ctx.jobs.wake();
  return getBatch(ctx, projectId, id);
}

/**
 * A batch that ended with `status`, for a triggered `batch.*` event (`standin trigger batch.completed`): a
 * real batch behind `data.id`, retrievable, with no lines (its input file id names no file).
 */
export async function createSampleBatch(
  ctx: Ctx,
  exec: Exec,
  payer: { organizationId: string; projectId: string },
  status: 'completed' | 'failed' | 'expired' | 'cancelled',
): Promise<BatchObject> {
  const now = ctx.clock.nowSeconds();
  const at = (s: string) => (status === s ? now : null);
  const row: store.BatchRow = {
    id: newId('batch', ctx.clock),
    project_id: payer.projectId,
    organization_id: payer.organizationId,
    endpoint: '/v1/chat/completions',
    model: 'gpt-4o-mini',
    input_file_id: 'file-standin-sample',
    completion_window: '24h',
    status,
    errors:
      status === 'failed'
        ? JSON.stringify({
            object: 'list',
            data: [{ code: 'empty_file', message: 'The batch input file is empty.', param: null, line: null }],
          })
        : null,
    metadata: JSON.stringify({ sample: 'true' }),
    output_expires_seconds: null,
    output_file_id: null,
    error_file_id: null,
    created_at: now,
    in_progress_at: status === 'failed' ? null : now,
    expires_at: now + WINDOW_SECONDS,
    finalizing_at: at('completed'),
    completed_at: at('completed'),
    failed_at: at('failed'),
    expired_at: at('expired'),
    cancelling_at: at('cancelled'),
    cancelled_at: at('cancelled'),
    lines: 0,
    next_line: 0,
    next_offset: 0,
    completed: 0,
    failed: 0,
    input_tokens: 0,
    output_tokens: 0,
    queue_key: null,
    queued_tokens: 0,
  };
  await store.insertBatch(exec, row);
  return batchObject(row);
}
