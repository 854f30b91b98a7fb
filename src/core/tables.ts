import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';

/** Tables every module shares through core services: settings, the job queue and the event outbox. */
export interface CoreTables {
  settings: { key: string; value: string };
  jobs: {
    id: string;
    kind: string;
    payload: string;
    /** Earliest time to run, Standin clock, ms. */
    run_at: number;
    attempts: number;
    /** Claims since the handler last ended: past the queue's `maxDeaths` + 1 the job is failed (core/jobs.ts). */
    open_claims: number;
    /** Claims that only looked whether held work may go on: not attempts (core/jobs.ts). */
    rechecks: number;
    locked_by: string | null;
    /** Claim expiry, Standin clock ms: a crashed worker's job is claimed again after it. */
    locked_until: number | null;
    created_at: number;
  };
  events: {
    id: string;
    project_id: string;
    type: string;
    created_at: number;
    /** The webhook envelope, JSON. */
    payload: string;
    /** The id of the object the event is about (`data.id` of the envelope), so a request's effects can be found. */
    object_id: string | null;
  };
  /** One generation per concern of in-memory state that every instance follows (core/changes.ts). */
  change_signals: { concern: string; generation: number };
}

export const coreMigrations: Record<string, Migration> = {
  '202611220000_core_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('run_at', 'bigint', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('locked_by', 'text')
        .addColumn('locked_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('jobs_due').on('jobs').columns(['kind', 'run_at']).execute();
      await db.schema
        .createTable('events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_project').on('events').columns(['project_id', 'id']).execute();
      void sql;
    },
  },
  '202611231200_core_change_signals': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('change_signals')
        .addColumn('concern', 'text', (c) => c.primaryKey())
        .addColumn('generation', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  // Events written before this migration get theirs from their envelope, as new ones do (core/events.ts):
  // `data.id` when it is a string.
  '202611231400_core_events_object': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('events').addColumn('object_id', 'text').execute();
      const objectId =
        db.getExecutor().adapter instanceof PostgresAdapter
          ? sql`case when jsonb_typeof(payload::jsonb -> 'data' -> 'id') = 'string' then payload::jsonb -> 'data' ->> 'id' end`
          : sql`case when json_type(payload, '$.data.id') = 'text' then json_extract(payload, '$.data.id') end`;
      await db.updateTable('events').set({ object_id: objectId }).execute();
      await db.schema.createIndex('events_object').on('events').columns(['object_id', 'id']).execute();
    },
  },
  // Jobs claimed before this migration start at 0: a job that was crash-looping gets its full count again.
  '202611261300_core_jobs_open_claims': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('jobs')
        .addColumn('open_claims', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  // Rechecks of held work were counted as attempts before this migration; from here on they are not.
  '202611261700_core_jobs_rechecks': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('jobs')
        .addColumn('rechecks', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  // The loop's look for its next due job reads each kind's claimed jobs by this index rather than every job.
  '202611291200_core_jobs_claimed': {
    async up(db: Kysely<any>) {
      await db.schema.createIndex('jobs_claimed').on('jobs').columns(['kind', 'locked_until']).execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends CoreTables {}
}
