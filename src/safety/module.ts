import { Type } from 'typebox';
import type { Module } from '../server/module.js';
import { getAlert, getCase } from './service.js';
import { safetyMigrations } from './tables.js';

/** `GET /v1/safety/cases/{id}` and `GET /v1/safety/alerts/{id}`: the objects behind safety events. */
export const safetyModule: Module = {
  name: 'safety',
  migrations: safetyMigrations,
  routes(app, ctx) {
    const params = Type.Object({ id: Type.String({ maxLength: 200 }) });
    app.get('/v1/safety/cases/:id', { schema: { tags: ['safety'], params } }, async (req) => {
      const p = await ctx.auth.platform(req, { group: 'safety', access: 'read' });
      return getCase(ctx.store.db, p.organizationId, (req.params as { id: string }).id);
    });
    app.get('/v1/safety/alerts/:id', { schema: { tags: ['safety'], params } }, async (req) => {
      const p = await ctx.auth.platform(req, { group: 'safety', access: 'read' });
      return getAlert(ctx.store.db, p.organizationId, p.projectId, (req.params as { id: string }).id);
    });
  },
};
