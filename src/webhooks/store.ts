import type { Compilable, Selectable } from 'kysely';
import { paginate, type ListParams } from '../core/pagination.js';
import { precompiled, queryAlone, runAlone, type Db, type Exec } from '../store/db.js';
import type { WebhookTables } from './tables.js';

/** The SQL of the webhooks area: endpoints, deliveries, attempts (and the outbox's events they carry). */

export type EndpointRow = Selectable<WebhookTables['webhook_endpoints']>;
export type DeliveryRow = Selectable<WebhookTables['webhook_deliveries']>;
export type AttemptRow = Selectable<WebhookTables['webhook_attempts']>;

export const getEndpoint = (exec: Exec, projectId: string, id: string): Promise<EndpointRow | undefined> =>
  exec.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();

export async function countEndpoints(exec: Exec, projectId: string): Promise<number> {
  const r = await exec
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export const insertEndpoint = async (exec: Exec, row: EndpointRow) =>
  void (await exec.insertInto('webhook_endpoints').values(row).execute());

/** A project's endpoints, oldest first. */
export const listEndpoints = (exec: Exec, projectId: string): Promise<EndpointRow[]> =>
  exec.selectFrom('webhook_endpoints').selectAll().where('project_id', '=', projectId).orderBy('id').execute();

export const updateEndpoint = async (exec: Exec, id: string, values: Partial<Omit<EndpointRow, 'id' | 'project_id' | 'created_at'>>) =>
  void (await exec.updateTable('webhook_endpoints').set(values).where('id', '=', id).execute());

/** Deletes an endpoint with its deliveries and their attempts. */
export async function deleteEndpoint(exec: Exec, id: string): Promise<void> {
  const deliveries = exec.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id);
  await exec.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
  await exec.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
  await exec.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
}

/** A page of an endpoint's deliveries (cursor paged), optionally of one status. */
export function listDeliveries<T>(exec: Exec, endpointId: string, params: ListParams & { status?: string }, map: (row: DeliveryRow) => T) {
  let q = exec.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId);
  if (params.status) q = q.where('status', '=', params.status);
  return paginate(q, 'id', params, { defaultLimit: 20, maxLimit: 100, map });
}

export const getDelivery = (exec: Exec, projectId: string, id: string): Promise<DeliveryRow | undefined> =>
  exec.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();

export const listAttempts = (exec: Exec, deliveryId: string): Promise<AttemptRow[]> =>
  exec.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('attempt').execute();

/** The stored envelope of an event (JSON text). */
export const eventPayload = async (exec: Exec, eventId: string): Promise<string | undefined> =>
  (await exec.selectFrom('events').select('payload').where('id', '=', eventId).executeTakeFirst())?.payload;

/** An event's row (its project and envelope), in any project. */
export const eventById = (exec: Exec, eventId: string) =>
  exec.selectFrom('events').select(['id', 'project_id', 'payload']).where('id', '=', eventId).executeTakeFirst();

/** A delivery's project and endpoint, in any project. */
export const deliveryById = (exec: Exec, id: string) =>
  exec.selectFrom('webhook_deliveries').select(['project_id', 'endpoint_id']).where('id', '=', id).executeTakeFirst();

/** An endpoint's project, in any project. */
export const endpointById = (exec: Exec, id: string) =>
  exec.selectFrom('webhook_endpoints').select(['project_id']).where('id', '=', id).executeTakeFirst();

/** The newest events about an object (`events.object_id`), with the project each belongs to. */
export const eventsOfObject = (exec: Exec, objectIds: string[], limit: number) =>
  exec
    .selectFrom('events')
    .select(['id', 'project_id', 'payload'])
    .where('object_id', 'in', objectIds)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();

/** Every delivery of some events. */
export const deliveriesOfEvents = (exec: Exec, eventIds: string[]): Promise<DeliveryRow[]> =>
  eventIds.length
    ? exec.selectFrom('webhook_deliveries').selectAll().where('event_id', 'in', eventIds).orderBy('id').execute()
    : Promise.resolve([]);

export const insertDeliveries = async (exec: Exec, rows: DeliveryRow[]) =>
  void (await exec.insertInto('webhook_deliveries').values(rows).execute());

/** A delivery's state after an attempt. */
export type DeliveryState = Pick<
  DeliveryRow,
  'id' | 'status' | 'attempt_count' | 'last_attempt_at' | 'last_status_code' | 'next_attempt_at' | 'completed_at'
>;

/**
 * The statements that record a batch of attempts: deliveries written with their first attempt, the
 * attempts, and the new state of deliveries that already existed. None needs another's answer.
 */
