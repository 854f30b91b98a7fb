import { PostgresAdapter, sql, type Compilable, type Insertable, type Selectable, type Updateable } from 'kysely';
import { nextTurn } from '../core/next-turn.js';
import { paginate, type ListPage, type ListParams } from '../core/pagination.js';
import { precompiled, precompiledQuery, precompiledRows, precompiledWrite, runTogether, type Db, type Exec } from '../store/db.js';
import { copyStatement, type CopyType } from '../store/copy.js';
import { MAX_RUN } from './ingest-segments.js';
import { FILE_STATUS } from './search-source.js';
import type { VectorStoreTables as T } from './tables.js';

/** The SQL of vector stores, their files, batches, texts and chunks. Reads are scoped to a project. */
export type StoreRow = Selectable<T['vector_stores']>;
export type StoreFileRow = Selectable<T['vector_store_files']>;
export type BatchRow = Selectable<T['vector_store_file_batches']>;
export type ChunkRow = Insertable<T['vector_store_chunks']>;

// Vector stores

export async function insertStore(exec: Exec, row: Insertable<T['vector_stores']>): Promise<void> {
  await exec.insertInto('vector_stores').values(row).execute();
}

export const getStore = (exec: Exec, projectId: string, id: string) =>
  exec.selectFrom('vector_stores').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();

/** A vector store's project, in any project. */
export const storeProject = (exec: Exec, id: string) =>
  exec.selectFrom('vector_stores').select(['project_id']).where('id', '=', id).executeTakeFirst();

export const listStores = (exec: Exec, projectId: string, params: ListParams): Promise<ListPage<StoreRow>> =>
  paginate(exec.selectFrom('vector_stores').selectAll().where('project_id', '=', projectId), 'id', params, {
    defaultLimit: 20,
    maxLimit: 100,
    map: (r) => r,
  });

export async function updateStore(exec: Exec, id: string, patch: Updateable<T['vector_stores']>): Promise<void> {
  await exec.updateTable('vector_stores').set(patch).where('id', '=', id).execute();
}

/** Marks the store used now (its expiry counts from here). */
export async function touchStore(exec: Exec, id: string, nowSeconds: number): Promise<void> {
  await exec
    .updateTable('vector_stores')
    .set({ last_active_at: nowSeconds })
    .where('id', '=', id)
    .where('last_active_at', '<', nowSeconds)
    .execute();
}

/**
 * Versions of a store whose changed files are kept at least; an index further behind is loaded whole. The
 * older ones are dropped every FORGET_EVERY versions (a statement for each file of a large batch, before).
 */
export const CHANGES_KEPT = 1000;
export const FORGET_EVERY = 100;

const bumpStatement = precompiled<{ storeId: string }, { index_version: number }>(['storeId'], (db, a) =>
  db
    .updateTable('vector_stores')
    .set({ index_version: sql`index_version + 1` })
    .where('id', '=', a.storeId)
    .returning('index_version'),
);
const changeStatement = precompiledWrite<{ storeId: string; version: number; fileId: string }>(['storeId', 'version', 'fileId'], (db, a) =>
  db.insertInto('vector_store_changes').values({ vector_store_id: a.storeId, version: a.version, file_id: a.fileId }),
);
const forgetChangesStatement = precompiledWrite<{ storeId: string; upTo: number }>(['storeId', 'upTo'], (db, a) =>
  db.deleteFrom('vector_store_changes').where('vector_store_id', '=', a.storeId).where('version', '<=', a.upTo),
);

/**
 * Says these files' chunks or attributes changed in a store: its `index_version` grows by one and the
 * change is logged under the new version, in the caller's transaction (so every instance sees both at once).
 */
export async function bumpVersion(exec: Exec, storeId: string, fileIds: readonly string[]): Promise<void> {
  // Every ingestion runs these (statements compiled once: Kysely's building and compiling was a tenth of the
  // server's time per file of a batch of small files).
  const [row] = await bumpStatement(exec, { storeId });
  if (!row) return;
  const version = row.index_version;
  const unique = [...new Set(fileIds)];
  if (unique.length === 1) await changeStatement(exec, { storeId, version, fileId: unique[0] });
  else
    for (let i = 0; i < unique.length; i += 100)
      await exec
        .insertInto('vector_store_changes')
        .values(unique.slice(i, i + 100).map((file_id) => ({ vector_store_id: storeId, version, file_id })))
        .execute();
  await forgetChanges(exec, storeId, version);
}

/** Drops the changes older than the last CHANGES_KEPT versions, at every FORGET_EVERY-th version. */
async function forgetChanges(exec: Exec, storeId: string, version: number): Promise<void> {
  if (version > CHANGES_KEPT && version % FORGET_EVERY === 0) await forgetChangesStatement(exec, { storeId, upTo: version - CHANGES_KEPT });
}

