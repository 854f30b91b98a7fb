import { Type, type Static, type TSchema } from 'typebox';

/**
 * The input items of `/v1/responses` and `/v1/conversations` (InputItem of the OpenAPI document), and the
 * items Standin stores and lists (ItemResource). A request's items are checked one by one by their `type`
 * (inputs.ts), so a refusal names the item and the member that broke the rule, not the first form of a union.
 */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Optional = <T extends TSchema>(t: T) => Type.Optional(Nullable(t));

/** A text of an input item: the document allows 10 MiB; the request body limit bounds it first. */
const Text = Type.String({ maxLength: 10_485_760 });
const ItemId = Type.String({ minLength: 1, maxLength: 200 });
const ItemStatus = Type.Enum(['in_progress', 'completed', 'incomplete']);
const Detail = Type.Enum(['auto', 'low', 'high', 'original']);
/** Prompt caching hints: Standin has no prompt cache, so they are accepted and change nothing. */
const CacheBreakpoint = Type.Optional(Type.Unknown());

/** A list member whose `type` picks its schema; checked by inputs.ts. */
export const TypedPart = Type.Object(
  { type: Type.String({ maxLength: 64, description: 'Picks the form of this part; checked against that form.' }) },
  { additionalProperties: true },
);

export const InputText = Type.Object(
  { type: Type.Literal('input_text'), text: Text, prompt_cache_breakpoint: CacheBreakpoint },
  { additionalProperties: false },
);
export const OutputText = Type.Object(
  {
    type: Type.Literal('output_text'),
    text: Text,
    annotations: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 1000 })),
    logprobs: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 100_000 })),
  },
  { additionalProperties: false },
);
export const Refusal = Type.Object({ type: Type.Literal('refusal'), refusal: Text }, { additionalProperties: false });
export const InputImage = Type.Object(
  {
    type: Type.Literal('input_image'),
    image_url: Optional(Type.String({ maxLength: 10_485_760 })),
    file_id: Optional(Type.String({ maxLength: 200 })),
    detail: Type.Optional(Detail),
    prompt_cache_breakpoint: CacheBreakpoint,
  },
  { additionalProperties: false },
);
export const InputFile = Type.Object(
  {
    type: Type.Literal('input_file'),
    file_id: Optional(Type.String({ maxLength: 200 })),
    filename: Type.Optional(Type.String({ maxLength: 512 })),
    file_data: Type.Optional(Type.String({ maxLength: 10_485_760 })),
    file_url: Type.Optional(Type.String({ maxLength: 8192 })),
    detail: Type.Optional(Type.Enum(['auto', 'low', 'high'])),
    prompt_cache_breakpoint: CacheBreakpoint,
  },
  { additionalProperties: false },
);
export type InputText = Static<typeof InputText>;
export type InputImage = Static<typeof InputImage>;
export type InputFile = Static<typeof InputFile>;
export type ContentPart = InputText | InputImage | InputFile | Static<typeof OutputText> | Static<typeof Refusal>;

