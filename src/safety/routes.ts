import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { IdParams, SafetyAlertObject, SafetyCaseObject } from './schemas.js';
import { getAlert, getCase } from './service.js';

/** `GET /v1/safety/cases/{id}` and `GET /v1/safety/alerts/{id}`: the objects behind safety events. */
export function safetyRoutes(app: App, ctx: Ctx) {
  const tags = ['safety'];
  app.get(
    '/v1/safety/cases/:id',
    { config: needs('safety', 'read'), schema: { tags, params: IdParams, response: { 200: SafetyCaseObject } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      return getCase(ctx.store.db, p.organizationId, req.params.id);
    },
  );
  app.get(
    '/v1/safety/alerts/:id',
    { config: needs('safety', 'read'), schema: { tags, params: IdParams, response: { 200: SafetyAlertObject } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      return getAlert(ctx.store.db, p.organizationId, p.projectId, req.params.id);
    },
  );
}
