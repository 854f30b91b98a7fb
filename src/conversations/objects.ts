import { Type, type Static } from 'typebox';

/** ConversationResource: apart from the request shapes, so the dashboard's wire types read it without the responses area. */
export const ConversationObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('conversation'),
  metadata: Type.Record(Type.String(), Type.String()),
  created_at: Type.Integer({ description: 'Unix seconds.' }),
});
export type ConversationObject = Static<typeof ConversationObject>;
