import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from './db.js';

describe('background checkpoints (SQLite)', () => {
  it('a worker thread copies committed pages into the database file; the writer never does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-ckpt-'));
    const store = openStore({ dataDir: dir });
    const file = join(dir, 'standin.db');
    const warnings: unknown[] = [];
    try {
      store.checkpointInBackground!({ warn: (o) => void warnings.push(o) });
      await sql`create table blobs (id integer primary key, body text not null)`.execute(store.db);
      const before = statSync(file).size;
      // About 4 MB: four times the writer's default auto-checkpoint threshold, all of it in the WAL first.
      const rows = sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000) select hex(randomblob(1000)) from n`;
      await sql`insert into blobs (body) ${rows}`.execute(store.db);
      expect((await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(store.db)).rows[0].wal_autocheckpoint).toBe(0);
      const deadline = performance.now() + 5000;
      while (statSync(file).size < before + 3_000_000 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(statSync(file).size).toBeGreaterThan(before + 3_000_000);
      expect(warnings).toEqual([]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
