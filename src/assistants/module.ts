import type { Module } from '../core/module.js';
import { RunBus } from './bus.js';
import { createRunEngine, type RunEngine } from './engine.js';
import { assistantsRoutes } from './routes.js';
import type { Runtime } from './service.js';
import { assistantsMigrations } from './tables.js';

declare module '../core/module.js' {
  interface Services {
    assistants: Runtime & { engine: RunEngine };
  }
}

/**
 * Assistants, threads, messages, runs and run steps (the deprecated threads interface), on any model:
 * runs call `ctx.services.models` (the models module, listed before this one).
 */
export const assistantsModule: Module = {
  name: 'assistants',
  migrations: assistantsMigrations,
  init(ctx) {
    const models = ctx.services.models;
    const bus = new RunBus();
    const runEngine = createRunEngine(ctx, bus, models);
    const rt: Runtime & { engine: RunEngine } = {
      bus,
      models,
      engine: runEngine,
      interrupt: (id) => runEngine.interrupt(id),
      direct: ctx.settings.workers,
      kick: (id) => runEngine.kick(id),
    };
    ctx.services.assistants = rt;
  },
  jobs(ctx) {
    return ctx.services.assistants.engine.jobs();
  },
  routes(app, ctx) {
    assistantsRoutes(app, ctx);
  },
  async seed(ctx, tx, demo) {
    // A ready assistant, so `createAndRun` works on a fresh start without creating one first.
    await tx
      .insertInto('assistants')
      .values({
        id: 'asst_demo',
        project_id: demo.projectId,
        created_at: ctx.clock.nowSeconds(),
        name: 'Demo assistant',
        description: 'Answers with the built-in model; calls get_weather when a message names it.',
        model: 'gpt-4o',
        instructions: 'You are a helpful assistant.',
        tools: JSON.stringify([{ type: 'function', function: { name: 'get_weather', description: 'The weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }]),
        tool_resources: null,
        metadata: null,
        temperature: null,
        top_p: null,
        response_format: null,
        reasoning_effort: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    return [`  demo assistant (project ${demo.projectId}): asst_demo`];
  },
  async start(ctx) {
    const rt = ctx.services.assistants;
    await rt.bus.start(ctx);
    const n = await rt.engine.sweep();
    if (n) ctx.log.info({ runs: n }, 'runs left by a stopped process re-queued');
  },
  async stop(ctx) {
    const rt = ctx.services.assistants;
    await rt.engine.stop();
    rt.bus.stop();
  },
};
