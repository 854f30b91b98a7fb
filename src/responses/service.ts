import { randomBytes } from 'node:crypto';
import type { Ctx } from '../core/module.js';
import { ApiError, invalid, notFound } from '../core/errors.js';
import type { RateLimitService, Ticket, Usage } from '../ratelimit/service.js';
import { emitEvent } from '../core/events.js';
import { newId } from '../core/ids.js';
import type { ChatMessage, ChatRequest, ChatResult, ChatTool, ModelProviders } from '../models/types.js';
import type { Exec } from '../store/db.js';

/** Job kind that runs one background response. */
export const RUN_RESPONSE = 'response.run';

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'incomplete';
const TERMINAL: ResponseStatus[] = ['completed', 'failed', 'cancelled', 'incomplete'];

/** The response object (the `Response` schema of the OpenAPI document, the members Standin fills). */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  background: boolean;
  completed_at: number | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  model: string;
  output: unknown[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: Record<string, unknown> | null;
  service_tier: string;
  store: boolean;
  temperature: number;
  text: { format: Record<string, unknown> };
  tool_choice: unknown;
  tools: unknown[];
  top_p: number;
  truncation: string;
  usage: { input_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens: number; output_tokens_details: { reasoning_tokens: number }; total_tokens: number } | null;
  user: string | null;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
}

/** Where a response runs; `models` is `ctx.services.models` unless a test passes its own. */
export interface ResponsesDeps {
  models: () => ModelProviders;
}

export const defaultDeps = (ctx: Ctx): ResponsesDeps => ({ models: () => ctx.services.models });

/** In-process aborts of running background responses (cancel stops the model call early). */
const running = new Map<string, AbortController>();

type Body = Record<string, any>;

/** Turns `instructions` + `input` into chat messages (after the previous response's conversation). */
export function toMessages(body: Body, previous: ChatMessage[] = []): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (body.instructions) messages.push({ role: 'developer', content: body.instructions });
  messages.push(...previous.filter((m) => m.role !== 'developer' && m.role !== 'system'));
  const input = body.input;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else if (Array.isArray(input)) {
    for (const item of input) {
      if (item.type === 'function_call_output') messages.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
      else if (item.type === 'function_call') {
        const call = { id: item.call_id, type: 'function' as const, function: { name: item.name, arguments: item.arguments } };
        const last = messages.at(-1);
        if (last?.role === 'assistant' && last.tool_calls) last.tool_calls.push(call);
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      } else {
        const content = typeof item.content === 'string' ? item.content : item.content.map((p: { text: string }) => p.text).join('');
        messages.push({ role: item.role, content });
      }
    }
  }
  return messages;
}

function chatRequest(body: Body, messages: ChatMessage[], signal?: AbortSignal): ChatRequest {
  const tools: ChatTool[] | undefined = body.tools?.map((t: Body) => ({
    type: 'function',
    function: { name: t.name, description: t.description ?? undefined, parameters: t.parameters ?? undefined, strict: t.strict ?? null },
  }));
  const choice = body.tool_choice;
  const format = body.text?.format;
  return {
    model: body.model,
    messages,
    tools: tools?.length ? tools : undefined,
    tool_choice: choice && typeof choice === 'object' ? { type: 'function', function: { name: choice.name } } : choice,
    parallel_tool_calls: body.parallel_tool_calls ?? undefined,
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    max_tokens: body.max_output_tokens ?? null,
    response_format:
      format?.type === 'json_schema'
        ? { type: 'json_schema', json_schema: { name: format.name, schema: format.schema, strict: format.strict ?? null } }
        : format?.type === 'json_object'
          ? { type: 'json_object' }
          : undefined,
    signal,
  };
}

function baseObject(ctx: Ctx, id: string, body: Body, status: ResponseStatus): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: ctx.clock.nowSeconds(),
    status,
    background: body.background === true,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: body.reasoning ?? null,
    service_tier: body.service_tier ?? 'default',
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((t: Body) => ({ strict: true, description: null, parameters: null, ...t })),
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: null,
    user: body.user ?? null,
    safety_identifier: body.safety_identifier ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
  };
}

