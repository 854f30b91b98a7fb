import { Type } from 'typebox';
import type { App, Ctx } from '../core/module.js';
import { ListOf, PageParams, PathId, ProjectParams } from '../core/schemas.js';
import * as O from './objects.js';
import { RunEventList } from './objects.js';
import { readRun, listRuns } from './service/runs.js';
import { listSteps } from './service/steps.js';
import { eventsAfter } from './store/events.js';
import { pageProjectRuns } from './store/runs.js';
import { pageThreads } from './store/threads.js';
import { runView, threadView } from './views.js';

const ThreadParams = Type.Object({ project_id: PathId, thread_id: PathId });
const RunParams = Type.Object({ project_id: PathId, thread_id: PathId, run_id: PathId });
const ListQuery = Type.Object(PageParams, { additionalProperties: false });
const EventsQuery = Type.Object(
  { after: Type.Optional(Type.Integer({ minimum: 0, description: 'only events after this sequence number' })) },
  { additionalProperties: false },
);

/** Read-only views of a project's threads, runs, steps and run streams for the dashboard (under /admin/v1). */
export function assistantsAdminRoutes(app: App, ctx: Ctx) {
  const tags = ['admin: threads'];
  app.get(
    '/projects/:project_id/threads',
    { schema: { tags, params: ProjectParams, querystring: ListQuery, response: { 200: ListOf(O.ThreadObject) } } },
    async (req) => pageThreads(ctx.store.db, req.params.project_id, req.query, threadView),
  );
  // The project's recent runs across its threads, so a run is found without knowing its thread.
  app.get(
    '/projects/:project_id/runs',
    { schema: { tags, params: ProjectParams, querystring: ListQuery, response: { 200: O.RunList } } },
    async (req) => pageProjectRuns(ctx.store.db, req.params.project_id, req.query, runView),
  );
  app.get(
    '/projects/:project_id/threads/:thread_id/runs',
    { schema: { tags, params: ThreadParams, querystring: ListQuery, response: { 200: O.RunList } } },
    async (req) => listRuns(ctx, req.params.project_id, req.params.thread_id, req.query),
  );
  app.get(
    '/projects/:project_id/threads/:thread_id/runs/:run_id/steps',
    { schema: { tags, params: RunParams, querystring: ListQuery, response: { 200: O.RunStepList } } },
    async (req) => listSteps(ctx, req.params.project_id, req.params.thread_id, req.params.run_id, { order: 'asc', ...req.query }, true),
  );
  // The run's stream as it was sent (kept until the run has ended and its streams have finished).
  app.get(
    '/projects/:project_id/threads/:thread_id/runs/:run_id/events',
    { schema: { tags, params: RunParams, querystring: EventsQuery, response: { 200: RunEventList } } },
    async (req) => {
      await readRun(ctx, req.params.project_id, req.params.thread_id, req.params.run_id);
      const LIMIT = 500;
      const rows = await eventsAfter(ctx.store.db, req.params.run_id, req.query.after ?? 0, LIMIT);
      return {
        object: 'list' as const,
        data: rows.map((r) => ({ seq: Number(r.seq), event: r.event, data: JSON.parse(r.data) as unknown })),
        has_more: rows.length === LIMIT,
      };
    },
  );
}
