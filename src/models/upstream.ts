import type { Agent, fetch } from 'undici';
import { undici } from '../core/outbound.js';
import { redactText } from '../core/redact.js';
import type { UpstreamOptions } from './config.js';
import { MAX_TOOL_CALLS } from './answer.js';
import { codeForStatus, ModelError } from './errors.js';
import { countPrompt, countTokens } from './tokens.js';
import type { ChatChunk, ChatRequest, ChatResult, ChatToolCall, ChatUsage } from './types.js';

/**
 * A provider that forwards to any server speaking the Chat Completions protocol (Ollama, vLLM, a
 * llama.cpp server, a hosted model): `POST {base_url}/chat/completions`, streamed as server-sent events
 * with text and tool-call deltas, usage from the final chunk (`stream_options.include_usage`) or, when
 * the server sends none, from the tokenizer. Every call has a time limit; errors become ModelErrors.
 */
const MAX_ERROR_BODY = 4096;
/** Longest server-sent event (one chunk of a stream) and longest whole answer read from an upstream. */
const MAX_EVENT = 16 * 1024 * 1024;
const MAX_ANSWER = 64 * 1024 * 1024;

/** The dispatcher is shared: keep-alive to the upstream, bounded connect and header waits. */
let shared: Agent | undefined;
const agent = () =>
  (shared ??= new (undici().Agent)({
    connect: { timeout: 10_000 },
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
    keepAliveTimeout: 10_000,
  }));

export function createUpstreamProvider(opts: UpstreamOptions) {
  // The upstream's text may repeat what it was sent (a 401 quoting the bearer): masked by the request log's
  // shapes, and the key and header values sent (with and without their scheme, `Bearer …`) verbatim,
  // before it reaches a caller, a fixture or the log.
  const secrets = [opts.apiKey, ...Object.values(opts.headers).flatMap((v) => [v, /^\S+\s+(\S.*)$/.exec(v)?.[1]])];
  const mask = (text: string) => redactText(text, secrets);
  return {
    name: 'upstream',
    async complete(request: ChatRequest, onChunk?: (chunk: ChatChunk) => void): Promise<ChatResult> {
      // `retrieval`, `interpreter` and `custom` are Standin's own notes: the upstream sees those functions as any other.
      const { signal: callerSignal, max_tokens, retrieval: _retrieval, interpreter: _interpreter, custom: _custom, ...rest } = request;
      const body: Record<string, unknown> = { ...rest, model: opts.model ?? request.model, stream: opts.stream };
      // A message with images or files goes as content parts; its text reading is for the built-in model.
      body.messages = rest.messages.map(({ parts, ...m }) => (parts ? { ...m, content: parts } : m));
      if (opts.stream) body.stream_options = { include_usage: true };
      if (max_tokens != null) body[opts.maxTokensParam] = max_tokens;
      for (const k of ['temperature', 'top_p', 'tool_choice', 'parallel_tool_calls', 'response_format'] as const) {
        if (body[k] == null) delete body[k];
      }
      if (!request.tools?.length) {
        delete body.tools;
        delete body.tool_choice;
        delete body.parallel_tool_calls;
      }
      const timeout = AbortSignal.timeout(opts.timeoutMs);
      const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: opts.stream ? 'text/event-stream' : 'application/json',
        ...opts.headers,
      };
      if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;

      let response: Awaited<ReturnType<typeof fetch>>;
      try {
        response = await undici().fetch(`${opts.baseUrl}/chat/completions`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          signal,
          dispatcher: agent(),
        });
      } catch (err) {
        throw failure(err, callerSignal, timeout, opts, mask);
      }
      if (!response.ok) {
        // Read past the limit and cut once masked, so a key at the cut is not left half shown.
        const text = await readText(response.body as unknown as AsyncIterable<Uint8Array> | null, 2 * MAX_ERROR_BODY).catch(() => '');
        let message = text;
        try {
          const parsed = JSON.parse(text) as { error?: { message?: string } | string };
          const said = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
          if (typeof said === 'string') message = said;
        } catch {
          /* not JSON (or cut at the limit): keep the text */
        }
        throw new ModelError(
          codeForStatus(response.status),
          mask(`The model upstream answered ${response.status}: ${message || response.statusText}`).slice(0, MAX_ERROR_BODY),
          response.status,
        );
      }
      const acc = new Accumulator(onChunk);
      try {
        if (opts.stream) {
          for await (const data of sseData(response.body as unknown as AsyncIterable<Uint8Array>)) {
            if (data === '[DONE]') break;
            acc.add(parseJson(data));
          }
        } else {
          const text = await readText(response.body as unknown as AsyncIterable<Uint8Array> | null, MAX_ANSWER);
          if (text.length >= MAX_ANSWER) throw new ModelError('server_error', `The model upstream's answer is over ${MAX_ANSWER} bytes.`);
          acc.addWhole(parseJson(text));
        }
      } catch (err) {
        if (err instanceof ModelError) throw new ModelError(err.code, mask(err.message), err.status);
        throw failure(err, callerSignal, timeout, opts, mask);
      }
      return acc.result(request);
    },
  };
}

