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
});
