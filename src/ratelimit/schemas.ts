import { Type } from 'typebox';
import { AnyObject } from '../core/schemas.js';
import { TIERS } from './catalog.js';
import { ERROR_TYPES } from './faults.js';

const positive = (description: string) => Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1e15, description }));

export const TierName = Type.Enum(TIERS);

/** Limits of one model for one tier; a metric left out is not limited. */
export const LimitsSchema = Type.Object(
  {
    rpm: positive('requests per minute'),
    rpd: positive('requests per day'),
    tpm: positive('tokens per minute'),
    tpd: positive('tokens per day'),
    ipm: positive('images per minute'),
    audio_mpm: positive('audio minutes per minute'),
    batch_queue_tokens: positive('input tokens the pending batches of the organization may hold for the model (rule 4)'),
  },
  { additionalProperties: false },
);

const TierLimits = Type.Object(Object.fromEntries(TIERS.map((t) => [t, Type.Optional(LimitsSchema)])), { additionalProperties: false });

const PriceSchema = Type.Object(
  {
    input_per_million: Type.Optional(Type.Number({ minimum: 0 })),
    output_per_million: Type.Optional(Type.Number({ minimum: 0 })),
    per_image: Type.Optional(Type.Number({ minimum: 0 })),
    per_audio_minute: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false, description: 'Dollars, for the monthly usage limit.' },
);

const entryFields = {
  tiers: TierLimits,
  long_context: Type.Optional(
    Type.Object(
      { threshold_tokens: Type.Integer({ minimum: 1 }), tiers: TierLimits },
      {
        additionalProperties: false,
        description: 'Requests with more estimated input tokens than the threshold count against these limits instead.',
      },
    ),
  ),
  concurrency: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description: 'In-flight requests of this model across all organizations; beyond: 503 server_is_overloaded.',
    }),
  ),
  price: Type.Optional(PriceSchema),
};

const ModelName = Type.String({ minLength: 1, maxLength: 200 });
const OverridesSchema = Type.Record(ModelName, LimitsSchema, { description: 'Per model or shared-limit group name, or `*` for all.' });

export const OrganizationLimitsSchema = Type.Object(
  {
    tier: Type.Optional(TierName),
    paid_usd: Type.Optional(Type.Number({ minimum: 0, description: 'Picks the tier by qualification when tier is not set.' })),
    usage_limit_usd: Type.Optional(Type.Number({ minimum: 0, description: 'Monthly usage limit; default: the tier’s.' })),
    models: Type.Optional(OverridesSchema),
  },
  { additionalProperties: false },
);

export const ProjectLimitsSchema = Type.Object({ models: Type.Optional(OverridesSchema) }, { additionalProperties: false });

const Duration = Type.String({ pattern: '^(\\d+(\\.\\d+)?(ms|s|m|h|d))+$', maxLength: 40 });

export const RateLimitsConfigSchema = Type.Object(
  {
    replace_defaults: Type.Optional(Type.Boolean({ description: 'Drop the built-in models and groups.' })),
    default_tier: Type.Optional(TierName),
    usage_tiers: Type.Optional(
      Type.Object(
        Object.fromEntries(
          TIERS.map((t) => [
            t,
            Type.Optional(
              Type.Object(
                {
                  qualification_usd: Type.Optional(Type.Number({ minimum: 0 })),
                  usage_limit_usd: Type.Optional(Type.Number({ minimum: 0 })),
                },
                { additionalProperties: false },
              ),
            ),
          ]),
        ),
        { additionalProperties: false },
      ),
    ),
    models: Type.Optional(
      Type.Record(ModelName, Type.Object(entryFields, { additionalProperties: false }), {
        description: 'Per model (a name, `prefix*`, or `*` for any other model).',
      }),
    ),
    groups: Type.Optional(
      Type.Record(
        ModelName,
        Type.Object({ models: Type.Array(ModelName, { minItems: 1, maxItems: 1000 }), ...entryFields }, { additionalProperties: false }),
        {
          description: 'Shared-limit groups: every model listed counts against one limit.',
        },
      ),
    ),
    organizations: Type.Optional(Type.Record(Type.String({ pattern: '^org_[A-Za-z0-9_-]+$' }), OrganizationLimitsSchema)),
    projects: Type.Optional(Type.Record(Type.String({ pattern: '^proj_[A-Za-z0-9_-]+$' }), ProjectLimitsSchema)),
    ramp: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          threshold_tpm: Type.Optional(Type.Number({ minimum: 0 })),
          growth: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100 })),
          period: Type.Optional(Duration),
          window: Type.Optional(Duration),
        },
        { additionalProperties: false },
      ),
    ),
    overload_retry_after: Type.Optional(Duration),
    concurrency_lease_ttl: Type.Optional(Duration),
    fine_tuning: Type.Optional(
      Type.Object(
        {
          models: Type.Optional(Type.Array(ModelName, { maxItems: 1000 })),
          tiers: Type.Optional(
            Type.Object(
              Object.fromEntries(
                TIERS.map((t) => [
                  t,
                  Type.Optional(
                    Type.Object(
                      {
                        max_active_jobs: Type.Integer({ minimum: 0 }),
                        max_jobs_per_day: Type.Integer({ minimum: 0 }),
                        max_training_tokens_per_day: Type.Integer({ minimum: 0 }),
                      },
                      { additionalProperties: false },
                    ),
                  ),
                ]),
              ),
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const faultStatus = (options: { description?: string } = {}) =>
  Type.Union([Type.Literal(429), Type.Literal(503), Type.Literal(500)], options);
const ErrorTypeSchema = Type.Enum(ERROR_TYPES, {
  description:
    "An error type of the error envelope; its status must be the fault's (429: rate_limit_error, insufficient_quota, or invalid_request_error as the platform once answered video requests; 503: service_unavailable_error; 500: server_error).",
});

export const FaultBody = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      maxLength: 500,
      pattern: '^/',
      description: 'A path prefix (`/v1/responses`) or a glob (`/v1/threads/*/runs`; `*` within a segment, `**` across).',
    }),
    method: Type.Optional(Type.Union(['*', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((m) => Type.Literal(m)))),
    status: Type.Optional(
      faultStatus({
        description:
          '429, 503 or 500; taken from `type` when omitted. Without a type: 429 slow_down, 503 server_is_overloaded, 500 server_error.',
      }),
    ),
    type: Type.Optional(ErrorTypeSchema),
    code: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z0-9_]+$' }), Type.Null()], {
        description: 'The error code (e.g. rate_limit_exceeded, insufficient_quota); default: the usual code of the type.',
      }),
    ),
    message: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1000, description: "The error message; default: the platform's message for the code." }),
    ),
    count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100_000, description: 'How many matching requests fail (default 1), across all instances.' }),
    ),
    retry_after: Type.Optional(
      Type.Number({ minimum: 0, maximum: 60, description: 'Seconds sent as Retry-After / retry-after-ms; omitted: no Retry-After.' }),
    ),
    probability: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 1,
        description: 'Chance that a matching request is taken (default 1); one not taken passes and uses none of the count.',
      }),
    ),
    seed: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 2_147_483_647,
        description: 'Makes the rolls of `probability` repeatable: the same matching requests are taken on every run.',
      }),
    ),
    latency_ms: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 60_000,
        description: 'Milliseconds a taken request waits before its answer; with no status or type the fault only delays.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const FaultParams = Type.Object({ fault_id: Type.String({ maxLength: 100 }) });
