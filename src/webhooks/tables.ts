import type { Kysely, Migration } from 'kysely';

/** Webhook endpoints, their deliveries (one per event and endpoint) and every delivery attempt. */
export interface WebhookTables {
  webhook_endpoints: {
    id: string;
    project_id: string;
    name: string;
    url: string;
    /** JSON array of event types. */
    event_types: string;
    enabled: number;
    /** The signing secret. Kept in clear text: Standin must sign with it (an HMAC key cannot be hashed). */
    secret: string;
    /** The secret before the last rotation, signing alongside until `previous_secret_expires_at`. */
    previous_secret: string | null;
    /** Standin clock, ms. */
    previous_secret_expires_at: number | null;
    /** Unix seconds. */
    created_at: number;
    updated_at: number;
  };
  webhook_deliveries: {
    id: string;
    project_id: string;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    /** `pending`, `succeeded` or `failed` (the 72-hour window ended). */
    status: string;
    attempt_count: number;
    /** Standin clock, ms (the retry window starts here). */
    created_at: number;
    next_attempt_at: number | null;
    last_attempt_at: number | null;
    last_status_code: number | null;
    completed_at: number | null;
  };
  webhook_attempts: {
    id: string;
    delivery_id: string;
    /** 1-based. */
    attempt: number;
    /** Standin clock, ms. */
    started_at: number;
    /** Wall time the attempt took, microseconds. */
    duration_us: number;
    /** HTTP status, or null when there was no answer. */
    status_code: number | null;
    ok: number;
    /** Why it failed without a status (timeout, refused address, connection error), or why a status counts as failure. */
    error: string | null;
    response_excerpt: string | null;
    response_truncated: number;
  };
}

export const webhookMigrations: Record<string, Migration> = {
  '202611220300_webhooks_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('event_types', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_expires_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_endpoints_project').on('webhook_endpoints').columns(['project_id', 'id']).execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempt_count', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint')
        .addColumn('last_attempt_at', 'bigint')
        .addColumn('last_status_code', 'integer')
        .addColumn('completed_at', 'bigint')
        .execute();
      await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();
      await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').columns(['event_id']).execute();
      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('duration_us', 'bigint', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('ok', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('response_excerpt', 'text')
        .addColumn('response_truncated', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').columns(['delivery_id', 'attempt']).execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends WebhookTables {}
}
