import { invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Ctx } from '../../core/module.js';
import type { ListParams } from '../../core/pagination.js';
import type { Ticket } from '../../ratelimit/service.js';
import { fromJson, toJson, type Tx } from '../../store/db.js';
import type { RequiredAction, ResponseFormat, RunObject, StepDetails, Tool, ToolChoice, TruncationStrategy } from '../objects.js';
import { expireIfDue } from '../runs/finish.js';
import { enqueueRunJob } from '../runs/jobs.js';
import { runtime } from '../runs/runtime.js';
import { isActive } from '../runs/states.js';
import type { CreateRunRequest, CreateThreadAndRunRequest, ModifyRequest, SubmitToolOutputsRequest } from '../schemas.js';
import { getAssistant } from '../store/assistants.js';
import { appendEvents, insertEvents, type RunEvent, type StoredEvent } from '../store/events.js';
import { insertMessages } from '../store/messages.js';
import * as store from '../store/runs.js';
import { completeToolStep, openToolSteps } from '../store/steps.js';
import { getThread, holdThread } from '../store/threads.js';
import {
  checkMessage,
  checkMetadata,
  checkResponseFormat,
  checkToolChoice,
  checkToolResources,
  checkTools,
  checkTruncation,
  isObject,
  type MessageInput,
  type MetadataInput,
  type ToolResourcesInput,
} from '../validate.js';
import { runView, stepEvent, threadView } from '../views.js';
import { checkModel, checkToolsVsFormat, normalizeTools } from './common.js';
import { lockThread } from './lock.js';
import { attachFiles, messageRow } from './messages.js';
import { checkThreadBody, insertThread } from './threads.js';
import { queueExecution, write, type Effects } from './write.js';

/**
 * Runs: created queued (holding their thread), executed by the engine (runs/engine.ts), cancelled,
 * resumed with tool outputs, expired by whoever reads them after their deadline.
 */

/** How long an unfinished run lives (the platform's 10 minutes), Standin clock. */
const RUN_TTL_MS = 10 * 60_000;

/** The members of a create request that set up the run, once checked. */
interface RunSettings {
  model?: string | null;
  instructions?: string | null;
  additional_instructions?: string | null;
  additional_messages?: MessageInput[] | null;
  tools?: Tool[] | null;
  metadata?: MetadataInput;
  temperature?: number | null;
  top_p?: number | null;
  max_prompt_tokens?: number | null;
  max_completion_tokens?: number | null;
  truncation_strategy?: TruncationStrategy | null;
  tool_choice?: ToolChoice | null;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat | null;
  reasoning_effort?: string | null;
}

/** What a run takes from its assistant where the request gives nothing (stored values, before the object's defaults). */
export interface AssistantDefaults {
  id: string;
  model: string;
  instructions: string | null;
  tools: Tool[];
  response_format: ResponseFormat | null;
  temperature: number | null;
  top_p: number | null;
  reasoning_effort: string | null;
}

function checkRunBody(body: {
  tools?: unknown;
  metadata?: unknown;
  truncation_strategy?: unknown;
  tool_choice?: unknown;
  response_format?: unknown;
  additional_messages?: unknown[] | null;
}): asserts body is RunSettings {
  checkTools(body.tools, 20);
  checkMetadata(body.metadata);
  checkTruncation(body.truncation_strategy);
  checkToolChoice(body.tool_choice);
  checkResponseFormat(body.response_format);
  if (Array.isArray(body.additional_messages)) body.additional_messages.forEach((m, i) => checkMessage(m, `additional_messages[${i}]`));
}

const lockError = (threadId: string, runId: string) => invalid(`Thread ${threadId} already has an active run ${runId}.`, null, null);