const Role = Type.Enum(['user', 'assistant', 'system', 'developer']);
export const MessageInput = Type.Object(
  {
    type: Type.Optional(Type.Literal('message')),
    id: Type.Optional(ItemId),
    status: Type.Optional(ItemStatus),
    role: Role,
    content: Type.Union([Text, Type.Array(TypedPart, { maxItems: 1000 })]),
    phase: Optional(Type.Enum(['commentary', 'final_answer'])),
  },
  { additionalProperties: false },
);
export const FunctionCallInput = Type.Object(
  {
    type: Type.Literal('function_call'),
    id: Type.Optional(ItemId),
    call_id: Type.String({ minLength: 1, maxLength: 200 }),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    namespace: Optional(Type.String({ maxLength: 64 })),
    arguments: Text,
    status: Type.Optional(ItemStatus),
  },
  { additionalProperties: false },
);
export const FunctionCallOutputInput = Type.Object(
  {
    type: Type.Literal('function_call_output'),
    id: Optional(ItemId),
    call_id: Type.String({ minLength: 1, maxLength: 200 }),
    output: Type.Union([Text, Type.Array(TypedPart, { maxItems: 1000 })]),
    name: Optional(Type.String({ maxLength: 128 })),
    namespace: Optional(Type.String({ maxLength: 64 })),
    caller: Type.Optional(Type.Unknown()),
    status: Optional(ItemStatus),
  },
  { additionalProperties: false },
);
const SummaryText = Type.Object({ type: Type.Literal('summary_text'), text: Text }, { additionalProperties: false });
const ReasoningText = Type.Object({ type: Type.Literal('reasoning_text'), text: Text }, { additionalProperties: false });
export const ReasoningInput = Type.Object(
  {
    type: Type.Literal('reasoning'),
    id: Type.Optional(ItemId),
    summary: Type.Array(SummaryText, { maxItems: 1000 }),
    content: Type.Optional(Type.Array(ReasoningText, { maxItems: 1000 })),
    encrypted_content: Optional(Type.String({ maxLength: 10_485_760 })),
    status: Type.Optional(ItemStatus),
  },
  { additionalProperties: false },
);
/** A custom tool's call passed back (CustomToolCall): its free-text `input` (custom-tools.ts). */
export const CustomToolCallInput = Type.Object(
  {
    type: Type.Literal('custom_tool_call'),
    id: Type.Optional(ItemId),
    call_id: Type.String({ minLength: 1, maxLength: 200 }),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    namespace: Type.Optional(Type.String({ maxLength: 64 })),
    input: Text,
    caller: Type.Optional(Type.Unknown()),
    status: Type.Optional(ItemStatus),
  },
  { additionalProperties: false },
);
/** The client's result of a custom tool's call (CustomToolCallOutput): a text or input parts, as a function's. */
export const CustomToolCallOutputInput = Type.Object(
  {
    type: Type.Literal('custom_tool_call_output'),
    id: Optional(ItemId),
    call_id: Type.String({ minLength: 1, maxLength: 200 }),
    output: Type.Union([Text, Type.Array(TypedPart, { maxItems: 1000 })]),
    caller: Type.Optional(Type.Unknown()),
    status: Optional(ItemStatus),
  },
  { additionalProperties: false },
);
export const ItemReference = Type.Object({ type: Optional(Type.Literal('item_reference')), id: ItemId }, { additionalProperties: false });
export type MessageInput = Static<typeof MessageInput>;
export type FunctionCallInput = Static<typeof FunctionCallInput>;
export type FunctionCallOutputInput = Static<typeof FunctionCallOutputInput>;
export type ReasoningInput = Static<typeof ReasoningInput>;
export type CustomToolCallInput = Static<typeof CustomToolCallInput>;
export type CustomToolCallOutputInput = Static<typeof CustomToolCallOutputInput>;

/** A custom tool's call as a response's output item and as stored (CustomToolCallResource). */
export const CustomToolCallItem = Type.Object({
  id: Type.String(),
  type: Type.Literal('custom_tool_call'),
  status: ItemStatus,
  call_id: Type.String(),
  name: Type.String(),
  input: Type.String(),
});
export type CustomToolCallItem = Static<typeof CustomToolCallItem>;

/** One input item as a request sends it: its `type` (or, left out, its `role` or `id`) picks the form. */
export const InputItem = Type.Object(
  {
    type: Type.Optional(Type.String({ maxLength: 64 })),
    role: Type.Optional(Type.String({ maxLength: 32 })),
    id: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  },
  {
    additionalProperties: true,
    description:
      'An input item (InputItem): a message (easy or with content parts), function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning, item_reference or a hosted tool item.',
  },
);
export type InputItem = Static<typeof InputItem> & Record<string, unknown>;

/** `input` of a request: a text (one user message) or a list of items. */
export const Input = Type.Union([Text, Type.Array(InputItem, { maxItems: 2048 })]);

const StoredPart = Type.Union([InputText, InputImage, InputFile, OutputText, Refusal]);

/**
 * The item types of hosted tools (tools/hosted.ts): their shapes live with each tool under tools/; as
 * stored and listed, an item of one of these types is passed through whole.
 */
export const HOSTED_ITEM_TYPES = [
  'file_search_call',
  'code_interpreter_call',
  'mcp_list_tools',
  'mcp_call',
  'mcp_approval_request',
  'mcp_approval_response',
] as const;
export type HostedItemType = (typeof HOSTED_ITEM_TYPES)[number];
/** An item of a hosted tool (a `file_search_call`, an `mcp_call`…): its id and type; the rest is the tool's. */
export type HostedItem = { id: string; type: HostedItemType; status?: string } & Record<string, unknown>;
export const HostedItemSchema = Type.Unsafe<HostedItem>(
  Type.Object({ id: Type.String(), type: Type.Enum(HOSTED_ITEM_TYPES) }, { additionalProperties: true }),
);

