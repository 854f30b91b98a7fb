import { randomUUID } from 'node:crypto';
import type { Ctx } from '../core/module.js';
import type { JobDefinition } from '../core/jobs.js';
import { newId } from '../core/ids.js';
import { ModelError } from '../models/service.js';
import type { ModelRegistry } from '../models/service.js';
import { countMessage, countPrompt, countTokens } from '../models/service.js';
import type { ChatChunk, ChatMessage, ChatRequest, ChatResult, ChatTool } from '../models/types.js';
import { fromJson, toJson, type Tx } from '../store/db.js';
import type { RunBus } from './bus.js';
import { expireIfDue, finishRun, type Outcome, type RunRow } from './lifecycle.js';
import { RUN_EXECUTE, RUN_EXPIRE, settleTicket, WATCH_MS } from './service.js';
import * as store from './store.js';
import type { AssistantsTables } from './tables.js';
import { isTerminal, messageView, runView, stepView, type Json } from './views.js';

/**
 * The run engine. A run is executed by the `run.execute` job, which any worker may claim (with
 * PostgreSQL, any instance; SKIP LOCKED gives it to one). The worker then takes a lease on the run row
 * (owner token + expiry, renewed every few seconds) and every write it makes is conditional on still
 * holding it while the run is `in_progress`: a cancel, an expiry or a deletion by anyone makes the next
 * write fail, and the worker stops. One model turn per claim: the reply ends the run, or its function
 * calls put it in `requires_action` until submit_tool_outputs queues it again.
 *
 * Crashes: a run found `in_progress` with a lapsed lease was being executed by a process that died; it
 * is failed with `server_error` (never left in progress). A worker holds the run's execute job while it
 * executes the run, so the job of a dead worker comes back after its visibility timeout; a run started
 * at once by the instance that queued it (`kick`) has its execute job as a watchdog due 30 s later. On
 * start, SQLite (one process) clears every lease at once and re-queues the runs; PostgreSQL re-queues
 * runs whose lease has lapsed.
 */
const LEASE_MS = 30_000;
const HEARTBEAT_MS = 10_000;
/** Runs one process executes at once; more wait in the queue. */
const MAX_RUNNING = 256;
/** How long a run's event log is kept after the run has ended and its deadline has passed. */
const EVENTS_KEPT_MS = 10 * 60_000;
/** How often a cross-instance change of a running run is looked for, at most. */
const CHECK_MS = 100;
/** Least time between two writes of a streaming reply (the first piece is written at once). */
const FLUSH_EVERY_MS = 15;
const INTERRUPTED = 'The run was interrupted because the server processing it stopped. Please create a new run.';

class Lost extends Error {
  constructor() {
    super('the run changed under the worker');
  }
}

type StepRow = AssistantsTables['run_steps'];
type MessageRow = AssistantsTables['thread_messages'];
type Event = { event: string; data: unknown };

export interface RunEngine {
  interrupt(runId: string): void;
  /** Starts a run here now; when it cannot start here, a job retries it. */
  kick(runId: string): void;
  /** Waits (bounded) for the runs this process executes; runs still going are left to recovery. */
  stop(timeoutMs?: number): Promise<void>;
  jobs(): JobDefinition[];
  /** Re-queues runs left behind by a stopped process. */
  sweep(): Promise<number>;
}

