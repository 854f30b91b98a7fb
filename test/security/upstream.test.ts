import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import type { Outbound } from '../../src/core/outbound.js';
import { defaultConfig, mergeConfig } from '../../src/ratelimit/catalog.js';
import { createMemoryBackend } from '../../src/ratelimit/memory.js';
import { createRateLimiter } from '../../src/ratelimit/service.js';
import { fixedClock } from '../../src/ratelimit/testing.js';
import { upstreamEmbedder } from '../../src/vector-stores/embedder.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

/**
 * Upstream answers are outside input (issue 34): an upstream's error text that repeats the key it was sent
 * reaches no caller, fixture or log line unmasked, a 401 is not recorded, and usage that is not a count is
 * refused where the answer enters Standin, so it reaches no counter.
 */

/** Keys of both shapes: one the request log's shapes know (`sk-…`), one only known verbatim. */
const SHAPED_KEY = 'sk-live-upstream-0123456789abcdef';
const PLAIN_KEY = 'plainupstreamkey-0123456789';

/**
 * A hostile Chat Completions server on loopback. By the last user message: `echo:<status>` answers that
 * status with a message repeating the bearer it got (in the error's message, and in a plain text body for
 * `echo-text:`); `usage:<json>` answers with that usage; `toolid` answers a tool call whose id is an object.
 */
