import { randomBytes } from 'node:crypto';
import { Type, type Static, type TSchema } from 'typebox';
import type { ChatMessage } from '../../models/types.js';
import type { McpCallError, McpListedTool } from './mcp-client.js';

/**
 * The items of remote MCP servers (MCPListTools, MCPToolCall, MCPApprovalRequest, MCPApprovalResponse
 * of the official document): their schemas as input items (a client passes them back) and as stored
 * items, how each is made, and the chat messages the model sees for them.
 */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Optional = <T extends TSchema>(t: T) => Type.Optional(Nullable(t));
const ItemId = Type.String({ minLength: 1, maxLength: 200 });
const Label = Type.String({ minLength: 1, maxLength: 64 });
const ToolName = Type.String({ minLength: 1, maxLength: 128 });
/** Arguments and outputs: the document allows 10 MiB of text; the request body limit bounds them first. */
const Text = Type.String({ maxLength: 10_485_760 });

const ListedTool = Type.Object(
  {
    name: ToolName,
    description: Optional(Type.String({ maxLength: 65_536 })),
    input_schema: Type.Record(Type.String(), Type.Unknown()),
    annotations: Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
/** A listed tool as stored: every member present. */
const StoredListedTool = Type.Object({
  name: Type.String(),
  description: Nullable(Type.String()),
  input_schema: Type.Record(Type.String(), Type.Unknown()),
  annotations: Nullable(Type.Record(Type.String(), Type.Unknown())),
});
const CallError = Type.Union([
  Type.Object(
    { type: Type.Enum(['mcp_protocol_error', 'http_error']), code: Type.Integer(), message: Type.String({ maxLength: 65_536 }) },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal('mcp_tool_execution_error'), content: Type.Unknown() }, { additionalProperties: false }),
]);
const CallStatus = Type.Enum(['in_progress', 'completed', 'incomplete', 'calling', 'failed']);
/** The Agents SDK passes back which kind of caller made a hosted call. */
const Caller = Type.Optional(Type.Unknown());

export const McpListToolsInput = Type.Object(
  {
    type: Type.Literal('mcp_list_tools'),
    id: ItemId,
    server_label: Label,
    tools: Type.Array(ListedTool, { maxItems: 1000 }),
    error: Optional(Type.String({ maxLength: 65_536 })),
    caller: Caller,
  },
  { additionalProperties: false },
);
export const McpCallInput = Type.Object(
  {
    type: Type.Literal('mcp_call'),
    id: ItemId,
    server_label: Label,
    name: ToolName,
    arguments: Text,
    output: Optional(Text),
    error: Optional(Type.Union([CallError, Type.String({ maxLength: 65_536 })])),
    status: Type.Optional(CallStatus),
    approval_request_id: Optional(ItemId),
    caller: Caller,
  },
  { additionalProperties: false },
);
export const McpApprovalRequestInput = Type.Object(
  { type: Type.Literal('mcp_approval_request'), id: ItemId, server_label: Label, name: ToolName, arguments: Text, caller: Caller },
  { additionalProperties: false },
);
export const McpApprovalResponseInput = Type.Object(
  {
    type: Type.Literal('mcp_approval_response'),
    id: Optional(ItemId),
    approval_request_id: ItemId,
    approve: Type.Boolean(),
    reason: Optional(Type.String({ maxLength: 65_536 })),
    caller: Caller,
  },
  { additionalProperties: false },
);
export type McpListToolsInput = Static<typeof McpListToolsInput>;
export type McpCallInput = Static<typeof McpCallInput>;
export type McpApprovalRequestInput = Static<typeof McpApprovalRequestInput>;
export type McpApprovalResponseInput = Static<typeof McpApprovalResponseInput>;

/** The items as stored, listed and returned in a response's output. */
export const McpListToolsItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('mcp_list_tools'),
  server_label: Type.String(),
  tools: Type.Array(StoredListedTool),
  error: Type.Optional(Nullable(Type.String())),
});
export const McpCallItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('mcp_call'),
  status: CallStatus,
  server_label: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
  output: Nullable(Type.String()),
  error: Nullable(Type.Union([CallError, Type.String()])),
  approval_request_id: Nullable(Type.String()),
});
export const McpApprovalRequestItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('mcp_approval_request'),
  server_label: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
});
export const McpApprovalResponseItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('mcp_approval_response'),
  approval_request_id: Type.String(),
  approve: Type.Boolean(),
  reason: Nullable(Type.String()),
});
export type McpListToolsItem = Static<typeof McpListToolsItem>;
export type McpCallItem = Static<typeof McpCallItem>;
export type McpApprovalRequestItem = Static<typeof McpApprovalRequestItem>;
export type McpApprovalResponseItem = Static<typeof McpApprovalResponseItem>;
export type McpItem = McpListToolsItem | McpCallItem | McpApprovalRequestItem | McpApprovalResponseItem;

