import { isIP } from 'node:net';
import type { Ctx } from '../core/module.js';
import { invalid, notFound } from '../core/errors.js';
import type { EventEnvelope } from '../core/events.js';
import { newId } from '../core/ids.js';
import type { ListParams } from '../core/pagination.js';
import { fromJson, type Exec } from '../store/db.js';
import { DEPRECATED_EVENT_TYPE, EVENT_TYPES, isEventType } from './catalog.js';
import { isWebhookSecret, newWebhookSecret } from './signing.js';
import type { Outbound } from '../core/outbound.js';
import * as store from './store.js';

/** How long the old secret keeps signing after a rotation, unless the request says otherwise. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 3600;
/** Endpoints per project. */
export const MAX_ENDPOINTS = 100;

export interface WebhookEndpoint {
  id: string;
  object: 'webhook_endpoint';
  project_id: string;
  name: string;
  url: string;
  event_types: string[];
  status: 'enabled' | 'disabled';
  /** The secret's prefix and last four characters. */
  secret_hint: string;
  /** Unix seconds until which the previous secret also signs, or null. */
  previous_secret_expires_at: number | null;
  created_at: number;
  updated_at: number;
  /** Only in the answer that created the endpoint or rotated its secret. */
  secret?: string;
}

type EndpointRow = store.EndpointRow;

const hint = (secret: string) => `whsec_…${secret.slice(-4)}`;

function toEndpoint(ctx: Pick<Ctx, 'clock'>, row: EndpointRow): WebhookEndpoint {
  const graceLive = row.previous_secret && row.previous_secret_expires_at !== null && row.previous_secret_expires_at > ctx.clock.now();
  return {
    id: row.id,
    object: 'webhook_endpoint',
    project_id: row.project_id,
    name: row.name,
    url: row.url,
    event_types: fromJson<string[]>(row.event_types) ?? [],
    status: row.enabled ? 'enabled' : 'disabled',
    secret_hint: hint(row.secret),
    previous_secret_expires_at: graceLive ? Math.floor(row.previous_secret_expires_at! / 1000) : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Checks a public URL: http(s), no credentials, no fragment, and not an IP literal the SSRF guard would refuse. */
export function checkUrl(raw: string, outbound?: Pick<Outbound, 'allowed'>): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`'url' must be an absolute http or https URL.`, 'url', 'invalid_url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(`'url' must use https or http.`, 'url', 'invalid_url');
  if (url.username || url.password) throw invalid(`'url' must not carry credentials.`, 'url', 'invalid_url');
  if (url.hash) throw invalid(`'url' must not have a fragment.`, 'url', 'invalid_url');
  if (raw.length > 2048) throw invalid(`'url' must be at most 2048 characters.`, 'url', 'invalid_url');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (outbound && isIP(host) && !outbound.allowed(host)) {
    throw invalid(
      `'url' points at ${host}, an address Standin does not deliver to (private, link-local, metadata or loopback); allow-list it with --outbound-allow for local work.`,
      'url',
      'invalid_url',
    );
  }
  return url.toString();
}

/**
 * Checks the event types of a subscription. `live.call.incoming` is deprecated: an endpoint that already
 * has it keeps it (`existing`), nobody adds it (`allowDeprecated` is for config files mirroring existing setups).
 */
export function checkEventTypes(types: string[], existing: string[] = [], allowDeprecated = false): string[] {
  if (!Array.isArray(types) || types.length === 0) throw invalid(`'event_types' must list at least one event type.`, 'event_types');
  const out: string[] = [];
  types.forEach((t, i) => {
    if (!isEventType(t))
      throw invalid(`'event_types[${i}]' must be one of ${EVENT_TYPES.join(', ')}; got '${t}'.`, `event_types[${i}]`, 'invalid_value');
    if (t === DEPRECATED_EVENT_TYPE && !existing.includes(t) && !allowDeprecated) {
      throw invalid(
        `'event_types[${i}]': live.call.incoming is deprecated and open to existing subscriptions only; subscribe to live.transport.incoming.`,
        `event_types[${i}]`,
        'deprecated_event_type',
      );
    }
    if (!out.includes(t)) out.push(t);
  });
  return out;
}

async function projectEndpoint(exec: Exec, projectId: string, id: string): Promise<EndpointRow> {
  const row = await store.getEndpoint(exec, projectId, id);
  if (!row) throw notFound('webhook endpoint', id);
  return row;
}

export interface EndpointInput {
  name: string;
  url: string;
  event_types: string[];
  enabled?: boolean;
  /** A fixed secret (config files, local setups); generated when omitted. */
  secret?: string;
}

/** Creates an endpoint; the answer carries the signing secret, the only time it is shown. */
export async function createEndpoint(
  ctx: Ctx,
  exec: Exec,
  projectId: string,
  input: EndpointInput,
  opts: { allowDeprecated?: boolean; outbound?: Pick<Outbound, 'allowed'> } = {},
): Promise<WebhookEndpoint> {
  if ((await store.countEndpoints(exec, projectId)) >= MAX_ENDPOINTS)
    throw invalid(`A project has at most ${MAX_ENDPOINTS} webhook endpoints.`, null, 'limit_exceeded');
  if (input.secret !== undefined && !isWebhookSecret(input.secret))
    throw invalid(`'secret' must be 'whsec_' followed by the base64 of 24 to 64 bytes.`, 'secret', 'invalid_value');
  const now = ctx.clock.nowSeconds();
  const row: EndpointRow = {
    id: newId('whep', ctx.clock),
    project_id: projectId,
    name: checkName(input.name),
    url: checkUrl(input.url, opts.outbound),
    event_types: JSON.stringify(checkEventTypes(input.event_types, [], opts.allowDeprecated)),
    enabled: input.enabled === false ? 0 : 1,
    secret: input.secret ?? newWebhookSecret(),
    previous_secret: null,
    previous_secret_expires_at: null,
    created_at: now,
    updated_at: now,
  };
  await store.insertEndpoint(exec, row);
  return { ...toEndpoint(ctx, row), secret: row.secret };
}

function checkName(name: string): string {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 200)
    throw invalid(`'name' must be 1 to 200 characters.`, 'name');
  return name;
}

