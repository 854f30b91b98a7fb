import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../helpers.js';

/**
 * A full disk while serving (SQLite's max_page_count stands in for it: the same SQLITE_FULL): writes get a
 * clear 503 with a stable code, the cause is logged once rather than per request, and reads go on.
 */
describe('the disk fills up while Standin serves (sqlite)', () => {
  let s: TestStandin;
  const logged: string[] = [];
  beforeAll(async () => {
    s = await startTestStandin({});
    s.ctx.log.error = (_obj: unknown, msg?: string) => void logged.push(msg ?? '');
  });
  afterAll(async () => s?.close());

  const create = (i: number) =>
    s.req('POST', '/ads/v1/ad_groups', {
      key: 'ads',
      body: {
        campaign_id: 'cmp_demo_clicks',
        name: `Group ${i} ${'x'.repeat(900)}`,
        status: 'paused',
        bidding_config: { billing_event_type: 'click', max_bid_micros: 1 },
      },
    });

  it('answers writes 503 storage_unavailable, logs the cause once, and keeps serving reads', async () => {
    const pages = (await sql<{ page_count: number }>`PRAGMA page_count`.execute(s.ctx.store.db)).rows[0].page_count;
    await sql.raw(`PRAGMA max_page_count = ${pages + 2}`).execute(s.ctx.store.db);
    const statuses: number[] = [];
    let refused: any;
    for (let i = 0; i < 40; i++) {
      const r = await create(i);
      statuses.push(r.status);
      if (r.status !== 200) refused = r.body;
    }
    expect(statuses).toContain(503);
    expect(statuses.every((x) => x === 200 || x === 503)).toBe(true);
    expect(refused.error).toMatchObject({ type: 'service_unavailable_error', code: 'storage_unavailable' });
    expect(refused.error.message).toMatch(/disk is full/);
    expect(logged.filter((m) => /disk is full/.test(m))).toHaveLength(1);
    expect(logged.join('\n')).not.toMatch(/no transaction is active/);
    const read = await s.req('GET', '/ads/v1/ad_groups?campaign_id=cmp_demo_clicks', { key: 'ads' });
    expect(read.status).toBe(200);
    // Room again: writes work at once.
    await sql.raw('PRAGMA max_page_count = 1073741823').execute(s.ctx.store.db);
    expect((await create(99)).status).toBe(200);
  });
});
