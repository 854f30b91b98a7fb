import type { Kysely, Migration } from 'kysely';

/** The items of stored responses: each input item and output item a row, with an id (input_items, item_reference). */
export interface ResponseItemsTables {
  response_items: {
    response_id: string;
    /** `input` or `output`. */
    kind: string;
    /** Position within the response's input, or within its output. */
    seq: number;
    /** The item's id (`msg_…`, `fc_…`). */
    id: string;
    project_id: string;
    /** The item as listed (ItemResource), JSON. */
    item: string;
    /** The chat message the model saw for it (its images and files already read), JSON; null for an item it does not see. */
    message: string | null;
  };
}

export const responseItemsMigrations: Record<string, Migration> = {
  '202611282200_response_items': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('response_items')
        .addColumn('response_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('item', 'text', (c) => c.notNull())
        .addColumn('message', 'text')
        .addPrimaryKeyConstraint('response_items_pk', ['response_id', 'kind', 'seq'])
        .execute();
      await db.schema.createIndex('response_items_item').on('response_items').columns(['project_id', 'id']).execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends ResponseItemsTables {}
}
