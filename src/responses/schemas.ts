import { Type } from 'typebox';

const Text = Type.String({ maxLength: 1_000_000 });
const ContentPart = Type.Object(
  {
    type: Type.Union([Type.Literal('input_text'), Type.Literal('output_text')]),
    text: Text,
    annotations: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 100 })),
  },
  { additionalProperties: false },
);
const MessageItem = Type.Object(
  {
    type: Type.Optional(Type.Literal('message')),
    id: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(Type.String({ maxLength: 32 })),
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system'), Type.Literal('developer')]),
    content: Type.Union([Text, Type.Array(ContentPart, { minItems: 1, maxItems: 100 })]),
  },
  { additionalProperties: false },
);
const FunctionCallOutput = Type.Object(
  { type: Type.Literal('function_call_output'), call_id: Type.String({ minLength: 1, maxLength: 200 }), output: Text, id: Type.Optional(Type.String({ maxLength: 200 })), status: Type.Optional(Type.String({ maxLength: 32 })) },
  { additionalProperties: false },
);
const FunctionCall = Type.Object(
  {
    type: Type.Literal('function_call'),
    call_id: Type.String({ minLength: 1, maxLength: 200 }),
    name: Type.String({ minLength: 1, maxLength: 64 }),
    arguments: Text,
    id: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
);
export const InputItem = Type.Union([MessageItem, FunctionCallOutput, FunctionCall]);

const FunctionTool = Type.Object(
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

/** The members of `CreateResponse` Standin acts on; unknown members are refused. */
export const CreateResponseBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(Type.Union([Text, Type.Array(InputItem, { maxItems: 2048 })])),
    instructions: Type.Optional(Type.Union([Text, Type.Null()])),
    background: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    metadata: Type.Optional(Type.Union([Metadata, Type.Null()])),
    max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 16, maximum: 1_000_000 }), Type.Null()])),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
    store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    previous_response_id: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    tools: Type.Optional(Type.Array(FunctionTool, { maxItems: 128 })),
    tool_choice: Type.Optional(
      Type.Union([
        Type.Literal('none'),
        Type.Literal('auto'),
        Type.Literal('required'),
        Type.Object({ type: Type.Literal('function'), name: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
      ]),
    ),
    parallel_tool_calls: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    text: Type.Optional(Type.Object({ format: Type.Optional(TextFormat), verbosity: Type.Optional(Type.String({ maxLength: 16 })) }, { additionalProperties: false })),
    user: Type.Optional(Type.String({ maxLength: 256 })),
    safety_identifier: Type.Optional(Type.String({ maxLength: 64 })),
    prompt_cache_key: Type.Optional(Type.String({ maxLength: 256 })),
    service_tier: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('default'), Type.Literal('flex'), Type.Literal('scale'), Type.Literal('priority'), Type.Null()])),
    truncation: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('disabled'), Type.Null()])),
    reasoning: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  },
  { additionalProperties: false },
);
