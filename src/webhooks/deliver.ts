import { wallNow } from '../core/clock.js';
import type { Ctx } from '../core/module.js';
import { newId } from '../core/ids.js';
import { readCapped, type Outbound } from '../core/outbound.js';
import { nextAttemptAt, RETRY_WINDOW_MS } from './backoff.js';
import { signatureHeader } from './signing.js';
import { DELIVER, pendingDelivery } from './service.js';
import type { Receivers } from './receivers.js';
import type { Recorder } from './recorder.js';
import * as store from './store.js';
import type { WebhookTables } from './tables.js';

/** Bytes of a receiver's answer kept with an attempt. */
export const EXCERPT_BYTES = 2048;
export const USER_AGENT = 'Standin-Webhooks/1.0 (Standard Webhooks)';

export interface DeliverOptions {
  outbound: Outbound;
  /** A 2xx within this time is receipt (ms). */
  timeoutMs: number;
  /** The retry window (72 hours by the spec). */
  windowMs?: number;
  random?: () => number;
  /** Writes attempt records (group commit). */
  recorder: Recorder;
  /** The enabled endpoints of an event's project, with the event (the fan-outs claimed together share one read). */
  endpointsOfEvent: (eventId: string) => Promise<store.EventEndpoint[]>;
  /** Holds slow receivers to a share of the delivery slots (receivers.ts). */
  receivers: Receivers;
}

interface AttemptResult {
  statusCode: number | null;
  ok: boolean;
  error: string | null;
  excerpt: string | null;
  truncated: boolean;
  durationUs: number;
  /** No answer within the timeout. */
  timedOut: boolean;
}

/** One POST: the envelope as stored, signed for this attempt. Never throws; every outcome is a result. */
export async function attempt(
  opts: DeliverOptions,
  url: string,
  eventId: string,
  body: string,
  secrets: string[],
  timestampSeconds: number,
): Promise<AttemptResult> {
  const headers = {
    'user-agent': USER_AGENT,
    'content-type': 'application/json',
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signatureHeader(secrets, eventId, timestampSeconds, body),
  };
  const started = performance.now();
  const took = () => Math.round((performance.now() - started) * 1000);
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    const res = await opts.outbound.request(url, { method: 'POST', headers, body, signal });
    const { text, truncated } = await readCapped(res, EXCERPT_BYTES).catch(() => ({ text: '', truncated: false }));
    const status = res.statusCode;
    const ok = status >= 200 && status < 300;
    const error = ok ? null : status >= 300 && status < 400 ? 'redirect not followed (3xx counts as a failure)' : `non-2xx answer`;
    return { statusCode: status, ok, error, excerpt: text || null, truncated, durationUs: took(), timedOut: false };
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string } };
    let error: string;
    const timedOut =
      signal.aborted ||
      e.name === 'TimeoutError' ||
      e.name === 'AbortError' ||
      e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
      e.code === 'UND_ERR_BODY_TIMEOUT';
    if (timedOut) {
      error = `no answer within ${opts.timeoutMs} ms`;
    } else if (e.code === 'ERR_SSRF_BLOCKED') {
      error = e.message;
    } else {
      error = `${e.code ?? e.name}: ${e.message}`.slice(0, 500);
    }
    return { statusCode: null, ok: false, error, excerpt: null, truncated: false, durationUs: took(), timedOut };
  }
}

type DeliveryRow = {
  id: string;
  status: string;
  attempt_count: number;
  created_at: number;
  event_id: string;
  url: string;
  enabled: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  payload: string;
};

/**
 * Makes one attempt of a pending delivery and records it with the delivery's new state, in one
 * transaction (shared with other attempts finishing at the same time); `create` is a delivery that is
 * written only now, with its first attempt. With `scheduleRetry`, a failure also enqueues the `webhook.deliver` job of the next
 * attempt in that transaction (the fan-out makes first attempts inline). Returns the retry time, if any.
 *
 * A slow receiver that has its share of attempts running gets none now (receivers.ts): a delivery the
 * fan-out makes is written with a `webhook.deliver` job for later, and a `webhook.deliver` job is told when
 * to come back: later the more often it was claimed (`claims`), at most a minute.
 */