export async function listEndpoints(ctx: Ctx, exec: Exec, projectId: string): Promise<WebhookEndpoint[]> {
  return (await store.listEndpoints(exec, projectId)).map((r) => toEndpoint(ctx, r));
}

export async function getEndpoint(ctx: Ctx, exec: Exec, projectId: string, id: string): Promise<WebhookEndpoint> {
  return toEndpoint(ctx, await projectEndpoint(exec, projectId, id));
}

/** Changes name, URL, event types or status. */
export async function updateEndpoint(
  ctx: Ctx,
  exec: Exec,
  projectId: string,
  id: string,
  patch: Partial<Omit<EndpointInput, 'secret'>>,
  opts: { outbound?: Pick<Outbound, 'allowed'> } = {},
): Promise<WebhookEndpoint> {
  const row = await projectEndpoint(exec, projectId, id);
  const next = { ...row, updated_at: ctx.clock.nowSeconds() };
  if (patch.name !== undefined) next.name = checkName(patch.name);
  if (patch.url !== undefined) next.url = checkUrl(patch.url, opts.outbound);
  if (patch.event_types !== undefined)
    next.event_types = JSON.stringify(checkEventTypes(patch.event_types, fromJson<string[]>(row.event_types) ?? []));
  if (patch.enabled !== undefined) next.enabled = patch.enabled ? 1 : 0;
  await store.updateEndpoint(exec, id, {
    name: next.name,
    url: next.url,
    event_types: next.event_types,
    enabled: next.enabled,
    updated_at: next.updated_at,
  });
  return toEndpoint(ctx, next);
}

/** Deletes an endpoint with its deliveries and attempts, in one transaction (their jobs find nothing and end). */
export async function deleteEndpoint(ctx: Pick<Ctx, 'store'>, projectId: string, id: string): Promise<void> {
  await ctx.store.db.transaction().execute(async (tx) => {
    await projectEndpoint(tx, projectId, id);
    await store.deleteEndpoint(tx, id);
  });
}

/**
 * The config file's endpoints of a project, matched by name: new ones are created (a config file mirrors
 * an existing setup, so it may keep a live.call.incoming subscription), declared ones updated in place.
 * Returns the endpoints created with a generated secret (to show once).
 */
