import type { Exec } from '../store/db.js';
import type { Ctx } from './module.js';
import { newId } from './ids.js';

/** The webhook event envelope of the platform spec (section B). */
export interface EventEnvelope {
  id: string;
  object: 'event';
  type: string;
  created_at: number;
  data: Record<string, unknown>;
}

/** Job kind that fans an event out to the project's webhook endpoints (handled by the webhooks module). */
export const EVENT_FANOUT = 'event.fanout';

/**
 * Records an event in the outbox, in the caller's transaction, so the state change and its event
 * commit together; a worker delivers it afterwards (at least once). With `fanout: false` the event is
 * only recorded (a test event sent to one endpoint). Returns the envelope.
 */
export async function emitEvent(
  ctx: Pick<Ctx, 'clock' | 'jobs'>,
  exec: Exec,
  projectId: string,
  type: string,
  data: Record<string, unknown>,
  opts: { fanout?: boolean } = {},
): Promise<EventEnvelope> {
  const envelope: EventEnvelope = { id: newId('evt', ctx.clock), object: 'event', type, created_at: ctx.clock.nowSeconds(), data };
  await exec
    .insertInto('events')
    .values({
      id: envelope.id,
      project_id: projectId,
      type,
      created_at: envelope.created_at,
      payload: JSON.stringify(envelope),
      object_id: typeof data.id === 'string' ? data.id : null,
    })
    .execute();
  if (opts.fanout !== false) await ctx.jobs.enqueue(exec, EVENT_FANOUT, { eventId: envelope.id, projectId });
  return envelope;
}
