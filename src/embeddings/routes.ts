import { modelLimited } from '../ratelimit/service.js';
import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { CreateEmbeddingBody, EmbeddingList } from './schemas.js';
import { createEmbeddings, readInputs, usageOf } from './service.js';

/** `POST /v1/embeddings`, admitted by the rate limiter like responses (headers, 429 and 503). */
export function embeddingsRoutes(app: App, ctx: Ctx): void {
  app.post(
    '/v1/embeddings',
    {
      config: { ...needs('responses', 'write'), ...modelLimited },
      schema: { tags: ['embeddings'], body: CreateEmbeddingBody, response: { 200: EmbeddingList } },
    },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      const body = req.body;
      // The limits are checked before admission: a refused input costs no tokens.
      const inputs = await readInputs(body.input);
      const admission = await ctx.services.ratelimit?.admit(req, p, { model: body.model, inputText: inputs.texts });
      try {
        const r = await createEmbeddings(ctx, body, inputs);
        await admission?.release(usageOf(r));
        return r;
      } catch (err) {
        await admission?.release({ failed: true });
        throw err;
      }
    },
  );
}
