import type { App, Ctx } from '../core/module.js';
import { ProjectParams } from '../core/schemas.js';
import { getProject } from '../identity/service.js';
import { WorkHoldsBody, WorkHoldsObject } from './schemas.js';
import { clearWorkHolds, getWorkHolds, setWorkHolds } from './service.js';

const tags = ['admin: work holds'];

/** `/admin/v1/projects/{project_id}/work_holds`: hold, release and pace a project's batches and ingestion. */
export function holdsAdminRoutes(app: App, ctx: Ctx) {
  app.get(
    '/projects/:project_id/work_holds',
    { schema: { tags, params: ProjectParams, response: { 200: WorkHoldsObject } } },
    async (req) => {
      const project = await getProject(ctx.store.db, req.params.project_id);
      return getWorkHolds(ctx, project.id);
    },
  );
  app.put(
    '/projects/:project_id/work_holds',
    { schema: { tags, params: ProjectParams, body: WorkHoldsBody, response: { 200: WorkHoldsObject } } },
    async (req) => {
      const project = await getProject(ctx.store.db, req.params.project_id);
      const out = await setWorkHolds(ctx, ctx.store.db, project.id, req.body);
      // Released work on this instance moves now; elsewhere at its next look (HOLD_RECHECK_MS).
      ctx.jobs.wake();
      return out;
    },
  );
  app.delete(
    '/projects/:project_id/work_holds',
    { schema: { tags, params: ProjectParams, response: { 200: WorkHoldsObject } } },
    async (req) => {
      const project = await getProject(ctx.store.db, req.params.project_id);
      await clearWorkHolds(ctx.store.db, project.id);
      ctx.jobs.wake();
      return getWorkHolds(ctx, project.id);
    },
  );
}
