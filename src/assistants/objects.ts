import { Type, type Static, type TSchema } from 'typebox';
import { Deleted, ListOf, Metadata } from '../core/schemas.js';
import { RUN_STATUSES } from './runs/states.js';

/**
 * The objects of the threads interface as replies carry them (AssistantObject, ThreadObject,
 * MessageObject, RunObject, RunStepObject of the OpenAPI document): the routes' response schemas, and
 * the types `views.ts` builds. Members Standin always fills are required; nullable where the document
 * allows null.
 */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Time = Type.Integer({ description: 'Unix seconds.' });
const MaybeTime = Nullable(Time);
const Usage = Nullable(Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() }));
const Detail = Type.Enum(['auto', 'low', 'high']);

const FunctionDefinition = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  strict: Type.Optional(Nullable(Type.Boolean())),
});

const FileSearchSettings = Type.Object({
  max_num_results: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  ranking_options: Type.Optional(
    Type.Object({ ranker: Type.Optional(Type.Enum(['auto', 'default_2024_08_21'])), score_threshold: Type.Number() }),
  ),
});

/** A tool of an assistant or a run (file_search shows its effective settings once stored). */
export const Tool = Type.Union([
  Type.Object({ type: Type.Literal('code_interpreter') }),
  Type.Object({ type: Type.Literal('file_search'), file_search: Type.Optional(FileSearchSettings) }),
  Type.Object({ type: Type.Literal('function'), function: FunctionDefinition }),
]);
export type Tool = Static<typeof Tool>;

export const ToolResources = Type.Object({
  code_interpreter: Type.Optional(Type.Object({ file_ids: Type.Array(Type.String()) })),
  file_search: Type.Optional(Type.Object({ vector_store_ids: Type.Array(Type.String()) })),
});
export type ToolResources = Static<typeof ToolResources>;

export const ResponseFormat = Type.Union([
  Type.Literal('auto'),
  Type.Object({ type: Type.Literal('text') }),
  Type.Object({ type: Type.Literal('json_object') }),
  Type.Object({
    type: Type.Literal('json_schema'),
    json_schema: Type.Object({
      name: Type.String(),
      description: Type.Optional(Type.String()),
      schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      strict: Type.Optional(Nullable(Type.Boolean())),
    }),
  }),
]);
export type ResponseFormat = Static<typeof ResponseFormat>;

export const ToolChoice = Type.Union([
  Type.Enum(['none', 'auto', 'required']),
  Type.Object({
    type: Type.Enum(['function', 'code_interpreter', 'file_search']),
    function: Type.Optional(Type.Object({ name: Type.String() })),
  }),
]);
export type ToolChoice = Static<typeof ToolChoice>;

export const TruncationStrategy = Type.Object({
  type: Type.Enum(['auto', 'last_messages']),
  last_messages: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
});
export type TruncationStrategy = Static<typeof TruncationStrategy>;

export const AssistantObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('assistant'),
  created_at: Time,
  name: Nullable(Type.String()),
  description: Nullable(Type.String()),
  model: Type.String(),
  instructions: Nullable(Type.String()),
  tools: Type.Array(Tool),
  tool_resources: Nullable(ToolResources),
  metadata: Metadata,
  temperature: Nullable(Type.Number()),
  top_p: Nullable(Type.Number()),
  response_format: Nullable(ResponseFormat),
  reasoning_effort: Type.Optional(Nullable(Type.String())),
});
export type AssistantObject = Static<typeof AssistantObject>;

export const ThreadObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('thread'),
  created_at: Time,
  metadata: Metadata,
  tool_resources: Nullable(ToolResources),
});
export type ThreadObject = Static<typeof ThreadObject>;

const Annotation = Type.Union([
  Type.Object({
    type: Type.Literal('file_citation'),
    text: Type.String(),
    file_citation: Type.Object({ file_id: Type.String() }),
    start_index: Type.Integer(),
    end_index: Type.Integer(),
  }),
  Type.Object({
    type: Type.Literal('file_path'),
    text: Type.String(),
    file_path: Type.Object({ file_id: Type.String() }),
    start_index: Type.Integer(),
    end_index: Type.Integer(),
  }),
]);

export const MessageContent = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.Object({ value: Type.String(), annotations: Type.Array(Annotation) }) }),
  Type.Object({ type: Type.Literal('image_file'), image_file: Type.Object({ file_id: Type.String(), detail: Type.Optional(Detail) }) }),
  Type.Object({ type: Type.Literal('image_url'), image_url: Type.Object({ url: Type.String(), detail: Type.Optional(Detail) }) }),
  Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() }),
]);
export type MessageContent = Static<typeof MessageContent>;

export const Attachment = Type.Object({
  file_id: Type.String(),
  tools: Type.Array(Type.Object({ type: Type.Enum(['code_interpreter', 'file_search']) })),
});
export type Attachment = Static<typeof Attachment>;

const MessageStatus = Type.Enum(['in_progress', 'incomplete', 'completed']);
export type MessageStatus = Static<typeof MessageStatus>;
const MessageIncompleteReason = Type.Enum(['content_filter', 'max_tokens', 'run_cancelled', 'run_expired', 'run_failed']);
export type MessageIncompleteReason = Static<typeof MessageIncompleteReason>;

