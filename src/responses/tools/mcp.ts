import { invalid } from '../../core/errors.js';
import type { Ctx } from '../../core/module.js';
import type { ChatMessage, ChatTool } from '../../models/types.js';
import * as itemsStore from '../items-store.js';
import * as store from '../store.js';
import { isAllowed, needsApproval, serverHeaders, type McpTool } from './mcp-config.js';
import { McpFailure, McpSession, type McpLimits, type McpListedTool } from './mcp-client.js';
import {
  callMessages,
  functionName,
  listToolsItem,
  mcpItemId,
  type McpApprovalRequestItem,
  type McpApprovalResponseItem,
  type McpCallItem,
  type McpItem,
  type McpListToolsItem,
} from './mcp-items.js';

/**
 * The remote MCP servers of one response: their tools listed (or the list a previous turn made reused),
 * offered to the model as functions, its calls run on the server or held for a human's approval, and
 * the approvals a request answers run before the model does. docs/responses.md, "Remote MCP servers".
 */

/** Where the MCP items of a turn go: the response's output and its stream events. */
export interface McpOutput {
  /** Adds an item to the output (`response.output_item.added`); its index. */
  add(item: McpItem): number;
  /** A stream event about the item at `output_index`. */
  event(type: string, data: Record<string, unknown>): void;
  /** The item is final (`response.output_item.done`). */
  done(index: number, item: McpItem): void;
}

/** An item of the context a turn continues, as far as MCP cares. */
type PriorItem = { type: string } & Record<string, unknown>;

/** How far back a turn looks for a server's list and an approval's request (responses of a `previous_response_id` chain). */
const MAX_CHAIN = 64;

/**
 * The items of the responses a `previous_response_id` continues, newest response first, read until
 * `enough` says what was looked for is found (or the chain ends).
 */
async function chainItems(
  ctx: Ctx,
  projectId: string,
  previousId: string | null | undefined,
  enough: (items: PriorItem[]) => boolean,
): Promise<PriorItem[]> {
  const out: PriorItem[] = [];
  let id = previousId ?? null;
  for (let hop = 0; id && hop < MAX_CHAIN && !enough(out); hop++) {
    const row = await store.getResponse(ctx.store.db, projectId, id);
    if (!row) break;
    const payload = JSON.parse(row.payload) as { output?: PriorItem[]; previous_response_id?: string | null };
    const input = (await itemsStore.entries(ctx.store.db, id, 'input')).map((e) => e.item as unknown as PriorItem);
    out.push(...[...(payload.output ?? [])].reverse(), ...input.reverse());
    id = payload.previous_response_id ?? null;
  }
  return out;
}

interface Server {
  tool: McpTool;
  /** Its allowed tools, by the function name the model is offered. */
  tools: Map<string, McpListedTool>;
  session?: Promise<McpSession>;
}

export interface McpTurnOptions {
  limits?: Partial<McpLimits>;
}

/** What a turn reads of its request. */
export interface McpRequest {
  /** The `mcp` tools, with their places in the request (`tools[2]`). */
  tools: { tool: McpTool; at: string }[];
  /** The input items (checked). */
  input: PriorItem[];
  previous_response_id?: string | null;
}

interface Answered {
  response: McpApprovalResponseItem;
  request: McpApprovalRequestItem;
}

/**
 * The MCP side of one response. `McpTurn.open` reads the context (refusing, before anything runs, an
 * approval that answers no request); `prepare` lists each server (or reuses its list) and runs the
 * approvals answered for it; `close()` ends the sessions when the response ends.
 */
export class McpTurn {
  private servers = new Map<string, Server>();

  private constructor(
    private ctx: Ctx,
    private prior: PriorItem[],
    private answered: Answered[],
    private opts: McpTurnOptions,
  ) {}

