import type { Kysely, Migration } from 'kysely';

/** Stored responses of `POST /v1/responses`. */
export interface ResponsesTables {
  responses: {
    id: string;
    project_id: string;
    status: string;
    background: number;
    /** The response object, JSON. */
    payload: string;
    /** The conversation the model saw (chat messages, JSON), so `previous_response_id` can continue it. */
    messages: string;
    /** Unix seconds. */
    created_at: number;
    /** 1 for a background response created with `stream: true` (its events are kept for a while: stream.ts). */
    stream: number;
  };
}

export const responsesMigrations: Record<string, Migration> = {
  '202611220320_responses_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('responses')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('background', 'integer', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('messages', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('responses_project').on('responses').columns(['project_id', 'id']).execute();
    },
  },
  // Whether a response was streamed, so a stream asked for after retention dropped its events says so.
  '202611290110_responses_stream': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('responses')
        .addColumn('stream', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends ResponsesTables {}
}
