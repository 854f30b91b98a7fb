import type { Ctx } from '../../core/module.js';
import { newId } from '../../core/ids.js';
import { countTokens } from '../../models/service.js';
import type { ChatChunk } from '../../models/types.js';
import { toJson, type Tx } from '../../store/db.js';
import type { FunctionToolCall, MessageContent, StepDetails } from '../objects.js';
import { appendEvents, type RunEvent } from '../store/events.js';
import { completeMessage, insertMessages, setMessageContent, type MessageRow } from '../store/messages.js';
import type { RunRow } from '../store/runs.js';
import { completeStep, insertStep, setStepDetails, type StepRow } from '../store/steps.js';
import { messageView, stepView } from '../views.js';
import { commitRun } from './finish.js';
import { holdLease } from './lease.js';

/** Least time between two writes of a streaming reply (the first piece is written at once). */
const FLUSH_EVERY_MS = 15;

type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };
const usageOf = (prompt: number, completion: number): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

/**
 * Turns the model's stream into rows and events: a message_creation step and its message for text, a
 * tool_calls step for function calls, each with the platform's event sequence. Chunks arrive
 * synchronously; writes are batched into one transaction per flush, in order, each conditional on the
 * worker still holding the run.
 */
export class TurnWriter {
  private messageId?: string;
  private messageStepId?: string;
  private toolStepId?: string;
  private text = '';
  private messageClosed = false;
  private messageRow?: MessageRow;
  private messageStep?: StepRow;
  private calls: FunctionToolCall[] = [];
  private ops: ((tx: Tx) => Promise<void>)[] = [];
  private events: RunEvent[] = [];
  private dirtyText = false;
  private dirtyCalls = false;
  private flushing: Promise<void> | null = null;
  private failure: unknown;
  private closedUsage?: { prompt: number; completion: number };
  private lastFlush = 0;
  private closing = false;