export function createRunEngine(ctx: Ctx, bus: RunBus, models: ModelRegistry): RunEngine {
  const processId = randomUUID().slice(0, 8);
  const executing = new Map<string, AbortController>();
  const running = new Set<Promise<void>>();
  const db = ctx.store.db;

  function interrupt(runId: string) {
    executing.get(runId)?.abort(new Lost());
  }

  /**
   * Takes the run's lease and starts executing it. Returns the execution (to await or not), or the moment
   * to look again when the run cannot start here now (held elsewhere, or this process is full), or
   * nothing when there is nothing to do.
   */
  async function start(runId: string): Promise<{ done: Promise<void> } | { retryAt: number } | undefined> {
    const now = ctx.clock.now();
    // This process is on it already (its lease may look lapsed after a clock jump).
    if (executing.has(runId)) return { retryAt: now + WATCH_MS };
    if (executing.size >= MAX_RUNNING) return { retryAt: now + 25 };
    const token = `${processId}:${randomUUID().slice(0, 8)}`;
    const claimed = await db
      .updateTable('thread_runs')
      .set({ lease_owner: token, lease_until: now + LEASE_MS })
      .where('id', '=', runId)
      .where('status', 'in', ['queued', 'in_progress', 'cancelling'])
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .returningAll()
      .executeTakeFirst();
    if (!claimed) {
      const run = await store.getRunById(db, runId);
      if (!run || !['queued', 'in_progress', 'cancelling'].includes(run.status)) return undefined;
      return { retryAt: Math.min(Number(run.lease_until ?? now), now + WATCH_MS) };
    }
    const ac = new AbortController();
    executing.set(runId, ac);
    const stopWatch = watch(runId, token, ac);
    const done: Promise<void> = drive(claimed, token, ac.signal)
      .catch((err) => ctx.log.error({ err, run: runId }, 'run execution failed'))
      .finally(() => {
        stopWatch();
        executing.delete(runId);
        running.delete(done);
      });
    running.add(done);
    return { done };
  }

  /**
   * The `run.execute` handler: executes the run while holding the job, so a worker that dies mid-run
   * leaves the job to come back after its visibility timeout (LEASE_MS), when the lease has lapsed too.
   */
  async function execute({ runId }: { runId: string }): Promise<void | { retryAt: number }> {
    const res = await start(runId);
    if (res && 'done' in res) return void (await res.done);
    return res;
  }

  /** Aborts the model call when the run leaves `in_progress` (another instance's cancel arrives through the bus). */
  function watch(runId: string, token: string, ac: AbortController): () => void {
    const check = async () => {
      const row = await db.selectFrom('thread_runs').select(['status', 'lease_owner']).where('id', '=', runId).executeTakeFirst().catch(() => undefined);
      // `queued` is what an older notification may still show before this worker's start commits.
      if (!row || row.lease_owner !== token || (row.status !== 'in_progress' && row.status !== 'queued')) ac.abort(new Lost());
    };
    // Our own commits notify too: check at most every CHECK_MS (a cancel in this process interrupts directly).
    let lastCheck = 0;
    const off = bus.on(runId, () => {
      const now = performance.now();
      if (ac.signal.aborted || now - lastCheck < CHECK_MS) return;
      lastCheck = now;
      void check();
    });
    const beat = setInterval(async () => {
      const renewed = await db
        .updateTable('thread_runs')
        .set({ lease_until: ctx.clock.now() + LEASE_MS })
        .where('id', '=', runId)
        .where('lease_owner', '=', token)
        .where('status', '=', 'in_progress')
        .executeTakeFirst()
        .catch(() => undefined);
      if (!renewed || !Number(renewed.numUpdatedRows)) ac.abort(new Lost());
    }, HEARTBEAT_MS);
    beat.unref();
    return () => {
      off();
      clearInterval(beat);
    };
  }

  /** Runs `fn` in a transaction and wakes the run's followers after the commit. */
  async function commit<T>(runId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    const out = await db.transaction().execute(fn);
    bus.notify(runId);
    return out;
  }

  async function end(run: RunRow, outcome: Outcome, opts: Parameters<typeof finishRun>[4] = {}) {
    const ended = await commit(run.id, (tx) => finishRun(ctx, tx, run.id, outcome, opts));
    if (ended) await afterEnd(ended);
    return ended;
  }

  /** After a run ended: the rate limiter gets its admission back (the expiry job drops the event log later). */
  async function afterEnd(run: Pick<RunRow, 'id' | 'ratelimit_ticket'>) {
    if (run.ratelimit_ticket) await settleTicket(ctx, run.id);
  }

  async function drive(run: RunRow, token: string, signal: AbortSignal): Promise<void> {
    if (run.status === 'cancelling') {
      await end(run, { status: 'cancelled' }, { from: ['cancelling'] });
      return;
    }
    if (ctx.clock.now() >= Number(run.deadline)) {
      const { expired, run: now } = await commit(run.id, (tx) => expireIfDue(ctx, tx, run));
      if (expired) await afterEnd(now);
      return;
    }
    if (run.status === 'in_progress') {
      await end(run, { status: 'failed', error: { code: 'server_error', message: INTERRUPTED } }, { from: ['in_progress'] });
      return;
    }
    const started = await commit(run.id, async (tx) => {
      const row = await tx
        .updateTable('thread_runs')
        .set((eb) => ({ status: 'in_progress', started_at: eb.fn.coalesce('started_at', eb.val(ctx.clock.nowSeconds())), event_seq: eb('event_seq', '+', 1) }))
        .where('id', '=', run.id)
        .where('status', '=', 'queued')
        .where('lease_owner', '=', token)
        .returningAll()
        .executeTakeFirst();
      if (row) await store.insertEvents(ctx, tx, run.id, Number(row.event_seq) - 1, [{ event: 'thread.run.in_progress', data: runView(row) }]);
      return row;
    });
    if (!started) return settleAfterLoss(run.id, token);
    try {
      await turn(started, token, signal);
    } catch (err) {
      if (err instanceof Lost || signal.aborted) return settleAfterLoss(run.id, token);
      const error =
        err instanceof ModelError
          ? { code: err.code, message: err.message }
          : { code: 'server_error' as const, message: 'The server had an error while processing your run.' };
      if (!(err instanceof ModelError)) ctx.log.error({ err, run: run.id }, 'run failed');
      await end(started, { status: 'failed', error }, { from: ['in_progress'], leaseToken: token });
      await settleAfterLoss(run.id, token);
    }
  }

  /**
   * After the execution stopped early: finish a pending cancel; a run this worker still holds (or nobody
   * holds) in progress is failed rather than left so; a run still queued under this worker's lease is let go.
   */
  async function settleAfterLoss(runId: string, token: string) {
    const run = await store.getRunById(db, runId);
    if (!run) return;
    const ours = !run.lease_owner || run.lease_owner === token;
    if (run.status === 'cancelling') await end(run, { status: 'cancelled' }, { from: ['cancelling'] });
    else if (run.status === 'in_progress' && ours) await end(run, { status: 'failed', error: { code: 'server_error', message: INTERRUPTED } }, { from: ['in_progress'] });
    else if (run.status === 'queued' && run.lease_owner === token) {
      await db.updateTable('thread_runs').set({ lease_owner: null, lease_until: null }).where('id', '=', runId).where('lease_owner', '=', token).execute();
      await ctx.jobs.enqueue(db, RUN_EXECUTE, { runId });
      ctx.jobs.wake();
    }
  }

  /** One model turn: build the prompt, stream the reply into a message and/or a tool_calls step, settle the run. */
  async function turn(run: RunRow, token: string, signal: AbortSignal): Promise<void> {
    const prompt = await buildPrompt(run);
    if ('incomplete' in prompt) {
      await end(run, { status: 'incomplete', reason: prompt.incomplete }, { from: ['in_progress'], leaseToken: token });
      return;
    }
    const writer = new TurnWriter(ctx, run, token, commit);
    const result: ChatResult = await models.complete({ ...prompt.request, signal }, (chunk) => writer.chunk(chunk));
    await writer.drain();
    const usage = { prompt: result.usage.prompt_tokens, completion: result.usage.completion_tokens };
    const calls = result.finish_reason === 'length' ? [] : result.tool_calls;

    if (calls.length) {
      writer.toolCalls(calls);
      const turnUsage = writer.splitUsage(usage);
      await commit(run.id, async (tx) => {
        // The run update below is conditional on the lease; failing it rolls the whole turn back.
        await writer.flushIn(tx, false);
        await tx.updateTable('run_steps').set({ usage: toJson(turnUsage.tool) }).where('id', '=', writer.toolStepId!).execute();
        const row = await tx
          .updateTable('thread_runs')
          .set((eb) => ({
            status: 'requires_action',
            required_action: JSON.stringify({
              type: 'submit_tool_outputs',
              submit_tool_outputs: { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } })) },
            }),
            lease_owner: null,
            lease_until: null,
            prompt_used: eb('prompt_used', '+', usage.prompt),
            completion_used: eb('completion_used', '+', usage.completion),
          }))
          .where('id', '=', run.id)
          .where('status', '=', 'in_progress')
          .where('lease_owner', '=', token)
          .returningAll()
          .executeTakeFirst();
        if (!row) throw new Lost();
        await store.appendEvents(ctx, tx, run.id, [{ event: 'thread.run.requires_action', data: runView(row) }]);
      });
      return;
    }

    writer.ensureMessage();
    const turnUsage = writer.splitUsage(usage);
    const filtered = result.finish_reason === 'content_filter';
    const outcome: Outcome = result.finish_reason === 'length' ? { status: 'incomplete', reason: 'max_completion_tokens' } : { status: 'completed' };
    const ended = await commit(run.id, async (tx) => {
      // No lease check of its own: finishRun below only ends the run while this worker holds it.
      await writer.flushIn(tx, false);
      await tx.updateTable('run_steps').set({ usage: toJson(turnUsage.message) }).where('id', '=', writer.messageStepId!).execute();
      const extra: Event[] = [];
      if (filtered) {
        const m = await tx
          .updateTable('thread_messages')
          .set({ status: 'incomplete', incomplete_at: ctx.clock.nowSeconds(), incomplete_details: toJson({ reason: 'content_filter' }) })
          .where('id', '=', writer.messageId!)
          .returningAll()
          .executeTakeFirstOrThrow();
        extra.push({ event: 'thread.message.incomplete', data: messageView(m) });
      }
      const row = await finishRun(ctx, tx, run.id, outcome, { from: ['in_progress'], leaseToken: token, extraEvents: extra, usageDelta: usage });
      if (!row) throw new Lost();
      return row;
    });
    await afterEnd(ended);
  }

  /**
   * The model's input: instructions as the system message, the thread's messages in order, and this run's
   * earlier tool calls with their outputs. Truncation: `last_messages` keeps the n most recent thread
   * messages; `auto` drops messages from the middle (after the first) until the prompt fits the budget —
   * max_prompt_tokens minus what earlier turns used, else the model's context window less a completion
   * reserve. A prompt still over max_prompt_tokens ends the run `incomplete` (max_prompt_tokens); a spent
   * max_completion_tokens ends it `incomplete` (max_completion_tokens).
   */
  async function buildPrompt(run: RunRow): Promise<{ request: ChatRequest } | { incomplete: 'max_prompt_tokens' | 'max_completion_tokens' }> {
    const [messages, steps] = await Promise.all([store.threadMessages(db, run.thread_id), store.runSteps(db, run.id)]);
    const history: { key: string; items: ChatMessage[]; pinned: boolean }[] = [];
    for (const m of messages) history.push({ key: suffix(m.id), items: [toChat(m)], pinned: false });
    for (const s of steps) {
      if (s.type !== 'tool_calls') continue;
      const calls = ((fromJson<Json>(s.step_details)?.tool_calls ?? []) as Json[]).filter((c) => c.type === 'function');
      if (!calls.length) continue;
      const items: ChatMessage[] = [{ role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } })) }];
      for (const c of calls) items.push({ role: 'tool', tool_call_id: c.id, content: c.function.output ?? '' });
      history.push({ key: suffix(s.id), items, pinned: true });
    }
    history.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

    const tools: Json[] = fromJson<Json[]>(run.tools) ?? [];
    const fnTools: ChatTool[] = tools.filter((t) => t.type === 'function').map((t) => ({ type: 'function', function: t.function }));
    const system: ChatMessage[] = run.instructions ? [{ role: 'system', content: run.instructions }] : [];
    const strategy = fromJson<Json>(run.truncation_strategy) ?? { type: 'auto' };
    let kept = history;
    if (strategy.type === 'last_messages') {
      const n = Number(strategy.last_messages);
      const free = history.filter((h) => !h.pinned);
      const drop = new Set(free.slice(0, Math.max(0, free.length - n)));
      kept = history.filter((h) => !drop.has(h));
    }
    const route = models.route(run.model);
    const window = route?.contextWindow ?? 128_000;
    let budget = window - Math.min(4096, Math.floor(window / 4));
    if (run.max_prompt_tokens != null) budget = Math.min(budget, Number(run.max_prompt_tokens) - Number(run.prompt_used));
    const cost = (list: typeof history) => countPrompt([...system, ...list.flatMap((h) => h.items)], fnTools);
    let total = cost(kept);
    if (total > budget && strategy.type === 'auto') {
      // Keep the first and the latest thread message (and this run's tool calls); drop the oldest of the rest.
      kept = kept.slice();
      const first = kept.findIndex((h) => !h.pinned);
      let last = kept.length - 1;
      while (last >= 0 && kept[last].pinned) last--;
      for (let i = first + 1; first >= 0 && total > budget && i < last; ) {
        if (kept[i].pinned) {
          i++;
          continue;
        }
        total -= kept[i].items.reduce((n, m) => n + countMessage(m), 0);
        kept.splice(i, 1);
        last--;
      }
    }
    if (run.max_prompt_tokens != null && total > budget) return { incomplete: 'max_prompt_tokens' };
    let maxTokens: number | null = null;
    if (run.max_completion_tokens != null) {
      maxTokens = Number(run.max_completion_tokens) - Number(run.completion_used);
      if (maxTokens <= 0) return { incomplete: 'max_completion_tokens' };
    }
    const choice = fromJson<any>(run.tool_choice) ?? 'auto';
    const format = fromJson<any>(run.response_format);
    const request: ChatRequest = {
      model: run.model,
      messages: [...system, ...kept.flatMap((h) => h.items)],
      temperature: run.temperature,
      top_p: run.top_p,
      max_tokens: maxTokens,
    };
    if (fnTools.length) {
      request.tools = fnTools;
      // code_interpreter / file_search are never offered to a model (docs/threads.md): forcing one means `auto`.
      request.tool_choice = typeof choice === 'string' ? (choice as 'none' | 'auto' | 'required') : choice.type === 'function' ? { type: 'function', function: { name: choice.function.name } } : 'auto';
      request.parallel_tool_calls = run.parallel_tool_calls === 1 || (run.parallel_tool_calls as unknown) === true;
    }
    if (format && format !== 'auto') request.response_format = format;
    return { request };
  }

  /**
   * The `run.expire` job, due at the run's deadline: expires an unfinished run; once the run has ended
   * (and its streams have long finished) it drops the run's event log.
   */
  async function expire({ runId }: { runId: string }): Promise<void | { retryAt: number }> {
    const run = await store.getRunById(db, runId);
    if (!run) return;
    if (isTerminal(run.status)) {
      await db.deleteFrom('run_events').where('run_id', '=', runId).execute();
      return;
    }
    if (ctx.clock.now() < Number(run.deadline)) return { retryAt: Number(run.deadline) };
    const { expired, run: now } = await commit(runId, (tx) => expireIfDue(ctx, tx, run));
    if (expired) {
      interrupt(runId);
      await afterEnd(now);
    }
    return { retryAt: ctx.clock.now() + EVENTS_KEPT_MS };
  }

  async function sweep(): Promise<number> {
    const now = ctx.clock.now();
    if (ctx.store.dialect === 'sqlite') {
      // One process owns an SQLite store: every lease found at start belongs to a process that is gone.
      await db.updateTable('thread_runs').set({ lease_until: 0 }).where('lease_owner', 'is not', null).where('status', 'in', ['queued', 'in_progress', 'cancelling']).execute();
    }
    const orphans = await db
      .selectFrom('thread_runs')
      .select('id')
      .where('status', 'in', ['queued', 'in_progress', 'cancelling'])
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .execute();
    for (const r of orphans) await ctx.jobs.enqueue(db, RUN_EXECUTE, { runId: r.id });
    if (orphans.length) ctx.jobs.wake();
    return orphans.length;
  }

  /**
   * Starts a run in this process right after the commit that queued it, without waiting for the job loop
   * and without holding a job: the run's execute job was queued as a watchdog due in WATCH_MS, which
   * finds the run ended (or still held) — or, if this process died, recovers it.
   */
  function kick(runId: string) {
    start(runId)
      .then(async (res) => {
        // Not started here (held elsewhere, or this process is full): a job comes back to it.
        if (res && 'retryAt' in res && res.retryAt < ctx.clock.now() + WATCH_MS) {
          await ctx.jobs.enqueue(db, RUN_EXECUTE, { runId }, { runAt: res.retryAt });
          ctx.jobs.wake();
        }
      })
      .catch((err) => ctx.log.error({ err, run: runId }, 'starting a run failed; its watchdog job will retry'));
  }

  async function stop(timeoutMs = 5000) {
    const all = Promise.allSettled([...running]);
    const timer = new Promise((r) => setTimeout(r, timeoutMs).unref());
    await Promise.race([all, timer]);
    for (const ac of executing.values()) ac.abort(new Lost());
    await Promise.race([Promise.allSettled([...running]), new Promise((r) => setTimeout(r, 1000).unref())]);
  }

  return {
    interrupt,
    kick,
    sweep,
    stop,
    jobs: () => [
      { kind: RUN_EXECUTE, handler: execute, concurrency: 32, visibilityMs: LEASE_MS, retryDelayMs: 1000 },
      { kind: RUN_EXPIRE, handler: expire, concurrency: 8, visibilityMs: 60_000, retryDelayMs: 5000 },
    ],
  };
}

