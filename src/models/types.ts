/**
 * The model provider interface shared by runs (assistants) and responses. It speaks the Chat Completions
 * shapes, so an upstream that speaks that protocol (Ollama, vLLM, llama.cpp, a hosted model) plugs in
 * directly, and the built-in deterministic provider answers offline.
 */
export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A Chat Completions content part: what an upstream model is sent for an image or file input. */
export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'file'; file: { filename?: string; file_data?: string } };

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  /** The text; for a message with images or files, their text reading (what the built-in model reads). */
  content: string | null;
  /** The message as content parts, when it has images or files: sent upstream in place of `content`. */
  parts?: ChatContentPart[];
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };
  parallel_tool_calls?: boolean;
  temperature?: number | null;
  top_p?: number | null;
  /** Upper bound on completion tokens. */
  max_tokens?: number | null;
  response_format?: { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; json_schema: Record<string, unknown> };
  /**
   * The offered function that searches files (file_search of runs; Standin executes its calls). Not sent
   * upstream; the built-in provider calls it when the user asks something (docs/models.md).
   */
  retrieval?: { name: string };
  /**
   * The offered function that runs Python (code_interpreter of runs; Standin executes its calls). Not
   * sent upstream; the built-in provider calls it for a fenced python block (docs/models.md).
   */
  interpreter?: { name: string };
  /**
   * The offered functions that stand for custom tools of `/v1/responses` (one string parameter `input`).
   * Not sent upstream; the built-in provider's calls of them carry its free text as `input` (docs/models.md).
   */
  custom?: string[];
  signal?: AbortSignal;
}

/** A piece of a streamed completion. Tool call pieces carry the call's `index`; `id`/`name` come first. */
export type ChatChunk =
  { type: 'text'; delta: string } | { type: 'tool_call'; index: number; id?: string; name?: string; arguments?: string };

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatResult {
  content: string | null;
  tool_calls: ChatToolCall[];
  finish_reason: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  usage: ChatUsage;
}

/** One provider (built-in, upstream, record, replay): what the registry routes a model name to. */
export interface ChatProvider {
  name: string;
  complete(request: ChatRequest, onChunk?: (chunk: ChatChunk) => void): Promise<ChatResult>;
}

export interface ModelInfo {
  id: string;
  provider: string;
  owned_by: string;
}

/** Published as `ctx.services.models` by the models module. */
export interface ModelProviders {
  /** Whether a model name is served by some provider. */
  has(model: string): boolean;
  list(): ModelInfo[];
  /** Runs a completion; `onChunk` (optional) sees the stream as it arrives. */
  complete(request: ChatRequest, onChunk?: (chunk: ChatChunk) => void): Promise<ChatResult>;
  /** Counts tokens of text the way usage is reported when a provider gives none. */
  countTokens(text: string): number;
}
