import type { Module } from '../core/module.js';
import { RunBus } from './bus.js';
import { routes } from './routes.js';
import { assistantsAdminRoutes } from './admin-routes.js';
import { createRunEngine } from './runs/engine.js';
import { runJobDefinitions } from './runs/jobs.js';
import type { AssistantsRuntime } from './runs/runtime.js';
import { ACTIVE } from './runs/states.js';
import { insertAssistantOnce } from './store/assistants.js';
import { purgeRunEvents } from './store/events.js';
import { assistantsMigrations } from './tables.js';

declare module '../core/module.js' {
  interface Services {
    /** The run bus and engine of this instance (runs/runtime.ts). */
    assistants: AssistantsRuntime;
  }
}

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/**
 * Assistants, threads, messages, runs and run steps (the deprecated threads interface), on any model:
 * runs call `ctx.services.models` (the models module).
 */
export const assistantsModule: Module = {
  name: 'assistants',
  migrations: assistantsMigrations,
  provide(ctx) {
    const bus = new RunBus();
    ctx.services.assistants = { bus, direct: ctx.settings.workers, engine: createRunEngine(ctx, bus) };
  },
  adminRoutes: assistantsAdminRoutes,
  jobs(ctx) {
    const { engine } = ctx.services.assistants;
    return runJobDefinitions(engine.handlers, (runId, reason) => engine.abandon(runId, reason));
  },
  routes(app, ctx) {
    routes(app, ctx);
  },
  retention: [
    {
      name: 'run_events',
      description:
        "The stream events of runs (what SSE streams replay), by when they were written; an active run's are kept. A run's own expiry job drops them once its deadline has passed too.",
      tables: ['run_events'],
      defaultMs: 86_400_000,
      purge: (tx, cutoffMs, limit) => purgeRunEvents(tx, cutoffMs, limit, ACTIVE),
    },
  ],
  async seed(ctx, tx, demo) {
    // A ready assistant, so `createAndRun` works on a fresh start without creating one first.
    await insertAssistantOnce(tx, {
      id: 'asst_demo',
      project_id: demo.projectId,
      created_at: ctx.clock.nowSeconds(),
      name: 'Demo assistant',
      description: 'Answers with the built-in model; calls get_weather when a message names it.',
      model: 'gpt-4o',
      instructions: 'You are a helpful assistant.',
      tools: JSON.stringify([WEATHER_TOOL]),
      tool_resources: null,
      metadata: null,
      temperature: null,
      top_p: null,
      response_format: null,
      reasoning_effort: null,
    });
    return [`  demo assistant (project ${demo.projectId}): asst_demo`];
  },
  async start(ctx) {
    const { bus, engine } = ctx.services.assistants;
    await bus.start(ctx);
    const n = await engine.sweep();
    if (n) ctx.log.info({ runs: n }, 'runs left by a stopped process re-queued');
  },
  // A stop hands the runs this instance executes to another at once: their turn in flight is made again
  // there, rather than the drain waiting for it (the bus stays up, so streams served here follow them).
  async handBack(ctx) {
    await ctx.services.assistants.engine.stop(0);
  },
  async stop(ctx) {
    const { bus, engine } = ctx.services.assistants;
    await engine.stop(0);
    bus.stop();
  },
};
