import { Type } from 'typebox';
import type { Module } from '../core/module.js';
import { createAlert, createCase, getAlert, getCase } from './service.js';
import { safetyMigrations } from './tables.js';

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `GET /v1/safety/cases/{id}` and `GET /v1/safety/alerts/{id}`: the objects behind safety events. */
export const safetyModule: Module = {
  name: 'safety',
  migrations: safetyMigrations,
  eventSamples: [
    {
      types: ['safety.warning_issued', 'safety.deactivation_issued'],
      async create(ctx, tx, { type, organizationId, projectId, input }) {
        const action = type === 'safety.warning_issued' ? 'warning' : 'deactivation';
        const c = await createCase(ctx, tx, { organizationId, projectId, action, safety_identifier: text(input.safety_identifier), category: text(input.category) });
        return { id: c.id };
      },
    },
    {
      types: ['safety.alert.created', 'safety.org_alert.created'],
      async create(ctx, tx, { type, organizationId, projectId, input }) {
        const a = await createAlert(ctx, tx, { organizationId, projectId: type === 'safety.alert.created' ? projectId : null, category: text(input.category) });
        return { id: a.id };
      },
    },
  ],
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