export async function declareEndpoints(
  ctx: Ctx,
  tx: Exec,
  projectId: string,
  endpoints: readonly EndpointInput[],
): Promise<WebhookEndpoint[]> {
  const existing = new Map((await listEndpoints(ctx, tx, projectId)).map((e) => [e.name, e]));
  const generated: WebhookEndpoint[] = [];
  for (const e of endpoints) {
    const found = existing.get(e.name);
    if (!found) {
      const created = await createEndpoint(ctx, tx, projectId, e, { allowDeprecated: true, outbound: ctx.outbound });
      if (!e.secret) generated.push(created);
      continue;
    }
    await store.updateEndpoint(tx, found.id, {
      url: e.url,
      event_types: JSON.stringify([...new Set(e.event_types)]),
      enabled: e.enabled === false ? 0 : 1,
      ...(e.secret ? { secret: e.secret } : {}),
      updated_at: ctx.clock.nowSeconds(),
    });
  }
  return generated;
}

/**
 * Replaces the signing secret. The old one keeps signing (both signatures in `webhook-signature`) for
 * `graceSeconds`; 0 retires it at once. The answer carries the new secret, shown this once.
 */
export async function rotateSecret(
  ctx: Ctx,
  exec: Exec,
  projectId: string,
  id: string,
  graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
  secret?: string,
): Promise<WebhookEndpoint> {
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > 7 * 86400) {
    throw invalid(`'grace_period_seconds' must be an integer from 0 to 604800 (7 days).`, 'grace_period_seconds', 'invalid_value');
  }
  if (secret !== undefined && !isWebhookSecret(secret))
    throw invalid(`'secret' must be 'whsec_' followed by the base64 of 24 to 64 bytes.`, 'secret', 'invalid_value');
  const row = await projectEndpoint(exec, projectId, id);
  const next: EndpointRow = {
    ...row,
    secret: secret ?? newWebhookSecret(),
    previous_secret: graceSeconds > 0 ? row.secret : null,
    previous_secret_expires_at: graceSeconds > 0 ? ctx.clock.now() + graceSeconds * 1000 : null,
    updated_at: ctx.clock.nowSeconds(),
  };
  await store.updateEndpoint(exec, id, {
    secret: next.secret,
    previous_secret: next.previous_secret,
    previous_secret_expires_at: next.previous_secret_expires_at,
    updated_at: next.updated_at,
  });
  return { ...toEndpoint(ctx, next), secret: next.secret };
}

export interface WebhookAttempt {
  object: 'webhook_attempt';
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  ok: boolean;
  error: string | null;
  response_excerpt: string | null;
  response_truncated: boolean;
}

export interface WebhookDelivery {
  id: string;
  object: 'webhook_delivery';
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  created_at: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status_code: number | null;
  completed_at: number | null;
  attempts?: WebhookAttempt[];
  event?: EventEnvelope;
}

const sec = (ms: number | null) => (ms === null ? null : Math.floor(Number(ms) / 1000));

function toDelivery(row: store.DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    object: 'webhook_delivery',
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status as WebhookDelivery['status'],
    attempt_count: Number(row.attempt_count),
    created_at: sec(row.created_at)!,
    next_attempt_at: sec(row.next_attempt_at),
    last_attempt_at: sec(row.last_attempt_at),
    last_status_code: row.last_status_code,
    completed_at: sec(row.completed_at),
  };
}

/** Deliveries of one endpoint, newest first (cursor paged). */
export async function listDeliveries(exec: Exec, projectId: string, endpointId: string, params: ListParams & { status?: string }) {
  await projectEndpoint(exec, projectId, endpointId);
  return store.listDeliveries(exec, endpointId, params, toDelivery);
}

/** An event with the project it belongs to and its deliveries (the dashboard's "what a request caused"). */
export interface ObjectEvent {
  object: 'object_event';
  project_id: string;
  event: EventEnvelope;
  deliveries: WebhookDelivery[];
}

/**
 * The newest events about any of `objectIds` (what made or touched them: a response created, a batch
 * finished later by a job), newest first, each with its deliveries.
 */
