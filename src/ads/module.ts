import { keepGeneratedSecret } from '../core/generated-secrets.js';
import { Type, type Static } from 'typebox';
import { configSection, type Ctx, type Module } from '../core/module.js';
import type { Tx } from '../store/db.js';
import * as accounts from './accounts.js';
import { adsAdminRoutes } from './admin-routes.js';
import { withOverrides } from './max-bids.js';
import { adsRoutes } from './routes.js';
import { AdAccountConfig, AdsRootConfig } from './schemas.js';
import { createAdsService } from './service.js';
import { adsMigrations } from './tables.js';
import { insertAdGroups } from './store.js';
import { withJson } from './documents.js';
import { newId } from '../core/ids.js';

/** An ad account as the config file (and the seed) declares it. */
type AdAccountDeclaration = Static<typeof AdAccountConfig>;

/** Declares an ad account and everything under it (config file and seed share this). */
export async function applyAdAccount(
  ctx: Ctx,
  tx: Tx,
  organizationId: string,
  a: AdAccountDeclaration,
): Promise<{ id: string; newKeys: { name: string; value: string }[] }> {
  const acct = await accounts.upsertAdAccount(ctx, tx, organizationId, { id: a.id, name: a.name, currency: a.currency });
  const feedIds = new Map<string, string>();
  for (const f of a.product_feeds ?? []) feedIds.set(f.id ?? f.name, await accounts.upsertFeed(ctx, tx, acct.id, f));
  for (const c of a.campaigns ?? []) {
    // A campaign may name its feed by id or by the feed's name in the same file.
    const feed = c.product_feed_id ? (feedIds.get(c.product_feed_id) ?? c.product_feed_id) : null;
    await accounts.upsertCampaign(ctx, tx, acct.id, { ...c, product_feed_id: feed });
  }
  for (const au of a.custom_audiences ?? []) await accounts.upsertAudience(ctx, tx, acct.id, au);
  const existing = new Set((await accounts.listAdsKeys(tx, acct.id)).map((k) => k.name));
  const newKeys: { name: string; value: string }[] = [];
  for (const k of a.api_keys ?? []) {
    if (!k.value && existing.has(k.name)) continue;
    const key = await accounts.createAdsKey(ctx, tx, acct.id, k);
    if ('value' in key && !k.value) newKeys.push({ name: k.name, value: key.value });
  }
  return { id: acct.id, newKeys };
}

/** The demo ad account of the first start: one campaign per bidding type, audiences of every kind, a feed. */
export const DEMO_AD_ACCOUNT: AdAccountDeclaration = {
  id: 'adacct_demo',
  name: 'Demo ad account',
  currency: 'USD',
  product_feeds: [{ id: 'feed_demo_catalog', name: 'Demo catalog' }],
  campaigns: [
    { id: 'cmp_demo_impressions', name: 'Brand awareness (impressions)', bidding_type: 'impressions' },
    { id: 'cmp_demo_clicks', name: 'Site traffic (clicks)', bidding_type: 'clicks' },
    { id: 'cmp_demo_conversions', name: 'Catalog sales (oCPC)', bidding_type: 'conversions', product_feed_id: 'feed_demo_catalog' },
  ],
  custom_audiences: [
    {
      id: 'aud_demo_loyal',
      name: 'Loyal customers',
      status: 'ready',
      matched_count_range: '100000-500000',
      eligible_for_bid_multiplier: true,
    },
    {
      id: 'aud_demo_cart',
      name: 'Cart abandoners',
      status: 'ready',
      matched_count_range: '10000-50000',
      eligible_for_bid_multiplier: true,
    },
    {
      id: 'aud_demo_small',
      name: 'VIP list (ready, too small for bid multipliers)',
      status: 'ready',
      matched_count_range: '100-1000',
      eligible_for_bid_multiplier: false,
    },
    {
      id: 'aud_demo_processing',
      name: 'Newsletter (processing)',
      status: 'processing',
      matched_count_range: null,
      eligible_for_bid_multiplier: false,
    },
  ],
  api_keys: [{ name: 'demo' }],
};

export const adsModule: Module = {
  name: 'ads',
  migrations: adsMigrations,
  provide(ctx) {
    ctx.services.ads = createAdsService(ctx);
  },
  init(ctx) {
    ctx.auth.addResolver(async (token) => (token.startsWith('sk-ads-') ? accounts.resolveAdsKey(ctx.store.db, token) : null));
    // Authenticate before validating, so a request without a valid ads key learns nothing about the API.
    ctx.auth.protect('/ads/v1/', 'ads');
  },
  async routes(app, ctx) {
    adsRoutes(app, ctx);
  },
  adminRoutes: adsAdminRoutes,
  config: [
    configSection({
      at: 'root',
      key: 'ads',
      schema: AdsRootConfig,
      async apply(ctx, _tx, value) {
        ctx.services.ads.maxBids = withOverrides(value.max_bid_micros);
      },
    }),
    configSection({
      at: 'organization',
      key: 'ad_accounts',
      schema: Type.Array(AdAccountConfig, { maxItems: 100 }),
      async apply(ctx, tx, list, { organizationId }) {
        for (const a of list) {
          const { id, newKeys } = await applyAdAccount(ctx, tx, organizationId!, a);
          for (const k of newKeys) {
            const file = keepGeneratedSecret(ctx.settings.data, `ads-api-key-${id}-${k.name}`, k.value);
            ctx.log.warn(
              { ad_account: id, key: k.name, secret_file: file },
              `new ads API key '${k.name}' for ${id}: read it from ${file} (this instance's data folder)`,
            );
          }
        }
      },
    }),
  ],
  async seed(ctx, tx, demo) {
    const { id, newKeys } = await applyAdAccount(ctx, tx, demo.organizationId, DEMO_AD_ACCOUNT);
    const now = ctx.clock.nowSeconds();
    await insertAdGroups(tx, [
      withJson({
        id: newId('adgrp', ctx.clock),
        ad_account_id: id,
        campaign_id: 'cmp_demo_clicks',
        name: 'Trail running shoes',
        description: 'Demo ad group',
        context_hints: JSON.stringify(['trail running', 'hiking boots']),
        status: 'active',
        bidding_config: JSON.stringify({
          billing_event_type: 'click',
          max_bid_micros: 1_500_000,
          custom_audience_bid_multipliers: [{ custom_audience_id: 'aud_demo_loyal', bid_multiplier_micros: 1_500_000 }],
        }),
        product_set: null,
        created_at: now,
        updated_at: now,
      }),
    ]);
    return newKeys.map((k) => `  ads API key (ad account ${id}):   ${k.value}`);
  },
};
