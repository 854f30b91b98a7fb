import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { embedBuiltin } from '../../src/vector-stores/embedder.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

/** A tiny `/embeddings` server: vector [1, 2, 3, 4] scaled by the input's length; records requests. */
async function startEmbeddingsServer() {
  const requests: any[] = [];
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      const body = JSON.parse(data);
      requests.push(body);
      const input: string[] = body.input;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          object: 'list',
          data: input.map((t, index) => ({ object: 'embedding', index, embedding: [1, 2, 3, 4].map((x) => x * t.length) })),
          model: body.model,
          usage: { prompt_tokens: 1, total_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const close = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).every((x, i) => Math.abs(x - b[i]) < 1e-6);

/** `POST /v1/embeddings` through the openai SDK on a listening Standin. */
describe.each(dialects())('embeddings (%s)', (dialect) => {
  let s: TestStandin;
  let client: OpenAI;
  let up: Awaited<ReturnType<typeof startEmbeddingsServer>>;
  beforeAll(async () => {
    up = await startEmbeddingsServer();
    s = await startTestStandin({ dialect });
    await applyConfig(s.ctx, s.modules, { vector_stores: { embeddings: { base_url: up.url, model: 'up-embed' } } });
    const url = await s.listen();
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  it('float vectors of the built-in embedder, with token usage', async () => {
    const r = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['hello world', 'goodbye'],
      encoding_format: 'float',
    });
    expect(r.object).toBe('list');
    expect(r.model).toBe('text-embedding-3-small');
    expect(r.data.map((d) => d.index)).toEqual([0, 1]);
    expect(r.data[0].embedding).toHaveLength(256);
    expect(close(r.data[0].embedding, embedBuiltin('hello world'))).toBe(true);
    const { encode } = await import('gpt-tokenizer');
    const tokens = encode('hello world').length + encode('goodbye').length;
    expect(r.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
  });

  it('base64 (the SDK default) decodes to the same floats; explicit base64 is little-endian float32', async () => {
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world' });
    expect(close(decoded.data[0].embedding, embedBuiltin('hello world'))).toBe(true);
    const raw = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world', encoding_format: 'base64' });
    const b64 = raw.data[0].embedding as unknown as string;
    expect(typeof b64).toBe('string');
    const bytes = Buffer.from(b64, 'base64');
    const floats = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(floats).toEqual(Array.from(embedBuiltin('hello world')));
  });

  it('dimensions shortens and renormalizes; above the model size is a 400', async () => {
    const r = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world', dimensions: 64 });
    const v = r.data[0].embedding;
    expect(v).toHaveLength(64);
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    const err = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x', dimensions: 1536 }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('dimensions');
  });

  it('token arrays are the text they encode (o200k)', async () => {
    const { encode } = await import('gpt-tokenizer');
    const tokens = encode('hello world');
    const single = await client.embeddings.create({ model: 'm', input: tokens, encoding_format: 'float' });
    expect(close(single.data[0].embedding, embedBuiltin('hello world'))).toBe(true);
    expect(single.usage.prompt_tokens).toBe(tokens.length);
    const many = await client.embeddings.create({ model: 'm', input: [tokens, encode('goodbye')], encoding_format: 'float' });
    expect(many.data).toHaveLength(2);
    expect(close(many.data[1].embedding, embedBuiltin('goodbye'))).toBe(true);
  });

  it('the model named in vector_stores.embeddings goes to that server', async () => {
    const r = await client.embeddings.create({ model: 'up-embed', input: ['ab', 'abcd'], encoding_format: 'float', dimensions: 2 });
    expect(up.requests.at(-1)).toMatchObject({ model: 'up-embed', input: ['ab', 'abcd'] });
    expect(r.data[1].embedding).toHaveLength(2);
    expect(r.data[1].embedding[0]).toBeCloseTo(1 / Math.sqrt(5), 5);
    const err = await client.embeddings.create({ model: 'up-embed', input: 'ab', dimensions: 5 }).catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.param).toBe('dimensions');
  });

  it('refuses inputs beyond the limits with 400 naming the input', async () => {
    const bad = async (body: object) => {
      const res = await s.req('POST', '/v1/embeddings', { key: 'platform', body: { model: 'text-embedding-3-small', ...body } });
      expect(res.status).toBe(400);
      return res.body.error;
    };
    expect((await bad({ input: '' })).param).toBe('input');
    expect((await bad({ input: ['a', ''] })).param).toBe('input[1]');
    expect((await bad({ input: Array.from({ length: 2049 }, () => 'a') })).param).toBe('input');
    expect((await bad({ input: [Array.from({ length: 8193 }, () => 1)] })).param).toBe('input[0]');
    expect((await bad({ input: 'word '.repeat(9000) })).code).toBe('context_length_exceeded');
    expect((await bad({ input: [[99999999]] })).param).toBe('input[0]');
    expect((await bad({ input: 'x', encoding_format: 'hex' })).param).toBe('encoding_format');
    expect((await bad({ input: 'x', extra: true })).message).toMatch(/extra/);
  });
});
