import type { Selectable } from 'kysely';
import type { Exec } from '../../store/db.js';
import type { AppHostTables } from './tables.js';

export type ConnectionRow = Selectable<AppHostTables['app_host_connections']>;
export type DocumentRow = Selectable<AppHostTables['app_host_documents']>;
export type CspNeedRow = Selectable<AppHostTables['app_host_csp_needs']>;
export type FileRow = Omit<Selectable<AppHostTables['app_host_files']>, 'bytes'>;

/** Saves a connection's description (insert, or replace after a refresh). */
export async function saveConnection(db: Exec, row: ConnectionRow): Promise<void> {
  await db
    .insertInto('app_host_connections')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet({ state: row.state, locale: row.locale, updated_at: row.updated_at }))
    .execute();
}

export async function getConnection(db: Exec, id: string): Promise<ConnectionRow | undefined> {
  return db.selectFrom('app_host_connections').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Stores a component document, and forgets those created before `olderThan` (Standin clock, ms). */
export async function insertDocument(db: Exec, row: DocumentRow, olderThan: number): Promise<void> {
  await db.insertInto('app_host_documents').values(row).execute();
  await db.deleteFrom('app_host_documents').where('created_at', '<', olderThan).execute();
}

export async function getDocument(db: Exec, id: string): Promise<DocumentRow | undefined> {
  return db.selectFrom('app_host_documents').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Records a need once per connection, template, directive and source; a later refusal marks it blocked. */
export async function recordCspNeed(db: Exec, row: CspNeedRow): Promise<void> {
  await db
    .insertInto('app_host_csp_needs')
    .values(row)
    .onConflict((oc) => {
      const same = oc.columns(['connection', 'uri', 'directive', 'source']);
      return row.blocked ? same.doUpdateSet({ blocked: 1 }) : same.doNothing();
    })
    .execute();
}

/** How many needs a connection has recorded (they are bounded: a component can make up any number). */
export async function countCspNeeds(db: Exec, connection: string): Promise<number> {
  const r = await db
    .selectFrom('app_host_csp_needs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('connection', '=', connection)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The needs recorded for a connection's components, oldest first. */
export async function cspNeeds(db: Exec, connection: string): Promise<CspNeedRow[]> {
  return db
    .selectFrom('app_host_csp_needs')
    .selectAll()
    .where('connection', '=', connection)
    .orderBy('created_at')
    .orderBy('uri')
    .orderBy('directive')
    .orderBy('source')
    .limit(500)
    .execute();
}

export async function insertFile(db: Exec, row: FileRow, bytes: Buffer): Promise<void> {
  await db
    .insertInto('app_host_files')
    .values({ ...row, bytes: bytes.toString('base64') })
    .execute();
}

const FILE_COLUMNS = ['id', 'file_name', 'mime_type', 'size', 'library', 'created_at'] as const;

export async function getFile(db: Exec, id: string): Promise<FileRow | undefined> {
  return db.selectFrom('app_host_files').select(FILE_COLUMNS).where('id', '=', id).executeTakeFirst();
}

export async function fileBytes(db: Exec, id: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('app_host_files').select('bytes').where('id', '=', id).executeTakeFirst();
  return row && Buffer.from(row.bytes, 'base64');
}

/** Files saved to the library, newest first. */
export async function libraryFiles(db: Exec): Promise<FileRow[]> {
  return db
    .selectFrom('app_host_files')
    .select(FILE_COLUMNS)
    .where('library', '=', 1)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Every file's id and size, oldest first (to drop the oldest past the total). */
export async function fileSizes(db: Exec): Promise<{ id: string; size: number }[]> {
  return db.selectFrom('app_host_files').select(['id', 'size']).orderBy('created_at').orderBy('id').execute();
}

export async function deleteFiles(db: Exec, ids: string[]): Promise<void> {
  if (ids.length) await db.deleteFrom('app_host_files').where('id', 'in', ids).execute();
}

/** The value of a named key, made by `make` and stored when it is the first (every instance then shares it). */
export async function sharedKey(db: Exec, name: string, make: () => string): Promise<string> {
  await db
    .insertInto('app_host_keys')
    .values({ name, value: make() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('app_host_keys').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
