import { sql } from 'kysely';
import type { Store } from './db.js';

/** A table of the store and its columns, in the database's own type names. */
export interface StoreTable {
  name: string;
  columns: { name: string; dataType: string }[];
}

/**
 * The tables of this store, with their columns in order, read from the database itself. On PostgreSQL
 * only the store's schema is read: Kysely's introspection reads every schema's catalog, and a table
 * another schema drops meanwhile made it fail (42P01) under a reset or snapshot here.
 */
export async function storeTables(store: Pick<Store, 'db' | 'dialect'>): Promise<StoreTable[]> {
  if (store.dialect === 'sqlite') {
    const tables = await store.db.introspection.getTables({ withInternalKyselyTables: true });
    return tables.map((t) => ({ name: t.name, columns: t.columns.map((c) => ({ name: c.name, dataType: c.dataType })) }));
  }
  const { rows } = await sql<{ table: string; column: string; type: string }>`
    select c.relname as "table", a.attname as "column", t.typname as "type"
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid
    join pg_type t on t.oid = a.atttypid
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
    order by c.relname, a.attnum`.execute(store.db);
  const byName = new Map<string, StoreTable>();
  for (const r of rows) {
    let table = byName.get(r.table);
    if (!table) byName.set(r.table, (table = { name: r.table, columns: [] }));
    table.columns.push({ name: r.column, dataType: r.type });
  }
  return [...byName.values()];
}
