import type { Ctx } from '../core/module.js';
import { ApiError, invalid, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { ListParams } from '../core/pagination.js';
import { toJson, type Exec } from '../store/db.js';
import { groupStatement, type GroupCommit } from '../store/group-commit.js';
import { adGroupJson, withJson } from './documents.js';
import { maxBidMicros, withOverrides, type BiddingType, type MaxBidTable } from './max-bids.js';
import {
  NUMERIC_FILTER_FIELDS,
  type BiddingConfigT,
  type CreateAdGroupInput,
  type ProductSetT,
  type UpdateAdGroupInput,
} from './schemas.js';
import * as store from './store.js';

export type AdGroupStatus = 'active' | 'paused' | 'archived';

declare module '../core/module.js' {
  interface Services {
    ads: AdsService;
  }
}

/** Per-instance state of the ads area (`ctx.services.ads`). */
export interface AdsService {
  /** The max bid table in force (the config file may override the platform's). */
  maxBids: MaxBidTable;
  /** Inserts ad groups under group commit: a burst of creates shares one statement. */
  inserts: GroupCommit<store.AdGroupRow>;
}

/** Builds the ads area's per-instance state. */
export function createAdsService(ctx: Ctx): AdsService {
  return {
    maxBids: withOverrides(undefined),
    inserts: groupStatement<store.AdGroupRow>(() => ctx.store.db, store.insertAdGroupsStatement),
  };
}

/** The billing event each campaign bidding type bills on; conversion (oCPC) campaigns bill clicks with a CPA bid. */
const BILLING_EVENT: Record<BiddingType, 'impression' | 'click'> = { impressions: 'impression', clicks: 'click', conversions: 'click' };

/** The characters of `s` as the spec counts them (code points: a surrogate pair is one), without an array of them. */
function characters(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

function checkName(name: string) {
  const n = characters(name);
  if (n < 3 || n > 1000) throw invalid(`'name' must be 3 to 1000 characters (got ${n}).`, 'name', 'invalid_name');
  if (!/\S/u.test(name)) throw invalid("'name' must contain a non-space character.", 'name', 'invalid_name');
}

/** The bid rules; a promise only when audiences must be read (bid multipliers), so the common create waits for nothing here. */
function checkBidding(
  exec: Exec,
  ctx: Ctx,
  adAccountId: string,
  campaign: store.CampaignWithCurrency,
  bc: BiddingConfigT,
): Promise<void> | undefined {
  const type = campaign.bidding_type as BiddingType;
  const currency = campaign.currency;
  const expected = BILLING_EVENT[type];
  if (bc.billing_event_type !== expected) {
    throw invalid(
      `'bidding_config.billing_event_type' must be '${expected}' for a campaign bidding on ${type}${type === 'conversions' ? ' (oCPC: the bid is a CPA bid billed per click)' : ''}.`,
      'bidding_config.billing_event_type',
      'billing_event_type_mismatch',
    );
  }
  const max = maxBidMicros(ctx.services.ads.maxBids, currency, type);
  if (bc.max_bid_micros < 1 || bc.max_bid_micros > max) {
    throw invalid(
      `'bidding_config.max_bid_micros' must be from 1 to ${max} for ${type} campaigns in ${currency} (got ${bc.max_bid_micros}).`,
      'bidding_config.max_bid_micros',
      'max_bid_out_of_range',
    );
  }
  const multipliers = bc.custom_audience_bid_multipliers;
  return multipliers?.length ? checkMultipliers(exec, adAccountId, multipliers) : undefined;
}

async function checkMultipliers(
  exec: Exec,
  adAccountId: string,
  multipliers: NonNullable<BiddingConfigT['custom_audience_bid_multipliers']>,
) {
  const seen = new Set<string>();
  for (const [i, m] of multipliers.entries()) {
    const path = `bidding_config.custom_audience_bid_multipliers[${i}]`;
    if (m.bid_multiplier_micros < 100_000 || m.bid_multiplier_micros > 10_000_000) {
      throw invalid(
        `'${path}.bid_multiplier_micros' must be from 100000 to 10000000 (a multiplier of 0.1 to 10); got ${m.bid_multiplier_micros}.`,
        `${path}.bid_multiplier_micros`,
        'bid_multiplier_out_of_range',
      );
    }
    if (seen.has(m.custom_audience_id))
      throw invalid(
        `'${path}.custom_audience_id': audience '${m.custom_audience_id}' appears twice.`,
        `${path}.custom_audience_id`,
        'duplicate_audience',
      );
    seen.add(m.custom_audience_id);
    const audience = await store.getAudience(exec, adAccountId, m.custom_audience_id);
    if (!audience)
      throw invalid(
        `'${path}.custom_audience_id': no custom audience '${m.custom_audience_id}' in this ad account.`,
        `${path}.custom_audience_id`,
        'audience_not_found',
      );
    if (!audience.bid_multiplier_eligible) {
      throw invalid(
        `'${path}.custom_audience_id': audience '${audience.id}' is not eligible for bid multipliers; use one returned by GET /custom_audiences?intended_use=bid_multiplier.`,
        `${path}.custom_audience_id`,
        'audience_not_eligible',
      );
    }
  }
}

function checkProductSet(campaign: store.CampaignRow, ps: ProductSetT) {
  if (!campaign.product_feed_id) {
    throw invalid(
      `'product_set' is only for product-feed campaigns; campaign '${campaign.id}' has no product feed.`,
      'product_set',
      'no_product_feed',
    );
  }
  if (ps.product_feed_id !== campaign.product_feed_id) {
    throw invalid(
      `'product_set.product_feed_id' must be the campaign's product feed '${campaign.product_feed_id}' (got '${ps.product_feed_id}').`,
      'product_set.product_feed_id',
      'product_feed_mismatch',
    );
  }
  const fields = new Set<string>();
  for (const [i, f] of (ps.filters ?? []).entries()) {
    const path = `product_set.filters[${i}]`;
    if (fields.has(f.field))
      throw invalid(`'${path}.field': '${f.field}' appears more than once in the product set.`, `${path}.field`, 'duplicate_filter_field');
    fields.add(f.field);
    if (f.operator !== 'in') {
      if (!NUMERIC_FILTER_FIELDS.includes(f.field)) {
        throw invalid(
          `'${path}.operator': '${f.operator}' is only for price or star_rating; use 'in' for '${f.field}'.`,
          `${path}.operator`,
          'invalid_operator',
        );
      }
      for (const [j, v] of f.values.entries()) {
        if (!/^\s*-?(\d+(\.\d*)?|\.\d+)\s*$/.test(v))
          throw invalid(
            `'${path}.values[${j}]' must be a number sent as a string for '${f.operator}' (got '${v}').`,
            `${path}.values[${j}]`,
            'invalid_number',
          );
      }
    }
  }
}

async function loadCampaign(exec: Exec, adAccountId: string, campaignId: string, param: string | null) {
  const campaign = await store.getCampaign(exec, adAccountId, campaignId);
  if (!campaign) throw notFound('campaign', campaignId, param);
  return campaign;
}

/** Creates an ad group after checking every rule of the spec; answers with its JSON text. */
export async function createAdGroup(ctx: Ctx, adAccountId: string, input: CreateAdGroupInput): Promise<string> {
  const db = ctx.store.db;
  // Read at once where the store reads synchronously (SQLite): no promise to wait for before the checks.
  const found = store.getCampaignNow(db, adAccountId, input.campaign_id);
  const campaign = found instanceof Promise ? await found : found;
  if (!campaign) throw notFound('campaign', input.campaign_id, 'campaign_id');
  checkName(input.name);
  const audiences = checkBidding(db, ctx, adAccountId, campaign, input.bidding_config);
  if (audiences) await audiences;
  let productSet: ProductSetT | undefined = input.product_set;
  if (productSet) checkProductSet(campaign, productSet);
  else if (campaign.product_feed_id) productSet = { product_feed_id: campaign.product_feed_id, filters: [] };
  const now = ctx.clock.nowSeconds();
  const row: store.AdGroupRow = {
    id: newId('adgrp', ctx.clock),
    ad_account_id: adAccountId,
    campaign_id: campaign.id,
    name: input.name,
    description: input.description ?? null,
    context_hints: JSON.stringify(input.context_hints ?? []),
    status: input.status,
    bidding_config: JSON.stringify(input.bidding_config),
    product_set: toJson(productSet),
    created_at: now,
    updated_at: now,
    json: '',
  };
  // The document written into the row itself (withJson would copy the row).
  row.json = adGroupJson(row);
  await ctx.services.ads.inserts(row);
  return row.json;
}

/** The ad group's JSON text; without a promise where the store reads synchronously (then it may throw). */
export function getAdGroup(ctx: Ctx, adAccountId: string, id: string): string | Promise<string> {
  const found = (json: string | undefined): string => {
    if (json === undefined) throw notFound('ad group', id);
    return json;
  };
  const json = store.getAdGroupJson(ctx.store.db, adAccountId, id);
  return json instanceof Promise ? json.then(found) : found(json);
}

async function loadAdGroup(exec: Exec, adAccountId: string, id: string) {
  const row = await store.getAdGroup(exec, adAccountId, id);
  if (!row) throw notFound('ad group', id);
  return row;
}

const archivedError = (id: string) =>
  new ApiError(
    'invalid_request_error',
    `Ad group '${id}' is archived; archiving is not reversible and an archived ad group cannot be changed.`,
    {
      code: 'ad_group_archived',
      param: null,
    },
  );

/**
 * Updates an ad group. Archived is one-way: an archived ad group refuses every change (as trusted ads
 * APIs refuse changes to removed resources); archiving it again is a no-op. The response omits
 * `product_set`, as the real platform may — retrieve the ad group to read it.
 */
export async function updateAdGroup(ctx: Ctx, adAccountId: string, id: string, input: UpdateAdGroupInput): Promise<string> {
  return ctx.store.db.transaction().execute(async (tx) => {
    const row = await loadAdGroup(tx, adAccountId, id);
    if (row.status === 'archived') {
      const onlyArchive = Object.keys(input).every((k) => k === 'status') && input.status === 'archived';
      if (!onlyArchive) throw archivedError(id);
      return adGroupJson(row, false);
    }
    const campaign = await loadCampaign(tx, adAccountId, row.campaign_id, null);
    if (input.name !== undefined) checkName(input.name);
    if (input.bidding_config) await checkBidding(tx, ctx, adAccountId, campaign, input.bidding_config);
    if (input.product_set) checkProductSet(campaign, input.product_set);
    const next = withJson({
      ...row,
      name: input.name ?? row.name,
      description: input.description === undefined ? row.description : input.description,
      context_hints: input.context_hints ? JSON.stringify(input.context_hints) : row.context_hints,
      status: input.status ?? row.status,
      bidding_config: input.bidding_config ? JSON.stringify(input.bidding_config) : row.bidding_config,
      product_set: input.product_set ? JSON.stringify(input.product_set) : row.product_set,
      updated_at: ctx.clock.nowSeconds(),
    });
    await store.updateAdGroup(tx, next);
    return adGroupJson(next, false);
  });
}

/** The action endpoints: activate and pause move between active and paused; archive is final. */
export async function transition(ctx: Ctx, adAccountId: string, id: string, to: AdGroupStatus): Promise<string> {
  return ctx.store.db.transaction().execute(async (tx) => {
    const row = await loadAdGroup(tx, adAccountId, id);
    if (row.status === 'archived') {
      if (to === 'archived') return row.json;
      throw archivedError(id);
    }
    if (row.status === to) return row.json;
    const next = withJson({ ...row, status: to, updated_at: ctx.clock.nowSeconds() });
    await store.updateAdGroup(tx, next);
    return next.json;
  });
}

/** A page of a campaign's ad groups as JSON text; an unknown campaign is a 404 (checked only when the page is empty). */
export function listAdGroups(ctx: Ctx, adAccountId: string, campaignId: string, params: ListParams): string | Promise<string> {
  const written = (page: { json: string; size: number }): string | Promise<string> =>
    page.size === 0 ? loadCampaign(ctx.store.db, adAccountId, campaignId, 'campaign_id').then(() => page.json) : page.json;
  const page = store.listAdGroupsJson(ctx.store.db, adAccountId, campaignId, params);
  return page instanceof Promise ? page.then(written) : written(page);
}
