import type { Insertable } from 'kysely';
import type { Exec } from '../store/db.js';
import type { ImagesTables } from './tables.js';

/** The SQL of image audit requests. */
export async function insertAuditRequest(exec: Exec, row: Insertable<ImagesTables['image_audit_requests']>): Promise<void> {
  await exec.insertInto('image_audit_requests').values(row).execute();
}

/** Retention: deletes up to `limit` audit requests made before `before` (seconds); returns how many. */
export async function purgeAuditRequests(exec: Exec, before: number, limit: number): Promise<number> {
  const ids = exec.selectFrom('image_audit_requests').select('id').where('created_at', '<', before).limit(limit);
  const r = await exec.deleteFrom('image_audit_requests').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}
