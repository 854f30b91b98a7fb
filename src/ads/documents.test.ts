import { describe, expect, it } from 'vitest';
import { dialects, startTestStandin } from '../../test/helpers.js';
import { idOf } from '../core/pagination.js';
import { openStore } from '../store/db.js';
import { adGroupJson, withJson, type AdGroupFields } from './documents.js';
import { getAdGroupJson, insertAdGroups } from './store.js';
import { adsMigrations } from './tables.js';

const tricky = [
  'quote " and backslash \\ and slash /',
  'line\nbreak\ttab\r\u0001\u001f',
  'emoji 👟 accents éü ꙮ',
  '\u2028\u2029 separators',
  '<script>&amp;',
];

const fields = (name: string, i: number): AdGroupFields => ({
  id: `adgrp_doc${i}`,
  ad_account_id: 'adacct_demo',
  campaign_id: i % 2 ? 'cmp_demo_clicks' : 'cmp_demo_conversions',
  name,
  description: i % 2 ? null : `${name} (description)`,
  context_hints: JSON.stringify([name, 'b']),
  status: 'paused',
  bidding_config: JSON.stringify({ billing_event_type: 'click', max_bid_micros: 1_000_000 + i }),
  product_set:
    i % 2 ? null : JSON.stringify({ product_feed_id: 'feed_demo_catalog', filters: [{ field: 'brand', operator: 'in', values: [name] }] }),
  created_at: 1_700_000_000 + i,
  updated_at: 1_800_000_000 + i,
});

describe('ad group document', () => {
  it('is the ad group object of the spec, whatever the text holds', () => {
    tricky.forEach((name, i) => {
      const row = fields(name, i);
      expect(JSON.parse(adGroupJson(row))).toEqual({
        id: row.id,
        created_at: row.created_at,
        updated_at: row.updated_at,
        name,
        description: row.description,
        context_hints: [name, 'b'],
        status: 'paused',
        bidding_config: JSON.parse(row.bidding_config),
        ...(row.product_set ? { product_set: JSON.parse(row.product_set) } : {}),
      });
      expect(Object.keys(JSON.parse(adGroupJson(row, false)))).not.toContain('product_set');
      // Lists read the id off the document's start (core/pagination.ts).
      expect(idOf(adGroupJson(row))).toBe(JSON.stringify(row.id));
    });
    expect(() => idOf('{"name":"x","id":"adgrp_1"}')).toThrow(/start with its id/);
  });

  it('is written for rows stored before the column existed (migration backfill)', async () => {
    const store = openStore({ dataDir: ':memory:' });
    try {
      await adsMigrations['202611220020_ads_init'].up(store.db);
      await store.db
        .insertInto('ad_accounts')
        .values({ id: 'adacct_demo', organization_id: 'org_1', name: 'a', currency: 'USD', created_at: 1 })
        .execute();
      for (const id of ['cmp_demo_clicks', 'cmp_demo_conversions']) {
        await store.db
          .insertInto('campaigns')
          .values({ id, ad_account_id: 'adacct_demo', name: id, bidding_type: 'clicks', product_feed_id: null, created_at: 1 })
          .execute();
      }
      const old = [fields(tricky[0], 0), fields(tricky[1], 1)];
      await (store.db as any).insertInto('ad_groups').values(old).execute();
      await adsMigrations['202611221100_ad_groups_json'].up(store.db);
      for (const row of old) expect(await getAdGroupJson(store.db, 'adacct_demo', row.id)).toBe(adGroupJson(row));
    } finally {
      await store.close();
    }
  });
});

describe.each(dialects())('ad group document in the store (%s)', (dialect) => {
  it('reads back exactly as written, only for its own ad account', async () => {
    const s = await startTestStandin({ dialect });
    try {
      const rows = tricky.map((name, i) => withJson(fields(name, i)));
      await insertAdGroups(s.ctx.store.db, rows);
      for (const row of rows) expect(await getAdGroupJson(s.ctx.store.db, 'adacct_demo', row.id)).toBe(adGroupJson(row));
      expect(await getAdGroupJson(s.ctx.store.db, 'adacct_other', rows[0].id)).toBeUndefined();
    } finally {
      await s.close();
    }
  });
});
