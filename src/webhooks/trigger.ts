import { randomBytes } from 'node:crypto';
import type { Ctx } from '../core/module.js';
import { invalid } from '../core/errors.js';
import { EVENT_FANOUT, emitEvent, type EventEnvelope } from '../core/events.js';
import { getProject } from '../identity/service.js';
import type { Exec } from '../store/db.js';
import {
  EVENT_TYPES,
  isEventType,
  mediaSecurity,
  sampleIds,
  sampleSipInvite,
  sanitizeSipHeaders,
  type EventType,
  type SipHeader,
} from './catalog.js';
import type { TriggerData } from './schemas.js';
import { DELIVER, enqueueDelivery, getEndpoint } from './service.js';

/** What a caller may pin in a triggered event's data; the rest is made up realistically. */
export type { TriggerData };

function checkType(type: string): EventType {
  if (!isEventType(type)) throw invalid(`'type' must be one of ${EVENT_TYPES.join(', ')}; got '${type}'.`, 'type', 'invalid_value');
  return type;
}

/** `standin trigger --event-data` is JSON no route schema has checked: SIP headers are checked here. */
function checkSipHeaders(headers: unknown): SipHeader[] {
  if (!Array.isArray(headers) || headers.length > 200)
    throw invalid(`'data.sip_headers' must be an array of at most 200 {name, value} objects.`, 'data.sip_headers');
  headers.forEach((h, i) => {
    if (!h || typeof h.name !== 'string' || typeof h.value !== 'string' || h.name.length > 256 || h.value.length > 8192) {
      throw invalid(`'data.sip_headers[${i}]' must be {name: string (≤256), value: string (≤8192)}.`, `data.sip_headers[${i}]`);
    }
  });
  return headers as SipHeader[];
}

/** The SIP payload of the spec: authorization headers dropped, order and repeats kept, media security only when known. */
function sipData(type: EventType, input: TriggerData): Record<string, unknown> {
  const headers = sanitizeSipHeaders(input.sip_headers !== undefined ? checkSipHeaders(input.sip_headers) : sampleSipInvite());
  const security = mediaSecurity(input.sip_media_security === undefined ? 'srtp' : input.sip_media_security);
  const data: Record<string, unknown> =
    type === 'realtime.call.incoming'
      ? { call_id: input.call_id ?? sampleIds.realtimeCall() }
      : { session_id: input.session_id ?? sampleIds.liveSession() };
  data.sip_headers = headers;
  if (type === 'live.transport.incoming') data.type = 'sip';
  if (security) data.sip_media_security = security;
  return data;
}

/** Sample data of an event type with no objects behind it (dashboard test events). */
export function sampleData(type: EventType, input: TriggerData = {}): Record<string, unknown> {
  if (type === 'realtime.call.incoming' || type === 'live.transport.incoming' || type === 'live.call.incoming') return sipData(type, input);
  if (input.id) return { id: input.id };
  if (type.startsWith('response.')) return { id: `resp_${randomBytes(24).toString('hex')}` };
  if (type.startsWith('batch.')) return { id: sampleIds.batch() };
  if (type.startsWith('fine_tuning.')) return { id: sampleIds.fineTuningJob() };
  if (type.startsWith('eval.')) return { id: sampleIds.evalRun() };
  if (type === 'safety.alert.created' || type === 'safety.org_alert.created')
    return { id: `safety_alert_${randomBytes(12).toString('hex')}` };
  return { id: `safety_case_${randomBytes(12).toString('hex')}` };
}

/**
 * Emits one event of any type of the spec, as the platform would: response and safety events get a real
 * object behind `data.id` (retrievable with GET /v1/responses/{id}, /v1/safety/cases/{id},
 * /v1/safety/alerts/{id}); SIP events carry the INVITE headers. Fans out to subscribed endpoints.
 */
export async function triggerEvent(ctx: Ctx, projectId: string, rawType: string, input: TriggerData = {}): Promise<EventEnvelope> {
  const type = checkType(rawType);
  const project = await getProject(ctx.store.db, projectId);
  const event = await ctx.store.db
    .transaction()
    .execute(async (tx) => emitEvent(ctx, tx, projectId, type, await objectFor(ctx, tx, project.organization_id, projectId, type, input)));
  ctx.jobs.wake(EVENT_FANOUT);
  return event;
}

/** The event's data: a real object made by the area that owns the type (`Module.eventSamples`), or sample data. */
async function objectFor(
  ctx: Ctx,
  tx: Exec,
  organizationId: string,
  projectId: string,
  type: EventType,
  input: TriggerData,
): Promise<Record<string, unknown>> {
  const sample = input.id ? undefined : ctx.modules.flatMap((m) => m.eventSamples ?? []).find((s) => s.types.includes(type));
  if (sample) return sample.create(ctx, tx, { type, organizationId, projectId, input: { ...input } });
  return sampleData(type, input);
}

/**
 * Sends a test event with sample data to one endpoint, whatever it subscribes to (the dashboard's
 * "send test event"). The event is stored, so its delivery can be inspected and resent.
 */
export async function sendTestEvent(ctx: Ctx, projectId: string, endpointId: string, rawType: string, input: TriggerData = {}) {
  const type = checkType(rawType);
  const endpoint = await getEndpoint(ctx, ctx.store.db, projectId, endpointId);
  const out = await ctx.store.db.transaction().execute(async (tx) => {
    const event = await emitEvent(ctx, tx, projectId, type, sampleData(type, input), { fanout: false });
    const deliveryId = await enqueueDelivery(ctx, tx, projectId, endpoint.id, event.id, type);
    return { event, delivery_id: deliveryId };
  });
  ctx.jobs.wake(DELIVER);
  return out;
}
