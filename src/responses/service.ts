import type { ChangeBus } from '../core/bus.js';
import { invalid, notFound } from '../core/errors.js';
import { EVENT_FANOUT, emitEvent } from '../core/events.js';
import { newId } from '../core/ids.js';
import { ClaimLost, type JobClaim } from '../core/jobs.js';
import type { Ctx } from '../core/module.js';
import type { ChatMessage, ChatRequest, ChatResult, ChatTool } from '../models/types.js';
import type { Ticket, Usage } from '../ratelimit/service.js';
import type { Exec } from '../store/db.js';
import { bodyChecker, toApiError } from '../core/validation.js';
import { ResponseWriter, type EventSink, type StreamEvent } from './events.js';
import { builtinReasoning, DEFAULT_EFFORT, isReasoningModel, sealReasoning } from './reasoning.js';
import { assemble, conversationIdOf, prepareTurn, recordTurn } from './inputs.js';
import { deleteItems } from './items-store.js';
import { customFunction } from './custom-tools.js';
import {
  CreateResponseBody,
  isCustomTool,
  isFunctionTool,
  type CreateResponseRequest,
  type ResponseObject,
  type ResponseStatus,
} from './schemas.js';
import { EventLog } from './event-log.js';
import { appendEvents, deleteEvents, instanceKey } from './stream-store.js';
import * as store from './store.js';
import { admitHosted, checkHostedChoice, checkToolAccess, checkTools, echoHosted } from './tools/check.js';
import { runLoop } from './tools/loop.js';

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
  /** Wakes the streams following a background response's event log (stream.ts). */
  bus: ChangeBus;
}

const TERMINAL: readonly string[] = ['completed', 'failed', 'cancelled', 'incomplete'] satisfies ResponseStatus[];

function chatRequest(body: CreateResponseRequest, messages: ChatMessage[], signal?: AbortSignal): ChatRequest {
  const choice = body.tool_choice;
  // `allowed_tools` narrows the tools the model sees this turn; its mode is the tool choice.
  const allowed =
    choice && typeof choice === 'object' && choice.type === 'allowed_tools'
      ? new Set(choice.tools.filter((t) => t.type === 'function' || t.type === 'custom').map((t) => String(t.name)))
      : undefined;
  // The client's functions and custom tools (each a function of one string `input`: custom-tools.ts);
  // the hosted tools' functions join them in the loop (tools/loop.ts).
  const tools: ChatTool[] | undefined = body.tools
    ?.filter((t) => (isFunctionTool(t) || isCustomTool(t)) && (!allowed || allowed.has(t.name)))
    .map((t) =>
      isFunctionTool(t)
        ? {
            type: 'function',
            function: {
              name: t.name,
              description: t.description ?? undefined,
              parameters: t.parameters ?? undefined,
              strict: t.strict ?? null,
            },
          }
        : customFunction(t as Parameters<typeof customFunction>[0]),
    );
  const custom = body.tools?.filter(isCustomTool).map((t) => t.name);
  const format = body.text?.format;
  return {
    model: body.model,
    messages,
    tools: tools?.length ? tools : undefined,
    tool_choice:
      typeof choice !== 'object'
        ? choice
        : choice.type === 'allowed_tools'
          ? choice.mode
          : choice.type === 'function' || choice.type === 'custom'
            ? { type: 'function', function: { name: choice.name ?? '' } }
            : 'auto', // a hosted type: the loop forces its function in the first round
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
    custom: custom?.length ? custom : undefined,
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
    max_tool_calls: body.max_tool_calls ?? null,
    metadata: body.metadata ?? {},
    model: body.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt: null,
    conversation: body.conversation ? { id: conversationIdOf(body.conversation)! } : null,
    reasoning: isReasoningModel(body.model)
      ? { effort: body.reasoning?.effort ?? DEFAULT_EFFORT, summary: body.reasoning?.summary ?? body.reasoning?.generate_summary ?? null }
      : { effort: null, summary: null },
    service_tier: !body.service_tier || body.service_tier === 'auto' ? 'default' : body.service_tier,
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' }, verbosity: body.text?.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((t) =>
      isFunctionTool(t)
        ? { strict: true, description: null, parameters: null, ...t }
        : isCustomTool(t)
          ? { format: { type: 'text' }, ...t }
          : echoHosted(t),
    ),
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: null,
    user: body.user ?? null,
    safety_identifier: body.safety_identifier ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    prompt_cache_retention: body.prompt_cache_retention ?? null,
  };
}

/** Fills a response from a model result: output items, usage, and the final status. */
export function finish(ctx: Pick<Ctx, 'clock'>, response: ResponseObject, result: ChatResult): ResponseObject {
  return new ResponseWriter(response, ctx.clock).finish(result);
}