/** Fills a response from a model result: output items, usage, and the final status. */
export function finish(ctx: Pick<Ctx, 'clock'>, response: ResponseObject, result: ChatResult): ResponseObject {
  const output: unknown[] = [];
  if (result.content !== null && result.content !== '') {
    output.push({
      id: `msg_${randomBytes(24).toString('hex')}`,
      type: 'message',
      status: result.finish_reason === 'length' ? 'incomplete' : 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: result.content, annotations: [], logprobs: [] }],
    });
  }
  for (const call of result.tool_calls) {
    output.push({ id: `fc_${randomBytes(24).toString('hex')}`, type: 'function_call', status: 'completed', call_id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  const incomplete = result.finish_reason === 'length' ? 'max_output_tokens' : result.finish_reason === 'content_filter' ? 'content_filter' : null;
  return {
    ...response,
    status: incomplete ? 'incomplete' : 'completed',
    completed_at: incomplete ? null : ctx.clock.nowSeconds(),
    incomplete_details: incomplete ? { reason: incomplete } : null,
    output,
    usage: {
      input_tokens: result.usage.prompt_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: result.usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: result.usage.total_tokens,
    },
  };
}

function failed(response: ResponseObject, err: unknown): ResponseObject {
  const e = err as { code?: string; message?: string };
  const code = e.code === 'rate_limit_exceeded' || e.code === 'invalid_prompt' ? e.code : 'server_error';
  return { ...response, status: 'failed', error: { code, message: e.message ?? 'The model provider failed.' } };
}

/** The conversation a response leaves behind (for `previous_response_id`). */
function afterMessages(messages: ChatMessage[], result: ChatResult): ChatMessage[] {
  return [...messages, { role: 'assistant', content: result.content, ...(result.tool_calls.length ? { tool_calls: result.tool_calls } : {}) }];
}

async function load(exec: Exec, projectId: string, id: string) {
  const row = await exec.selectFrom('responses').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  if (!row) throw notFound('response', id, 'response_id');
  return row;
}

async function save(exec: Exec, projectId: string, r: ResponseObject, messages: ChatMessage[], insert = false) {
  if (insert) {
    await exec
      .insertInto('responses')
      .values({ id: r.id, project_id: projectId, status: r.status, background: r.background ? 1 : 0, payload: JSON.stringify(r), messages: JSON.stringify(messages), created_at: r.created_at })
      .execute();
  } else {
    await exec.updateTable('responses').set({ status: r.status, payload: JSON.stringify(r), messages: JSON.stringify(messages) }).where('id', '=', r.id).execute();
  }
}

/** Event type announcing a finished background response. */
const eventFor = (status: ResponseStatus) => `response.${status}`;

/**
 * `POST /v1/responses`. In the foreground the model runs now and the answer is final; with
 * `background: true` the response is stored `queued`, a job runs it, and its end emits a webhook event.
 */
export async function createResponse(ctx: Ctx, deps: ResponsesDeps, projectId: string, body: Body, ticket?: Ticket): Promise<ResponseObject> {
  if (body.stream) throw invalid(`'stream' is not supported by Standin's Responses endpoint; poll a background response or omit 'stream'.`, 'stream', 'unsupported_parameter');
  if (body.background && body.store === false) throw invalid(`'background' requires 'store' to be true.`, 'store', 'invalid_value');
  if (body.input === undefined && !body.previous_response_id) throw invalid(`Missing required parameter: 'input'.`, 'input', 'missing_required_parameter');
  const models = deps.models();
  if (!models.has(body.model)) throw invalid(`The model '${body.model}' does not exist or you do not have access to it.`, 'model', 'model_not_found');
  let previous: ChatMessage[] = [];
  if (body.previous_response_id) {
    const prev = await ctx.store.db.selectFrom('responses').select('messages').where('id', '=', body.previous_response_id).where('project_id', '=', projectId).executeTakeFirst();
    if (!prev) throw notFound('response', body.previous_response_id, 'previous_response_id');
    previous = JSON.parse(prev.messages);
  }
  const messages = toMessages(body, previous);
  const id = newId('resp', ctx.clock);

  if (body.background) {
    const response = baseObject(ctx, id, body, 'queued');
    await ctx.store.db.transaction().execute(async (tx) => {
      await save(tx, projectId, response, messages, true);
      await ctx.jobs.enqueue(tx, RUN_RESPONSE, { responseId: id, projectId, request: body, ticket });
    });
    ctx.jobs.wake();
    return response;
  }

  const response = baseObject(ctx, id, body, 'in_progress');
  let done: ResponseObject;
  let after = messages;
  try {
    const result = await models.complete(chatRequest(body, messages));
    done = finish(ctx, response, result);
    after = afterMessages(messages, result);
  } catch (err) {
    ctx.log.warn({ err, response: id }, 'model call failed');
    done = failed(response, err);
  }
  if (done.store) await save(ctx.store.db, projectId, done, after, true);
  return done;
}

/** The `response.run` job: runs a queued background response and emits its end event with the final state. */
export async function runResponse(ctx: Ctx, deps: ResponsesDeps, payload: { responseId: string; projectId: string; request: Body; ticket?: Ticket }): Promise<void> {
  let usage: Usage = { failed: true };
  try {
    usage = await runQueued(ctx, deps, payload);
  } finally {
    // Whatever happened, the rate-limit admission of the request is reconciled and its slot freed.
    if (payload.ticket) await ctx.services.ratelimit.release(payload.ticket, usage);
  }
}

/** Rate-limit usage of a finished response. */
export function usageOf(r: ResponseObject): Usage {
  return r.usage ? { inputTokens: r.usage.input_tokens, outputTokens: r.usage.output_tokens } : { failed: r.status === 'failed' };
}

async function runQueued(ctx: Ctx, deps: ResponsesDeps, payload: { responseId: string; projectId: string; request: Body }): Promise<Usage> {
  const row = await ctx.store.db.selectFrom('responses').selectAll().where('id', '=', payload.responseId).executeTakeFirst();
  if (!row || TERMINAL.includes(row.status as ResponseStatus)) return { failed: true };
  const messages: ChatMessage[] = JSON.parse(row.messages);
  const current: ResponseObject = { ...JSON.parse(row.payload), status: 'in_progress' };
  const moved = await ctx.store.db.updateTable('responses').set({ status: 'in_progress', payload: JSON.stringify(current) }).where('id', '=', row.id).where('status', 'in', ['queued', 'in_progress']).executeTakeFirst();
  if (Number(moved.numUpdatedRows) === 0) return { failed: true };

  const abort = new AbortController();
  running.set(row.id, abort);
  let done: ResponseObject;
  let after = messages;
  try {
    const result = await deps.models().complete(chatRequest(payload.request, messages, abort.signal));
    done = finish(ctx, current, result);
    after = afterMessages(messages, result);
  } catch (err) {
    if (abort.signal.aborted) return { failed: true }; // cancelled meanwhile: cancel() wrote the state and the event
    ctx.log.warn({ err, response: row.id }, 'background response failed');
    done = failed(current, err);
  } finally {
    running.delete(row.id);
  }
  await ctx.store.db.transaction().execute(async (tx) => {
    // Only an unfinished response moves; a cancel that won the race keeps its state and its event.
    const res = await tx
      .updateTable('responses')
      .set({ status: done.status, payload: JSON.stringify(done), messages: JSON.stringify(after) })
      .where('id', '=', row.id)
      .where('status', '=', 'in_progress')
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) await emitEvent(ctx, tx, row.project_id, eventFor(done.status), { id: row.id });
  });
  ctx.jobs.wake();
  return usageOf(done);
}

export async function getResponse(ctx: Ctx, projectId: string, id: string): Promise<ResponseObject> {
  return JSON.parse((await load(ctx.store.db, projectId, id)).payload);
}

/** Cancels a queued or running background response (emits `response.cancelled`); a cancelled one is returned as is. */
export async function cancelResponse(ctx: Ctx, projectId: string, id: string): Promise<ResponseObject> {
  const out = await ctx.store.db.transaction().execute(async (tx) => {
    const row = await load(tx, projectId, id);
    const r: ResponseObject = JSON.parse(row.payload);
    if (!row.background) throw invalid('Only responses created with background=true can be cancelled.', 'response_id', 'invalid_value');
    if (r.status === 'cancelled') return r;
    if (TERMINAL.includes(r.status)) throw invalid(`Cannot cancel a response with status '${r.status}'.`, 'response_id', 'invalid_value');
    const next: ResponseObject = { ...r, status: 'cancelled' };
    const res = await tx.updateTable('responses').set({ status: 'cancelled', payload: JSON.stringify(next) }).where('id', '=', id).where('status', 'in', ['queued', 'in_progress']).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) await emitEvent(ctx, tx, projectId, 'response.cancelled', { id });
    return next;
  });
  running.get(id)?.abort(new Error('cancelled'));
  ctx.jobs.wake();
  return out;
}

