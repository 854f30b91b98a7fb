import { Type, type Static, type TSchema } from 'typebox';
import { AnyObject } from '../core/schemas.js';
import { EVENT_TYPES } from './catalog.js';

const EventTypeSchema = Type.Union(
  EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'An event type of the platform spec.' },
);
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'Public http(s) URL that receives the POSTs.' });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  maxLength: 100,
  description: "A fixed 'whsec_' secret (base64 of 24 to 64 bytes) for local setups; generated when omitted.",
});

export const CreateEndpointBody = Type.Object(
  {
    name: Name,
    url: Url,
    event_types: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: EVENT_TYPES.length }),
    enabled: Type.Optional(Type.Boolean()),
    secret: Type.Optional(Secret),
  },
  { additionalProperties: false },
);

export const UpdateEndpointBody = Type.Object(
  {
    name: Type.Optional(Name),
    url: Type.Optional(Url),
    event_types: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: EVENT_TYPES.length })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const RotateBody = Type.Object(
  {
    grace_period_seconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 604800, description: 'How long the old secret keeps signing (default 86400).' }),
    ),
    secret: Type.Optional(Secret),
  },
  { additionalProperties: false },
);

const SipHeaderSchema = Type.Object(
  { name: Type.String({ maxLength: 256 }), value: Type.String({ maxLength: 8192 }) },
  { additionalProperties: false },
);

/** Data a caller may pin in a triggered or test event; the rest is made up. */
export const TriggerDataSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    sip_headers: Type.Optional(Type.Array(SipHeaderSchema, { maxItems: 200 })),
    sip_media_security: Type.Optional(
      Type.String({ maxLength: 32, description: "'rtp' or 'srtp'; anything else is unknown and omitted." }),
    ),
    safety_identifier: Type.Optional(Type.String({ maxLength: 64 })),
    category: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

export type TriggerData = Static<typeof TriggerDataSchema>;

export const TriggerBody = Type.Object(
  { type: Type.String({ maxLength: 64 }), data: Type.Optional(TriggerDataSchema) },
  { additionalProperties: false },
);

const Id = Type.String({ maxLength: 200 });
export const ProjectParams = Type.Object({ project_id: Id });
export const EndpointParams = Type.Object({ project_id: Id, endpoint_id: Id });
export const DeliveryParams = Type.Object({ project_id: Id, delivery_id: Id });

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    after: Type.Optional(Type.String({ maxLength: 200 })),
    before: Type.Optional(Type.String({ maxLength: 200 })),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')])),
  },
  { additionalProperties: false },
);

/** The project config section `webhooks`: endpoints declared by name (matched by name on re-apply). */
export const WebhooksConfig = Type.Array(
  Type.Object(
    {
      name: Name,
      url: Url,
      event_types: Type.Array(EventTypeSchema, { minItems: 1, maxItems: EVENT_TYPES.length }),
      enabled: Type.Optional(Type.Boolean()),
      secret: Type.Optional(Secret),
    },
    { additionalProperties: false },
  ),
  { maxItems: 100 },
);

// Replies.

const UnixSeconds = Type.Integer();
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const WebhookEndpointObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_endpoint'),
  project_id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  event_types: Type.Array(Type.String()),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  secret_hint: Type.String({ description: "The secret's prefix and last four characters." }),
  previous_secret_expires_at: nullable(UnixSeconds),
  created_at: UnixSeconds,
  updated_at: UnixSeconds,
  secret: Type.Optional(Type.String({ description: 'Only in the answer that created the endpoint or rotated its secret.' })),
});

/** The webhook event envelope (spec section B). */
export const EventEnvelopeObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('event'),
  type: Type.String(),
  created_at: UnixSeconds,
  data: AnyObject,
});

export const WebhookAttemptObject = Type.Object({
  object: Type.Literal('webhook_attempt'),
  attempt: Type.Integer(),
  started_at: UnixSeconds,
  duration_ms: Type.Number(),
  status_code: nullable(Type.Integer()),
  ok: Type.Boolean(),
  error: nullable(Type.String()),
  response_excerpt: nullable(Type.String()),
  response_truncated: Type.Boolean(),
});

export const WebhookDeliveryObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_delivery'),
  endpoint_id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  attempt_count: Type.Integer(),
  created_at: UnixSeconds,
  next_attempt_at: nullable(UnixSeconds),
  last_attempt_at: nullable(UnixSeconds),
  last_status_code: nullable(Type.Integer()),
  completed_at: nullable(UnixSeconds),
  attempts: Type.Optional(Type.Array(WebhookAttemptObject)),
  event: Type.Optional(EventEnvelopeObject),
});

export const EventTypeList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Object({ type: Type.String(), deprecated: Type.Boolean() })),
});

export const WebhookTestObject = Type.Object({
  object: Type.Literal('webhook_test'),
  event: EventEnvelopeObject,
  delivery_id: Type.String(),
});

export const ObjectEventsQuery = Type.Object(
  {
    object_id: Type.Union(
      [
        Type.String({ minLength: 1, maxLength: 200 }),
        Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 20 }),
      ],
      {
        description: 'The id of the object (a response, a batch, a run …); repeat it for several.',
      },
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);

/** An event with its project and its deliveries. */
export const ObjectEventObject = Type.Object({
  object: Type.Literal('object_event'),
  project_id: Type.String(),
  event: EventEnvelopeObject,
  deliveries: Type.Array(WebhookDeliveryObject),
});

export const EventParams = Type.Object({ event_id: Type.String({ minLength: 1, maxLength: 200 }) });

export const ObjectEventList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(ObjectEventObject),
});
