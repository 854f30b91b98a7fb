import { PostgresAdapter, type Insertable, type Selectable } from 'kysely';
import { paginate, type ListPage, type ListParams } from '../core/pagination.js';
import { copyStatement } from '../store/copy.js';
import { precompiled, runAlone, type Db, type Exec } from '../store/db.js';
import type { FilesTables } from './tables.js';

/** The SQL of files and their parts. Every read of a file is scoped to its project; an expired file is gone. */
export type FileRow = Selectable<FilesTables['files']>;

export async function insertFile(exec: Exec, row: Insertable<FilesTables['files']>): Promise<void> {
  await exec.insertInto('files').values(row).execute();
}

/** insertFile on its own (committed when this resolves), with the turn's statements on PostgreSQL (db.ts runAlone). */
export async function insertFileAlone(db: Db, row: Insertable<FilesTables['files']>): Promise<void> {
  await runAlone(db, db.insertInto('files').values(row));
}

const liveFile = precompiled<{ projectId: string; id: string; nowSeconds: number }, FileRow>(['projectId', 'id', 'nowSeconds'], (db, a) =>
  db
    .selectFrom('files')
    .selectAll()
    .where('id', '=', a.id)
    .where('project_id', '=', a.projectId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', a.nowSeconds)])),
);
/** A live file of the project (not expired at `nowSeconds`); the row is shared by the same read in one turn: not to be changed. */
export const getFile = async (exec: Exec, projectId: string, id: string, nowSeconds: number): Promise<FileRow | undefined> =>
  (await liveFile(exec, { projectId, id, nowSeconds }))[0];

/** The live files of the project among `ids` (at most a few hundred: a file batch's). */
export const getFiles = (exec: Exec, projectId: string, ids: readonly string[], nowSeconds: number): Promise<FileRow[]> =>
  ids.length
    ? exec
        .selectFrom('files')
        .selectAll()
        .where('id', 'in', ids)
        .where('project_id', '=', projectId)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowSeconds)]))
        .execute()
    : Promise.resolve([]);

/** Any file row by id, expired or not (the expiry and cleanup jobs). */
export const getFileById = (exec: Exec, id: string) => exec.selectFrom('files').selectAll().where('id', '=', id).executeTakeFirst();

/** A page of the project's live files, optionally of one purpose. */
export function listFiles<T>(
  exec: Exec,
  projectId: string,
  nowSeconds: number,
  params: ListParams & { purpose?: string },
  map: (row: FileRow) => T,
): Promise<ListPage<T>> {
  let q = exec
    .selectFrom('files')
    .selectAll()
    .where('project_id', '=', projectId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowSeconds)]));
  if (params.purpose !== undefined) q = q.where('purpose', '=', params.purpose);
  return paginate(q, 'id', params, { defaultLimit: 10_000, maxLimit: 10_000, map });
}

/** Deletes a file's row; false when there was none. */
export async function deleteFile(exec: Exec, id: string): Promise<boolean> {
  const res = await exec.deleteFrom('files').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Bytes of a file's part written and read with the turn's other statements (readSmallPart): a small file's. */
export const SMALL_PART = 1 << 16;

/**
 * Stores one part of a file's bytes (`pieces`, one after the other), on its own (committed when this
 * resolves). A small part joins the turn's statements on PostgreSQL's pipelined connections (db.ts
 * runAlone); a large one would hold up the statements behind it there, and takes a connection of its own,
 * where PostgreSQL gets it by a COPY: its pieces written straight into a buffer that earlier COPYs used
 * (store/copy.ts), where an INSERT had them joined, then copied twice into new buffers by the driver.
 */
export async function insertPart(db: Db, fileId: string, seq: number, pieces: readonly Buffer[]): Promise<void> {
  const bytes = pieces.reduce((n, p) => n + p.length, 0);
  if (bytes > SMALL_PART && db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.executeQuery(
      copyStatement('file_parts', ['file_id', 'seq', 'data'], ['text', 'int4', 'bytea'], [[fileId, seq, pieces]]).compile(),
    );
    return;
  }
  const query = db
    .insertInto('file_parts')
    .values({ file_id: fileId, seq, data: pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, bytes) });
  if (bytes <= SMALL_PART) await runAlone(db, query);
  else await query.execute();
}

/** One part of a file's bytes, or undefined past the last. */
export async function readPart(exec: Exec, fileId: string, seq: number): Promise<Buffer | undefined> {
  const row = await exec.selectFrom('file_parts').select('data').where('file_id', '=', fileId).where('seq', '=', seq).executeTakeFirst();
  return row?.data;
}

const smallPartStatement = precompiled<{ fileId: string; seq: number }, { data: Buffer }>(['fileId', 'seq'], (db, a) =>
  db.selectFrom('file_parts').select('data').where('file_id', '=', a.fileId).where('seq', '=', a.seq),
);
/**
 * readPart of a small file's part (up to SMALL_PART bytes): a statement compiled once, read with the turn's other reads
 * on PostgreSQL's pipelined connections (store/pipeline.ts), where a part of a megabyte would hold up the
 * statements behind it. A small file's only round trip on the pool, before: a tenth of the server's
 * time a file in a batch of files of 2 KB. The buffer may be shared by the same read in one turn: not to be changed.
 */
export async function readSmallPart(exec: Exec, fileId: string, seq: number): Promise<Buffer | undefined> {
  return (await smallPartStatement(exec, { fileId, seq }))[0]?.data;
}

export async function deleteParts(exec: Exec, fileId: string): Promise<void> {
  await exec.deleteFrom('file_parts').where('file_id', '=', fileId).execute();
}