function failure(
  err: unknown,
  caller: AbortSignal | undefined,
  timeout: AbortSignal,
  opts: UpstreamOptions,
  mask: (text: string) => string,
): Error {
  if (caller?.aborted) return (caller.reason as Error) ?? new Error('aborted');
  if (timeout.aborted) return new ModelError('server_error', `The model upstream did not answer within ${opts.timeoutMs} ms.`);
  const cause = (err as { cause?: { message?: string } }).cause?.message;
  return new ModelError('server_error', mask(`The model upstream could not be reached: ${cause ?? (err as Error).message}`));
}

/** The body as text, cut after `max` characters' worth of bytes (the rest is not read). */
async function readText(body: AsyncIterable<Uint8Array> | null, max: number): Promise<string> {
  if (!body) return '';
  const decoder = new TextDecoder();
  let text = '';
  for await (const bytes of body) {
    text += decoder.decode(bytes, { stream: true });
    if (text.length >= max) return text.slice(0, max);
  }
  return text + decoder.decode();
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    throw new ModelError('server_error', 'The model upstream sent a malformed chunk.');
  }
}

/** Yields the `data:` payloads of a server-sent event stream (multi-line data joined with `\n`). */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let size = 0;
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer[nl] === '\r' && buffer[nl + 1] === '\n' ? 2 : 1));
      if (line === '') {
        if (data.length) yield data.join('\n');
        data = [];
        size = 0;
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line[5] === ' ' ? 6 : 5));
        size += line.length;
      }
    }
    if (size + buffer.length > MAX_EVENT) throw new ModelError('server_error', `The model upstream sent an event over ${MAX_EVENT} bytes.`);
  }
  if (data.length) yield data.join('\n');
}

/** Collects the streamed pieces into a result, passing each piece on as it comes. */
class Accumulator {
  private text = '';
  private sawText = false;
  private calls: ChatToolCall[] = [];
  private finish: ChatResult['finish_reason'] = 'stop';
  /** The upstream's usage as sent: checked with the whole answer where it enters Standin (answer.ts). */
  private usage: Record<string, unknown> | null = null;

  constructor(private onChunk?: (chunk: ChatChunk) => void) {}

  add(chunk: any) {
    if (chunk?.error) {
      const said = typeof chunk.error.message === 'string' ? chunk.error.message : JSON.stringify(chunk.error);
      throw new ModelError('server_error', `The model upstream failed: ${said.slice(0, MAX_ERROR_BODY)}`);
    }
    if (chunk?.usage && typeof chunk.usage === 'object') this.usage = chunk.usage;
    const choice = chunk?.choices?.[0];
    if (!choice) return;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.sawText = true;
      this.text += delta.content;
      this.onChunk?.({ type: 'text', delta: delta.content });
    }
    for (const tc of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const index = tc?.index ?? this.calls.length;
      if (!(Number.isInteger(index) && index >= 0 && index < MAX_TOOL_CALLS))
        throw new ModelError(
          'server_error',
          `The model upstream sent a tool call index that is not an integer from 0 to ${MAX_TOOL_CALLS - 1}.`,
        );
      const call = (this.calls[index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      const piece: ChatChunk = { type: 'tool_call', index };
      if (typeof tc?.id === 'string' && tc.id) piece.id = call.id = tc.id;
      if (typeof tc?.function?.name === 'string' && tc.function.name)
        piece.name = call.function.name = call.function.name + tc.function.name;
      if (typeof tc?.function?.arguments === 'string' && tc.function.arguments) {
        call.function.arguments += tc.function.arguments;
        piece.arguments = tc.function.arguments;
      }
      this.onChunk?.(piece);
    }
    if (choice.finish_reason) this.finish = normalizeFinish(choice.finish_reason);
  }

  addWhole(body: any) {
    const choice = body?.choices?.[0];
    if (!choice) throw new ModelError('server_error', 'The model upstream sent no choices.');
    const message = choice.message ?? {};
    this.add({
      choices: [
        {
          delta: {
            content: message.content ?? null,
            tool_calls: (message.tool_calls ?? []).map((c: any, index: number) => ({ ...c, index })),
          },
          finish_reason: choice.finish_reason,
        },
      ],
      usage: body.usage,
    });
  }

  result(request: ChatRequest): ChatResult {
    const calls = this.calls.filter(Boolean).map((c, i) => ({ ...c, id: c.id || `call_${i}` }));
    const content = this.sawText ? this.text : null;
    let usage: ChatUsage;
    if (this.usage) {
      // Absent counts are 0 and an absent total is the sum; anything present is passed on as sent, to be checked.
      const u = this.usage;
      const prompt = (u.prompt_tokens ?? 0) as number;
      const completion = (u.completion_tokens ?? 0) as number;
      usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: (u.total_tokens ?? prompt + completion) as number };
    } else {
      const prompt = countPrompt(request.messages, request.tools);
      const completion =
        countTokens(this.text) + calls.reduce((n, c) => n + countTokens(c.function.name) + countTokens(c.function.arguments), 0);
      usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    }
    const finish = calls.length && this.finish === 'stop' ? 'tool_calls' : this.finish;
    return { content, tool_calls: calls, finish_reason: finish, usage };
  }
}

function normalizeFinish(reason: string): ChatResult['finish_reason'] {
  if (reason === 'length' || reason === 'tool_calls' || reason === 'content_filter') return reason;
  if (reason === 'function_call') return 'tool_calls';
  return 'stop';
}