export const OrganizationParams = Type.Object({ org_id: Type.String({ maxLength: 200 }) });

// Replies.

export const FaultObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('admin.fault'),
  path: Type.String(),
  method: Type.String(),
  status: Type.Union([faultStatus(), Type.Null()], { description: 'Null: the fault only delays.' }),
  type: Type.Union([ErrorTypeSchema, Type.Null()]),
  code: Type.Union([Type.String(), Type.Null()]),
  message: Type.Union([Type.String(), Type.Null()]),
  remaining: Type.Integer(),
  retry_after: Type.Union([Type.Number(), Type.Null()]),
  probability: Type.Number(),
  seed: Type.Union([Type.Integer(), Type.Null()]),
  latency_ms: Type.Integer(),
  created_at: Type.Integer(),
});

export const FaultsCleared = Type.Object({ object: Type.Literal('admin.faults.cleared'), deleted: Type.Integer() });

export const RateLimitsView = Type.Object({
  object: Type.Literal('admin.rate_limits'),
  backend: Type.Union([Type.Literal('memory'), Type.Literal('redis')]),
  config: AnyObject,
});

export const OrganizationRateLimitsView = Type.Object({
  object: Type.Literal('admin.organization_rate_limits'),
  organization_id: Type.String(),
  tier: TierName,
  usage_limit_usd: Type.Number(),
  usage_this_month_usd: Type.Number(),
  overrides: Type.Record(Type.String(), AnyObject),
});

export const RateLimitsReset = Type.Object({
  object: Type.Literal('admin.rate_limits.reset'),
  backend: Type.Union([Type.Literal('memory'), Type.Literal('redis')]),
});

/** One entry of GET /v1/fine_tuning/model_limits. */
export const FineTuningModelLimit = Type.Object({
  object: Type.Literal('fine_tuning.model_limit'),
  model: Type.String(),
  tier: TierName,
  max_active_jobs: Type.Integer(),
  max_jobs_per_day: Type.Integer(),
  max_training_tokens_per_day: Type.Integer(),
});

export const HistoryQuery = Type.Object(
  {
    minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1440, description: 'How far back (default 10)' })),
    bucket_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: 'Width of a point (default 10)' })),
  },
  { additionalProperties: false },
);
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);
export const HistoryView = Type.Object({
  object: Type.Literal('admin.rate_limit_history'),
  from: Type.Integer({ description: 'Unix seconds (Standin clock) of the first point' }),
  to: Type.Integer(),
  bucket_seconds: Type.Integer(),
  series: Type.Array(
    Type.Object({
      model: Type.String({
        description:
          "The request body's model, else the answering route's path template (/v1/threads/{thread_id}/runs) when the body was not read",
      }),
      points: Type.Array(
        Type.Object({
          t: Type.Integer(),
          requests: Type.Integer(),
          status_429: Type.Integer(),
          status_503: Type.Integer(),
          limit_requests: NullableInt,
          remaining_requests: NullableInt,
          limit_tokens: NullableInt,
          remaining_tokens: NullableInt,
        }),
      ),
    }),
  ),
});
