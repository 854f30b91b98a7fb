import { randomBytes } from 'node:crypto';
import { invalid, notFound } from '../core/errors.js';
import { EVENT_FANOUT, emitEvent } from '../core/events.js';
import { newId } from '../core/ids.js';
import { ClaimLost, type JobClaim } from '../core/jobs.js';
import type { Ctx } from '../core/module.js';
import type { ChatMessage, ChatRequest, ChatResult, ChatTool } from '../models/types.js';
import type { Ticket, Usage } from '../ratelimit/service.js';
import type { Exec } from '../store/db.js';
import { bodyChecker, toApiError } from '../core/validation.js';
import { assemble, conversationIdOf, prepareTurn, recordTurn } from './inputs.js';
import { deleteItems } from './items-store.js';
import { CreateResponseBody, type CreateResponseRequest, type ResponseObject, type ResponseStatus } from './schemas.js';
import * as store from './store.js';

/** Job kind that runs one background response. */
export const RUN_RESPONSE = 'response.run';

/** The payload of a `response.run` job: the request, and the rate limiter's admission to give back at its end. */
export interface RunResponseJob {
  responseId: string;
  projectId: string;
  request: CreateResponseRequest;
  ticket?: Ticket;
}

/** What the responses area keeps per Standin instance (`ctx.services.responses`). */
export interface ResponsesRuntime {
  /** Aborts of the background responses this process is running: a cancel stops the model call early. */
  running: Map<string, AbortController>;
}

const TERMINAL: readonly string[] = ['completed', 'failed', 'cancelled', 'incomplete'] satisfies ResponseStatus[];

type Output = ResponseObject['output'][number];

function chatRequest(body: CreateResponseRequest, messages: ChatMessage[], signal?: AbortSignal): ChatRequest {
  const tools: ChatTool[] | undefined = body.tools?.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description ?? undefined, parameters: t.parameters ?? undefined, strict: t.strict ?? null },
  }));
  const choice = body.tool_choice;
  const format = body.text?.format;
  return {
    model: body.model,
    messages,
    tools: tools?.length ? tools : undefined,
    tool_choice: typeof choice === 'object' ? { type: 'function', function: { name: choice.name } } : choice,
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

function baseObject(ctx: Pick<Ctx, 'clock'>, id: string, body: CreateResponseRequest, status: ResponseStatus): ResponseObject {
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
    conversation: body.conversation ? { id: conversationIdOf(body.conversation)! } : null,
    reasoning: body.reasoning ?? null,
    service_tier: body.service_tier ?? 'default',
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((t) => ({ strict: true, description: null, parameters: null, ...t })),
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
  const output: Output[] = [];
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
    output.push({
      id: `fc_${randomBytes(24).toString('hex')}`,
      type: 'function_call',
      status: 'completed',
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    });
  }
  const incomplete =
    result.finish_reason === 'length' ? 'max_output_tokens' : result.finish_reason === 'content_filter' ? 'content_filter' : null;
  return {
    ...response,
    status: incomplete ? 'incomplete' : 'completed',
    completed_at: incomplete ? null : ctx.clock.nowSeconds(),
    incomplete_details: incomplete ? { reason: incomplete } : null,
    output,
    usage: {
      input_tokens: result.usage.prompt_tokens,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: result.usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: result.usage.total_tokens,
    },
  };
}

/** A failed response; the provider's error code when the response's vocabulary has it. */
function failed(response: ResponseObject, err: unknown): ResponseObject {
  const e = err as { code?: string; message?: string };
  const code = e.code === 'rate_limit_exceeded' || e.code === 'invalid_prompt' ? e.code : 'server_error';
  return { ...response, status: 'failed', error: { code, message: e.message ?? 'The model provider failed.' } };
}

/** The conversation a response leaves behind (for `previous_response_id`). */
function afterMessages(messages: ChatMessage[], result: ChatResult): ChatMessage[] {
  return [
    ...messages,
    { role: 'assistant', content: result.content, ...(result.tool_calls.length ? { tool_calls: result.tool_calls } : {}) },
  ];
}

async function load(exec: Exec, projectId: string, id: string) {
  const row = await store.getResponse(exec, projectId, id);
  if (!row) throw notFound('response', id, 'response_id');
  return row;
}

const objectOf = (row: { payload: string }) => JSON.parse(row.payload) as ResponseObject;

/** Event type announcing a finished background response. */
const eventFor = (status: ResponseStatus) => `response.${status}`;

/**
 * `POST /v1/responses`. In the foreground the model runs now and the answer is final; with
 * `background: true` the response is stored `queued`, a job runs it, and its end emits a webhook event.
 */
