import { randomBytes } from 'node:crypto';
import { ApiError, invalid } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import { countTokens, ModelError } from '../models/service.js';
import type { ChatChunk, ChatMessage, ChatRequest, ChatResult, ChatTool } from '../models/types.js';
import type { Usage } from '../ratelimit/service.js';
import { bodyChecker, toApiError } from '../core/validation.js';
import {
  CreateChatCompletionBody,
  type ChatCompletionChunk,
  type ChatCompletionObject,
  type ChatMessageParam,
  type CompletionUsage,
} from './schemas.js';
import { StopCutter } from './stop.js';

/**
 * `POST /v1/chat/completions` on the model providers of `ctx.services.models` (the built-in
 * deterministic model, or an upstream Chat Completions server). Stateless: nothing is stored
 * (`store: true` is refused, docs/chat.md).
 */

type Part = Exclude<ChatMessageParam['content'], string | null | undefined>[number];

/** The text parts each role may send; other parts (images, audio, files) are refused. */
const PARTS: Record<ChatMessage['role'], readonly string[]> = {
  system: ['text'],
  developer: ['text'],
  user: ['text'],
  assistant: ['text', 'refusal'],
  tool: ['text'],
};

function textOf(content: ChatMessageParam['content'], role: ChatMessage['role'], at: string): string | null {
  if (content === undefined || content === null) return null;
  if (typeof content === 'string') return content;
  return content
    .map((p: Part, j) => {
      if (!PARTS[role].includes(p.type))
        throw invalid(
          `Content parts of type '${p.type}' are not supported in '${role}' messages by Standin (only ${PARTS[role].join(' and ')}).`,
          `${at}.content[${j}].type`,
          'unsupported_value',
        );
      const text = p.type === 'refusal' ? p.refusal : p.text;
      if (typeof text !== 'string')
        throw invalid(
          `Missing required parameter: '${at}.content[${j}].${p.type}'.`,
          `${at}.content[${j}].${p.type}`,
          'missing_required_parameter',
        );
      return text;
    })
    .join('');
}

/** The provider's messages, each checked against the rules of its role. */
export function toMessages(messages: ChatMessageParam[]): ChatMessage[] {
  return messages.map((m, i) => {
    const at = `messages[${i}]`;
    if (m.role === 'function')
      throw invalid(`The 'function' role is deprecated and not supported; use 'tool' messages.`, `${at}.role`, 'unsupported_value');
    const role = m.role;
    if (m.tool_calls && role !== 'assistant')
      throw invalid(`'tool_calls' is only allowed in 'assistant' messages.`, `${at}.tool_calls`, 'invalid_value');
    if (m.tool_call_id !== undefined && role !== 'tool')
      throw invalid(`'tool_call_id' is only allowed in 'tool' messages.`, `${at}.tool_call_id`, 'invalid_value');
    if (m.audio != null) throw invalid(`Audio is not supported by Standin.`, `${at}.audio`, 'unsupported_value');
    if (m.function_call != null)
      throw invalid(`'function_call' is deprecated and not supported; use 'tool_calls'.`, `${at}.function_call`, 'unsupported_value');
    const content = textOf(m.content, role, at);
    if (role === 'tool') {
      if (!m.tool_call_id)
        throw invalid(`Missing required parameter: '${at}.tool_call_id'.`, `${at}.tool_call_id`, 'missing_required_parameter');
      return { role, content: content ?? '', tool_call_id: m.tool_call_id };
    }
    if (role === 'assistant') {
      if (content === null && !m.tool_calls?.length)
        throw invalid(`An 'assistant' message needs 'content' or 'tool_calls'.`, `${at}.content`, 'missing_required_parameter');
      return m.tool_calls?.length ? { role, content, tool_calls: m.tool_calls } : { role, content };
    }
    if (content === null) throw invalid(`Missing required parameter: '${at}.content'.`, `${at}.content`, 'missing_required_parameter');
    return { role, content };
  });
}