async function attemptDelivery(
  ctx: Ctx,
  opts: DeliverOptions,
  row: DeliveryRow,
  scheduleRetry: boolean,
  create?: NewDelivery,
  claims = 1,
): Promise<number | null> {
  const now = ctx.clock.now();
  if (!row.enabled) {
    // Disabled after the delivery was queued: it ends without an attempt; resend it once the endpoint is enabled.
    await store.failPendingDelivery(ctx.store.db, row.id, now);
    ctx.services.metrics?.webhookDeliveryEnded('failed');
    return null;
  }
  // A fan-out run again after a crash may meet a delivery already written with no attempt: it has no job
  // to come back with, so it is attempted now whatever the share.
  if (!opts.receivers.begin(row.url, scheduleRetry && !create)) {
    const runAt = now + opts.receivers.deferMs(claims);
    if (!create) {
      await store.putOffDelivery(ctx.store.db, row.id, runAt);
      return runAt;
    }
    await ctx.store.db.transaction().execute(async (tx) => {
      await store.insertDeliveries(tx, [{ ...create, next_attempt_at: runAt }]);
      await ctx.jobs.enqueue(tx, DELIVER, { deliveryId: create.id }, { runAt, id: `job_${create.id}` });
    });
    return null;
  }
  const secrets = [row.secret];
  if (row.previous_secret && row.previous_secret_expires_at !== null && Number(row.previous_secret_expires_at) > now)
    secrets.push(row.previous_secret);

  // Signed with the real time of this attempt: receivers check it against their own clock (Standard
  // Webhooks: 5 minutes), and the Standin clock may have been moved. Scheduling stays on the Standin clock.
  const result = await attempt(opts, row.url, row.event_id, row.payload, secrets, Math.floor(wallNow() / 1000));
  opts.receivers.end(row.url, { ms: result.durationUs / 1000, timedOut: result.timedOut });
  const n = row.attempt_count + 1;
  const after = ctx.clock.now();
  const retryAt = result.ok ? null : nextAttemptAt(Number(row.created_at), after, n, opts.random, opts.windowMs ?? RETRY_WINDOW_MS);
  const status = result.ok ? 'succeeded' : retryAt === null ? 'failed' : 'pending';

  await opts.recorder.record({
    attempt: {
      id: newId('whatt', ctx.clock),
      delivery_id: row.id,
      attempt: n,
      started_at: now,
      duration_us: result.durationUs,
      status_code: result.statusCode,
      ok: result.ok ? 1 : 0,
      error: result.error,
      response_excerpt: result.excerpt,
      response_truncated: result.truncated ? 1 : 0,
    },
    delivery: {
      id: row.id,
      status,
      attempt_count: n,
      last_attempt_at: now,
      last_status_code: result.statusCode,
      next_attempt_at: retryAt,
      completed_at: status === 'pending' ? null : after,
    },
    create,
    retry:
      scheduleRetry && retryAt !== null ? { kind: DELIVER, deliveryId: row.id, runAt: retryAt, jobId: `job_${row.id}_${n}` } : undefined,
  });
  ctx.services.metrics?.webhookAttempt(result, status);
  return retryAt;
}

/**
 * The `webhook.deliver` job: one attempt of one delivery (a retry, a resend or a test event); on failure
 * the job comes back at the next backoff time until the 72-hour window (Standin clock) closes, then the
 * delivery is `failed`. A crash between the POST and the record means the attempt is made again (at
 * least once; `webhook-id` lets receivers drop the duplicate).
 */
export async function deliver(
  ctx: Ctx,
  opts: DeliverOptions,
  payload: { deliveryId: string },
  job: { attempts: number },
): Promise<void | { retryAt: number }> {
  const row = await store.deliveryToAttempt(ctx.store.db, payload.deliveryId);
  if (!row || row.status !== 'pending') return;
  const retryAt = await attemptDelivery(ctx, opts, row, false, undefined, job.attempts);
  if (retryAt !== null) return { retryAt };
}

type NewDelivery = WebhookTables['webhook_deliveries'];

/**
 * The `event.fanout` job: one delivery per enabled endpoint of the project subscribed to the event's type,
 * with its first attempt made right here; the delivery row is written together with that attempt (a job
 * round trip and a write less per delivery). Until then the fan-out job itself, still claimed, is what
 * guarantees the delivery: after a crash it runs again and attempts every subscribed endpoint that has
 * no recorded attempt yet (at least once).
 */
export async function fanout(ctx: Ctx, opts: DeliverOptions, payload: { eventId: string }, job: { attempts: number }): Promise<void> {
  const db = ctx.store.db;
  const endpoints = await opts.endpointsOfEvent(payload.eventId);
  const targets = endpoints.filter((e) => (JSON.parse(e.event_types) as string[]).includes(e.type));
  if (targets.length === 0) return;
  // Only a run after a crash can find deliveries of this event already there.
  const existing = job.attempts > 1 ? await store.deliveriesOfEvent(db, payload.eventId) : [];
  const byEndpoint = new Map(existing.map((d) => [d.endpoint_id, d]));
  const fresh = targets
    .filter((e) => !byEndpoint.has(e.id))
    .map((e) => pendingDelivery(ctx, { projectId: e.project_id, endpointId: e.id, eventId: payload.eventId, eventType: e.type }));
  const work: Promise<unknown>[] = [];
  for (const e of targets) {
    const created = fresh.find((f) => f.endpoint_id === e.id);
    const d = byEndpoint.get(e.id) ?? created!;
    if (d.status !== 'pending' || d.attempt_count !== 0) continue;
    const row: DeliveryRow = {
      id: d.id,
      status: d.status,
      attempt_count: 0,
      created_at: d.created_at,
      event_id: payload.eventId,
      url: e.url,
      enabled: e.enabled,
      secret: e.secret,
      previous_secret: e.previous_secret,
      previous_secret_expires_at: e.previous_secret_expires_at,
      payload: e.payload,
    };
    work.push(attemptDelivery(ctx, opts, row, true, created));
  }
  await Promise.all(work);
}
