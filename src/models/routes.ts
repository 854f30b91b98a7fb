import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Ctx } from '../core/module.js';
import { ApiError } from '../core/errors.js';
import type { ModelRegistry } from './providers.js';

/** `created` of every model object: Standin's models have no release date; a fixed value keeps lists stable. */
const CREATED = 1_700_000_000;

const view = (m: { id: string; owned_by: string }) => ({ id: m.id, object: 'model', created: CREATED, owned_by: m.owned_by });

/** `GET /v1/models` and `GET /v1/models/{model}` (DELETE belongs to another module). */
export function modelsRoutes(app: FastifyInstance, ctx: Ctx) {
  const models = () => ctx.services.models;
  const tags = ['models'];
  app.get('/v1/models', { schema: { tags } }, async (req) => {
    await ctx.auth.platform(req, { group: 'models', access: 'read' });
    return { object: 'list', data: models().list().map(view) };
  });
  app.get('/v1/models/:model', { schema: { tags, params: Type.Object({ model: Type.String({ maxLength: 512 }) }) } }, async (req) => {
    await ctx.auth.platform(req, { group: 'models', access: 'read' });
    const id = (req.params as { model: string }).model;
    const route = models().route(id);
    if (!route) {
      throw new ApiError('invalid_request_error', `The model '${id}' does not exist or you do not have access to it.`, { status: 404, param: 'model', code: 'model_not_found' });
    }
    return view({ id, owned_by: route.ownedBy });
  });
}
