import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { ChatChunk, ChatResult } from '../models/types.js';
import { InputDecoder, inputOf } from './custom-tools.js';
import type { CustomToolCallItem, HostedItem } from './input-schemas.js';
import type { FunctionCallOutputItem, MessageOutput, OutputItem, ReasoningOutput, ResponseObject, ResponseStatus } from './schemas.js';

/**
 * The stream events of one response (`ResponseStreamEvent` of the official document), built as the model
 * answers: the same writer makes a streamed response's events and a plain response's output, so what a
 * client assembles from the stream is what it retrieves afterwards. A plain response runs it with no sink.
 */

/** One event of the stream, as written on the wire (`sequence_number` set by the writer). */
export type StreamEvent = { type: string; sequence_number: number } & Record<string, unknown>;
export type EventSink = (event: StreamEvent) => void;

/** The reasoning a reasoning model does before its answer (reasoning.ts). */
export interface Reasoning {
  summary: string[];
  tokens: number;
  encrypted?: (item: ReasoningOutput) => string;
}

/** A new output item id with its type's prefix (`msg`, `fc`, `fs`, `mcp`…). */
export const itemId = (prefix: string) => `${prefix}_${randomBytes(24).toString('hex')}`;
const copy = <T>(v: T): T => structuredClone(v);

/** A client's call being written: its item, output index, and the arguments the model gave so far. */
type OpenCall =
  | { item: FunctionCallOutputItem; index: number; args: string; decoder?: undefined }
  | { item: CustomToolCallItem; index: number; args: string; decoder: InputDecoder };

/** The terminal event of each final status (the document has none for a cancel: the stream just ends). */
const END: Partial<Record<ResponseStatus, string>> = {
  completed: 'response.completed',
  incomplete: 'response.incomplete',
  failed: 'response.failed',
};

/** Builds one response's output and events; `sink` gets each event in order (none for a plain response). */
export class ResponseWriter {
  private seq = 0;
  private output: OutputItem[] = [];
  private message: { item: MessageOutput; index: number } | undefined;
  /** The client's calls by the model's call index: function calls, and custom tool calls (their raw arguments decoded). */
  private calls = new Map<number, OpenCall>();
  /** The names of the request's custom tools: a call of one is a `custom_tool_call` (custom-tools.ts). */
  private custom: Set<string>;
  private reasoningTokens = 0;

  constructor(
    private response: ResponseObject,
    private clock: Pick<Clock, 'nowSeconds'>,
    private sink?: EventSink,
    private maxToolCalls: number | null = null,
  ) {
    this.custom = new Set((response.tools ?? []).filter((t) => t.type === 'custom').map((t) => String(t.name)));
  }

  private emit(type: string, data: Record<string, unknown>): void {
    // Without a sink nothing is built: a plain response pays for no events.
    this.sink?.({ type, ...data, sequence_number: this.seq++ });
  }

  /** The next sequence number (a stream picked up later continues from there). */
  get sequence(): number {
    return this.seq;
  }

  /** `response.created` (and `response.queued` for a background response), then `response.in_progress` when it runs. */
  created(): void {
    this.emit('response.created', { response: copy(this.response) });
    if (this.response.status === 'queued') this.emit('response.queued', { response: copy(this.response) });
  }

  /** The response starts running (a queued one moves to in_progress). */
  inProgress(seq?: number): void {
    if (seq !== undefined) this.seq = seq;
    this.response = { ...this.response, status: 'in_progress' };
    this.emit('response.in_progress', { response: copy(this.response) });
  }

  /** The reasoning item, before the answer: its summary parts streamed, then the item done. */
  reasoning(r: Reasoning, wantSummary: boolean): void {
    const item: ReasoningOutput = { id: itemId('rs'), type: 'reasoning', summary: [] };
    const index = this.output.push(item) - 1;
    this.reasoningTokens = r.tokens;
    this.emit('response.output_item.added', { output_index: index, item: copy(item) });
    if (wantSummary) {
      r.summary.forEach((text, summary_index) => {
        const at = { item_id: item.id, output_index: index, summary_index };
        this.emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
        this.emit('response.reasoning_summary_text.delta', { ...at, delta: text });
        this.emit('response.reasoning_summary_text.done', { ...at, text });
        this.emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
        item.summary.push({ type: 'summary_text', text });
      });
    }
    if (r.encrypted) item.encrypted_content = r.encrypted(item);
    this.emit('response.output_item.done', { output_index: index, item: copy(item) });
  }