  /** Reads a request's context: the lists and approval requests it holds, and the approvals its input answers. */
  static async open(ctx: Ctx, projectId: string, request: McpRequest, opts: McpTurnOptions = {}): Promise<McpTurn> {
    const labels = new Set<string>();
    for (const { tool, at } of request.tools) {
      if (labels.has(tool.server_label))
        throw invalid(
          `'${at}.server_label' '${tool.server_label}' is given to two MCP servers; labels must differ.`,
          `${at}.server_label`,
          'invalid_value',
        );
      labels.add(tool.server_label);
    }
    const approvals = request.input.filter((i) => i.type === 'mcp_approval_response') as unknown as McpApprovalResponseItem[];
    // Looked for: each server's last list, each answered approval's request.
    const found = (items: PriorItem[]) =>
      [...labels].every((l) => items.some((p) => p.type === 'mcp_list_tools' && p.server_label === l && !p.error)) &&
      approvals.every((a) => items.some((p) => p.type === 'mcp_approval_request' && p.id === a.approval_request_id));
    const own = [...request.input].reverse();
    const prior = [
      ...own,
      ...(found(own) ? [] : await chainItems(ctx, projectId, request.previous_response_id, (items) => found([...own, ...items]))),
    ];
    const answered = approvals.map((a): Answered => {
      const req = prior.find((p) => p.type === 'mcp_approval_request' && p.id === a.approval_request_id) as
        McpApprovalRequestItem | undefined;
      if (!req) throw invalid(`No approval request found with id '${a.approval_request_id}'.`, 'input', 'invalid_value');
      if (!labels.has(req.server_label))
        throw invalid(
          `The approval request '${req.id}' is for the MCP server '${req.server_label}', which 'tools' does not give.`,
          'tools',
          'invalid_value',
        );
      return { response: a, request: req };
    });
    return new McpTurn(ctx, prior, answered, opts);
  }

  /**
   * Before the model runs, for one server: its tools listed (an `mcp_list_tools` item, unless the context
   * holds one for its label), then the approvals answered for it run (`mcp_call` items). Returns the chat
   * messages of those calls, for the model to read after the input.
   */
  async prepare(tool: McpTool, out: McpOutput): Promise<ChatMessage[]> {
    const server: Server = { tool, tools: new Map() };
    this.servers.set(tool.server_label, server);
    const listed = this.prior.find((p) => p.type === 'mcp_list_tools' && p.server_label === tool.server_label && !p.error) as
      McpListToolsItem | undefined;
    const tools = listed ? listed.tools : await this.list(server, out);
    for (const t of tools ?? []) if (isAllowed(tool, t)) server.tools.set(functionName(tool.server_label, t.name), t);
    const messages: ChatMessage[] = [];
    for (const { response, request: req } of this.answered) {
      if (req.server_label !== tool.server_label) continue;
      // A request the context already shows a call for is not run twice.
      if (this.prior.some((p) => p.type === 'mcp_call' && p.approval_request_id === req.id)) continue;
      if (response.approve) {
        messages.push(...callMessages(await this.run(server, req.name, req.arguments, out, req.id)));
        continue;
      }
      const name = functionName(req.server_label, req.name);
      const why = response.reason ? ` The reason given: ${response.reason}` : '';
      messages.push(
        { role: 'assistant', content: null, tool_calls: [{ id: req.id, type: 'function', function: { name, arguments: req.arguments } }] },
        { role: 'tool', tool_call_id: req.id, content: `The user declined this call to ${req.name}.${why}` },
      );
    }
    return messages;
  }

  /** The functions the model is offered for a server: each of its allowed tools. */
  functions(label: string): ChatTool[] {
    const server = this.servers.get(label);
    if (!server) return [];
    const about = server.tool.server_description ? `(MCP server ${label}: ${server.tool.server_description})` : '';
    return [...server.tools.entries()].map(([name, t]) => ({
      type: 'function',
      function: { name, description: [t.description ?? '', about].filter(Boolean).join('\n\n') || undefined, parameters: t.input_schema },
    }));
  }

