import { invalid } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import { nextTurn } from '../core/next-turn.js';
import type { RetentionRule } from '../core/retention.js';
import { formatKeep, parseRetentionSetting, resolvePolicy, type Keep } from './policy.js';
import * as store from './store.js';

/** Job kind of the sweep: one job per store (fixed id), which puts itself back every `SWEEP_EVERY_MS`. */
export const SWEEP = 'retention.sweep';
export const SWEEP_JOB_ID = 'job_retention_sweep';
/** How often records are swept, Standin clock: moving the clock by a day sweeps at once. */
export const SWEEP_EVERY_MS = 3_600_000;
/** Rows one transaction deletes at most: a purge never holds locks (or SQLite's writer) for long. */
export const BATCH = 1000;
/** Wall time one job spends at most before it gives the queue back and comes again at once. */
const BUDGET_MS = 20_000;

/** What one sweep did, per record kind. */
export interface SweepReport {
  object: 'retention.sweep';
  /** Standin clock, Unix seconds. */
  at: number;
  rules: { name: string; keep: string; deleted: number }[];
  /** True when the time budget ran out before every rule was done (the job comes back at once). */
  more: boolean;
}

/** Every rule of every module, in module order. */
export const allRules = (ctx: Pick<Ctx, 'modules'>): RetentionRule[] => ctx.modules.flatMap((m) => m.retention ?? []);

/** How long each record kind is kept now: defaults, this instance's `--retention`, the config file's section. */
export async function currentPolicy(ctx: Ctx): Promise<Map<RetentionRule, Keep>> {
  const rules = allRules(ctx);
  return resolvePolicy(rules, parseRetentionSetting(ctx.settings.retention, rules), await store.readConfiguredPolicy(ctx.store.db));
}

/**
 * Deletes what every rule's keep time has let go, in batches of BATCH rows, one transaction each,
 * yielding to the event loop between batches. Stops early after `budgetMs` of wall time (`more`).
 */
export async function sweep(ctx: Ctx, budgetMs = BUDGET_MS): Promise<SweepReport> {
  const started = performance.now();
  const now = ctx.clock.now();
  const report: SweepReport = { object: 'retention.sweep', at: Math.floor(now / 1000), rules: [], more: false };
  const touched = new Set<string>();
  for (const [rule, keep] of await currentPolicy(ctx)) {
    const line = { name: rule.name, keep: formatKeep(keep.ms), deleted: 0 };
    report.rules.push(line);
    if (keep.ms === null || report.more) continue;
    const cutoff = now - keep.ms;
    for (;;) {
      const n = await ctx.store.db.transaction().execute((tx) => rule.purge(tx, cutoff, BATCH));
      line.deleted += n;
      if (n > 0) for (const t of rule.tables) touched.add(t);
      if (n < BATCH) break;
      if (performance.now() - started > budgetMs) {
        report.more = true;
        break;
      }
      await nextTurn();
    }
  }
  if (ctx.store.dialect === 'postgres' && touched.size) await store.vacuum(ctx.store.db, [...touched]);
  await store.writeLastSweep(ctx.store.db, report);
  return report;
}

/** The sweep job: runs a sweep, then comes back in SWEEP_EVERY_MS (or at once when its budget ran out). */
export async function sweepJob(ctx: Ctx): Promise<{ retryAt: number }> {
  const report = await sweep(ctx);
  const deleted = report.rules.reduce((n, r) => n + r.deleted, 0);
  if (deleted) ctx.log.info({ retention: report.rules.filter((r) => r.deleted) }, `retention deleted ${deleted} records`);
  return { retryAt: ctx.clock.now() + (report.more ? 0 : SWEEP_EVERY_MS) };
}

/** Queues the sweep job unless it is queued already (its fixed id makes a second instance's enqueue fail, harmlessly). */
export async function ensureSweepJob(ctx: Ctx, firstInMs = 60_000): Promise<void> {
  await ctx.jobs.enqueue(ctx.store.db, SWEEP, {}, { id: SWEEP_JOB_ID, runAt: ctx.clock.now() + firstInMs }).catch(() => undefined);
}

/** The admin view: each rule with its keep time and where it comes from, and the last sweep. */
export async function retentionView(ctx: Ctx) {
  const policy = await currentPolicy(ctx);
  return {
    object: 'retention' as const,
    sweep_every: formatKeep(SWEEP_EVERY_MS),
    batch_size: BATCH,
    rules: [...policy].map(([rule, keep]) => ({
      name: rule.name,
      description: rule.description,
      keep: formatKeep(keep.ms),
      keep_ms: keep.ms,
      source: keep.source,
    })),
    last_sweep: (await store.readLastSweep<SweepReport>(ctx.store.db)) ?? null,
  };
}

/** Stores the config file's `retention` section (checked against the known rules first). */
export async function applyRetentionConfig(ctx: Ctx, tx: Parameters<typeof store.writeConfiguredPolicy>[0], value: Record<string, string>) {
  const rules = allRules(ctx);
  for (const name of Object.keys(value))
    if (!rules.some((r) => r.name === name))
      throw invalid(
        `retention: unknown record kind '${name}'; known: ${rules.map((r) => r.name).join(', ')}.`,
        `retention.${name}`,
        'invalid_config',
      );
  await store.writeConfiguredPolicy(tx, value);
}