export async function eventsOfObjects(exec: Exec, objectIds: string[], limit = 50): Promise<ObjectEvent[]> {
  const rows = await store.eventsOfObject(exec, objectIds, limit);
  const deliveries = await store.deliveriesOfEvents(
    exec,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({
    object: 'object_event' as const,
    project_id: r.project_id,
    event: JSON.parse(r.payload) as EventEnvelope,
    deliveries: deliveries.filter((d) => d.event_id === r.id).map(toDelivery),
  }));
}

/** One event by its id (the `webhook-id` a receiver got), with its project and deliveries; null when not stored. */
export async function eventById(exec: Exec, eventId: string): Promise<ObjectEvent | null> {
  const row = await store.eventById(exec, eventId);
  if (!row) return null;
  const deliveries = await store.deliveriesOfEvents(exec, [row.id]);
  return {
    object: 'object_event',
    project_id: row.project_id,
    event: JSON.parse(row.payload) as EventEnvelope,
    deliveries: deliveries.map(toDelivery),
  };
}

/** Where a delivery lives (project and endpoint), found by its id alone; undefined when not stored. */
export const locateDelivery = (exec: Exec, id: string) => store.deliveryById(exec, id);

/** The project of an endpoint, found by its id alone; undefined when not stored. */
export const locateEndpoint = (exec: Exec, id: string) => store.endpointById(exec, id);

/** One delivery with its attempts and the event it carries. */
export async function getDelivery(exec: Exec, projectId: string, id: string): Promise<WebhookDelivery> {
  const row = await store.getDelivery(exec, projectId, id);
  if (!row) throw notFound('webhook delivery', id);
  const attempts = await store.listAttempts(exec, id);
  const event = await store.eventPayload(exec, row.event_id);
  return {
    ...toDelivery(row),
    attempts: attempts.map((a) => ({
      object: 'webhook_attempt' as const,
      attempt: a.attempt,
      started_at: Math.floor(Number(a.started_at) / 1000),
      duration_ms: Math.round(Number(a.duration_us) / 10) / 100,
      status_code: a.status_code,
      ok: a.ok === 1,
      error: a.error,
      response_excerpt: a.response_excerpt,
      response_truncated: a.response_truncated === 1,
    })),
    event: event ? (JSON.parse(event) as EventEnvelope) : undefined,
  };
}

/** Job kind of one delivery (payload `{ deliveryId }`). */
export const DELIVER = 'webhook.deliver';

/** Creates a pending delivery and its job, in the caller's transaction. */
export async function enqueueDelivery(
  ctx: Ctx,
  exec: Exec,
  projectId: string,
  endpointId: string,
  eventId: string,
  eventType: string,
): Promise<string> {
  const row = pendingDelivery(ctx, { projectId, endpointId, eventId, eventType });
  await store.insertDeliveries(exec, [row]);
  await ctx.jobs.enqueue(exec, DELIVER, { deliveryId: row.id }, { id: `job_${row.id}` });
  return row.id;
}

/** A new delivery of an event to an endpoint, due now (its first attempt has not been made). */
export function pendingDelivery(
  ctx: Ctx,
  d: { projectId: string; endpointId: string; eventId: string; eventType: string },
): store.DeliveryRow {
  const now = ctx.clock.now();
  return {
    id: newId('whdel', ctx.clock),
    project_id: d.projectId,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_type: d.eventType,
    status: 'pending',
    attempt_count: 0,
    created_at: now,
    next_attempt_at: now,
    last_attempt_at: null,
    last_status_code: null,
    completed_at: null,
  };
}

/** Sends an event again to one endpoint: a new delivery (same event, so the same `webhook-id`) with a fresh 72-hour window. */
export async function resendDelivery(ctx: Ctx, projectId: string, deliveryId: string): Promise<WebhookDelivery> {
  const delivery = await ctx.store.db.transaction().execute(async (tx) => {
    const row = await store.getDelivery(tx, projectId, deliveryId);
    if (!row) throw notFound('webhook delivery', deliveryId);
    const id = await enqueueDelivery(ctx, tx, projectId, row.endpoint_id, row.event_id, row.event_type);
    return getDelivery(tx, projectId, id);
  });
  ctx.jobs.wake(DELIVER);
  return delivery;
}
