import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Ctx } from '../core/module.js';
import { notFound } from '../core/errors.js';
import { audienceView, campaignView, feedView } from './accounts.js';
import * as svc from './service.js';
import * as store from './store.js';
import { CreateAdGroupBody, IdParams, ListAdGroupsQuery, ListAudiencesQuery, UpdateAdGroupBody } from './schemas.js';

const Page = Type.Object(
  {
    limit: Type.Optional(Type.Integer()),
    after: Type.Optional(Type.String({ maxLength: 200 })),
    before: Type.Optional(Type.String({ maxLength: 200 })),
    order: Type.Optional(Type.Enum(['asc', 'desc'])),
  },
  { additionalProperties: false },
);

/** Ad groups leave the service as JSON text (ads/documents.ts): answered as is. */
function sendJson(reply: FastifyReply, json: string): string {
  reply.type('application/json; charset=utf-8');
  return json;
}

/**
 * The ads API under `/ads/v1`: ad groups, and read access to campaigns, custom audiences and product feeds.
 * The front door authenticates every request with an ads key first (`ctx.auth.protect` in the module).
 */
export function adsRoutes(app: FastifyInstance, ctx: Ctx) {
  const account = (req: FastifyRequest) => ctx.auth.adAccountOf(req);
  const tags = ['ads'];
  const db = ctx.store.db;

  app.get('/ads/v1/ad_groups', { schema: { tags, querystring: ListAdGroupsQuery } }, async (req, reply) => {
    const { campaign_id, ...page } = req.query as any;
    return sendJson(reply, await svc.listAdGroups(ctx, account(req), campaign_id, page));
  });
  app.post('/ads/v1/ad_groups', { schema: { tags, body: CreateAdGroupBody } }, async (req, reply) => sendJson(reply, await svc.createAdGroup(ctx, account(req), req.body as any)));
  app.get('/ads/v1/ad_groups/:ad_group_id', { schema: { tags, params: IdParams } }, async (req, reply) =>
    sendJson(reply, await svc.getAdGroup(ctx, account(req), (req.params as any).ad_group_id)),
  );
  app.post('/ads/v1/ad_groups/:ad_group_id', { schema: { tags, params: IdParams, body: UpdateAdGroupBody } }, async (req, reply) =>
    sendJson(reply, await svc.updateAdGroup(ctx, account(req), (req.params as any).ad_group_id, req.body as any)),
  );
  for (const [action, status] of [['activate', 'active'], ['pause', 'paused'], ['archive', 'archived']] as const) {
    app.post(`/ads/v1/ad_groups/:ad_group_id/${action}`, { schema: { tags, params: IdParams } }, async (req, reply) =>
      sendJson(reply, await svc.transition(ctx, account(req), (req.params as any).ad_group_id, status)),
    );
  }

  app.get('/ads/v1/campaigns', { schema: { tags, querystring: Page } }, async (req) => store.listCampaigns(db, account(req), req.query as any, campaignView));
  app.get('/ads/v1/campaigns/:id', { schema: { tags, params: Type.Object({ id: Type.String() }) } }, async (req) => {
    const id = (req.params as any).id;
    const row = await store.getCampaign(db, account(req), id);
    if (!row) throw notFound('campaign', id);
    return campaignView(row);
  });
  app.get('/ads/v1/custom_audiences', { schema: { tags, querystring: ListAudiencesQuery } }, async (req) => {
    const { intended_use, ...page } = req.query as any;
    return store.listAudiences(db, account(req), intended_use, page, audienceView);
  });
  app.get('/ads/v1/custom_audiences/:id', { schema: { tags, params: Type.Object({ id: Type.String() }) } }, async (req) => {
    const id = (req.params as any).id;
    const row = await store.getAudience(db, account(req), id);
    if (!row) throw notFound('custom audience', id);
    return audienceView(row);
  });
  app.get('/ads/v1/product_feeds', { schema: { tags, querystring: Page } }, async (req) => store.listFeeds(db, account(req), req.query as any, feedView));
  app.get('/ads/v1/product_feeds/:id', { schema: { tags, params: Type.Object({ id: Type.String() }) } }, async (req) => {
    const id = (req.params as any).id;
    const row = await db.selectFrom('product_feeds').selectAll().where('id', '=', id).where('ad_account_id', '=', account(req)).executeTakeFirst();
    if (!row) throw notFound('product feed', id);
    return feedView(row);
  });
}
