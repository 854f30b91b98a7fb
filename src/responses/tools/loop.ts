import type { ChatChunk, ChatMessage, ChatRequest, ChatResult, ChatTool, ChatUsage } from '../../models/types.js';
import type { ResponseObject, HostedToolEntry } from '../schemas.js';
import type { HostedContext, HostedTool } from './hosted.js';
import { HOSTED_TOOLS } from './registry.js';

/**
 * The model loop of one response (tools/hosted.ts): the model is offered the client's functions and each
 * hosted tool's functions; a round in which it calls hosted functions has them executed by their tools
 * (which write their items), their outputs fed back as tool messages, and the model called again. The
 * turn ends when the model answers or calls a client function, when a call says `stop`, or at the bounds:
 * `max_tool_calls` hosted calls in all, `MAX_ROUNDS` model calls (the last ones offer no hosted function).
 */

/** Model calls of one response, at most; the last is offered no hosted tool, so it answers. */
export const MAX_ROUNDS = 8;

/** What the loop leaves: the final response, and the messages its rounds added before the last answer. */
export interface LoopEnd {
  done: ResponseObject;
  /** The assistant tool calls and tool messages of the hosted rounds (a later turn's context). */
  rounds: ChatMessage[];
  /** The final model result (its client function calls and text; usage summed over the rounds). */
  result: ChatResult;
}

interface Offered {
  tool: HostedTool;
  entry: HostedToolEntry;
  /** The function's own name (the model may see it renamed). */
  name: string;
  role?: 'retrieval' | 'interpreter';
  definition: ChatTool;
}

const addUsage = (a: ChatUsage, b: ChatUsage): ChatUsage => ({
  prompt_tokens: a.prompt_tokens + b.prompt_tokens,
  completion_tokens: a.completion_tokens + b.completion_tokens,
  total_tokens: a.total_tokens + b.total_tokens,
});

/** The hosted entries the model may use this response: all, or those `allowed_tools` lists by type. */
function usable(hctx: HostedContext, tools: readonly HostedTool[]): { tool: HostedTool; entry: HostedToolEntry }[] {
  const choice = hctx.body.tool_choice;
  const allowed =
    choice && typeof choice === 'object' && choice.type === 'allowed_tools' ? new Set(choice.tools.map((t) => String(t.type))) : undefined;
  const out: { tool: HostedTool; entry: HostedToolEntry }[] = [];
  for (const entry of hctx.body.tools ?? []) {
    if (entry.type === 'function' || (allowed && !allowed.has(entry.type))) continue;
    const tool = tools.find((t) => t.type === entry.type);
    if (tool) out.push({ tool, entry: entry as HostedToolEntry });
  }
  return out;
}

/** The functions of the hosted entries, renamed (`name_2`…) where a name is taken already. */
function offer(hctx: HostedContext, entries: { tool: HostedTool; entry: HostedToolEntry }[], taken: Set<string>): Map<string, Offered> {
  const byName = new Map<string, Offered>();
  for (const { tool, entry } of entries) {
    for (const f of tool.functions(entry, hctx)) {
      let name = f.function.name;
      for (let n = 2; taken.has(name); n++) name = `${f.function.name}_${n}`;
      taken.add(name);
      byName.set(name, {
        tool,
        entry,
        name: f.function.name,
        role: f.role,
        definition: { type: 'function', function: { ...f.function, name } },
      });
    }
  }
  return byName;
}

/**
 * Runs the model, and the hosted tools it calls, until the turn ends (above). `base` is the request as
 * the client's functions make it; `streamed` sends the model's pieces to the writer as they come.
 */
export async function runLoop(
  hctx: HostedContext,
  base: ChatRequest,
  streamed: boolean,
  tools: readonly HostedTool[] = HOSTED_TOOLS,
): Promise<LoopEnd> {
  const entries = usable(hctx, tools);
  try {
    return await runRounds(hctx, base, streamed, entries);
  } finally {
    for (const tool of new Set(entries.map((e) => e.tool))) await tool.finish?.(hctx).catch(() => {});
  }
}

