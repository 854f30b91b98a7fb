import type { Ctx } from '../../core/module.js';
import type { ChatMessage, ChatTool } from '../../models/types.js';
import type { ResponseWriter } from '../events.js';
import type { HostedItem, HostedItemType } from '../input-schemas.js';
import type { CreateResponseRequest, HostedToolEntry } from '../schemas.js';

/**
 * The seam of the Responses API's hosted tools (`file_search`, `mcp`, `code_interpreter`…). Each tool
 * type implements `HostedTool` in its own file under tools/ and is listed once in tools/registry.ts.
 * The loop (tools/loop.ts) shows the model each hosted tool as functions, and when the model calls one,
 * the tool runs the call: it writes its own output items and stream events through the writer's generic
 * primitives (`addItem`, `event`, `doneItem`), and returns the text the model is fed back as the tool
 * message. The loop calls the model again until it answers, a call says `stop`, or a bound is reached
 * (`max_tool_calls`, the round limit).
 */

/** What a hosted tool sees of the response it serves. */
export interface HostedContext {
  ctx: Ctx;
  projectId: string;
  /** The request (checked); `tools` holds the entries as their tools' `check` gave them. */
  body: CreateResponseRequest;
  /** The response's writer: output items and stream events (events.ts). */
  writer: ResponseWriter;
  /** Aborts when the client goes away or a background response is cancelled. */
  signal?: AbortSignal;
  /** `include` of the request. */
  include: ReadonlySet<string>;
  /** The model call of this response (for what a tool decides by model, e.g. the built-in provider). */
  model: string;
  /** State one tool type keeps over the response's rounds (the count of searches for citation markers…), by type. */
  state: Map<string, unknown>;
}

/** One function the model is offered for a hosted tool. */
export interface HostedFunction {
  /** The definition the model sees (the loop renames it, `_2`…, when another function has its name). */
  function: ChatTool['function'];
  /** What the built-in model should treat it as (`ChatRequest.retrieval` / `.interpreter`; docs/models.md). */
  role?: 'retrieval' | 'interpreter';
}

/** What one executed call gives back. */
export interface HostedCallResult {
  /** The text of the tool message fed back to the model. */
  output: string;
  /** Ends the turn after this round's calls, without another model call (an MCP approval request). */
  stop?: boolean;
}

/** An item of this tool's types a client sends back in `input` (its own output, an approval response). */
export interface HostedInputItem {
  /** Checks the item at `at` (`input[2]`) and gives its stored form (a 400 naming the member when it is wrong). */
  check(raw: Record<string, unknown>, at: string): HostedItem;
  /** The chat message the model sees of it; none by default. */
  message?(item: HostedItem): ChatMessage | null;
}

/** One hosted tool type. `E` is its `tools[i]` entry as `check` gives it (and the response echoes it). */
export interface HostedTool<E extends HostedToolEntry = HostedToolEntry> {
  /** The `type` of its `tools[i]` entries. */
  type: string;
  /** Checks a `tools[i]` entry at `at` (`tools[1]`): a 400 naming the member when it is wrong; the entry with its defaults. */
  check(raw: HostedToolEntry, at: string): E;
  /** The request-wide rules of its entries together (e.g. an `include` value, a duplicate). */
  checkRequest?(entries: readonly E[], body: CreateResponseRequest): void;
  /**
   * Checks, before the response is made, what the entry names within the project (a vector store, a
   * container): a 404 or 400 naming `at`'s member, as the platform answers the request itself.
   */
  checkAccess?(entry: E, ctx: Ctx, projectId: string, at: string): Promise<void>;
  /** Work before the first model call of the response (MCP lists its server's tools, writing an item). */
  prepare?(entry: E, hctx: HostedContext): Promise<void>;
  /** The functions the model is offered for this entry (after `prepare`). */
  functions(entry: E, hctx: HostedContext): HostedFunction[];
  /** Executes the model's call of `name` (the function's own name, not the loop's renaming) with its JSON `args`. */
  call(entry: E, name: string, args: string, hctx: HostedContext): Promise<HostedCallResult>;
  /** The annotations of the final answer's text (file citations): added to its `output_text` before it closes. */
  annotate?(text: string, hctx: HostedContext): Record<string, unknown>[];
  /** Items of its types accepted in `input`. */
  inputItems?: Partial<Record<HostedItemType, HostedInputItem>>;
}
