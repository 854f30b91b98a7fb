import { Type, type Static, type TSchema } from 'typebox';
import { PageParams } from '../core/schemas.js';

/**
 * Request schemas of the threads interface (CreateAssistantRequest, CreateRunRequest … of the OpenAPI
 * document). Plain members are checked here; polymorphic members (tools, content, response_format,
 * tool_choice, truncation_strategy, tool_resources, metadata) are typed `unknown` here and checked by
 * `validate.ts`, which names the exact field and rule a union error could not.
 */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Checked = (description: string) => Type.Unknown({ description });

const Model = Type.String({ minLength: 1, maxLength: 256 });
const ReasoningEffort = Nullable(Type.Enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']));
const Temperature = Nullable(Type.Number({ minimum: 0, maximum: 2 }));
const TopP = Nullable(Type.Number({ minimum: 0, maximum: 1 }));
const TokenLimit = Nullable(Type.Integer({ minimum: 256 }));
const Instructions = Type.String({ maxLength: 256_000 });

const metadata = Checked('Up to 16 string pairs; keys ≤ 64, values ≤ 512 characters.');
const tools = Checked('Tools: code_interpreter, file_search, function.');
const toolResources = Checked('code_interpreter.file_ids (≤ 20), file_search.vector_store_ids (≤ 1).');
const responseFormat = Checked("'auto', {type: text}, {type: json_object} or {type: json_schema, json_schema}.");
const toolChoice = Checked("'none', 'auto', 'required' or {type, function?: {name}}.");
const truncation = Checked('{type: auto | last_messages, last_messages?}.');

/** Assistant fields other than `model` (optional on create and on modify alike). */
const assistantFields = {
  name: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 512 }))),
  instructions: Type.Optional(Nullable(Instructions)),
  reasoning_effort: Type.Optional(ReasoningEffort),
  tools: Type.Optional(tools),
  tool_resources: Type.Optional(toolResources),
  metadata: Type.Optional(metadata),
  temperature: Type.Optional(Temperature),
  top_p: Type.Optional(TopP),
  response_format: Type.Optional(responseFormat),
};

export const CreateAssistantBody = Type.Object({ model: Model, ...assistantFields }, { additionalProperties: false });
export type CreateAssistantRequest = Static<typeof CreateAssistantBody>;

export const ModifyAssistantBody = Type.Object({ model: Type.Optional(Model), ...assistantFields }, { additionalProperties: false });
export type ModifyAssistantRequest = Static<typeof ModifyAssistantBody>;

export const CreateThreadBody = Type.Object(
  {
    messages: Type.Optional(Nullable(Type.Array(Checked('A message: {role, content, attachments?, metadata?}.'), { maxItems: 1000 }))),
    tool_resources: Type.Optional(toolResources),
    metadata: Type.Optional(metadata),
  },
  { additionalProperties: false },
);
export type CreateThreadRequest = Static<typeof CreateThreadBody>;

export const ModifyThreadBody = Type.Object(
  { tool_resources: Type.Optional(toolResources), metadata: Type.Optional(metadata) },
  { additionalProperties: false },
);
export type ModifyThreadRequest = Static<typeof ModifyThreadBody>;

export const CreateMessageBody = Type.Object(
  {
    role: Checked("'user' or 'assistant'."),
    content: Checked('A string, or content parts: text, image_file, image_url.'),
    attachments: Type.Optional(Checked('[{file_id, tools: [{type}]}] or null.')),
    metadata: Type.Optional(metadata),
  },
  { additionalProperties: false, required: ['role', 'content'] },
);
export type CreateMessageRequest = Static<typeof CreateMessageBody>;

/** Modify a message or a run: only its metadata. */
export const ModifyBody = Type.Object({ metadata: Type.Optional(metadata) }, { additionalProperties: false });
export type ModifyRequest = Static<typeof ModifyBody>;

const runMembers = {
  model: Type.Optional(Nullable(Model)),
  reasoning_effort: Type.Optional(ReasoningEffort),
  instructions: Type.Optional(Nullable(Instructions)),
  tools: Type.Optional(Nullable(tools)),
  metadata: Type.Optional(metadata),
  temperature: Type.Optional(Temperature),
  top_p: Type.Optional(TopP),
  stream: Type.Optional(Nullable(Type.Boolean())),
  max_prompt_tokens: Type.Optional(TokenLimit),
  max_completion_tokens: Type.Optional(TokenLimit),
  truncation_strategy: Type.Optional(truncation),
  tool_choice: Type.Optional(toolChoice),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  response_format: Type.Optional(responseFormat),
};

export const CreateRunBody = Type.Object(
  {
    assistant_id: Type.String({ minLength: 1, maxLength: 256 }),
    additional_instructions: Type.Optional(Nullable(Instructions)),
    additional_messages: Type.Optional(
      Nullable(Type.Array(Checked('A message: {role, content, attachments?, metadata?}.'), { maxItems: 1000 })),
    ),
    ...runMembers,
  },
  { additionalProperties: false },
);
export type CreateRunRequest = Static<typeof CreateRunBody>;

export const CreateThreadAndRunBody = Type.Object(
  {
    assistant_id: Type.String({ minLength: 1, maxLength: 256 }),
    thread: Type.Optional(Checked('CreateThreadRequest: {messages?, tool_resources?, metadata?}.')),
    tool_resources: Type.Optional(toolResources),
    ...runMembers,
  },
  { additionalProperties: false },
);
export type CreateThreadAndRunRequest = Static<typeof CreateThreadAndRunBody>;

export const SubmitToolOutputsBody = Type.Object(
  {
    tool_outputs: Type.Array(
      Type.Object(
        { tool_call_id: Type.Optional(Type.String({ maxLength: 256 })), output: Type.Optional(Type.String({ maxLength: 512 * 1024 })) },
        { additionalProperties: false },
      ),
      { maxItems: 128 },
    ),
    stream: Type.Optional(Nullable(Type.Boolean())),
  },
  { additionalProperties: false },
);
export type SubmitToolOutputsRequest = Static<typeof SubmitToolOutputsBody>;

export const ListQuery = Type.Object(PageParams, { additionalProperties: false });
export const ListMessagesQuery = Type.Object(
  { ...PageParams, run_id: Type.Optional(Type.String({ maxLength: 256 })) },
  { additionalProperties: false },
);
export type ListMessagesParams = Static<typeof ListMessagesQuery>;
export const INCLUDE_FILE_SEARCH_CONTENT = 'step_details.tool_calls[*].file_search.results[*].content';
const Include = Type.Array(Type.Enum([INCLUDE_FILE_SEARCH_CONTENT]), { maxItems: 10 });
export const ListStepsQuery = Type.Object({ ...PageParams, 'include[]': Type.Optional(Include) }, { additionalProperties: false });
export const IncludeQuery = Type.Object({ 'include[]': Type.Optional(Include) }, { additionalProperties: false });

export const AssistantParams = Type.Object({ assistant_id: Type.String({ maxLength: 256 }) });
export const ThreadParams = Type.Object({ thread_id: Type.String({ maxLength: 256 }) });
export const MessageParams = Type.Object({ thread_id: Type.String({ maxLength: 256 }), message_id: Type.String({ maxLength: 256 }) });
export const RunParams = Type.Object({ thread_id: Type.String({ maxLength: 256 }), run_id: Type.String({ maxLength: 256 }) });
export const StepParams = Type.Object({
  thread_id: Type.String({ maxLength: 256 }),
  run_id: Type.String({ maxLength: 256 }),
  step_id: Type.String({ maxLength: 256 }),
});
