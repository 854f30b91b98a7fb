import { randomBytes } from 'node:crypto';
import { ApiError } from '../core/errors.js';
import { emitEvent } from '../core/events.js';
import { clockReaches } from '../core/clock.js';
import { newId } from '../core/ids.js';
import type { JobClaim } from '../core/jobs.js';
import type { Ctx } from '../core/module.js';
import { runChatBody } from '../chat/service.js';
import { runEmbeddingsBody } from '../embeddings/service.js';
import { insertWrittenFile, openFileContent, writeFileBytes } from '../files/service.js';
import type { Usage } from '../ratelimit/service.js';
import type { Exec } from '../store/db.js';
import { HOLD_RECHECK_MS, workHolds, type HoldStage, type WorkHolds } from '../holds/service.js';
import { runResponseBody } from '../responses/service.js';
import { readLines, type InputLine } from './lines.js';
import type { BatchError } from './schemas.js';
import * as store from './store.js';
import { TERMINAL } from './service.js';

/**
 * The worker side of a batch (job `batches.run`). Each step reads the input file from the batch's cursor,
 * runs the lines a group at a time through the same service functions as the HTTP endpoints, and records
 * each group's results with the moved cursor in one transaction: a crash loses at most the group in
 * flight, which runs again, and no line is recorded twice (the cursor only moves from where it was).
 * At the end the results are streamed into the output and error files, in input order, and the batch
 * ends with its event and frees its batch-queue tokens, in one transaction.
 */

/** Lines run at once. */
export const GROUP = 32;
/** How long one step works before giving its job back to the queue (another instance may take it). */
const STEP_MS = 10_000;
/** Result rows read at once while assembling a file. */
const PAGE = 500;

export interface RunBatchJob {
  batchId: string;
}

type Reply = { status: number; body: unknown; usage?: Usage };

function runnerFor(ctx: Ctx, endpoint: string, projectId: string): (body: unknown) => Promise<Reply> {
  if (endpoint === '/v1/chat/completions') return (body) => runChatBody(ctx, body);
  if (endpoint === '/v1/embeddings') return (body) => runEmbeddingsBody(ctx, body);
  return (body) => runResponseBody(ctx, projectId, body);
}

/** Runs one line; never throws (a failure is the line's 500). */
async function runLine(ctx: Ctx, run: (body: unknown) => Promise<Reply>, line: InputLine) {
  const request = JSON.parse(line.text) as { custom_id: string; body: unknown };
  let reply: Reply;
  try {
    reply = await run(request.body);
  } catch (err) {
    ctx.log.warn({ err }, 'a batch line failed');
    reply = {
      status: 500,
      body: new ApiError('server_error', 'The server had an error while processing this request.', { code: 'server_error' }).toBody(),
    };
  }
  const output = {
    id: newId('batch_req', ctx.clock),
    custom_id: request.custom_id,
    response: { status_code: reply.status, request_id: `req_${randomBytes(16).toString('hex')}`, body: reply.body },
    error: null,
  };
  return { ok: reply.status < 400, json: JSON.stringify(output), usage: reply.status < 400 ? reply.usage : undefined, end: line.end };
}

/** Where each stage's time starts, for its pace. */
const SINCE = {
  validating: 'created_at',
  in_progress: 'in_progress_at',
  finalizing: 'finalizing_at',
  cancelling: 'cancelling_at',
} as const;

/**
 * When the batch must stay in its stage — the project holds it there, or its pace there is not spent —
 * the time to look again: no later than `HOLD_RECHECK_MS` (a release or a change of the holds is seen
 * then), and the pace's end on the Standin clock (an advance past it makes the job due at once).
 */
function stay(ctx: Ctx, row: store.BatchRow, holds: WorkHolds): { retryAt: number; recheck: true } | undefined {
  const stage = row.status as HoldStage;
  if (!(stage in SINCE)) return undefined;
  const now = ctx.clock.now();
  const recheck = now + HOLD_RECHECK_MS;
  // Waiting is not an attempt: `recheck` keeps it out of the job's count (core/jobs.ts).
  if (holds.batchHoldAt.includes(stage)) return { retryAt: recheck, recheck: true };
  const pace = holds.batchPaceMs[stage];
  const since = row[SINCE[stage]];
  if (!pace || since === null) return undefined;
  const until = Number(since) * 1000 + pace;
  return now < until ? { retryAt: Math.min(until, recheck), recheck: true } : undefined;
}

