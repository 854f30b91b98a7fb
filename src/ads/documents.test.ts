import { describe, expect, it } from 'vitest';
import { dialects, startTestStandin } from '../../test/helpers.js';
import { adGroupJson } from './documents.js';
import { getAdGroupJson, insertAdGroups, type AdGroupRow } from './store.js';

const tricky = ['quote " and backslash \\ and slash /', 'line\nbreak\ttab\r\u0001\u001f', 'emoji 👟 accents éü ꙮ', '\u2028\u2029 separators', '<script>&amp;'];

describe.each(dialects())('ad group JSON text (%s)', (dialect) => {
  it('the store renders exactly what the row renderer renders, and it parses to the ad group', async () => {
    const s = await startTestStandin({ dialect });
    try {
      const rows: AdGroupRow[] = tricky.map((name, i) => ({
        id: `adgrp_doc${i}`,
        ad_account_id: 'adacct_demo',
        campaign_id: i % 2 ? 'cmp_demo_clicks' : 'cmp_demo_conversions',
        name,
        description: i % 2 ? null : `${name} (description)`,
        context_hints: JSON.stringify([name, 'b']),
        status: 'paused',
        bidding_config: JSON.stringify({ billing_event_type: 'click', max_bid_micros: 1_000_000 + i }),
        product_set: i % 2 ? null : JSON.stringify({ product_feed_id: 'feed_demo_catalog', filters: [{ field: 'brand', operator: 'in', values: [name] }] }),
        created_at: 1_700_000_000 + i,
        updated_at: 1_800_000_000 + i,
      }));
      await insertAdGroups(s.ctx.store.db, rows);
      for (const row of rows) {
        const fromStore = await getAdGroupJson(s.ctx.store.db, 'adacct_demo', row.id);
        expect(fromStore).toBe(adGroupJson(row));
        expect(JSON.parse(adGroupJson(row))).toEqual({
          id: row.id,
          created_at: row.created_at,
          updated_at: row.updated_at,
          name: row.name,
          description: row.description,
          context_hints: [row.name, 'b'],
          status: 'paused',
          bidding_config: JSON.parse(row.bidding_config),
          ...(row.product_set ? { product_set: JSON.parse(row.product_set) } : {}),
        });
        expect(Object.keys(JSON.parse(adGroupJson(row, false)))).not.toContain('product_set');
      }
      expect(await getAdGroupJson(s.ctx.store.db, 'adacct_other', rows[0].id)).toBeUndefined();
    } finally {
      await s.close();
    }
  });
});
