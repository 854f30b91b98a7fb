import { Type, type Static, type TSchema } from 'typebox';
import { PageParams } from '../core/schemas.js';
import { ResponseObject } from './schemas.js';

/** Shapes of the control plane's views of stored responses (admin-routes.ts), for the dashboard. */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** A stored response as the dashboard lists it: what it was, how it ended and what it cost, without its output. */
export const AdminResponseSummary = Type.Object({
  id: Type.String(),
  object: Type.Literal('response'),
  status: ResponseObject.properties.status,
  model: Type.String(),
  created_at: Type.Integer({ description: 'Unix seconds.' }),
  completed_at: Nullable(Type.Integer()),
  background: Type.Boolean(),
  usage: ResponseObject.properties.usage,
  error: ResponseObject.properties.error,
  incomplete_details: ResponseObject.properties.incomplete_details,
  previous_response_id: Nullable(Type.String()),
  conversation_id: Nullable(Type.String()),
  /** The type of each output item, in order (`reasoning`, `message`, `function_call` …). */
  output_types: Type.Array(Type.String()),
});
export type AdminResponseSummary = Static<typeof AdminResponseSummary>;

export const AdminResponseList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(AdminResponseSummary),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
  has_more: Type.Boolean(),
});

/** `limit` 1–100 (default 20), `order`, `after`, `before`, and a `status` to keep. */
export const AdminResponsesQuery = Type.Object(
  { ...PageParams, status: Type.Optional(ResponseObject.properties.status) },
  { additionalProperties: false },
);

/** The stream events kept of a background response created with `stream: true`, in order, from `after`. */
export const AdminResponseEvents = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(
    Type.Object({ sequence_number: Type.Integer(), type: Type.String(), event: Type.Record(Type.String(), Type.Unknown()) }),
  ),
  has_more: Type.Boolean(),
});

export const AdminEventsQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: -1, maximum: 1e9, description: 'only events after this sequence number' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
  },
  { additionalProperties: false },
);
