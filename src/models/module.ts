import { invalid } from '../core/errors.js';
import { configSection, type Ctx, type Module } from '../core/module.js';
import { ModelsConfigSchema, type ModelsConfig } from './config.js';
import { createModelRegistry, type ModelRegistry } from './providers.js';
import { modelsRoutes } from './routes.js';
import { loadConfig, saveConfig } from './store.js';
import { modelsMigrations } from './tables.js';
import { warmTokenizer } from './tokens.js';

declare module '../core/module.js' {
  interface Services {
    /** The model providers runs and responses call. */
    models: ModelRegistry;
  }
}

/** The concern of `ctx.changes` that applying a `models` section bumps. */
const MODELS = 'models';

/**
 * Follows the saved `models` section: configures this instance's registry when the saved text differs
 * from what it runs (at start, and when another instance applied a section).
 */
function followConfig(ctx: Ctx): () => Promise<void> {
  let running: string | undefined;
  return async () => {
    const text = await loadConfig(ctx.store.db);
    if (text === running) return;
    try {
      ctx.services.models.configure(text === undefined ? undefined : (JSON.parse(text) as ModelsConfig));
    } catch (err) {
      // Valid where it was applied, not here (an `api_key_env` unset on this instance): keep the last one.
      ctx.log.error({ err }, 'the models config another instance applied is not usable here; keeping the last one');
    }
    running = text;
  };
}

/**
 * Model providers, shared by runs and responses: `ctx.services.models` (a ModelRegistry). Configured by
 * the root `models` section of the config file (or `POST /admin/v1/config`); without it every model name
 * is served by the built-in deterministic provider. The section applied last is saved in the store, and
 * every instance on the store runs it (`ctx.changes`, concern `models`).
 */
export const modelsModule: Module = {
  name: 'models',
  migrations: modelsMigrations,
  start() {
    // The tokenizer loads once Standin answers, so neither the cold start nor the first run waits for it.
    setTimeout(warmTokenizer, 500).unref();
  },
  async provide(ctx) {
    ctx.services.models = createModelRegistry(undefined, {
      fixturesRoot: ctx.settings.fixturesRoot,
      fixtureMaxBytes: ctx.settings.fixtureMaxBytes,
      log: ctx.log,
    });
    const follow = followConfig(ctx);
    await follow();
    ctx.changes.on(MODELS, follow);
  },
  config: [
    configSection({
      at: 'root',
      key: 'models',
      schema: ModelsConfigSchema,
      async apply(ctx, tx, value) {
        try {
          ctx.services.models.configure(value);
        } catch (err) {
          // Rules the schema cannot state (base_url for an upstream, a valid regex …): a 400, not a 500.
          throw invalid(`the config is not valid: ${(err as Error).message}`, 'models', 'invalid_config');
        }
        await saveConfig(tx, JSON.stringify(value), ctx.clock.now());
        await ctx.changes.bump(tx, MODELS);
      },
    }),
  ],
  routes(app, ctx) {
    modelsRoutes(app, ctx);
  },
};
