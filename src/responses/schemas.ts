import { Type, type Static, type TSchema } from 'typebox';
import { Deleted } from '../core/schemas.js';
import { CustomToolCallItem, HostedItemSchema, Input } from './input-schemas.js';
import type { CustomTool } from './custom-tools.js';

/** Request and reply shapes of `/v1/responses` (CreateResponse and Response of the OpenAPI document). */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const FunctionToolSchema = Type.Object(
  {
    type: Type.Literal('function'),
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
    parameters: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { additionalProperties: false },
);

const Metadata = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), { maxProperties: 16 });

const TextFormat = Type.Union([
  Type.Object({ type: Type.Literal('text') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('json_object') }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('json_schema'),
      name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
      schema: Type.Record(Type.String(), Type.Unknown()),
      description: Type.Optional(Type.String({ maxLength: 4096 })),
      strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    },
    { additionalProperties: false },
  ),
]);

export type FunctionTool = Static<typeof FunctionToolSchema>;

/**
 * A hosted tool of a request (`file_search`, `mcp`…): its type picks its form, which its own file under
 * tools/ checks (tools/hosted.ts); the body's schema only bounds it.
 */
export type HostedToolEntry = { type: string } & Record<string, unknown>;
/** One member of `tools`: a function, a custom tool, or a hosted tool checked by its type (tools/check.ts). */
export const ToolEntry = Type.Unsafe<FunctionTool | CustomTool | HostedToolEntry>(
  Type.Object(
    { type: Type.String({ maxLength: 64 }) },
    {
      additionalProperties: true,
      maxProperties: 32,
      description: 'A tool (Tool): a function, a custom tool, or a hosted tool by its type.',
    },
  ),
);
export type ToolEntry = FunctionTool | CustomTool | HostedToolEntry;
/** True for a function tool (client-executed). */
export const isFunctionTool = (t: ToolEntry): t is FunctionTool => t.type === 'function';
/** True for a custom tool (client-executed, free-text input: custom-tools.ts). */
export const isCustomTool = (t: ToolEntry): t is CustomTool => t.type === 'custom';

/** The hosted tool types of the document (docs/responses.md has the table of what each does on Standin). */
export const HOSTED_TOOL_TYPES = [
  'file_search',
  'web_search',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'web_search_2025_08_26',
  'computer',
  'computer_use',
  'computer_use_preview',
  'code_interpreter',
  'image_generation',
  'mcp',
  'local_shell',
  'shell',
  'apply_patch',
  'namespace',
  'tool_search',
  'programmatic_tool_calling',
] as const;
const Effort = Type.Enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
const Summary = Type.Enum(['auto', 'concise', 'detailed']);
const Verbosity = Type.Enum(['low', 'medium', 'high']);
const Reasoning = Type.Object(
  {
    effort: Type.Optional(Nullable(Effort)),
    summary: Type.Optional(Nullable(Summary)),
    generate_summary: Type.Optional(Nullable(Summary)),
    mode: Type.Optional(Nullable(Type.String({ maxLength: 32 }))),
    context: Type.Optional(Nullable(Type.Enum(['auto', 'current_turn', 'all_turns']))),
  },
  { additionalProperties: false },
);
const AllowedTools = Type.Object(
  {
    type: Type.Literal('allowed_tools'),
    mode: Type.Enum(['auto', 'required']),
    tools: Type.Array(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 16 }), { maxItems: 128 }),
  },
  { additionalProperties: false },
);
const ToolChoice = Type.Union([
  Type.Enum(['none', 'auto', 'required']),
  Type.Object({ type: Type.Literal('function'), name: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('custom'), name: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
  AllowedTools,
  // A hosted tool (or an MCP server) forced by type: refused by name in service.ts, as its tool is.
  Type.Object(
    { type: Type.Enum(HOSTED_TOOL_TYPES), name: Type.Optional(Nullable(Type.String({ maxLength: 64 }))) },
    { additionalProperties: true, maxProperties: 8 },
  ),
]);
export type ToolChoice = Static<typeof ToolChoice>;
/** The values of `include` the document lists. */
export const INCLUDABLE = [
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
] as const;
const Prompt = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200 }),
    version: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    variables: Type.Optional(Nullable(Type.Record(Type.String({ maxLength: 256 }), Type.Unknown(), { maxProperties: 64 }))),
  },
  { additionalProperties: false },
);
const Str = (maxLength: number) => Type.String({ maxLength });