  /**
   * A hosted tool's output item (`file_search_call`…) joins the output: the open message closes (text after
   * it is a new message), `response.output_item.added` goes out, and its output index is returned.
   */
  addItem(item: HostedItem): number {
    this.closeMessage('completed');
    this.message = undefined;
    const index = this.output.push(item) - 1;
    this.emit('response.output_item.added', { output_index: index, item: copy(item) });
    return index;
  }

  /** The output item at `index` (a hosted tool's, to read). */
  item(index: number): OutputItem {
    return this.output[index];
  }

  /** Changes members of the output item at `index` (no event: the tool emits its own with `event`). */
  updateItem(index: number, patch: Record<string, unknown>): void {
    Object.assign(this.output[index], patch);
  }

  /** `response.output_item.done` with the item at `index` as it is now. */
  doneItem(index: number): void {
    this.emit('response.output_item.done', { output_index: index, item: copy(this.output[index]) });
  }

  /** Any event of the document (`response.file_search_call.searching`…), numbered in the response's sequence. */
  event(type: string, data: Record<string, unknown>): void {
    this.emit(type, data);
  }

  /**
   * A model round that called hosted tools: the text it wrote beside the calls (what a plain call did not
   * stream) becomes a message of its own, closed before the tools' items.
   */
  round(result: ChatResult): void {
    this.flushText(result);
    this.closeMessage('completed');
    this.message = undefined;
  }

  private flushText(result: ChatResult): void {
    const text = result.content ?? '';
    const streamed = this.message?.item.content[0].text ?? '';
    if (text.length > streamed.length && text.startsWith(streamed)) this.chunk({ type: 'text', delta: text.slice(streamed.length) });
  }

  /** A piece of the model's answer, as the provider streams it. */
  chunk(c: ChatChunk): void {
    if (c.type === 'text') {
      if (!c.delta) return;
      const m = this.openMessage();
      m.item.content[0].text += c.delta;
      this.emit('response.output_text.delta', { ...this.at(m), delta: c.delta, logprobs: [] });
      return;
    }
    if (this.maxToolCalls !== null && c.index >= this.maxToolCalls) return;
    this.closeMessage('completed');
    let call = this.calls.get(c.index);
    if (!call) {
      const name = c.name ?? '';
      const base = { status: 'in_progress' as const, call_id: c.id ?? '', name };
      call = this.custom.has(name)
        ? {
            item: { id: itemId('ctc'), type: 'custom_tool_call', ...base, input: '' },
            index: this.output.length,
            args: '',
            decoder: new InputDecoder(),
          }
        : { item: { id: itemId('fc'), type: 'function_call', ...base, arguments: '' }, index: this.output.length, args: '' };
      this.output.push(call.item);
      this.calls.set(c.index, call);
      this.emit('response.output_item.added', { output_index: call.index, item: copy(call.item) });
    }
    if (c.arguments) {
      call.args += c.arguments;
      if (call.item.type === 'function_call') {
        call.item.arguments += c.arguments;
        this.emit('response.function_call_arguments.delta', { item_id: call.item.id, output_index: call.index, delta: c.arguments });
      } else this.inputDelta(call.item, call.index, call.decoder!.push(c.arguments));
    }
  }

  /** A piece of a custom call's input: `response.custom_tool_call_input.delta`. */
  private inputDelta(item: CustomToolCallItem, index: number, delta: string): void {
    if (!delta) return;
    item.input += delta;
    this.emit('response.custom_tool_call_input.delta', { item_id: item.id, output_index: index, delta });
  }

  private at(m: { item: MessageOutput; index: number }) {
    return { item_id: m.item.id, output_index: m.index, content_index: 0 };
  }

