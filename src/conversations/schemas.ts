import { Type, type Static } from 'typebox';
import { InputItem, IncludeParam } from '../responses/types.js';

/** Request and reply shapes of `/v1/conversations` (the Conversations operations of the OpenAPI document). */
const Metadata = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), { maxProperties: 16 });
/** The document's limit on items added at once. */
const Items = Type.Array(InputItem, { maxItems: 20 });

export const CreateConversationBody = Type.Object(
  {
    metadata: Type.Optional(Type.Union([Metadata, Type.Null()])),
    items: Type.Optional(Type.Union([Items, Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateConversationBody = Static<typeof CreateConversationBody>;

export const UpdateConversationBody = Type.Object({ metadata: Type.Union([Metadata, Type.Null()]) }, { additionalProperties: false });
export type UpdateConversationBody = Static<typeof UpdateConversationBody>;

export const CreateItemsBody = Type.Object({ items: Items }, { additionalProperties: false });
export type CreateItemsBody = Static<typeof CreateItemsBody>;

export const IncludeQuery = Type.Object({ include: IncludeParam, 'include[]': IncludeParam }, { additionalProperties: false });

export const ConversationParams = Type.Object({ conversation_id: Type.String({ maxLength: 200 }) });
export const ItemParams = Type.Object({ conversation_id: Type.String({ maxLength: 200 }), item_id: Type.String({ maxLength: 200 }) });

export { ConversationObject } from './objects.js';

export const ConversationDeleted = Type.Object({
  id: Type.String(),
  object: Type.Literal('conversation.deleted'),
  deleted: Type.Boolean(),
});
