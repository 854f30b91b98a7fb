import { Type, type Static, type TSchema } from 'typebox';
import { Deleted } from '../core/schemas.js';
import { Input } from './input-schemas.js';

/** Request and reply shapes of `/v1/responses` (CreateResponse and Response of the OpenAPI document). */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

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

const ToolChoice = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Literal('required'),
  Type.Object({ type: Type.Literal('function'), name: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
]);

/** `conversation` of a response (ConversationParam): its id, or `{id}`. */
const ConversationId = Type.String({ minLength: 1, maxLength: 200 });
const ConversationRef = Type.Union([ConversationId, Type.Object({ id: ConversationId }, { additionalProperties: false })]);

/** The members of `CreateResponse` Standin acts on; unknown members are refused. */
export const CreateResponseBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.Optional(Input),
    instructions: Type.Optional(Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Null()])),
    background: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    metadata: Type.Optional(Type.Union([Metadata, Type.Null()])),
    max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 16, maximum: 1_000_000 }), Type.Null()])),
    temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
    top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
    store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    previous_response_id: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    conversation: Type.Optional(Nullable(ConversationRef)),
    tools: Type.Optional(Type.Array(FunctionTool, { maxItems: 128 })),
    tool_choice: Type.Optional(ToolChoice),
    parallel_tool_calls: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    text: Type.Optional(
      Type.Object(
        { format: Type.Optional(TextFormat), verbosity: Type.Optional(Type.String({ maxLength: 16 })) },
        { additionalProperties: false },
      ),
    ),
    user: Type.Optional(Type.String({ maxLength: 256 })),
    safety_identifier: Type.Optional(Type.String({ maxLength: 64 })),
    prompt_cache_key: Type.Optional(Type.String({ maxLength: 256 })),
    service_tier: Type.Optional(
      Type.Union([
        Type.Literal('auto'),
        Type.Literal('default'),
        Type.Literal('flex'),
        Type.Literal('scale'),
        Type.Literal('priority'),
        Type.Null(),
      ]),
    ),
    truncation: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('disabled'), Type.Null()])),
    reasoning: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateResponseRequest = Static<typeof CreateResponseBody>;

export const ResponseParams = Type.Object({ response_id: Type.String({ maxLength: 200 }) });

const OutputItem = Type.Union([
  Type.Object({
    id: Type.String(),
    type: Type.Literal('message'),
    status: Type.Enum(['in_progress', 'completed', 'incomplete']),
    role: Type.Literal('assistant'),
    content: Type.Array(
      Type.Object({
        type: Type.Literal('output_text'),
        text: Type.String(),
        annotations: Type.Array(Type.Unknown()),
        logprobs: Type.Array(Type.Unknown()),
      }),
    ),
  }),
  Type.Object({
    id: Type.String(),
    type: Type.Literal('function_call'),
    status: Type.Enum(['in_progress', 'completed', 'incomplete']),
    call_id: Type.String(),
    name: Type.String(),
    arguments: Type.String(),
  }),
]);

const ResponseStatus = Type.Enum(['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete']);
export type ResponseStatus = Static<typeof ResponseStatus>;

/** The response object: the members of the `Response` schema Standin fills. */
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
  metadata: Type.Record(Type.String(), Type.String()),
  model: Type.String(),
  output: Type.Array(OutputItem),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: Nullable(Type.String()),
  conversation: Type.Optional(Nullable(Type.Object({ id: Type.String() }))),
  reasoning: Nullable(Type.Record(Type.String(), Type.Unknown())),
  service_tier: Type.String(),
  store: Type.Boolean(),
  temperature: Type.Number(),
  text: Type.Object({ format: TextFormat }),
  tool_choice: ToolChoice,
  tools: Type.Array(FunctionTool),
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
});
export type ResponseObject = Static<typeof ResponseObject>;

export const ResponseDeleted = Deleted('response');
