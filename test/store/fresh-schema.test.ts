import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { modules } from '../../src/server/modules.js';
import { openStore } from '../../src/store/db.js';
import { applyFreshSchema, captureFreshSchema, type FreshSchema } from '../../src/store/fresh-schema.js';
import { migrate } from '../../src/store/migrate.js';

const folders: string[] = [];
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'standin-fresh-schema-'));
  folders.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Migrates a new folder: with `fresh` the build's way (the schema at once), with null by running each migration. */
async function migrated(fresh: FreshSchema | null): Promise<{ dir: string; applied: string[] }> {
  const dir = folder();
  const store = openStore({ dataDir: dir });
  try {
    return { dir, applied: await migrate(store, modules, undefined, undefined, fresh) };
  } finally {
    await store.close();
  }
}

/** What running every migration made in `dir`, captured. */
function capture(dir: string): FreshSchema {
  const db = new SQLite(join(dir, 'standin.db'), { readonly: true });
  try {
    return captureFreshSchema(db);
  } finally {
    db.close();
  }
}

/** The times kysely_migration records its migrations applied at. */
function stamps(dir: string): string[] {
  const db = new SQLite(join(dir, 'standin.db'), { readonly: true });
  try {
    return (db.prepare('select timestamp from kysely_migration order by name').all() as { timestamp: string }[]).map((r) => r.timestamp);
  } finally {
    db.close();
  }
}

/** Everything SQLite knows of a store: its catalog, each table's columns, indexes and keys, and its rows. */
function describeStore(dir: string) {
  const db = new SQLite(join(dir, 'standin.db'), { readonly: true });
  try {
    const master = db.prepare('select type, name, tbl_name, sql from sqlite_master order by type, name').all() as {
      type: string;
      name: string;
    }[];
    const tables = master.filter((m) => m.type === 'table').map((m) => m.name);
    const per = Object.fromEntries(
      tables.map((t) => [
        t,
        {
          columns: db.prepare(`select * from pragma_table_xinfo('${t}')`).all(),
          indexes: (db.prepare(`select * from pragma_index_list('${t}') order by name`).all() as { name: string }[]).map((i) => ({
            ...i,
            columns: db.prepare(`select * from pragma_index_xinfo('${i.name}')`).all(),
          })),
          keys: db.prepare(`select * from pragma_foreign_key_list('${t}')`).all(),
          // When a migration ran is not the schema: kysely_migration's times differ, its names must not.
          rows: db.prepare(t === 'kysely_migration' ? `select name from "${t}" order by name` : `select * from "${t}"`).all(),
        },
      ]),
    );
    return { master, per, pragmas: db.prepare('select * from pragma_user_version, pragma_application_id').get() };
  } finally {
    db.close();
  }
}

describe('the fresh schema (dist/fresh-schema.json)', () => {
  it('makes on a fresh folder exactly what running every migration makes, and records them all as applied', async () => {
    const byMigrations = await migrated(null);
    const captured = capture(byMigrations.dir);
    expect(captured.migrations).toEqual(byMigrations.applied);
    const bySchema = await migrated(captured);
    expect(bySchema.applied).toEqual(byMigrations.applied);
    expect(describeStore(bySchema.dir)).toEqual(describeStore(byMigrations.dir));
    // Each recorded as applied when it was, in the form Kysely's Migrator writes (Date's toISOString).
    const [kysely, fresh] = [byMigrations.dir, bySchema.dir].map(stamps);
    for (const at of [...kysely, ...fresh]) expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(fresh[0]) - Date.parse(kysely[0]))).toBeLessThan(120_000);
    // The next start finds every migration done, and a store made so takes writes like one migrated.
    const store = openStore({ dataDir: bySchema.dir });
    try {
      expect(await migrate(store, modules)).toEqual([]);
      await sql`insert into kysely_migration_lock (id, is_locked) values ('another', 0)`.execute(store.db);
    } finally {
      await store.close();
    }
  });

  it('is not used when its migrations are not exactly this Standin’s, nor on a store that has tables', async () => {
    const dir = folder();
    const schema: FreshSchema = { migrations: ['202601010000_a'], sql: ['create table a (id text)'], rows: [] };
    const db = new SQLite(join(dir, 'standin.db'));
    try {
      expect(applyFreshSchema(db, schema, ['202601010000_a', '202601020000_b'])).toBe(false);
      expect(applyFreshSchema(db, schema, ['202601020000_b'])).toBe(false);
      expect(db.prepare('select count(*) as n from sqlite_master').get()).toEqual({ n: 0 });
      db.exec('create table other (id text)');
      expect(applyFreshSchema(db, schema, ['202601010000_a'])).toBe(false);
      expect(db.prepare(`select name from sqlite_master where name = 'a'`).all()).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('a stale schema (a migration added since) leaves the migrations to run: the new one too', async () => {
    const byMigrations = await migrated(null);
    const captured = capture(byMigrations.dir);
    const dir = folder();
    const store = openStore({ dataDir: dir });
    const later = {
      migrations: {
        '209901010000_later': {
          up: async (db: Kysely<any>) => void (await db.schema.createTable('later_table').addColumn('id', 'text').execute()),
        },
      },
    };
    try {
      const applied = await migrate(store, [...modules, later], undefined, undefined, captured);
      expect(applied).toEqual([...byMigrations.applied, '209901010000_later']);
      await sql`select id from later_table`.execute(store.db);
    } finally {
      await store.close();
    }
  });
});