/** Refuses what Standin cannot honour, naming the member (docs/chat.md lists each). */
function refuseUnsupported(ctx: Ctx, body: CreateChatCompletionBody): void {
  const unsupported = (param: string, why: string) => invalid(`'${param}' ${why}`, param, 'unsupported_parameter');
  if (body.n != null && body.n !== 1) throw invalid(`'n' must be 1: Standin returns one choice per request.`, 'n', 'unsupported_value');
  if (body.store === true) throw unsupported('store', 'is not supported: Standin does not store chat completions; omit it or send false.');
  if (body.logprobs === true) throw unsupported('logprobs', 'is not supported by Standin.');
  if (body.top_logprobs != null && body.top_logprobs > 0) throw unsupported('top_logprobs', 'is not supported by Standin.');
  if (body.audio != null || body.modalities?.includes('audio'))
    throw unsupported(body.audio != null ? 'audio' : 'modalities', 'audio output is not supported by Standin.');
  if (body.prediction != null) throw unsupported('prediction', 'is not supported by Standin.');
  if (body.web_search_options !== undefined) throw unsupported('web_search_options', 'is not supported by Standin.');
  if (body.functions !== undefined) throw unsupported('functions', "is deprecated and not supported; use 'tools'.");
  if (body.function_call !== undefined) throw unsupported('function_call', "is deprecated and not supported; use 'tool_choice'.");
  if (body.stream_options != null && body.stream !== true)
    throw invalid(`The 'stream_options' parameter is only allowed when 'stream' is enabled.`, 'stream_options', 'invalid_value');
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== 'none' && choice !== 'auto' && !body.tools?.length)
    throw invalid(`'tool_choice' is only allowed when 'tools' are specified.`, 'tool_choice', 'invalid_value');
  if (typeof choice === 'object' && !body.tools?.some((t) => t.function.name === choice.function.name))
    throw invalid(`'tool_choice' names the function '${choice.function.name}', which is not in 'tools'.`, 'tool_choice', 'invalid_value');
  const names = new Set<string>();
  body.tools?.forEach((t, i) => {
    if (names.has(t.function.name))
      throw invalid(`Duplicate function name '${t.function.name}'.`, `tools[${i}].function.name`, 'invalid_value');
    names.add(t.function.name);
  });
  if (!ctx.services.models.has(body.model))
    throw invalid(`The model '${body.model}' does not exist or you do not have access to it.`, 'model', 'model_not_found');
}

/** The completion limit a request sets (`max_completion_tokens` wins over the deprecated `max_tokens`). */
export const maxTokensOf = (body: CreateChatCompletionBody) => body.max_completion_tokens ?? body.max_tokens ?? null;

/** Checks a request and turns it into the providers' ChatRequest. */
export function chatRequest(ctx: Ctx, body: CreateChatCompletionBody, signal?: AbortSignal): ChatRequest {
  refuseUnsupported(ctx, body);
  const tools: ChatTool[] | undefined = body.tools?.map((t) => ({ type: 'function', function: { ...t.function } }));
  const format = body.response_format;
  return {
    model: body.model,
    messages: toMessages(body.messages),
    tools: tools?.length ? tools : undefined,
    tool_choice: body.tool_choice,
    parallel_tool_calls: body.parallel_tool_calls,
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    max_tokens: maxTokensOf(body),
    response_format: format?.type === 'json_schema' ? { type: 'json_schema', json_schema: { ...format.json_schema } } : format,
    signal,
  };
}

/** The usage object of a reply. */
function usageObject(u: ChatResult['usage']): CompletionUsage {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

/** Rate-limit usage of a finished completion. */
export const usageOf = (c: ChatCompletionObject): Usage => ({
  inputTokens: c.usage.prompt_tokens,
  outputTokens: c.usage.completion_tokens,
});

/** A provider failure as the HTTP error the platform would answer (a 429 upstream stays a 429). */
export function modelFailure(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ModelError) {
    if (err.code === 'rate_limit_exceeded') return new ApiError('rate_limit_error', err.message, { code: 'rate_limit_exceeded' });
    if (err.code === 'invalid_prompt') return invalid(err.message, 'messages', 'invalid_prompt');
    return new ApiError('server_error', err.message, { code: 'server_error', status: 502 });
  }
  return new ApiError('server_error', 'The model provider failed.', { code: 'server_error' });
}

/** The stop sequences of a request (null: none). */
const stopsOf = (body: CreateChatCompletionBody): string[] =>
  (body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop).filter((s) => s !== '');

interface Header {
  id: string;
  created: number;
  model: string;
  service_tier: string;
  system_fingerprint: null;
}

function header(ctx: Ctx, body: CreateChatCompletionBody): Header {
  const tier = body.service_tier && body.service_tier !== 'auto' ? body.service_tier : 'default';
  return {
    id: `chatcmpl-${randomBytes(15).toString('base64url')}`,
    created: ctx.clock.nowSeconds(),
    model: body.model,
    service_tier: tier,
    system_fingerprint: null,
  };
}

/** Applies `stop` to a finished result: text after the first stop sequence is dropped and usage recounted. */
function stopped(result: ChatResult, content: string | null, cut: boolean): ChatResult {
  if (!cut) return result;
  const completion = countTokens(content ?? '');
  return {
    ...result,
    content,
    tool_calls: [],
    finish_reason: 'stop',
    usage: { ...result.usage, completion_tokens: completion, total_tokens: result.usage.prompt_tokens + completion },
  };
}

