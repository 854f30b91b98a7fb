import type { Module } from '../core/module.js';
import { imagesRoutes } from './routes.js';
import { purgeAuditRequests } from './store.js';

/**
 * Images: audit requests of image generations (`POST /v1/images/request_audit`). Its table was created by
 * the workload identity module's first migration (tables.ts), so it is listed after that module, which
 * also closes this endpoint to workload identity tokens (authentication rule 6).
 */
export const imagesModule: Module = {
  name: 'images',
  routes(app, ctx) {
    imagesRoutes(app, ctx);
  },
  retention: [
    {
      name: 'image_audit_requests',
      description: 'Image audit requests (write-only: no endpoint reads them back), by when they were made.',
      tables: ['image_audit_requests'],
      defaultMs: 90 * 86_400_000,
      purge: (tx, cutoffMs, limit) => purgeAuditRequests(tx, Math.floor(cutoffMs / 1000), limit),
    },
  ],
};
