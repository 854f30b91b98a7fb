import type { Kysely, Migration } from 'kysely';

/** Conversations (`/v1/conversations`) and their items, one row per item, in order. */
export interface ConversationsTables {
  conversations: {
    id: string;
    project_id: string;
    /** JSON object of string pairs. */
    metadata: string;
    /** Unix seconds. */
    created_at: number;
    /** The position the next item takes: reserved by an update, so two appends never collide. */
    next_seq: number;
  };
  conversation_items: {
    conversation_id: string;
    seq: number;
    /** The item's id (`msg_…`, `fc_…`). */
    id: string;
    project_id: string;
    /** The item as listed (ItemResource), JSON. */
    item: string;
    /** The chat message the model sees for it (images and files already read), JSON; null for one it does not see. */
    message: string | null;
  };
}

export const conversationsMigrations: Record<string, Migration> = {
  '202611282210_conversations_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('conversations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('next_seq', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('conversation_items')
        .addColumn('conversation_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('item', 'text', (c) => c.notNull())
        .addColumn('message', 'text')
        .addPrimaryKeyConstraint('conversation_items_pk', ['conversation_id', 'seq'])
        .execute();
      await db.schema.createIndex('conversation_items_id').on('conversation_items').columns(['conversation_id', 'id']).execute();
      await db.schema.createIndex('conversation_items_project').on('conversation_items').columns(['project_id', 'id']).execute();
    },
  },
  // The dashboard lists a project's conversations newest first.
  '202611290100_conversations_project': {
    async up(db: Kysely<any>) {
      await db.schema.createIndex('conversations_project').on('conversations').columns(['project_id', 'id']).execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends ConversationsTables {}
}
