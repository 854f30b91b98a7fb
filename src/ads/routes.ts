import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, Ctx } from '../core/module.js';
import { notFound } from '../core/errors.js';
import { ListOf } from '../core/schemas.js';
import { audienceView, campaignView, feedView } from './accounts.js';
import * as svc from './service.js';
import * as store from './store.js';
import {
  AdGroupObject,
  AudienceObject,
  CampaignObject,
  CreateAdGroupBody,
  FeedObject,
  IdOnlyParams,
  IdParams,
  ListAdGroupsQuery,
  ListAudiencesQuery,
  Page,
  UpdateAdGroupBody,
} from './schemas.js';

/**
 * Ad groups leave the service as JSON text (ads/documents.ts): sent as is, past the serializer, so the hot
 * path builds nothing (the response schemas document this text). A handler hands the pending text here
 * and returns nothing: Fastify then waits for this send (no promise of the handler to follow).
 */
function answer(reply: FastifyReply, json: Promise<string>): void {
  json.then(
    (text) => void send(reply, text),
    (err) => void reply.send(err),
  );
}

const send = (reply: FastifyReply, text: string) => reply.type('application/json; charset=utf-8').send(text);

/**
 * `answer` for a read that may come back at once (SQLite's read connection): the text is sent within the
 * handler, with no turn of the microtask queue; a refusal it throws goes to the error handler as any.
 */
function answerNow(reply: FastifyReply, read: () => string | Promise<string>): void {
  let json: string | Promise<string>;
  try {
    json = read();
  } catch (err) {
    return void reply.send(err);
  }
  if (typeof json === 'string') send(reply, json);
  else answer(reply, json);
}

/**
 * The ads API under `/ads/v1`: ad groups, and read access to campaigns, custom audiences and product feeds.
 * The front door authenticates every request with an ads key first (`ctx.auth.protect` in the module).
 */
export function adsRoutes(app: App, ctx: Ctx) {
  const account = (req: FastifyRequest) => ctx.auth.adAccountOf(req);
  const tags = ['ads'];
  const db = ctx.store.db;
  const adGroup = { 200: AdGroupObject };

  app.get(
    '/ads/v1/ad_groups',
    { schema: { tags, querystring: ListAdGroupsQuery, response: { 200: ListOf(AdGroupObject) } } },
    (req, reply) => {
      // The query is the page's parameters as it is (the page reads only its own): a copy without
      // campaign_id (`...rest`) went through V8's slow path at every request.
      const query = req.query;
      answerNow(reply, () => svc.listAdGroups(ctx, account(req), query.campaign_id, query));
    },
  );
  app.post('/ads/v1/ad_groups', { schema: { tags, body: CreateAdGroupBody, response: adGroup } }, (req, reply) =>
    answer(reply, svc.createAdGroup(ctx, account(req), req.body)),
  );
  app.get('/ads/v1/ad_groups/:ad_group_id', { schema: { tags, params: IdParams, response: adGroup } }, (req, reply) =>
    answerNow(reply, () => svc.getAdGroup(ctx, account(req), req.params.ad_group_id)),
  );
  app.post(
    '/ads/v1/ad_groups/:ad_group_id',
    { schema: { tags, params: IdParams, body: UpdateAdGroupBody, response: adGroup } },
    (req, reply) => answer(reply, svc.updateAdGroup(ctx, account(req), req.params.ad_group_id, req.body)),
  );
  for (const [action, status] of [
    ['activate', 'active'],
    ['pause', 'paused'],
    ['archive', 'archived'],
  ] as const) {
    app.post(`/ads/v1/ad_groups/:ad_group_id/${action}`, { schema: { tags, params: IdParams, response: adGroup } }, (req, reply) =>
      answer(reply, svc.transition(ctx, account(req), req.params.ad_group_id, status)),
    );
  }

  app.get('/ads/v1/campaigns', { schema: { tags, querystring: Page, response: { 200: ListOf(CampaignObject) } } }, async (req) =>
    store.listCampaigns(db, account(req), req.query, campaignView),
  );
  app.get('/ads/v1/campaigns/:id', { schema: { tags, params: IdOnlyParams, response: { 200: CampaignObject } } }, async (req) => {
    const row = await store.getCampaign(db, account(req), req.params.id);
    if (!row) throw notFound('campaign', req.params.id);
    return campaignView(row);
  });
  app.get(
    '/ads/v1/custom_audiences',
    { schema: { tags, querystring: ListAudiencesQuery, response: { 200: ListOf(AudienceObject) } } },
    async (req) => {
      const { intended_use, ...page } = req.query;
      return store.listAudiences(db, account(req), intended_use, page, audienceView);
    },
  );
  app.get('/ads/v1/custom_audiences/:id', { schema: { tags, params: IdOnlyParams, response: { 200: AudienceObject } } }, async (req) => {
    const row = await store.getAudience(db, account(req), req.params.id);
    if (!row) throw notFound('custom audience', req.params.id);
    return audienceView(row);
  });
  app.get('/ads/v1/product_feeds', { schema: { tags, querystring: Page, response: { 200: ListOf(FeedObject) } } }, async (req) =>
    store.listFeeds(db, account(req), req.query, feedView),
  );
  app.get('/ads/v1/product_feeds/:id', { schema: { tags, params: IdOnlyParams, response: { 200: FeedObject } } }, async (req) => {
    const row = await store.getFeed(db, account(req), req.params.id);
    if (!row) throw notFound('product feed', req.params.id);
    return feedView(row);
  });
}
