import { invalid } from '../core/errors.js';
import { configSection, type Module } from '../core/module.js';
import { ModelsConfigSchema } from './config.js';
import { createModelRegistry, type ModelRegistry } from './providers.js';
import { modelsRoutes } from './routes.js';
import { warmTokenizer } from './tokens.js';

declare module '../core/module.js' {
  interface Services {
    /** The model providers runs and responses call. */
    models: ModelRegistry;
  }
}

/**
 * Model providers, shared by runs and responses: `ctx.services.models` (a ModelRegistry). Configured by
 * the root `models` section of the config file; without it every model name is served by the built-in
 * deterministic provider. The section is held in memory: each instance reads the same config file.
 */
export const modelsModule: Module = {
  name: 'models',
  start() {
    // The tokenizer loads once Standin answers, so neither the cold start nor the first run waits for it.
    setTimeout(warmTokenizer, 500).unref();
  },
  provide(ctx) {
    ctx.services.models = createModelRegistry();
  },
  config: [
    configSection({
      at: 'root',
      key: 'models',
      schema: ModelsConfigSchema,
      async apply(ctx, _tx, value) {
        try {
          ctx.services.models.configure(value);
        } catch (err) {
          // Rules the schema cannot state (base_url for an upstream, a valid regex …): a 400, not a 500.
          throw invalid(`the config is not valid: ${(err as Error).message}`, 'models', 'invalid_config');
        }
      },
    }),
  ],
  routes(app, ctx) {
    modelsRoutes(app, ctx);
  },
};
