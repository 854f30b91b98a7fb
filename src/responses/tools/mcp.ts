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

/** The MCP items of the responses a `previous_response_id` continues, newest response first. */
async function chainItems(ctx: Ctx, projectId: string, previousId: string | null | undefined): Promise<PriorItem[]> {
  const out: PriorItem[] = [];
  let id = previousId ?? null;
  for (let hop = 0; id && hop < MAX_CHAIN; hop++) {
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
  at: string;
  /** Its allowed tools, by the function name the model is offered. */
  tools: Map<string, McpListedTool>;
  session?: Promise<McpSession>;
}

export interface McpTurnOptions {
  limits?: Partial<McpLimits>;
}

/** The MCP side of one response. Make it with `McpTurn.prepare`; `close()` when the response ends. */
export class McpTurn {
  private servers = new Map<string, Server>();
  private byFunction = new Map<string, Server>();

  private constructor(
    private ctx: Ctx,
    private opts: McpTurnOptions,
  ) {}

  /**
   * Before the model runs: each server's tools listed (an `mcp_list_tools` item, unless the context
   * already holds one for its label), and the approvals the input answers run (`mcp_call` items). Returns
   * the turn and the chat messages of those calls, for the model to read after the input.
   */
  static async prepare(
    ctx: Ctx,
    projectId: string,
    request: { tools: { tool: McpTool; at: string }[]; input: PriorItem[]; previous_response_id?: string | null },
    out: McpOutput,
    opts: McpTurnOptions = {},
  ): Promise<{ turn: McpTurn; messages: ChatMessage[] }> {
    const turn = new McpTurn(ctx, opts);
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
    const prior = [...[...request.input].reverse(), ...(await chainItems(ctx, projectId, request.previous_response_id))];
    const approvals = request.input.filter((i) => i.type === 'mcp_approval_response') as unknown as McpApprovalResponseItem[];
    // Refused before anything runs: an answer to no request, or to a server this request does not give.
    const answered = approvals.map((a, i) => {
      const req = prior.find((p) => p.type === 'mcp_approval_request' && p.id === a.approval_request_id) as
        McpApprovalRequestItem | undefined;
      if (!req) throw invalid(`No approval request found with id '${a.approval_request_id}'.`, `input`, 'invalid_value');
      if (!labels.has(req.server_label))
        throw invalid(
          `The approval request '${req.id}' is for the MCP server '${req.server_label}', which 'tools' does not give.`,
          'tools',
          'invalid_value',
        );
      return { response: a, request: req, index: i };
    });
    for (const { tool, at } of request.tools) {
      const server: Server = { tool, at, tools: new Map() };
      turn.servers.set(tool.server_label, server);
      const listed = prior.find((p) => p.type === 'mcp_list_tools' && p.server_label === tool.server_label && !p.error) as
        McpListToolsItem | undefined;
      const tools = listed ? listed.tools : await turn.list(server, out);
      for (const t of tools ?? []) {
        if (!isAllowed(tool, t)) continue;
        const name = functionName(tool.server_label, t.name);
        if (turn.byFunction.has(name)) continue; // a second server's tool of the same name: the first one keeps it
        server.tools.set(name, t);
        turn.byFunction.set(name, server);
      }
    }
    const messages: ChatMessage[] = [];
    for (const { response, request: req } of answered) {
      // An answered request that this turn's context already shows a call for is not run twice.
      if (prior.some((p) => p.type === 'mcp_call' && p.approval_request_id === req.id)) continue;
      if (response.approve) {
        const item = await turn.run(turn.servers.get(req.server_label)!, req.name, req.arguments, out, req.id);
        messages.push(...callMessages(item));
      } else {
        const name = functionName(req.server_label, req.name);
        const why = response.reason ? ` The reason given: ${response.reason}` : '';
        messages.push(
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: req.id, type: 'function', function: { name, arguments: req.arguments } }],
          },
          { role: 'tool', tool_call_id: req.id, content: `The user declined this call to ${req.name}.${why}` },
        );
      }
    }
    return { turn, messages };
  }

  /** The functions the model is offered: each allowed tool of each server that listed. */
  functions(): ChatTool[] {
    return [...this.byFunction.entries()].map(([name, server]) => {
      const t = server.tools.get(name)!;
      const about = server.tool.server_description ? `(MCP server ${server.tool.server_label}: ${server.tool.server_description})` : '';
      return {
        type: 'function',
        function: {
          name,
          description: [t.description ?? '', about].filter(Boolean).join('\n\n') || undefined,
          parameters: t.input_schema,
        },
      };
    });
  }

  /** Whether a function the model called is an MCP server's tool. */
  handles(name: string): boolean {
    return this.byFunction.has(name);
  }

  /**
   * The model called a server's tool: it runs now (an `mcp_call` item; its output or error is what the
   * model reads), or, when the tool needs approval, an `mcp_approval_request` item ends the response.
   */
  async call(name: string, args: string, out: McpOutput): Promise<{ output: string; item: McpItem } | { stop: true; item: McpItem }> {
    const server = this.byFunction.get(name)!;
    const tool = server.tools.get(name)!;
    if (needsApproval(server.tool, tool)) {
      const item: McpApprovalRequestItem = {
        id: mcpItemId('mcpr'),
        type: 'mcp_approval_request',
        server_label: server.tool.server_label,
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