  /**
   * The model called a server's tool (by its function name): it runs now (an `mcp_call` item; its output
   * or error is what the model reads), or, when the tool needs approval, an `mcp_approval_request` item
   * ends the response.
   */
  async call(
    label: string,
    name: string,
    args: string,
    out: McpOutput,
  ): Promise<{ output: string; item: McpItem } | { stop: true; item: McpItem }> {
    const server = this.servers.get(label)!;
    const tool = server.tools.get(name)!;
    if (needsApproval(server.tool, tool)) {
      const item: McpApprovalRequestItem = {
        id: mcpItemId('mcpr'),
        type: 'mcp_approval_request',
        server_label: label,
        name: tool.name,
        arguments: args,
      };
      out.done(out.add(item), item);
      return { stop: true, item };
    }
    const item = await this.run(server, tool.name, args, out, null);
    return { output: callMessages(item)[1].content ?? '', item };
  }

  /** Ends the servers' sessions. */
  async close(): Promise<void> {
    await Promise.all(
      [...this.servers.values()].map(async (s) => {
        const session = await s.session?.catch(() => undefined);
        await session?.close();
      }),
    );
  }

  private session(server: Server): Promise<McpSession> {
    server.session ??= McpSession.open({
      url: server.tool.server_url!,
      headers: serverHeaders(server.tool),
      outbound: this.ctx.outbound,
      limits: this.opts.limits,
    });
    return server.session;
  }

  /** Lists a server's tools into an `mcp_list_tools` item; undefined when it could not (the item says why). */
  private async list(server: Server, out: McpOutput): Promise<McpListedTool[] | undefined> {
    const label = server.tool.server_label;
    const item = listToolsItem(label, []);
    const index = out.add(item);
    const at = { item_id: item.id, output_index: index };
    out.event('response.mcp_list_tools.in_progress', at);
    try {
      item.tools = await (await this.session(server)).listTools();
      out.event('response.mcp_list_tools.completed', at);
    } catch (err) {
      const reason = err instanceof McpFailure ? err.message : 'the server could not be listed';
      if (!(err instanceof McpFailure)) this.ctx.log.warn({ err, server: label }, 'mcp list failed');
      item.error = `Error retrieving tool list from MCP server '${label}': ${reason}`;
      out.event('response.mcp_list_tools.failed', at);
    }
    out.done(index, item);
    return item.error ? undefined : item.tools;
  }

  /** Runs one call into an `mcp_call` item: in progress, its arguments, then completed or failed. */
  private async run(server: Server, name: string, args: string, out: McpOutput, approvalRequestId: string | null): Promise<McpCallItem> {
    const item: McpCallItem = {
      id: mcpItemId('mcp'),
      type: 'mcp_call',
      status: 'in_progress',
      server_label: server.tool.server_label,
      name,
      arguments: '',
      output: null,
      error: null,
      approval_request_id: approvalRequestId,
    };
    const index = out.add(item);
    const at = { item_id: item.id, output_index: index };
    out.event('response.mcp_call.in_progress', at);
    out.event('response.mcp_call_arguments.delta', { ...at, delta: args });
    item.arguments = args;
    out.event('response.mcp_call_arguments.done', { ...at, arguments: args });
    const listed = [...server.tools.values()].find((t) => t.name === name);
    let parsed: unknown;
    try {
      parsed = args.trim() ? JSON.parse(args) : {};
    } catch {
      parsed = undefined;
    }
    if (!listed)
      item.error = { type: 'mcp_protocol_error', code: -32602, message: `the tool '${name}' is not an allowed tool of this server` };
    else if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      item.error = { type: 'mcp_protocol_error', code: -32602, message: 'the arguments are not a JSON object' };
    else {
      try {
        const outcome = await (await this.session(server)).call(name, parsed as Record<string, unknown>);
        if ('output' in outcome) item.output = outcome.output;
        else item.error = outcome.error;
      } catch (err) {
        item.error = {
          type: 'mcp_protocol_error',
          code: -32000,
          message: err instanceof McpFailure ? err.message : 'the server could not be reached',
        };
      }
    }
    item.status = item.error ? 'failed' : 'completed';
    out.event(item.error ? 'response.mcp_call.failed' : 'response.mcp_call.completed', at);
    out.done(index, item);
    return item;
  }
}
