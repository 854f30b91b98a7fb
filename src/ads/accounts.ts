import type { AdsPrincipal } from '../core/auth.js';
import type { Ctx } from '../core/module.js';
import { invalid, notFound } from '../core/errors.js';
import { newId, newSecret } from '../core/ids.js';
import { hashSecret, redactSecret } from '../core/secrets.js';
import { precompiled, type Exec } from '../store/db.js';
import { SUPPORTED_CURRENCIES } from './max-bids.js';
import type { AudienceRow, CampaignRow } from './store.js';

/** Ad accounts and what hangs off them (ads keys, campaigns, custom audiences, product feeds): created by config, admin API or seed. */

export interface AdAccountInput { id?: string; name: string; currency: string }
export interface CampaignInput { id?: string; name: string; bidding_type: 'impressions' | 'clicks' | 'conversions'; product_feed_id?: string | null }
export interface AudienceInput {
  id?: string;
  name: string;
  status?: 'ready' | 'processing' | 'too_small' | 'failed';
  size_range?: string | null;
  bid_multiplier_eligible: boolean;
  exclusion_eligible?: boolean;
}
export interface FeedInput { id?: string; name: string }

export const campaignView = (c: CampaignRow) => ({ id: c.id, object: 'campaign', name: c.name, bidding_type: c.bidding_type, product_feed_id: c.product_feed_id, created_at: c.created_at });
export const audienceView = (a: AudienceRow) => ({
  id: a.id,
  object: 'custom_audience',
  name: a.name,
  status: a.status,
  matched_count_range: a.size_range,
  eligible_for_bid_multiplier: a.bid_multiplier_eligible === 1,
  eligible_for_exclusion: a.exclusion_eligible === 1,
  created_at: a.created_at,
});
export const feedView = (f: { id: string; name: string; created_at: number }) => ({ id: f.id, object: 'product_feed', name: f.name, created_at: f.created_at });

export async function upsertAdAccount(ctx: Ctx, exec: Exec, organizationId: string, input: AdAccountInput) {
  if (!SUPPORTED_CURRENCIES.includes(input.currency)) throw invalid(`'currency' must be one of ${SUPPORTED_CURRENCIES.join(', ')}.`, 'currency', 'invalid_value');
  let q = exec.selectFrom('ad_accounts').selectAll();
  q = input.id ? q.where('id', '=', input.id) : q.where('organization_id', '=', organizationId).where('name', '=', input.name);
  const existing = await q.executeTakeFirst();
  if (existing) {
    if (existing.organization_id !== organizationId) throw invalid(`Ad account '${existing.id}' belongs to another organization.`, 'id');
    await exec.updateTable('ad_accounts').set({ name: input.name, currency: input.currency }).where('id', '=', existing.id).execute();
    return { ...existing, name: input.name, currency: input.currency };
  }
  const row = { id: input.id ?? newId('adacct', ctx.clock), organization_id: organizationId, name: input.name, currency: input.currency, created_at: ctx.clock.nowSeconds() };
  await exec.insertInto('ad_accounts').values(row).execute();
  return row;
}

export async function getAdAccountOrThrow(exec: Exec, id: string) {
  const row = await exec.selectFrom('ad_accounts').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('ad account', id);
  return row;
}

/** Adds an ads API key (scoped to one ad account). With `value`, re-declaring it changes nothing. */
export async function createAdsKey(ctx: Ctx, exec: Exec, adAccountId: string, input: { name: string; value?: string }) {
  await getAdAccountOrThrow(exec, adAccountId);
  const value = input.value ?? newSecret('sk-ads-');
  const hash = hashSecret(value);
  const existing = await exec.selectFrom('ads_api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();
  if (existing) {
    if (existing.ad_account_id !== adAccountId) throw invalid('That key value is already used by another ad account.', 'value');
    return { id: existing.id, object: 'ads_api_key', ad_account_id: adAccountId, name: existing.name, redacted_value: existing.redacted, created_at: existing.created_at };
  }
  const row = { id: newId('adskey', ctx.clock), ad_account_id: adAccountId, name: input.name, hash, redacted: redactSecret(value), created_at: ctx.clock.nowSeconds() };
  await exec.insertInto('ads_api_keys').values(row).execute();
  return { id: row.id, object: 'ads_api_key', ad_account_id: adAccountId, name: row.name, redacted_value: row.redacted, created_at: row.created_at, value };
}

export async function listAdsKeys(exec: Exec, adAccountId: string) {
  const rows = await exec.selectFrom('ads_api_keys').selectAll().where('ad_account_id', '=', adAccountId).orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, object: 'ads_api_key', ad_account_id: r.ad_account_id, name: r.name, redacted_value: r.redacted, created_at: r.created_at }));
}