/** An item as stored and listed (ItemResource): every item has an `id`. */
export const ItemResource = Type.Union([
  Type.Object({
    id: Type.String(),
    type: Type.Literal('message'),
    status: ItemStatus,
    role: Role,
    content: Type.Array(StoredPart),
  }),
  Type.Object({
    id: Type.String(),
    type: Type.Literal('function_call'),
    status: ItemStatus,
    call_id: Type.String(),
    name: Type.String(),
    arguments: Type.String(),
  }),
  Type.Object({
    id: Type.String(),
    type: Type.Literal('function_call_output'),
    status: ItemStatus,
    call_id: Type.String(),
    output: Type.Union([Type.String(), Type.Array(Type.Union([InputText, InputImage, InputFile]))]),
  }),
  CustomToolCallItem,
  Type.Object({
    id: Type.String(),
    type: Type.Literal('custom_tool_call_output'),
    status: ItemStatus,
    call_id: Type.String(),
    output: Type.Union([Type.String(), Type.Array(Type.Union([InputText, InputImage, InputFile]))]),
  }),
  Type.Object({
    id: Type.String(),
    type: Type.Literal('reasoning'),
    summary: Type.Array(SummaryText),
    content: Type.Optional(Type.Array(ReasoningText)),
    encrypted_content: Type.Optional(Nullable(Type.String())),
    status: Type.Optional(ItemStatus),
  }),
  HostedItemSchema,
]);
export type ItemResource = Static<typeof ItemResource>;

/** `include` of the item listings (IncludeEnum); Standin has nothing more to add to an input item. */
export const IncludeParam = Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 16 }));

/** The query of an item listing: `limit` (1–100, 20), `order` (default `desc`), `after`, `include`. */
export const ItemListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer()),
    order: Type.Optional(Type.Enum(['asc', 'desc'])),
    after: Type.Optional(Type.String({ maxLength: 256 })),
    include: IncludeParam,
    // The SDKs write a list in a query as `include[]=…`.
    'include[]': IncludeParam,
  },
  { additionalProperties: false },
);
export type ItemListQuery = Static<typeof ItemListQuery>;

/** A page of items (ResponseItemList, ConversationItemList). */
export const ItemList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(ItemResource),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
  has_more: Type.Boolean(),
});
export type ItemList = Static<typeof ItemList>;

const ConversationId = Type.String({ minLength: 1, maxLength: 200 });

/**
 * `POST /v1/responses/input_tokens` (TokenCountsBody): what a response would be given. Members that do
 * not change what is counted (text, reasoning, truncation, tool_choice…) are accepted as the document has them.
 */
export const TokenCountsBody = Type.Object(
  {
    model: Optional(Type.String({ maxLength: 256 })),
    input: Optional(Input),
    previous_response_id: Optional(Type.String({ maxLength: 200 })),
    conversation: Optional(Type.Union([ConversationId, Type.Object({ id: ConversationId }, { additionalProperties: false })])),
    instructions: Optional(Type.String({ maxLength: 1_000_000 })),
    tools: Optional(
      Type.Array(
        Type.Object(
          {
            type: Type.String({ maxLength: 64 }),
            name: Type.Optional(Type.String({ maxLength: 128 })),
            description: Optional(Type.String({ maxLength: 4096 })),
            parameters: Optional(Type.Record(Type.String(), Type.Unknown())),
            strict: Optional(Type.Boolean()),
          },
          { additionalProperties: true },
        ),
        { maxItems: 128 },
      ),
    ),
    text: Optional(Type.Record(Type.String(), Type.Unknown())),
    reasoning: Optional(Type.Record(Type.String(), Type.Unknown())),
    truncation: Type.Optional(Type.Enum(['auto', 'disabled'])),
    tool_choice: Optional(Type.Unknown()),
    parallel_tool_calls: Optional(Type.Boolean()),
    personality: Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type TokenCountsBody = Static<typeof TokenCountsBody>;

export const TokenCounts = Type.Object({ object: Type.Literal('response.input_tokens'), input_tokens: Type.Integer() });
