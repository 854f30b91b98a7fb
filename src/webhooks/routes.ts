import { Type } from 'typebox';
import { notFound } from '../core/errors.js';
import { wholeList as list } from '../core/pagination.js';
import type { App, Ctx } from '../core/module.js';
import { Deleted, ListOf } from '../core/schemas.js';
import { getProject } from '../identity/service.js';
import { EVENT_TYPES, DEPRECATED_EVENT_TYPE } from './catalog.js';
import {
  CreateEndpointBody,
  DeliveryParams,
  EndpointParams,
  EventEnvelopeObject,
  EventParams,
  EventTypeList,
  ListQuery,
  ObjectEventList,
  ObjectEventObject,
  ObjectEventsQuery,
  ProjectParams,
  RotateBody,
  TriggerBody,
  UpdateEndpointBody,
  WebhookDeliveryObject,
  WebhookEndpointObject,
  WebhookTestObject,
} from './schemas.js';
import * as svc from './service.js';
import { sendTestEvent, triggerEvent } from './trigger.js';

/** Admin API of webhook endpoints, deliveries and events (under /admin/v1). */
export function webhookAdminRoutes(app: App, ctx: Ctx) {
  const db = ctx.store.db;
  const outbound = ctx.outbound;
  const tags = ['admin: webhooks'];
  const base = '/projects/:project_id';
  /** The project's id, after checking it exists (a 404 names the project). */
  const project = async (id: string) => (await getProject(db, id)).id;

  app.get('/webhook_event_types', { schema: { tags, response: { 200: EventTypeList } } }, async () => ({
    object: 'list' as const,
    data: EVENT_TYPES.map((t) => ({ type: t, deprecated: t === DEPRECATED_EVENT_TYPE })),
  }));
  app.get(
    `${base}/webhook_endpoints`,
    { schema: { tags, params: ProjectParams, response: { 200: ListOf(WebhookEndpointObject) } } },
    async (req) => list(await svc.listEndpoints(ctx, db, await project(req.params.project_id))),
  );
  app.post(
    `${base}/webhook_endpoints`,
    { schema: { tags, params: ProjectParams, body: CreateEndpointBody, response: { 201: WebhookEndpointObject } } },
    async (req, reply) => {
      const projectId = await project(req.params.project_id);
      const endpoint = await svc.createEndpoint(ctx, db, projectId, req.body, { outbound });
      reply.code(201);
      return endpoint;
    },
  );
  app.get(
    `${base}/webhook_endpoints/:endpoint_id`,
    { schema: { tags, params: EndpointParams, response: { 200: WebhookEndpointObject } } },
    async (req) => svc.getEndpoint(ctx, db, await project(req.params.project_id), req.params.endpoint_id),
  );
  app.post(
    `${base}/webhook_endpoints/:endpoint_id`,
    { schema: { tags, params: EndpointParams, body: UpdateEndpointBody, response: { 200: WebhookEndpointObject } } },
    async (req) => svc.updateEndpoint(ctx, db, await project(req.params.project_id), req.params.endpoint_id, req.body, { outbound }),
  );
  app.delete(
    `${base}/webhook_endpoints/:endpoint_id`,
    { schema: { tags, params: EndpointParams, response: { 200: Deleted('webhook_endpoint.deleted') } } },
    async (req) => {
      const { project_id, endpoint_id } = req.params;
      await svc.deleteEndpoint(ctx, project_id, endpoint_id);
      return { id: endpoint_id, object: 'webhook_endpoint.deleted' as const, deleted: true };
    },
  );
  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    app.post(
      `${base}/webhook_endpoints/:endpoint_id/${verb}`,
      { schema: { tags, params: EndpointParams, response: { 200: WebhookEndpointObject } } },
      async (req) => svc.updateEndpoint(ctx, db, await project(req.params.project_id), req.params.endpoint_id, { enabled }),
    );
  }
  app.post(
    `${base}/webhook_endpoints/:endpoint_id/rotate_secret`,
    { schema: { tags, params: EndpointParams, body: Type.Optional(RotateBody), response: { 200: WebhookEndpointObject } } },
    async (req) => {
      const body = req.body ?? {};
      return svc.rotateSecret(
        ctx,
        db,
        await project(req.params.project_id),
        req.params.endpoint_id,
        body.grace_period_seconds,
        body.secret,
      );
    },
  );
  app.post(
    `${base}/webhook_endpoints/:endpoint_id/test`,
    { schema: { tags, params: EndpointParams, body: TriggerBody, response: { 201: WebhookTestObject } } },
    async (req, reply) => {
      const out = await sendTestEvent(ctx, await project(req.params.project_id), req.params.endpoint_id, req.body.type, req.body.data);
      reply.code(201);
      return { object: 'webhook_test' as const, event: out.event, delivery_id: out.delivery_id };
    },
  );
  app.get(
    `${base}/webhook_endpoints/:endpoint_id/deliveries`,
    { schema: { tags, params: EndpointParams, querystring: ListQuery, response: { 200: ListOf(WebhookDeliveryObject) } } },
    async (req) => svc.listDeliveries(db, await project(req.params.project_id), req.params.endpoint_id, req.query),
  );
  app.get(
    `${base}/webhook_deliveries/:delivery_id`,
    { schema: { tags, params: DeliveryParams, response: { 200: WebhookDeliveryObject } } },
    async (req) => svc.getDelivery(db, await project(req.params.project_id), req.params.delivery_id),
  );
  app.post(
    `${base}/webhook_deliveries/:delivery_id/resend`,
    { schema: { tags, params: DeliveryParams, response: { 201: WebhookDeliveryObject } } },
    async (req, reply) => {
      const delivery = await svc.resendDelivery(ctx, await project(req.params.project_id), req.params.delivery_id);
      reply.code(201);
      return delivery;
    },
  );
  // Across projects: the dashboard reaches it from a request, which names the object, not always its project.
  app.get('/events', { schema: { tags, querystring: ObjectEventsQuery, response: { 200: ObjectEventList } } }, async (req) => {
    const ids = Array.isArray(req.query.object_id) ? req.query.object_id : [req.query.object_id];
    return { object: 'list' as const, data: await svc.eventsOfObjects(db, ids, req.query.limit) };
  });
  // One event by its id, across projects: the `webhook-id` a receiver logged finds its deliveries.
  app.get('/events/:event_id', { schema: { tags, params: EventParams, response: { 200: ObjectEventObject } } }, async (req) => {
    const found = await svc.eventById(db, req.params.event_id);
    if (!found) throw notFound('event', req.params.event_id, 'event_id');
    return found;
  });
  app.post(
    `${base}/events`,
    { schema: { tags, params: ProjectParams, body: TriggerBody, response: { 201: EventEnvelopeObject } } },
    async (req, reply) => {
      // triggerEvent checks the project itself.
      const event = await triggerEvent(ctx, req.params.project_id, req.body.type, req.body.data);
      reply.code(201);
      return event;
    },
  );
}