/** The item types of this file. */
export const MCP_ITEM_TYPES = ['mcp_list_tools', 'mcp_call', 'mcp_approval_request', 'mcp_approval_response'] as const;

/** Ids as the platform's look: `mcpl_…` lists, `mcp_…` calls, `mcpr_…` approval requests, `mcpa_…` approval responses. */
export const mcpItemId = (prefix: 'mcpl' | 'mcp' | 'mcpr' | 'mcpa') => `${prefix}_${randomBytes(24).toString('hex')}`;

/** An input item in its stored form: every member the document lists, an id given where the client left it out. */
export function storedMcpItem(item: McpListToolsInput | McpCallInput | McpApprovalRequestInput | McpApprovalResponseInput): McpItem {
  switch (item.type) {
    case 'mcp_list_tools':
      return {
        id: item.id,
        type: 'mcp_list_tools',
        server_label: item.server_label,
        tools: item.tools.map((t) => ({
          name: t.name,
          description: t.description ?? null,
          input_schema: t.input_schema,
          annotations: t.annotations ?? null,
        })),
        error: item.error ?? null,
      };
    case 'mcp_call':
      return {
        id: item.id,
        type: 'mcp_call',
        status: item.status ?? (item.error ? 'failed' : 'completed'),
        server_label: item.server_label,
        name: item.name,
        arguments: item.arguments,
        output: item.output ?? null,
        error: item.error ?? null,
        approval_request_id: item.approval_request_id ?? null,
      };
    case 'mcp_approval_request':
      return { id: item.id, type: 'mcp_approval_request', server_label: item.server_label, name: item.name, arguments: item.arguments };
    case 'mcp_approval_response':
      return {
        id: item.id ?? mcpItemId('mcpa'),
        type: 'mcp_approval_response',
        approval_request_id: item.approval_request_id,
        approve: item.approve,
        reason: item.reason ?? null,
      };
  }
}

/** The list item of a server, with its tools or the reason it could not list them. */
export function listToolsItem(serverLabel: string, tools: McpListedTool[], error: string | null = null): McpListToolsItem {
  return { id: mcpItemId('mcpl'), type: 'mcp_list_tools', server_label: serverLabel, tools, error };
}

const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The function name the model is offered for a server's tool: the tool's own name when it is a valid
 * function name, else `<label>_<name>` with every other character made `_` (cut to 64).
 */
export function functionName(serverLabel: string, tool: string): string {
  if (FUNCTION_NAME.test(tool)) return tool;
  return `${serverLabel}_${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);
}

/** The text the model reads for a call's error. */
export function errorText(error: McpCallError | string): string {
  if (typeof error === 'string') return error;
  if (error.type === 'mcp_tool_execution_error') {
    const content = Array.isArray(error.content) ? (error.content as { type?: string; text?: unknown }[]) : [];
    const text = content
      .filter((c) => c?.type === 'text')
      .map((c) => String(c.text))
      .join('\n');
    return `Error: ${text || JSON.stringify(error.content)}`;
  }
  return `Error (${error.type} ${error.code}): ${error.message}`;
}

/**
 * The chat messages of an `mcp_call` (what a later turn shows the model): the call, then what it gave
 * back (its output, or its error). A call passed back without its output (the Agents SDK leaves it out)
 * shows an empty output.
 */
export function callMessages(item: Pick<McpCallItem, 'id' | 'server_label' | 'name' | 'arguments' | 'output' | 'error'>): ChatMessage[] {
  const name = functionName(item.server_label, item.name);
  return [
    { role: 'assistant', content: null, tool_calls: [{ id: item.id, type: 'function', function: { name, arguments: item.arguments } }] },
    { role: 'tool', tool_call_id: item.id, content: item.error ? errorText(item.error) : (item.output ?? '') },
  ];
}

/**
 * The one chat message an `mcp_call` of the context reads as (an item carries one message): what was
 * called and what it gave back, as the assistant's own words. The turn that runs a call shows the model
 * the call and its output as a tool call and its result (`callMessages`).
 */
export function historyMessage(item: Pick<McpCallItem, 'server_label' | 'name' | 'arguments' | 'output' | 'error'>): ChatMessage {
  const result = item.error ? errorText(item.error) : (item.output ?? '');
  return { role: 'assistant', content: `[MCP call ${item.server_label}.${item.name}(${item.arguments}) returned: ${result}]` };
}
