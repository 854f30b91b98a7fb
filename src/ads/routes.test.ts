import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { ListOf } from '../core/schemas.js';
import { AdGroupObject } from './schemas.js';

// Ad group replies are stored JSON text, which the tests' response check (checkResponses) never sees:
// they are held against the routes' declared schemas here.
const ajv = new Ajv({ strict: false, allErrors: true });
const isAdGroup = ajv.compile(AdGroupObject as object);
const isAdGroupList = ajv.compile(ListOf(AdGroupObject) as object);

const CLICKS = 'cmp_demo_clicks';
const IMPRESSIONS = 'cmp_demo_impressions';
const CONVERSIONS = 'cmp_demo_conversions'; // product-feed oCPC campaign with feed_demo_catalog

const base = (over: Record<string, unknown> = {}) => ({
  campaign_id: CLICKS,
  name: 'Running shoes',
  status: 'active',
  bidding_config: { billing_event_type: 'click', max_bid_micros: 2_000_000 },
  ...over,
});

describe.each(dialects())('ads API: ad groups (%s)', (dialect) => {
  let s: TestStandin;
  const post = (url: string, body?: unknown, key: string = 'ads') => s.req('POST', url, { key, body });
  const get = (url: string, key: string = 'ads') => s.req('GET', url, { key });
  const expectRefused = async (body: unknown, param: string | null, status = 400, url = '/ads/v1/ad_groups') => {
    const r = await post(url, body);
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body.error.param).toBe(param);
    expect(r.body.error.type).toBe(status === 404 ? 'not_found_error' : 'invalid_request_error');
    expect(typeof r.body.error.message).toBe('string');
    return r.body.error;
  };

  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(async () => s?.close());

  describe('create', () => {
    it('creates an ad group and returns it', async () => {
      const r = await post('/ads/v1/ad_groups', base({ description: 'Spring', context_hints: ['marathon training', 'trail'] }));
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        name: 'Running shoes',
        description: 'Spring',
        context_hints: ['marathon training', 'trail'],
        status: 'active',
        bidding_config: { billing_event_type: 'click', max_bid_micros: 2_000_000 },
      });
      expect(r.body.id).toMatch(/^adgrp_/);
      expect(r.body.created_at).toBe(r.body.updated_at);
      expect(r.body).not.toHaveProperty('product_set');
    });

    it('accepts a paused status and defaults description to null and hints to []', async () => {
      const r = await post('/ads/v1/ad_groups', base({ status: 'paused' }));
      expect(r.body).toMatchObject({ status: 'paused', description: null, context_hints: [] });
    });

    it('refuses archived (and any other status) on create', async () => {
      await expectRefused(base({ status: 'archived' }), 'status');
    });

    it('requires campaign_id, name, status and bidding_config', async () => {
      for (const field of ['campaign_id', 'name', 'status', 'bidding_config']) {
        const body: Record<string, unknown> = base();
        delete body[field];
        const e = await expectRefused(body, field);
        expect(e.message).toContain(field);
      }
      await expectRefused(base({ bidding_config: { billing_event_type: 'click' } }), 'bidding_config.max_bid_micros');
      await expectRefused(base({ bidding_config: { max_bid_micros: 5 } }), 'bidding_config.billing_event_type');
    });

    it("404s an unknown campaign and another account's campaign", async () => {
      await expectRefused(base({ campaign_id: 'cmp_nope' }), 'campaign_id', 404);
    });
  });

  describe('name rule', () => {
    it.each([
      ['too short', 'ab'],
      ['too long', 'x'.repeat(1001)],
      ['only spaces', '   '],
      ['only whitespace', '\t \n'],
    ])('refuses a name %s', async (_why, name) => {
      const e = await expectRefused(base({ name }), 'name');
      expect(e.message).toMatch(/'name' must/);
    });
    it('accepts 3 and 1000 characters, counting characters not bytes', async () => {
      expect((await post('/ads/v1/ad_groups', base({ name: 'abc' }))).status).toBe(200);
      expect((await post('/ads/v1/ad_groups', base({ name: 'x'.repeat(1000) }))).status).toBe(200);
      expect((await post('/ads/v1/ad_groups', base({ name: '👟👟👟' }))).status).toBe(200);
      expect((await post('/ads/v1/ad_groups', base({ name: ' a ' }))).status).toBe(200);
    });
  });

  describe('max_bid_micros rule', () => {
    it('refuses below 1', async () => {
      for (const v of [0, -5])
        await expectRefused(base({ bidding_config: { billing_event_type: 'click', max_bid_micros: v } }), 'bidding_config.max_bid_micros');
    });
    it('refuses above the maximum for the bidding type and currency (100000000 for USD)', async () => {
      expect(
        (await post('/ads/v1/ad_groups', base({ bidding_config: { billing_event_type: 'click', max_bid_micros: 100_000_000 } }))).status,
      ).toBe(200);
      const e = await expectRefused(
        base({ bidding_config: { billing_event_type: 'click', max_bid_micros: 100_000_001 } }),
        'bidding_config.max_bid_micros',
      );
      expect(e.message).toContain('100000000');
      expect(e.message).toContain('USD');
    });
    it('refuses a non-integer bid without coercion', async () => {
      await expectRefused(
        base({ bidding_config: { billing_event_type: 'click', max_bid_micros: '100' } }),
        'bidding_config.max_bid_micros',
      );
      await expectRefused(base({ bidding_config: { billing_event_type: 'click', max_bid_micros: 1.5 } }), 'bidding_config.max_bid_micros');
    });
  });

  describe('billing_event_type rule', () => {
    it('impression campaigns bill impressions', async () => {
      expect(
        (
          await post(
            '/ads/v1/ad_groups',
            base({ campaign_id: IMPRESSIONS, bidding_config: { billing_event_type: 'impression', max_bid_micros: 5000 } }),
          )
        ).status,
      ).toBe(200);
      await expectRefused(base({ campaign_id: IMPRESSIONS }), 'bidding_config.billing_event_type');
    });
    it('click campaigns bill clicks', async () => {
      await expectRefused(
        base({ bidding_config: { billing_event_type: 'impression', max_bid_micros: 5000 } }),
        'bidding_config.billing_event_type',
      );
    });
    it('conversion (oCPC) campaigns bill clicks with a CPA bid', async () => {
      const r = await post(
        '/ads/v1/ad_groups',
        base({ campaign_id: CONVERSIONS, bidding_config: { billing_event_type: 'click', max_bid_micros: 25_000_000 } }),
      );
      expect(r.status).toBe(200);
      const e = await expectRefused(
        base({ campaign_id: CONVERSIONS, bidding_config: { billing_event_type: 'impression', max_bid_micros: 1 } }),
        'bidding_config.billing_event_type',
      );
      expect(e.message).toContain('CPA');
    });
    it('refuses unknown billing event types', async () => {
      await expectRefused(
        base({ bidding_config: { billing_event_type: 'conversion', max_bid_micros: 1 } }),
        'bidding_config.billing_event_type',
      );
    });
  });

  describe('bid multipliers rule', () => {
    const withMultipliers = (m: unknown[]) =>
      base({ bidding_config: { billing_event_type: 'click', max_bid_micros: 1_000_000, custom_audience_bid_multipliers: m } });
    it('accepts eligible audiences at the bounds 100000 and 10000000', async () => {
      const r = await post(
        '/ads/v1/ad_groups',
        withMultipliers([
          { custom_audience_id: 'aud_demo_loyal', bid_multiplier_micros: 100_000 },
          { custom_audience_id: 'aud_demo_cart', bid_multiplier_micros: 10_000_000 },
        ]),
      );
      expect(r.status).toBe(200);
      expect(r.body.bidding_config.custom_audience_bid_multipliers).toHaveLength(2);
    });
    it('refuses multipliers outside 100000..10000000', async () => {
      for (const v of [99_999, 10_000_001, 0]) {
        await expectRefused(
          withMultipliers([{ custom_audience_id: 'aud_demo_loyal', bid_multiplier_micros: v }]),
          'bidding_config.custom_audience_bid_multipliers[0].bid_multiplier_micros',
        );
      }
    });
    it('refuses a ready audience that is not eligible for bid multipliers (eligibility is its own attribute)', async () => {
      const e = await expectRefused(
        withMultipliers([
          { custom_audience_id: 'aud_demo_loyal', bid_multiplier_micros: 200_000 },
          { custom_audience_id: 'aud_demo_small', bid_multiplier_micros: 200_000 },
        ]),
        'bidding_config.custom_audience_bid_multipliers[1].custom_audience_id',
      );
      expect(e.message).toContain('not eligible');
    });
    it('refuses unknown audiences and duplicates, and requires both item fields', async () => {
      await expectRefused(
        withMultipliers([{ custom_audience_id: 'aud_nope', bid_multiplier_micros: 200_000 }]),
        'bidding_config.custom_audience_bid_multipliers[0].custom_audience_id',
      );
      await expectRefused(
        withMultipliers([
          { custom_audience_id: 'aud_demo_loyal', bid_multiplier_micros: 200_000 },
          { custom_audience_id: 'aud_demo_loyal', bid_multiplier_micros: 300_000 },
        ]),
        'bidding_config.custom_audience_bid_multipliers[1].custom_audience_id',
      );
      await expectRefused(
        withMultipliers([{ custom_audience_id: 'aud_demo_loyal' }]),
        'bidding_config.custom_audience_bid_multipliers[0].bid_multiplier_micros',
      );
      await expectRefused(
        withMultipliers([{ bid_multiplier_micros: 200_000 }]),
        'bidding_config.custom_audience_bid_multipliers[0].custom_audience_id',
      );
    });
    it('checks eligibility when the ad group is saved, on update too', async () => {
      const g = (await post('/ads/v1/ad_groups', base())).body;
      await expectRefused(
        {
          bidding_config: {
            billing_event_type: 'click',
            max_bid_micros: 1_000_000,
            custom_audience_bid_multipliers: [{ custom_audience_id: 'aud_demo_processing', bid_multiplier_micros: 200_000 }],
          },
        },
        'bidding_config.custom_audience_bid_multipliers[0].custom_audience_id',
        400,
        `/ads/v1/ad_groups/${g.id}`,
      );
    });
  });

  describe('product_set rules', () => {
    const ocpc = (product_set: unknown) => base({ campaign_id: CONVERSIONS, product_set });
    it('inherits the campaign feed when product_set is omitted on create', async () => {
      const r = await post('/ads/v1/ad_groups', base({ campaign_id: CONVERSIONS }));
      expect(r.body.product_set).toEqual({ product_feed_id: 'feed_demo_catalog', filters: [] });
    });
    it('accepts filters with numeric comparisons on price and star_rating', async () => {
      const ps = {
        product_feed_id: 'feed_demo_catalog',
        filters: [
          { field: 'brand', operator: 'in', values: ['Acme', 'Zoom'] },
          { field: 'price', operator: 'lte', values: ['129.99'] },
          { field: 'star_rating', operator: 'gte', values: ['4'] },
        ],
      };
      const r = await post('/ads/v1/ad_groups', ocpc(ps));
      expect(r.status).toBe(200);
      expect(r.body.product_set).toEqual(ps);
    });
    it("refuses another feed than the campaign's", async () => {
      await expectRefused(ocpc({ product_feed_id: 'feed_other' }), 'product_set.product_feed_id');
    });
    it('refuses a product_set on a campaign without a feed', async () => {
      await expectRefused(base({ product_set: { product_feed_id: 'feed_demo_catalog' } }), 'product_set');
    });
    it('refuses a field repeated in one product set', async () => {
      await expectRefused(
        ocpc({
          product_feed_id: 'feed_demo_catalog',
          filters: [
            { field: 'brand', operator: 'in', values: ['a'] },
            { field: 'brand', operator: 'in', values: ['b'] },
          ],
        }),
        'product_set.filters[1].field',
      );
    });
    it('refuses gt/gte/lt/lte on fields other than price and star_rating', async () => {
      for (const op of ['gt', 'gte', 'lt', 'lte']) {
        await expectRefused(
          ocpc({ product_feed_id: 'feed_demo_catalog', filters: [{ field: 'title', operator: op, values: ['5'] }] }),
          'product_set.filters[0].operator',
        );
      }
    });
    it('refuses comparison values that are not numbers', async () => {
      await expectRefused(
        ocpc({ product_feed_id: 'feed_demo_catalog', filters: [{ field: 'price', operator: 'gt', values: ['cheap'] }] }),
        'product_set.filters[0].values[0]',
      );
    });
    it('refuses unknown fields and operators, and numbers not sent as strings', async () => {
      await expectRefused(
        ocpc({ product_feed_id: 'feed_demo_catalog', filters: [{ field: 'colour', operator: 'in', values: ['red'] }] }),
        'product_set.filters[0].field',
      );
      await expectRefused(
        ocpc({ product_feed_id: 'feed_demo_catalog', filters: [{ field: 'price', operator: 'eq', values: ['1'] }] }),
        'product_set.filters[0].operator',
      );
      await expectRefused(
        ocpc({ product_feed_id: 'feed_demo_catalog', filters: [{ field: 'price', operator: 'gt', values: [5] }] }),
        'product_set.filters[0].values[0]',
      );
      await expectRefused(ocpc({ filters: [] }), 'product_set.product_feed_id');
    });
  });

  describe('retrieve, update and actions', () => {
    it('retrieves an ad group', async () => {
      const g = (await post('/ads/v1/ad_groups', base())).body;
      expect((await get(`/ads/v1/ad_groups/${g.id}`)).body).toEqual(g);
    });

    it('updates supplied fields only; description null clears it; updated_at moves with the clock', async () => {
      const g = (await post('/ads/v1/ad_groups', base({ description: 'to clear', context_hints: ['a'] }))).body;
      s.ctx.clock.advance(5000);
      const r = await post(`/ads/v1/ad_groups/${g.id}`, { description: null, name: 'Renamed' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ name: 'Renamed', description: null, context_hints: ['a'], status: 'active' });
      expect(r.body.updated_at).toBeGreaterThanOrEqual(g.updated_at + 5);
      expect(r.body.created_at).toBe(g.created_at);
    });

    it('takes bidding_config whole (the full object is required)', async () => {
      const g = (await post('/ads/v1/ad_groups', base())).body;
      await expectRefused({ bidding_config: { max_bid_micros: 5 } }, 'bidding_config.billing_event_type', 400, `/ads/v1/ad_groups/${g.id}`);
      const r = await post(`/ads/v1/ad_groups/${g.id}`, { bidding_config: { billing_event_type: 'click', max_bid_micros: 7 } });
      expect(r.body.bidding_config).toEqual({ billing_event_type: 'click', max_bid_micros: 7 });
    });

    it('the update response omits product_set, a retrieve shows it', async () => {
      const g = (await post('/ads/v1/ad_groups', base({ campaign_id: CONVERSIONS }))).body;
      const ps = { product_feed_id: 'feed_demo_catalog', filters: [{ field: 'condition', operator: 'in', values: ['new'] }] };
      const r = await post(`/ads/v1/ad_groups/${g.id}`, { product_set: ps });
      expect(r.status).toBe(200);
      expect(r.body).not.toHaveProperty('product_set');
      expect((await get(`/ads/v1/ad_groups/${g.id}`)).body.product_set).toEqual(ps);
      await expectRefused({ product_set: { product_feed_id: 'feed_x' } }, 'product_set.product_feed_id', 400, `/ads/v1/ad_groups/${g.id}`);
    });

    it('refuses campaign_id and unknown fields on update', async () => {
      const g = (await post('/ads/v1/ad_groups', base())).body;
      await expectRefused({ campaign_id: IMPRESSIONS }, 'campaign_id', 400, `/ads/v1/ad_groups/${g.id}`);
      await expectRefused({ nmae: 'typo' }, 'nmae', 400, `/ads/v1/ad_groups/${g.id}`);
      await expectRefused({ name: 'ok' }, 'name', 400, `/ads/v1/ad_groups/${g.id}`);
    });

    it('activate and pause move between the states and are idempotent', async () => {
      const g = (await post('/ads/v1/ad_groups', base())).body;
      expect((await post(`/ads/v1/ad_groups/${g.id}/pause`)).body.status).toBe('paused');
      expect((await post(`/ads/v1/ad_groups/${g.id}/pause`)).body.status).toBe('paused');
      expect((await post(`/ads/v1/ad_groups/${g.id}/activate`)).body.status).toBe('active');
      expect((await post(`/ads/v1/ad_groups/${g.id}`, { status: 'paused' })).body.status).toBe('paused');
    });

    it('archive is one-way: activate, pause and update are refused; archiving again is a no-op', async () => {
      const g = (await post('/ads/v1/ad_groups', base())).body;
      const a = await post(`/ads/v1/ad_groups/${g.id}/archive`);
      expect(a.status).toBe(200);
      expect(a.body.status).toBe('archived');
      for (const action of ['activate', 'pause']) {
        const r = await post(`/ads/v1/ad_groups/${g.id}/${action}`);
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('ad_group_archived');
      }
      for (const body of [{ name: 'New name' }, { status: 'active' }]) {
        const r = await post(`/ads/v1/ad_groups/${g.id}`, body);
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('ad_group_archived');
      }
      expect((await post(`/ads/v1/ad_groups/${g.id}/archive`)).body.status).toBe('archived');
      expect((await post(`/ads/v1/ad_groups/${g.id}`, { status: 'archived' })).status).toBe(200);
      expect((await get(`/ads/v1/ad_groups/${g.id}`)).body.name).toBe(g.name);
    });

    it('update accepts status archived', async () => {
      const g = (await post('/ads/v1/ad_groups', base())).body;
      expect((await post(`/ads/v1/ad_groups/${g.id}`, { status: 'archived' })).body.status).toBe('archived');
    });

    it('404s unknown ids on every endpoint', async () => {
      for (const url of [
        '/ads/v1/ad_groups/adgrp_nope',
        '/ads/v1/ad_groups/adgrp_nope/activate',
        '/ads/v1/ad_groups/adgrp_nope/pause',
        '/ads/v1/ad_groups/adgrp_nope/archive',
      ]) {
        const r = url.endsWith('nope') ? await get(url) : await post(url);
        expect(r.status).toBe(404);
        expect(r.body.error.type).toBe('not_found_error');
      }
      expect((await post('/ads/v1/ad_groups/adgrp_nope', { name: 'abc' })).status).toBe(404);
    });
  });

  describe('list', () => {
    let campaign: string;
    let ids: string[];
    beforeAll(async () => {
      // A campaign of its own, so the list holds exactly what this block creates.
      const r = await s.req('POST', '/admin/v1/ad_accounts/adacct_demo/campaigns', {
        key: 'admin',
        body: { name: `List test ${dialect}`, bidding_type: 'clicks' },
      });
      campaign = r.body.id;
      ids = [];
      for (let i = 0; i < 25; i++) ids.push((await post('/ads/v1/ad_groups', base({ campaign_id: campaign, name: `group ${i}` }))).body.id);
    });

    it('requires campaign_id and 404s unknown campaigns', async () => {
      const r = await get('/ads/v1/ad_groups');
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe('campaign_id');
      expect((await get('/ads/v1/ad_groups?campaign_id=cmp_nope')).status).toBe(404);
    });

    it('defaults to 20 items, newest first, with the list envelope', async () => {
      const r = await get(`/ads/v1/ad_groups?campaign_id=${campaign}`);
      expect(r.body.object).toBe('list');
      expect(r.body.data).toHaveLength(20);
      expect(r.body.data.map((g: any) => g.id)).toEqual(ids.slice().reverse().slice(0, 20));
      expect(r.body.first_id).toBe(ids[24]);
      expect(r.body.last_id).toBe(ids[5]);
      expect(r.body.has_more).toBe(true);
    });

    it('pages forward with after and back with before, in both orders', async () => {
      const p1 = (await get(`/ads/v1/ad_groups?campaign_id=${campaign}&limit=10&order=asc`)).body;
      expect(p1.data.map((g: any) => g.id)).toEqual(ids.slice(0, 10));
      const p2 = (await get(`/ads/v1/ad_groups?campaign_id=${campaign}&limit=10&order=asc&after=${p1.last_id}`)).body;
      expect(p2.data.map((g: any) => g.id)).toEqual(ids.slice(10, 20));
      const p3 = (await get(`/ads/v1/ad_groups?campaign_id=${campaign}&limit=10&order=asc&after=${p2.last_id}`)).body;
      expect(p3.data.map((g: any) => g.id)).toEqual(ids.slice(20));
      expect(p3.has_more).toBe(false);
      const back = (await get(`/ads/v1/ad_groups?campaign_id=${campaign}&limit=10&order=asc&before=${p3.first_id}`)).body;
      expect(back.data.map((g: any) => g.id)).toEqual(ids.slice(10, 20));
      expect(back.has_more).toBe(true);
      const desc = (await get(`/ads/v1/ad_groups?campaign_id=${campaign}&limit=5&after=${ids[10]}`)).body;
      expect(desc.data.map((g: any) => g.id)).toEqual(ids.slice(5, 10).reverse());
    });

    it('accepts limit 1..500 and refuses outside', async () => {
      expect((await get(`/ads/v1/ad_groups?campaign_id=${campaign}&limit=1`)).body.data).toHaveLength(1);
      expect((await get(`/ads/v1/ad_groups?campaign_id=${campaign}&limit=500`)).body.data).toHaveLength(25);
      for (const limit of ['0', '501', 'abc']) {
        const r = await get(`/ads/v1/ad_groups?campaign_id=${campaign}&limit=${limit}`);
        expect(r.status).toBe(400);
        expect(r.body.error.param).toBe('limit');
      }
      expect((await get(`/ads/v1/ad_groups?campaign_id=${campaign}&order=up`)).body.error.param).toBe('order');
    });
  });

  describe('replies', () => {
    it('every ad group reply is what its route declares (create, retrieve, update, actions, list)', async () => {
      const created = await post(
        '/ads/v1/ad_groups',
        base({
          campaign_id: CONVERSIONS,
          bidding_config: {
            billing_event_type: 'click',
            max_bid_micros: 5,
            custom_audience_bid_multipliers: [{ custom_audience_id: 'aud_demo_loyal', bid_multiplier_micros: 200_000 }],
          },
        }),
      );
      const id = created.body.id;
      const replies = [
        created,
        await get(`/ads/v1/ad_groups/${id}`),
        await post(`/ads/v1/ad_groups/${id}`, {
          description: null,
          product_set: { product_feed_id: 'feed_demo_catalog', filters: [{ field: 'price', operator: 'lt', values: ['10'] }] },
        }),
        await get(`/ads/v1/ad_groups/${id}`),
        await post(`/ads/v1/ad_groups/${id}/pause`),
        await post(`/ads/v1/ad_groups/${id}/activate`),
        await post(`/ads/v1/ad_groups/${id}/archive`),
      ];
      for (const r of replies) {
        expect(r.status).toBe(200);
        expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(isAdGroup(r.body), JSON.stringify(isAdGroup.errors)).toBe(true);
      }
      expect(replies[3].body.product_set.filters).toHaveLength(1);
      const list = await get(`/ads/v1/ad_groups?campaign_id=${CONVERSIONS}&limit=500`);
      expect(isAdGroupList(list.body), JSON.stringify(isAdGroupList.errors)).toBe(true);
      expect(list.body.data.length).toBeGreaterThan(0);
    });
  });

  describe('audiences, campaigns and feeds', () => {
    it('lists only bid-multiplier-eligible audiences with intended_use=bid_multiplier', async () => {
      const all = (await get('/ads/v1/custom_audiences?limit=100')).body.data.map((a: any) => a.id);
      expect(all).toEqual(expect.arrayContaining(['aud_demo_loyal', 'aud_demo_cart', 'aud_demo_small', 'aud_demo_processing']));
      const eligible = (await get('/ads/v1/custom_audiences?intended_use=bid_multiplier&limit=100')).body.data;
      expect(eligible.map((a: any) => a.id).sort()).toEqual(['aud_demo_cart', 'aud_demo_loyal']);
      const small = (await get('/ads/v1/custom_audiences/aud_demo_small')).body;
      expect(small).toMatchObject({ status: 'ready', eligible_for_bid_multiplier: false });
    });
    it('reads campaigns and product feeds', async () => {
      const c = (await get(`/ads/v1/campaigns/${CONVERSIONS}`)).body;
      expect(c).toMatchObject({ id: CONVERSIONS, bidding_type: 'conversions', product_feed_id: 'feed_demo_catalog' });
      expect((await get('/ads/v1/campaigns')).body.data.length).toBeGreaterThanOrEqual(3);
      expect((await get('/ads/v1/product_feeds/feed_demo_catalog')).body.id).toBe('feed_demo_catalog');
      expect((await get('/ads/v1/campaigns/cmp_nope')).status).toBe(404);
    });
  });

  describe('security', () => {
    it('401s a missing or wrong key, before looking at the body', async () => {
      for (const key of [null, 'sk-ads-wrong-key-000000000000000000000']) {
        const r = await s.req('POST', '/ads/v1/ad_groups', { key, body: { junk: true } });
        expect(r.status).toBe(401);
        expect(r.body.error.type).toBe('authentication_error');
      }
      const bad = await s.app.inject({ method: 'GET', url: '/ads/v1/campaigns', headers: { authorization: 'Basic abc' } });
      expect(bad.statusCode).toBe(401);
    });
    it('401s a platform key on the ads API and an ads key on the platform API', async () => {
      expect((await get('/ads/v1/campaigns', 'platform')).status).toBe(401);
      // Before validation: the body is never looked at.
      const junk = await s.req('POST', '/ads/v1/ad_groups', { key: 'platform', body: { junk: true } });
      expect(junk.status).toBe(401);
      expect(junk.body.error.message).toMatch(/platform API key is not valid on the ads API/);
      const platform = await s.req('GET', '/v1/models', { key: 'ads' });
      expect(platform.status).toBe(401);
      expect(platform.body.error.message).toMatch(/ads API key is not valid on the platform API/);
    });
    it("hides other ad accounts' objects behind 404", async () => {
      const mine = (await post('/ads/v1/ad_groups', base())).body;
      const other = await s.req('POST', '/admin/v1/organizations/org_demo/ad_accounts', {
        key: 'admin',
        body: { name: `Other ${dialect}`, currency: 'EUR' },
      });
      const key = (await s.req('POST', `/admin/v1/ad_accounts/${other.body.id}/api_keys`, { key: 'admin', body: { name: 'k' } })).body
        .value;
      expect(key).toMatch(/^sk-ads-/);
      expect((await get(`/ads/v1/ad_groups/${mine.id}`, key)).status).toBe(404);
      expect((await post(`/ads/v1/ad_groups/${mine.id}/pause`, undefined, key)).status).toBe(404);
      expect((await get(`/ads/v1/ad_groups?campaign_id=${CLICKS}`, key)).status).toBe(404);
      expect((await post('/ads/v1/ad_groups', base(), key)).status).toBe(404);
      expect((await get('/ads/v1/custom_audiences/aud_demo_loyal', key)).status).toBe(404);
    });
    it('answers malformed JSON, wrong content types and huge bodies with a clear 4xx', async () => {
      const bad = await s.app.inject({
        method: 'POST',
        url: '/ads/v1/ad_groups',
        headers: { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' },
        payload: '{"name": ',
      });
      expect(bad.statusCode).toBe(400);
      expect(JSON.parse(bad.body).error.type).toBe('invalid_request_error');
      const text = await s.app.inject({
        method: 'POST',
        url: '/ads/v1/ad_groups',
        headers: { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'text/plain' },
        payload: 'hi',
      });
      expect(text.statusCode).toBe(415);
      const huge = await s.app.inject({
        method: 'POST',
        url: '/ads/v1/ad_groups',
        headers: { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' },
        payload: JSON.stringify(base({ description: 'x'.repeat(2_000_000) })),
      });
      expect(huge.statusCode).toBe(413);
      const arr = await s.app.inject({
        method: 'POST',
        url: '/ads/v1/ad_groups',
        headers: { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' },
        payload: '[1,2]',
      });
      expect(arr.statusCode).toBe(400);
      const nul = await s.app.inject({
        method: 'POST',
        url: '/ads/v1/ad_groups',
        headers: { authorization: `Bearer ${s.keys.ads}`, 'content-type': 'application/json' },
        payload: 'null',
      });
      expect(nul.statusCode).toBe(400);
    });
    it('refuses unknown fields at every level', async () => {
      await expectRefused(base({ extra: 1 }), 'extra');
      await expectRefused(base({ bidding_config: { billing_event_type: 'click', max_bid_micros: 1, bid: 2 } }), 'bidding_config.bid');
    });
  });
});
