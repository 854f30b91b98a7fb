import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { AuditRequestBody, AuditRequestObject } from './schemas.js';
import { requestAudit } from './service.js';

/** `POST /v1/images/request_audit` (closed to workload identity tokens: the workload module refuses them first). */
export function imagesRoutes(app: App, ctx: Ctx) {
  app.post(
    '/v1/images/request_audit',
    {
      config: needs('images', 'write'),
      schema: {
        tags: ['images'],
        summary: 'Request an audit of image generations.',
        body: AuditRequestBody,
        response: { 201: AuditRequestObject },
      },
    },
    async (req, reply) => {
      const principal = ctx.auth.principalOf(req);
      return reply.code(201).send(await requestAudit(ctx, principal, req.body));
    },
  );
}