export const MessageObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('thread.message'),
  created_at: Time,
  assistant_id: Nullable(Type.String()),
  thread_id: Type.String(),
  run_id: Nullable(Type.String()),
  status: MessageStatus,
  incomplete_details: Nullable(Type.Object({ reason: MessageIncompleteReason })),
  completed_at: MaybeTime,
  incomplete_at: MaybeTime,
  role: Type.Enum(['user', 'assistant']),
  content: Type.Array(MessageContent),
  attachments: Nullable(Type.Array(Attachment)),
  metadata: Metadata,
});
export type MessageObject = Static<typeof MessageObject>;

const RunStatus = Type.Enum(RUN_STATUSES);

export const RequiredAction = Type.Object({
  type: Type.Literal('submit_tool_outputs'),
  submit_tool_outputs: Type.Object({
    tool_calls: Type.Array(
      Type.Object({
        id: Type.String(),
        type: Type.Literal('function'),
        function: Type.Object({ name: Type.String(), arguments: Type.String() }),
      }),
    ),
  }),
});
export type RequiredAction = Static<typeof RequiredAction>;

export const RunError = Type.Object({ code: Type.Enum(['server_error', 'rate_limit_exceeded', 'invalid_prompt']), message: Type.String() });
export type RunError = Static<typeof RunError>;

export const RunObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('thread.run'),
  created_at: Time,
  assistant_id: Type.String(),
  thread_id: Type.String(),
  status: RunStatus,
  started_at: MaybeTime,
  expires_at: MaybeTime,
  cancelled_at: MaybeTime,
  failed_at: MaybeTime,
  completed_at: MaybeTime,
  required_action: Nullable(RequiredAction),
  last_error: Nullable(RunError),
  model: Type.String(),
  instructions: Type.String(),
  tools: Type.Array(Tool),
  metadata: Metadata,
  incomplete_details: Nullable(Type.Object({ reason: Type.Enum(['max_completion_tokens', 'max_prompt_tokens']) })),
  usage: Usage,
  temperature: Nullable(Type.Number()),
  top_p: Nullable(Type.Number()),
  max_prompt_tokens: Nullable(Type.Integer()),
  max_completion_tokens: Nullable(Type.Integer()),
  truncation_strategy: Nullable(TruncationStrategy),
  response_format: Nullable(ResponseFormat),
  tool_choice: Nullable(ToolChoice),
  parallel_tool_calls: Type.Boolean(),
  reasoning_effort: Type.Optional(Nullable(Type.String())),
});
export type RunObject = Static<typeof RunObject>;

export const FunctionToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String(), output: Nullable(Type.String()) }),
});
export type FunctionToolCall = Static<typeof FunctionToolCall>;

const FileSearchToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('file_search'),
  file_search: Type.Object({
    ranking_options: Type.Optional(Type.Object({ ranker: Type.String(), score_threshold: Type.Number() })),
    results: Type.Optional(
      Type.Array(
        Type.Object({
          file_id: Type.String(),
          file_name: Type.String(),
          score: Type.Number(),
          content: Type.Optional(Type.Array(Type.Object({ type: Type.Literal('text'), text: Type.String() }))),
        }),
      ),
    ),
  }),
});

export const CodeInterpreterToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('code_interpreter'),
  code_interpreter: Type.Object({
    input: Type.String(),
    outputs: Type.Array(
      Type.Union([
        Type.Object({ type: Type.Literal('logs'), logs: Type.String() }),
        Type.Object({ type: Type.Literal('image'), image: Type.Object({ file_id: Type.String() }) }),
      ]),
    ),
  }),
});

export type CodeInterpreterToolCall = Static<typeof CodeInterpreterToolCall>;

const StepToolCall = Type.Union([FunctionToolCall, FileSearchToolCall, CodeInterpreterToolCall]);

export const StepDetails = Type.Union([
  Type.Object({ type: Type.Literal('message_creation'), message_creation: Type.Object({ message_id: Type.String() }) }),
  Type.Object({ type: Type.Literal('tool_calls'), tool_calls: Type.Array(StepToolCall) }),
]);
export type StepDetails = Static<typeof StepDetails>;

const StepStatus = Type.Enum(['in_progress', 'cancelled', 'failed', 'completed', 'expired']);
export type StepStatus = Static<typeof StepStatus>;

export const RunStepObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('thread.run.step'),
  created_at: Time,
  run_id: Type.String(),
  assistant_id: Type.String(),
  thread_id: Type.String(),
  type: Type.Enum(['message_creation', 'tool_calls']),
  status: StepStatus,
  cancelled_at: MaybeTime,
  completed_at: MaybeTime,
  expired_at: MaybeTime,
  failed_at: MaybeTime,
  last_error: Nullable(Type.Object({ code: Type.Enum(['server_error', 'rate_limit_exceeded']), message: Type.String() })),
  step_details: StepDetails,
  usage: Usage,
  metadata: Metadata,
});
export type RunStepObject = Static<typeof RunStepObject>;

export const AssistantList = ListOf(AssistantObject);
export const MessageList = ListOf(MessageObject);
export const RunList = ListOf(RunObject);
export const RunStepList = ListOf(RunStepObject);
export const AssistantDeleted = Deleted('assistant.deleted');
export const ThreadDeleted = Deleted('thread.deleted');
export const MessageDeleted = Deleted('thread.message.deleted');

/** A run's stream as it was sent (the control plane's replay). */
export const RunEventList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Object({ seq: Type.Integer(), event: Type.String(), data: Type.Unknown() })),
  has_more: Type.Boolean(),
});
