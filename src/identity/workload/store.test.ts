import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../store/db.js';
import { exchangeWriter } from './store.js';
import { workloadMigrations } from './tables.js';

let store: Store;
beforeAll(async () => {
  store = openStore({ dataDir: ':memory:' });
  for (const migration of Object.values(workloadMigrations)) await migration.up(store.db);
});
afterAll(() => store.close());

const exchange = (id: string, tokenId: string | null = null) => ({
  id,
  organization_id: 'org_1',
  provider_id: 'idp_1',
  mapping_id: null,
  service_account_id: null,
  subject: null,
  via: 'jwt' as const,
  outcome: tokenId ? ('issued' as const) : ('refused' as const),
  error: null,
  category: null,
  reason: null,
  token_id: tokenId,
  certificate_sha256: null,
  client_ip: null,
  created_at: 1,
});
const token = (id: string) => ({
  id,
  hash: `hash_${id}`,
  organization_id: 'org_1',
  project_id: 'proj_1',
  service_account_id: 'svc_1',
  provider_id: 'idp_1',
  mapping_id: 'map_1',
  via: 'jwt' as const,
  permissions: null,
  subject: 's',
  expires_at: 100,
  created_at: 1,
});

describe('exchange writes (group commit)', () => {
  it('commits a burst of writes together, and each caller resolves after its rows are stored', async () => {
    const gc = exchangeWriter(() => store.db);
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        gc({ token: i % 2 ? token(`t${i}`) : null, exchange: exchange(`x${i}`, i % 2 ? `t${i}` : null) }),
      ),
    );
    expect(gc.commits).toBe(1);
    expect((await store.db.selectFrom('workload_exchanges').select('id').execute()).length).toBe(30);
    expect((await store.db.selectFrom('workload_tokens').select('id').execute()).length).toBe(15);
  });

  it('writes a failing batch again one by one: only the bad write fails', async () => {
    const gc = exchangeWriter(() => store.db);
    const results = await Promise.allSettled([
      gc({ token: token('dup'), exchange: exchange('y1', 'dup') }),
      gc({ token: token('dup'), exchange: exchange('y2', 'dup') }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(await store.db.selectFrom('workload_exchanges').select('id').where('id', 'in', ['y1', 'y2']).execute()).toEqual([{ id: 'y1' }]);
    expect(gc.commits).toBe(1);
  });
});