const suffix = (id: string) => id.slice(id.indexOf('_') + 1);

/** A thread message as model input: text blocks joined; images named, since the providers take text. */
function toChat(m: MessageRow): ChatMessage {
  const blocks = (fromJson<Json[]>(m.content) ?? []).map((b) => {
    if (b.type === 'text') return b.text.value as string;
    if (b.type === 'image_url') return `[image: ${b.image_url.url}]`;
    if (b.type === 'image_file') return `[image file: ${b.image_file.file_id}]`;
    if (b.type === 'refusal') return b.refusal as string;
    return '';
  });
  return { role: m.role === 'assistant' ? 'assistant' : 'user', content: blocks.join('\n') };
}

/**
 * Turns the model's stream into rows and events: a message_creation step and its message for text, a
 * tool_calls step for function calls, each with the platform's event sequence. Chunks arrive
 * synchronously; writes are batched into one transaction per flush, in order, each conditional on the
 * worker still holding the run.
 */
class TurnWriter {
  messageId?: string;
  messageStepId?: string;
  toolStepId?: string;
  private text = '';
  private messageClosed = false;
  private messageRow?: MessageRow;
  private messageStep?: StepRow;
  private calls: { id: string; type: 'function'; function: { name: string; arguments: string; output: string | null } }[] = [];
  private ops: ((tx: Tx) => Promise<void>)[] = [];
  private events: Event[] = [];
  private dirtyText = false;
  private dirtyCalls = false;
  private flushing: Promise<void> | null = null;
  private failure: unknown;
  private closedUsage?: { prompt: number; completion: number };
  private lastFlush = 0;
  private closing = false;

