import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freePort, freshDatabaseUrl, serve } from '../process.js';

const ADMIN = 'sk-admin-ryw-test-key-00000000000000000';
const ADS_KEY = 'sk-ads-ryw-test-key-0000000000000000000';

/**
 * The read-your-writes rule of the PostgreSQL path (docs/core.md): a write acknowledged by any instance is
 * seen by every read, on any instance, that starts after the acknowledgement. Two real processes share one
 * database; every write goes to one of them and the read that follows its answer to the other, many at a
 * time, so reads share their turn's pipelined round trip with other requests' reads and writes.
 */
describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('read-your-writes across two instances (PostgreSQL)', () => {
  const dirs = [mkdtempSync(join(tmpdir(), 'standin-ryw-a-')), mkdtempSync(join(tmpdir(), 'standin-ryw-b-'))];
  const children: ChildProcess[] = [];
  const bases: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    const databaseUrl = await freshDatabaseUrl('ryw');
    // One after the other: the first migrates and seeds the database, the second finds it ready.
    for (const dir of dirs) {
      const port = await freePort();
      const env = { STANDIN_DATA: dir, STANDIN_ADMIN_KEY: ADMIN, STANDIN_LOG_LEVEL: 'error', STANDIN_DATABASE_URL: databaseUrl };
      children.push(await serve({ ...env, STANDIN_PORT: String(port) }));
      bases.push(`http://127.0.0.1:${port}`);
    }
    // An ads key made through the first instance works on the second at once (its lookup goes to the database).
    const key = await fetch(`${bases[0]}/admin/v1/ad_accounts/adacct_demo/api_keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ryw', value: ADS_KEY }),
    });
    expect(key.status).toBe(201);
  }, 120_000);

  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    // The schema stays until the next run's global setup (a DROP now would race other test processes).
  });

  const ads = async (base: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}/ads/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ADS_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> & { data?: { id: string }[] } };
  };

  it('a write acknowledged by one instance is seen by the next read on the other', async () => {
    const lanes = 12;
    const rounds = 6;
    const failures: string[] = [];
    const lane = async (n: number) => {
      for (let i = 0; i < rounds; i++) {
        const [w, r] = (n + i) % 2 ? [bases[0], bases[1]] : [bases[1], bases[0]];
        const created = await ads(w, 'POST', '/ad_groups', {
          campaign_id: 'cmp_demo_clicks',
          name: `ryw ${n} ${i}`,
          status: 'active',
          bidding_config: { billing_event_type: 'click', max_bid_micros: 1_000_000 },
        });
        if (created.status !== 200) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
        const id = created.body.id as string;
        // Created on one instance, read on the other: present, and the same document.
        const read = await ads(r, 'GET', `/ad_groups/${id}`);
        if (read.status !== 200 || JSON.stringify(read.body) !== JSON.stringify(created.body)) failures.push(`read after create of ${id}`);
        // Changed on the reader's side after it read it: the writer's side sees the change next.
        const paused = await ads(r, 'POST', `/ad_groups/${id}/pause`);
        if (paused.status !== 200 || paused.body.status !== 'paused') throw new Error(`pause: ${paused.status}`);
        const again = await ads(w, 'GET', `/ad_groups/${id}`);
        if (again.body.status !== 'paused') failures.push(`read after pause of ${id}: ${again.body.status}`);
        // And the first instance, which read it active before, sees it paused too.
        const back = await ads(r, 'GET', `/ad_groups/${id}`);
        if (back.body.status !== 'paused') failures.push(`re-read after pause of ${id}: ${back.body.status}`);
        // The newest ad group of the campaign heads its list on both instances (lists are read the same way).
        for (const base of [w, r]) {
          const page = await ads(base, 'GET', '/ad_groups?campaign_id=cmp_demo_clicks&limit=100');
          if (!page.body.data?.some((g) => g.id === id)) failures.push(`list after create of ${id}`);
        }
      }
    };
    await Promise.all(Array.from({ length: lanes }, (_, n) => lane(n)));
    expect(failures).toEqual([]);
  }, 120_000);
});
