import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely, type Migration } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialects, pgSchema } from '../../test/helpers.js';
import { openStore } from './db.js';
import { migrate } from './migrate.js';

const table = (name: string): Migration => ({
  up: async (db: Kysely<any>) => void (await db.schema.createTable(name).addColumn('id', 'text').execute()),
});

describe.each(dialects())('migrate on %s', (dialect) => {
  it('a store that has every migration is left as it is; one added later still runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-migrate-'));
    const databaseUrl = dialect === 'postgres' ? (await pgSchema()).url : undefined;
    const store = openStore({ dataDir: dir, databaseUrl });
    try {
      const first = { migrations: { '202601010000_a': table('mig_a') } };
      expect(await migrate(store, [first])).toEqual(['202601010000_a']);
      expect(await migrate(store, [first])).toEqual([]);
      // A migration named before the applied one (a module added later) is not skipped by the shortcut.
      const later = { migrations: { '202501010000_b': table('mig_b') } };
      expect(await migrate(store, [first, later])).toEqual(['202501010000_b']);
      await sql`select id from mig_b`.execute(store.db);
      expect(await migrate(store, [first, later])).toEqual([]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an older version migrates on a store a newer one migrated: the newer's migrations are left alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-migrate-'));
    const databaseUrl = dialect === 'postgres' ? (await pgSchema()).url : undefined;
    const store = openStore({ dataDir: dir, databaseUrl });
    try {
      const a = { migrations: { '202601010000_a': table('mig_a') } };
      const newer = { migrations: { '202601020000_newer': table('mig_newer') } };
      expect(await migrate(store, [a, newer])).toEqual(['202601010000_a', '202601020000_newer']);
      // The older version knows only `a`: it starts, and does not call the store corrupted.
      expect(await migrate(store, [a])).toEqual([]);
      // An older version with a migration of its own not applied yet (merged unordered) runs it, beside the newer one's.
      const own = { migrations: { '202601015000_own': table('mig_own') } };
      expect(await migrate(store, [a, own])).toEqual(['202601015000_own']);
      await sql`select id from mig_own`.execute(store.db);
      await sql`select id from mig_newer`.execute(store.db);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // SQLite's catalog is the store's own; a PostgreSQL database holds other schemas (a shared one, the tests').
  it.runIf(dialect === 'postgres')(
    "looks up its bookkeeping in its own schema, never through Kysely's catalog of the whole database",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'standin-migrate-'));
      const store = openStore({ dataDir: dir, databaseUrl: (await pgSchema()).url });
      // A neighbour schema in the same database, with Kysely's bookkeeping of its own.
      const other = openStore({ dataDir: dir, databaseUrl: (await pgSchema()).url });
      try {
        await migrate(other, [{ migrations: { '202601010000_n': table('mig_n') } }]);
        // Kysely's introspection reads every table and column of every schema: it may not be called.
        const introspection = store.db.introspection;
        Object.defineProperty(store.db, 'introspection', {
          get: () => ({
            ...introspection,
            getSchemas: () => introspection.getSchemas(),
            getTables: () => Promise.reject(new Error('whole catalog read')),
          }),
        });
        const mine = { migrations: { '202601010000_a': table('mig_a'), '202601020000_b': table('mig_b') } };
        expect(await migrate(store, [mine])).toEqual(['202601010000_a', '202601020000_b']);
        expect(await migrate(store, [mine, { migrations: { '202601030000_c': table('mig_c') } }])).toEqual(['202601030000_c']);
        const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.db);
        expect(rows.map((r) => r.name)).toEqual(['202601010000_a', '202601020000_b', '202601030000_c']);
      } finally {
        await store.close();
        await other.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
