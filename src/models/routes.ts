import { Type } from 'typebox';
import { ApiError } from '../core/errors.js';
import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { Deleted } from '../core/schemas.js';
import { deleteModel } from './service.js';

/** `created` of every model object: Standin's models have no release date; a fixed value keeps lists stable. */
const CREATED = 1_700_000_000;

const view = (m: { id: string; owned_by: string }) => ({ id: m.id, object: 'model' as const, created: CREATED, owned_by: m.owned_by });

const ModelObject = Type.Object({ id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() });
const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelObject) });

/** `GET /v1/models`, `GET /v1/models/{model}` and `DELETE /v1/models/{model}`. */
export function modelsRoutes(app: App, ctx: Ctx) {
  const models = () => ctx.services.models;
  const tags = ['models'];
  app.get('/v1/models', { config: needs('models', 'read'), schema: { tags, response: { 200: ModelList } } }, async () => {
    return { object: 'list' as const, data: models().list().map(view) };
  });
  app.get(
    '/v1/models/:model',
    {
      config: needs('models', 'read'),
      schema: { tags, params: Type.Object({ model: Type.String({ maxLength: 512 }) }), response: { 200: ModelObject } },
    },
    async (req) => {
      const id = req.params.model;
      const route = models().route(id);
      if (!route) {
        throw new ApiError('invalid_request_error', `The model '${id}' does not exist or you do not have access to it.`, {
          status: 404,
          param: 'model',
          code: 'model_not_found',
        });
      }
      return view({ id, owned_by: route.ownedBy });
    },
  );
  // Closed to workload identity tokens (rule 6): the workload module refuses them before this runs.
  app.delete(
    '/v1/models/:model',
    {
      config: needs('models', 'write'),
      schema: {
        tags,
        summary: 'Delete a fine-tuned model (owner role).',
        params: Type.Object({ model: Type.String({ minLength: 1, maxLength: 500 }) }),
        response: { 200: Deleted('model') },
      },
    },
    async (req) => {
      const principal = ctx.auth.principalOf(req);
      return deleteModel(ctx, principal, req.params.model);
    },
  );
}
