import { configSection, type Module } from '../core/module.js';
import { holdsAdminRoutes } from './routes.js';
import { WorkHoldsBody } from './schemas.js';
import { setWorkHolds } from './service.js';
import { holdsMigrations } from './tables.js';

/** Work holds: per project, hold, release and pace batches and vector store ingestion on the Standin clock. */
export const holdsModule: Module = {
  name: 'holds',
  migrations: holdsMigrations,
  adminRoutes: holdsAdminRoutes,
  config: [
    configSection({
      at: 'project',
      key: 'work_holds',
      schema: WorkHoldsBody,
      apply: async (ctx, tx, value, { projectId }) => void (await setWorkHolds(ctx, tx, projectId!, value)),
    }),
  ],
};
