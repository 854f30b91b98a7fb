import { Type } from 'typebox';

/** `POST /v1/images/request_audit`: why, and which generations (optional). */
export const AuditRequestBody = Type.Object(
  {
    reason: Type.String({ minLength: 1, maxLength: 1000 }),
    image_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
  },
  { additionalProperties: false },
);

/** An audit request as recorded. */
export const AuditRequestObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('image.audit_request'),
  status: Type.Literal('received'),
  reason: Type.String(),
  image_ids: Type.Array(Type.String()),
  project_id: Type.String(),
  created_at: Type.Integer(),
});