/** Job handler: one step of a batch. */
export async function runBatch(
  ctx: Ctx,
  job: RunBatchJob,
  claim?: Pick<JobClaim, 'fence'>,
): Promise<void | { retryAt: number; recheck?: boolean }> {
  const started = performance.now();
  let row: store.BatchRow | undefined = await store.getBatchById(ctx.store.db, job.batchId);
  if (!row || TERMINAL.includes(row.status as never)) return;
  const holds = await workHolds(ctx, row.project_id);
  const expired = () => ctx.clock.now() >= Number(row!.expires_at) * 1000;
  if (row.status === 'validating') {
    // A held batch expires by the clock as a slow one does.
    if (expired()) return finish(ctx, row, 'expired', holds);
    const wait = stay(ctx, row, holds);
    if (wait) return wait;
    await store.updateBatch(ctx.store.db, row.id, ['validating'], { status: 'in_progress', in_progress_at: ctx.clock.nowSeconds() });
    row = (await store.getBatchById(ctx.store.db, job.batchId))!;
  }
  const ended = () => {
    if (row!.status === 'cancelling') return 'cancelled' as const;
    if (Number(row!.next_line) >= Number(row!.lines) || row!.status === 'finalizing') return 'completed' as const;
    if (expired()) return 'expired' as const;
    return undefined;
  };
  let end = ended();
  if (end) return finish(ctx, row, end, holds);
  if (row.status !== 'in_progress') return;
  // Held in progress: no line runs until the release (a cancel or the expiry still ends it).
  if (holds.batchHoldAt.includes('in_progress')) return stay(ctx, row, holds);

  let source;
  try {
    source = (await openFileContent(ctx, row.project_id, row.input_file_id)).stream;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return failLost(ctx, row);
    throw err;
  }
  const run = runnerFor(ctx, row.endpoint, row.project_id);
  const lines = readLines(source, { maxBytes: ctx.settings.bodyLimit, start: Number(row.next_offset) });
  // The window ends while a group runs (the clock moved past it, or its time came): the group's lines did
  // not finish within it, and the batch ends expired now rather than when its slowest line answers.
  const expiry = clockReaches(ctx.clock, Number(row.expires_at) * 1000);
  try {
    for (;;) {
      const group: InputLine[] = [];
      while (group.length < GROUP) {
        const next = await lines.next();
        if (next.done) break;
        group.push(next.value);
      }
      if (!group.length) break;
      // Lines left running past the expiry finish on their own; what they answer is not recorded.
      const results = await unlessAborted(Promise.all(group.map((l) => runLine(ctx, run, l))), expiry.signal);
      if (!results) {
        end = 'expired';
        break;
      }
      const from: number = Number(row.next_line);
      const counts: Parameters<typeof store.advance>[3] = {
        line: from + results.length,
        offset: results.at(-1)!.end,
        completed: 0,
        failed: 0,
        inputTokens: 0,
        outputTokens: 0,
      };
      for (const r of results) {
        if (r.ok) counts.completed++;
        else counts.failed++;
        counts.inputTokens += r.usage?.inputTokens ?? 0;
        counts.outputTokens += r.usage?.outputTokens ?? 0;
      }
      const status = await ctx.store.db.transaction().execute(async (tx) => {
        // A worker whose claim lapsed (it stalled, and another instance took the batch over) records nothing.
        await claim?.fence(tx);
        const after = await store.advance(tx, row!.id, from, counts);
        if (after)
          await store.insertResults(
            tx,
            results.map((r, i) => ({ batch_id: row!.id, line: from + i, ok: r.ok ? 1 : 0, json: r.json })),
          );
        return after;
      });
      // Another worker recorded these lines, or the batch ended meanwhile: look again from the store.
      if (!status) return { retryAt: ctx.clock.now() };
      await chargeGroup(ctx, row, counts);
      row = { ...row, status, next_line: counts.line, next_offset: counts.offset };
      end = ended();
      if (end) break;
      if (performance.now() - started > STEP_MS) return { retryAt: ctx.clock.now() };
    }
  } finally {
    expiry.stop();
    await lines.return(undefined);
    source.destroy();
  }
  return finish(ctx, row, end ?? 'completed', holds);
}