  constructor(
    private ctx: Ctx,
    private run: RunRow,
    private token: string,
    private commit: <T>(runId: string, fn: (tx: Tx) => Promise<T>) => Promise<T>,
  ) {}

  chunk(c: ChatChunk) {
    if (c.type === 'text') {
      this.ensureMessage();
      if (!c.delta) return;
      const first = this.text === '';
      this.text += c.delta;
      this.dirtyText = true;
      this.events.push({
        event: 'thread.message.delta',
        data: { id: this.messageId, object: 'thread.message.delta', delta: { content: [{ index: 0, type: 'text', text: first ? { value: c.delta, annotations: [] } : { value: c.delta } }] } },
      });
    } else {
      this.closeMessage();
      this.ensureToolStep();
      const call = (this.calls[c.index] ??= { id: '', type: 'function', function: { name: '', arguments: '', output: null } });
      const delta: Json = { index: c.index, type: 'function', function: {} as Json };
      if (c.id) delta.id = call.id = c.id;
      if (c.name) delta.function.name = call.function.name = c.name;
      if (c.arguments) {
        call.function.arguments += c.arguments;
        delta.function.arguments = c.arguments;
      }
      if (c.id) delta.function = { name: call.function.name, arguments: call.function.arguments, output: null };
      this.dirtyCalls = true;
      this.events.push({ event: 'thread.run.step.delta', data: { id: this.toolStepId, object: 'thread.run.step.delta', delta: { step_details: { type: 'tool_calls', tool_calls: [delta] } } } });
    }
    this.schedule();
  }

