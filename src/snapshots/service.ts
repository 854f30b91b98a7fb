import { createWriteStream } from 'node:fs';
import { mkdtemp, rename, rm, stat } from 'node:fs/promises';
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
import { badSnapshot, type Header, type Kind, type ReadLimits, type Totals } from './format.js';
import { checkSnapshot, readSnapshot, type Item } from './import.js';
import { rowOf, settingTravels, snapshotTables, untyped } from './tables.js';

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
 * Replaces the whole state with a snapshot's: `source` is a stream of the file (spooled whole to a
 * temporary file first, within `--snapshot-max-bytes` and `--snapshot-upload-min-rate`, before the import
 * lock is taken: a slow upload never holds it) or the path of one. The file is read twice, once to check
 * it whole before anything changes. A snapshot that cannot be imported throws a 400 ApiError
 * (`invalid_snapshot`) and changes nothing.
 */
export async function importSnapshot(ctx: Ctx, source: Readable | string): Promise<Imported> {
  const state = (ctx.services.snapshots ??= { importing: false });
  // The lock is taken before the file is looked at: of two imports asked for at once, the first runs.
  if (typeof source === 'string')
    return locked(state, async () => {
      await checkFile(source, ctx.settings.snapshotMaxBytes);
      return importFile(ctx, source);
    });
  // An upload while an import runs would be read for nothing: refused before its bytes are.
  if (state.importing) throw busy();
  const dir = await mkdtemp(join(tmpdir(), 'standin-snapshot-'));
  try {
    const path = join(dir, 'in.jsonl.gz');
    await spool(source, path, ctx.settings.snapshotMaxBytes, ctx.settings.snapshotUploadMinRate);
    return await locked(state, () => importFile(ctx, path));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const busy = () =>
  new ApiError('conflict_error', 'A snapshot import is under way on this instance; try again once it ends.', {
    code: 'import_in_progress',
  });

/** Runs `work` as the instance's one import: two at once would interleave their resets and bytes. */
async function locked<T>(state: { importing: boolean }, work: () => Promise<T>): Promise<T> {
  if (state.importing) throw busy();
  state.importing = true;
  try {
    return await work();
  } finally {
    state.importing = false;
  }
}

/** A snapshot file named on the command line: one that exists, is a file, and is within the size bound. */
async function checkFile(path: string, maxBytes: number): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw badSnapshot(code === 'ENOENT' ? `the file ${path} does not exist` : `the file ${path} cannot be read (${code ?? String(err)})`);
  }
  if (!info.isFile()) throw badSnapshot(`${path} is not a file`);
  if (info.size > maxBytes) throw badSnapshot(`it is larger than ${maxBytes} bytes (--snapshot-max-bytes)`);
}

/** How often an upload's progress is held against the minimum rate. */
const RATE_WINDOW_MS = 5000;

/**
 * Writes an upload to `path`, at most `maxBytes`; an upload that brings fewer than `minRate` bytes a
 * second over a window is cut (its connection closed): a trickle cannot hold a connection and a
 * temporary file for the hour a body may take.
 */
async function spool(source: Readable, path: string, maxBytes: number, minRate: number): Promise<void> {
  let seen = 0;
  let checked = 0;
  let slow: ApiError | undefined;
  const timer =
    minRate > 0
      ? setInterval(() => {
          if (seen - checked < (minRate * RATE_WINDOW_MS) / 1000) {
            slow = badSnapshot(`the upload brought fewer than ${minRate} bytes a second (--snapshot-upload-min-rate)`);
            source.destroy(slow);
          }
          checked = seen;
        }, RATE_WINDOW_MS)
      : undefined;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(seen > maxBytes ? badSnapshot(`it is larger than ${maxBytes} bytes (--snapshot-max-bytes)`) : null, chunk);
    },
  });
  try {
    await pipeline(source, count, createWriteStream(path));
  } catch (err) {
    throw slow ?? err;
  } finally {
    clearInterval(timer);
  }
}

/**
 * PostgreSQL may pick the import's TRUNCATE as the side of a deadlock with a running job: it runs again,
 * after a pause that grows: without one, a busy worker can win the same race at every attempt, and the
 * import answers 500 (a run of the suite under load once saw a 500 here).
 */
const RETRIES = 8;

async function importFile(ctx: Ctx, path: string): Promise<Imported> {
  const timeoutMs = ctx.settings.snapshotTimeoutMs;
  const limits: ReadLimits = {
    maxExpandedBytes: ctx.settings.snapshotMaxExpandedBytes,
    deadline: performance.now() + timeoutMs,
    timeoutMs,
  };
  const shapes = await snapshotTables(ctx.store);
  const header = await checkSnapshot(path, shapes, limits);
  await checkSchema(ctx, header);
  const emptied = (await stateTables(ctx.store)).map((t) => t.name);
  let rest: { items: AsyncGenerator<Item>; first: Item | undefined };
  for (let attempt = 1; ; attempt++) {
    const { items } = await readSnapshot(path, limits);
    try {
      const first = await ctx.store.db.transaction().execute(async (tx) => {
        // The instance's own settings (the admin key, its root settings) stay as they are.
        const own = await tx.selectFrom('settings').selectAll().execute();
        await emptyStateTables(tx, ctx.store.dialect, emptied);
        for (const row of own.filter((r) => !settingTravels(r.key)))
          await tx
            .insertInto('settings')
            .values(row)
            .onConflict((oc) => oc.column('key').doNothing())
            .execute();
        return insertRows(tx, items);
      });
      // The rows are committed: the bytes that follow are written whatever the time (stopping now would
      // leave rows without their files); they were all read once already within the deadline.
      limits.deadline = Infinity;
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
      batch.push(rowOf(table!.columns, item.values));
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