const adsKeyByHash = precompiled(['hash'], (db, a: { hash: string }) => db.selectFrom('ads_api_keys').select(['id', 'ad_account_id']).where('hash', '=', a.hash));

export async function resolveAdsKey(exec: Exec, token: string): Promise<AdsPrincipal | null> {
  const [row] = await adsKeyByHash(exec, { hash: hashSecret(token) });
  return row ? { kind: 'ads', adAccountId: row.ad_account_id, credentialId: row.id } : null;
}

async function findByIdOrName(exec: Exec, table: 'campaigns' | 'custom_audiences' | 'product_feeds', adAccountId: string, id: string | undefined, name: string) {
  let q = exec.selectFrom(table).select(['id', 'ad_account_id']);
  q = id ? q.where('id', '=', id) : q.where('ad_account_id', '=', adAccountId).where('name', '=', name);
  const row = await q.executeTakeFirst();
  if (row && row.ad_account_id !== adAccountId) throw invalid(`'${row.id}' belongs to another ad account.`, 'id');
  return row;
}

export async function upsertFeed(ctx: Ctx, exec: Exec, adAccountId: string, input: FeedInput) {
  const existing = await findByIdOrName(exec, 'product_feeds', adAccountId, input.id, input.name);
  if (existing) {
    await exec.updateTable('product_feeds').set({ name: input.name }).where('id', '=', existing.id).execute();
    return existing.id;
  }
  const id = input.id ?? newId('feed', ctx.clock);
  await exec.insertInto('product_feeds').values({ id, ad_account_id: adAccountId, name: input.name, created_at: ctx.clock.nowSeconds() }).execute();
  return id;
}

export async function upsertCampaign(ctx: Ctx, exec: Exec, adAccountId: string, input: CampaignInput) {
  if (input.product_feed_id) {
    const feed = await exec.selectFrom('product_feeds').select('id').where('id', '=', input.product_feed_id).where('ad_account_id', '=', adAccountId).executeTakeFirst();
    if (!feed) throw invalid(`No product feed '${input.product_feed_id}' in ad account '${adAccountId}'.`, 'product_feed_id');
  }
  const values = { name: input.name, bidding_type: input.bidding_type, product_feed_id: input.product_feed_id ?? null };
  const existing = await findByIdOrName(exec, 'campaigns', adAccountId, input.id, input.name);
  if (existing) {
    await exec.updateTable('campaigns').set(values).where('id', '=', existing.id).execute();
    return existing.id;
  }
  const id = input.id ?? newId('cmp', ctx.clock);
  await exec.insertInto('campaigns').values({ id, ad_account_id: adAccountId, ...values, created_at: ctx.clock.nowSeconds() }).execute();
  return id;
}

export async function upsertAudience(ctx: Ctx, exec: Exec, adAccountId: string, input: AudienceInput) {
  const values = {
    name: input.name,
    status: input.status ?? 'ready',
    size_range: input.size_range ?? null,
    bid_multiplier_eligible: input.bid_multiplier_eligible ? 1 : 0,
    exclusion_eligible: input.exclusion_eligible ?? true ? 1 : 0,
  };
  const existing = await findByIdOrName(exec, 'custom_audiences', adAccountId, input.id, input.name);
  if (existing) {
    await exec.updateTable('custom_audiences').set(values).where('id', '=', existing.id).execute();
    return existing.id;
  }
  const id = input.id ?? newId('aud', ctx.clock);
  await exec.insertInto('custom_audiences').values({ id, ad_account_id: adAccountId, ...values, created_at: ctx.clock.nowSeconds() }).execute();
  return id;
}
