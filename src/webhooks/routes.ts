import { Type } from 'typebox';
import type { App, Ctx } from '../core/module.js';
import { getProject } from '../identity/service.js';
import { EVENT_TYPES, DEPRECATED_EVENT_TYPE } from './catalog.js';
import { dashboardPage } from './dashboard.js';
import { CreateEndpointBody, ListQuery, RotateBody, TriggerBody, UpdateEndpointBody } from './schemas.js';
import * as svc from './service.js';
import { sendTestEvent, triggerEvent } from './trigger.js';

/** Admin API of webhook endpoints, deliveries and events (under /admin/v1). */
export function webhookAdminRoutes(app: App, ctx: Ctx) {
  const db = ctx.store.db;
  const outbound = ctx.outbound;
  const tags = ['admin: webhooks'];
  const P = Type.Object({ project_id: Type.String({ maxLength: 200 }) });
  const PE = Type.Object({ project_id: Type.String({ maxLength: 200 }), endpoint_id: Type.String({ maxLength: 200 }) });
  const PD = Type.Object({ project_id: Type.String({ maxLength: 200 }), delivery_id: Type.String({ maxLength: 200 }) });
  const base = '/projects/:project_id';
  const project = async (req: any) => (await getProject(db, req.params.project_id)).id;
  const list = <T extends { id: string }>(data: T[]) => ({ object: 'list' as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });

  app.get('/webhook_event_types', { schema: { tags } }, async () => ({
    object: 'list',
    data: EVENT_TYPES.map((t) => ({ type: t, deprecated: t === DEPRECATED_EVENT_TYPE })),
  }));
  app.get(`${base}/webhook_endpoints`, { schema: { tags, params: P } }, async (req) => list(await svc.listEndpoints(ctx, db, await project(req))));
  app.post(`${base}/webhook_endpoints`, { schema: { tags, params: P, body: CreateEndpointBody } }, async (req, reply) => {
    const projectId = await project(req);
    reply.code(201);
    return svc.createEndpoint(ctx, db, projectId, req.body as svc.EndpointInput, { outbound });
  });
  app.get(`${base}/webhook_endpoints/:endpoint_id`, { schema: { tags, params: PE } }, async (req) => {
    const { endpoint_id } = req.params as any;
    return svc.getEndpoint(ctx, db, await project(req), endpoint_id);
  });
  app.post(`${base}/webhook_endpoints/:endpoint_id`, { schema: { tags, params: PE, body: UpdateEndpointBody } }, async (req) => {
    const { endpoint_id } = req.params as any;
    return svc.updateEndpoint(ctx, db, await project(req), endpoint_id, req.body as any, { outbound });
  });
  app.delete(`${base}/webhook_endpoints/:endpoint_id`, { schema: { tags, params: PE } }, async (req) => {
    const { endpoint_id } = req.params as any;
    await db.transaction().execute(async (tx) => svc.deleteEndpoint(tx, (req.params as any).project_id, endpoint_id));
    return { id: endpoint_id, object: 'webhook_endpoint.deleted', deleted: true };
  });
  for (const [verb, enabled] of [['enable', true], ['disable', false]] as const) {
    app.post(`${base}/webhook_endpoints/:endpoint_id/${verb}`, { schema: { tags, params: PE } }, async (req) => {
      const { endpoint_id } = req.params as any;
      return svc.updateEndpoint(ctx, db, await project(req), endpoint_id, { enabled });
    });
  }
  app.post(`${base}/webhook_endpoints/:endpoint_id/rotate_secret`, { schema: { tags, params: PE, body: Type.Optional(RotateBody) } }, async (req) => {
    const { endpoint_id } = req.params as any;
    const body = (req.body ?? {}) as { grace_period_seconds?: number; secret?: string };
    return svc.rotateSecret(ctx, db, await project(req), endpoint_id, body.grace_period_seconds, body.secret);
  });
  app.post(`${base}/webhook_endpoints/:endpoint_id/test`, { schema: { tags, params: PE, body: TriggerBody } }, async (req, reply) => {
    const { endpoint_id } = req.params as any;
    const body = req.body as { type: string; data?: any };
    reply.code(201);
    const out = await sendTestEvent(ctx, await project(req), endpoint_id, body.type, body.data);
    return { object: 'webhook_test', event: out.event, delivery_id: out.delivery_id };
  });
  app.get(`${base}/webhook_endpoints/:endpoint_id/deliveries`, { schema: { tags, params: PE, querystring: ListQuery } }, async (req) => {
    const { endpoint_id } = req.params as any;
    return svc.listDeliveries(db, await project(req), endpoint_id, req.query as any);
  });
  app.get(`${base}/webhook_deliveries/:delivery_id`, { schema: { tags, params: PD } }, async (req) => {
    const { delivery_id } = req.params as any;
    return svc.getDelivery(db, await project(req), delivery_id);
  });
  app.post(`${base}/webhook_deliveries/:delivery_id/resend`, { schema: { tags, params: PD } }, async (req, reply) => {
    const { delivery_id } = req.params as any;
    const projectId = await project(req);
    const d = await db.transaction().execute((tx) => svc.resendDelivery(ctx, tx, projectId, delivery_id));
    ctx.jobs.wake();
    reply.code(201);
    return d;
  });
  app.post(`${base}/events`, { schema: { tags, params: P, body: TriggerBody } }, async (req, reply) => {
    const body = req.body as { type: string; data?: any };
    reply.code(201);
    return triggerEvent(ctx, (req.params as { project_id: string }).project_id, body.type, body.data); // checks the project itself
  });
}

/** The dashboard page that drives the admin API of webhooks. */
export function webhookPages(app: App) {
  const P = Type.Object({ project_id: Type.String({ maxLength: 200 }) });

  app.get('/dashboard/projects/:project_id/webhooks', { schema: { hide: true, params: P } }, async (req, reply) => {
    reply.header('content-type', 'text/html; charset=utf-8');
    reply.header('content-security-policy', "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    reply.header('cache-control', 'no-store');
    return dashboardPage((req.params as { project_id: string }).project_id);
  });
}
