import type { Kysely, Migration } from 'kysely';

/** Per-project holds and pace of long-running work (batches, vector store ingestion). */
export interface HoldsTables {
  work_holds: {
    project_id: string;
    /** JSON array of the batch stages where this project's batches stop. */
    batch_hold_at: string;
    /** JSON object: stage → the least time (a duration, `10m`) of the Standin clock a batch spends in it. */
    batch_pace: string;
    /** `hold` or `run`. */
    ingestion: string;
  };
}

export const holdsMigrations: Record<string, Migration> = {
  '202611260300_work_holds_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('work_holds')
        .addColumn('project_id', 'text', (c) => c.primaryKey())
        .addColumn('batch_hold_at', 'text', (c) => c.notNull())
        .addColumn('batch_pace', 'text', (c) => c.notNull())
        .addColumn('ingestion', 'text', (c) => c.notNull())
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends HoldsTables {}
}
