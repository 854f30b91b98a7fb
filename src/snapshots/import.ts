import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { badSnapshot, decodeValue, lines, parseColumns, parseHeader, parseLine, type Header, type Kind, type Totals } from './format.js';
import { INSTANCE_SETTINGS } from './export.js';
import { FILES_TABLE, type TableShape } from './tables.js';

/** One piece of a snapshot after its header, checked on its own (format.ts). */
export type Item =
  | { t: 'table'; name: string; columns: [string, Kind][] }
  | { t: 'row'; values: unknown[] }
  | { t: 'file'; id: string }
  | { t: 'chunk'; data: Buffer }
  | { t: 'end'; totals: Totals };

/** Ids are Standin's (`file-…`), and the folder storage makes file names of them: nothing else gets in. */
const FILE_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** The decompressed lines of a snapshot file; not gzip is the client's mistake, not ours. */
async function* fileLines(path: string): AsyncGenerator<string> {
  const gunzip = createGunzip();
  const feeding = pipeline(createReadStream(path), gunzip).catch(() => {});
  try {
    yield* lines(
      (async function* () {
        try {
          for await (const chunk of gunzip) yield chunk as Buffer;
        } catch (err) {
          throw badSnapshot(`it is not a gzip file (${(err as Error).message})`);
        }
      })(),
    );
  } finally {
    gunzip.destroy();
    await feeding;
  }
}

/**
 * Reads a snapshot: its header, then every item in order, each checked against the format (order of the
 * sections, row widths, value kinds, file ids named by the `files` rows, the end line's totals). Any
 * departure is a `badSnapshot` error.
 */
export async function readSnapshot(path: string): Promise<{ header: Header; items: AsyncGenerator<Item> }> {
  const source = fileLines(path);
  const first = await source.next();
  if (first.done) throw badSnapshot('it is empty');
  const header = parseHeader(parseLine(first.value, 1));
  return { header, items: checkedItems(source) };
}

async function* checkedItems(source: AsyncGenerator<string>): AsyncGenerator<Item> {
  const counted: Totals = { tables: 0, rows: 0, files: 0, bytes: 0 };
  const seenTables = new Set<string>();
  const fileIds = new Set<string>();
  let table: { name: string; columns: [string, Kind][]; idAt: number } | undefined;
  let inFile = false;
  let ended = false;
  let at = 1;
  for await (const line of source) {
    at++;
    if (ended) {
      if (line.trim()) throw badSnapshot(`line ${at} follows the end line`);
      continue;
    }
    const value = parseLine(line, at);
    if (Array.isArray(value)) {
      if (!table) throw badSnapshot(`line ${at} is a row outside any table`);
      if (value.length !== table.columns.length)
        throw badSnapshot(`line ${at} has ${value.length} values for ${table.columns.length} columns`);
      const values = value.map((v, i) => decodeValue(table!.columns[i][1], v, `line ${at}, ${table!.name}.${table!.columns[i][0]}`));
      if (table.idAt >= 0) fileIds.add(String(values[table.idAt]));
      counted.rows++;
      yield { t: 'row', values };
      continue;
    }
    if (typeof value === 'string') {
      if (!inFile) throw badSnapshot(`line ${at} is file data outside any file`);
      const data = decodeValue('bytes', value, `line ${at}`) as Buffer;
      counted.bytes += data.length;
      yield { t: 'chunk', data };
      continue;
    }
    const obj = value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
    if ('table' in obj) {
      const name = obj.table;
      if (typeof name !== 'string' || inFile || counted.files) throw badSnapshot(`line ${at} is a table line out of place`);
      if (seenTables.has(name)) throw badSnapshot(`table ${name} appears twice`);
      seenTables.add(name);
      const columns = parseColumns(obj.columns, name);
      table = { name, columns, idAt: name === FILES_TABLE ? columns.findIndex(([c]) => c === 'id') : -1 };
      counted.tables++;
      yield { t: 'table', name, columns };
    } else if ('file' in obj) {
      const id = obj.file;
      if (typeof id !== 'string' || !FILE_ID.test(id) || !fileIds.has(id))
        throw badSnapshot(`line ${at} names a file no row of ${FILES_TABLE} has`);
      fileIds.delete(id);
      table = undefined;
      inFile = true;
      counted.files++;
      yield { t: 'file', id };
    } else if ('end' in obj) {
      const totals = obj.end as Partial<Totals> | null;
      for (const k of ['tables', 'rows', 'files', 'bytes'] as const)
        if (totals?.[k] !== counted[k]) throw badSnapshot(`the end line counts ${String(totals?.[k])} ${k}, the file holds ${counted[k]}`);
      ended = true;
      yield { t: 'end', totals: counted };
    } else throw badSnapshot(`line ${at} is neither a row, a table, a file nor the end`);
  }
  if (!ended) throw badSnapshot('it ends early (no end line): the file is cut short');
}

/**
 * Checks a whole snapshot against the store it goes into, writing nothing: every table and column must
 * be one the store has, with the same kind, and no row of `settings` may be the instance's own.
 */
export async function checkSnapshot(path: string, shapes: TableShape[]): Promise<Header> {
  const { header, items } = await readSnapshot(path);
  let keyAt = -1;
  for await (const item of items) {
    if (item.t === 'table') {
      const target = shapes.find((s) => s.name === item.name);
      if (!target) throw badSnapshot(`table ${item.name} is not a table of this Standin`);
      for (const [column, kind] of item.columns) {
        const found = target.columns.find(([c]) => c === column);
        if (!found) throw badSnapshot(`column ${item.name}.${column} is not a column of this Standin`);
        if (found[1] !== kind) throw badSnapshot(`column ${item.name}.${column} is ${kind} in the snapshot, ${found[1]} here`);
      }
      keyAt = item.name === 'settings' ? item.columns.findIndex(([c]) => c === 'key') : -1;
    } else if (item.t === 'row' && keyAt >= 0 && INSTANCE_SETTINGS.has(String(item.values[keyAt]))) {
      throw badSnapshot(`setting ${String(item.values[keyAt])} is the instance's own; a snapshot does not carry it`);
    } else if (item.t === 'file') keyAt = -1;
  }
  return header;
}