/** A failed response; the provider's error code when the response's vocabulary has it. */
function failed(response: ResponseObject, err: unknown): ResponseObject {
  const e = err as { code?: string; message?: string };
  const code = e.code === 'rate_limit_exceeded' || e.code === 'invalid_prompt' ? e.code : 'server_error';
  return { ...response, status: 'failed', error: { code, message: e.message ?? 'The model provider failed.' } };
}

/** The conversation a response leaves behind (for `previous_response_id`). */
function afterMessages(messages: ChatMessage[], result: ChatResult): ChatMessage[] {
  // A turn a hosted tool stopped (an approval asked) ends with no answer: nothing more to keep.
  if (result.content === null && !result.tool_calls.length) return messages;
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

/** The rules of the members the schema cannot say (docs/responses.md). */
function checkMembers(body: CreateResponseRequest): void {
  if (body.background && body.store === false) throw invalid(`'background' requires 'store' to be true.`, 'store', 'invalid_value');
  if (body.input === undefined && !body.previous_response_id)
    throw invalid(`Missing required parameter: 'input'.`, 'input', 'missing_required_parameter');
  body.tools = checkTools(body);
  const choice = body.tool_choice;
  if (choice && typeof choice === 'object') {
    if (choice.type === 'function' && !body.tools?.some((t) => isFunctionTool(t) && t.name === choice.name))
      throw invalid(`Tool choice 'function' with name '${choice.name}' not found in 'tools' parameter.`, 'tool_choice', 'invalid_value');
    if (choice.type === 'custom' && !body.tools?.some((t) => isCustomTool(t) && t.name === choice.name))
      throw invalid(`Tool choice 'custom' with name '${choice.name}' not found in 'tools' parameter.`, 'tool_choice', 'invalid_value');
    checkHostedChoice(body);
  }
  const r = body.reasoning;
  if (r && (r.effort != null || r.summary != null) && !isReasoningModel(body.model)) {
    const member = r.effort != null ? 'reasoning.effort' : 'reasoning.summary';
    throw invalid(`Unsupported parameter: '${member}' is not supported with this model.`, member, 'unsupported_parameter');
  }
  // Standin keeps no prompt templates (they are made in the platform's dashboard): any id names none.
  if (body.prompt) throw notFound('prompt', body.prompt.id, 'prompt.id');
}

/** How a response is streamed while it runs in this request: where its events go, and the client's going away. */
export interface Streaming {
  sink: EventSink;
  signal: AbortSignal;
}

/**
 * `POST /v1/responses`. In the foreground the model runs now and the answer is final (with `stream`, its
 * events go to `streaming.sink` as it runs); with `background: true` the response is stored `queued`, a
 * job runs it, and its end emits a webhook event (with `stream`, its events are kept for the streams
 * that follow it: stream.ts).
 */
export async function createResponse(
  ctx: Ctx,
  projectId: string,
  body: CreateResponseRequest,
  ticket?: Ticket,
  streaming?: Streaming,
): Promise<ResponseObject> {
  checkMembers(body);
  const models = ctx.services.models;
  if (!models.has(body.model))
    throw invalid(`The model '${body.model}' does not exist or you do not have access to it.`, 'model', 'model_not_found');
  await checkToolAccess(ctx, projectId, body.tools);
  const prepared = await prepareTurn(ctx, projectId, body);
  await admitHosted(ctx, projectId, body);
  const messages = prepared.messages;
  const id = newId('resp', ctx.clock);

  if (body.background) {
    const response = baseObject(ctx, id, body, 'queued');
    const job: RunResponseJob = { responseId: id, projectId, request: body, ticket };
    const events: StreamEvent[] = [];
    if (body.stream) new ResponseWriter(response, ctx.clock, (e) => events.push(e)).created();
    await ctx.store.db.transaction().execute(async (tx) => {
      await store.insertResponse(tx, projectId, response, messages, body.stream === true);
      await appendEvents(ctx, tx, id, events);
      await recordTurn(ctx, tx, projectId, response, prepared);
      await ctx.jobs.enqueue(tx, RUN_RESPONSE, job);
    });
    ctx.jobs.wake(RUN_RESPONSE);
    return response;
  }

  const response = baseObject(ctx, id, body, 'in_progress');
  const writer = new ResponseWriter(response, ctx.clock, streaming?.sink, body.max_tool_calls ?? null);
  if (streaming) {
    writer.created();
    writer.inProgress();
  }
  let turn: Turn;
  try {
    turn = await runTurn(ctx, projectId, body, messages, prepared.kept, writer, streaming?.signal);
  } catch (err) {
    // A client that went away stops the work; a stored response is kept, cancelled.
    const gone = streaming?.signal.aborted === true;
    if (!gone) ctx.log.warn({ err, response: id }, 'model call failed');
    turn = { done: gone ? { ...response, status: 'cancelled' } : writer.end(failed(response, err)), after: prepared.kept };
  }
  // Stored once, at its end (a streamed one before its terminal event goes out: stream.ts), with its items.
  const done = turn.done;
  await ctx.store.db.transaction().execute(async (tx) => {
    if (done.store) await store.insertResponse(tx, projectId, done, turn.after);
    await recordTurn(ctx, tx, projectId, done, prepared);
  });
  return done;
}

interface Turn {
  done: ResponseObject;
  after: ChatMessage[];
}

/**
 * One model turn through the writer: a reasoning model on the built-in provider reasons first (reasoning.ts),
 * then the model answers; with a stream, its pieces go to the writer as they come.
 */
async function runTurn(
  ctx: Ctx,
  projectId: string,
  body: CreateResponseRequest,
  messages: ChatMessage[],
  kept: ChatMessage[],
  writer: ResponseWriter,
  signal?: AbortSignal,
  streamed = signal !== undefined,
): Promise<Turn> {
  const models = ctx.services.models;
  if (isReasoningModel(body.model) && models.route(body.model)?.provider === 'builtin') {
    const reasoning = builtinReasoning(body, messages);
    if (reasoning) {
      if (body.include?.includes('reasoning.encrypted_content')) {
        const key = await instanceKey(ctx);
        reasoning.encrypted = (item) => sealReasoning(key, projectId, body.model, item, reasoning.summary, reasoning.tokens);
      }
      writer.reasoning(reasoning, (body.reasoning?.summary ?? body.reasoning?.generate_summary) != null);
    }
  }
  // Pieces only for a stream: a plain call gets the answer whole (and the built-in model's pacing of one piece).
  const hctx = {
    ctx,
    projectId,
    body,
    writer,
    signal,
    include: new Set<string>(body.include ?? []),
    model: body.model,
    state: new Map<string, unknown>(),
  };
  const { done, rounds, result } = await runLoop(hctx, chatRequest(body, messages, signal), streamed);
  return { done, after: afterMessages([...kept, ...rounds], result) };
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
  const request = payload.request;
  // A streamed background response keeps its events for the streams that follow it (stream.ts).
  // A run taking the response over continues its stream: the log numbers the events (event-log.ts).
  const log = request.stream ? await EventLog.open(ctx, row.id, claim) : undefined;
  const writer = new ResponseWriter(current, ctx.clock, log?.sink, request.max_tool_calls ?? null);
  if (log) writer.inProgress();
  if (!(await store.startResponse(ctx.store.db, current))) return { failed: true };
  const running = ctx.services.responses.running;
  const abort = new AbortController();
  running.set(row.id, abort);
  const lost = () => abort.abort(new ClaimLost());
  claim?.signal.addEventListener('abort', lost, { once: true });
  let turn: Turn;
  try {
    turn = await runTurn(ctx, payload.projectId, request, messages, messages, writer, abort.signal, log !== undefined);
  } catch (err) {
    if (claim?.signal.aborted) throw new ClaimLost();
    if (abort.signal.aborted) return { failed: true }; // cancelled meanwhile: cancel() wrote the state and the event
    ctx.log.warn({ err, response: row.id }, 'background response failed');
    turn = { done: writer.end(failed(current, err)), after: messages };
  } finally {
    running.delete(row.id);
    claim?.signal.removeEventListener('abort', lost);
  }
  const { done, after } = turn;
  await log?.settle();
  await ctx.store.db.transaction().execute(async (tx) => {
    // A worker whose claim lapsed (it stalled, and another instance took the response over) writes nothing.
    await claim?.fence(tx);
    // Only an unfinished response moves; a cancel that won the race keeps its state and its event.
    if (await store.finishResponse(tx, done, after)) {
      await log?.flush(tx);
      await recordTurn(ctx, tx, row.project_id, done, { conversationId: conversationIdOf(payload.request.conversation) });
      await emitEvent(ctx, tx, row.project_id, eventFor(done.status), { id: row.id });
    }
  });
  ctx.services.responses.bus.notify(row.id);
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
  ctx.services.responses.bus.notify(id);
  ctx.services.responses.running.get(id)?.abort(new Error('cancelled'));
  ctx.jobs.wake(EVENT_FANOUT);
  return out;
}

/** `DELETE /v1/responses/{id}`. */
export async function deleteResponse(ctx: Ctx, projectId: string, id: string) {
  await load(ctx.store.db, projectId, id);
  await ctx.store.db.transaction().execute(async (tx) => {
    await store.deleteResponse(tx, id);
    await deleteEvents(tx, id);
    await deleteItems(tx, id);
  });
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
    if (checked.stream)
      throw invalid(`'stream' is not supported in a batch: each line's reply is written whole.`, 'stream', 'unsupported_parameter');
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
