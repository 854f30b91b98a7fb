import { Type } from 'typebox';
import { KEEP_PATTERN } from './policy.js';

const Keep = Type.String({ pattern: KEEP_PATTERN, maxLength: 40, description: "'off' (kept until deleted) or a duration: 30d, 72h, 90m" });

/** The config file's root `retention` section: record kind → how long it is kept. */
export const RetentionConfig = Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }), Keep, {
  description: 'How long records are kept, per record kind (docs/retention.md): webhook_deliveries, run_events, workload_exchanges …',
  maxProperties: 100,
});

const SweepLine = Type.Object({ name: Type.String(), keep: Type.String(), deleted: Type.Integer() });

export const SweepReportView = Type.Object({
  object: Type.Literal('retention.sweep'),
  at: Type.Integer({ description: 'Standin clock, Unix seconds' }),
  rules: Type.Array(SweepLine),
  more: Type.Boolean({ description: 'the time budget ran out before every rule was done; the job comes back at once' }),
});

export const RetentionView = Type.Object({
  object: Type.Literal('retention'),
  sweep_every: Type.String(),
  batch_size: Type.Integer(),
  rules: Type.Array(
    Type.Object({
      name: Type.String(),
      description: Type.String(),
      keep: Type.String({ description: "'off' or a duration" }),
      keep_ms: Type.Union([Type.Integer(), Type.Null()]),
      source: Type.Union([Type.Literal('default'), Type.Literal('setting'), Type.Literal('config')]),
    }),
  ),
  last_sweep: Type.Union([SweepReportView, Type.Null()]),
});
