import type { Selectable } from 'kysely';
import { paginate, precompiledPage, type ListParams } from '../core/pagination.js';
import type { DB } from '../store/schema.js';
import { precompiled, precompiledColumnNow, precompiledNow, precompiledRows, type Exec } from '../store/db.js';

export type AdGroupRow = Selectable<DB['ad_groups']>;
export type CampaignRow = Selectable<DB['campaigns']>;
export type AudienceRow = Selectable<DB['custom_audiences']>;
export type FeedRow = Selectable<DB['product_feeds']>;
export type AdAccountRow = Selectable<DB['ad_accounts']>;
export type AdsKeyRow = Selectable<DB['ads_api_keys']>;

/** A campaign of the ad account, with the account's currency (what the bid rules need). */
const campaignById = precompiledNow(['id', 'adAccountId'], (db, a: { id: string; adAccountId: string }) =>
  db
    .selectFrom('campaigns')
    .innerJoin('ad_accounts', 'ad_accounts.id', 'campaigns.ad_account_id')
    .selectAll('campaigns')
    .select('ad_accounts.currency')
    .where('campaigns.id', '=', a.id)
    .where('campaigns.ad_account_id', '=', a.adAccountId),
);
export type CampaignWithCurrency = CampaignRow & { currency: string };
export const getCampaign = async (exec: Exec, adAccountId: string, id: string): Promise<CampaignWithCurrency | undefined> =>
  (await campaignById(exec, { id, adAccountId }))[0];
const firstCampaign = (rows: CampaignWithCurrency[]): CampaignWithCurrency | undefined => rows[0];
/** `getCampaign` without a promise where the store reads synchronously (SQLite); then it may throw. */
export const getCampaignNow = (
  exec: Exec,
  adAccountId: string,
  id: string,
): CampaignWithCurrency | undefined | Promise<CampaignWithCurrency | undefined> => {
  const rows = campaignById(exec, { id, adAccountId });
  return rows instanceof Promise ? rows.then(firstCampaign) : firstCampaign(rows);
};

export const getAudience = (exec: Exec, adAccountId: string, id: string) =>
  exec.selectFrom('custom_audiences').selectAll().where('id', '=', id).where('ad_account_id', '=', adAccountId).executeTakeFirst();

const adGroupById = precompiled(['id', 'adAccountId'], (db, a: { id: string; adAccountId: string }) =>
  db.selectFrom('ad_groups').selectAll().where('id', '=', a.id).where('ad_account_id', '=', a.adAccountId),
);
export const getAdGroup = async (exec: Exec, adAccountId: string, id: string) => (await adGroupById(exec, { id, adAccountId }))[0];

const adGroupJsonById = precompiledColumnNow(['id', 'adAccountId'], (db, a: { id: string; adAccountId: string }) =>
  db.selectFrom('ad_groups').select('json').where('id', '=', a.id).where('ad_account_id', '=', a.adAccountId),
);
const first = (rows: readonly string[]): string | undefined => rows[0];
/**
 * The ad group as the API's JSON text (its stored document); without a promise where the store reads
 * synchronously (SQLite), and then it may throw.
 */
export const getAdGroupJson = (exec: Exec, adAccountId: string, id: string): string | undefined | Promise<string | undefined> => {
  const rows = adGroupJsonById(exec, { id, adAccountId });
  return rows instanceof Promise ? rows.then(first) : first(rows as readonly string[]);
};

export const insertAdGroups = async (exec: Exec, rows: AdGroupRow[]) => void (await exec.insertInto('ad_groups').values(rows).execute());
/** Every column of an ad group row: the insert names each (precompiledRows). */
const AD_GROUP_COLUMNS = [
  'id',
  'ad_account_id',
  'campaign_id',
  'name',
  'description',
  'context_hints',
  'status',
  'bidding_config',
  'product_set',
  'created_at',
  'updated_at',
  'json',
] as const satisfies readonly (keyof AdGroupRow)[];
/**
 * The one statement that inserts these ad groups (group commit runs it alone, store/group-commit.ts),
 * compiled once per number of rows.
 */
export const insertAdGroupsStatement = precompiledRows<AdGroupRow>(AD_GROUP_COLUMNS, (db, rows) => db.insertInto('ad_groups').values(rows));

export const updateAdGroup = (exec: Exec, row: AdGroupRow) =>
  exec
    .updateTable('ad_groups')
    .set({
      name: row.name,
      description: row.description,
      context_hints: row.context_hints,
      status: row.status,
      bidding_config: row.bidding_config,
      product_set: row.product_set,
      updated_at: row.updated_at,
      json: row.json,
    })
    .where('id', '=', row.id)
    .execute();

const adGroupPage = precompiledPage(
  ['adAccountId', 'campaignId'],
  (db, a: { adAccountId: string; campaignId: string }) =>
    db.selectFrom('ad_groups').select('json').where('ad_account_id', '=', a.adAccountId).where('campaign_id', '=', a.campaignId),
  { defaultLimit: 20, maxLimit: 500 },
);
/** A page of a campaign's ad groups, as the list's JSON text; without a promise where the store reads synchronously. */
export const listAdGroupsJson = (exec: Exec, adAccountId: string, campaignId: string, params: ListParams) =>
  adGroupPage(exec, { adAccountId, campaignId, after: params.after, before: params.before }, params);

