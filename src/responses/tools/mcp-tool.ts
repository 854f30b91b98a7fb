import { invalid } from '../../core/errors.js';
import type { Ctx } from '../../core/module.js';
import { partChecker } from '../../core/validation.js';
import type { HostedItem } from '../input-schemas.js';
import type { ResponseWriter } from '../events.js';
import type { CreateResponseRequest, HostedToolEntry } from '../schemas.js';
import type { HostedContext, HostedInputItem, HostedTool } from './hosted.js';
import { checkMcpTool, McpTool } from './mcp-config.js';
import * as items from './mcp-items.js';
import { McpTurn, type McpOutput, type McpRequest } from './mcp.js';

/**
 * The `mcp` tool type on the hosted tool seam (tools/hosted.ts): remote MCP servers (tools/mcp.ts).
 * docs/responses.md, "Remote MCP servers".
 */
type Entry = McpTool & HostedToolEntry;

const checkEntry = partChecker<McpTool>(McpTool);

/** `tools[2]` → `/tools/2` (the pointer a part checker names its member from). */
const pointer = (at: string) =>
  '/' +
  at
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .join('/');

/** The request as an MCP turn reads it: its `mcp` tools with their places, its input items. */
function requestOf(body: CreateResponseRequest): McpRequest {
  const tools = (body.tools ?? []).flatMap((t, i) => (t.type === 'mcp' ? [{ tool: t as Entry, at: `tools[${i}]` }] : []));
  const input = Array.isArray(body.input) ? (body.input as ({ type: string } & Record<string, unknown>)[]) : [];
  return { tools, input: input.filter((i) => typeof i?.type === 'string'), previous_response_id: body.previous_response_id };
}

/** The writer as the MCP turn writes its items. */
function outputOf(writer: ResponseWriter): McpOutput {
  return {
    add: (item) => writer.addItem(item as unknown as HostedItem),
    event: (type, data) => writer.event(type, data),
    done: (index, item) => {
      writer.updateItem(index, { ...item });
      writer.doneItem(index);
    },
  };
}

const STATE = 'mcp';

async function turnOf(hctx: HostedContext): Promise<McpTurn> {
  let turn = hctx.state.get(STATE) as McpTurn | undefined;
  if (!turn) {
    turn = await McpTurn.open(hctx.ctx, hctx.projectId, requestOf(hctx.body));
    hctx.state.set(STATE, turn);
  }
  return turn;
}

/** An MCP item passed back in `input`: checked by its schema, stored in its full form. */
function inputItem<T extends Parameters<typeof items.storedMcpItem>[0]>(schema: object): HostedInputItem {
  const check = partChecker<T>(schema);
  return {
    check: (raw, at) => items.storedMcpItem(check(raw, pointer(at))) as unknown as HostedItem,
    message: (item) => (item.type === 'mcp_call' ? items.historyMessage(item as unknown as items.McpCallItem) : null),
  };
}

export const mcpTool: HostedTool<Entry> = {
  type: 'mcp',
  check(raw, at) {
    const tool = checkEntry(raw, pointer(at));
    checkMcpTool(tool, at);
    return tool as Entry;
  },
  checkRequest(entries) {
    const seen = new Set<string>();
    entries.forEach((e) => {
      if (seen.has(e.server_label))
        throw invalid(
          `Two MCP servers are labelled '${e.server_label}' in 'tools'; each 'server_label' must differ.`,
          'tools',
          'invalid_value',
        );
      seen.add(e.server_label);
    });
  },
  async admit(_entries, ctx: Ctx, projectId, body) {
    // An approval that answers no request of the context, or one of a server `tools` does not give: 400.
    await McpTurn.open(ctx, projectId, requestOf(body));
  },
  async prepare(entry, hctx) {
    return (await turnOf(hctx)).prepare(entry, outputOf(hctx.writer));
  },
  functions(entry, hctx) {
    const turn = hctx.state.get(STATE) as McpTurn | undefined;
    return (turn?.functions(entry.server_label) ?? []).map((f) => ({ function: f.function }));
  },
  async call(entry, name, args, hctx) {
    const done = await (await turnOf(hctx)).call(entry.server_label, name, args, outputOf(hctx.writer));
    return 'stop' in done ? { output: '', stop: true } : { output: done.output };
  },
  async finish(hctx) {
    await (hctx.state.get(STATE) as McpTurn | undefined)?.close();
  },
  echo(entry) {
    // The token and the header values reach the server only: a stored, retrievable response shows neither.
    const { authorization: _token, ...shown } = entry;
    if (shown.headers) shown.headers = Object.fromEntries(Object.keys(shown.headers).map((k) => [k, '[redacted]']));
    return shown;
  },
  inputItems: {
    mcp_list_tools: inputItem(items.McpListToolsInput),
    mcp_call: inputItem(items.McpCallInput),
    mcp_approval_request: inputItem(items.McpApprovalRequestInput),
    mcp_approval_response: inputItem(items.McpApprovalResponseInput),
  },
};
