import { modelLimited } from '../ratelimit/service.js';
import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { admissionText } from './inputs.js';
import { CreateResponseBody, ResponseDeleted, ResponseObject, ResponseParams } from './schemas.js';
import { cancelResponse, createResponse, deleteResponse, getResponse, usageOf } from './service.js';

/** `/v1/responses`: create, retrieve, cancel, delete. */
export function responsesRoutes(app: App, ctx: Ctx): void {
  const tags = ['responses'];
  app.post(
    '/v1/responses',
    {
      config: { ...needs('responses', 'write'), ...modelLimited },
      schema: { tags, body: CreateResponseBody, response: { 200: ResponseObject } },
    },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      const body = req.body;
      // Admitted by the rate limiter; a background response releases its admission when its job ends.
      const admission = await ctx.services.ratelimit?.admit(req, p, {
        model: body.model,
        maxTokens: body.max_output_tokens ?? null,
        inputText: [admissionText(body.input), body.instructions ?? ''],
      });
      try {
        const r = await createResponse(ctx, p.projectId, body, admission?.ticket);
        if (!body.background) await admission?.release(usageOf(r));
        return r;
      } catch (err) {
        await admission?.release({ failed: true });
        throw err;
      }
    },
  );
  app.get(
    '/v1/responses/:response_id',
    { config: needs('responses', 'read'), schema: { tags, params: ResponseParams, response: { 200: ResponseObject } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      return getResponse(ctx, p.projectId, req.params.response_id);
    },
  );
  app.post(
    '/v1/responses/:response_id/cancel',
    { config: needs('responses', 'write'), schema: { tags, params: ResponseParams, response: { 200: ResponseObject } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      return cancelResponse(ctx, p.projectId, req.params.response_id);
    },
  );
  app.delete(
    '/v1/responses/:response_id',
    { config: needs('responses', 'write'), schema: { tags, params: ResponseParams, response: { 200: ResponseDeleted } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      return deleteResponse(ctx, p.projectId, req.params.response_id);
    },
  );
}