export async function createResponse(ctx: Ctx, projectId: string, body: CreateResponseRequest, ticket?: Ticket): Promise<ResponseObject> {
  if (body.stream)
    throw invalid(
      `'stream' is not supported by Standin's Responses endpoint; poll a background response or omit 'stream'.`,
      'stream',
      'unsupported_parameter',
    );
  if (body.background && body.store === false) throw invalid(`'background' requires 'store' to be true.`, 'store', 'invalid_value');
  if (body.input === undefined && !body.previous_response_id)
    throw invalid(`Missing required parameter: 'input'.`, 'input', 'missing_required_parameter');
  const models = ctx.services.models;
  if (!models.has(body.model))
    throw invalid(`The model '${body.model}' does not exist or you do not have access to it.`, 'model', 'model_not_found');
  const turn = await prepareTurn(ctx, projectId, body);
  const messages = turn.messages;
  const id = newId('resp', ctx.clock);

  if (body.background) {
    const response = baseObject(ctx, id, body, 'queued');
    const job: RunResponseJob = { responseId: id, projectId, request: body, ticket };
    await ctx.store.db.transaction().execute(async (tx) => {
      await store.insertResponse(tx, projectId, response, messages);
      await recordTurn(ctx, tx, projectId, response, turn);
      await ctx.jobs.enqueue(tx, RUN_RESPONSE, job);
    });
    ctx.jobs.wake(RUN_RESPONSE);
    return response;
  }

  const response = baseObject(ctx, id, body, 'in_progress');
  let done: ResponseObject;
  let after = turn.kept;
  try {
    const result = await models.complete(chatRequest(body, messages));
    done = finish(ctx, response, result);
    after = afterMessages(turn.kept, result);
  } catch (err) {
    ctx.log.warn({ err, response: id }, 'model call failed');
    done = failed(response, err);
  }
  await ctx.store.db.transaction().execute(async (tx) => {
    if (done.store) await store.insertResponse(tx, projectId, done, after);
    await recordTurn(ctx, tx, projectId, done, turn);
  });
  return done;
}

/** The `response.run` job: runs a queued background response and emits its end event with the final state. */
/** The claim of the job running a response: a worker that lost it (another instance took the response over) commits nothing. */
type Claim = Pick<JobClaim, 'signal' | 'fence'>;

export async function runResponse(ctx: Ctx, payload: RunResponseJob, claim?: Claim): Promise<void> {
  let usage: Usage = { failed: true };
  try {
    usage = await runQueued(ctx, payload, claim);
  } catch (err) {
    // The new owner of the job runs the response and gives the admission back once.
    if (err instanceof ClaimLost) return;
    throw err;
  } finally {
    // Whatever happened, the rate-limit admission of the request is reconciled and its slot freed.
    if (payload.ticket) await ctx.services.ratelimit.release(payload.ticket, usage);
  }
}

/** The job queue gave up on a background response whose run kept killing its process (core/jobs.ts `onAbandon`). */
export async function abandonResponse(ctx: Ctx, payload: RunResponseJob, reason: string): Promise<void> {
  try {
    const row = await store.getResponseById(ctx.store.db, payload.responseId);
    if (!row || TERMINAL.includes(row.status)) return;
    const done: ResponseObject = { ...objectOf(row), status: 'failed', error: { code: 'server_error', message: reason } };
    await ctx.store.db.transaction().execute(async (tx) => {
      // A response that died before it started is moved to in_progress first: only a running one ends.
      await store.startResponse(tx, { ...done, status: 'in_progress' });
      if (await store.finishResponse(tx, done, JSON.parse(row.messages) as ChatMessage[]))
        await emitEvent(ctx, tx, row.project_id, eventFor('failed'), { id: row.id });
    });
    ctx.jobs.wake(EVENT_FANOUT);
  } finally {
    if (payload.ticket) await ctx.services.ratelimit.release(payload.ticket, { failed: true });
  }
}

/** Rate-limit usage of a finished response. */
export function usageOf(r: ResponseObject): Usage {
  return r.usage ? { inputTokens: r.usage.input_tokens, outputTokens: r.usage.output_tokens } : { failed: r.status === 'failed' };
}

async function runQueued(ctx: Ctx, payload: RunResponseJob, claim?: Claim): Promise<Usage> {
  const row = await store.getResponseById(ctx.store.db, payload.responseId);
  if (!row || TERMINAL.includes(row.status)) return { failed: true };
  const messages = JSON.parse(row.messages) as ChatMessage[];
  const current: ResponseObject = { ...objectOf(row), status: 'in_progress' };
  if (!(await store.startResponse(ctx.store.db, current))) return { failed: true };

  const running = ctx.services.responses.running;
  const abort = new AbortController();
  running.set(row.id, abort);
  const lost = () => abort.abort(new ClaimLost());
  claim?.signal.addEventListener('abort', lost, { once: true });
  let done: ResponseObject;
  let after = messages;
  try {
    const result = await ctx.services.models.complete(chatRequest(payload.request, messages, abort.signal));
    done = finish(ctx, current, result);
    after = afterMessages(messages, result);
  } catch (err) {
    if (claim?.signal.aborted) throw new ClaimLost();
    if (abort.signal.aborted) return { failed: true }; // cancelled meanwhile: cancel() wrote the state and the event
    ctx.log.warn({ err, response: row.id }, 'background response failed');
    done = failed(current, err);
  } finally {
    running.delete(row.id);
    claim?.signal.removeEventListener('abort', lost);
  }
  await ctx.store.db.transaction().execute(async (tx) => {
    // A worker whose claim lapsed (it stalled, and another instance took the response over) writes nothing.
    await claim?.fence(tx);
    // Only an unfinished response moves; a cancel that won the race keeps its state and its event.
    if (await store.finishResponse(tx, done, after)) {
      await recordTurn(ctx, tx, row.project_id, done, { conversationId: conversationIdOf(payload.request.conversation) });
      await emitEvent(ctx, tx, row.project_id, eventFor(done.status), { id: row.id });
    }
  });
  ctx.jobs.wake(EVENT_FANOUT);
  return usageOf(done);
}

