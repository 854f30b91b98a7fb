import OpenAI from 'openai';
import { createApiKey, upsertProject } from '../../src/identity/service.js';
import { applyConfig } from '../../src/admin/config-file.js';
import type { Settings } from '../../src/core/settings.js';
import { startTestStandin, type TestDialect, type TestStandin } from '../helpers.js';

/** Rules of the built-in provider the suites rely on (applied through the config file's `models` section). */
export const TEST_MODELS = {
  'slow-*': { provider: 'builtin', delay: '150ms', chunk_chars: 4 },
  '*': {
    provider: 'builtin',
    rules: [
      {
        match: 'weather',
        tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
        after_tool_outputs: 'The weather is {{output}}.',
      },
      {
        match: 'both tools',
        tool_calls: [
          { name: 'get_weather', arguments: { city: 'Oslo' } },
          { name: 'get_time', arguments: { tz: 'UTC' } },
        ],
      },
      { match: 'long story', reply: 'once upon a time '.repeat(300) },
      { match: 'filtered', reply: 'I cannot say that.', finish_reason: 'content_filter' },
    ],
  },
} as const;

export interface Env {
  s: TestStandin;
  client: OpenAI;
  /** A client of another project of the same organization. */
  other: OpenAI;
  url: string;
}

/** A listening Standin with workers, the test models, and SDK clients of two projects. */
export async function startEnv(
  dialect: TestDialect,
  models: Record<string, unknown> = TEST_MODELS,
  settings: Partial<Settings> = {},
): Promise<Env> {
  const s = await startTestStandin({ dialect, settings: { workers: true, ...settings } });
  await applyConfig(s.ctx, s.modules, { models });
  const project = await upsertProject(s.ctx, s.ctx.store.db, 'org_demo', { id: 'proj_other', name: 'Other project' });
  await createApiKey(s.ctx, s.ctx.store.db, { projectId: project.id, name: 'other', value: 'sk-proj-test-other-project-key-0000000' });
  const url = await s.listen();
  const opts = { baseURL: `${url}/v1`, maxRetries: 0, defaultHeaders: { 'OpenAI-Beta': 'assistants=v2' } };
  return {
    s,
    url,
    client: new OpenAI({ apiKey: s.keys.platform, ...opts }),
    other: new OpenAI({ apiKey: 'sk-proj-test-other-project-key-0000000', ...opts }),
  };
}

export const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
export const timeTool = {
  type: 'function' as const,
  function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'] } },
};

/** Polls until `check` holds (bounded; for states reached by background work, such as ingestion in its process, which starts on first use). */
export async function until<T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (performance.now() > deadline) throw new Error(`condition not reached in ${ms} ms: ${JSON.stringify(v).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