/**
 * PostgreSQL: an ingestion's completion (endIngestion), the store's version bumped and the file's change
 * logged under it (bumpVersion), as one statement: three of a small file's fifteen round trips.
 */
const completeStatement = precompiledQuery<IngestKey & { usageBytes: number }, { version: number }>(
  ['storeId', 'fileId', 'ingestId', 'usageBytes'],
  (db, a) =>
    db
      .with('ended', (w) =>
        w
          .updateTable('vector_store_files')
          .set({ status: 'completed', usage_bytes: a.usageBytes, last_error: null })
          .where('vector_store_id', '=', a.storeId)
          .where('file_id', '=', a.fileId)
          .where('ingest_id', '=', a.ingestId)
          .where('status', '=', 'in_progress')
          .returning('file_id'),
      )
      .with('bumped', (w) =>
        w
          .updateTable('vector_stores')
          .set({ index_version: sql`index_version + 1` })
          .where('id', '=', a.storeId)
          .where((eb) => eb.exists(eb.selectFrom('ended').select('file_id')))
          .returning('index_version'),
      )
      .insertInto('vector_store_changes')
      .columns(['vector_store_id', 'version', 'file_id'])
      .expression((eb) =>
        eb.selectFrom('bumped').select((s) => [s.val(a.storeId).as('vector_store_id'), 'index_version', s.val(a.fileId).as('file_id')]),
      )
      .returning('version'),
);

/**
 * Completes an ingestion that used `usageBytes` of the store, if it is still the attachment's current one
 * and in progress, and says its file changed (bumpVersion). True when it completed it.
 */
export async function completeIngestion(exec: Exec, key: IngestKey, usageBytes: number): Promise<boolean> {
  if (exec.getExecutor().adapter instanceof PostgresAdapter) {
    const [row] = (await exec.executeQuery(completeStatement(exec, { ...key, usageBytes }).compile())).rows;
    if (row) await forgetChanges(exec, key.storeId, row.version);
    return row !== undefined;
  }
  if (!(await endIngestion(exec, key, { status: 'completed', usage_bytes: usageBytes, last_error: null }))) return false;
  await bumpVersion(exec, key.storeId, [key.fileId]);
  return true;
}

/** The files changed by the versions after `from` up to `to`, with the versions seen. */
export const readChanges = (exec: Exec, storeId: string, from: number, to: number) =>
  exec
    .selectFrom('vector_store_changes')
    .select(['version', 'file_id'])
    .where('vector_store_id', '=', storeId)
    .where('version', '>', from)
    .where('version', '<=', to)
    .execute();

/**
 * Deletes a store with its files' rows: a file at a time in short statements (clearIngested), so a store
 * of a million chunks does not hold the server's thread (SQLite runs on it) in one statement for seconds.
 */
export async function deleteStore(exec: Exec, id: string): Promise<boolean> {
  await exec.deleteFrom('vector_store_changes').where('vector_store_id', '=', id).execute();
  // The attachments first, as in deleteStoreFile.
  const files = await exec.deleteFrom('vector_store_files').where('vector_store_id', '=', id).returning('file_id').execute();
  for (const { file_id } of files) await clearIngested(exec, id, file_id);
  // Rows of no attachment (none are written, so these are cheap statements that find nothing).
  await exec.deleteFrom('vector_store_chunks').where('vector_store_id', '=', id).execute();
  await exec.deleteFrom('vector_store_texts').where('vector_store_id', '=', id).execute();
  await exec.deleteFrom('vector_store_file_batches').where('vector_store_id', '=', id).execute();
  const res = await exec.deleteFrom('vector_stores').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The stores of a project Standin made for a thread. */
export async function storesMadeFor(exec: Exec, projectId: string, threadId: string): Promise<string[]> {
  const rows = await exec
    .selectFrom('vector_stores')
    .select('id')
    .where('made_for_thread', '=', threadId)
    .where('project_id', '=', projectId)
    .execute();
  return rows.map((r) => r.id);
}

/** Files by status and their bytes, per store. */
export const fileCounts = (exec: Exec, storeIds: readonly string[]) =>
  storeIds.length
    ? exec
        .selectFrom('vector_store_files')
        .select([
          'vector_store_id',
          'status',
          (eb) => eb.fn.countAll<number>().as('n'),
          (eb) => eb.fn.sum<number>('usage_bytes').as('bytes'),
        ])
        .where('vector_store_id', 'in', storeIds)
        .groupBy(['vector_store_id', 'status'])
        .execute()
    : Promise.resolve([]);

// Files of a store

type StoreFileInsert = Insertable<T['vector_store_files']>;
/** The columns an attachment writes; one attached again keeps its store, file and project. */
const ATTACHED = [
  'filename',
  'status',
  'usage_bytes',
  'created_at',
  'last_error',
  'chunking',
  'attributes',
  'batch_id',
  'ingest_id',
] as const;
const upsertStoreFilesStatement = precompiledRows<Required<StoreFileInsert>>(
  ['vector_store_id', 'file_id', 'project_id', ...ATTACHED],
  (db, rows) =>
    db
      .insertInto('vector_store_files')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['vector_store_id', 'file_id'])
          .doUpdateSet((eb) => Object.fromEntries(ATTACHED.map((c) => [c, eb.ref(`excluded.${c}`)]))),
      ),
);

