import { modelLimited } from '../ratelimit/service.js';
import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { admissionText } from './inputs.js';
import { CreateResponseBody, ResponseDeleted, ResponseObject, ResponseParams, RetrieveQuery } from './schemas.js';
import { cancelResponse, createResponse, deleteResponse, getResponse, usageOf } from './service.js';
import { followResponse, streamInRequest } from './stream.js';

/** `/v1/responses`: create (plain or streamed), retrieve (or resume its stream), cancel, delete. */
export function responsesRoutes(app: App, ctx: Ctx): void {
  const tags = ['responses'];
  app.post(
    '/v1/responses',
    {
      config: { ...needs('responses', 'write'), ...modelLimited },
      schema: { tags, body: CreateResponseBody, response: { 200: ResponseObject } },
    },
    async (req, reply) => {
      const p = ctx.auth.principalOf(req);
      const body = req.body;
      // Admitted by the rate limiter; a background response releases its admission when its job ends.
      const admission = await ctx.services.ratelimit?.admit(req, p, {
        model: body.model,
        maxTokens: body.max_output_tokens ?? null,
        inputText: [admissionText(body.input), body.instructions ?? ''],
      });
      try {
        if (body.stream && body.background) {
          const r = await createResponse(ctx, p.projectId, body, admission?.ticket);
          await followResponse(ctx, req, reply, p.projectId, r.id, -1, admission?.headers);
          return reply;
        }
        if (body.stream) {
          const r = await streamInRequest(req, reply, admission?.headers ?? {}, (streaming) =>
            createResponse(ctx, p.projectId, body, undefined, streaming),
          );
          await admission?.release(usageOf(r));
          return reply;
        }
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
    {
      config: needs('responses', 'read'),
      schema: { tags, params: ResponseParams, querystring: RetrieveQuery, response: { 200: ResponseObject } },
    },
    async (req, reply) => {
      const p = ctx.auth.principalOf(req);
      if (req.query.stream) {
        await followResponse(ctx, req, reply, p.projectId, req.params.response_id, req.query.starting_after ?? -1);
        return reply;
      }
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
