import type { Static } from 'typebox';
import type { AdsPrincipal } from '../core/auth.js';
import type { Ctx } from '../core/module.js';
import { invalid, notFound } from '../core/errors.js';
import { newId, newSecret } from '../core/ids.js';
import { hashSecret, redactSecret } from '../core/secrets.js';
import type { Exec } from '../store/db.js';
import { SUPPORTED_CURRENCIES } from './max-bids.js';
import type { AdsKeyConfig, AudienceConfig, CampaignConfig, FeedConfig } from './schemas.js';
import * as store from './store.js';

/** Ad accounts and what hangs off them (ads keys, campaigns, custom audiences, product feeds): created by config, admin API or seed. */

export interface AdAccountInput {
  id?: string;
  name: string;
  currency: string;
}
export type CampaignInput = Static<typeof CampaignConfig>;
export type AudienceInput = Static<typeof AudienceConfig>;
export type FeedInput = Static<typeof FeedConfig>;
export type AdsKeyInput = Static<typeof AdsKeyConfig>;

export const campaignView = (c: store.CampaignRow) => ({
  id: c.id,
  object: 'campaign' as const,
  name: c.name,
  bidding_type: c.bidding_type,
  product_feed_id: c.product_feed_id,
  created_at: c.created_at,
});
export const audienceView = (a: store.AudienceRow) => ({
  id: a.id,
  object: 'custom_audience' as const,
  name: a.name,
  status: a.status,
  matched_count_range: a.size_range,
  eligible_for_bid_multiplier: a.bid_multiplier_eligible === 1,
  eligible_for_exclusion: a.exclusion_eligible === 1,
  created_at: a.created_at,
});
export const feedView = (f: store.FeedRow) => ({ id: f.id, object: 'product_feed' as const, name: f.name, created_at: f.created_at });
export const adAccountView = (a: store.AdAccountRow) => ({ object: 'ad_account' as const, ...a });
const adsKeyView = (k: store.AdsKeyRow) => ({
  id: k.id,
  object: 'ads_api_key' as const,
  ad_account_id: k.ad_account_id,
  name: k.name,
  redacted_value: k.redacted,
  created_at: k.created_at,
});

/** Creates an ad account, or updates the one with this id (or, without an id, this name in the organization). */
export async function upsertAdAccount(ctx: Ctx, exec: Exec, organizationId: string, input: AdAccountInput): Promise<store.AdAccountRow> {
  if (!SUPPORTED_CURRENCIES.includes(input.currency))
    throw invalid(`'currency' must be one of ${SUPPORTED_CURRENCIES.join(', ')}.`, 'currency', 'invalid_value');
  const existing = input.id ? await store.getAdAccount(exec, input.id) : await store.findAdAccountByName(exec, organizationId, input.name);
  if (existing) {
    if (existing.organization_id !== organizationId) throw invalid(`Ad account '${existing.id}' belongs to another organization.`, 'id');
    await store.updateAdAccount(exec, existing.id, { name: input.name, currency: input.currency });
    return { ...existing, name: input.name, currency: input.currency };
  }
  const row = {
    id: input.id ?? newId('adacct', ctx.clock),
    organization_id: organizationId,
    name: input.name,
    currency: input.currency,
    created_at: ctx.clock.nowSeconds(),
  };
  await store.insertAdAccount(exec, row);
  return row;
}

export async function getAdAccountOrThrow(exec: Exec, id: string): Promise<store.AdAccountRow> {
  const row = await store.getAdAccount(exec, id);
  if (!row) throw notFound('ad account', id);
  return row;
}

/** Adds an ads API key (scoped to one ad account). With `value`, re-declaring it changes nothing. The value is in the answer only when it is new. */
export async function createAdsKey(ctx: Ctx, exec: Exec, adAccountId: string, input: AdsKeyInput) {
  await getAdAccountOrThrow(exec, adAccountId);
  const value = input.value ?? newSecret('sk-ads-');
  const hash = hashSecret(value);
  const existing = await store.findAdsKeyByHash(exec, hash);
  if (existing) {
    if (existing.ad_account_id !== adAccountId) throw invalid('That key value is already used by another ad account.', 'value');
    return adsKeyView(existing);
  }
  const row = {
    id: newId('adskey', ctx.clock),
    ad_account_id: adAccountId,
    name: input.name,
    hash,
    redacted: redactSecret(value),
    created_at: ctx.clock.nowSeconds(),
  };
  await store.insertAdsKey(exec, row);
  return { ...adsKeyView(row), value };
}

export async function listAdsKeys(exec: Exec, adAccountId: string) {
  return (await store.listAdsKeys(exec, adAccountId)).map(adsKeyView);
}

export async function resolveAdsKey(exec: Exec, token: string): Promise<AdsPrincipal | null> {
  const row = await store.resolveAdsKeyHash(exec, hashSecret(token));
  return row ? { kind: 'ads', adAccountId: row.ad_account_id, credentialId: row.id } : null;
}

async function findByIdOrName(
  exec: Exec,
  table: 'campaigns' | 'custom_audiences' | 'product_feeds',
  adAccountId: string,
  id: string | undefined,
  name: string,
) {
  const row = await store.findChild(exec, table, adAccountId, id, name);
  if (row && row.ad_account_id !== adAccountId) throw invalid(`'${row.id}' belongs to another ad account.`, 'id');
  return row;
}

export async function upsertFeed(ctx: Ctx, exec: Exec, adAccountId: string, input: FeedInput): Promise<string> {
  const existing = await findByIdOrName(exec, 'product_feeds', adAccountId, input.id, input.name);
  if (existing) {
    await store.renameFeed(exec, existing.id, input.name);
    return existing.id;
  }
  const id = input.id ?? newId('feed', ctx.clock);
  await store.insertFeed(exec, { id, ad_account_id: adAccountId, name: input.name, created_at: ctx.clock.nowSeconds() });
  return id;
}

export async function upsertCampaign(ctx: Ctx, exec: Exec, adAccountId: string, input: CampaignInput): Promise<string> {
  if (input.product_feed_id && !(await store.getFeed(exec, adAccountId, input.product_feed_id))) {
    throw invalid(`No product feed '${input.product_feed_id}' in ad account '${adAccountId}'.`, 'product_feed_id');
  }
  const values = { name: input.name, bidding_type: input.bidding_type, product_feed_id: input.product_feed_id ?? null };
  const existing = await findByIdOrName(exec, 'campaigns', adAccountId, input.id, input.name);
  if (existing) {
    await store.updateCampaign(exec, existing.id, values);
    return existing.id;
  }
  const id = input.id ?? newId('cmp', ctx.clock);
  await store.insertCampaign(exec, { id, ad_account_id: adAccountId, ...values, created_at: ctx.clock.nowSeconds() });
  return id;
}

export async function upsertAudience(ctx: Ctx, exec: Exec, adAccountId: string, input: AudienceInput): Promise<string> {
  const values = {
    name: input.name,
    status: input.status ?? 'ready',
    size_range: input.matched_count_range ?? null,
    bid_multiplier_eligible: input.eligible_for_bid_multiplier ? 1 : 0,
    exclusion_eligible: (input.eligible_for_exclusion ?? true) ? 1 : 0,
  };
  const existing = await findByIdOrName(exec, 'custom_audiences', adAccountId, input.id, input.name);
  if (existing) {
    await store.updateAudience(exec, existing.id, values);
    return existing.id;
  }
  const id = input.id ?? newId('aud', ctx.clock);
  await store.insertAudience(exec, { id, ad_account_id: adAccountId, ...values, created_at: ctx.clock.nowSeconds() });
  return id;
}
