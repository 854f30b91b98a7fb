import type { Ctx } from '../../core/module.js';
import { newId } from '../../core/ids.js';
import { CodeArgumentDecoder, codeOf, countTokens } from '../../models/service.js';
import type { ChatChunk } from '../../models/types.js';
import { toJson, type Tx } from '../../store/db.js';
import type { CodeInterpreterToolCall, FunctionToolCall, MessageContent, StepDetails } from '../objects.js';
import { appendEvents, type RunEvent } from '../store/events.js';
import { completeMessage, insertMessages, setMessageContent, type MessageRow } from '../store/messages.js';
import type { RunRow } from '../store/runs.js';
import { completeStep, insertStep, setStepDetails, type StepRow } from '../store/steps.js';
import { messageView, stepEvent } from '../views.js';
import { commitRun } from './finish.js';
import type { StoredCodeCall } from './code-calls.js';
import { holdLease } from './lease.js';
import type { FileSearchCall, StoredFileSearchCall } from './search-calls.js';

/** Least time between two writes of a streaming reply (the first piece is written at once). */
const FLUSH_EVERY_MS = 15;

type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };
type Annotation = Extract<MessageContent, { type: 'text' }>['text']['annotations'][number];
type StepCall = FunctionToolCall | StoredFileSearchCall | StoredCodeCall;
type CodeOutput = CodeInterpreterToolCall['code_interpreter']['outputs'][number];
type Found = Annotation & { index: number };
/** A tool call's piece in a step delta: its index in the step, its type, and what the piece adds. */
type CallDelta = { index: number; type: StepCall['type'] } & Record<string, unknown>;

/** A call whole, as the first delta of a call not streamed shows it (a search's query, a code call's files stay inside). */
function wholeCall(call: StepCall, index: number): CallDelta {
  if (call.type === 'file_search') return { index, id: call.id, type: 'file_search', file_search: {} };
  if (call.type === 'code_interpreter')
    return { index, id: call.id, type: 'code_interpreter', code_interpreter: { input: call.code_interpreter.input, outputs: [] } };
  return { index, id: call.id, type: 'function', function: { ...call.function } };
}

/** A citation marker the model copied from a file search result: `【m:i†…】`. */
const MARKER = /【(\d+):(\d+)†[^】\n]*】/g;
/** A link to a file the run's code wrote: `sandbox:/mnt/data/…` (up to a space, quote, bracket or parenthesis). */
const LINK = /sandbox:(\/mnt\/data\/[^\s)\]"'<>`]+)/g;
const LINK_PREFIX = 'sandbox:';

/** What a turn writes beyond text and function calls. */
export interface TurnOptions {
  /** The file search function offered this turn: its calls are file_search calls, which Standin executes. */
  searchName?: string;
  /** `m:i` of a marker → the file of that result (the run's searches so far): the reply's file_citation annotations. */
  citations?: ReadonlyMap<string, string>;
  /** The code interpreter function offered this turn: its calls are code_interpreter calls, which Standin executes. */
  codeName?: string;
  /** Sandbox path → the file the run's code wrote there: the reply's `sandbox:` links become file_path annotations. */
  outputFiles?: ReadonlyMap<string, string>;
  /** Images the run's code produced since its last message: image_file blocks ahead of the message's text. */
  images?: readonly string[];
}
const usageOf = (prompt: number, completion: number): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

/**
 * Turns the model's stream into rows and events: a message_creation step and its message for text (with
 * a file_citation annotation for each marker of a search result), a tool_calls step for function and
 * file search calls, each with the platform's event sequence. Chunks arrive synchronously; writes are
 * batched into one transaction per flush, in order, each conditional on the worker still holding the run.
 */
