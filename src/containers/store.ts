import { sql, type Insertable, type Selectable } from 'kysely';
import { paginate, type ListPage, type ListParams } from '../core/pagination.js';
import type { Exec } from '../store/db.js';
import type { ContainersTables as T } from './tables.js';

/** The SQL of containers and their files. Reads are scoped to a project. */
export type ContainerRow = Selectable<T['containers']>;
export type ContainerFileRow = Selectable<T['container_files']>;

/** Bytes per stored part: a file of 64 MiB is 64 rows. */
export const PART_BYTES = 1 << 20;

// Containers

export async function insertContainer(exec: Exec, row: Insertable<T['containers']>): Promise<void> {
  await exec.insertInto('containers').values(row).execute();
}

export const getContainer = (exec: Exec, projectId: string, id: string) =>
  exec.selectFrom('containers').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();

export const listContainers = (exec: Exec, projectId: string, params: ListParams & { name?: string }): Promise<ListPage<ContainerRow>> => {
  let q = exec.selectFrom('containers').selectAll().where('project_id', '=', projectId);
  if (params.name !== undefined) q = q.where('name', '=', params.name);
  return paginate(q, 'id', params, { defaultLimit: 20, maxLimit: 100, map: (r) => r });
};

/** Marks the container used now (its expiry counts from here). */
export async function touchContainer(exec: Exec, id: string, nowSeconds: number): Promise<void> {
  await exec
    .updateTable('containers')
    .set({ last_active_at: nowSeconds })
    .where('id', '=', id)
    .where('last_active_at', '<', nowSeconds)
    .execute();
}

/** Deletes a container with its files and their bytes; false when there was none. */
export async function deleteContainer(exec: Exec, id: string): Promise<boolean> {
  await exec
    .deleteFrom('container_file_parts')
    .where('container_file_id', 'in', exec.selectFrom('container_files').select('id').where('container_id', '=', id))
    .execute();
  await exec.deleteFrom('container_files').where('container_id', '=', id).execute();
  const res = await exec.deleteFrom('containers').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

// Files

export const getFile = (exec: Exec, containerId: string, id: string) =>
  exec.selectFrom('container_files').selectAll().where('id', '=', id).where('container_id', '=', containerId).executeTakeFirst();

export const fileAtPath = (exec: Exec, containerId: string, path: string) =>
  exec.selectFrom('container_files').selectAll().where('container_id', '=', containerId).where('path', '=', path).executeTakeFirst();

export const listFiles = (exec: Exec, containerId: string, params: ListParams): Promise<ListPage<ContainerFileRow>> =>
  paginate(exec.selectFrom('container_files').selectAll().where('container_id', '=', containerId), 'id', params, {
    defaultLimit: 20,
    maxLimit: 100,
    map: (r) => r,
  });

/** Every file of a container, oldest first (what its sandbox holds). */
export const allFiles = (exec: Exec, containerId: string) =>
  exec.selectFrom('container_files').selectAll().where('container_id', '=', containerId).orderBy('id').execute();

export async function countFiles(exec: Exec, containerId: string): Promise<{ files: number; bytes: number }> {
  const row = await exec
    .selectFrom('container_files')
    .select([sql<number>`count(*)`.as('files'), sql<number>`coalesce(sum(bytes), 0)`.as('bytes')])
    .where('container_id', '=', containerId)
    .executeTakeFirstOrThrow();
  return { files: Number(row.files), bytes: Number(row.bytes) };
}

/** Writes a file's row and its bytes (replacing the bytes of a file of that id), in the caller's transaction. */
export async function putFile(exec: Exec, row: Insertable<T['container_files']>, data: Uint8Array): Promise<void> {
  const existing = await exec.selectFrom('container_files').select('id').where('id', '=', row.id).executeTakeFirst();
  if (existing) await exec.updateTable('container_files').set({ bytes: row.bytes, source: row.source }).where('id', '=', row.id).execute();
  else await exec.insertInto('container_files').values(row).execute();
  await exec.deleteFrom('container_file_parts').where('container_file_id', '=', row.id).execute();
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  for (let seq = 0, at = 0; at < buf.length || seq === 0; seq++, at += PART_BYTES)
    await exec
      .insertInto('container_file_parts')
      .values({ container_file_id: row.id, seq, data: buf.subarray(at, at + PART_BYTES) })
      .execute();
}

/** A file's bytes, whole (the sandbox takes them whole). */
export async function readBytes(exec: Exec, fileId: string): Promise<Buffer> {
  const parts = await exec
    .selectFrom('container_file_parts')
    .select('data')
    .where('container_file_id', '=', fileId)
    .orderBy('seq')
    .execute();
  return Buffer.concat(parts.map((p) => Buffer.from(p.data)));
}

export async function deleteFile(exec: Exec, id: string): Promise<boolean> {
  await exec.deleteFrom('container_file_parts').where('container_file_id', '=', id).execute();
  const res = await exec.deleteFrom('container_files').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The expiry moment of a container, in Unix seconds, as SQL. */
const expiresAt = sql<number>`(last_active_at + expires_minutes * 60)`;

/** Retention: deletes at most `limit` files of containers expired at or before `cutoffSeconds`. */
export async function purgeExpiredFiles(exec: Exec, cutoffSeconds: number, limit: number): Promise<number> {
  const ids = (
    await exec
      .selectFrom('container_files')
      .select('id')
      .where('container_id', 'in', exec.selectFrom('containers').select('id').where(expiresAt, '<=', cutoffSeconds))
      .limit(limit)
      .execute()
  ).map((r) => r.id);
  if (!ids.length) return 0;
  await exec.deleteFrom('container_file_parts').where('container_file_id', 'in', ids).execute();
  await exec.deleteFrom('container_files').where('id', 'in', ids).execute();
  return ids.length;
}

/** Retention: deletes at most `limit` containers expired at or before `cutoffSeconds` (with any file left). */
export async function purgeExpiredContainers(exec: Exec, cutoffSeconds: number, limit: number): Promise<number> {
  const ids = (await exec.selectFrom('containers').select('id').where(expiresAt, '<=', cutoffSeconds).limit(limit).execute()).map(
    (r) => r.id,
  );
  for (const id of ids) await deleteContainer(exec, id);
  return ids.length;
}

/** A container's project, in any project (the dashboard's search). */
export const containerProject = (exec: Exec, id: string) =>
  exec.selectFrom('containers').select(['project_id']).where('id', '=', id).executeTakeFirst();

/** A container file's container and project, in any project (the dashboard's search). */
export const fileContainer = (exec: Exec, id: string) =>
  exec.selectFrom('container_files').select(['project_id', 'container_id']).where('id', '=', id).executeTakeFirst();