/**
 * Attaches files (again), each named once (a file batch's): a new attachment replaces an earlier one of
 * the same file. In statements of up to CHUNK_ROWS rows, compiled once per size.
 */
export async function upsertStoreFiles(exec: Exec, rows: StoreFileInsert[]): Promise<void> {
  const complete = rows.map((row) => ({ last_error: null, attributes: null, batch_id: null, ...row }) as Required<StoreFileInsert>);
  await runInTurns(exec, inRuns(exec, upsertStoreFilesStatement, complete));
}

const storeFileStatement = precompiled<{ storeId: string; fileId: string }, StoreFileRow>(['storeId', 'fileId'], (db, a) =>
  db.selectFrom('vector_store_files').selectAll().where('vector_store_id', '=', a.storeId).where('file_id', '=', a.fileId),
);
/** A file's attachment to a store; the row is shared by the same read in one turn: not to be changed. */
export const getStoreFile = async (exec: Exec, storeId: string, fileId: string): Promise<StoreFileRow | undefined> =>
  (await storeFileStatement(exec, { storeId, fileId }))[0];

/** A page of a store's files (ordered by file id, which is time-ordered), by status and batch when asked. */
export function listStoreFiles(
  exec: Exec,
  storeId: string,
  params: ListParams & { filter?: string; batchId?: string },
): Promise<ListPage<StoreFileRow & { id: string }>> {
  let q = exec.selectFrom('vector_store_files').selectAll().select('file_id as id').where('vector_store_id', '=', storeId);
  if (params.filter !== undefined) q = q.where('status', '=', params.filter as StoreFileRow['status']);
  if (params.batchId !== undefined) q = q.where('batch_id', '=', params.batchId);
  return paginate(q, 'file_id', params, { defaultLimit: 20, maxLimit: 100, map: (r) => r });
}

export async function setAttributes(exec: Exec, storeId: string, fileId: string, attributes: string | null): Promise<void> {
  await exec
    .updateTable('vector_store_files')
    .set({ attributes })
    .where('vector_store_id', '=', storeId)
    .where('file_id', '=', fileId)
    .execute();
}

type FileKey = { storeId: string; fileId: string };
const lastChunkStatement = precompiled<FileKey, { last: number | null; segments: number | null }>(['storeId', 'fileId'], (db, a) =>
  db
    .selectFrom('vector_store_chunks')
    .select((eb) => [eb.fn.max('seq').as('last'), eb.fn.max('text_to').as('segments')])
    .where('vector_store_id', '=', a.storeId)
    .where('file_id', '=', a.fileId),
);
const lastPartStatement = precompiled<FileKey, { last: number | null }>(['storeId', 'fileId'], (db, a) =>
  db
    .selectFrom('vector_store_texts')
    .select((eb) => eb.fn.max('part').as('last'))
    .where('vector_store_id', '=', a.storeId)
    .where('file_id', '=', a.fileId),
);

/** Drops what a file's earlier ingestion left in a store (chunks and text), CHUNK_ROWS chunks and TEXT_PARTS parts of text a statement. */
export async function clearIngested(exec: Exec, storeId: string, fileId: string): Promise<void> {
  const [chunks] = await lastChunkStatement(exec, { storeId, fileId });
  const [texts] = await lastPartStatement(exec, { storeId, fileId });
  await dropIngested(exec, storeId, fileId, chunks, texts);
}

/** clearIngested of several files (a file batch's, at most a few hundred): what each left found in two statements for all. */
export async function clearIngestedAll(exec: Exec, storeId: string, fileIds: readonly string[]): Promise<void> {
  if (!fileIds.length) return;
  const chunks = await exec
    .selectFrom('vector_store_chunks')
    .select((eb) => ['file_id', eb.fn.max('seq').as('last'), eb.fn.max('text_to').as('segments')])
    .where('vector_store_id', '=', storeId)
    .where('file_id', 'in', fileIds)
    .groupBy('file_id')
    .execute();
  const texts = await exec
    .selectFrom('vector_store_texts')
    .select((eb) => ['file_id', eb.fn.max('part').as('last')])
    .where('vector_store_id', '=', storeId)
    .where('file_id', 'in', fileIds)
    .groupBy('file_id')
    .execute();
  const chunksOf = new Map(chunks.map((c) => [c.file_id, c]));
  const textsOf = new Map(texts.map((t) => [t.file_id, t]));
  for (const fileId of new Set([...chunksOf.keys(), ...textsOf.keys()]))
    await dropIngested(exec, storeId, fileId, chunksOf.get(fileId), textsOf.get(fileId));
}

