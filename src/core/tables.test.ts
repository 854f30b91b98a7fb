import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, pgSchema } from '../../test/helpers.js';
import { openStore, type Store } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import { coreMigrations } from './tables.js';

async function freshStore(dialect: string): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'standin-core-tables-'));
  return openStore({ dataDir, databaseUrl: dialect === 'postgres' ? (await pgSchema()).url : undefined });
}

describe.each(dialects())('core migrations (%s)', (dialect) => {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
  });

  it('gives the events written before object_id existed the id of their object', async () => {
    store = await freshStore(dialect);
    const before = Object.fromEntries(Object.entries(coreMigrations).filter(([name]) => name < '202611231400'));
    await migrate(store, [{ migrations: before }]);
    const envelope = (data: unknown) => JSON.stringify({ object: 'event', id: 'x', type: 't', created_at: 1, data });
    const rows = [
      { id: 'evt_1', data: { id: 'batch_1' } },
      { id: 'evt_2', data: { id: 42 } },
      { id: 'evt_3', data: {} },
      { id: 'evt_4', data: null },
    ];
    await store.db
      .insertInto('events' as never)
      .values(rows.map((r) => ({ id: r.id, project_id: 'proj_1', type: 't', created_at: 1, payload: envelope(r.data) })) as never)
      .execute();
    await migrate(store, [{ migrations: coreMigrations }]);
    const got = await store.db.selectFrom('events').select(['id', 'object_id']).orderBy('id').execute();
    expect(got).toEqual([
      { id: 'evt_1', object_id: 'batch_1' },
      { id: 'evt_2', object_id: null },
      { id: 'evt_3', object_id: null },
      { id: 'evt_4', object_id: null },
    ]);
  });
});
