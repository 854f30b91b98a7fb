import type { Selectable } from 'kysely';
import { paginate, type ListParams } from '../core/pagination.js';
import type { DB } from '../store/schema.js';
import { precompiled, type Exec } from '../store/db.js';

export type AdGroupRow = Selectable<DB['ad_groups']>;
export type CampaignRow = Selectable<DB['campaigns']>;
export type AudienceRow = Selectable<DB['custom_audiences']>;

export const getAdAccount = (exec: Exec, id: string) => exec.selectFrom('ad_accounts').selectAll().where('id', '=', id).executeTakeFirst();

const campaignById = precompiled((db) => db.selectFrom('campaigns').selectAll().where('id', '=', '').where('ad_account_id', '=', ''));
export const getCampaign = async (exec: Exec, adAccountId: string, id: string) => (await campaignById(exec, [id, adAccountId]))[0];

export const getAudience = (exec: Exec, adAccountId: string, id: string) =>
  exec.selectFrom('custom_audiences').selectAll().where('id', '=', id).where('ad_account_id', '=', adAccountId).executeTakeFirst();

const adGroupById = precompiled((db) => db.selectFrom('ad_groups').selectAll().where('id', '=', '').where('ad_account_id', '=', ''));
export const getAdGroup = async (exec: Exec, adAccountId: string, id: string) => (await adGroupById(exec, [id, adAccountId]))[0];

export const insertAdGroup = (exec: Exec, row: AdGroupRow) => exec.insertInto('ad_groups').values(row).execute();

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
    })
    .where('id', '=', row.id)
    .execute();

export function listAdGroups<T>(exec: Exec, adAccountId: string, campaignId: string, params: ListParams, map: (r: AdGroupRow) => T) {
  const q = exec.selectFrom('ad_groups').selectAll().where('ad_account_id', '=', adAccountId).where('campaign_id', '=', campaignId);
  return paginate(q, 'id', params, { defaultLimit: 20, maxLimit: 500, map });
}

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
