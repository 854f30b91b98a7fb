import type { Ctx, Module } from '../core/module.js';
import { createApiKey, upsertOrganization, upsertProject } from '../identity/service.js';

export const DEMO = { organizationId: 'org_demo', projectId: 'proj_demo' };
const SEEDED = 'seeded_at';

/** Whether this store has had its first-start demo (or a seed was already begun by another instance). */
export async function isSeeded(ctx: Ctx): Promise<boolean> {
  return !!(await ctx.store.db.selectFrom('settings').select('value').where('key', '=', SEEDED).executeTakeFirst());
}

/**
 * First start: a demo organization, project and platform API key, and each module's demo data. Runs
 * once per store (remembered in settings). Returns the lines to print (the new keys, shown once).
 */
export async function seedDemo(ctx: Ctx, modules: readonly Module[]): Promise<string[] | null> {
  const db = ctx.store.db;
  if (await isSeeded(ctx)) return null;
  const lines = await db.transaction().execute(async (tx) => {
    // The marker goes in first: of several instances starting at once, only the one that inserts it seeds
    // (the others wait on its row, then insert nothing).
    const marked = await tx
      .insertInto('settings')
      .values({ key: SEEDED, value: String(ctx.clock.nowSeconds()) })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    if (!Number(marked.numInsertedOrUpdatedRows ?? 0)) return null;
    const org = await upsertOrganization(ctx, tx, { id: DEMO.organizationId, name: 'Demo organization' });
    const project = await upsertProject(ctx, tx, org.id, { id: DEMO.projectId, name: 'Demo project' });
    const key = await createApiKey(ctx, tx, { projectId: project.id, name: 'demo' });
    const out = [`  platform API key (project ${project.id}): ${key.value}`];
    for (const m of modules) if (m.seed) out.push(...(await m.seed(ctx, tx, DEMO)));
    return out;
  });
  ctx.jobs.wake();
  return lines;
}
