import { ApiError } from '../core/errors.js';
import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { AnyObject } from '../core/schemas.js';
import { countPrompt } from '../models/service.js';
import { listInputItems } from './input-items.js';
import { ItemList, ItemListQuery, TokenCounts, TokenCountsBody } from './input-schemas.js';
import { prepareTurn } from './inputs.js';
import { checkCustomTool, customFunction } from './custom-tools.js';
import { ResponseParams } from './schemas.js';

/** `/v1/responses/{id}/input_items`, `/v1/responses/input_tokens`, and `/v1/responses/compact` (refused). */
export function inputItemsRoutes(app: App, ctx: Ctx): void {
  const tags = ['responses'];
  app.get(
    '/v1/responses/:response_id/input_items',
    {
      config: needs('responses', 'read'),
      schema: { tags, params: ResponseParams, querystring: ItemListQuery, response: { 200: ItemList } },
    },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      const { 'include[]': _include, ...query } = req.query;
      return listInputItems(ctx, p.projectId, req.params.response_id, query);
    },
  );
  app.post(
    '/v1/responses/input_tokens',
    { config: needs('responses', 'write'), schema: { tags, body: TokenCountsBody, response: { 200: TokenCounts } } },
    async (req) => {
      const p = ctx.auth.principalOf(req);
      const body = req.body;
      const turn = await prepareTurn(ctx, p.projectId, body);
      // Counted as the built-in model counts a response's input (its usage.input_tokens for the same request).
      // A custom tool counts as the function the model is offered for it (custom-tools.ts).
      const tools = (body.tools ?? []).flatMap((t, i) =>
        t.type === 'custom'
          ? [customFunction(checkCustomTool(t, `/tools/${i}`))]
          : t.type === 'function' && t.name
            ? [
                {
                  type: 'function' as const,
                  function: {
                    name: t.name,
                    description: t.description ?? undefined,
                    parameters: t.parameters ?? undefined,
                    strict: t.strict ?? null,
                  },
                },
              ]
            : [],
      );
      return { object: 'response.input_tokens' as const, input_tokens: countPrompt(turn.messages, tools) };
    },
  );
  app.post('/v1/responses/compact', { config: needs('responses', 'write'), schema: { tags, body: AnyObject } }, async () => {
    throw new ApiError(
      'invalid_request_error',
      "POST /v1/responses/compact is not supported by Standin: a compaction item carries the platform model's encrypted summary, which Standin cannot make. Send the items themselves, or trim them (docs/responses.md).",
      { code: 'unsupported_endpoint' },
    );
  });
}
