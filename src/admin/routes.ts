import { Type } from 'typebox';
import { parseDuration } from '../core/clock.js';
import { invalid, notFound } from '../core/errors.js';
import { absentBodyIsEmpty } from '../core/validation.js';
import type { App, Ctx } from '../core/module.js';
import { resetClock, saveClock } from './clock-store.js';
import { applyConfig, configSchema } from './config-file.js';
import { resetState } from './reset.js';
import { restoreBaseline } from './baseline.js';
import { ClockView, LoggedRequestDetail, RequestList } from './schemas.js';

const AdvanceBody = Type.Object(
  {
    seconds: Type.Optional(Type.Number({ minimum: 0, maximum: 3.2e9 })),
    duration: Type.Optional(Type.String({ maxLength: 40, description: 'e.g. 72h, 15m, 1d2h' })),
  },
  { additionalProperties: false },
);
const RequestsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
    path: Type.Optional(Type.String({ maxLength: 500, description: 'part of the path' })),
    status: Type.Optional(Type.String({ pattern: '^([1-5][0-9][0-9]|[1-5]xx)$', description: 'a status (429) or a class (4xx)' })),
    credential_id: Type.Optional(
      Type.String({ maxLength: 200, description: 'the key (or token) that made the request; admin for the control plane' }),
    ),
    since: Type.Optional(Type.Integer({ minimum: 0, description: 'Unix seconds (Standin clock), inclusive' })),
    until: Type.Optional(Type.Integer({ minimum: 0, description: 'Unix seconds (Standin clock), inclusive' })),
    after: Type.Optional(Type.String({ maxLength: 100, description: 'only requests newer than this request id (live views)' })),
  },
  { additionalProperties: false },
);
const RequestParams = Type.Object({ request_id: Type.String({ maxLength: 100 }) });
const ListenerList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Object({ name: Type.String({ description: 'http, widgets, mtls_token or mtls_api' }), url: Type.String() })),
});
const ResetBody = Type.Object(
  { clock: Type.Optional(Type.Boolean({ description: 'also put the clock back to the real time (default false)' })) },
  { additionalProperties: false },
);
const ResetView = Type.Object({ object: Type.Literal('reset'), reset: Type.Boolean(), printed: Type.Array(Type.String()) });
const ConfigView = Type.Object({ object: Type.Literal('config'), applied: Type.Boolean() });
const AnyObject = Type.Object({}, { additionalProperties: true });

/** The control plane's own routes under /admin/v1: clock, reset, request log, config. */
export function adminRoutes(app: App, ctx: Ctx): void {
  const clockView = () => ({
    object: 'clock' as const,
    now: ctx.clock.nowSeconds(),
    now_ms: ctx.clock.now(),
    offset_ms: ctx.clock.offsetMs(),
  });

  app.get('/clock', { schema: { response: { 200: ClockView } } }, async () => clockView());
  app.post('/clock/advance', { schema: { body: AdvanceBody, response: { 200: ClockView } } }, async (req) => {
    const { seconds, duration } = req.body;
    if ((seconds === undefined) === (duration === undefined)) throw invalid("Give exactly one of 'seconds' or 'duration'.", 'seconds');
    let ms: number;
    try {
      ms = seconds !== undefined ? seconds * 1000 : parseDuration(duration!);
    } catch (err) {
      throw invalid(`'duration': ${(err as Error).message}.`, 'duration');
    }
    try {
      ctx.clock.advance(Math.round(ms));
    } catch (err) {
      throw invalid(
        `'${seconds !== undefined ? 'seconds' : 'duration'}': ${(err as Error).message}.`,
        seconds !== undefined ? 'seconds' : 'duration',
      );
    }
    // Answer once the moved clock is stored: a restart, or another instance, must see it.
    await saveClock(ctx);
    return clockView();
  });
  app.get('/listeners', { schema: { response: { 200: ListenerList } } }, async () => ({
    object: 'list' as const,
    data: Object.entries(ctx.listeners).map(([name, url]) => ({ name, url })),
  }));
  app.get('/requests', { schema: { querystring: RequestsQuery, response: { 200: RequestList } } }, async (req) => ({
    object: 'list' as const,
    data: ctx.services.requestLog.query(req.query),
  }));
  app.get('/requests/:request_id', { schema: { params: RequestParams, response: { 200: LoggedRequestDetail } } }, async (req) => {
    const found = ctx.services.requestLog.get(req.params.request_id);
    if (!found) throw notFound('request', req.params.request_id, 'request_id');
    return found;
  });
  app.post('/reset', { preValidation: absentBodyIsEmpty, schema: { body: ResetBody, response: { 200: ResetView } } }, async (req) => {
    await resetState(ctx);
    // All state is gone, so ids made from here on sort after none: the clock may go back too.
    if (req.body.clock) await resetClock(ctx);
    ctx.auth.forget();
    for (const m of ctx.modules) await m.reset?.(ctx);
    ctx.services.requestLog.clear();
    const lines = await restoreBaseline(ctx);
    // Every other instance drops what it holds in memory and reads the emptied (and re-seeded) state.
    await ctx.changes.bumpAll(ctx.store.db);
    return { object: 'reset' as const, reset: true, printed: lines.map((l) => l.trim()) };
  });
  app.get('/config/schema', { schema: { hide: true } }, async () => configSchema(ctx.modules));
  app.post('/config', { schema: { body: AnyObject, response: { 200: ConfigView } } }, async (req) => {
    try {
      await applyConfig(ctx, ctx.modules, req.body, { from: 'control_plane' });
    } catch (err) {
      if ((err as Error).message.startsWith('the config is not valid')) throw invalid((err as Error).message, null, 'invalid_config');
      throw err;
    }
    return { object: 'config' as const, applied: true };
  });
}