/** Drops a file's chunks up to `chunks.last` and its text's parts up to `texts.last` (their largest numbers). */
async function dropIngested(
  exec: Exec,
  storeId: string,
  fileId: string,
  chunks: { last: number | null; segments: number | null } | undefined,
  texts: { last: number | null } | undefined,
): Promise<void> {
  for (let from = 0; from <= Number(chunks?.last ?? -1); from += CHUNK_ROWS) {
    await exec
      .deleteFrom('vector_store_chunks')
      .where('vector_store_id', '=', storeId)
      .where('file_id', '=', fileId)
      .where('seq', '>=', from)
      .where('seq', '<', from + CHUNK_ROWS)
      .execute();
    await nextTurn();
  }
  // A text cut at its chunks' edges has small parts (chunks name them); one from before, parts of TEXT_PART.
  const step = chunks?.segments == null ? TEXT_PARTS : TEXT_SEGMENTS;
  for (let from = 0; from <= Number(texts?.last ?? -1); from += step) {
    await exec
      .deleteFrom('vector_store_texts')
      .where('vector_store_id', '=', storeId)
      .where('file_id', '=', fileId)
      .where('part', '>=', from)
      .where('part', '<', from + step)
      .execute();
    await nextTurn();
  }
}

export async function deleteStoreFile(exec: Exec, storeId: string, fileId: string): Promise<boolean> {
  // The attachment first: on PostgreSQL its row lock waits for an ingestion's transaction writing the file's
  // rows (stillIngesting), whose rows the next statements then see and drop.
  const res = await exec
    .deleteFrom('vector_store_files')
    .where('vector_store_id', '=', storeId)
    .where('file_id', '=', fileId)
    .executeTakeFirst();
  await clearIngested(exec, storeId, fileId);
  return Number(res.numDeletedRows) > 0;
}

/**
 * Whether this ingestion is still the file's current one and in progress; on PostgreSQL the attachment's
 * row stays locked until the transaction ends, so an attach or a removal meanwhile waits for it and then
 * sees what it wrote (both take that row before they drop the file's rows). SQLite runs one write
 * transaction at a time.
 */
export const stillIngesting = async (exec: Exec, key: IngestKey): Promise<boolean> => (await attachmentStatus(exec, key)) === 'in_progress';

/** The status of this ingestion's attachment, undefined when the file was attached again or removed (its row locked: stillIngesting). */
export async function attachmentStatus(exec: Exec, key: IngestKey): Promise<string | undefined> {
  return (await attachmentStatusStatement(exec, key))[0]?.status;
}
const attachmentStatusStatement = precompiled<IngestKey, { status: string }>(['storeId', 'fileId', 'ingestId'], (db, a) => {
  const q = db
    .selectFrom('vector_store_files')
    .select('status')
    .where('vector_store_id', '=', a.storeId)
    .where('file_id', '=', a.fileId)
    .where('ingest_id', '=', a.ingestId);
  return db.getExecutor().adapter instanceof PostgresAdapter ? q.forUpdate() : q;
});

type IngestKey = FileKey & { ingestId: string };

/** The stores of a project a file is attached to. */
export async function storesOfFile(exec: Exec, projectId: string, fileId: string): Promise<string[]> {
  const rows = await exec
    .selectFrom('vector_store_files')
    .select('vector_store_id')
    .where('project_id', '=', projectId)
    .where('file_id', '=', fileId)
    .execute();
  return rows.map((r) => r.vector_store_id);
}

type IngestionEnd = { status: 'completed' | 'failed' | 'cancelled'; usage_bytes: number; last_error: string | null };
const endIngestionStatement = precompiledWrite<IngestKey & IngestionEnd>(
  ['storeId', 'fileId', 'ingestId', 'status', 'usage_bytes', 'last_error'],
  (db, a) =>
    db
      .updateTable('vector_store_files')
      .set({ status: a.status, usage_bytes: a.usage_bytes, last_error: a.last_error })
      .where('vector_store_id', '=', a.storeId)
      .where('file_id', '=', a.fileId)
      .where('ingest_id', '=', a.ingestId)
      .where('status', '=', 'in_progress'),
);

