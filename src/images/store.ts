import type { Insertable } from 'kysely';
import type { Exec } from '../store/db.js';
import type { ImagesTables } from './tables.js';

/** The SQL of image audit requests. */
export async function insertAuditRequest(exec: Exec, row: Insertable<ImagesTables['image_audit_requests']>): Promise<void> {
  await exec.insertInto('image_audit_requests').values(row).execute();
}