  /** The final calls (providers that do not stream them, or to fix ids). */
  toolCalls(calls: { id: string; function: { name: string; arguments: string } }[]) {
    this.closeMessage();
    this.ensureToolStep();
    this.calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments, output: null } }));
    this.dirtyCalls = true;
  }

  ensureMessage() {
    if (this.messageId) return;
    const now = this.ctx.clock.nowSeconds();
    this.messageId = newId('msg', this.ctx.clock);
    this.messageStepId = newId('step', this.ctx.clock);
    const step = this.newStep(this.messageStepId, now, { type: 'message_creation', message_creation: { message_id: this.messageId } });
    const message: MessageRow = {
      id: this.messageId,
      project_id: this.run.project_id,
      thread_id: this.run.thread_id,
      created_at: now,
      role: 'assistant',
      content: '[]',
      attachments: '[]',
      metadata: null,
      assistant_id: this.run.assistant_id,
      run_id: this.run.id,
      status: 'in_progress',
      completed_at: null,
      incomplete_at: null,
      incomplete_details: null,
    };
    this.messageStep = step;
    this.messageRow = message;
    this.ops.push(async (tx) => {
      await tx.insertInto('run_steps').values(step).execute();
      await tx.insertInto('thread_messages').values(message).execute();
    });
    this.events.push(
      { event: 'thread.run.step.created', data: stepView(step) },
      { event: 'thread.run.step.in_progress', data: stepView(step) },
      { event: 'thread.message.created', data: messageView(message) },
      { event: 'thread.message.in_progress', data: messageView(message) },
    );
  }

  /** Text followed by tool calls: the message and its step end before the tool step starts. */
  private closeMessage() {
    if (!this.messageId || this.messageClosed) return;
    this.messageClosed = true;
    const now = this.ctx.clock.nowSeconds();
    const content = JSON.stringify(this.content());
    const prompt = 0;
    const completion = countTokens(this.text);
    this.closedUsage = { prompt, completion };
    const message = { ...this.messageRow!, content, status: 'completed', completed_at: now };
    const step = { ...this.messageStep!, status: 'completed', completed_at: now, usage: toJson({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }) };
    this.dirtyText = false;
    this.ops.push(async (tx) => {
      await tx.updateTable('thread_messages').set({ content, status: 'completed', completed_at: now }).where('id', '=', message.id).execute();
      await tx.updateTable('run_steps').set({ status: 'completed', completed_at: now, usage: step.usage }).where('id', '=', step.id).execute();
    });
    this.events.push({ event: 'thread.message.completed', data: messageView(message) }, { event: 'thread.run.step.completed', data: stepView(step) });
  }

  /** A new in-progress step of this run. */
  private newStep(id: string, createdAt: number, details: { type: 'message_creation' | 'tool_calls' } & Json): StepRow {
    return {
      id,
      project_id: this.run.project_id,
      run_id: this.run.id,
      thread_id: this.run.thread_id,
      assistant_id: this.run.assistant_id,
      created_at: createdAt,
      type: details.type,
      status: 'in_progress',
      step_details: JSON.stringify(details),
      last_error: null,
      cancelled_at: null,
      completed_at: null,
      expired_at: null,
      failed_at: null,
      usage: null,
      metadata: null,
    };
  }

  private ensureToolStep() {
    if (this.toolStepId) return;
    this.toolStepId = newId('step', this.ctx.clock);
    const step = this.newStep(this.toolStepId, this.ctx.clock.nowSeconds(), { type: 'tool_calls', tool_calls: [] });
    this.ops.push(async (tx) => void (await tx.insertInto('run_steps').values(step).execute()));
    this.events.push({ event: 'thread.run.step.created', data: stepView(step) }, { event: 'thread.run.step.in_progress', data: stepView(step) });
  }

  private content(): Json[] {
    return [{ type: 'text', text: { value: this.text, annotations: [] } }];
  }

  /** Usage of the turn, split between the steps it made (a text-then-calls turn has two). */
  splitUsage(u: { prompt: number; completion: number }) {
    const tot = (p: number, c: number) => ({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c });
    const first = this.closedUsage;
    if (!first) return { message: tot(u.prompt, u.completion), tool: tot(u.prompt, u.completion) };
    return { message: tot(first.prompt, first.completion), tool: tot(u.prompt - first.prompt, Math.max(0, u.completion - first.completion)) };
  }

  /** Writes what is pending inside `tx`; `guard` false when the caller's own run update checks the lease. */
  async flushIn(tx: Tx, guard = true) {
    const ops = this.ops.splice(0);
    const events = this.events.splice(0);
    if (guard) await this.guard(tx);
    for (const op of ops) await op(tx);
    // Flags are cleared before the awaited writes: a chunk arriving meanwhile marks them again, so the
    // next flush writes it (clearing them afterwards lost the stream's last piece on PostgreSQL).
    if (this.dirtyText && this.messageId && !this.messageClosed) {
      this.dirtyText = false;
      await tx.updateTable('thread_messages').set({ content: JSON.stringify(this.content()) }).where('id', '=', this.messageId).execute();
    }
    if (this.dirtyCalls && this.toolStepId) {
      this.dirtyCalls = false;
      await tx.updateTable('run_steps').set({ step_details: JSON.stringify({ type: 'tool_calls', tool_calls: this.calls.filter(Boolean) }) }).where('id', '=', this.toolStepId).execute();
    }
    await store.appendEvents(this.ctx, tx, this.run.id, events);
  }

  private async guard(tx: Tx) {
    const held = await tx
      .updateTable('thread_runs')
      .set({ lease_until: this.ctx.clock.now() + LEASE_MS })
      .where('id', '=', this.run.id)
      .where('lease_owner', '=', this.token)
      .where('status', '=', 'in_progress')
      .executeTakeFirst();
    if (!Number(held.numUpdatedRows)) throw new Lost();
  }

  private schedule() {
    if (this.flushing) return;
    this.flushing = (async () => {
      try {
        // Let the synchronous burst of chunks land first, then write them in one transaction; a fast
        // stream is written every FLUSH_EVERY_MS rather than once per piece.
        const wait = this.lastFlush ? Math.max(0, this.lastFlush + FLUSH_EVERY_MS - performance.now()) : 0;
        await new Promise((r) => (wait > 0 ? setTimeout(r, wait) : setImmediate(r)));
        while (!this.closing && (this.ops.length || this.events.length)) {
          this.lastFlush = performance.now();
          await this.commit(this.run.id, (tx) => this.flushIn(tx));
        }
      } catch (err) {
        this.failure = err;
      } finally {
        this.flushing = null;
      }
    })();
  }

  /** Waits for writes under way (a flush not yet begun is left to the turn's final transaction); rethrows a failed one. */
  async drain() {
    this.closing = true;
    while (this.flushing) await this.flushing;
    if (this.failure) throw this.failure;
  }
}

