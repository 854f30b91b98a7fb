import type { FastifyReply, FastifyRequest } from 'fastify';
import { modelLimited } from '../ratelimit/service.js';
import { needs } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { ChatCompletionObject, CreateChatCompletionBody, type ChatCompletionChunk } from './schemas.js';
import { createCompletion, maxTokensOf, modelFailure, streamCompletion, usageOf } from './service.js';

/**
 * `POST /v1/chat/completions`. Admitted by the rate limiter like responses (same headers, 429 and 503);
 * `stream: true` answers with server-sent events (the response schema is the non-stream reply).
 */
export function chatRoutes(app: App, ctx: Ctx): void {
  app.post(
    '/v1/chat/completions',
    {
      config: { ...needs('responses', 'write'), ...modelLimited },
      schema: { tags: ['chat'], body: CreateChatCompletionBody, response: { 200: ChatCompletionObject } },
    },
    async (req, reply) => {
      const p = ctx.auth.principalOf(req);
      const body = req.body;
      const admission = await ctx.services.ratelimit?.admit(req, p, {
        model: body.model,
        maxTokens: maxTokensOf(body),
        inputText: [JSON.stringify(body.messages), body.tools ? JSON.stringify(body.tools) : ''],
      });
      try {
        if (body.stream) {
          const done = await stream(req, reply, admission?.headers ?? {}, (send, signal) => streamCompletion(ctx, body, send, signal));
          await admission?.release(done ? usageOf(done) : { failed: true });
          return reply;
        }
        const c = await createCompletion(ctx, body);
        await admission?.release(usageOf(c));
        return c;
      } catch (err) {
        await admission?.release({ failed: true });
        throw err;
      }
    },
  );
}

type Run = (send: (chunk: ChatCompletionChunk) => void, signal: AbortSignal) => Promise<ChatCompletionObject>;

/**
 * Runs a streamed completion. The event stream opens with the first chunk, so a refusal or a provider
 * failure before it is an ordinary HTTP error; a failure after it is a `data: {"error": …}` frame (which
 * the openai SDK raises). Resolves with the completion, or null when it failed mid-stream.
 */
async function stream(req: FastifyRequest, reply: FastifyReply, headers: Record<string, string>, run: Run) {
  const raw = reply.raw;
  const ac = new AbortController();
  let open = false;
  const send = (chunk: ChatCompletionChunk) => {
    if (!open) {
      open = true;
      reply.hijack();
      raw.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-request-id': req.id,
        'openai-processing-ms': String(Math.max(0, Math.round(reply.elapsedTime))),
      });
      raw.on('close', () => ac.abort());
    }
    if (!ac.signal.aborted) raw.write(`data: ${JSON.stringify(chunk)}\n\n`);
  };
  try {
    const done = await run(send, ac.signal);
    if (!ac.signal.aborted) raw.end('data: [DONE]\n\n');
    return done;
  } catch (err) {
    if (!open) throw err;
    const e = modelFailure(err);
    req.log.warn({ err }, 'chat completion stream failed');
    if (!ac.signal.aborted) raw.end(`data: ${JSON.stringify(e.toBody())}\n\n`);
    return null;
  }
}
