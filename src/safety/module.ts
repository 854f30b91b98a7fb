import type { Module } from '../core/module.js';
import { safetyRoutes } from './routes.js';
import { createAlert, createCase } from './service.js';
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
        const c = await createCase(ctx, tx, {
          organizationId,
          projectId,
          action,
          safety_identifier: text(input.safety_identifier),
          category: text(input.category),
        });
        return { id: c.id };
      },
    },
    {
      types: ['safety.alert.created', 'safety.org_alert.created'],
      async create(ctx, tx, { type, organizationId, projectId, input }) {
        const a = await createAlert(ctx, tx, {
          organizationId,
          projectId: type === 'safety.alert.created' ? projectId : null,
          category: text(input.category),
        });
        return { id: a.id };
      },
    },
  ],
  routes: safetyRoutes,
};