/**
 * `work`'s value, or undefined as soon as `signal` aborts (the work goes on, and nothing keeps what it
 * ends with). The listener is removed when the work ends: a `Promise.race` with one long-lived promise
 * per group kept every group's results until the step ended (50 MB on a 50,000-line batch).
 */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * Adds a recorded group's tokens to the organization's monthly spend (rate-limit rule 7), at the price of
 * the endpoint's model, as the same requests made one by one would be (docs/batches.md). After the commit
 * that recorded the group, so a group run again is not charged twice; a crash in between charges it
 * never. A limiter that cannot count now (Redis down) costs the charge, not the batch.
 */
async function chargeGroup(ctx: Ctx, row: store.BatchRow, counts: { inputTokens: number; outputTokens: number }) {
  const limiter = ctx.services.ratelimit;
  if (!limiter || !row.model || counts.inputTokens + counts.outputTokens === 0) return;
  try {
    await limiter.charge(row.organization_id, row.model, { inputTokens: counts.inputTokens, outputTokens: counts.outputTokens });
  } catch (err) {
    ctx.log.warn({ err, batch: row.id }, 'adding a batch group to the monthly spend failed');
  }
}

/** Joins JSON lines into chunks of bytes for a file. */
async function* chunksOf(lines: AsyncIterable<string[]>): AsyncGenerator<Buffer> {
  for await (const page of lines) if (page.length) yield Buffer.from(`${page.join('\n')}\n`);
}

/** The recorded results of one kind, in input order, a page at a time. */
async function* results(ctx: Ctx, batchId: string, ok: boolean): AsyncGenerator<string[]> {
  let after = -1;
  for (;;) {
    const page = await store.resultsPage(ctx.store.db, batchId, ok, after, PAGE);
    if (!page.length) return;
    after = Number(page.at(-1)!.line);
    yield page.map((r) => r.json);
  }
}

/** The lines never run (from the cursor on) as error lines with `code`; `count` tells how many there were. */
async function* unrun(ctx: Ctx, row: store.BatchRow, code: string, message: string, count: { n: number }): AsyncGenerator<string[]> {
  const { stream } = await openFileContent(ctx, row.project_id, row.input_file_id);
  let page: string[] = [];
  try {
    for await (const line of readLines(stream, { maxBytes: ctx.settings.bodyLimit, start: Number(row.next_offset) })) {
      const { custom_id } = JSON.parse(line.text) as { custom_id: string };
      page.push(JSON.stringify({ id: newId('batch_req', ctx.clock), custom_id, response: null, error: { code, message } }));
      count.n++;
      if (page.length >= PAGE) {
        yield page;
        page = [];
      }
    }
    yield page;
  } finally {
    stream.destroy();
  }
}

async function* concat<T>(...sources: AsyncIterable<T>[]): AsyncGenerator<T> {
  for (const s of sources) yield* s;
}

const UNRUN: Record<'expired' | 'cancelled', { code: string; message: string }> = {
  expired: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
  cancelled: { code: 'batch_cancelled', message: 'This request was not executed because the batch was cancelled.' },
};

/**
 * Ends a batch: `finalizing` (a completed batch), then the output and error files streamed from the
 * recorded results (an expired or cancelled batch adds its lines never run to the error file), then — in
 * one transaction, only if no other worker ended it first — the files, the final status, the freed queue
 * tokens and the event. A crash before that commit leaves bytes the files' sweep job removes.
 */