/**
 * Ends an ingestion, if the attachment it served is still the current one and still in progress (a
 * cancel, a delete or a newer attachment wins otherwise). True when it ended it.
 */
export async function endIngestion(exec: Exec, key: IngestKey, end: IngestionEnd): Promise<boolean> {
  return (await endIngestionStatement(exec, { ...key, ...end })) > 0;
}

/** Every column of a chunk row: the insert names each (precompiledRows). */
const CHUNK_COLUMNS = [
  'vector_store_id',
  'file_id',
  'seq',
  'text',
  'text_from',
  'text_to',
  'tokens',
  'embedding',
  'embedder',
] as const satisfies readonly (keyof ChunkRow)[];
/** Rows a statement: 9 values a row, 1,152 parameters, well inside both databases' limits. */
export const CHUNK_ROWS = 128;
/**
 * The insert of a file's chunks, compiled once per number of rows: building and compiling a 100-row
 * insert with Kysely cost half as much as SQLite's writing of the rows (a CPU profile of ingestion).
 */
const insertChunksStatement = precompiledRows<ChunkRow>(
  CHUNK_COLUMNS,
  (db, rows) => db.insertInto('vector_store_chunks').values(rows),
  CHUNK_ROWS,
);

/**
 * Inserts chunks: on PostgreSQL with one COPY (store/copy.ts); on SQLite CHUNK_ROWS a statement, and the
 * rest in statements of powers of two (a tail of 100: 64, 32 and 4): eight sizes of statement in all, each
 * compiled and prepared once. A statement the size of each file's tail had a new size prepared for most
 * files (0.2–0.7 ms for 100 rows on SQLite) and kept up to a hundred of them.
 */
export async function insertChunks(exec: Exec, rows: ChunkRow[]): Promise<void> {
  if (onPostgres(exec)) {
    const values = rows.map((r) => CHUNK_COLUMNS.map((c) => r[c] ?? null));
    await exec.executeQuery(copyStatement('vector_store_chunks', CHUNK_COLUMNS, CHUNK_TYPES, values).compile());
    return;
  }
  await runInTurns(exec, chunkStatements(exec, rows));
}

/** PostgreSQL (a transaction's connection, or the pool's): rows are copied (store/copy.ts), one statement however many. */
const onPostgres = (exec: Exec) => exec.getExecutor().adapter instanceof PostgresAdapter;
/** Rows insertChunks and insertTextParts write in one statement at most: one COPY on PostgreSQL, CHUNK_ROWS on SQLite. */
export const rowsAStatement = (exec: Exec) => (onPostgres(exec) ? Infinity : CHUNK_ROWS);
/** The columns' types, for a COPY. */
const CHUNK_TYPE: Record<(typeof CHUNK_COLUMNS)[number], CopyType> = {
  vector_store_id: 'text',
  file_id: 'text',
  seq: 'int4',
  text: 'text',
  text_from: 'int4',
  text_to: 'int4',
  tokens: 'int4',
  embedding: 'bytea',
  embedder: 'text',
};
const CHUNK_TYPES = CHUNK_COLUMNS.map((c) => CHUNK_TYPE[c]);

/** insertChunks' statements. */
function chunkStatements(exec: Exec, rows: ChunkRow[]): Compilable<unknown>[] {
  // A chunk row that names no run of text parts keeps its text.
  const complete = rows.map((r) => (r.text_from === undefined ? { ...r, text_from: null, text_to: null } : r));
  return inRuns(exec, insertChunksStatement, complete);
}

/** Rows in statements of CHUNK_ROWS, then of powers of two. */
function inRuns<R extends Record<string, unknown>>(
  exec: Exec,
  statement: (db: Db, rows: R[]) => Compilable<unknown>,
  rows: R[],
): Compilable<unknown>[] {
  const statements: Compilable<unknown>[] = [];
  for (let i = 0; i < rows.length;) {
    let n = CHUNK_ROWS;
    while (n > rows.length - i) n >>= 1;
    statements.push(statement(exec, rows.slice(i, i + n)));
    i += n;
  }
  return statements;
}

/** Statements one after another, a turn of the event loop after each. */
async function runInTurns(exec: Exec, statements: readonly Compilable<unknown>[]): Promise<void> {
  for (const statement of statements) {
    await exec.executeQuery(statement.compile());
    await nextTurn();
  }
}

/** Parts of a text dropped a statement: whole parts of up to TEXT_PART, or segments of a chunk's size or so. */
const TEXT_PARTS = 4;
const TEXT_SEGMENTS = 256;