/** The run row a create request describes, with the assistant's settings where the request gives none. */
function runRow(ctx: Ctx, projectId: string, threadId: string, assistant: AssistantDefaults, body: RunSettings): store.RunRow {
  const model = body.model ?? assistant.model;
  checkModel(ctx, model);
  const tools = body.tools ?? assistant.tools;
  const choice = body.tool_choice ?? 'auto';
  if (typeof choice === 'object') {
    const offered =
      choice.type === 'function'
        ? tools.some((t) => t.type === 'function' && t.function.name === choice.function?.name)
        : tools.some((t) => t.type === choice.type);
    if (!offered) {
      const what = choice.type === 'function' ? `function '${choice.function?.name}'` : `'${choice.type}'`;
      throw invalid(`Invalid 'tool_choice': the tool ${what} is not among the run's tools.`, 'tool_choice', 'invalid_value');
    }
  }
  const responseFormat = body.response_format ?? assistant.response_format;
  checkToolsVsFormat(tools, responseFormat);
  let instructions = body.instructions ?? assistant.instructions ?? '';
  if (body.additional_instructions)
    instructions = instructions ? `${instructions}\n\n${body.additional_instructions}` : body.additional_instructions;
  const nowMs = ctx.clock.now();
  const deadline = nowMs + RUN_TTL_MS;
  const truncation: TruncationStrategy = {
    type: body.truncation_strategy?.type ?? 'auto',
    last_messages: body.truncation_strategy?.last_messages ?? null,
  };
  return {
    id: newId('run', ctx.clock),
    project_id: projectId,
    thread_id: threadId,
    assistant_id: assistant.id,
    created_at: Math.floor(nowMs / 1000),
    status: 'queued',
    model,
    instructions,
    tools: JSON.stringify(normalizeTools(tools, model)),
    metadata: toJson(body.metadata),
    temperature: body.temperature ?? assistant.temperature ?? null,
    top_p: body.top_p ?? assistant.top_p ?? null,
    max_prompt_tokens: body.max_prompt_tokens ?? null,
    max_completion_tokens: body.max_completion_tokens ?? null,
    truncation_strategy: JSON.stringify(truncation),
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

/** What a create hands its caller besides the run: the run's first events as committed, `events` filled by the create. */
export interface CreateOptions {
  ticket?: Ticket;
  assistant?: AssistantDefaults;
  /** Filled with the events the create committed, as stored: a streamed create writes them without reading them back. */
  events?: StoredEvent[];
}

/** Inserts a queued run holding the thread, its first events, its execution and its expiry jobs; returns the events. */
async function startRun(ctx: Ctx, tx: Tx, run: store.RunRow, leading: RunEvent[], fx: Effects): Promise<StoredEvent[]> {
  const view = runView(run);
  const events: RunEvent[] = [...leading, { event: 'thread.run.created', data: view }, { event: 'thread.run.queued', data: view }];
  // A new run's first events are numbered as it is inserted (no update of its counter after).
  run.event_seq = events.length;
  await store.insertRun(tx, run);
  if (!(await holdThread(tx, run.thread_id, run.id))) throw lockError(run.thread_id, 'run_unknown');
  const stored = await insertEvents(ctx, tx, run.id, 0, events);
  await queueExecution(ctx, tx, run.id, fx, { created: true });
  await enqueueRunJob(ctx, tx, 'run.expire', { runId: run.id }, { runAt: Number(run.deadline) });
  fx.touched.add(run.id);
  return stored;
}

/** The assistant a run is created for (read once a request: the rate limiter's admission and the create share it). */
export async function runAssistant(ctx: Ctx, projectId: string, id: string): Promise<AssistantDefaults> {
  const row = await getAssistant(ctx.store.db, projectId, id);
  if (!row) throw notFound('assistant', id, 'assistant_id');
  return {
    id: row.id,
    model: row.model,
    instructions: row.instructions,
    tools: fromJson<Tool[]>(row.tools) ?? [],
    response_format: fromJson<ResponseFormat>(row.response_format),
    temperature: row.temperature,
    top_p: row.top_p,
    reasoning_effort: row.reasoning_effort,
  };
}

/** Creates a run on a thread; `ticket` is the rate limiter's admission, given back when the run ends. */
export async function createRun(
  ctx: Ctx,
  projectId: string,
  threadId: string,
  body: CreateRunRequest,
  opts: CreateOptions = {},
): Promise<store.RunRow> {
  checkRunBody(body);
  const assistant = opts.assistant ?? (await runAssistant(ctx, projectId, body.assistant_id));
  return write(ctx, async (tx, fx) => {
    const thread = await lockThread(ctx, tx, projectId, threadId, fx, lockError);
    const additional: MessageInput[] = body.additional_messages ?? [];
    // Before the insert: the attachments are counted against the thread's files so far.
    await attachFiles(
      ctx,
      tx,
      projectId,
      thread,
      additional.map((m, i) => ({ attachments: m.attachments, param: `additional_messages[${i}]` })),
    );
    await insertMessages(
      tx,
      additional.map((m) => messageRow(ctx, projectId, threadId, m)),
    );
    const run = runRow(ctx, projectId, threadId, assistant, body);
    run.ratelimit_ticket = toJson(opts.ticket);
    const events = await startRun(ctx, tx, run, [], fx);
    opts.events?.splice(0, opts.events.length, ...events);
    return run;
  });
}

/** Creates a thread (with its messages) and a run on it, in one transaction. */
export async function createThreadAndRun(
  ctx: Ctx,
  projectId: string,
  body: CreateThreadAndRunRequest,
  opts: CreateOptions = {},
): Promise<store.RunRow> {
  const thread = body.thread ?? {};
  if (!isObject(thread)) throw invalid("Invalid type for 'thread': expected an object.", 'thread', 'invalid_type');
  for (const k of Object.keys(thread)) {
    if (!['messages', 'tool_resources', 'metadata'].includes(k))
      throw invalid(`Unrecognized request argument supplied: 'thread.${k}'.`, `thread.${k}`, 'unknown_parameter');
  }
  checkThreadBody(thread, 'thread');
  checkToolResources(body.tool_resources, 'tool_resources', { helper: false });
  const toolResources: ToolResourcesInput | null | undefined = body.tool_resources;
  checkRunBody(body);
  const assistant = opts.assistant ?? (await runAssistant(ctx, projectId, body.assistant_id));
  return write(ctx, async (tx, fx) => {
    const threadRow = await insertThread(ctx, tx, projectId, thread, toolResources, 'thread');
    const run = runRow(ctx, projectId, threadRow.id, assistant, body);
    run.ratelimit_ticket = toJson(opts.ticket);
    const events = await startRun(ctx, tx, run, [{ event: 'thread.created', data: threadView(threadRow) }], fx);
    opts.events?.splice(0, opts.events.length, ...events);
    return run;
  });
}

/** Reads a run, expiring it first when its time is up (so an advanced clock shows at once). */
export async function readRun(ctx: Ctx, projectId: string, threadId: string, runId: string): Promise<store.RunRow> {
  const row = await store.getRun(ctx.store.db, projectId, threadId, runId);
  if (!row) {
    if (!(await getThread(ctx.store.db, projectId, threadId))) throw notFound('thread', threadId);
    throw notFound('run', runId);
  }
  if (!isActive(row.status) || ctx.clock.now() < Number(row.deadline)) return row;
  return write(ctx, async (tx, fx) => {
    const { run, expired } = await expireIfDue(ctx, tx, (await store.getRunById(tx, runId)) ?? row);
    if (expired) fx.ended.add(runId);
    return run;
  });
}

export async function listRuns(ctx: Ctx, projectId: string, threadId: string, page: ListParams) {
  if (!(await getThread(ctx.store.db, projectId, threadId))) throw notFound('thread', threadId);
  for (const id of await store.dueRunIds(ctx.store.db, threadId, ctx.clock.now())) await readRun(ctx, projectId, threadId, id);
  return store.pageRuns(ctx.store.db, projectId, threadId, page, runView);
}

export async function modifyRun(ctx: Ctx, projectId: string, threadId: string, runId: string, body: ModifyRequest): Promise<RunObject> {
  checkMetadata(body.metadata);
  const run = await readRun(ctx, projectId, threadId, runId);
  if (body.metadata === undefined) return runView(run);
  return runView(await store.setRunMetadata(ctx.store.db, runId, body.metadata));
}

/** cancel: queued, in_progress and requires_action runs go to `cancelling`; the worker ends them `cancelled`. */
export async function cancelRun(ctx: Ctx, projectId: string, threadId: string, runId: string): Promise<RunObject> {
  const current = await readRun(ctx, projectId, threadId, runId);
  const row = await write(ctx, async (tx, fx) => {
    const updated = await store.markCancelling(tx, runId);
    if (!updated) {
      const now = (await store.getRunById(tx, runId)) ?? current;
      throw invalid(`Cannot cancel run with status '${now.status}'.`, null, null);
    }
    await appendEvents(ctx, tx, runId, [{ event: 'thread.run.cancelling', data: runView(updated) }]);
    await queueExecution(ctx, tx, runId, fx);
    fx.touched.add(runId);
    return updated;
  });
  runtime(ctx).engine.interrupt(runId);
  return runView(row);
}

/**
 * submit_tool_outputs: every tool call of `required_action` answered in one request. The outputs go
 * into the step's function calls, the step completes, the run is queued again. Returns the run, the
 * event number the submission's stream starts after and the events it committed (as stored).
 */
export async function submitToolOutputs(
  ctx: Ctx,
  projectId: string,
  threadId: string,
  runId: string,
  body: SubmitToolOutputsRequest,
): Promise<{ run: store.RunRow; afterSeq: number; events: StoredEvent[] }> {
  await readRun(ctx, projectId, threadId, runId);
  const answers = body.tool_outputs.map((o, i) => {
    if (o.tool_call_id === undefined)
      throw invalid(
        `Missing required parameter: 'tool_outputs[${i}].tool_call_id'.`,
        `tool_outputs[${i}].tool_call_id`,
        'missing_required_parameter',
      );
    return { id: o.tool_call_id, output: o.output ?? '' };
  });
  return write(ctx, async (tx, fx) => {
    const run = await store.getRunById(tx, runId);
    if (!run) throw notFound('run', runId);
    const refused = () => invalid(`Runs in status "${run.status}" do not accept tool outputs.`, null, null);
    if (run.status !== 'requires_action') throw refused();
    const expected = (fromJson<RequiredAction>(run.required_action)?.submit_tool_outputs.tool_calls ?? []).map((c) => c.id);
    const given = answers.map((a) => a.id);
    const seen = new Set<string>();
    given.forEach((id, i) => {
      if (!expected.includes(id))
        throw invalid(
          `Invalid 'tool_outputs[${i}].tool_call_id': no tool call '${id}' is awaiting output in this run.`,
          `tool_outputs[${i}].tool_call_id`,
          'invalid_value',
        );
      if (seen.has(id))
        throw invalid(
          `Invalid 'tool_outputs[${i}].tool_call_id': '${id}' was given more than once.`,
          `tool_outputs[${i}].tool_call_id`,
          'invalid_value',
        );
      seen.add(id);
    });
    if (expected.some((id) => !seen.has(id))) {
      throw invalid(
        `Expected tool outputs for call_ids [${expected.map((x) => `'${x}'`).join(', ')}], got [${given.map((x) => `'${x}'`).join(', ')}]`,
        'tool_outputs',
        null,
      );
    }
    const queued = await store.markQueued(tx, runId);
    if (!queued) throw refused();
    const outputs = new Map(answers.map((a) => [a.id, a.output]));
    const events: RunEvent[] = [];
    for (const s of await openToolSteps(tx, runId)) {
      const details = JSON.parse(s.step_details) as StepDetails;
      if (details.type !== 'tool_calls') continue;
      const answered: StepDetails = {
        ...details,
        tool_calls: details.tool_calls.map((c) =>
          c.type === 'function' && outputs.has(c.id) ? { ...c, function: { ...c.function, output: outputs.get(c.id) ?? '' } } : c,
        ),
      };
      const done = await completeToolStep(tx, s.id, JSON.stringify(answered), ctx.clock.nowSeconds());
      events.push({ event: 'thread.run.step.completed', data: stepEvent(done) });
    }
    events.push({ event: 'thread.run.queued', data: runView(queued) });
    const afterSeq = Number(queued.event_seq);
    const stored = await appendEvents(ctx, tx, runId, events);
    await queueExecution(ctx, tx, runId, fx);
    fx.touched.add(runId);
    return { run: queued, afterSeq, events: stored };
  });
}
