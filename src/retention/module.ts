import { configSection, type Module } from '../core/module.js';
import { parseRetentionSetting } from './policy.js';
import { retentionAdminRoutes } from './routes.js';
import { RetentionConfig } from './schemas.js';
import { allRules, applyRetentionConfig, ensureSweepJob, SWEEP, sweepJob } from './service.js';

/**
 * Retention: every module declares what it keeps for a while (`Module.retention`, core/retention.ts);
 * this area runs those rules in bounded batches from one job on the queue, on the Standin clock.
 */
export const retentionModule: Module = {
  name: 'retention',
  init(ctx) {
    // A typo in --retention stops the start, rather than keeping records forever unnoticed.
    parseRetentionSetting(ctx.settings.retention, allRules(ctx));
  },
  adminRoutes: retentionAdminRoutes,
  jobs: (ctx) => [{ kind: SWEEP, concurrency: 1, visibilityMs: 10 * 60_000, retryDelayMs: 60_000, handler: () => sweepJob(ctx) }],
  start: (ctx) => ensureSweepJob(ctx),
  // A reset empties the job queue too.
  reset: (ctx) => ensureSweepJob(ctx),
  config: [
    configSection({
      at: 'root',
      key: 'retention',
      schema: RetentionConfig,
      apply: (ctx, tx, value) => applyRetentionConfig(ctx, tx, value),
    }),
  ],
};