async function startHostileUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    const body = JSON.parse(raw);
    const bearer = String(req.headers.authorization ?? '');
    if (req.url?.endsWith('/embeddings')) {
      // `echo` answers 401 repeating the bearer; anything else a vector holding 1e400 (Infinity once parsed).
      if (body.input[0] === 'echo') res.writeHead(401).end(`Incorrect API key provided: ${bearer}`);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"index":0,"embedding":[1e400,0]}]}');
      return;
    }
    const said: string = body.messages.at(-1).content;
    const echo = /^echo(-text)?:(\d{3})/.exec(said);
    if (echo) {
      const text = `Incorrect API key provided: ${bearer.replace(/^Bearer /, '')}. You sent header '${bearer}'.`;
      res
        .writeHead(Number(echo[2]), { 'content-type': echo[1] ? 'text/plain' : 'application/json' })
        .end(echo[1] ? text : JSON.stringify({ error: { message: text, type: 'invalid_request_error' } }));
      return;
    }
    const usage = /^usage:(.*)$/.exec(said);
    const message: Record<string, unknown> = { role: 'assistant', content: 'fine' };
    if (said === 'toolid') message.tool_calls = [{ id: { evil: true }, type: 'function', function: { name: 'f', arguments: '{}' } }];
    // Written as text, so `1e400` reaches the parser as the upstream sent it (Infinity once parsed).
    const usageText = usage ? usage[1] : '{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}';
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(`{"choices":[{"index":0,"message":${JSON.stringify(message)},"finish_reason":"stop"}],"usage":${usageText}}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe.each(dialects())('upstream answers are untrusted input (%s)', (dialect) => {
  let s: TestStandin;
  let upstream: Awaited<ReturnType<typeof startHostileUpstream>>;
  let root: string;
  let dir: string;
  const logged: string[] = [];
  const ask = (model: string, content: string) =>
    s.req('POST', '/v1/chat/completions', { key: 'platform', body: { model, messages: [{ role: 'user', content }] } });

  beforeAll(async () => {
    upstream = await startHostileUpstream();
    root = mkdtempSync(join(tmpdir(), 'standin-sec-upstream-'));
    dir = join(root, 'fx');
    s = await startTestStandin({ dialect, settings: { fixturesRoot: root } });
    for (const level of ['error', 'warn', 'info'] as const)
      s.ctx.log[level] = (obj: unknown, msg?: string) =>
        void logged.push(
          `${msg ?? ''} ${JSON.stringify(obj, (_k, v) => (v instanceof Error ? { message: v.message, stack: v.stack } : v))}`,
        );
    await applyConfig(s.ctx, s.modules, {
      models: {
        'shaped-*': { provider: 'record', base_url: upstream.url, api_key: SHAPED_KEY, stream: false, fixtures: dir },
        'plain-*': { provider: 'upstream', base_url: upstream.url, api_key: PLAIN_KEY, stream: false },
        'hdr-*': { provider: 'upstream', base_url: upstream.url, headers: { authorization: `Bearer ${PLAIN_KEY}` }, stream: false },
      },
    });
  });
  afterAll(async () => {
    await s?.close();
    await upstream?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const fixtures = () => {
    try {
      return readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8'));
    } catch {
      return [];
    }
  };

  it('a 401 repeating the key reaches neither the caller nor the log, and is not recorded', async () => {
    for (const [model, key] of [
      ['shaped-1', SHAPED_KEY],
      ['plain-1', PLAIN_KEY],
      ['hdr-1', PLAIN_KEY],
    ]) {
      for (const prompt of ['echo:401', 'echo-text:401']) {
        const res = await ask(model, prompt);
        expect(res.status, `${model} ${prompt}`).toBe(502);
        expect(res.body.error.message).toContain('The model upstream answered 401: Incorrect API key provided: [redacted]');
        expect(JSON.stringify(res.body)).not.toContain(key);
      }
    }
    expect(logged.join('\n')).toContain('The model upstream answered 401');
    expect(logged.join('\n')).not.toContain(SHAPED_KEY);
    expect(logged.join('\n')).not.toContain(PLAIN_KEY);
    expect(fixtures()).toEqual([]);
  });

  it('an upstream error that is recorded (a 500) is written masked', async () => {
    expect((await ask('shaped-1', 'echo:500')).status).toBe(502);
    const written = fixtures();
    expect(written).toHaveLength(1);
    expect(written[0]).toContain('Incorrect API key provided: [redacted]');
    expect(written[0]).not.toContain(SHAPED_KEY);
  });

  it('usage that is not a count is refused where the answer enters Standin, and never reaches a counter', async () => {
    for (const usage of [
      '{"prompt_tokens":"x","completion_tokens":1,"total_tokens":1}',
      '{"prompt_tokens":-4,"completion_tokens":1,"total_tokens":1}',
      '{"prompt_tokens":1e400,"completion_tokens":1,"total_tokens":1}',
      '{"prompt_tokens":2.5,"completion_tokens":1,"total_tokens":1}',
    ]) {
      const res = await ask('plain-2', `usage:${usage}`);
      expect(res.status, usage).toBe(502);
      expect(res.body.error.message).toMatch(
        /^The model provider 'upstream' gave an answer Standin cannot use: result\.usage\.prompt_tokens: must be a non-negative integer/,
      );
    }
    for (let i = 0; i < 3; i++) {
      const ok = await ask('plain-2', 'a sound answer');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-ratelimit-remaining-tokens']).toMatch(/^\d+$/);
      expect(ok.body.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
    }
  });

  it('a tool call id that is not a string is not passed on', async () => {
    const res = await ask('plain-3', 'toolid');
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.tool_calls[0]).toMatchObject({ id: 'call_0', function: { name: 'f' } });
  });

  it("the embeddings server's errors are masked, and its vectors must be finite", async () => {
    const embedder = upstreamEmbedder({ fetch } as unknown as Outbound, { base_url: upstream.url, model: 'e', api_key: PLAIN_KEY });
    const echoed = await embedder.embed(['echo']).catch((e: Error) => e);
    expect((echoed as Error).message).toBe('the embeddings server answered 401: Incorrect API key provided: Bearer [redacted]');
    const infinite = await embedder.embed(['anything']).catch((e: Error) => e);
    expect((infinite as Error).message).toContain('vectors that are not finite numbers');
  });

  it('the rate limiter counts usage that is not a count as 0 (and logs it), whoever reports it', async () => {
    const clock = fixedClock();
    const warned: string[] = [];
    const config = mergeConfig(defaultConfig(), {
      replace_defaults: true,
      ramp: { enabled: false },
      models: { m: { tiers: { tier_1: { tpm: 1000 } } } },
    });
    const limiter = createRateLimiter({
      backend: createMemoryBackend(clock),
      clock,
      config,
      log: { warn: (_o, msg) => void warned.push(msg ?? '') },
    });
    const payer = { organizationId: 'org_a', projectId: 'proj_a' };
    for (const bad of [Number.NaN, Infinity, -3, 'x' as unknown as number]) {
      const a = await limiter.admit(null, payer, { model: 'm', maxTokens: 10 });
      await a.release({ inputTokens: bad, outputTokens: 1 });
    }
    const after = await limiter.admit(null, payer, { model: 'm', maxTokens: 10 });
    // Four releases of 0 + 1 tokens, and this admission's 10.
    expect(after.headers['x-ratelimit-remaining-tokens']).toBe('986');
    expect(warned).toHaveLength(4);
    expect(warned[0]).toBe('usage inputTokens is not a non-negative count; counted as 0');
  });
});
