import { fromJson } from '../store/db.js';
import type {
  AssistantObject,
  Attachment,
  MessageContent,
  MessageObject,
  RequiredAction,
  ResponseFormat,
  RunError,
  RunObject,
  RunStepObject,
  StepDetails,
  ThreadObject,
  Tool,
  ToolChoice,
  ToolResources,
  TruncationStrategy,
} from './objects.js';
import { isTerminal } from './runs/states.js';
import type { AssistantsTables } from './tables.js';

/**
 * Rows → API objects, in the field order and with the defaults of the OpenAPI document's objects
 * (AssistantObject, ThreadObject, MessageObject, RunObject, RunStepObject). JSON members are stored
 * as the checked request values or as Standin wrote them, so they are read back as their types.
 */
type Row<T extends keyof AssistantsTables> = AssistantsTables[T];
type Metadata = Record<string, string>;

const num = (v: number | null) => (v == null ? null : Number(v));
const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

export function assistantView(r: Row<'assistants'>): AssistantObject {
  return {
    id: r.id,
    object: 'assistant',
    created_at: Number(r.created_at),
    name: r.name,
    description: r.description,
    model: r.model,
    instructions: r.instructions,
    tools: fromJson<Tool[]>(r.tools) ?? [],
    tool_resources: fromJson<ToolResources>(r.tool_resources) ?? {},
    metadata: fromJson<Metadata>(r.metadata) ?? {},
    temperature: r.temperature ?? 1,
    top_p: r.top_p ?? 1,
    response_format: fromJson<ResponseFormat>(r.response_format) ?? 'auto',
    ...(r.reasoning_effort ? { reasoning_effort: r.reasoning_effort } : {}),
  };
}

export function threadView(r: Row<'threads'>): ThreadObject {
  return {
    id: r.id,
    object: 'thread',
    created_at: Number(r.created_at),
    metadata: fromJson<Metadata>(r.metadata) ?? {},
    tool_resources: fromJson<ToolResources>(r.tool_resources) ?? {},
  };
}

export function messageView(r: Row<'thread_messages'>): MessageObject {
  return {
    id: r.id,
    object: 'thread.message',
    created_at: Number(r.created_at),
    assistant_id: r.assistant_id,
    thread_id: r.thread_id,
    run_id: r.run_id,
    status: r.status,
    incomplete_details: fromJson<MessageObject['incomplete_details']>(r.incomplete_details),
    completed_at: num(r.completed_at),
    incomplete_at: num(r.incomplete_at),
    role: r.role,
    content: fromJson<MessageContent[]>(r.content) ?? [],
    attachments: fromJson<Attachment[]>(r.attachments) ?? [],
    metadata: fromJson<Metadata>(r.metadata) ?? {},
  };
}

export function runView(r: Row<'thread_runs'>): RunObject {
  return {
    id: r.id,
    object: 'thread.run',
    created_at: Number(r.created_at),
    assistant_id: r.assistant_id,
    thread_id: r.thread_id,
    status: r.status,
    started_at: num(r.started_at),
    expires_at: num(r.expires_at),
    cancelled_at: num(r.cancelled_at),
    failed_at: num(r.failed_at),
    completed_at: num(r.completed_at),
    required_action: fromJson<RequiredAction>(r.required_action),
    last_error: fromJson<RunError>(r.last_error),
    model: r.model,
    instructions: r.instructions,
    tools: fromJson<Tool[]>(r.tools) ?? [],
    metadata: fromJson<Metadata>(r.metadata) ?? {},
    incomplete_details: fromJson<RunObject['incomplete_details']>(r.incomplete_details),
    // Usage is counted as the run goes, and shown once the run has ended.
    usage: isTerminal(r.status) ? usage(Number(r.prompt_used), Number(r.completion_used)) : null,
    temperature: r.temperature ?? 1,
    top_p: r.top_p ?? 1,
    max_prompt_tokens: num(r.max_prompt_tokens),
    max_completion_tokens: num(r.max_completion_tokens),
    truncation_strategy: fromJson<TruncationStrategy>(r.truncation_strategy),
    response_format: fromJson<ResponseFormat>(r.response_format) ?? 'auto',
    tool_choice: fromJson<ToolChoice>(r.tool_choice) ?? 'auto',
    parallel_tool_calls: r.parallel_tool_calls === 1 || (r.parallel_tool_calls as unknown) === true,
    ...(r.reasoning_effort ? { reasoning_effort: r.reasoning_effort } : {}),
  };
}

/**
 * A run step. File search results carry their `content` only when the caller asked for it with
 * `include[]=step_details.tool_calls[*].file_search.results[*].content`; file search and code calls show
 * their platform members only (the query the model asked, the files the code wrote are kept for the
 * runs, not shown).
 */
export function stepView(r: Row<'run_steps'>, opts: { includeContent?: boolean } = {}): RunStepObject {
  let details = JSON.parse(r.step_details) as StepDetails;
  if (details.type === 'tool_calls') {
    details = {
      ...details,
      tool_calls: details.tool_calls.map((c) => {
        // A code call shows its platform members only (the files its code wrote are kept for the run, not shown).
        if (c.type === 'code_interpreter') return { id: c.id, type: 'code_interpreter', code_interpreter: c.code_interpreter };
        if (c.type !== 'file_search') return c;
        const { ranking_options, results } = c.file_search;
        return {
          id: c.id,
          type: 'file_search',
          file_search: {
            ...(ranking_options ? { ranking_options } : {}),
            ...(results ? { results: opts.includeContent ? results : results.map(({ content: _content, ...rest }) => rest) } : {}),
          },
        };
      }),
    };
  }
  return {
    id: r.id,
    object: 'thread.run.step',
    created_at: Number(r.created_at),
    run_id: r.run_id,
    assistant_id: r.assistant_id,
    thread_id: r.thread_id,
    type: r.type,
    status: r.status,
    cancelled_at: num(r.cancelled_at),
    completed_at: num(r.completed_at),
    expired_at: num(r.expired_at),
    failed_at: num(r.failed_at),
    last_error: fromJson<RunStepObject['last_error']>(r.last_error),
    step_details: details,
    // Usage is kept as soon as the model answered, but shown only once the step is over.
    usage: r.status === 'in_progress' ? null : fromJson<RunStepObject['usage']>(r.usage),
    metadata: fromJson<Metadata>(r.metadata) ?? {},
  };
}

/** A step as its stream events carry it: with file search content, which a stream not asking for it leaves out (sse.ts). */
export const stepEvent = (r: Row<'run_steps'>): RunStepObject => stepView(r, { includeContent: true });