function completionObject(h: Header, body: CreateChatCompletionBody, result: ChatResult): ChatCompletionObject {
  return {
    ...h,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: result.content,
          refusal: null,
          annotations: [],
          ...(result.tool_calls.length ? { tool_calls: result.tool_calls } : {}),
        },
        logprobs: null,
        finish_reason: result.finish_reason,
      },
    ],
    usage: usageObject(result.usage),
    ...(body.metadata ? { metadata: body.metadata } : {}),
  };
}

/** A non-streamed completion. */
export async function createCompletion(ctx: Ctx, body: CreateChatCompletionBody): Promise<ChatCompletionObject> {
  const request = chatRequest(ctx, body);
  const h = header(ctx, body);
  let result: ChatResult;
  try {
    result = await ctx.services.models.complete(request);
  } catch (err) {
    throw modelFailure(err);
  }
  const stops = stopsOf(body);
  if (stops.length && result.content !== null) {
    const cutter = new StopCutter(stops);
    const text = cutter.push(result.content) + cutter.end();
    result = stopped(result, text, cutter.hit);
  }
  return completionObject(h, body, result);
}

/**
 * A streamed completion: `send` gets each `chat.completion.chunk` in order (role first, then content or
 * tool call deltas, then the finish reason, then — with `include_usage` — the usage chunk with no
 * choices). Resolves with the whole completion (for the rate limiter's usage).
 */
export async function streamCompletion(
  ctx: Ctx,
  body: CreateChatCompletionBody,
  send: (chunk: ChatCompletionChunk) => void,
  signal?: AbortSignal,
): Promise<ChatCompletionObject> {
  const request = chatRequest(ctx, body, signal);
  const h = header(ctx, body);
  const includeUsage = body.stream_options?.include_usage === true;
  const frame = (choice: ChatCompletionChunk['choices'][number] | null, usage?: CompletionUsage): ChatCompletionChunk => ({
    ...h,
    object: 'chat.completion.chunk',
    choices: choice ? [choice] : [],
    ...(includeUsage ? { usage: usage ?? null } : {}),
  });
  const delta = (d: ChatCompletionChunk['choices'][number]['delta']) => frame({ index: 0, delta: d, logprobs: null, finish_reason: null });
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    send(delta({ role: 'assistant', content: '', refusal: null }));
  };
  const stops = stopsOf(body);
  const cutter = stops.length ? new StopCutter(stops) : null;
  const named = new Set<number>();
  const onChunk = (c: ChatChunk) => {
    start();
    if (c.type === 'text') {
      if (cutter?.hit) return;
      const text = cutter ? cutter.push(c.delta) : c.delta;
      if (text) send(delta({ content: text }));
      return;
    }
    if (cutter?.hit) return;
    const first = !named.has(c.index);
    named.add(c.index);
    send(
      delta({
        tool_calls: [
          first
            ? { index: c.index, id: c.id, type: 'function', function: { name: c.name ?? '', arguments: c.arguments ?? '' } }
            : { index: c.index, function: { arguments: c.arguments ?? '' } },
        ],
      }),
    );
  };
  let result: ChatResult;
  try {
    result = await ctx.services.models.complete(request, onChunk);
  } catch (err) {
    throw modelFailure(err);
  }
  start();
  if (cutter && result.content !== null) {
    const rest = cutter.end();
    if (rest) send(delta({ content: rest }));
    result = stopped(result, cutter.text, cutter.hit);
  }
  send(frame({ index: 0, delta: {}, logprobs: null, finish_reason: result.finish_reason }));
  const whole = completionObject(h, body, result);
  if (includeUsage) send(frame(null, whole.usage));
  return whole;
}

const checkBody = bodyChecker<CreateChatCompletionBody>(CreateChatCompletionBody);

/**
 * One request body run without HTTP (a line of a batch): the status and body `POST /v1/chat/completions`
 * would answer, checked by the same schema and rules. Streaming has no place in a batch.
 */
export async function runChatBody(ctx: Ctx, body: unknown): Promise<{ status: number; body: unknown; usage?: Usage }> {
  try {
    const checked = checkBody(body);
    if (checked.stream)
      throw invalid(`'stream' is not supported in a batch: each line's reply is written whole.`, 'stream', 'unsupported_parameter');
    const c = await createCompletion(ctx, checked);
    return { status: 200, body: c, usage: usageOf(c) };
  } catch (err) {
    const e = toApiError(err);
    return { status: e.status, body: e.toBody() };
  }
}
