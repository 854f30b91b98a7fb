import type { Kysely, Migration } from 'kysely';

/** The stream events of background responses created with `stream: true`, and the instance's sealing key. */
export interface ResponseStreamTables {
  response_events: {
    response_id: string;
    /** The event's `sequence_number`. */
    seq: number;
    /** The event, JSON, as written on the wire. */
    data: string;
    /** Milliseconds (core/clock), for retention. */
    created_at: number;
  };
  response_secrets: {
    name: string;
    /** base64. */
    value: string;
  };
}

export const responseStreamMigrations: Record<string, Migration> = {
  '202611282200_response_events': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('response_events')
        .addColumn('response_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('response_events_pk', ['response_id', 'seq'])
        .execute();
      await db.schema
        .createTable('response_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends ResponseStreamTables {}
}
