import type { Ctx } from '../core/module.js';
import { ApiError, invalid, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { paginate, type ListParams } from '../core/pagination.js';
import type { ModelRegistry } from '../models/service.js';
import type { RateLimitService, Ticket } from '../ratelimit/service.js';
import { fromJson, toJson, type Exec, type Tx } from '../store/db.js';
import type { RunBus } from './bus.js';
import { expireIfDue, type RunRow } from './lifecycle.js';
import * as store from './store.js';
import { checkMessage, checkMetadata, checkResponseFormat, checkToolChoice, checkToolResources, checkTools, checkTruncation } from './validate.js';
import { ACTIVE, assistantView, messageView, runView, stepView, threadView, type Json } from './views.js';

/**
 * Rules and transactions of the threads interface: assistants, threads, messages, runs and steps.
 * The run engine (engine.ts) executes runs; this file creates, reads, cancels and resumes them.
 */
export const RUN_EXECUTE = 'run.execute';
export const RUN_EXPIRE = 'run.expire';
/** How long an unfinished run lives (the platform's 10 minutes), Standin clock. */
export const RUN_TTL_MS = 10 * 60_000;

/** When a run's watchdog job looks at it again (Standin clock); see engine.ts. */
export const WATCH_MS = 30_000;

export interface Runtime {
  bus: RunBus;
  models: ModelRegistry;
  /** Stops a run this process is executing (cancel, expiry, deletion). */
  interrupt(runId: string): void;
  /** This process runs workers: it starts the runs it queues itself, without waiting for the job loop. */
  direct: boolean;
  /** Starts executing a run here now (after the commit that queued it). */
  kick(runId: string): void;
}

export const runtime = (ctx: Ctx): Runtime => ctx.services.assistants;

const LIST = { defaultLimit: 20, maxLimit: 100 };

/**
 * Runs `fn` in a transaction, then wakes the followers of the runs it touched and starts the runs it
 * queued. The job loop is not woken: the jobs queued here are watchdogs due later (or, in a process
 * without workers, another instance's business, which PostgreSQL's NOTIFY reaches).
 */
async function write<T>(ctx: Ctx, fn: (tx: Tx, touched: Set<string>, kick: Set<string>, ended: Set<string>) => Promise<T>): Promise<T> {
  const touched = new Set<string>();
  const kick = new Set<string>();
  const ended = new Set<string>();
  const out = await ctx.store.db.transaction().execute((tx) => fn(tx, touched, kick, ended));
  const rt = runtime(ctx);
  for (const id of touched) rt.bus.notify(id);
  for (const id of ended) {
    rt.bus.notify(id);
    rt.interrupt(id);
    await settleTicket(ctx, id);
  }
  for (const id of kick) rt.kick(id);
  return out;
}

/**
 * Queues the execution of a run in the caller's transaction. A process with workers starts the run
 * itself right after the commit (`kick`), so the job is only the watchdog, due in WATCH_MS; otherwise
 * the job is due now and any worker takes it.
 */
async function queueExecution(ctx: Ctx, tx: Tx, runId: string, kick: Set<string>) {
  const rt = runtime(ctx);
  await ctx.jobs.enqueue(tx, RUN_EXECUTE, { runId }, rt.direct ? { runAt: ctx.clock.now() + WATCH_MS } : {});
  if (rt.direct) kick.add(runId);
}

/**
 * Gives the rate limiter its admission back once a run has ended, with the tokens the run used. Runs
 * once per run (the ticket is cleared in the same statement), whichever instance ends the run.
 */
export async function settleTicket(ctx: Pick<Ctx, 'store' | 'services'>, runId: string): Promise<void> {
  const row = await ctx.store.db
    .updateTable('thread_runs')
    .set({ ratelimit_ticket: null })
    .where('id', '=', runId)
    .where('ratelimit_ticket', 'is not', null)
    .where('status', 'in', ['completed', 'incomplete', 'failed', 'cancelled', 'expired'])
    .returning(['ratelimit_ticket', 'prompt_used', 'completion_used', 'status'])
    .executeTakeFirst();
  const limiter = ctx.services.ratelimit;
  if (!row?.ratelimit_ticket || !limiter) return;
  const used = Number(row.prompt_used) + Number(row.completion_used);
  await limiter
    .release(JSON.parse(row.ratelimit_ticket) as Ticket, used > 0 ? { inputTokens: Number(row.prompt_used), outputTokens: Number(row.completion_used) } : { failed: row.status !== 'completed' })
    .catch(() => {});
}

function checkModel(ctx: Ctx, model: string, param = 'model') {
  if (!runtime(ctx).models.has(model)) throw invalid(`The requested model '${model}' does not exist.`, param, 'model_not_found');
}

/** file_search with json_schema: the platform accepts only function tools next to structured outputs. */
function checkToolsVsFormat(tools: Json[], format: unknown) {
  if (format && typeof format === 'object' && (format as Json).type === 'json_schema' && tools.some((t) => t.type !== 'function')) {
    throw invalid("Invalid tools: all tools must be of type `function` when `response_format` is of type `json_schema`.", 'response_format', 'invalid_value');
  }
}

/**
 * Tools as the platform shows them: file_search with its effective settings — max_num_results (default
 * 20, or 5 for gpt-3.5-turbo models) and ranking options (ranker `auto`, threshold 0 when not given).
 */
export function normalizeTools(tools: Json[] | null | undefined, model: string): Json[] {
  return (tools ?? []).map((t) => {
    if (t.type !== 'file_search') return t;
    const fs = t.file_search ?? {};
    return {
      type: 'file_search',
      file_search: {
        max_num_results: fs.max_num_results ?? (model.startsWith('gpt-3.5') ? 5 : 20),
        ranking_options: { ranker: fs.ranking_options?.ranker ?? 'auto', score_threshold: fs.ranking_options?.score_threshold ?? 0 },
      },
    };
  });
}

/**
 * Standin keeps no vector stores: the `vector_stores` helper is accepted and recorded as a new
 * vector store id (docs/threads.md), so code that used it keeps working; file_search finds nothing.
 */
function normalizeToolResources(ctx: Ctx, tr: unknown): Json | null {
  if (tr === undefined || tr === null) return null;
  const out: Json = {};
  const t = tr as Json;
  if (t.code_interpreter) out.code_interpreter = { file_ids: t.code_interpreter.file_ids ?? [] };
  if (t.file_search) {
    out.file_search = { vector_store_ids: t.file_search.vector_store_ids ?? (t.file_search.vector_stores ?? []).map(() => newId('vs', ctx.clock)) };
  }
  return out;
}

// ── Assistants ────────────────────────────────────────────────────────────────────────────────

export async function createAssistant(ctx: Ctx, projectId: string, body: Json): Promise<Json> {
  checkModel(ctx, body.model);
  checkTools(body.tools, 128);
  checkToolResources(body.tool_resources);
  checkMetadata(body.metadata);
  checkResponseFormat(body.response_format);
  checkToolsVsFormat(body.tools ?? [], body.response_format);
  const row = {
    id: newId('asst', ctx.clock),
    project_id: projectId,
    created_at: ctx.clock.nowSeconds(),
    name: body.name ?? null,
    description: body.description ?? null,
    model: body.model,
    instructions: body.instructions ?? null,
    tools: JSON.stringify(normalizeTools(body.tools, body.model)),
    tool_resources: toJson(normalizeToolResources(ctx, body.tool_resources)),
    metadata: toJson(body.metadata),
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    response_format: toJson(body.response_format),
    reasoning_effort: body.reasoning_effort ?? null,
  };
  await ctx.store.db.insertInto('assistants').values(row).execute();
  return assistantView(row);
}

export async function getAssistant(ctx: Ctx, projectId: string, id: string): Promise<Json> {
  const row = await store.getAssistant(ctx.store.db, projectId, id);
  if (!row) throw notFound('assistant', id);
  return assistantView(row);
}

export function listAssistants(ctx: Ctx, projectId: string, page: ListParams) {
  return paginate(ctx.store.db.selectFrom('assistants').selectAll().where('project_id', '=', projectId), 'id', page, { ...LIST, map: assistantView });
}

export async function modifyAssistant(ctx: Ctx, projectId: string, id: string, body: Json): Promise<Json> {
  const row = await store.getAssistant(ctx.store.db, projectId, id);
  if (!row) throw notFound('assistant', id);
  if (body.model !== undefined) checkModel(ctx, body.model);
  checkTools(body.tools, 128);
  checkToolResources(body.tool_resources, 'tool_resources', { helper: false });
  checkMetadata(body.metadata);
  checkResponseFormat(body.response_format);
  checkToolsVsFormat(body.tools ?? fromJson<Json[]>(row.tools) ?? [], body.response_format !== undefined ? body.response_format : fromJson(row.response_format));
  const set: Partial<typeof row> = {};
  for (const k of ['name', 'description', 'model', 'instructions', 'temperature', 'top_p', 'reasoning_effort'] as const) {
    if (body[k] !== undefined) (set as Json)[k] = body[k];
  }
  if (body.tools !== undefined) set.tools = JSON.stringify(normalizeTools(body.tools, body.model ?? row.model));
  if (body.tool_resources !== undefined) set.tool_resources = toJson(normalizeToolResources(ctx, body.tool_resources));
  if (body.metadata !== undefined) set.metadata = toJson(body.metadata);
  if (body.response_format !== undefined) set.response_format = toJson(body.response_format);
  if (!Object.keys(set).length) return assistantView(row);
  const updated = await ctx.store.db.updateTable('assistants').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  return assistantView(updated);
}

export async function deleteAssistant(ctx: Ctx, projectId: string, id: string): Promise<Json> {
  const res = await ctx.store.db.deleteFrom('assistants').where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  if (!Number(res.numDeletedRows)) throw notFound('assistant', id);
  return { id, object: 'assistant.deleted', deleted: true };
}

// ── Threads and messages ──────────────────────────────────────────────────────────────────────

function messageRow(ctx: Ctx, projectId: string, threadId: string, m: Json, extra: Partial<Json> = {}) {
  const now = ctx.clock.nowSeconds();
  const content = typeof m.content === 'string' ? [{ type: 'text', text: { value: m.content, annotations: [] } }] : (m.content as Json[]).map(toStoredBlock);
  return {
    id: newId('msg', ctx.clock),
    project_id: projectId,
    thread_id: threadId,
    created_at: now,
    role: m.role,
    content: JSON.stringify(content),
    attachments: toJson(m.attachments ?? []),
    metadata: toJson(m.metadata),
    assistant_id: null,
    run_id: null,
    status: 'completed',
    completed_at: now,
    incomplete_at: null,
    incomplete_details: null,
    ...extra,
  };
}

/** Input blocks → message content blocks (`{type: text, text}` becomes `{text: {value, annotations}}`; image detail defaults to auto). */
function toStoredBlock(b: Json): Json {
  if (b.type === 'text') return { type: 'text', text: { value: b.text, annotations: [] } };
  if (b.type === 'image_file') return { type: 'image_file', image_file: { file_id: b.image_file.file_id, detail: b.image_file.detail ?? 'auto' } };
  return { type: 'image_url', image_url: { url: b.image_url.url, detail: b.image_url.detail ?? 'auto' } };
}

function checkThreadBody(body: Json, param = '') {
  const at = (k: string) => (param ? `${param}.${k}` : k);
  if (body.messages !== undefined && body.messages !== null) {
    if (!Array.isArray(body.messages)) throw invalid(`Invalid type for '${at('messages')}': expected an array.`, at('messages'), 'invalid_type');
    body.messages.forEach((m: unknown, i: number) => checkMessage(m, `${at('messages')}[${i}]`));
  }
  checkToolResources(body.tool_resources, at('tool_resources'));
  checkMetadata(body.metadata, at('metadata'));
}

async function insertThread(ctx: Ctx, tx: Exec, projectId: string, body: Json, fallbackToolResources?: unknown) {
  const row = {
    id: newId('thread', ctx.clock),
    project_id: projectId,
    created_at: ctx.clock.nowSeconds(),
    metadata: toJson(body.metadata),
    tool_resources: toJson(normalizeToolResources(ctx, body.tool_resources ?? fallbackToolResources)),
    active_run_id: null,
  };
  await tx.insertInto('threads').values(row).execute();
  const messages = (body.messages ?? []).map((m: Json) => messageRow(ctx, projectId, row.id, m));
  if (messages.length) await tx.insertInto('thread_messages').values(messages).execute();
  return row;
}

export async function createThread(ctx: Ctx, projectId: string, body: Json): Promise<Json> {
  checkThreadBody(body);
  const row = await ctx.store.db.transaction().execute((tx) => insertThread(ctx, tx, projectId, body));
  return threadView(row);
}

export async function getThread(ctx: Ctx, projectId: string, id: string): Promise<Json> {
  const row = await store.getThread(ctx.store.db, projectId, id);
  if (!row) throw notFound('thread', id);
  return threadView(row);
}

export async function modifyThread(ctx: Ctx, projectId: string, id: string, body: Json): Promise<Json> {
  checkToolResources(body.tool_resources, 'tool_resources', { helper: false });
  checkMetadata(body.metadata);
  const set: Json = {};
  if (body.metadata !== undefined) set.metadata = toJson(body.metadata);
  if (body.tool_resources !== undefined) set.tool_resources = toJson(normalizeToolResources(ctx, body.tool_resources));
  const row = Object.keys(set).length
    ? await ctx.store.db.updateTable('threads').set(set).where('id', '=', id).where('project_id', '=', projectId).returningAll().executeTakeFirst()
    : await store.getThread(ctx.store.db, projectId, id);
  if (!row) throw notFound('thread', id);
  return threadView(row);
}

export async function deleteThread(ctx: Ctx, projectId: string, id: string): Promise<Json> {
  const runIds = await write(ctx, async (tx) => {
    if (!(await store.getThread(tx, projectId, id))) throw notFound('thread', id);
    return store.deleteThreadRows(tx, id);
  });
  for (const r of runIds) runtime(ctx).interrupt(r);
  return { id, object: 'thread.deleted', deleted: true };
}

/**
 * Takes the thread for writing: locks its row (PostgreSQL) and refuses while a run holds it, after
 * expiring a run whose time is up. The caller's statement decides the refusal message.
 */
async function lockThread(ctx: Ctx, tx: Tx, projectId: string, threadId: string, ended: Set<string>, refuse: (threadId: string, runId: string) => ApiError) {
  let thread = await tx.updateTable('threads').set({ active_run_id: null }).where('id', '=', threadId).where('project_id', '=', projectId).where('active_run_id', 'is', null).returningAll().executeTakeFirst();
  if (thread) return thread;
  const current = await store.getThread(tx, projectId, threadId);
  if (!current) throw notFound('thread', threadId);
  const run = current.active_run_id ? await store.getRunById(tx, current.active_run_id) : undefined;
  if (run && (ACTIVE as readonly string[]).includes(run.status)) {
    const { expired } = await expireIfDue(ctx, tx, run);
    if (!expired) throw refuse(threadId, run.id);
    ended.add(run.id);
  } else {
    // A stale lock (its run is gone or ended): release it.
    await tx.updateTable('threads').set({ active_run_id: null }).where('id', '=', threadId).execute();
  }
  thread = await tx.updateTable('threads').set({ active_run_id: null }).where('id', '=', threadId).where('active_run_id', 'is', null).returningAll().executeTakeFirst();
  if (!thread) throw refuse(threadId, current.active_run_id ?? 'run_unknown');
  return thread;
}

const messageLockError = (threadId: string, runId: string) => invalid(`Can't add messages to ${threadId} while a run ${runId} is active.`, null, null);
const runLockError = (threadId: string, runId: string) => invalid(`Thread ${threadId} already has an active run ${runId}.`, null, null);

export async function createMessage(ctx: Ctx, projectId: string, threadId: string, body: Json): Promise<Json> {
  checkMessage(body, '');
  return write(ctx, async (tx, _touched, _kick, ended) => {
    await lockThread(ctx, tx, projectId, threadId, ended, messageLockError);
    const row = messageRow(ctx, projectId, threadId, body);
    await tx.insertInto('thread_messages').values(row).execute();
    return messageView(row);
  });
}

export async function listMessages(ctx: Ctx, projectId: string, threadId: string, page: ListParams & { run_id?: string }) {
  if (!(await store.getThread(ctx.store.db, projectId, threadId))) throw notFound('thread', threadId);
  let q = ctx.store.db.selectFrom('thread_messages').selectAll().where('thread_id', '=', threadId).where('project_id', '=', projectId);
  if (page.run_id !== undefined) q = q.where('run_id', '=', page.run_id);
  return paginate(q, 'id', page, { ...LIST, map: messageView });
}

export async function getMessage(ctx: Ctx, projectId: string, threadId: string, id: string): Promise<Json> {
  if (!(await store.getThread(ctx.store.db, projectId, threadId))) throw notFound('thread', threadId);
  const row = await store.getMessage(ctx.store.db, projectId, threadId, id);
  if (!row) throw notFound('message', id);
  return messageView(row);
}

export async function modifyMessage(ctx: Ctx, projectId: string, threadId: string, id: string, body: Json): Promise<Json> {
  checkMetadata(body.metadata);
  if (!(await store.getThread(ctx.store.db, projectId, threadId))) throw notFound('thread', threadId);
  const row =
    body.metadata !== undefined
      ? await ctx.store.db.updateTable('thread_messages').set({ metadata: toJson(body.metadata) }).where('id', '=', id).where('thread_id', '=', threadId).where('project_id', '=', projectId).returningAll().executeTakeFirst()
      : await store.getMessage(ctx.store.db, projectId, threadId, id);
  if (!row) throw notFound('message', id);
  return messageView(row);
}

export async function deleteMessage(ctx: Ctx, projectId: string, threadId: string, id: string): Promise<Json> {
  if (!(await store.getThread(ctx.store.db, projectId, threadId))) throw notFound('thread', threadId);
  const res = await ctx.store.db.deleteFrom('thread_messages').where('id', '=', id).where('thread_id', '=', threadId).where('project_id', '=', projectId).executeTakeFirst();
  if (!Number(res.numDeletedRows)) throw notFound('message', id);
  return { id, object: 'thread.message.deleted', deleted: true };
}

// ── Runs ──────────────────────────────────────────────────────────────────────────────────────

function checkRunBody(body: Json) {
  checkTools(body.tools, 20);
  checkMetadata(body.metadata);
  checkTruncation(body.truncation_strategy);
  checkToolChoice(body.tool_choice);
  checkResponseFormat(body.response_format);
  if (Array.isArray(body.additional_messages)) body.additional_messages.forEach((m: unknown, i: number) => checkMessage(m, `additional_messages[${i}]`));
}

/** The run row a create request describes, with the assistant's settings where the request gives none. */
function runRow(ctx: Ctx, projectId: string, threadId: string, assistant: Json, body: Json): RunRow {
  const model = body.model ?? assistant.model;
  checkModel(ctx, model);
  const tools: Json[] = body.tools ?? assistant.tools ?? [];
  const choice = body.tool_choice ?? 'auto';
  if (choice && typeof choice === 'object') {
    const offered = choice.type === 'function' ? tools.some((t) => t.type === 'function' && t.function.name === choice.function.name) : tools.some((t) => t.type === choice.type);
    if (!offered) {
      const what = choice.type === 'function' ? `function '${choice.function.name}'` : `'${choice.type}'`;
      throw invalid(`Invalid 'tool_choice': the tool ${what} is not among the run's tools.`, 'tool_choice', 'invalid_value');
    }
  }
  const responseFormat = body.response_format !== undefined && body.response_format !== null ? body.response_format : assistant.response_format;
  checkToolsVsFormat(tools, responseFormat);
  let instructions = body.instructions ?? assistant.instructions ?? '';
  if (body.additional_instructions) instructions = instructions ? `${instructions}\n\n${body.additional_instructions}` : body.additional_instructions;
  const nowMs = ctx.clock.now();
  const created = Math.floor(nowMs / 1000);
  const deadline = nowMs + RUN_TTL_MS;
  return {
    id: newId('run', ctx.clock),
    project_id: projectId,
    thread_id: threadId,
    assistant_id: assistant.id,
    created_at: created,
    status: 'queued',
    model,
    instructions,
    tools: JSON.stringify(normalizeTools(tools, model)),
    metadata: toJson(body.metadata),
    temperature: body.temperature ?? assistant.temperature ?? null,
    top_p: body.top_p ?? assistant.top_p ?? null,
    max_prompt_tokens: body.max_prompt_tokens ?? null,
    max_completion_tokens: body.max_completion_tokens ?? null,
    truncation_strategy: JSON.stringify({ type: body.truncation_strategy?.type ?? 'auto', last_messages: body.truncation_strategy?.last_messages ?? null }),
    tool_choice: JSON.stringify(choice),
    parallel_tool_calls: body.parallel_tool_calls === false ? 0 : 1,
    response_format: JSON.stringify(responseFormat ?? 'auto'),
    reasoning_effort: body.reasoning_effort ?? assistant.reasoning_effort ?? null,
    required_action: null,
    last_error: null,
    incomplete_details: null,
    started_at: null,
    expires_at: Math.floor(deadline / 1000),
    deadline,
    cancelled_at: null,
    failed_at: null,
    completed_at: null,
    prompt_used: 0,
    completion_used: 0,
    lease_owner: null,
    lease_until: null,
    event_seq: 0,
    ratelimit_ticket: null,
  };
}

/** Inserts a queued run holding the thread, its first events, its execution and its expiry jobs. */
async function startRun(ctx: Ctx, tx: Tx, run: RunRow, leading: { event: string; data: unknown }[], kick: Set<string>) {
  await tx.insertInto('thread_runs').values(run).execute();
  const locked = await tx.updateTable('threads').set({ active_run_id: run.id }).where('id', '=', run.thread_id).where('active_run_id', 'is', null).executeTakeFirst();
  if (!Number(locked.numUpdatedRows)) throw runLockError(run.thread_id, 'run_unknown');
  const view = runView(run);
  await store.appendEvents(ctx, tx, run.id, [...leading, { event: 'thread.run.created', data: view }, { event: 'thread.run.queued', data: view }]);
  await queueExecution(ctx, tx, run.id, kick);
  await ctx.jobs.enqueue(tx, RUN_EXPIRE, { runId: run.id }, { runAt: Number(run.deadline) });
}

async function assistantFor(ctx: Ctx, projectId: string, id: string): Promise<Json> {
  const row = await store.getAssistant(ctx.store.db, projectId, id);
  if (!row) throw notFound('assistant', id, 'assistant_id');
  return { ...assistantView(row), reasoning_effort: row.reasoning_effort, response_format: fromJson(row.response_format), temperature: row.temperature, top_p: row.top_p };
}

export async function createRun(ctx: Ctx, projectId: string, threadId: string, body: Json, opts: { ticket?: Ticket } = {}): Promise<RunRow> {
  checkRunBody(body);
  const assistant = await assistantFor(ctx, projectId, body.assistant_id);
  return write(ctx, async (tx, touched, kick, ended) => {
    await lockThread(ctx, tx, projectId, threadId, ended, runLockError);
    const extra = (body.additional_messages ?? []).map((m: Json) => messageRow(ctx, projectId, threadId, m));
    if (extra.length) await tx.insertInto('thread_messages').values(extra).execute();
    const run = runRow(ctx, projectId, threadId, assistant, body);
    run.ratelimit_ticket = toJson(opts.ticket);
    await startRun(ctx, tx, run, [], kick);
    touched.add(run.id);
    return run;
  });
}

export async function createThreadAndRun(ctx: Ctx, projectId: string, body: Json, opts: { ticket?: Ticket } = {}): Promise<RunRow> {
  const thread = body.thread ?? {};
  if (typeof thread !== 'object' || thread === null || Array.isArray(thread)) throw invalid("Invalid type for 'thread': expected an object.", 'thread', 'invalid_type');
  for (const k of Object.keys(thread)) {
    if (!['messages', 'tool_resources', 'metadata'].includes(k)) throw invalid(`Unrecognized request argument supplied: 'thread.${k}'.`, `thread.${k}`, 'unknown_parameter');
  }
  checkThreadBody(thread, 'thread');
  checkToolResources(body.tool_resources, 'tool_resources', { helper: false });
  checkRunBody(body);
  const assistant = await assistantFor(ctx, projectId, body.assistant_id);
  return write(ctx, async (tx, touched, kick) => {
    const threadRow = await insertThread(ctx, tx, projectId, thread, body.tool_resources);
    const run = runRow(ctx, projectId, threadRow.id, assistant, body);
    run.ratelimit_ticket = toJson(opts.ticket);
    await startRun(ctx, tx, run, [{ event: 'thread.created', data: threadView(threadRow) }], kick);
    touched.add(run.id);
    return run;
  });
}

/** Reads a run, expiring it first when its time is up (so an advanced clock shows at once). */
export async function readRun(ctx: Ctx, projectId: string, threadId: string, runId: string): Promise<RunRow> {
  const row = await store.getRun(ctx.store.db, projectId, threadId, runId);
  if (!row) {
    if (!(await store.getThread(ctx.store.db, projectId, threadId))) throw notFound('thread', threadId);
    throw notFound('run', runId);
  }
  if (!(ACTIVE as readonly string[]).includes(row.status) || ctx.clock.now() < Number(row.deadline)) return row;
  return write(ctx, async (tx, _touched, _kick, ended) => {
    const { run, expired } = await expireIfDue(ctx, tx, (await store.getRunById(tx, runId)) ?? row);
    if (expired) ended.add(runId);
    return run;
  });
}

export async function listRuns(ctx: Ctx, projectId: string, threadId: string, page: ListParams) {
  if (!(await store.getThread(ctx.store.db, projectId, threadId))) throw notFound('thread', threadId);
  const due = await ctx.store.db
    .selectFrom('thread_runs')
    .select('id')
    .where('thread_id', '=', threadId)
    .where('status', 'in', [...ACTIVE])
    .where('deadline', '<=', ctx.clock.now())
    .execute();
  for (const r of due) await readRun(ctx, projectId, threadId, r.id);
  const q = ctx.store.db.selectFrom('thread_runs').selectAll().where('thread_id', '=', threadId).where('project_id', '=', projectId);
  return paginate(q, 'id', page, { ...LIST, map: runView });
}

export async function modifyRun(ctx: Ctx, projectId: string, threadId: string, runId: string, body: Json): Promise<Json> {
  checkMetadata(body.metadata);
  await readRun(ctx, projectId, threadId, runId);
  if (body.metadata === undefined) return runView((await store.getRun(ctx.store.db, projectId, threadId, runId))!);
  const row = await ctx.store.db.updateTable('thread_runs').set({ metadata: toJson(body.metadata) }).where('id', '=', runId).returningAll().executeTakeFirstOrThrow();
  return runView(row);
}

/** cancel: queued, in_progress and requires_action runs go to `cancelling`; the worker ends them `cancelled`. */
export async function cancelRun(ctx: Ctx, projectId: string, threadId: string, runId: string): Promise<Json> {
  const current = await readRun(ctx, projectId, threadId, runId);
  const row = await write(ctx, async (tx, touched, kick) => {
    const updated = await tx
      .updateTable('thread_runs')
      .set({ status: 'cancelling' })
      .where('id', '=', runId)
      .where('status', 'in', ['queued', 'in_progress', 'requires_action'])
      .returningAll()
      .executeTakeFirst();
    if (!updated) {
      const now = (await store.getRunById(tx, runId)) ?? current;
      throw invalid(`Cannot cancel run with status '${now.status}'.`, null, null);
    }
    await store.appendEvents(ctx, tx, runId, [{ event: 'thread.run.cancelling', data: runView(updated) }]);
    await queueExecution(ctx, tx, runId, kick);
    touched.add(runId);
    return updated;
  });
  runtime(ctx).interrupt(runId);
  return runView(row);
}

/**
 * submit_tool_outputs: every tool call of `required_action` answered in one request. The outputs go
 * into the step's function calls, the step completes, the run is queued again. Returns the run and
 * the event number the submission's stream starts after.
 */
export async function submitToolOutputs(ctx: Ctx, projectId: string, threadId: string, runId: string, body: Json): Promise<{ run: RunRow; afterSeq: number }> {
  await readRun(ctx, projectId, threadId, runId);
  const outputs: { tool_call_id?: string; output?: string }[] = body.tool_outputs;
  outputs.forEach((o, i) => {
    if (o.tool_call_id === undefined) throw invalid(`Missing required parameter: 'tool_outputs[${i}].tool_call_id'.`, `tool_outputs[${i}].tool_call_id`, 'missing_required_parameter');
  });
  return write(ctx, async (tx, touched, kick) => {
    const run = (await store.getRunById(tx, runId))!;
    if (run.status !== 'requires_action') throw invalid(`Runs in status "${run.status}" do not accept tool outputs.`, null, null);
    const required = (fromJson<Json>(run.required_action)?.submit_tool_outputs?.tool_calls ?? []) as Json[];
    const expected = required.map((c) => c.id as string);
    const given = outputs.map((o) => o.tool_call_id!);
    const seen = new Set<string>();
    given.forEach((id, i) => {
      if (!expected.includes(id)) throw invalid(`Invalid 'tool_outputs[${i}].tool_call_id': no tool call '${id}' is awaiting output in this run.`, `tool_outputs[${i}].tool_call_id`, 'invalid_value');
      if (seen.has(id)) throw invalid(`Invalid 'tool_outputs[${i}].tool_call_id': '${id}' was given more than once.`, `tool_outputs[${i}].tool_call_id`, 'invalid_value');
      seen.add(id);
    });
    const missing = expected.filter((id) => !seen.has(id));
    if (missing.length) {
      throw invalid(`Expected tool outputs for call_ids [${expected.map((x) => `'${x}'`).join(', ')}], got [${given.map((x) => `'${x}'`).join(', ')}]`, 'tool_outputs', null);
    }
    const queued = await tx
      .updateTable('thread_runs')
      .set({ status: 'queued', required_action: null })
      .where('id', '=', runId)
      .where('status', '=', 'requires_action')
      .returningAll()
      .executeTakeFirst();
    if (!queued) throw invalid(`Runs in status "${run.status}" do not accept tool outputs.`, null, null);
    const byId = new Map(outputs.map((o) => [o.tool_call_id!, o.output ?? '']));
    const events: { event: string; data: unknown }[] = [];
    const steps = await tx.selectFrom('run_steps').selectAll().where('run_id', '=', runId).where('type', '=', 'tool_calls').where('status', '=', 'in_progress').execute();
    for (const s of steps) {
      const details = fromJson<Json>(s.step_details)!;
      details.tool_calls = (details.tool_calls as Json[]).map((c) => (c.type === 'function' && byId.has(c.id) ? { ...c, function: { ...c.function, output: byId.get(c.id) } } : c));
      const done = await tx
        .updateTable('run_steps')
        .set({ status: 'completed', completed_at: ctx.clock.nowSeconds(), step_details: JSON.stringify(details) })
        .where('id', '=', s.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      events.push({ event: 'thread.run.step.completed', data: stepView(done) });
    }
    events.push({ event: 'thread.run.queued', data: runView(queued) });
    const afterSeq = Number(queued.event_seq);
    await store.appendEvents(ctx, tx, runId, events);
    await queueExecution(ctx, tx, runId, kick);
    touched.add(runId);
    return { run: queued, afterSeq };
  });
}

// ── Run steps ─────────────────────────────────────────────────────────────────────────────────

export async function listSteps(ctx: Ctx, projectId: string, threadId: string, runId: string, page: ListParams, includeContent: boolean) {
  await readRun(ctx, projectId, threadId, runId);
  const q = ctx.store.db.selectFrom('run_steps').selectAll().where('run_id', '=', runId).where('project_id', '=', projectId);
  return paginate(q, 'id', page, { ...LIST, map: (r) => stepView(r, { includeContent }) });
}

export async function getStep(ctx: Ctx, projectId: string, threadId: string, runId: string, stepId: string, includeContent: boolean): Promise<Json> {
  await readRun(ctx, projectId, threadId, runId);
  const row = await store.getStep(ctx.store.db, projectId, runId, stepId);
  if (!row) throw notFound('run step', stepId);
  return stepView(row, { includeContent });
}

