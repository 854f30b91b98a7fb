import { Type } from 'typebox';
import { needs } from '../../src/core/auth.js';
import type { Module } from '../../src/core/module.js';
import { AnyObject } from '../../src/core/schemas.js';

const ProbeBody = Type.Object(
  {
    model: Type.String(),
    max_tokens: Type.Optional(Type.Integer()),
    input: Type.Optional(Type.String()),
    images: Type.Optional(Type.Integer()),
    usage: Type.Optional(AnyObject),
  },
  { additionalProperties: false },
);

/**
 * A model-consuming route of the tests' own, wired the way the lead wires runs and responses:
 * admit (headers go out with whatever reply follows), do the work, release with the usage.
 */
export const probeModule: Module = {
  name: 'ratelimit-probe',
  routes(app, ctx) {
    app.post(
      '/v1/probe',
      {
        config: needs('responses', 'write'),
        schema: { body: ProbeBody, response: { 200: Type.Object({ object: Type.Literal('probe'), ok: Type.Boolean() }) } },
      },
      async (request) => {
        const principal = ctx.auth.principalOf(request);
        const body = request.body;
        const admission = await ctx.services.ratelimit.admit(request, principal, {
          model: body.model,
          maxTokens: body.max_tokens,
          inputText: body.input,
          images: body.images,
        });
        await admission.release(body.usage);
        return { object: 'probe' as const, ok: true };
      },
    );
  },
};
