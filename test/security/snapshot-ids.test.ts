// Issue 34: every id a snapshot carries is checked against its kind (src/snapshots/ids.ts). This holds the
// list to the schema, so a table added later cannot bring an unchecked key or reference into an import.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { idChecker, idColumnPattern } from '../../src/snapshots/ids.js';
import { INSTANCE_TABLES, snapshotTables, untyped } from '../../src/snapshots/tables.js';

describe('snapshot id columns', () => {
  let s: TestStandin;
  // The schema is the same on both stores (one set of migrations): SQLite's catalogue is the simpler to read.
  beforeAll(async () => {
    s = await startTestStandin();
  });
  afterAll(() => s?.close());

  it("declares a pattern for every table's key columns, foreign keys and …_id columns", async () => {
    const missing: string[] = [];
    for (const t of await snapshotTables(s.ctx.store)) {
      const keys = (await sql<{ name: string }>`select name from pragma_table_info(${t.name}) where pk > 0`.execute(s.ctx.store.db)).rows;
      const refs = (await sql<{ name: string }>`select "from" as name from pragma_foreign_key_list(${t.name})`.execute(s.ctx.store.db))
        .rows;
      const named = t.columns.filter(([c]) => c === 'id' || c.endsWith('_id')).map(([name]) => ({ name }));
      for (const { name } of [...keys, ...refs, ...named]) {
        const kind = t.columns.find(([c]) => c === name)?.[1];
        // `settings.key` is checked against the list of settings that travel (tables.ts); integer keys are numbers.
        if (kind !== 'text' || (t.name === 'settings' && name === 'key')) continue;
        if (!idColumnPattern(t.name, name)) missing.push(`${t.name}.${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("accepts the seed's ids and refuses paths in each kind", async () => {
    for (const t of await snapshotTables(s.ctx.store)) {
      const check = idChecker(t.name, t.columns);
      for (const row of await untyped(s.ctx.store.db).selectFrom(t.name).selectAll().execute())
        check(
          t.columns.map(([c]) => row[c] ?? null),
          1,
        );
      for (const [c, kind] of t.columns) {
        if (kind !== 'text' || !idColumnPattern(t.name, c) || idColumnPattern(t.name, c)!.test('../x')) continue;
        const values = t.columns.map(([name]) => (name === c ? '../../x' : null));
        expect(() => check(values, 2), `${t.name}.${c}`).toThrow(/not an id of its kind/);
      }
    }
    expect(INSTANCE_TABLES.has('app_host_keys')).toBe(true);
  });
});