  constructor(
    private ctx: Pick<Ctx, 'clock' | 'store' | 'services'>,
    private run: RunRow,
    private token: string,
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
        data: {
          id: this.messageId,
          object: 'thread.message.delta',
          delta: { content: [{ index: 0, type: 'text', text: first ? { value: c.delta, annotations: [] } : { value: c.delta } }] },
        },
      });
    } else {
      this.closeMessage();
      this.ensureToolStep();
      const call = (this.calls[c.index] ??= { id: '', type: 'function', function: { name: '', arguments: '', output: null } });
      // The delta carries what this piece adds; the piece that names the call carries the whole function so far.
      const fn: { name?: string; arguments?: string; output?: null } = {};
      if (c.id) call.id = c.id;
      if (c.name) fn.name = call.function.name = c.name;
      if (c.arguments) {
        call.function.arguments += c.arguments;
        fn.arguments = c.arguments;
      }
      const delta = {
        index: c.index,
        type: 'function',
        function: c.id ? { name: call.function.name, arguments: call.function.arguments, output: null } : fn,
        ...(c.id ? { id: c.id } : {}),
      };
      this.dirtyCalls = true;
      this.events.push({
        event: 'thread.run.step.delta',
        data: {
          id: this.toolStepId,
          object: 'thread.run.step.delta',
          delta: { step_details: { type: 'tool_calls', tool_calls: [delta] } },
        },
      });
    }
    this.schedule();
  }

  /** The final calls (providers that do not stream them, or to fix ids). Returns the id of their step. */
  toolCalls(calls: { id: string; function: { name: string; arguments: string } }[]): string {
    this.closeMessage();
    const stepId = this.ensureToolStep();
    this.calls = calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.function.name, arguments: c.function.arguments, output: null },
    }));
    this.dirtyCalls = true;
    return stepId;
  }

  /** The turn's message and its message_creation step, created at the first text (or at the end of a turn without any). */
  ensureMessage(): { messageId: string; stepId: string } {
    if (this.messageId && this.messageStepId) return { messageId: this.messageId, stepId: this.messageStepId };
    const now = this.ctx.clock.nowSeconds();
    const messageId = (this.messageId = newId('msg', this.ctx.clock));
    const stepId = (this.messageStepId = newId('step', this.ctx.clock));
    const step = this.newStep(stepId, now, { type: 'message_creation', message_creation: { message_id: messageId } });
    const message: MessageRow = {
      id: messageId,
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
      await insertStep(tx, step);
      await insertMessages(tx, [message]);
    });
    this.events.push(
      { event: 'thread.run.step.created', data: stepView(step) },
      { event: 'thread.run.step.in_progress', data: stepView(step) },
      { event: 'thread.message.created', data: messageView(message) },
      { event: 'thread.message.in_progress', data: messageView(message) },
    );
    return { messageId, stepId };
  }

  /** Text followed by tool calls: the message and its step end before the tool step starts. */
  private closeMessage() {
    if (!this.messageRow || !this.messageStep || this.messageClosed) return;
    this.messageClosed = true;
    const now = this.ctx.clock.nowSeconds();
    const content = JSON.stringify(this.content());
    // The text's tokens; the prompt is counted once, on the tool step that follows.
    const completion = countTokens(this.text);
    this.closedUsage = { prompt: 0, completion };
    const message: MessageRow = { ...this.messageRow, content, status: 'completed', completed_at: now };
    const step: StepRow = { ...this.messageStep, status: 'completed', completed_at: now, usage: toJson(usageOf(0, completion)) };
    this.dirtyText = false;
    this.ops.push(async (tx) => {
      await completeMessage(tx, message.id, content, now);
      await completeStep(tx, step.id, now, step.usage);
    });
    this.events.push(
      { event: 'thread.message.completed', data: messageView(message) },
      { event: 'thread.run.step.completed', data: stepView(step) },
    );
  }

  /** A new in-progress step of this run. */
  private newStep(id: string, createdAt: number, details: StepDetails): StepRow {
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

  private ensureToolStep(): string {
    if (this.toolStepId) return this.toolStepId;
    const stepId = (this.toolStepId = newId('step', this.ctx.clock));
    const step = this.newStep(stepId, this.ctx.clock.nowSeconds(), { type: 'tool_calls', tool_calls: [] });
    this.ops.push((tx) => insertStep(tx, step));
    this.events.push(
      { event: 'thread.run.step.created', data: stepView(step) },
      { event: 'thread.run.step.in_progress', data: stepView(step) },
    );
    return stepId;
  }

  private content(): MessageContent[] {
    return [{ type: 'text', text: { value: this.text, annotations: [] } }];
  }

  /** Usage of the turn, split between the steps it made (a text-then-calls turn has two). */
  splitUsage(u: { prompt: number; completion: number }): { message: Usage; tool: Usage } {
    const first = this.closedUsage;
    if (!first) return { message: usageOf(u.prompt, u.completion), tool: usageOf(u.prompt, u.completion) };
    return {
      message: usageOf(first.prompt, first.completion),
      tool: usageOf(u.prompt - first.prompt, Math.max(0, u.completion - first.completion)),
    };
  }

  /** Writes what is pending inside `tx`; `guard` false when the caller's own run update checks the lease. */
  async flushIn(tx: Tx, guard = true) {
    const ops = this.ops.splice(0);
    const events = this.events.splice(0);
    if (guard) await holdLease(this.ctx, tx, this.run.id, this.token);
    for (const op of ops) await op(tx);
    // Flags are cleared before the awaited writes: a chunk arriving meanwhile marks them again, so the
    // next flush writes it (clearing them afterwards lost the stream's last piece on PostgreSQL).
    if (this.dirtyText && this.messageId && !this.messageClosed) {
      this.dirtyText = false;
      await setMessageContent(tx, this.messageId, JSON.stringify(this.content()));
    }
    if (this.dirtyCalls && this.toolStepId) {
      this.dirtyCalls = false;
      // Calls are indexed by the provider; a sparse array (a skipped index) keeps only the calls given.
      const details: StepDetails = { type: 'tool_calls', tool_calls: this.calls.filter(Boolean) };
      await setStepDetails(tx, this.toolStepId, JSON.stringify(details));
    }
    await appendEvents(this.ctx, tx, this.run.id, events);
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
          await commitRun(this.ctx, this.run.id, (tx) => this.flushIn(tx));
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