async function runRounds(
  hctx: HostedContext,
  base: ChatRequest,
  streamed: boolean,
  entries: { tool: HostedTool; entry: HostedToolEntry }[],
): Promise<LoopEnd> {
  const { ctx, writer, body } = hctx;
  // What a tool's preparation shows the model (an approved MCP call and its output) follows the input.
  const prepared: ChatMessage[] = [];
  for (const { tool, entry } of entries) prepared.push(...((await tool.prepare?.(entry, hctx)) ?? []));
  const clientTools = base.tools ?? [];
  const offered = offer(hctx, entries, new Set(clientTools.map((t) => t.function.name)));
  const choice = body.tool_choice;
  const forced =
    choice && typeof choice === 'object' && choice.type !== 'function' && choice.type !== 'custom' && choice.type !== 'allowed_tools'
      ? [...offered.entries()].find(([, o]) => o.tool.type === choice.type)?.[0]
      : undefined;
  const maxCalls = body.max_tool_calls ?? null;
  const messages = [...base.messages, ...prepared];
  const rounds: ChatMessage[] = [...prepared];
  let usage: ChatUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let calls = 0;

  for (let round = 0; ; round++) {
    const hostedNow = round < MAX_ROUNDS - 1 && (maxCalls === null || calls < maxCalls) ? [...offered.values()] : [];
    const request: ChatRequest = {
      ...base,
      messages,
      tools: [...clientTools, ...hostedNow.map((o) => o.definition)],
      // A forcing choice holds for the first round only: after the tools ran, the model answers freely.
      tool_choice: round === 0 ? (forced ? { type: 'function', function: { name: forced } } : base.tool_choice) : 'auto',
      retrieval: nameOf(offered, hostedNow, 'retrieval') ?? base.retrieval,
      interpreter: nameOf(offered, hostedNow, 'interpreter') ?? base.interpreter,
    };
    if (!request.tools?.length) {
      // Nothing to call (a tool choice without tools is refused by Chat Completions).
      request.tools = undefined;
      request.tool_choice = undefined;
    }
    const filter = streamed ? chunkFilter(offered, (c) => writer.chunk(c), hostedNow.length > 0) : undefined;
    const result = await ctx.services.models.complete(request, filter);
    usage = addUsage(usage, result.usage);
    const hostedCalls = hostedNow.length ? result.tool_calls.filter((c) => offered.has(c.function.name)) : [];
    const clientCalls = result.tool_calls.filter((c) => !hostedCalls.includes(c));
    if (!hostedCalls.length || result.finish_reason === 'length') {
      const final = { ...result, tool_calls: clientCalls, usage };
      return { done: writer.finish(final, annotator(hctx, entries)), rounds, result: final };
    }
    writer.round(result);
    // Calls beyond `max_tool_calls` are not run, and the model is not shown them.
    const run = maxCalls === null ? hostedCalls : hostedCalls.slice(0, maxCalls - calls);
    const outputs: ChatMessage[] = [];
    const ran: typeof run = [];
    let stop = false;
    for (const call of run) {
      const o = offered.get(call.function.name)!;
      const out = await o.tool.call(o.entry, o.name, call.function.arguments, hctx);
      calls++;
      // A held call (an approval asked) did not run: the history shows it only once it has an outcome.
      if (out.stop === true) {
        stop = true;
        continue;
      }
      ran.push(call);
      outputs.push({ role: 'tool', tool_call_id: call.id, content: out.output });
    }
    if (ran.length || result.content) {
      const assistant: ChatMessage = { role: 'assistant', content: result.content, ...(ran.length ? { tool_calls: ran } : {}) };
      messages.push(assistant, ...outputs);
      rounds.push(assistant, ...outputs);
    }
    if (clientCalls.length || stop) {
      const final: ChatResult = {
        content: null,
        tool_calls: clientCalls,
        finish_reason: clientCalls.length ? 'tool_calls' : 'stop',
        usage,
      };
      return { done: writer.finish(final, annotator(hctx, entries)), rounds, result: final };
    }
  }
}

/** The model's name of the offered function with the given role (the built-in model's hint). */
function nameOf(offered: Map<string, Offered>, now: Offered[], role: 'retrieval' | 'interpreter'): { name: string } | undefined {
  for (const [name, o] of offered) if (o.role === role && now.includes(o)) return { name };
  return undefined;
}

/** The annotations of the final text: each hosted type's in the request, in turn. */
function annotator(hctx: HostedContext, entries: { tool: HostedTool }[]) {
  const types = [...new Set(entries.map((e) => e.tool))].filter((t) => t.annotate);
  if (!types.length) return undefined;
  return (text: string) => types.flatMap((t) => t.annotate!(text, hctx));
}

/**
 * The pieces a stream writes: the text, and the client's function calls renumbered in order; a hosted
 * call's pieces are not the client's (its tool writes its own item when it runs).
 */
function chunkFilter(offered: Map<string, Offered>, write: (c: ChatChunk) => void, hostedOffered: boolean) {
  const index = new Map<number, number | null>();
  let next = 0;
  return (c: ChatChunk) => {
    if (c.type === 'text' || !hostedOffered) return write(c);
    let at = index.get(c.index);
    if (at === undefined) {
      at = c.name !== undefined && offered.has(c.name) ? null : next++;
      index.set(c.index, at);
    }
    if (at !== null) write({ ...c, index: at });
  };
}