export function listCampaigns<T>(exec: Exec, adAccountId: string, params: ListParams, map: (r: CampaignRow) => T) {
  return paginate(exec.selectFrom('campaigns').selectAll().where('ad_account_id', '=', adAccountId), 'id', params, {
    defaultLimit: 20,
    maxLimit: 500,
    map,
  });
}

export function listAudiences<T>(
  exec: Exec,
  adAccountId: string,
  intendedUse: string | undefined,
  params: ListParams,
  map: (r: AudienceRow) => T,
) {
  let q = exec.selectFrom('custom_audiences').selectAll().where('ad_account_id', '=', adAccountId);
  if (intendedUse === 'bid_multiplier') q = q.where('bid_multiplier_eligible', '=', 1);
  if (intendedUse === 'exclusion') q = q.where('exclusion_eligible', '=', 1);
  return paginate(q, 'id', params, { defaultLimit: 20, maxLimit: 500, map });
}

export function listFeeds<T>(exec: Exec, adAccountId: string, params: ListParams, map: (r: FeedRow) => T) {
  return paginate(exec.selectFrom('product_feeds').selectAll().where('ad_account_id', '=', adAccountId), 'id', params, {
    defaultLimit: 20,
    maxLimit: 500,
    map,
  });
}

export const getFeed = (exec: Exec, adAccountId: string, id: string): Promise<FeedRow | undefined> =>
  exec.selectFrom('product_feeds').selectAll().where('id', '=', id).where('ad_account_id', '=', adAccountId).executeTakeFirst();

// Ad accounts and what hangs off them (accounts.ts holds their rules).

export const getAdAccount = (exec: Exec, id: string): Promise<AdAccountRow | undefined> =>
  exec.selectFrom('ad_accounts').selectAll().where('id', '=', id).executeTakeFirst();

export const findAdAccountByName = (exec: Exec, organizationId: string, name: string): Promise<AdAccountRow | undefined> =>
  exec.selectFrom('ad_accounts').selectAll().where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();

/** An organization's ad accounts, by id. */
export const listAdAccounts = (exec: Exec, organizationId: string): Promise<AdAccountRow[]> =>
  exec.selectFrom('ad_accounts').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute();

export const insertAdAccount = async (exec: Exec, row: AdAccountRow) => void (await exec.insertInto('ad_accounts').values(row).execute());

export const updateAdAccount = async (exec: Exec, id: string, values: { name: string; currency: string }) =>
  void (await exec.updateTable('ad_accounts').set(values).where('id', '=', id).execute());

export const findAdsKeyByHash = (exec: Exec, hash: string): Promise<AdsKeyRow | undefined> =>
  exec.selectFrom('ads_api_keys').selectAll().where('hash', '=', hash).executeTakeFirst();

export const insertAdsKey = async (exec: Exec, row: AdsKeyRow) => void (await exec.insertInto('ads_api_keys').values(row).execute());

export const listAdsKeys = (exec: Exec, adAccountId: string): Promise<AdsKeyRow[]> =>
  exec.selectFrom('ads_api_keys').selectAll().where('ad_account_id', '=', adAccountId).orderBy('id').execute();

const adsKeyByHash = precompiled(['hash'], (db, a: { hash: string }) =>
  db.selectFrom('ads_api_keys').select(['id', 'ad_account_id']).where('hash', '=', a.hash),
);
/** The ads key with this hash (the hot path of every ads request: precompiled). */
export const resolveAdsKeyHash = async (exec: Exec, hash: string) => (await adsKeyByHash(exec, { hash }))[0];

type AccountChild = 'campaigns' | 'custom_audiences' | 'product_feeds';

/** A campaign, audience or feed by id, or else by name within the ad account (config files match by name). */
export function findChild(
  exec: Exec,
  table: AccountChild,
  adAccountId: string,
  id: string | undefined,
  name: string,
): Promise<{ id: string; ad_account_id: string } | undefined> {
  const q = exec.selectFrom(table).select(['id', 'ad_account_id']);
  return (id ? q.where('id', '=', id) : q.where('ad_account_id', '=', adAccountId).where('name', '=', name)).executeTakeFirst();
}

export const insertFeed = async (exec: Exec, row: FeedRow) => void (await exec.insertInto('product_feeds').values(row).execute());
export const renameFeed = async (exec: Exec, id: string, name: string) =>
  void (await exec.updateTable('product_feeds').set({ name }).where('id', '=', id).execute());

type CampaignValues = Pick<CampaignRow, 'name' | 'bidding_type' | 'product_feed_id'>;
export const insertCampaign = async (exec: Exec, row: CampaignRow) => void (await exec.insertInto('campaigns').values(row).execute());
export const updateCampaign = async (exec: Exec, id: string, values: CampaignValues) =>
  void (await exec.updateTable('campaigns').set(values).where('id', '=', id).execute());

type AudienceValues = Pick<AudienceRow, 'name' | 'status' | 'size_range' | 'bid_multiplier_eligible' | 'exclusion_eligible'>;
export const insertAudience = async (exec: Exec, row: AudienceRow) =>
  void (await exec.insertInto('custom_audiences').values(row).execute());
export const updateAudience = async (exec: Exec, id: string, values: AudienceValues) =>
  void (await exec.updateTable('custom_audiences').set(values).where('id', '=', id).execute());
