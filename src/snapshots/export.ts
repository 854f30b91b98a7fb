import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { FilesService } from '../files/service.js';

type FileStorage = FilesService['storage'];
import type { Store } from '../store/db.js';
import { CHUNK_BYTES, encodeValue, FORMAT, VERSION, type Header, type Totals } from './format.js';
import { FILES_TABLE, readRows, settingTravels, snapshotTables, untyped } from './tables.js';

/** What an export reads: a store, the storage of its files' bytes, and its clock. */
export interface Source {
  store: Store;
  storage: FileStorage;
  clockOffsetMs: number;
  /** Unix ms, the Standin clock's. */
  now: number;
}

/** The migrations applied to a store, in order (a snapshot's `schema`). */
export async function appliedMigrations(store: Pick<Store, 'db'>): Promise<string[]> {
  const rows = await untyped(store.db).selectFrom('kysely_migration').select('name').orderBy('name').execute();
  return rows.map((r) => String(r.name));
}

/** Lines into gzip into `out`, waiting whenever the reader is behind (bounded memory). */
function gzipLines(out: Writable) {
  const gzip = createGzip();
  const done = pipeline(gzip, out);
  // A failed destination ends the pipeline: a write waiting for 'drain' must hear of it too.
  const failed = done.then(() => {
    throw new Error('the snapshot destination closed early');
  });
  failed.catch(() => {});
  return {
    async write(line: string) {
      if (!gzip.write(line + '\n')) await Promise.race([once(gzip, 'drain'), failed]);
    },
    async end() {
      gzip.end();
      await done;
    },
    abort(err: Error) {
      gzip.destroy(err);
      return done.catch(() => {});
    },
  };
}

/**
 * Writes a snapshot of `source` to `out` (gzip'd JSON lines, format.ts). The rows are read in one
 * transaction, so they are of one moment; the files' bytes are read after it, through the storage.
 */
export async function writeSnapshot(source: Source, out: Writable): Promise<Totals> {
  const totals: Totals = { tables: 0, rows: 0, files: 0, bytes: 0 };
  const { store, storage } = source;
  const lines = gzipLines(out);
  try {
    const header: Header = {
      format: FORMAT,
      version: VERSION,
      schema: await appliedMigrations(store),
      created_at: Math.floor(source.now / 1000),
      dialect: store.dialect,
      clock_offset_ms: source.clockOffsetMs,
    };
    await lines.write(JSON.stringify(header));
    const fileIds: string[] = [];
    // Read before the transaction: on SQLite it holds the store's one connection.
    const tables = await snapshotTables(store);
    const read = store.db.transaction();
    await (store.dialect === 'postgres' ? read.setIsolationLevel('repeatable read') : read).execute(async (tx) => {
      for (const table of tables) {
        totals.tables++;
        await lines.write(JSON.stringify({ table: table.name, columns: table.columns }));
        const idAt = table.name === FILES_TABLE ? table.columns.findIndex(([c]) => c === 'id') : -1;
        for await (const row of readRows(tx, store.dialect, table.name)) {
          if (table.name === 'settings' && !settingTravels(row.key)) continue;
          const values = table.columns.map(([c, kind]) => encodeValue(kind, row[c]));
          if (idAt >= 0) fileIds.push(String(values[idAt]));
          totals.rows++;
          await lines.write(JSON.stringify(values));
        }
      }
    });
    for (const id of fileIds) await writeFile(storage, id, lines.write, totals);
    await lines.write(JSON.stringify({ end: totals }));
    await lines.end();
  } catch (err) {
    await lines.abort(err as Error);
    throw err;
  }
  return totals;
}

/** One file's bytes, in base64 lines; a row whose bytes are gone (an upload cut off, a delete since) travels without them. */
async function writeFile(storage: FileStorage, id: string, write: (line: string) => Promise<void>, totals: Totals): Promise<void> {
  let stream;
  try {
    stream = await storage.open(id);
  } catch {
    return;
  }
  await write(JSON.stringify({ file: id }));
  let held: Buffer[] = [];
  let heldBytes = 0;
  const flush = async () => {
    if (heldBytes) await write(JSON.stringify(Buffer.concat(held, heldBytes).toString('base64')));
    held = [];
    heldBytes = 0;
  };
  let bytes = 0;
  for await (const chunk of stream) {
    let buf = chunk as Buffer;
    bytes += buf.length;
    while (buf.length) {
      const take = Math.min(CHUNK_BYTES - heldBytes, buf.length);
      held.push(buf.subarray(0, take));
      heldBytes += take;
      buf = buf.subarray(take);
      if (heldBytes === CHUNK_BYTES) await flush();
    }
  }
  await flush();
  totals.files++;
  totals.bytes += bytes;
}
