import type { Kysely, Migration } from 'kysely';
import type { MessageStatus, StepStatus } from './objects.js';
import type { RunStatus } from './runs/states.js';

/**
 * Tables of the threads interface. JSON members are text (`toJson`/`fromJson`); `created_at` and the
 * other API timestamps are Unix seconds; `lease_until` is wall-clock milliseconds (a lease lasts in real
 * time: runs/lease.ts). Ids are time-ordered, so every list pages by id.
 */
export interface AssistantsTables {
  assistants: {
    id: string;
    project_id: string;
    created_at: number;
    name: string | null;
    description: string | null;
    model: string;
    instructions: string | null;
    tools: string;
    tool_resources: string | null;
    metadata: string | null;
    temperature: number | null;
    top_p: number | null;
    response_format: string | null;
    reasoning_effort: string | null;
  };
  threads: {
    id: string;
    project_id: string;
    created_at: number;
    metadata: string | null;
    tool_resources: string | null;
    /** The run holding the thread lock (queued … cancelling), null when none. */
    active_run_id: string | null;
  };
  thread_messages: {
    id: string;
    project_id: string;
    thread_id: string;
    created_at: number;
    role: 'user' | 'assistant';
    content: string;
    attachments: string | null;
    metadata: string | null;
    assistant_id: string | null;
    run_id: string | null;
    status: MessageStatus;
    completed_at: number | null;
    incomplete_at: number | null;
    incomplete_details: string | null;
  };
  thread_runs: {
    id: string;
    project_id: string;
    thread_id: string;
    assistant_id: string;
    created_at: number;
    status: RunStatus;
    model: string;
    instructions: string;
    tools: string;
    metadata: string | null;
    temperature: number | null;
    top_p: number | null;
    max_prompt_tokens: number | null;
    max_completion_tokens: number | null;
    truncation_strategy: string;
    tool_choice: string;
    parallel_tool_calls: number;
    response_format: string;
    reasoning_effort: string | null;
    required_action: string | null;
    last_error: string | null;
    incomplete_details: string | null;
    started_at: number | null;
    expires_at: number | null;
    /** The expiry moment, kept after expires_at is cleared on a terminal status. */
    deadline: number;
    cancelled_at: number | null;
    failed_at: number | null;
    completed_at: number | null;
    /** Tokens used so far by the run's turns (`usage`, shown once the run has ended). */
    prompt_used: number;
    completion_used: number;
    /** Worker holding the run (process id) and until when (Standin clock ms). */
    lease_owner: string | null;
    lease_until: number | null;
    /** Last sequence number in run_events. */
    event_seq: number;
    /** The rate limiter's admission (JSON ticket), released with the usage when the run ends. */
    ratelimit_ticket: string | null;
  };
  run_steps: {
    id: string;
    project_id: string;
    run_id: string;
    thread_id: string;
    assistant_id: string;
    created_at: number;
    type: 'message_creation' | 'tool_calls';
    status: StepStatus;
    step_details: string;
    last_error: string | null;
    cancelled_at: number | null;
    completed_at: number | null;
    expired_at: number | null;
    failed_at: number | null;
    usage: string | null;
    metadata: string | null;
  };
  /** The stream of each run (the SSE frames), which any instance can follow. */
  run_events: {
    run_id: string;
    seq: number;
    event: string;
    data: string;
    created_at: number;
  };
}

export const assistantsMigrations: Record<string, Migration> = {
  '202611220300_assistants_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('assistants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('description', 'text')
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('instructions', 'text')
        .addColumn('tools', 'text', (c) => c.notNull())
        .addColumn('tool_resources', 'text')
        .addColumn('metadata', 'text')
        .addColumn('temperature', 'double precision')
        .addColumn('top_p', 'double precision')
        .addColumn('response_format', 'text')
        .addColumn('reasoning_effort', 'text')
        .execute();
      await db.schema.createIndex('assistants_project').on('assistants').columns(['project_id', 'id']).execute();
      await db.schema
        .createTable('threads')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('metadata', 'text')
        .addColumn('tool_resources', 'text')
        .addColumn('active_run_id', 'text')
        .execute();
      await db.schema
        .createTable('thread_messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('thread_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('attachments', 'text')
        .addColumn('metadata', 'text')
        .addColumn('assistant_id', 'text')
        .addColumn('run_id', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .addColumn('incomplete_at', 'bigint')
        .addColumn('incomplete_details', 'text')
        .execute();
      await db.schema.createIndex('thread_messages_thread').on('thread_messages').columns(['thread_id', 'id']).execute();
      await db.schema.createIndex('thread_messages_run').on('thread_messages').columns(['run_id']).execute();
      await db.schema
        .createTable('thread_runs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('thread_id', 'text', (c) => c.notNull())
        .addColumn('assistant_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('instructions', 'text', (c) => c.notNull())
        .addColumn('tools', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text')
        .addColumn('temperature', 'double precision')
        .addColumn('top_p', 'double precision')
        .addColumn('max_prompt_tokens', 'integer')
        .addColumn('max_completion_tokens', 'integer')
        .addColumn('truncation_strategy', 'text', (c) => c.notNull())
        .addColumn('tool_choice', 'text', (c) => c.notNull())
        .addColumn('parallel_tool_calls', 'integer', (c) => c.notNull())
        .addColumn('response_format', 'text', (c) => c.notNull())
        .addColumn('reasoning_effort', 'text')
        .addColumn('required_action', 'text')
        .addColumn('last_error', 'text')
        .addColumn('incomplete_details', 'text')
        .addColumn('started_at', 'bigint')
        .addColumn('expires_at', 'bigint')
        .addColumn('deadline', 'bigint', (c) => c.notNull())
        .addColumn('cancelled_at', 'bigint')
        .addColumn('failed_at', 'bigint')
        .addColumn('completed_at', 'bigint')
        .addColumn('prompt_used', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('completion_used', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', 'bigint')
        .addColumn('event_seq', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('ratelimit_ticket', 'text')
        .execute();
      await db.schema.createIndex('thread_runs_thread').on('thread_runs').columns(['thread_id', 'id']).execute();
      await db.schema.createIndex('thread_runs_status').on('thread_runs').columns(['status']).execute();
      await db.schema
        .createTable('run_steps')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('thread_id', 'text', (c) => c.notNull())
        .addColumn('assistant_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('step_details', 'text', (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('cancelled_at', 'bigint')
        .addColumn('completed_at', 'bigint')
        .addColumn('expired_at', 'bigint')
        .addColumn('failed_at', 'bigint')
        .addColumn('usage', 'text')
        .addColumn('metadata', 'text')
        .execute();
      await db.schema.createIndex('run_steps_run').on('run_steps').columns(['run_id', 'id']).execute();
      await db.schema
        .createTable('run_events')
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('run_events_pk', ['run_id', 'seq'])
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends AssistantsTables {}
}
