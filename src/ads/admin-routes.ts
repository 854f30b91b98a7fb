import type { App, Ctx } from '../core/module.js';
import { wholeList as list } from '../core/pagination.js';
import { ListOf } from '../core/schemas.js';
import { getOrganization } from '../identity/service.js';
import * as accounts from './accounts.js';
import {
  AdAccountObject,
  AdAccountParams,
  AdsKeyConfig,
  AdsKeyObject,
  AudienceConfig,
  AudienceObject,
  CampaignConfig,
  CampaignObject,
  CreateAdAccountBody,
  FeedConfig,
  FeedObject,
  OrganizationParams,
} from './schemas.js';
import * as store from './store.js';

/** A whole list in one page (the control plane lists what an ad account holds, at most 500 of each). */
const all = { limit: 500 } as const;

/** Control-plane routes for ad accounts and what the ads API reads (campaigns, audiences, feeds, keys). */
export function adsAdminRoutes(app: App, ctx: Ctx) {
  const db = ctx.store.db;
  const tags = ['admin: ads'];
  const adAccount = async (id: string) => (await accounts.getAdAccountOrThrow(db, id)).id;

  app.get(
    '/organizations/:org_id/ad_accounts',
    { schema: { tags, params: OrganizationParams, response: { 200: ListOf(AdAccountObject) } } },
    async (req) => {
      const org = await getOrganization(db, req.params.org_id);
      return list((await store.listAdAccounts(db, org.id)).map(accounts.adAccountView));
    },
  );
  app.post(
    '/organizations/:org_id/ad_accounts',
    { schema: { tags, params: OrganizationParams, body: CreateAdAccountBody, response: { 201: AdAccountObject } } },
    async (req, reply) => {
      const org = await getOrganization(db, req.params.org_id);
      const account = accounts.adAccountView(await accounts.upsertAdAccount(ctx, db, org.id, req.body));
      reply.code(201);
      return account;
    },
  );
  app.get('/ad_accounts/:ad_account_id', { schema: { tags, params: AdAccountParams, response: { 200: AdAccountObject } } }, async (req) =>
    accounts.adAccountView(await accounts.getAdAccountOrThrow(db, req.params.ad_account_id)),
  );
  app.get(
    '/ad_accounts/:ad_account_id/api_keys',
    { schema: { tags, params: AdAccountParams, response: { 200: ListOf(AdsKeyObject) } } },
    async (req) => list(await accounts.listAdsKeys(db, await adAccount(req.params.ad_account_id))),
  );
  app.post(
    '/ad_accounts/:ad_account_id/api_keys',
    { schema: { tags, params: AdAccountParams, body: AdsKeyConfig, response: { 201: AdsKeyObject } } },
    async (req, reply) => {
      const key = await accounts.createAdsKey(ctx, db, req.params.ad_account_id, req.body);
      reply.code(201);
      return key;
    },
  );

  // Campaigns, custom audiences and product feeds: list, and create or update (matched by id, else name).
  const listCampaigns = (id: string) => store.listCampaigns(db, id, all, accounts.campaignView);
  const listAudiences = (id: string) => store.listAudiences(db, id, undefined, all, accounts.audienceView);
  const listFeeds = (id: string) => store.listFeeds(db, id, all, accounts.feedView);
  /** The object just written, as its list shows it. */
  const written = async <T extends { id: string }>(page: Promise<{ data: T[] }>, id: string) => (await page).data.find((x) => x.id === id)!;

  app.get(
    '/ad_accounts/:ad_account_id/campaigns',
    { schema: { tags, params: AdAccountParams, response: { 200: ListOf(CampaignObject) } } },
    async (req) => listCampaigns(await adAccount(req.params.ad_account_id)),
  );
  app.post(
    '/ad_accounts/:ad_account_id/campaigns',
    { schema: { tags, params: AdAccountParams, body: CampaignConfig, response: { 201: CampaignObject } } },
    async (req, reply) => {
      const acct = await adAccount(req.params.ad_account_id);
      const id = await accounts.upsertCampaign(ctx, db, acct, req.body);
      reply.code(201);
      return written(listCampaigns(acct), id);
    },
  );
  app.get(
    '/ad_accounts/:ad_account_id/custom_audiences',
    { schema: { tags, params: AdAccountParams, response: { 200: ListOf(AudienceObject) } } },
    async (req) => listAudiences(await adAccount(req.params.ad_account_id)),
  );
  app.post(
    '/ad_accounts/:ad_account_id/custom_audiences',
    { schema: { tags, params: AdAccountParams, body: AudienceConfig, response: { 201: AudienceObject } } },
    async (req, reply) => {
      const acct = await adAccount(req.params.ad_account_id);
      const id = await accounts.upsertAudience(ctx, db, acct, req.body);
      reply.code(201);
      return written(listAudiences(acct), id);
    },
  );
  app.get(
    '/ad_accounts/:ad_account_id/product_feeds',
    { schema: { tags, params: AdAccountParams, response: { 200: ListOf(FeedObject) } } },
    async (req) => listFeeds(await adAccount(req.params.ad_account_id)),
  );
  app.post(
    '/ad_accounts/:ad_account_id/product_feeds',
    { schema: { tags, params: AdAccountParams, body: FeedConfig, response: { 201: FeedObject } } },
    async (req, reply) => {
      const acct = await adAccount(req.params.ad_account_id);
      const id = await accounts.upsertFeed(ctx, db, acct, req.body);
      reply.code(201);
      return written(listFeeds(acct), id);
    },
  );
}