export class TurnWriter {
  private messageId?: string;
  private messageStepId?: string;
  private toolStepId?: string;
  private text = '';
  private messageClosed = false;
  private messageRow?: MessageRow;
  /** The message's insert is still among the pending writes (flushIn gives it the text so far). */
  private messageUnwritten = false;
  private messageStep?: StepRow;
  private toolStep?: StepRow;
  private calls: StepCall[] = [];
  private annotations: Annotation[] = [];
  /** Where the text may still hold a citation marker not yet seen whole. */
  private scanFrom = 0;
  /** Where the text may still hold a sandbox link not yet seen whole. */
  private linkFrom = 0;
  /** The code calls' decoders of their streamed arguments, by call index. */
  private decoders = new Map<number, CodeArgumentDecoder>();
  /** Calls of the step waiting for the results Standin adds (file searches, code), by index. */
  private awaiting = new Set<number>();
  /** Step deltas held back behind a call still waiting for its results (stepDelta). */
  private held: CallDelta[] = [];
  private ops: ((tx: Tx) => Promise<void>)[] = [];
  private events: RunEvent[] = [];
  private dirtyText = false;
  private dirtyCalls = false;
  private flushing: Promise<void> | null = null;
  /** Ends the wait of a flush not yet begun (see schedule). */
  private skipWait: (() => void) | null = null;
  private failure: unknown;
  private closedUsage?: { prompt: number; completion: number };
  private lastFlush = 0;
  private closing = false;

  constructor(
    private ctx: Pick<Ctx, 'clock' | 'store' | 'services' | 'settings'>,
    private run: RunRow,
    private token: string,
    private opts: TurnOptions = {},
  ) {}

  chunk(c: ChatChunk) {
    if (c.type === 'text') {
      this.ensureMessage();
      if (!c.delta) return;
      const first = this.text === '';
      this.text += c.delta;
      this.dirtyText = true;
      const cited = [...this.scanCitations(), ...this.scanLinks(false)];
      const text = first || cited.length ? { value: c.delta, annotations: cited } : { value: c.delta };
      this.textDelta(text);
    } else {
      this.closeMessage();
      this.ensureToolStep();
      this.callChunk(c);
    }
    this.schedule();
  }

  /**
   * A piece of a tool call, as the step delta the platform sends: the piece that first shows the call
   * carries its id, type and empty members (`function: {name, arguments, output: null}`, `file_search:
   * {}`, `code_interpreter: {input: "", outputs: []}`); later pieces carry only what they add, since
   * the SDKs append every string of a delta to their snapshot.
   */
  private callChunk(c: Extract<ChatChunk, { type: 'tool_call' }>) {
    const fresh = !this.calls[c.index];
    const isSearch = c.name !== undefined && c.name === this.opts.searchName;
    const isCode = c.name !== undefined && c.name === this.opts.codeName;
    const call = (this.calls[c.index] ??= isSearch
      ? { id: '', type: 'file_search', file_search: {}, arguments: '' }
      : isCode
        ? { id: '', type: 'code_interpreter', code_interpreter: { input: '', outputs: [] } }
        : { id: '', type: 'function', function: { name: '', arguments: '', output: null } });
    const delta: CallDelta = { index: c.index, type: call.type };
    if (c.id && !call.id) delta.id = call.id = c.id;
    this.dirtyCalls = true;
    if (call.type === 'code_interpreter') {
      const ci: { input?: string; outputs?: [] } = fresh ? { input: '', outputs: [] } : {};
      if (c.arguments) {
        const decoder = this.decoders.get(c.index) ?? new CodeArgumentDecoder();
        this.decoders.set(c.index, decoder);
        // The code as the model writes it, decoded out of its JSON arguments.
        const piece = decoder.push(c.arguments);
        if (piece) {
          call.code_interpreter.input += piece;
          ci.input = (ci.input ?? '') + piece;
        }
      }
      if (fresh || ci.input) delta.code_interpreter = ci;
    } else if (call.type === 'file_search') {
      // The query stays inside (the platform's delta of a file search call is `{}`); results follow the search.
      if (c.arguments) call.arguments = (call.arguments ?? '') + c.arguments;
      if (fresh) delta.file_search = {};
    } else {
      const fn: { name?: string; arguments?: string; output?: null } = fresh ? { name: '', arguments: '', output: null } : {};
      if (c.name && !call.function.name) fn.name = call.function.name = c.name;
      if (c.arguments) {
        call.function.arguments += c.arguments;
        fn.arguments = (fn.arguments ?? '') + c.arguments;
      }
      if (Object.keys(fn).length) delta.function = fn;
    }
    if (fresh && call.type !== 'function') this.awaiting.add(c.index);
    if (Object.keys(delta).length > 2) this.stepDelta(delta);
  }

