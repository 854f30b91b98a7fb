import { Type, type Static, type TSchema } from 'typebox';
import { Metadata } from '../core/schemas.js';

/**
 * Request and reply shapes of `POST /v1/chat/completions` (CreateChatCompletionRequest,
 * CreateChatCompletionResponse and CreateChatCompletionStreamResponse of the OpenAPI document). Messages
 * are one object shape for every role, so a refusal names the member (`messages[2].tool_call_id`);
 * the per-role rules are in service.ts.
 */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Text = Type.String({ maxLength: 1_000_000 });

const ContentPart = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64 }),
    text: Type.Optional(Text),
    refusal: Type.Optional(Text),
    image_url: Type.Optional(Type.Unknown()),
    input_audio: Type.Optional(Type.Unknown()),
    file: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const ToolCall = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200 }),
    type: Type.Literal('function'),
    function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }), arguments: Text }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

const Message = Type.Object(
  {
    role: Type.Union([
      Type.Literal('system'),
      Type.Literal('developer'),
      Type.Literal('user'),
      Type.Literal('assistant'),
      Type.Literal('tool'),
      Type.Literal('function'),
    ]),
    content: Type.Optional(Nullable(Type.Union([Text, Type.Array(ContentPart, { maxItems: 1000 })]))),
    name: Type.Optional(Type.String({ maxLength: 256 })),
    tool_calls: Type.Optional(Type.Array(ToolCall, { maxItems: 128 })),
    tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    refusal: Type.Optional(Nullable(Text)),
    /** Sent back with a reply's assistant message; ignored. */
    annotations: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 1000 })),
    audio: Type.Optional(Nullable(Type.Unknown())),
    function_call: Type.Optional(Nullable(Type.Unknown())),
  },
  { additionalProperties: false },
);
export type ChatMessageParam = Static<typeof Message>;

const FunctionTool = Type.Object(
  {
    type: Type.Literal('function'),
    function: Type.Object(
      {
        name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
        description: Type.Optional(Type.String({ maxLength: 100_000 })),
        parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        strict: Type.Optional(Nullable(Type.Boolean())),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const ToolChoice = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Literal('required'),
  Type.Object(
    {
      type: Type.Literal('function'),
      function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
    },
    { additionalProperties: false },
  ),
]);

const ResponseFormat = Type.Union([
  Type.Object({ type: Type.Literal('text') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('json_object') }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('json_schema'),
      json_schema: Type.Object(
        {
          name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
          description: Type.Optional(Type.String({ maxLength: 100_000 })),
          schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          strict: Type.Optional(Nullable(Type.Boolean())),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
]);

const Stop = Nullable(Type.Union([Type.String({ maxLength: 1000 }), Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 4 })]));

/** CreateChatCompletionRequest: every member the OpenAPI lists; unknown members are refused. */
export const CreateChatCompletionBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    messages: Type.Array(Message, { minItems: 1, maxItems: 10_000 }),
    tools: Type.Optional(Type.Array(FunctionTool, { maxItems: 128 })),
    tool_choice: Type.Optional(ToolChoice),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
    response_format: Type.Optional(ResponseFormat),
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 10_000_000 }))),
    max_completion_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 10_000_000 }))),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 128 }))),
    stop: Type.Optional(Stop),
    seed: Type.Optional(Nullable(Type.Integer())),
    user: Type.Optional(Type.String({ maxLength: 512 })),
    safety_identifier: Type.Optional(Type.String({ maxLength: 64 })),
    prompt_cache_key: Type.Optional(Type.String({ maxLength: 1024 })),
    prompt_cache_retention: Type.Optional(Nullable(Type.Union([Type.Literal('in-memory'), Type.Literal('24h')]))),
    metadata: Type.Optional(Metadata),
    store: Type.Optional(Nullable(Type.Boolean())),
    stream: Type.Optional(Nullable(Type.Boolean())),
    stream_options: Type.Optional(
      Nullable(
        Type.Object(
          { include_usage: Type.Optional(Type.Boolean()), include_obfuscation: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
      ),
    ),
    frequency_penalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
    presence_penalty: Type.Optional(Nullable(Type.Number({ minimum: -2, maximum: 2 }))),
    logit_bias: Type.Optional(Nullable(Type.Record(Type.String(), Type.Integer({ minimum: -100, maximum: 100 })))),
    logprobs: Type.Optional(Nullable(Type.Boolean())),
    top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
    service_tier: Type.Optional(
      Nullable(
        Type.Union([Type.Literal('auto'), Type.Literal('default'), Type.Literal('flex'), Type.Literal('scale'), Type.Literal('priority')]),
      ),
    ),
    reasoning_effort: Type.Optional(
      Nullable(
        Type.Union([
          Type.Literal('none'),
          Type.Literal('minimal'),
          Type.Literal('low'),
          Type.Literal('medium'),
          Type.Literal('high'),
          Type.Literal('xhigh'),
        ]),
      ),
    ),
    verbosity: Type.Optional(Nullable(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')]))),
    modalities: Type.Optional(Nullable(Type.Array(Type.Union([Type.Literal('text'), Type.Literal('audio')]), { maxItems: 2 }))),
    audio: Type.Optional(Nullable(Type.Unknown())),
    prediction: Type.Optional(Nullable(Type.Unknown())),
    web_search_options: Type.Optional(Type.Unknown()),
    functions: Type.Optional(Type.Unknown()),
    function_call: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type CreateChatCompletionBody = Static<typeof CreateChatCompletionBody>;

const ToolCallOut = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});

const FinishReason = Type.Union([
  Type.Literal('stop'),
  Type.Literal('length'),
  Type.Literal('tool_calls'),
  Type.Literal('content_filter'),
  Type.Literal('function_call'),
]);

/** CompletionUsage. */
export const CompletionUsage = Type.Object({
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  total_tokens: Type.Integer(),
  prompt_tokens_details: Type.Object({ cached_tokens: Type.Integer(), audio_tokens: Type.Integer() }),
  completion_tokens_details: Type.Object({
    reasoning_tokens: Type.Integer(),
    audio_tokens: Type.Integer(),
    accepted_prediction_tokens: Type.Integer(),
    rejected_prediction_tokens: Type.Integer(),
  }),
});
export type CompletionUsage = Static<typeof CompletionUsage>;

/** CreateChatCompletionResponse (`object: chat.completion`). */
export const ChatCompletionObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({
        role: Type.Literal('assistant'),
        content: Nullable(Type.String()),
        refusal: Nullable(Type.String()),
        annotations: Type.Array(Type.Unknown()),
        tool_calls: Type.Optional(Type.Array(ToolCallOut)),
      }),
      logprobs: Type.Null(),
      finish_reason: FinishReason,
    }),
  ),
  usage: CompletionUsage,
  service_tier: Type.String(),
  system_fingerprint: Nullable(Type.String()),
  metadata: Type.Optional(Metadata),
});
export type ChatCompletionObject = Static<typeof ChatCompletionObject>;

/** A streamed tool call piece: the first of a call carries id, type and name. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

/** CreateChatCompletionStreamResponse (`object: chat.completion.chunk`); sent as SSE, not serialized by a schema. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  service_tier: string;
  system_fingerprint: string | null;
  choices: {
    index: number;
    delta: { role?: 'assistant'; content?: string | null; refusal?: string | null; tool_calls?: ToolCallDelta[] };
    logprobs: null;
    finish_reason: ChatCompletionObject['choices'][number]['finish_reason'] | null;
  }[];
  usage?: CompletionUsage | null;
}