  private openMessage() {
    if (this.message) return this.message;
    const item: MessageOutput = { id: itemId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    this.message = { item, index: this.output.push(item) - 1 };
    this.emit('response.output_item.added', { output_index: this.message.index, item: copy(item) });
    const part = { type: 'output_text' as const, text: '', annotations: [], logprobs: [] };
    item.content.push(part);
    this.emit('response.content_part.added', { ...this.at(this.message), part: copy(part) });
    return this.message;
  }

  /** The annotations of the open message's text (file citations), each announced before the text is done. */
  private annotate(annotate: (text: string) => Record<string, unknown>[]): void {
    const m = this.message;
    if (!m || m.item.status !== 'in_progress') return;
    const part = m.item.content[0];
    for (const annotation of annotate(part.text)) {
      const annotation_index = part.annotations.push(annotation) - 1;
      this.emit('response.output_text.annotation.added', { ...this.at(m), annotation_index, annotation: copy(annotation) });
    }
  }

  private closeMessage(status: 'completed' | 'incomplete'): void {
    const m = this.message;
    if (!m || m.item.status !== 'in_progress') return;
    const part = m.item.content[0];
    this.emit('response.output_text.done', { ...this.at(m), text: part.text, logprobs: [] });
    this.emit('response.content_part.done', { ...this.at(m), part: copy(part) });
    m.item.status = status;
    this.emit('response.output_item.done', { output_index: m.index, item: copy(m.item) });
  }

  /**
   * The model's final result: what a provider did not stream is written now (a provider answering whole,
   * the text beyond what was streamed), the open items close, and the terminal event carries the response.
   */
  finish(result: ChatResult, annotate?: (text: string) => Record<string, unknown>[]): ResponseObject {
    this.flushText(result);
    const calls = this.maxToolCalls === null ? result.tool_calls : result.tool_calls.slice(0, this.maxToolCalls);
    calls.forEach((call, index) => {
      const open = this.calls.get(index);
      if (!open) this.chunk({ type: 'tool_call', index, id: call.id, name: call.function.name, arguments: call.function.arguments });
      else if (call.function.arguments.startsWith(open.args) && call.function.arguments !== open.args)
        this.chunk({ type: 'tool_call', index, arguments: call.function.arguments.slice(open.args.length) });
    });
    const incomplete =
      result.finish_reason === 'length' ? 'max_output_tokens' : result.finish_reason === 'content_filter' ? 'content_filter' : null;
    if (annotate) this.annotate(annotate);
    this.closeMessage(result.finish_reason === 'length' ? 'incomplete' : 'completed');
    for (const { item, index, args } of [...this.calls.values()].sort((a, b) => a.index - b.index)) {
      item.status = 'completed';
      if (item.type === 'function_call')
        this.emit('response.function_call_arguments.done', {
          item_id: item.id,
          output_index: index,
          name: item.name,
          arguments: item.arguments,
        });
      else {
        // The input whole: what the stream did not give of it (arguments that were not `{"input": "…"}`) comes now.
        const input = inputOf(args);
        if (input.startsWith(item.input)) this.inputDelta(item, index, input.slice(item.input.length));
        else item.input = input;
        this.emit('response.custom_tool_call_input.done', { item_id: item.id, output_index: index, input: item.input });
      }
      this.emit('response.output_item.done', { output_index: index, item: copy(item) });
    }
    const outputTokens = result.usage.completion_tokens + this.reasoningTokens;
    return this.end({
      ...this.response,
      status: incomplete ? 'incomplete' : 'completed',
      completed_at: incomplete ? null : this.clock.nowSeconds(),
      incomplete_details: incomplete ? { reason: incomplete } : null,
      output: this.output,
      usage: {
        input_tokens: result.usage.prompt_tokens,
        input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: this.reasoningTokens },
        total_tokens: result.usage.prompt_tokens + outputTokens,
      },
    });
  }

  /** The response ended otherwise (failed, cancelled): its terminal event, with what was written so far. */
  end(final: ResponseObject): ResponseObject {
    const type = END[final.status];
    if (type) this.emit(type, { response: copy(final) });
    return final;
  }

  /** An `error` event (a stream that cannot go on: the response was deleted, the store failed). */
  error(code: string | null, message: string): void {
    this.emit('error', { code, message, param: null });
  }
}