/** `DELETE /v1/responses/{id}`. */
export async function deleteResponse(ctx: Ctx, projectId: string, id: string) {
  await load(ctx.store.db, projectId, id);
  await ctx.store.db.deleteFrom('responses').where('id', '=', id).execute();
  return { id, object: 'response', deleted: true };
}

/**
 * A finished background response made up for `standin trigger response.<status>`, stored so the event's
 * `data.id` retrieves. The caller emits the event in the same transaction.
 */
export async function createFinishedResponse(ctx: Ctx, exec: Exec, projectId: string, status: 'completed' | 'failed' | 'cancelled' | 'incomplete', model = 'gpt-4.1-mini'): Promise<ResponseObject> {
  const id = newId('resp', ctx.clock);
  const body = { model, input: 'Summarize the release notes for the on-call channel.', background: true, instructions: 'Answer in two sentences.' };
  const messages = toMessages(body);
  let r = baseObject(ctx, id, body, 'in_progress');
  const text = 'Release 4.2 ships faster webhook retries and a new dashboard page. No action is needed from on-call.';
  const usage = { prompt_tokens: 24, completion_tokens: 21, total_tokens: 45 };
  if (status === 'completed') r = finish(ctx, r, { content: text, tool_calls: [], finish_reason: 'stop', usage });
  else if (status === 'incomplete') r = finish(ctx, r, { content: text.slice(0, 40), tool_calls: [], finish_reason: 'length', usage: { ...usage, completion_tokens: 16, total_tokens: 40 } });
  else if (status === 'failed') r = failed(r, { code: 'server_error', message: 'The model provider did not answer in time.' });
  else r = { ...r, status: 'cancelled' };
  if (status === 'incomplete') r.max_output_tokens = 16;
  await save(exec, projectId, r, messages, true);
  return r;
}
