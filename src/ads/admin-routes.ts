import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Ctx } from '../core/module.js';
import { getOrganization } from '../identity/service.js';
import * as accounts from './accounts.js';
import { AdsKeyConfig, AudienceConfig, CampaignConfig, FeedConfig } from './schemas.js';
import * as store from './store.js';

const CreateAdAccount = Type.Object(
  { id: Type.Optional(Type.String({ pattern: '^adacct_[A-Za-z0-9_-]+$' })), name: Type.String({ minLength: 1, maxLength: 200 }), currency: Type.String({ pattern: '^[A-Z]{3}$' }) },
  { additionalProperties: false },
);

/** Control-plane routes for ad accounts and what the ads API reads (campaigns, audiences, feeds, keys). */
export function adsAdminRoutes(app: FastifyInstance, ctx: Ctx) {
  const db = ctx.store.db;
  const tags = ['admin: ads'];
  const P = Type.Object({ ad_account_id: Type.String() });
  const all = { limit: 500 } as const;

  app.get('/organizations/:org_id/ad_accounts', { schema: { tags, params: Type.Object({ org_id: Type.String() }) } }, async (req) => {
    const org = await getOrganization(db, (req.params as any).org_id);
    const data = await db.selectFrom('ad_accounts').selectAll().where('organization_id', '=', org.id).orderBy('id').execute();
    return { object: 'list', data: data.map((a) => ({ object: 'ad_account', ...a })), first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false };
  });
  app.post('/organizations/:org_id/ad_accounts', { schema: { tags, params: Type.Object({ org_id: Type.String() }), body: CreateAdAccount } }, async (req, reply) => {
    const org = await getOrganization(db, (req.params as any).org_id);
    reply.code(201);
    return { object: 'ad_account', ...(await accounts.upsertAdAccount(ctx, db, org.id, req.body as any)) };
  });
  app.get('/ad_accounts/:ad_account_id', { schema: { tags, params: P } }, async (req) => ({
    object: 'ad_account',
    ...(await accounts.getAdAccountOrThrow(db, (req.params as any).ad_account_id)),
  }));
  app.get('/ad_accounts/:ad_account_id/api_keys', { schema: { tags, params: P } }, async (req) => {
    const data = await accounts.listAdsKeys(db, (await accounts.getAdAccountOrThrow(db, (req.params as any).ad_account_id)).id);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false };
  });
  app.post('/ad_accounts/:ad_account_id/api_keys', { schema: { tags, params: P, body: AdsKeyConfig } }, async (req, reply) => {
    reply.code(201);
    return accounts.createAdsKey(ctx, db, (req.params as any).ad_account_id, req.body as any);
  });

  const children = [
    ['campaigns', CampaignConfig, accounts.upsertCampaign, (id: string) => store.listCampaigns(db, id, all, accounts.campaignView)],
    ['custom_audiences', AudienceConfig, accounts.upsertAudience, (id: string) => store.listAudiences(db, id, undefined, all, accounts.audienceView)],
    ['product_feeds', FeedConfig, accounts.upsertFeed, (id: string) => store.listFeeds(db, id, all, accounts.feedView)],
  ] as const;
  for (const [name, body, upsert, list] of children) {
    app.get(`/ad_accounts/:ad_account_id/${name}`, { schema: { tags, params: P } }, async (req) => {
      const acct = await accounts.getAdAccountOrThrow(db, (req.params as any).ad_account_id);
      return list(acct.id);
    });
    app.post(`/ad_accounts/:ad_account_id/${name}`, { schema: { tags, params: P, body } }, async (req, reply) => {
      const acct = await accounts.getAdAccountOrThrow(db, (req.params as any).ad_account_id);
      const id = await upsert(ctx, db, acct.id, req.body as any);
      reply.code(201);
      const page = await list(acct.id);
      return page.data.find((x) => x.id === id);
    });
  }
}