export function recordStatements(
  exec: Exec,
  created: DeliveryRow[],
  attempts: AttemptRow[],
  updated: DeliveryState[],
): Compilable<unknown>[] {
  const out: Compilable<unknown>[] = [];
  if (created.length) out.push(exec.insertInto('webhook_deliveries').values(created));
  if (attempts.length) out.push(exec.insertInto('webhook_attempts').values(attempts));
  for (const d of updated)
    out.push(
      exec
        .updateTable('webhook_deliveries')
        .set({
          status: d.status,
          attempt_count: d.attempt_count,
          last_attempt_at: d.last_attempt_at,
          last_status_code: d.last_status_code,
          next_attempt_at: d.next_attempt_at,
          completed_at: d.completed_at,
        })
        .where('id', '=', d.id),
    );
  return out;
}

/** Ends a pending delivery without an attempt (its endpoint was disabled meanwhile). */
export const failPendingDelivery = async (exec: Exec, id: string, nowMs: number) =>
  void (await exec
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, completed_at: nowMs })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute());

/** A pending delivery put off without an attempt (a slow receiver's share is taken) shows when it comes back. */
export const putOffDelivery = async (db: Db, id: string, runAtMs: number) =>
  void (await runAlone(
    db,
    db.updateTable('webhook_deliveries').set({ next_attempt_at: runAtMs }).where('id', '=', id).where('status', '=', 'pending'),
  ));

/** A delivery with what an attempt needs: its endpoint (URL, secrets) and the stored envelope (precompiled: pipelined on PostgreSQL). */
const deliveryToAttemptQuery = precompiled(['id'], (db, a: { id: string }) =>
  db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .innerJoin('events as v', 'v.id', 'd.event_id')
    .select([
      'd.id',
      'd.status',
      'd.attempt_count',
      'd.created_at',
      'd.event_id',
      'e.url',
      'e.enabled',
      'e.secret',
      'e.previous_secret',
      'e.previous_secret_expires_at',
      'v.payload',
    ])
    .where('d.id', '=', a.id),
);
export const deliveryToAttempt = async (exec: Exec, id: string) => (await deliveryToAttemptQuery(exec, { id }))[0];

/**
 * The enabled endpoints of some events' projects, with each event: one row per event and endpoint. One
 * statement for all the events (the fan-outs claimed together), outside any transaction (on PostgreSQL
 * with the turn's pipelined statements).
 */
export const endpointsOfEvents = (db: Db, eventIds: string[]) =>
  queryAlone(
    db,
    db
      .selectFrom('events as v')
      .innerJoin('webhook_endpoints as e', 'e.project_id', 'v.project_id')
      .select([
        'v.id as event_id',
        'e.id',
        'e.event_types',
        'e.url',
        'e.enabled',
        'e.secret',
        'e.previous_secret',
        'e.previous_secret_expires_at',
        'v.type',
        'v.payload',
        'v.project_id',
      ])
      .where('v.id', 'in', eventIds)
      .where('e.enabled', '=', 1),
  );

export type EventEndpoint = Awaited<ReturnType<typeof endpointsOfEvents>>[number];

/** The deliveries an event already has (a fan-out run again after a crash). */
export const deliveriesOfEvent = (exec: Exec, eventId: string) =>
  exec
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id', 'status', 'attempt_count', 'created_at'])
    .where('event_id', '=', eventId)
    .execute();

/**
 * Retention: deletes up to `limit` deliveries that ended (succeeded or failed) before `beforeMs`, with
 * their attempts. A pending delivery is never deleted. Returns how many deliveries went.
 */
export async function purgeDeliveries(exec: Exec, beforeMs: number, limit: number): Promise<number> {
  const ids = (
    await exec
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '!=', 'pending')
      .where('completed_at', '<', beforeMs)
      .limit(limit)
      .execute()
  ).map((r) => r.id);
  if (!ids.length) return 0;
  await exec.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
  await exec.deleteFrom('webhook_deliveries').where('id', 'in', ids).where('status', '!=', 'pending').execute();
  return ids.length;
}

/**
 * Retention: deletes up to `limit` outbox events created before `beforeSeconds` that no delivery refers
 * to any more, and that no fan-out job still waiting could need: events made after the oldest such job
 * was queued are kept (an event and its fan-out job are written in one transaction).
 */
export async function purgeEvents(exec: Exec, beforeSeconds: number, limit: number, fanoutKind: string): Promise<number> {
  const oldestFanout = await exec
    .selectFrom('jobs')
    .select((eb) => eb.fn.min('created_at').as('at'))
    .where('kind', '=', fanoutKind)
    .executeTakeFirst();
  const horizon = oldestFanout?.at == null ? beforeSeconds : Math.min(beforeSeconds, Math.floor(Number(oldestFanout.at) / 1000));
  const ids = (
    await exec
      .selectFrom('events as v')
      .select('v.id')
      .where('v.created_at', '<', horizon)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'v.id'))),
      )
      .limit(limit)
      .execute()
  ).map((r) => r.id);
  if (!ids.length) return 0;
  await exec.deleteFrom('events').where('id', 'in', ids).execute();
  return ids.length;
}
