import type { Selectable } from 'kysely';
import { paginate, precompiledPage, type ListParams } from '../core/pagination.js';
import type { DB } from '../store/schema.js';
import { precompiled, precompiledColumn, type Exec } from '../store/db.js';

export type AdGroupRow = Selectable<DB['ad_groups']>;
export type CampaignRow = Selectable<DB['campaigns']>;
export type AudienceRow = Selectable<DB['custom_audiences']>;

/** A campaign of the ad account, with the account's currency (what the bid rules need). */
const campaignById = precompiled(['id', 'adAccountId'], (db, a: { id: string; adAccountId: string }) =>
  db
    .selectFrom('campaigns')
    .innerJoin('ad_accounts', 'ad_accounts.id', 'campaigns.ad_account_id')
    .selectAll('campaigns')
    .select('ad_accounts.currency')
    .where('campaigns.id', '=', a.id)
    .where('campaigns.ad_account_id', '=', a.adAccountId),
);
export type CampaignWithCurrency = CampaignRow & { currency: string };
export const getCampaign = async (exec: Exec, adAccountId: string, id: string): Promise<CampaignWithCurrency | undefined> => (await campaignById(exec, { id, adAccountId }))[0];

export const getAudience = (exec: Exec, adAccountId: string, id: string) =>
  exec.selectFrom('custom_audiences').selectAll().where('id', '=', id).where('ad_account_id', '=', adAccountId).executeTakeFirst();

const adGroupById = precompiled(['id', 'adAccountId'], (db, a: { id: string; adAccountId: string }) => db.selectFrom('ad_groups').selectAll().where('id', '=', a.id).where('ad_account_id', '=', a.adAccountId));
export const getAdGroup = async (exec: Exec, adAccountId: string, id: string) => (await adGroupById(exec, { id, adAccountId }))[0];

const adGroupJsonById = precompiledColumn(['id', 'adAccountId'], (db, a: { id: string; adAccountId: string }) =>
  db.selectFrom('ad_groups').select('json').where('id', '=', a.id).where('ad_account_id', '=', a.adAccountId),
);
/** The ad group as the API's JSON text (its stored document). */
export const getAdGroupJson = async (exec: Exec, adAccountId: string, id: string): Promise<string | undefined> => (await adGroupJsonById(exec, { id, adAccountId }))[0];

export const insertAdGroups = async (exec: Exec, rows: AdGroupRow[]) => void (await exec.insertInto('ad_groups').values(rows).execute());

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
/** A page of a campaign's ad groups, as the list's JSON text. */
export const listAdGroupsJson = (exec: Exec, adAccountId: string, campaignId: string, params: ListParams) => adGroupPage(exec, { adAccountId, campaignId }, params);

export function listCampaigns<T>(exec: Exec, adAccountId: string, params: ListParams, map: (r: CampaignRow) => T) {
  return paginate(exec.selectFrom('campaigns').selectAll().where('ad_account_id', '=', adAccountId), 'id', params, { defaultLimit: 20, maxLimit: 500, map });
}

export function listAudiences<T>(exec: Exec, adAccountId: string, intendedUse: string | undefined, params: ListParams, map: (r: AudienceRow) => T) {
  let q = exec.selectFrom('custom_audiences').selectAll().where('ad_account_id', '=', adAccountId);
  if (intendedUse === 'bid_multiplier') q = q.where('bid_multiplier_eligible', '=', 1);
  if (intendedUse === 'exclusion') q = q.where('exclusion_eligible', '=', 1);
  return paginate(q, 'id', params, { defaultLimit: 20, maxLimit: 500, map });
}

export function listFeeds<T>(exec: Exec, adAccountId: string, params: ListParams, map: (r: Selectable<DB['product_feeds']>) => T) {
  return paginate(exec.selectFrom('product_feeds').selectAll().where('ad_account_id', '=', adAccountId), 'id', params, { defaultLimit: 20, maxLimit: 500, map });
}