/** A row of a text's part as ingestion has it: its UTF-8. */
type TextRow = Omit<Insertable<T['vector_store_texts']>, 'text'> & { text: Buffer };
const TEXT_COLUMNS = ['vector_store_id', 'file_id', 'part', 'text'] as const satisfies readonly (keyof TextRow)[];
const TEXT_TYPES: CopyType[] = ['text', 'text', 'int4', 'text'];
/**
 * The parts' UTF-8 stored as text without a decode on the server's thread: SQLite takes a blob's bytes as
 * text by a cast (the ingestion checked they are UTF-8, ingest-protocol.ts), PostgreSQL decodes a bytea
 * (and checks it). A string bound instead was decoded here first, then encoded back by the driver.
 */
const insertTextsStatement = precompiledRows<TextRow>(
  TEXT_COLUMNS,
  (db, rows) =>
    db.insertInto('vector_store_texts').values(
      rows.map((r) => ({
        ...r,
        text: onPostgres(db) ? sql<string>`convert_from(${r.text}, 'UTF8')` : sql<string>`CAST(${r.text} AS TEXT)`,
      })),
    ),
  CHUNK_ROWS,
);

/**
 * Stores parts `first`, `first + 1` … of a file's text (ingest-segments.ts: the text cut at its parts'
 * and its chunks' edges), in as few statements as CHUNK_ROWS allows: the caller keeps a call to about
 * TEXT_PART bytes, which SQLite writes in a few milliseconds (a file of 8 MB in one row took 112 ms).
 */
export async function insertTextParts(exec: Exec, storeId: string, fileId: string, first: number, texts: readonly Buffer[]): Promise<void> {
  if (onPostgres(exec)) {
    const values = texts.map((text, i) => [storeId, fileId, first + i, text]);
    await exec.executeQuery(copyStatement('vector_store_texts', TEXT_COLUMNS, TEXT_TYPES, values).compile());
    return;
  }
  await runInTurns(exec, textStatements(exec, storeId, fileId, first, texts));
}

/** insertTextParts' statements. */
function textStatements(exec: Exec, storeId: string, fileId: string, first: number, texts: readonly Buffer[]): Compilable<unknown>[] {
  const rows = texts.map((text, i) => ({ vector_store_id: storeId, file_id: fileId, part: first + i, text }));
  return inRuns(exec, insertTextsStatement, rows);
}

/**
 * PostgreSQL: stillIngesting as a statement that fails (a division by zero) unless the ingestion is still
 * the attachment's current one and in progress, whose row it then locks until the commit.
 */
const ingestingStatement = precompiledQuery<IngestKey, { held: number }>(['storeId', 'fileId', 'ingestId'], (db, a) =>
  db
    .selectFrom((eb) =>
      eb
        .selectFrom('vector_store_files')
        .select('file_id')
        .where('vector_store_id', '=', a.storeId)
        .where('file_id', '=', a.fileId)
        .where('ingest_id', '=', a.ingestId)
        .where('status', '=', 'in_progress')
        .forUpdate()
        .as('attachment'),
    )
    .select(sql<number>`1 / count(*)`.as('held')),
);

/**
 * PostgreSQL: a file's whole ingestion written in one transaction sent in one go (db.ts runTogether), where
 * insertTextParts, insertChunks and completeIngestion in a transaction after `fence` and stillIngesting
 * take a round trip each (seven for a small file, with its BEGIN and COMMIT). `fence`: the job's claim as
 * a statement that fails when lost (jobs.ts fenceQuery). The transaction is rolled back, and this rejects,
 * when either the claim or the attachment no longer holds (or anything else fails); the caller then finds
 * out why as before. For a first attempt only (an earlier one's rows are not cleared here).
 */
export async function ingestAtOnce(
  db: Db,
  key: IngestKey,
  fence: Compilable<unknown>,
  texts: readonly Buffer[],
  rows: ChunkRow[],
  usageBytes: number,
): Promise<void> {
  const results = await runTogether(db, [
    fence,
    ingestingStatement(db, key),
    ...textStatements(db, key.storeId, key.fileId, 0, texts),
    ...chunkStatements(db, rows),
    completeStatement(db, { ...key, usageBytes }),
  ]);
  const [row] = results[results.length - 1] as { version: number }[];
  if (row) await forgetChanges(db, key.storeId, row.version);
}