  /**
   * The final calls (providers that do not stream them, or to fix ids). Returns the id of their step. A
   * call the stream has not shown yet is sent whole; a streamed one gets the rest of its arguments or code.
   */
  toolCalls(calls: { id: string; function: { name: string; arguments: string } }[]): string {
    this.closeMessage();
    const stepId = this.ensureToolStep();
    const shown = this.calls;
    this.calls = calls.map((c): StepCall =>
      c.function.name === this.opts.searchName
        ? { id: c.id, type: 'file_search', file_search: {}, arguments: c.function.arguments }
        : c.function.name === this.opts.codeName
          ? { id: c.id, type: 'code_interpreter', code_interpreter: { input: codeOf(c.function.arguments), outputs: [] } }
          : { id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments, output: null } },
    );
    this.calls.forEach((call, index) => {
      const before = shown[index];
      if (!before) {
        if (call.type !== 'function') this.awaiting.add(index);
        this.stepDelta(wholeCall(call, index));
        return;
      }
      const [had, has] =
        before.type === 'function' && call.type === 'function'
          ? [before.function.arguments, call.function.arguments]
          : before.type === 'code_interpreter' && call.type === 'code_interpreter'
            ? [before.code_interpreter.input, call.code_interpreter.input]
            : ['', ''];
      if (has.length > had.length && has.startsWith(had)) {
        const rest = has.slice(had.length);
        this.stepDelta(
          call.type === 'function'
            ? { index, type: 'function', function: { arguments: rest } }
            : { index, type: 'code_interpreter', code_interpreter: { input: rest } },
        );
      }
    });
    this.dirtyCalls = true;
    return stepId;
  }

  /** The code_interpreter calls of this turn, as the model wrote them. */
  codeCalls(): StoredCodeCall[] {
    return this.calls.filter((c): c is StoredCodeCall => c?.type === 'code_interpreter');
  }

  /** Puts a code call's outputs (and the files its code wrote) into the call, with the step delta that shows them. */
  coded(callId: string, outputs: CodeOutput[], files: { path: string; file_id: string }[]) {
    const index = this.calls.findIndex((c) => c?.id === callId);
    const call = this.calls[index];
    if (call?.type !== 'code_interpreter') return;
    this.calls[index] = { ...call, code_interpreter: { ...call.code_interpreter, outputs }, ...(files.length ? { files } : {}) };
    this.dirtyCalls = true;
    if (outputs.length)
      this.stepDelta({
        index,
        type: 'code_interpreter',
        code_interpreter: { outputs: outputs.map((o, i) => ({ index: i, ...o })) },
      });
    this.resolved(index);
  }

  /**
   * Sends a step delta, unless an earlier call of the step still waits for the results Standin adds (a
   * file search's, a code call's): then it waits too. The SDKs' stream helpers take a call as done when
   * a delta of another call arrives, and place a call first shown by its position of arrival, so each
   * call's deltas, results included, must come whole and in order.
   */
  private stepDelta(call: CallDelta) {
    for (const waiting of this.awaiting)
      if (waiting < call.index) {
        this.held.push(call);
        return;
      }
    this.events.push({
      event: 'thread.run.step.delta',
      data: {
        id: this.toolStepId,
        object: 'thread.run.step.delta',
        delta: { step_details: { type: 'tool_calls', tool_calls: [call] } },
      },
    });
  }

  /** A call has its results: the deltas of the calls after it may go. */
  private resolved(index: number) {
    this.awaiting.delete(index);
    for (const call of this.held.splice(0)) this.stepDelta(call);
  }

  /** The step's calls are over (with or without results): every delta held back goes now. */
  releaseCalls() {
    this.awaiting.clear();
    this.resolved(-1);
  }

  private textDelta(text: { value: string; annotations?: Found[] }) {
    this.events.push({
      event: 'thread.message.delta',
      data: {
        id: this.messageId,
        object: 'thread.message.delta',
        delta: { content: [{ index: this.opts.images?.length ?? 0, type: 'text', text }] },
      },
    });
  }

  /** The end of the text: links at its very end are complete now (their annotations follow in a last delta). */
  endText() {
    if (!this.messageId || this.messageClosed) return;
    const found = this.scanLinks(true);
    if (!found.length) return;
    this.dirtyText = true;
    this.textDelta({ value: '', annotations: found });
  }

  /**
   * file_path annotations for the sandbox links completed in the text since the last scan, each naming
   * the file the run's code wrote at that path. A link at the end of the text may go on in the next
   * piece, so it waits, unless `final`; trailing sentence punctuation is not part of a link.
   */
  private scanLinks(final: boolean): Found[] {
    const files = this.opts.outputFiles;
    if (!files?.size) return [];
    const found: Found[] = [];
    const re = new RegExp(LINK.source, 'g');
    re.lastIndex = this.linkFrom;
    let from = this.text.length;
    for (let m = re.exec(this.text); m; m = re.exec(this.text)) {
      if (re.lastIndex === this.text.length && !final) {
        from = m.index;
        break;
      }
      const path = m[1].replace(/[.,;:!?]+$/, '');
      const fileId = files.get(path);
      if (!fileId) continue;
      const text = `${LINK_PREFIX}${path}`;
      const annotation: Annotation = {
        type: 'file_path',
        text,
        start_index: m.index,
        end_index: m.index + text.length,
        file_path: { file_id: fileId },
      };
      found.push({ index: this.annotations.length, ...annotation });
      this.annotations.push(annotation);
    }
    if (from === this.text.length && !final) {
      // The text may end with the start of a link ("sand…").
      for (let k = Math.min(LINK_PREFIX.length, this.text.length); k > 0; k--) {
        if (this.text.endsWith(LINK_PREFIX.slice(0, k))) {
          from = this.text.length - k;
          break;
        }
      }
    }
    this.linkFrom = from;
    return found;
  }

  /** The file search calls of this turn, as the model asked them. */
  searchCalls(): StoredFileSearchCall[] {
    return this.calls.filter((c): c is StoredFileSearchCall => c?.type === 'file_search');
  }

  /**
   * Puts the searches' results (ranking options, results) into their calls, each with a step delta that
   * shows them (with their content: a stream that did not ask for it leaves it out, sse.ts).
   */
  searched(results: ReadonlyMap<string, FileSearchCall['file_search']>) {
    this.calls = this.calls.map((c) => (c?.type === 'file_search' && results.has(c.id) ? { ...c, file_search: results.get(c.id)! } : c));
    this.dirtyCalls = true;
    this.calls.forEach((call, index) => {
      if (call?.type !== 'file_search' || !results.has(call.id)) return;
      const { ranking_options, results: found } = call.file_search;
      if (ranking_options || found)
        this.stepDelta({
          index,
          type: 'file_search',
          file_search: { ...(ranking_options ? { ranking_options } : {}), ...(found ? { results: found } : {}) },
        });
      this.resolved(index);
    });
  }

  /** Completes the tool_calls step (every call done: file searches only) with its usage. */
  completeToolStep(usage: Usage) {
    if (!this.toolStep) return;
    this.releaseCalls();
    const now = this.ctx.clock.nowSeconds();
    const details = JSON.stringify({ type: 'tool_calls', tool_calls: this.calls.filter(Boolean) } satisfies StepDetails);
    const step: StepRow = { ...this.toolStep, status: 'completed', completed_at: now, usage: toJson(usage), step_details: details };
    this.dirtyCalls = false;
    this.ops.push(async (tx) => {
      await setStepDetails(tx, step.id, details);
      await completeStep(tx, step.id, now, step.usage);
    });
    this.events.push({ event: 'thread.run.step.completed', data: stepEvent(step) });
  }

  /** Annotations for the markers completed in the text since the last scan (each with its index among the message's). */
  private scanCitations(): Found[] {
    const citations = this.opts.citations;
    if (!citations?.size) return [];
    const found: Found[] = [];
    const re = new RegExp(MARKER.source, 'g');
    re.lastIndex = this.scanFrom;
    let end = this.scanFrom;
    for (let m = re.exec(this.text); m; m = re.exec(this.text)) {
      end = re.lastIndex;
      const fileId = citations.get(`${m[1]}:${m[2]}`);
      if (!fileId) continue;
      const annotation: Annotation = {
        type: 'file_citation',
        text: m[0],
        start_index: m.index,
        end_index: re.lastIndex,
        file_citation: { file_id: fileId },
      };
      found.push({ index: this.annotations.length, ...annotation });
      this.annotations.push(annotation);
    }
    const open = this.text.indexOf('【', end);
    this.scanFrom = open >= 0 ? open : this.text.length;
    return found;
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
      content: JSON.stringify(this.imageBlocks()),
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
    this.messageUnwritten = true;
    this.ops.push(async (tx) => {
      await insertStep(tx, step);
      await insertMessages(tx, [message]);
    });
    // Created empty, as on the platform: the SDKs append every delta to the created message, so content
    // shown here and sent again as a delta would arrive twice (an image id doubled: `file-Xfile-X`).
    const created = messageView({ ...message, content: '[]' });
    this.events.push(
      { event: 'thread.run.step.created', data: stepEvent(step) },
      { event: 'thread.run.step.in_progress', data: stepEvent(step) },
      { event: 'thread.message.created', data: created },
      { event: 'thread.message.in_progress', data: created },
    );
    if (this.opts.images?.length)
      this.events.push({
        event: 'thread.message.delta',
        data: {
          id: messageId,
          object: 'thread.message.delta',
          delta: { content: this.imageBlocks().map((block, index) => ({ index, ...block })) },
        },
      });
    return { messageId, stepId };
  }

  private imageBlocks(): MessageContent[] {
    return (this.opts.images ?? []).map((fileId) => ({ type: 'image_file', image_file: { file_id: fileId, detail: 'auto' } }));
  }

  /** Text followed by tool calls: the message and its step end before the tool step starts. */
  private closeMessage() {
    if (!this.messageRow || !this.messageStep || this.messageClosed) return;
    this.endText();
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
      { event: 'thread.run.step.completed', data: stepEvent(step) },
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
    this.toolStep = step;
    this.ops.push((tx) => insertStep(tx, step));
    this.events.push(
      { event: 'thread.run.step.created', data: stepEvent(step) },
      { event: 'thread.run.step.in_progress', data: stepEvent(step) },
    );
    return stepId;
  }

  private content(): MessageContent[] {
    return [...this.imageBlocks(), { type: 'text', text: { value: this.text, annotations: this.annotations } }];
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

  /**
   * Writes what is pending inside `tx`; `guard` false when the caller's own run update checks the lease.
   * The events are appended, or with `handBack` returned for the caller to append with its own (one
   * numbering of the run's events a transaction instead of two).
   */
  async flushIn(tx: Tx, guard = true, handBack = false): Promise<RunEvent[]> {
    const ops = this.ops.splice(0);
    const events = this.events.splice(0);
    if (guard) await holdLease(this.ctx, tx, this.run.id, this.token);
    // A message not written yet is inserted with its text so far, rather than inserted and then updated.
    if (this.messageUnwritten && this.messageRow && this.dirtyText && !this.messageClosed) {
      this.dirtyText = false;
      this.messageRow.content = JSON.stringify(this.content());
    }
    this.messageUnwritten = false;
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
    if (handBack) return events;
    await appendEvents(this.ctx, tx, this.run.id, events);
    return [];
  }

  private schedule() {
    if (this.flushing) return;
    this.flushing = (async () => {
      try {
        // Let the synchronous burst of chunks land first, then write them in one transaction; a fast
        // stream is written every FLUSH_EVERY_MS rather than once per piece.
        const wait = this.lastFlush ? Math.max(0, this.lastFlush + FLUSH_EVERY_MS - performance.now()) : 0;
        await new Promise<void>((r) => {
          const timer = wait > 0 ? setTimeout(r, wait) : setImmediate(r);
          // The turn ended first (drain): nothing to wait for, its final transaction writes what is pending.
          this.skipWait = () => {
            if (wait > 0) clearTimeout(timer as NodeJS.Timeout);
            else clearImmediate(timer as NodeJS.Immediate);
            r();
          };
        });
        this.skipWait = null;
        while (!this.closing && (this.ops.length || this.events.length)) {
          this.lastFlush = performance.now();
          await commitRun(this.ctx, this.run.id, async (tx) => void (await this.flushIn(tx)));
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
    this.skipWait?.();
    while (this.flushing) await this.flushing;
    if (this.failure) throw this.failure;
  }
}