/** `conversation` of a response (ConversationParam): its id, or `{id}`. */
const ConversationId = Type.String({ minLength: 1, maxLength: 200 });
const ConversationRef = Type.Union([ConversationId, Type.Object({ id: ConversationId }, { additionalProperties: false })]);

/**
 * Every member of `CreateResponse` in the official document; what Standin cannot honour is accepted and
 * listed in docs/responses.md, and a member the document lacks is refused (400 `unknown_parameter`).
 * `input` and `conversation` are the inputs' own (input-schemas.ts, inputs.ts).
 */
export const CreateResponseBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(Input),
    instructions: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000 }))),
    background: Type.Optional(Nullable(Type.Boolean())),
    metadata: Type.Optional(Nullable(Metadata)),
    max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 16, maximum: 1_000_000 }))),
    max_tool_calls: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000 }))),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
    store: Type.Optional(Nullable(Type.Boolean())),
    stream: Type.Optional(Nullable(Type.Boolean())),
    stream_options: Type.Optional(
      Nullable(Type.Object({ include_obfuscation: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
    ),
    include: Type.Optional(Nullable(Type.Array(Type.Enum(INCLUDABLE), { maxItems: 16 }))),
    previous_response_id: Type.Optional(Nullable(Str(200))),
    conversation: Type.Optional(Nullable(ConversationRef)),
    tools: Type.Optional(Type.Array(ToolEntry, { maxItems: 128 })),
    tool_choice: Type.Optional(ToolChoice),
    parallel_tool_calls: Type.Optional(Nullable(Type.Boolean())),
    text: Type.Optional(
      Type.Object({ format: Type.Optional(TextFormat), verbosity: Type.Optional(Nullable(Verbosity)) }, { additionalProperties: false }),
    ),
    reasoning: Type.Optional(Nullable(Reasoning)),
    user: Type.Optional(Str(256)),
    safety_identifier: Type.Optional(Nullable(Str(64))),
    prompt_cache_key: Type.Optional(Nullable(Str(256))),
    prompt_cache_retention: Type.Optional(Nullable(Type.Enum(['in_memory', '24h']))),
    prompt_cache_options: Type.Optional(
      Type.Object(
        { ttl: Type.Optional(Type.Literal('30m')), mode: Type.Optional(Type.Enum(['implicit', 'explicit'])) },
        { additionalProperties: false },
      ),
    ),
    service_tier: Type.Optional(Nullable(Type.Enum(['auto', 'default', 'flex', 'scale', 'priority', 'fast', 'ultrafast']))),
    truncation: Type.Optional(Nullable(Type.Enum(['auto', 'disabled']))),
    prompt: Type.Optional(Nullable(Prompt)),
    moderation: Type.Optional(
      Nullable(
        Type.Object(
          { model: Str(256), policy: Type.Optional(Nullable(Type.Record(Str(64), Type.Unknown(), { maxProperties: 8 }))) },
          { additionalProperties: false },
        ),
      ),
    ),
    context_management: Type.Optional(
      Nullable(
        Type.Array(
          Type.Object(
            { type: Str(64), compact_threshold: Type.Optional(Nullable(Type.Integer({ minimum: 1000 }))) },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: 8 },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateResponseRequest = Static<typeof CreateResponseBody>;

export const ResponseParams = Type.Object({ response_id: Type.String({ maxLength: 200 }) });

const ItemStatus = Type.Enum(['in_progress', 'completed', 'incomplete']);
export const OutputText = Type.Object({
  type: Type.Literal('output_text'),
  text: Type.String(),
  annotations: Type.Array(Type.Unknown()),
  logprobs: Type.Array(Type.Unknown()),
});
export const SummaryText = Type.Object({ type: Type.Literal('summary_text'), text: Type.String() });
const MessageOutput = Type.Object({
  id: Type.String(),
  type: Type.Literal('message'),
  status: ItemStatus,
  role: Type.Literal('assistant'),
  content: Type.Array(OutputText),
});
const FunctionCallOutputItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('function_call'),
  status: ItemStatus,
  call_id: Type.String(),
  name: Type.String(),
  arguments: Type.String(),
});
const ReasoningOutput = Type.Object({
  id: Type.String(),
  type: Type.Literal('reasoning'),
  status: Type.Optional(ItemStatus),
  summary: Type.Array(SummaryText),
  encrypted_content: Type.Optional(Nullable(Type.String())),
});
export const OutputItem = Type.Union([MessageOutput, FunctionCallOutputItem, CustomToolCallItem, ReasoningOutput, HostedItemSchema]);
export type OutputItem = Static<typeof OutputItem>;
export type MessageOutput = Static<typeof MessageOutput>;
export type FunctionCallOutputItem = Static<typeof FunctionCallOutputItem>;
export type ReasoningOutput = Static<typeof ReasoningOutput>;

const ResponseStatus = Type.Enum(['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete']);
export type ResponseStatus = Static<typeof ResponseStatus>;

/** The response object: the members of the `Response` schema Standin fills (the request's members echoed). */
export const ResponseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('response'),
  created_at: Type.Integer({ description: 'Unix seconds.' }),
  status: ResponseStatus,
  background: Type.Boolean(),
  completed_at: Nullable(Type.Integer()),
  error: Nullable(Type.Object({ code: Type.Enum(['server_error', 'rate_limit_exceeded', 'invalid_prompt']), message: Type.String() })),
  incomplete_details: Nullable(Type.Object({ reason: Type.Enum(['max_output_tokens', 'content_filter']) })),
  instructions: Nullable(Type.String()),
  max_output_tokens: Nullable(Type.Integer()),
  max_tool_calls: Type.Optional(Nullable(Type.Integer())),
  metadata: Type.Record(Type.String(), Type.String()),
  model: Type.String(),
  output: Type.Array(OutputItem),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: Nullable(Type.String()),
  conversation: Type.Optional(Nullable(Type.Object({ id: Type.String() }))),
  prompt: Type.Optional(Nullable(Prompt)),
  reasoning: Nullable(
    Type.Object({ effort: Type.Optional(Nullable(Effort)), summary: Type.Optional(Nullable(Summary)) }, { additionalProperties: true }),
  ),
  service_tier: Type.String(),
  store: Type.Boolean(),
  temperature: Type.Number(),
  text: Type.Object({ format: TextFormat, verbosity: Type.Optional(Verbosity) }),
  tool_choice: ToolChoice,
  tools: Type.Array(ToolEntry),
  top_logprobs: Type.Optional(Type.Integer()),
  top_p: Type.Number(),
  truncation: Type.String(),
  usage: Nullable(
    Type.Object({
      input_tokens: Type.Integer(),
      input_tokens_details: Type.Object({ cached_tokens: Type.Integer(), cache_write_tokens: Type.Integer() }),
      output_tokens: Type.Integer(),
      output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
      total_tokens: Type.Integer(),
    }),
  ),
  user: Nullable(Type.String()),
  safety_identifier: Nullable(Type.String()),
  prompt_cache_key: Nullable(Type.String()),
  prompt_cache_retention: Type.Optional(Nullable(Type.String())),
});
export type ResponseObject = Static<typeof ResponseObject>;

/** `GET /v1/responses/{id}`: `?stream=true&starting_after=N` replays a background stream (stream.ts). */
export const RetrieveQuery = Type.Object(
  {
    stream: Type.Optional(Type.Boolean()),
    starting_after: Type.Optional(Type.Integer({ minimum: -1, maximum: 1e9 })),
    include: Type.Optional(Type.Array(Type.Enum(INCLUDABLE), { maxItems: 16 })),
    include_obfuscation: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type RetrieveQuery = Static<typeof RetrieveQuery>;

export const ResponseDeleted = Deleted('response');
