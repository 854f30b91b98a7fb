import type { Agent, fetch } from 'undici';
import { undici } from '../core/outbound.js';
import type { UpstreamOptions } from './config.js';
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
  return {
    name: 'upstream',
    async complete(request: ChatRequest, onChunk?: (chunk: ChatChunk) => void): Promise<ChatResult> {
      // `retrieval` and `interpreter` are Standin's own notes: the upstream sees those functions as any other.
      const { signal: callerSignal, max_tokens, retrieval: _retrieval, interpreter: _interpreter, ...rest } = request;
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
        throw failure(err, callerSignal, timeout, opts);
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        let message = text.slice(0, MAX_ERROR_BODY);
        try {
          const parsed = JSON.parse(text) as { error?: { message?: string } | string };
          message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? message);
        } catch {
          /* not JSON: keep the text */
        }
        throw new ModelError(
          codeForStatus(response.status),
          `The model upstream answered ${response.status}: ${message || response.statusText}`,
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
          acc.addWhole(parseJson(await response.text()));
        }
      } catch (err) {
        if (err instanceof ModelError) throw err;
        throw failure(err, callerSignal, timeout, opts);
      }
      return acc.result(request);
    },
  };
}

function failure(err: unknown, caller: AbortSignal | undefined, timeout: AbortSignal, opts: UpstreamOptions): Error {
  if (caller?.aborted) return (caller.reason as Error) ?? new Error('aborted');
  if (timeout.aborted) return new ModelError('server_error', `The model upstream did not answer within ${opts.timeoutMs} ms.`);
  const cause = (err as { cause?: { message?: string } }).cause?.message;
  return new ModelError('server_error', `The model upstream could not be reached: ${cause ?? (err as Error).message}`);
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
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer[nl] === '\r' && buffer[nl + 1] === '\n' ? 2 : 1));
      if (line === '') {
        if (data.length) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
    }
  }
  if (data.length) yield data.join('\n');
}

/** Collects the streamed pieces into a result, passing each piece on as it comes. */
class Accumulator {
  private text = '';
  private sawText = false;
  private calls: ChatToolCall[] = [];
  private finish: ChatResult['finish_reason'] = 'stop';
  private usage: ChatUsage | null = null;

  constructor(private onChunk?: (chunk: ChatChunk) => void) {}

  add(chunk: any) {
    if (chunk?.error)
      throw new ModelError('server_error', `The model upstream failed: ${chunk.error.message ?? JSON.stringify(chunk.error)}`);
    if (chunk?.usage) this.usage = normalizeUsage(chunk.usage);
    const choice = chunk?.choices?.[0];
    if (!choice) return;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.sawText = true;
      this.text += delta.content;
      this.onChunk?.({ type: 'text', delta: delta.content });
    }
    for (const tc of delta.tool_calls ?? []) {
      const index = typeof tc.index === 'number' ? tc.index : this.calls.length;
      const call = (this.calls[index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      const piece: ChatChunk = { type: 'tool_call', index };
      if (tc.id) piece.id = call.id = tc.id;
      if (tc.function?.name) piece.name = call.function.name = call.function.name + tc.function.name;
      if (tc.function?.arguments) {
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
    let usage = this.usage;
    if (!usage) {
      const prompt = countPrompt(request.messages, request.tools);
      const completion =
        countTokens(this.text) + calls.reduce((n, c) => n + countTokens(c.function.name) + countTokens(c.function.arguments), 0);
      usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    }
    const finish = calls.length && this.finish === 'stop' ? 'tool_calls' : this.finish;
    return { content, tool_calls: calls, finish_reason: finish, usage };
  }
}

function normalizeUsage(u: any): ChatUsage {
  const prompt = Number(u.prompt_tokens) || 0;
  const completion = Number(u.completion_tokens) || 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(u.total_tokens) || prompt + completion };
}

function normalizeFinish(reason: string): ChatResult['finish_reason'] {
  if (reason === 'length' || reason === 'tool_calls' || reason === 'content_filter') return reason;
  if (reason === 'function_call') return 'tool_calls';
  return 'stop';
}
