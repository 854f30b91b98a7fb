import type { Ctx } from '../core/module.js';
import { applyConfig, readConfigFile } from './config-file.js';
import { seedDemo } from './seed.js';

/** Reapplies the config file, or the demo seed, after a reset. Returns the lines to show. */
export async function restoreBaseline(ctx: Ctx): Promise<string[]> {
  if (ctx.settings.config) {
    await applyConfig(ctx, ctx.modules, readConfigFile(ctx.settings.config));
    return [];
  }
  if (ctx.settings.seed) return (await seedDemo(ctx, ctx.modules)) ?? [];
  return [];
}
