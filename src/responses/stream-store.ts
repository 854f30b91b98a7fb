import { randomBytes } from 'node:crypto';
import type { Ctx } from '../core/module.js';
import type { Exec } from '../store/db.js';
import { notify } from '../store/listen.js';

/** SQL of the stored stream events of background responses, and of the instance's reasoning key. */

/** The PostgreSQL channel writers notify when a response's event log grows (core/bus.ts). */
export const RESPONSES_CHANNEL = 'standin_responses';

export async function appendEvents(
  ctx: Pick<Ctx, 'clock' | 'store'>,
  exec: Exec,
  responseId: string,
  events: { sequence_number: number }[],
): Promise<void> {
  if (!events.length) return;
  const now = ctx.clock.now();
  await exec
    .insertInto('response_events')
    .values(events.map((e) => ({ response_id: responseId, seq: e.sequence_number, data: JSON.stringify(e), created_at: now })))
    .execute();
  if (ctx.store.dialect === 'postgres') await notify(exec, RESPONSES_CHANNEL, responseId);
}

/** The events after `after`, in order, at most `limit`. */
export const eventsAfter = (exec: Exec, responseId: string, after: number, limit = 500) =>
  exec
    .selectFrom('response_events')
    .select(['seq', 'data'])
    .where('response_id', '=', responseId)
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute();

export const lastSeq = async (exec: Exec, responseId: string): Promise<number> => {
  const row = await exec
    .selectFrom('response_events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('response_id', '=', responseId)
    .executeTakeFirst();
  return row?.seq == null ? -1 : Number(row.seq);
};

export async function deleteEvents(exec: Exec, responseId: string): Promise<void> {
  await exec.deleteFrom('response_events').where('response_id', '=', responseId).execute();
}

/** Retention: drops up to `limit` events written before `cutoffMs` whose response is over (or gone); returns how many went. */
export async function purgeEvents(exec: Exec, cutoffMs: number, limit: number): Promise<number> {
  const rows = await exec
    .selectFrom('response_events as e')
    .select(['e.response_id', 'e.seq'])
    .where('e.created_at', '<', cutoffMs)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('responses as r')
            .select('r.id')
            .whereRef('r.id', '=', 'e.response_id')
            .where('r.status', 'in', ['queued', 'in_progress']),
        ),
      ),
    )
    .limit(limit)
    .execute();
  const byResponse = new Map<string, number[]>();
  for (const r of rows) byResponse.set(r.response_id, [...(byResponse.get(r.response_id) ?? []), Number(r.seq)]);
  for (const [id, seqs] of byResponse)
    await exec.deleteFrom('response_events').where('response_id', '=', id).where('seq', 'in', seqs).execute();
  return rows.length;
}

const keys = new WeakMap<object, Promise<Buffer>>();

/** The instance's 256-bit key sealing reasoning items, made once and kept in the store (every Standin on it shares it). */
export function instanceKey(ctx: Pick<Ctx, 'store'>): Promise<Buffer> {
  let key = keys.get(ctx.store);
  if (!key) {
    key = (async () => {
      const db = ctx.store.db;
      await db
        .insertInto('response_secrets')
        .values({ name: 'reasoning', value: randomBytes(32).toString('base64') })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      const row = await db.selectFrom('response_secrets').select('value').where('name', '=', 'reasoning').executeTakeFirstOrThrow();
      return Buffer.from(row.value, 'base64');
    })();
    key.catch(() => keys.delete(ctx.store));
    keys.set(ctx.store, key);
  }
  return key;
}

/** Forgets the cached key (an admin reset emptied the table: the next use makes a new one). */
export function forgetInstanceKey(ctx: Pick<Ctx, 'store'>): void {
  keys.delete(ctx.store);
}