async function finish(
  ctx: Ctx,
  row: store.BatchRow,
  outcome: 'completed' | 'expired' | 'cancelled',
  holds: WorkHolds,
): Promise<void | { retryAt: number }> {
  const running = ['validating', 'in_progress', 'cancelling', 'finalizing'];
  if (outcome === 'completed' && row.status !== 'finalizing') {
    // Its lines are done but its pace keeps it in progress: until the pace is spent, or the window ends.
    const wait = stay(ctx, row, holds);
    if (wait && ctx.clock.now() < Number(row.expires_at) * 1000) return wait;
    if (wait) return finish(ctx, row, 'expired', holds);
    const now = ctx.clock.nowSeconds();
    // A cancel came first: the next step ends the batch cancelled.
    if (!(await store.updateBatch(ctx.store.db, row.id, ['in_progress'], { status: 'finalizing', finalizing_at: now })))
      return { retryAt: ctx.clock.now() };
    row = { ...row, status: 'finalizing', finalizing_at: now };
  }
  // `finalizing` and `cancelling` stay put while held or paced; an expiry ends work only before them.
  if (outcome !== 'expired') {
    const wait = stay(ctx, row, holds);
    if (wait) return wait;
  }
  const count = { n: 0 };
  const written: { id: string; bytes: number }[] = [];
  const write = async (lines: AsyncIterable<string[]>) => {
    const w = await writeFileBytes(ctx, chunksOf(lines));
    written.push(w);
    return w;
  };
  try {
    const output = await write(results(ctx, row.id, true));
    const errorLines =
      outcome === 'completed'
        ? results(ctx, row.id, false)
        : concat(results(ctx, row.id, false), unrun(ctx, row, UNRUN[outcome].code, UNRUN[outcome].message, count));
    const errors = await write(errorLines);
    const at = ctx.clock.nowSeconds();
    const done = await ctx.store.db.transaction().execute(async (tx) => {
      const patch = {
        status: outcome,
        [`${outcome}_at`]: at,
        output_file_id: output.bytes ? output.id : null,
        error_file_id: errors.bytes ? errors.id : null,
        queued_tokens: 0,
      };
      if (!(await store.updateBatch(tx, row.id, running, patch, count.n))) return false;
      const meta = (kind: string) => ({
        filename: `${row.id}_${kind}.jsonl`,
        purpose: 'batch_output',
        expiresAfterSeconds: row.output_expires_seconds === null ? null : Number(row.output_expires_seconds),
      });
      if (output.bytes) await insertWrittenFile(ctx, tx, row.project_id, output, meta('output'));
      if (errors.bytes) await insertWrittenFile(ctx, tx, row.project_id, errors, meta('error'));
      await release(ctx, tx, row);
      await emitEvent(ctx, tx, row.project_id, `batch.${outcome}`, { id: row.id });
      await store.deleteResults(tx, row.id);
      return true;
    });
    // Files not made part of the batch (an empty one, or another worker ended it first) are removed now.
    for (const w of written) if (!done || w.bytes === 0) await ctx.services.files.storage.remove(w.id);
  } catch (err) {
    for (const w of written) await ctx.services.files.storage.remove(w.id).catch(() => {});
    throw err;
  }
}

/** Gives back the batch's hold on the batch queue (rule 4). */
async function release(ctx: Ctx, tx: Exec, row: store.BatchRow) {
  if (row.queue_key)
    await ctx.services.batchQueue.release(tx, {
      organizationId: row.organization_id,
      limitKey: row.queue_key,
      tokens: Number(row.queued_tokens),
    });
}

/** The input file was deleted while the batch ran: the batch fails, with what it had run discarded. */
function failLost(ctx: Ctx, row: store.BatchRow): Promise<void> {
  return failBatch(ctx, row, {
    code: 'file_not_found',
    message: `The input file ${row.input_file_id} was deleted while the batch ran.`,
    param: 'input_file_id',
    line: null,
  });
}

/** The job queue gave up on a batch whose step kept killing its process (core/jobs.ts `onAbandon`). */
export async function abandonBatch(ctx: Ctx, job: RunBatchJob, reason: string): Promise<void> {
  const row = await store.getBatchById(ctx.store.db, job.batchId);
  if (row) await failBatch(ctx, row, { code: 'server_error', message: reason, param: null, line: null });
}

/** The batch fails with `error`, with what it had run discarded. */
async function failBatch(ctx: Ctx, row: store.BatchRow, error: BatchError): Promise<void> {
  await ctx.store.db.transaction().execute(async (tx) => {
    const patch = {
      status: 'failed',
      failed_at: ctx.clock.nowSeconds(),
      errors: JSON.stringify({ object: 'list', data: [error] }),
      queued_tokens: 0,
    };
    if (!(await store.updateBatch(tx, row.id, ['validating', 'in_progress', 'cancelling', 'finalizing'], patch))) return;
    await release(ctx, tx, row);
    await emitEvent(ctx, tx, row.project_id, 'batch.failed', { id: row.id });
    await store.deleteResults(tx, row.id);
  });
}
