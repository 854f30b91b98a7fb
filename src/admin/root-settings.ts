import { randomBytes } from 'node:crypto';
import type { Ctx } from '../core/module.js';
import type { Exec } from '../store/db.js';

/**
 * The root settings of the config file that make an instance itself: the admin key, `trust_proxy` and
 * `vendor`. Applied on one instance (the config file at its start, or `POST /admin/v1/config`), they are
 * saved in the store's `settings` and every instance on the store runs them (`ctx.changes`, concern
 * `root_settings`), as the models config and the rate-limit catalog are. An admin key or `trust_proxy`
 * given by a flag or the environment still wins on its instance; `--vendor` is the value until a config
 * sets one. A setting the store no longer has (after a reset) is the instance's start value again.
 */
export const ROOT_SETTINGS = 'root_settings';
/** The `settings` keys. The admin key's is also where a generated key is kept. */
const KEYS = { adminKey: 'admin_key', trustProxy: 'config.trust_proxy', vendor: 'config.vendor' } as const;

export type RootSetting = keyof typeof KEYS;

/** Saves one setting in `tx` (the config's transaction) and signals every instance to follow it. */
export async function saveRootSetting(ctx: Ctx, tx: Exec, name: RootSetting, value: string): Promise<void> {
  await tx
    .insertInto('settings')
    .values({ key: KEYS[name], value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
  await ctx.changes.bump(tx, ROOT_SETTINGS);
}

/**
 * The admin key at start: the setting, else the one kept in the store (applied by a config, or generated
 * on a first start and printed) — a fresh one is generated only while Standin listens on loopback (main
 * refuses other addresses without a key set by the operator).
 */
export async function resolveAdminKey(ctx: Ctx): Promise<{ key: string; generated: boolean }> {
  if (ctx.settings.adminKey) return { key: ctx.settings.adminKey, generated: false };
  const key = `sk-admin-${randomBytes(24).toString('base64url')}`;
  await ctx.store.db
    .insertInto('settings')
    .values({ key: KEYS.adminKey, value: key })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const winner = await ctx.store.db.selectFrom('settings').select('value').where('key', '=', KEYS.adminKey).executeTakeFirstOrThrow();
  return { key: winner.value, generated: true };
}

/**
 * Runs the saved root settings on this instance: at start, and whenever an instance applied one. Each
 * setting given by a flag or the environment is left as it is.
 */
export function followRootSettings(ctx: Ctx): () => Promise<void> {
  const startVendor = ctx.settings.vendor;
  return async () => {
    const rows = await ctx.store.db.selectFrom('settings').select(['key', 'value']).where('key', 'in', Object.values(KEYS)).execute();
    const saved = (name: RootSetting) => rows.find((r) => r.key === KEYS[name])?.value;
    const adminKey = saved('adminKey');
    if (!ctx.settings.adminKey && adminKey) ctx.auth.setAdminKey(adminKey);
    ctx.settings.vendor = saved('vendor') ?? startVendor;
    if (!ctx.settings.trustProxy) {
      const trustProxy = saved('trustProxy');
      try {
        ctx.services.proxyTrust.set(trustProxy === undefined ? [] : (JSON.parse(trustProxy) as string[]));
      } catch (err) {
        ctx.log.error({ err }, 'the trust_proxy another instance saved is not usable here; keeping the last one');
      }
    }
  };
}
