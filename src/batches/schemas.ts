import { Type, type Static } from 'typebox';
import { ListOf, Metadata, PageParams } from '../core/schemas.js';

/** Endpoints of the OpenAPI document's enum; Standin runs the first three (the others are refused with `param: endpoint`). */
export const BATCH_ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/embeddings',
  '/v1/responses',
  '/v1/completions',
  '/v1/moderations',
  '/v1/images/generations',
  '/v1/images/edits',
  '/v1/videos',
] as const;
export const RUNNABLE_ENDPOINTS: readonly string[] = BATCH_ENDPOINTS.slice(0, 3);

export const BATCH_STATUSES = [
  'validating',
  'failed',
  'in_progress',
  'finalizing',
  'completed',
  'expired',
  'cancelling',
  'cancelled',
] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** `POST /v1/batches` (CreateBatchRequest). */
export const CreateBatchBody = Type.Object(
  {
    input_file_id: Type.String({ minLength: 1, maxLength: 256 }),
    endpoint: Type.Enum([...BATCH_ENDPOINTS]),
    completion_window: Type.Enum(['24h']),
    metadata: Type.Optional(Metadata),
    output_expires_after: Type.Optional(
      Type.Object(
        { anchor: Type.Literal('created_at'), seconds: Type.Integer({ minimum: 3600, maximum: 2_592_000 }) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateBatchBody = Static<typeof CreateBatchBody>;

const Seconds = Type.Union([Type.Integer(), Type.Null()]);

/** One problem of a refused input file (BatchError). */
export const BatchError = Type.Object({
  code: Type.String(),
  message: Type.String(),
  param: Type.Union([Type.String(), Type.Null()]),
  line: Type.Union([Type.Integer(), Type.Null()]),
});
export type BatchError = Static<typeof BatchError>;

/** The batch object (Batch). */
export const BatchObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('batch'),
  endpoint: Type.String(),
  model: Type.Union([Type.String(), Type.Null()]),
  errors: Type.Union([Type.Object({ object: Type.Literal('list'), data: Type.Array(BatchError) }), Type.Null()]),
  input_file_id: Type.String(),
  completion_window: Type.String(),
  status: Type.Enum([...BATCH_STATUSES]),
  output_file_id: Type.Union([Type.String(), Type.Null()]),
  error_file_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.Integer(),
  in_progress_at: Seconds,
  expires_at: Seconds,
  finalizing_at: Seconds,
  completed_at: Seconds,
  failed_at: Seconds,
  expired_at: Seconds,
  cancelling_at: Seconds,
  cancelled_at: Seconds,
  request_counts: Type.Object({ total: Type.Integer(), completed: Type.Integer(), failed: Type.Integer() }),
  usage: Type.Object({
    input_tokens: Type.Integer(),
    input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
    output_tokens: Type.Integer(),
    output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
    total_tokens: Type.Integer(),
  }),
  metadata: Metadata,
});
export type BatchObject = Static<typeof BatchObject>;

export const BatchList = ListOf(BatchObject);
export const BatchParams = Type.Object({ batch_id: Type.String({ maxLength: 256 }) });
export const ListBatchesQuery = Type.Object(PageParams, { additionalProperties: false });

/** The batch object with `progress`: (completed + failed) / total, 0 while the total is not known (the control plane's). */
export const AdminBatch = Type.Object({
  ...BatchObject.properties,
  progress: Type.Number({ minimum: 0, maximum: 1, description: '(completed + failed) / total; 0 while the total is not known' }),
});