/** How many parts a file's text has in a store (0: none). */
export async function countTextParts(exec: Exec, storeId: string, fileId: string): Promise<number> {
  const row = await exec
    .selectFrom('vector_store_texts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('vector_store_id', '=', storeId)
    .where('file_id', '=', fileId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Parts `from` … `to` of a file's text, while the file's attachment is still the completed ingestion
 * `key.ingestId`; undefined otherwise (or when a part is missing: the file changed).
 */
export async function readTextParts(exec: Exec, key: IngestKey, from: number, to: number): Promise<string[] | undefined> {
  const rows = await exec
    .selectFrom('vector_store_texts')
    .select('text')
    .where('vector_store_id', '=', key.storeId)
    .where('file_id', '=', key.fileId)
    .where('part', '>=', from)
    .where('part', '<=', to)
    .where('file_id', 'in', (eb) =>
      eb
        .selectFrom('vector_store_files')
        .select('file_id')
        .where('vector_store_id', '=', key.storeId)
        .where('file_id', '=', key.fileId)
        .where('ingest_id', '=', key.ingestId)
        .where('status', '=', 'completed'),
    )
    .orderBy('part')
    .execute();
  return rows.length === to - from + 1 ? rows.map((r) => r.text) : undefined;
}

/**
 * The status of a chunk row's file (`c`), looked up by key per row read. As a condition on the rows
 * (`IN`, `EXISTS`), PostgreSQL joined on its estimates: for a store just filled or restored (no
 * statistics yet), a load's every page read the rest of the store and sorted it, and a search's every hit
 * scanned all the store's files. A subquery in the select list leaves the plan to the chunks' key.
 */
const fileStatus = () => sql<string | null>`${sql.raw(FILE_STATUS)}`;

/**
 * The chunks of completed files among the next `limit` of a store's chunk rows (of some files only, when
 * given) after a key, in file and chunk order, and where the next page starts (null: no rows are left): a
 * search index is loaded a page at a time, so no read holds the server's thread for long. An ingestion
 * writes a file's rows over several transactions (ingest.ts); they count from its last, which completes
 * the file (`fileStatus`).
 */
export async function readChunkPage(
  exec: Exec,
  storeId: string,
  after: { fileId: string; seq: number } | null,
  limit: number,
  fileIds?: readonly string[],
) {
  let q = exec
    .selectFrom('vector_store_chunks as c')
    .select(['c.file_id', 'c.seq', 'c.text', 'c.text_from', 'c.text_to', 'c.embedding', 'c.embedder'])
    .select(fileStatus().as('file_status'))
    .where('c.vector_store_id', '=', storeId);
  if (fileIds) q = q.where('c.file_id', 'in', fileIds);
  // A row comparison, which both databases answer from the primary key's order (an OR of the two made
  // PostgreSQL sort the rest of the store for every page).
  if (after) q = q.where((eb) => eb(eb.refTuple('c.file_id', 'c.seq'), '>', eb.tuple(after.fileId, after.seq)));
  const read = await q.orderBy('c.file_id').orderBy('c.seq').limit(limit).execute();
  const rows = read.filter((r) => r.file_status === 'completed');
  const texts = await spannedTexts(exec, storeId, rows);
  const last = read.at(-1);
  return {
    rows: rows.map(({ text_from: _f, text_to: _t, file_status: _s, ...r }, i) => ({ ...r, text: texts[i] ?? '' })),
    next: last && read.length >= limit ? { fileId: last.file_id, seq: last.seq } : null,
  };
}

/**
 * The text of each chunk row: its own, or its run of its file's text parts (read in one statement for
 * all the rows, a range per run of neighbouring chunks). Undefined for a chunk whose parts are gone (its
 * file was ingested again or removed since the row was read), or whose run is longer than MAX_RUN.
 */
async function spannedTexts(
  exec: Exec,
  storeId: string,
  rows: readonly { file_id: string; text: string; text_from: number | null; text_to: number | null }[],
): Promise<(string | undefined)[]> {
  const named = (r: (typeof rows)[number]) => r.text_from !== null && r.text_to !== null && r.text_to - r.text_from < MAX_RUN;
  const runs = rows
    .filter(named)
    .map((r) => ({ file: r.file_id, from: r.text_from!, to: r.text_to! }))
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.from - b.from));
  if (!runs.length) return rows.map((r) => r.text);
  // Overlapping and neighbouring runs of one file read as one range (a page of chunks: one range a file).
  const ranges: { file: string; from: number; to: number }[] = [];
  for (const r of runs) {
    const last = ranges.at(-1);
    if (last && last.file === r.file && r.from <= last.to + 1) last.to = Math.max(last.to, r.to);
    else ranges.push({ ...r });
  }
  const parts = await exec
    .selectFrom('vector_store_texts')
    .select(['file_id', 'part', 'text'])
    // The store in every term: SQLite reads each range from the key only so (an OR of ranges under one
    // store's condition scanned all the store's parts: 6 ms more a search of 10,000 chunks).
    .where((eb) =>
      eb.or(
        ranges.map((g) =>
          eb.and([eb('vector_store_id', '=', storeId), eb('file_id', '=', g.file), eb('part', '>=', g.from), eb('part', '<=', g.to)]),
        ),
      ),
    )
    .execute();
  const byKey = new Map(parts.map((p) => [`${p.part} ${p.file_id}`, p.text]));
  return rows.map((r) => textOf(r, (p) => byKey.get(`${p} ${r.file_id}`)));
}

/** The ingested files of a store (of some files only, when given) with their names and attributes. */
export function readIndexedFiles(exec: Exec, storeId: string, fileIds?: readonly string[]) {
  let q = exec
    .selectFrom('vector_store_files')
    .select(['file_id', 'filename', 'attributes'])
    .where('vector_store_id', '=', storeId)
    .where('status', '=', 'completed');
  if (fileIds) q = q.where('file_id', 'in', fileIds);
  return q.execute();
}

/**
 * The statement of `chunkTexts`: each hit with the parts of its run (a row per part; one row, no part,
 * for a chunk that keeps its text) and its file's status, in one statement: a search makes it once.
 */
export function hitsQuery(exec: Exec, storeId: string, keys: readonly { fileId: string; seq: number }[]) {
  return exec
    .selectFrom('vector_store_chunks as c')
    .leftJoin('vector_store_texts as t', (join) =>
      join
        .onRef('t.vector_store_id', '=', 'c.vector_store_id')
        .onRef('t.file_id', '=', 'c.file_id')
        .onRef('t.part', '>=', 'c.text_from')
        .onRef('t.part', '<=', 'c.text_to')
        // A run no ingestion makes (a hostile snapshot's row) joins none of its file's parts.
        .on(sql<number>`c.text_to - c.text_from`, '<', MAX_RUN),
    )
    .select(['c.file_id', 'c.seq', 'c.text', 'c.text_from', 'c.text_to', 't.part', 't.text as part_text'])
    .select(fileStatus().as('file_status'))
    .where('c.vector_store_id', '=', storeId)
    .where((eb) => eb.or(keys.map((k) => eb.and([eb('c.file_id', '=', k.fileId), eb('c.seq', '=', k.seq)]))));
}

/** The text of some chunks of a store (undefined for a chunk gone since, or of a file not completed): a search's hits. */
export async function chunkTexts(
  exec: Exec,
  storeId: string,
  keys: readonly { fileId: string; seq: number }[],
): Promise<(string | undefined)[]> {
  if (!keys.length) return [];
  const rows = await hitsQuery(exec, storeId, keys).execute();
  const found = new Map<string, { row: (typeof rows)[number]; parts: Map<number, string> }>();
  for (const r of rows) {
    if (r.file_status !== 'completed') continue;
    const key = `${r.seq} ${r.file_id}`;
    const hit = found.get(key) ?? found.set(key, { row: r, parts: new Map() }).get(key)!;
    if (r.part !== null && r.part_text !== null) hit.parts.set(r.part, r.part_text);
  }
  return keys.map((k) => {
    const hit = found.get(`${k.seq} ${k.fileId}`);
    return hit && textOf(hit.row, (p) => hit.parts.get(p));
  });
}

/**
 * A chunk's text from its row and the parts read for it: its own, or its run of parts (undefined when a
 * part is missing, the file having changed since, or the run is longer than MAX_RUN).
 */
function textOf(
  r: { text: string; text_from: number | null; text_to: number | null },
  part: (p: number) => string | undefined,
): string | undefined {
  if (r.text_from === null) return r.text;
  if (r.text_to === null || r.text_to - r.text_from >= MAX_RUN) return undefined;
  let text = '';
  for (let p = r.text_from; p <= r.text_to; p++) {
    const t = part(p);
    if (t === undefined) return undefined;
    text += t;
  }
  return text;
}

// Batches

export async function insertBatch(exec: Exec, row: Insertable<T['vector_store_file_batches']>): Promise<void> {
  await exec.insertInto('vector_store_file_batches').values(row).execute();
}

export const getBatch = (exec: Exec, storeId: string, id: string) =>
  exec.selectFrom('vector_store_file_batches').selectAll().where('id', '=', id).where('vector_store_id', '=', storeId).executeTakeFirst();

export const batchCounts = (exec: Exec, batchId: string) =>
  exec
    .selectFrom('vector_store_files')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('batch_id', '=', batchId)
    .groupBy('status')
    .execute();

/** Cancels a batch: its files still in progress end `cancelled`. */
export async function cancelBatch(exec: Exec, batchId: string, nowSeconds: number): Promise<void> {
  await exec.updateTable('vector_store_file_batches').set({ cancelled_at: nowSeconds }).where('id', '=', batchId).execute();
  await exec
    .updateTable('vector_store_files')
    .set({ status: 'cancelled' })
    .where('batch_id', '=', batchId)
    .where('status', '=', 'in_progress')
    .execute();
}
