import { Type, type TSchema } from 'typebox';

/**
 * Shapes every area's responses share, for routes' `response` schemas. Response schemas document the
 * API in `/openapi.json`; replies are serialized with JSON.stringify whatever they declare (a schema never
 * drops or coerces a field), and the tests check every JSON reply against its schema (`checkResponses`).
 */

/** A cursor page `{object: "list", data, first_id, last_id, has_more}`. */
export const ListOf = <T extends TSchema>(item: T) =>
  Type.Object({
    object: Type.Literal('list'),
    data: Type.Array(item),
    first_id: Type.Union([Type.String(), Type.Null()]),
    last_id: Type.Union([Type.String(), Type.Null()]),
    has_more: Type.Boolean(),
  });

/** The answer of a DELETE: `{id, object: "<thing>.deleted", deleted: true}`. */
export const Deleted = (object: string) => Type.Object({ id: Type.String(), object: Type.Literal(object), deleted: Type.Boolean() });

/** `metadata`: up to 16 string pairs, or null. */
export const Metadata = Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]);

/** The error envelope of `/v1`, `/ads/v1` and `/admin/v1`. */
export const ErrorEnvelope = Type.Object({
  error: Type.Object({
    message: Type.String(),
    type: Type.String(),
    param: Type.Union([Type.String(), Type.Null()]),
    code: Type.Union([Type.String(), Type.Null()]),
  }),
});

/** An object whose members this schema does not spell out (a config document, a passed-through JSON). */
export const AnyObject = Type.Object({}, { additionalProperties: true });

/** An id in a path (`/admin/v1/projects/{project_id}/…`): any length a real id has, no more. */
export const PathId = Type.String({ maxLength: 256 });
/** The path parameters of the per-project admin routes. */
export const ProjectParams = Type.Object({ project_id: PathId });

/**
 * The cursor list parameters of every list endpoint (`limit`, `order`, `after`, `before`), to spread into
 * a querystring schema; `limit`'s bounds are each list's own (paginate checks them).
 */
export const PageParams = {
  limit: Type.Optional(Type.Integer()),
  order: Type.Optional(Type.Enum(['asc', 'desc'])),
  after: Type.Optional(Type.String({ maxLength: 256 })),
  before: Type.Optional(Type.String({ maxLength: 256 })),
};
