import type { Module } from '../../src/core/module.js';
import type { RateLimitService, Usage } from '../../src/ratelimit/service.js';

/**
 * A model-consuming route of the tests' own, wired the way the lead wires runs and responses:
 * admit (headers go out with whatever reply follows), do the work, release with the usage.
 */
export const probeModule: Module = {
  name: 'ratelimit-probe',
  routes(app, ctx) {
    app.post('/v1/probe', async (request) => {
      const principal = await ctx.auth.platform(request, { group: 'responses', access: 'write' });
      const body = request.body as { model: string; max_tokens?: number; input?: string; images?: number; usage?: Usage };
      const admission = await (ctx.services.ratelimit as RateLimitService).admit(request, principal, {
        model: body.model,
        maxTokens: body.max_tokens,
        inputText: body.input,
        images: body.images,
      });
      await admission.release(body.usage);
      return { object: 'probe', ok: true };
    });
  },
};
