import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../store/db.js';
import { GroupCommit } from './group-commit.js';
import { workloadMigrations } from './tables.js';

let store: Store;
beforeAll(async () => {
  store = openStore({ dataDir: ':memory:' });
  await workloadMigrations['202611220600_workload_identity_init'].up(store.db);
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

describe('GroupCommit', () => {
  it('commits a burst of writes together, and each caller resolves after its rows are stored', async () => {
    const gc = new GroupCommit(() => store.db);
    await Promise.all(Array.from({ length: 30 }, (_, i) => gc.write(i % 2 ? token(`t${i}`) : null, exchange(`x${i}`, i % 2 ? `t${i}` : null))));
    expect(gc.commits).toBe(1);
    expect((await store.db.selectFrom('workload_exchanges').select('id').execute()).length).toBe(30);
    expect((await store.db.selectFrom('workload_tokens').select('id').execute()).length).toBe(15);
  });

  it('rejects every writer of a batch that fails, and stores none of it', async () => {
    const gc = new GroupCommit(() => store.db);
    const results = await Promise.allSettled([gc.write(token('dup'), exchange('y1', 'dup')), gc.write(token('dup'), exchange('y2', 'dup'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await store.db.selectFrom('workload_exchanges').select('id').where('id', 'in', ['y1', 'y2']).execute()).toEqual([]);
  });
});
