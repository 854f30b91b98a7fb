import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import {
  badSnapshot,
  decodeValue,
  lines,
  parseColumns,
  parseHeader,
  parseLine,
  type Header,
  type Kind,
  type ReadLimits,
  type Totals,
} from './format.js';
import { idChecker } from './ids.js';
import { FILES_TABLE, INSTANCE_TABLES, rowOf, settingTravels, type TableShape } from './tables.js';

/** One piece of a snapshot after its header, checked on its own (format.ts). */
export type Item =
  | { t: 'table'; name: string; columns: [string, Kind][] }
  | { t: 'row'; values: unknown[] }
  | { t: 'file'; id: string }
  | { t: 'chunk'; data: Buffer }
  | { t: 'end'; totals: Totals };

/** The decompressed lines of a snapshot file; not gzip is the client's mistake, not ours. */
async function* fileLines(path: string, limits: ReadLimits): AsyncGenerator<string> {
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
      limits,
    );
  } finally {
    gunzip.destroy();
    await feeding;
  }
}

/**
 * Reads a snapshot: its header, then every item in order, each checked against the format (order of the
 * sections, column lists, row widths, value kinds, ids of their kind (ids.ts), no table or setting of the
 * instance's own, file ids named by the `files` rows, the end line's totals, nothing after it) within the
 * limits. Any departure is a `badSnapshot` error. Both reads of an import check all of it.
 */
export async function readSnapshot(path: string, limits: ReadLimits): Promise<{ header: Header; items: AsyncGenerator<Item> }> {
  const source = fileLines(path, limits);
  const first = await source.next();
  if (first.done) throw badSnapshot('it is empty');
  const header = parseHeader(parseLine(first.value, 1));
  return { header, items: checkedItems(source) };
}

async function* checkedItems(source: AsyncGenerator<string>): AsyncGenerator<Item> {
  const counted: Totals = { tables: 0, rows: 0, files: 0, bytes: 0 };
  const seenTables = new Set<string>();
  const fileIds = new Set<string>();
  let table: { name: string; columns: [string, Kind][]; idAt: number; ids: (values: unknown[], at: number) => void } | undefined;
  let inFile = false;
  let ended = false;
  let at = 1;
  for await (const line of source) {
    at++;
    // Nothing may follow the end line, not even empty lines: a file that ends is read no further.
    if (ended) throw badSnapshot(`line ${at} follows the end line`);
    const value = parseLine(line, at);
    if (Array.isArray(value)) {
      if (!table) throw badSnapshot(`line ${at} is a row outside any table`);
      if (value.length !== table.columns.length)
        throw badSnapshot(`line ${at} has ${value.length} values for ${table.columns.length} columns`);
      const values = value.map((v, i) => decodeValue(table!.columns[i][1], v, `line ${at}, ${table!.name}.${table!.columns[i][0]}`));
      table.ids(values, at);
      if (table.name === 'settings') {
        // Checked on the row as it will be written: the value the store will write as the key.
        const key = rowOf(table.columns, values).key;
        if (!settingTravels(key))
          throw badSnapshot(
            `line ${at}: setting ${JSON.stringify(String(key).slice(0, 100))} is not one a snapshot carries (the instance's own, or unknown)`,
          );
      }
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
      if (INSTANCE_TABLES.has(name)) throw badSnapshot(`table ${name} is the instance's own; a snapshot does not carry it`);
      const columns = parseColumns(obj.columns, name);
      table = { name, columns, idAt: name === FILES_TABLE ? columns.findIndex(([c]) => c === 'id') : -1, ids: idChecker(name, columns) };
      counted.tables++;
      yield { t: 'table', name, columns };
    } else if ('file' in obj) {
      const id = obj.file;
      if (typeof id !== 'string' || !fileIds.has(id)) throw badSnapshot(`line ${at} names a file no row of ${FILES_TABLE} has`);
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
 * be one the store has, with the same kind (the rest is checked on every read, `readSnapshot`).
 */
export async function checkSnapshot(path: string, shapes: TableShape[], limits: ReadLimits): Promise<Header> {
  const { header, items } = await readSnapshot(path, limits);
  for await (const item of items) {
    if (item.t !== 'table') continue;
    const target = shapes.find((s) => s.name === item.name);
    if (!target) throw badSnapshot(`table ${item.name} is not a table of this Standin`);
    for (const [column, kind] of item.columns) {
      const found = target.columns.find(([c]) => c === column);
      if (!found) throw badSnapshot(`column ${item.name}.${column} is not a column of this Standin`);
      if (found[1] !== kind) throw badSnapshot(`column ${item.name}.${column} is ${kind} in the snapshot, ${found[1]} here`);
    }
  }
  return header;
}
