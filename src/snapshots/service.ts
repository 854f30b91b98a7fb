import { createWriteStream } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { emptyStateTables, resetClock, saveClock, stateTables } from '../admin/service.js';
import { MAX_OFFSET_MS } from '../core/clock.js';
import { ApiError } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import type { Tx } from '../store/db.js';
import { appliedMigrations, writeSnapshot } from './export.js';
import { badSnapshot, MAX_SNAPSHOT_BYTES, type Header, type Kind, type Totals } from './format.js';
import { checkSnapshot, readSnapshot, type Item } from './import.js';
import { snapshotTables, untyped } from './tables.js';

export type { Header, Totals } from './format.js';

declare module '../core/module.js' {
  interface Services {
    /** Whether an import runs on this instance (set by the module, or by the first import). */
    snapshots?: { importing: boolean };
  }
}

/** Writes a snapshot of the whole state (every area's rows, the files' bytes, the clock) to `out`, gzip'd. */
export function exportSnapshot(ctx: Ctx, out: Writable): Promise<Totals> {
  return writeSnapshot(
    { store: ctx.store, storage: ctx.services.files.storage, clockOffsetMs: ctx.clock.offsetMs(), now: ctx.clock.now() },
    out,
  );
}

/** Writes a snapshot to the file `path`: beside it first, then renamed, so there is never half a file there. */
export async function exportSnapshotFile(ctx: Ctx, path: string): Promise<Totals> {
  const part = `${path}.part`;
  try {
    const totals = await exportSnapshot(ctx, createWriteStream(part));
    await rename(part, path);
    return totals;
  } catch (err) {
    await rm(part, { force: true });
    throw err;
  }
}

/** What an import did. */
export interface Imported {
  header: Header;
  totals: Totals;
}

/**
 * Replaces the whole state with a snapshot's: `source` is a stream of the file (spooled to a temporary
 * file first: it is read twice, once to check it whole before anything changes) or the path of one.
 * A snapshot that cannot be imported throws a 400 ApiError (`invalid_snapshot`) and changes nothing.
 */
export async function importSnapshot(ctx: Ctx, source: Readable | string): Promise<Imported> {
  // Two imports at once on one instance would interleave their resets and bytes: the second waits its turn
  // on the client's side.
  const state = (ctx.services.snapshots ??= { importing: false });
  if (state.importing)
    throw new ApiError('conflict_error', 'A snapshot import is under way on this instance; try again once it ends.', {
      code: 'import_in_progress',
    });
  state.importing = true;
  try {
    if (typeof source === 'string') return await importFile(ctx, source);
    const dir = await mkdtemp(join(tmpdir(), 'standin-snapshot-'));
    try {
      const path = join(dir, 'in.jsonl.gz');
      await pipeline(source, capped(MAX_SNAPSHOT_BYTES), createWriteStream(path));
      return await importFile(ctx, path);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  } finally {
    state.importing = false;
  }
}

function capped(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(seen > limit ? badSnapshot(`it is larger than ${limit} bytes`) : null, chunk);
    },
  });
}

/**
 * PostgreSQL may pick the import's TRUNCATE as the side of a deadlock with a running job: it runs again,
 * after a pause that grows: without one, a busy worker can win the same race at every attempt, and the
 * import answers 500 (a run of the suite under load once saw a 500 here).
 */
const RETRIES = 8;

async function importFile(ctx: Ctx, path: string): Promise<Imported> {
  const shapes = await snapshotTables(ctx.store);
  const header = await checkSnapshot(path, shapes);
  await checkSchema(ctx, header);
  const emptied = (await stateTables(ctx.store)).map((t) => t.name);
  let rest: { items: AsyncGenerator<Item>; first: Item | undefined };
  for (let attempt = 1; ; attempt++) {
    const { items } = await readSnapshot(path);
    try {
      const first = await ctx.store.db.transaction().execute(async (tx) => {
        await emptyStateTables(tx, ctx.store.dialect, emptied);
        return insertRows(tx, items);
      });
      rest = { items, first };
      break;
    } catch (err) {
      await items.return(undefined);
      if (attempt < RETRIES && (err as { code?: string }).code === '40P01') {
        await sleep(10 * 2 ** attempt * (1 + Math.random()));
        continue;
      }
      throw asBadInput(err);
    }
  }
  // The rows are in: every area drops what it held of the old state (the files area its stored bytes),
  // then the new bytes go in.
  try {
    for (const m of ctx.modules) await m.reset?.(ctx);
    return { header, totals: await writeFiles(ctx, rest.first, rest.items) };
  } finally {
    // The rows are replaced whatever became of the bytes: the clock and every instance follow them.
    await resetClock(ctx);
    ctx.clock.setOffset(Math.min(header.clock_offset_ms, MAX_OFFSET_MS));
    await saveClock(ctx);
    ctx.auth.forget();
    await ctx.changes.bumpAll(ctx.store.db);
  }
}

/**
 * The rule for a snapshot of another version: every migration it names must be one this store has
 * applied (else it was made by a later Standin); migrations it lacks leave their tables empty and the
 * columns they added at their defaults.
 */
async function checkSchema(ctx: Ctx, header: Header): Promise<void> {
  const applied = new Set(await appliedMigrations(ctx.store));
  const unknown = header.schema.find((m) => !applied.has(m));
  if (unknown) throw badSnapshot(`it was taken with migration ${unknown}, which this Standin does not have (a later version made it)`);
}

/** The parameters of one statement stay under SQLite's limit (32766) and PostgreSQL's (65535). */
const MAX_PARAMS = 30_000;

/** Inserts the rows of every table section, in batches; returns the item after them (the first file, or the end). */
async function insertRows(tx: Tx, items: AsyncGenerator<Item>): Promise<Item | undefined> {
  let table: { name: string; columns: [string, Kind][] } | undefined;
  let batch: Record<string, unknown>[] = [];
  const flush = async () => {
    if (table && batch.length) await untyped(tx).insertInto(table.name).values(batch).execute();
    batch = [];
  };
  for (;;) {
    const { value: item, done } = await items.next();
    if (done) return;
    if (item.t === 'row') {
      batch.push(Object.fromEntries(table!.columns.map(([c], i) => [c, item.values[i]])));
      if (batch.length * table!.columns.length >= MAX_PARAMS) await flush();
    } else {
      await flush();
      if (item.t !== 'table') return item;
      table = item;
    }
  }
}

/** Writes each file's bytes through the files area's storage (the folder or the database). */
async function writeFiles(ctx: Ctx, first: Item | undefined, items: AsyncGenerator<Item>): Promise<Totals> {
  const { storage } = ctx.services.files;
  let item = first;
  const next = async () => {
    const r = await items.next();
    return r.done ? undefined : r.value;
  };
  while (item && item.t === 'file') {
    const id = item.id;
    let after: Item | undefined;
    await storage.write(
      id,
      (async function* () {
        for (let chunk = await next(); chunk; chunk = await next()) {
          if (chunk.t !== 'chunk') {
            after = chunk;
            return;
          }
          yield chunk.data;
        }
      })(),
    );
    item = after;
  }
  if (item?.t !== 'end') throw new Error('the snapshot changed while it was imported');
  return item.totals;
}

/** A row the store refuses (a duplicate key, a missing parent, a null where none may be) is the file's fault. */
function asBadInput(err: unknown): unknown {
  const code = String((err as { code?: string }).code ?? '');
  if (code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_MISMATCH' || /^2[23]/.test(code))
    return badSnapshot(`the store refused a row: ${(err as Error).message}`);
  return err;
}
