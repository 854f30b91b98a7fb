import type { Kysely, Migration } from 'kysely';

/** Batches (`/v1/batches`) and the result of each line run so far. */
export interface BatchesTables {
  batches: {
    id: string;
    project_id: string;
    organization_id: string;
    endpoint: string;
    /** The one model every line names (null when the file was refused before one was read). */
    model: string | null;
    input_file_id: string;
    completion_window: string;
    status: string;
    /** `{object: "list", data: [...]}` of a batch whose file was refused, JSON; else null. */
    errors: string | null;
    /** JSON, or null. */
    metadata: string | null;
    /** `output_expires_after.seconds`, or null: output and error files are kept until deleted. */
    output_expires_seconds: number | null;
    output_file_id: string | null;
    error_file_id: string | null;
    /** Unix seconds (Standin clock); null until the transition happens. */
    created_at: number;
    in_progress_at: number | null;
    expires_at: number;
    finalizing_at: number | null;
    completed_at: number | null;
    failed_at: number | null;
    expired_at: number | null;
    cancelling_at: number | null;
    cancelled_at: number | null;
    /** Requests (non-blank lines) of the input file. */
    lines: number;
    /** Requests done, in input order: the next to run is this index … */
    next_line: number;
    /** … and starts at this byte of the input file. */
    next_offset: number;
    completed: number;
    failed: number;
    input_tokens: number;
    output_tokens: number;
    /** Rule 4: the limit key the batch's estimated input tokens are held under, and how many (0 once it ended). */
    queue_key: string | null;
    queued_tokens: number;
  };
  /** One row per line run, committed with the batch's cursor; assembled into the output and error files at the end. */
  batch_results: {
    batch_id: string;
    /** The request's index in the input (0-based). */
    line: number;
    /** 1: the output file; 0: the error file. */
    ok: number;
    /** The output line, JSON. */
    json: string;
  };
}

export const batchesMigrations: Record<string, Migration> = {
  '202611250200_batches_init': {
    async up(db: Kysely<any>) {
      const nullableSeconds = [
        'in_progress_at',
        'finalizing_at',
        'completed_at',
        'failed_at',
        'expired_at',
        'cancelling_at',
        'cancelled_at',
      ];
      let t = db.schema
        .createTable('batches')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('model', 'text')
        .addColumn('input_file_id', 'text', (c) => c.notNull())
        .addColumn('completion_window', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('errors', 'text')
        .addColumn('metadata', 'text')
        .addColumn('output_expires_seconds', 'bigint')
        .addColumn('output_file_id', 'text')
        .addColumn('error_file_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull());
      for (const name of nullableSeconds) t = t.addColumn(name, 'bigint');
      await t
        .addColumn('lines', 'integer', (c) => c.notNull())
        .addColumn('next_line', 'integer', (c) => c.notNull())
        .addColumn('next_offset', 'bigint', (c) => c.notNull())
        .addColumn('completed', 'integer', (c) => c.notNull())
        .addColumn('failed', 'integer', (c) => c.notNull())
        .addColumn('input_tokens', 'bigint', (c) => c.notNull())
        .addColumn('output_tokens', 'bigint', (c) => c.notNull())
        .addColumn('queue_key', 'text')
        .addColumn('queued_tokens', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('batches_project').on('batches').columns(['project_id', 'id']).execute();
      await db.schema
        .createTable('batch_results')
        .addColumn('batch_id', 'text', (c) => c.notNull())
        .addColumn('line', 'integer', (c) => c.notNull())
        .addColumn('ok', 'integer', (c) => c.notNull())
        .addColumn('json', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('batch_results_pk', ['batch_id', 'line'])
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends BatchesTables {}
}
