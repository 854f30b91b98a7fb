import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import type { Ctx } from '../core/context.js';
import { parseDuration } from '../core/clock.js';
import { invalid } from '../core/errors.js';
import type { Module } from '../server/module.js';
import type { RequestLog } from '../server/request-log.js';
import { applyConfig, configSchema, readConfigFile } from '../server/config-file.js';
import { seedDemo } from '../server/seed.js';
import { adminOf, createAdminGuard } from './guard.js';
import { resetState } from './reset.js';
import { saveClock } from '../server/clock-store.js';

const ADMIN_KEY = 'admin_key';

/**
 * The admin key: the setting, else one generated on first start and kept in the store — only while
 * Standin listens on loopback (main refuses other addresses without a key set by the operator).
 */
async function resolveAdminKey(ctx: Ctx): Promise<{ key: string; generated: boolean }> {
  if (ctx.settings.adminKey) return { key: ctx.settings.adminKey, generated: false };
  const saved = await ctx.store.db.selectFrom('settings').select('value').where('key', '=', ADMIN_KEY).executeTakeFirst();
  if (saved) return { key: saved.value, generated: true };
  const key = `sk-admin-${randomBytes(24).toString('base64url')}`;
  await ctx.store.db.insertInto('settings').values({ key: ADMIN_KEY, value: key }).onConflict((oc) => oc.column('key').doNothing()).execute();
  const winner = await ctx.store.db.selectFrom('settings').select('value').where('key', '=', ADMIN_KEY).executeTakeFirstOrThrow();
  return { key: winner.value, generated: true };
}

/** Reapplies the config file, or the demo seed, after a reset. Returns the lines to show. */
export async function restoreBaseline(ctx: Ctx): Promise<string[]> {
  const modules = ctx.services.modules as Module[];
  if (ctx.settings.config) {
    await applyConfig(ctx, modules, readConfigFile(ctx.settings.config));
    return [];
  }
  if (ctx.settings.seed) return (await seedDemo(ctx, modules)) ?? [];
  return [];
}

/** The control plane `/admin/v1`: clock, reset, request log, config. */
export const adminModule: Module = {
  name: 'admin',
  async init(ctx) {
    const { key, generated } = await resolveAdminKey(ctx);
    ctx.services.admin = createAdminGuard(key);
    ctx.services.adminKeyGenerated = generated;
  },
  config: [
    {
      at: 'root',
      key: 'admin_key',
      schema: Type.String({ minLength: 20, maxLength: 200, description: 'Key of the /admin/v1 control plane (STANDIN_ADMIN_KEY wins).' }),
      async apply(ctx, _tx, value: string) {
        if (ctx.settings.adminKey) return;
        adminOf(ctx).setKey(value);
        ctx.services.adminKeyGenerated = false;
      },
    },
    {
      at: 'root',
      key: 'vendor',
      schema: Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$', description: "The host's name (window.<vendor>, <vendor>/…); default 'vendor'; 'openai' runs apps and clients written for that platform unchanged." }),
      async apply(ctx, _tx, value: string) {
        ctx.settings.vendor = value;
      },
    },
  ],
  routes(app, ctx) {
    const guard = { onRequest: async (request: any) => adminOf(ctx).check(request) };
    const tags = ['admin'];
    const clockView = () => ({ object: 'clock', now: ctx.clock.nowSeconds(), now_ms: ctx.clock.now(), offset_ms: ctx.clock.offsetMs() });

    app.get('/admin/v1/clock', { ...guard, schema: { tags } }, async () => clockView());
    app.post(
      '/admin/v1/clock/advance',
      {
        ...guard,
        schema: {
          tags,
          body: Type.Object(
            { seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 3.2e9 })), duration: Type.Optional(Type.String({ maxLength: 40, description: 'e.g. 72h, 15m, 1d2h' })) },
            { additionalProperties: false },
          ),
        },
      },
      async (req) => {
        const { seconds, duration } = req.body as { seconds?: number; duration?: string };
        if ((seconds === undefined) === (duration === undefined)) throw invalid("Give exactly one of 'seconds' or 'duration'.", 'seconds');
        let ms: number;
        try {
          ms = seconds !== undefined ? seconds * 1000 : parseDuration(duration!);
        } catch (err) {
          throw invalid(`'duration': ${(err as Error).message}.`, 'duration');
        }
        ctx.clock.advance(Math.round(ms));
        // Answer once the moved clock is stored: a restart, or another instance, must see it.
        await saveClock(ctx);
        return clockView();
      },
    );
    app.get(
      '/admin/v1/requests',
      { ...guard, schema: { tags, querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }, { additionalProperties: false }) } },
      async (req) => ({ object: 'list', data: (ctx.services.requestLog as RequestLog).recent((req.query as any).limit ?? 100) }),
    );
    app.post('/admin/v1/reset', { ...guard, schema: { tags } }, async () => {
      await resetState(ctx);
      ctx.auth.forget();
      for (const m of ctx.services.modules as Module[]) await m.reset?.(ctx);
      (ctx.services.requestLog as RequestLog).clear();
      const lines = await restoreBaseline(ctx);
      return { object: 'reset', reset: true, printed: lines.map((l) => l.trim()) };
    });
    app.get('/admin/v1/config/schema', { schema: { tags, hide: true } }, async () => configSchema(ctx.services.modules as Module[]));
    app.get('/config.schema.json', { schema: { hide: true } }, async () => configSchema(ctx.services.modules as Module[]));
    app.post('/admin/v1/config', { ...guard, schema: { tags } }, async (req) => {
      try {
        await applyConfig(ctx, ctx.services.modules as Module[], req.body);
      } catch (err) {
        if ((err as Error).message.startsWith('the config is not valid')) throw invalid((err as Error).message, null, 'invalid_config');
        throw err;
      }
      return { object: 'config', applied: true };
    });
  },
};