export async function getResponse(ctx: Ctx, projectId: string, id: string): Promise<ResponseObject> {
  return objectOf(await load(ctx.store.db, projectId, id));
}

/** Cancels a queued or running background response (emits `response.cancelled`); a cancelled one is returned as is. */
export async function cancelResponse(ctx: Ctx, projectId: string, id: string): Promise<ResponseObject> {
  const out = await ctx.store.db.transaction().execute(async (tx) => {
    const row = await load(tx, projectId, id);
    const r = objectOf(row);
    if (!row.background) throw invalid('Only responses created with background=true can be cancelled.', 'response_id', 'invalid_value');
    if (r.status === 'cancelled') return r;
    if (TERMINAL.includes(r.status)) throw invalid(`Cannot cancel a response with status '${r.status}'.`, 'response_id', 'invalid_value');
    const next: ResponseObject = { ...r, status: 'cancelled' };
    if (await store.cancelResponse(tx, next)) await emitEvent(ctx, tx, projectId, 'response.cancelled', { id });
    return next;
  });
  ctx.services.responses.running.get(id)?.abort(new Error('cancelled'));
  ctx.jobs.wake(EVENT_FANOUT);
  return out;
}

/** `DELETE /v1/responses/{id}`. */
export async function deleteResponse(ctx: Ctx, projectId: string, id: string) {
  await load(ctx.store.db, projectId, id);
  await store.deleteResponse(ctx.store.db, id);
  await deleteItems(ctx.store.db, id);
  return { id, object: 'response' as const, deleted: true };
}

/**
 * A finished background response made up for `standin trigger response.<status>`, stored so the event's
 * `data.id` retrieves. The caller emits the event in the same transaction.
 */
export async function createFinishedResponse(
  ctx: Pick<Ctx, 'clock'>,
  exec: Exec,
  projectId: string,
  status: 'completed' | 'failed' | 'cancelled' | 'incomplete',
  model = 'gpt-4.1-mini',
): Promise<ResponseObject> {
  const id = newId('resp', ctx.clock);
  const body = {
    model,
    input: 'Summarize the release notes for the on-call channel.',
    background: true,
    instructions: 'Answer in two sentences.',
  };
  const messages = assemble(body.instructions, [], [{ role: 'user', content: body.input }]);
  let r = baseObject(ctx, id, body, 'in_progress');
  const text = 'Release 4.2 ships faster webhook retries and a new dashboard page. No action is needed from on-call.';
  const usage = { prompt_tokens: 24, completion_tokens: 21, total_tokens: 45 };
  if (status === 'completed') r = finish(ctx, r, { content: text, tool_calls: [], finish_reason: 'stop', usage });
  else if (status === 'incomplete')
    r = finish(ctx, r, {
      content: text.slice(0, 40),
      tool_calls: [],
      finish_reason: 'length',
      usage: { ...usage, completion_tokens: 16, total_tokens: 40 },
    });
  else if (status === 'failed') r = failed(r, { code: 'server_error', message: 'The model provider did not answer in time.' });
  else r = { ...r, status: 'cancelled' };
  if (status === 'incomplete') r.max_output_tokens = 16;
  await store.insertResponse(exec, projectId, r, messages);
  return r;
}

const checkBody = bodyChecker<CreateResponseRequest>(CreateResponseBody);

/**
 * One request body run without HTTP (a line of a batch): the status and body `POST /v1/responses` would
 * answer. A batch line runs in the foreground: `background` has no place in it.
 */
export async function runResponseBody(
  ctx: Ctx,
  projectId: string,
  body: unknown,
): Promise<{ status: number; body: unknown; usage?: Usage }> {
  try {
    const checked = checkBody(body);
    if (checked.background)
      throw invalid(
        `'background' is not supported in a batch: the batch itself runs in the background.`,
        'background',
        'unsupported_parameter',
      );
    const r = await createResponse(ctx, projectId, checked);
    return { status: 200, body: r, usage: usageOf(r) };
  } catch (err) {
    const e = toApiError(err);
    return { status: e.status, body: e.toBody() };
  }
}
