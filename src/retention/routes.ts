import type { App, Ctx } from '../core/module.js';
import { RetentionView, SweepReportView } from './schemas.js';
import { retentionView, sweep } from './service.js';

/** `/admin/v1/retention`: the keep time of every record kind and the last sweep; a sweep on demand. */
export function retentionAdminRoutes(app: App, ctx: Ctx): void {
  const tags = ['retention'];
  app.get('/retention', { schema: { tags, summary: 'Keep times and the last sweep', response: { 200: RetentionView } } }, async () =>
    retentionView(ctx),
  );
  app.post(
    '/retention/sweep',
    { schema: { tags, summary: 'Sweeps now (what the hourly job does)', response: { 200: SweepReportView } } },
    async () => sweep(ctx),
  );
}
