import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Ctx } from '../core/module.js';
import { CreateResponseBody } from './schemas.js';
import type { RateLimitService } from '../ratelimit/service.js';
import { cancelResponse, createResponse, deleteResponse, getResponse, usageOf, type ResponsesDeps } from './service.js';

/** `/v1/responses`: create, retrieve, cancel, delete. */
export function responsesRoutes(app: FastifyInstance, ctx: Ctx, deps: ResponsesDeps) {
  const tags = ['responses'];
  const params = Type.Object({ response_id: Type.String({ maxLength: 200 }) });
  app.post('/v1/responses', { schema: { tags, body: CreateResponseBody } }, async (req) => {
    const p = await ctx.auth.platform(req, { group: 'responses', access: 'write' });
    const body = req.body as Record<string, any>;
    // Admitted by the rate limiter; a background response releases its admission when its job ends.
    const limiter = ctx.services.ratelimit;
    const admission = await limiter?.admit(req, p, {
      model: String(body.model),
      maxTokens: body.max_output_tokens ?? null,
      inputText: [JSON.stringify(body.input ?? ''), String(body.instructions ?? '')],
    });
    try {
      const r = await createResponse(ctx, deps, p.projectId, body, admission?.ticket);
      if (!body.background) await admission?.release(usageOf(r));
      return r;
    } catch (err) {
      await admission?.release({ failed: true });
      throw err;
    }
  });
  app.get('/v1/responses/:response_id', { schema: { tags, params } }, async (req) => {
    const p = await ctx.auth.platform(req, { group: 'responses', access: 'read' });
    return getResponse(ctx, p.projectId, (req.params as { response_id: string }).response_id);
  });
  app.post('/v1/responses/:response_id/cancel', { schema: { tags, params } }, async (req) => {
    const p = await ctx.auth.platform(req, { group: 'responses', access: 'write' });
    return cancelResponse(ctx, p.projectId, (req.params as { response_id: string }).response_id);
  });
  app.delete('/v1/responses/:response_id', { schema: { tags, params } }, async (req) => {
    const p = await ctx.auth.platform(req, { group: 'responses', access: 'write' });
    return deleteResponse(ctx, p.projectId, (req.params as { response_id: string }).response_id);
  });
}
