import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Module } from '../../src/core/module.js';
import { modules } from '../../src/server/modules.js';
import { applyConfig } from '../../src/admin/config-file.js';
import { TEST_MODELS } from '../assistants/setup.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { DEVIATIONS } from './deviations.js';
import { checked, eventMismatch, mismatch, operationOf, pathKey, subset, type Example } from './validator.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OFFICIAL = join(ROOT, '../shared/reference/openai-openapi.yaml');

/** The /v1 routes the app serves, as `METHOD /v1/…` (a module listening to onRoute). */
function routeSpy(routes: string[]): Module {
  return {
    name: 'route-spy',
    routes(app) {
      app.addHook('onRoute', (r: RouteOptions) => {
        for (const m of [r.method].flat()) if (r.url.startsWith('/v1/')) routes.push(`${m} ${r.url}`);
      });
    },
  };
}

describe('the official document subset and the deviations list', () => {
  it('is what scripts/openapi-subset.mjs makes of the official document now (when ../shared is beside the clone)', (ctx) => {
    if (!existsSync(OFFICIAL)) return ctx.skip();
    const out = join(mkdtempSync(join(tmpdir(), 'subset-')), 'subset.json');
    execFileSync(process.execPath, [join(ROOT, 'scripts/openapi-subset.mjs'), OFFICIAL, out]);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(join(ROOT, 'test/conformance/openai-subset.json'), 'utf8'));
  });

  it('lists in docs/conformance.md exactly the deviations the validator reads, with the same reasons', () => {
    const doc = readFileSync(join(ROOT, 'docs/conformance.md'), 'utf8');
    const rows = doc.split('\n').filter((l) => l.startsWith('| `'));
    expect(rows).toHaveLength(DEVIATIONS.length);
    for (const d of DEVIATIONS) {
      const what = d.component ? `\`${d.component}.${d.field}\`` : d.example ? `\`${d.example}\`` : `\`${d.operation} ${d.status}\``;
      const row = rows.find((r) => r.startsWith(`| ${what} |`));
      expect(row, what).toBeDefined();
      expect(row).toContain(d.reason);
    }
  });

  it('turns a reply that differs into a 500 naming the operation and the field', async () => {
    // Standin's own reply with one field made wrong on its way out (its own schema check off, so only this one sees it).
    const liar: Module = {
      name: 'liar',
      routes(app) {
        app.addHook('preSerialization', async (request, _reply, payload: unknown) =>
          request.method === 'GET' && request.url.startsWith('/v1/threads/')
            ? { ...(payload as object), created_at: String((payload as { created_at: number }).created_at) }
            : payload,
        );
      },
    };
    const t = await startTestStandin({ modules: [liar, ...modules], settings: { checkResponses: false } });
    try {
      const thread = await t.req('POST', '/v1/threads', { key: 'platform', body: {} });
      const r = await t.req('GET', `/v1/threads/${thread.body.id}`, { key: 'platform' });
      expect(r.status).toBe(500);
      expect(r.body.error).toMatchObject({
        code: 'official_schema_mismatch',
        message: expect.stringContaining('/created_at must be integer'),
      });
    } finally {
      await t.close();
    }
  });

  it('fails a reply that differs from the document (the check can fail)', () => {
    const good = { id: 'thread_1', object: 'thread', created_at: 1, tool_resources: {}, metadata: {} };
    expect(mismatch('GET /threads/{thread_id}', 200, good)).toBeUndefined();
    expect(mismatch('GET /threads/{thread_id}', 200, { ...good, object: 'threads' })).toMatch(
      /\/object must be equal to one of the allowed values/,
    );
    expect(mismatch('GET /threads/{thread_id}', 200, { ...good, created_at: '1' })).toMatch(/\/created_at must be integer/);
    expect(mismatch('GET /threads/{thread_id}', 200, { ...good, metadata: undefined })).toMatch(/metadata/);
  });

  it('fails a streamed event that differs from the document (the check can fail)', () => {
    const delta = {
      type: 'response.output_text.delta',
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: 'x',
      sequence_number: 3,
    };
    expect(eventMismatch('POST /responses', { ...delta, logprobs: [] })).toBeUndefined();
    expect(eventMismatch('POST /responses', delta)).toMatch(/ResponseTextDeltaEvent: .*logprobs/);
    expect(eventMismatch('GET /responses/{response_id}', { ...delta, logprobs: [], sequence_number: '3' })).toMatch(/sequence_number/);
    expect(eventMismatch('POST /responses', { type: 'response.unheard_of', sequence_number: 1 })).toMatch(/no event of the document has/);
  });
});

describe.each(dialects())('every shared operation, and the request examples of the document (%s)', (dialect) => {
  let s: TestStandin;
  let base: string;
  const routes: string[] = [];
  const call = async (method: string, path: string, body?: unknown, raw?: string) => {
    const res = await fetch(`${base}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${s.keys.platform}`,
        'openai-beta': 'assistants=v2',
        ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await res.text();
    let json: any = text;
    try {
      json = JSON.parse(text);
    } catch {
      /* a stream or a file's bytes */
    }
    return { status: res.status, body: json };
  };
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await call(method, path, body);
    const failure = r.status === 200 ? undefined : r.body?.error;
    expect({ call: `${method} ${path}`, status: r.status, failure }).toEqual({
      call: `${method} ${path}`,
      status: 200,
      failure: undefined,
    });
    return r.body;
  };
  const upload = async (name: string, text: string, purpose: string) => {
    const form = new FormData();
    form.append('purpose', purpose);
    form.append('file', new Blob([text]), name);
    const res = await fetch(`${base}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${s.keys.platform}` }, body: form });
    expect(res.status).toBe(200);
    return (await res.json()) as { id: string };
  };
  const until = async (read: () => Promise<any>, done: (v: any) => boolean) => {
    let v: any;
    for (let i = 0; i < 1500; i++) {
      v = await read();
      if (done(v)) return v;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`not reached: ${JSON.stringify(v).slice(0, 300)}`);
  };

  /** A run waiting for the output of one get_weather call, on a thread of its own. */
  const pendingRun = async (assistantId: string) => {
    const thread = await ok('POST', '/threads', { messages: [{ role: 'user', content: 'what is the weather?' }] });
    const run = await ok('POST', `/threads/${thread.id}/runs`, { assistant_id: assistantId });
    const waiting = await until(
      () => ok('GET', `/threads/${thread.id}/runs/${run.id}`),
      (r) => r.status === 'requires_action',
    );
    return { thread, run, callId: waiting.required_action.submit_tool_outputs.tool_calls[0].id as string };
  };

  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true }, modules: [routeSpy(routes), ...modules] });
    await applyConfig(s.ctx, s.modules, { models: TEST_MODELS });
    base = await s.listen();
  });
  afterAll(() => s?.close());

  it('serves every operation of the subset, and the subset holds every /v1 route the document has', () => {
    const served = new Set(routes.map((r) => operationOf(r.split(' ')[0], r.split(' ')[1])).filter(Boolean));
    expect([...served].sort()).toEqual(Object.keys(subset().operations).sort());
    for (const r of routes) {
      const [method, url] = r.split(' ');
      if (operationOf(method, url)) expect(pathKey(url)).toBe(pathKey(operationOf(method, url)!.split(' ')[1]));
    }
  });

  it('walks every shared operation once; each reply holds to the official document', async () => {
    const file = await upload('notes.md', '# Notes\n\nThe return policy is thirty days.\n', 'assistants');
    const store = await ok('POST', '/vector_stores', { name: 'walk', file_ids: [file.id] });
    await until(
      () => ok('GET', `/vector_stores/${store.id}`),
      (v) => v.status === 'completed',
    );
    const assistant = await ok('POST', '/assistants', {
      model: 'gpt-4o',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    const { thread, run, callId } = await pendingRun(assistant.id);
    const messages = await ok('GET', `/threads/${thread.id}/messages`);
    const steps = await ok('GET', `/threads/${thread.id}/runs/${run.id}/steps`);
    const other = await upload('more.md', 'More notes.', 'assistants');
    const fileBatch = await ok('POST', `/vector_stores/${store.id}/file_batches`, { file_ids: [other.id] });
    const batchInput = await upload(
      'in.jsonl',
      `${JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } })}\n`,
      'batch',
    );
    const batch = await ok('POST', '/batches', {
      input_file_id: batchInput.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    // One to cancel: lines on the slow model keep it running long enough.
    const slowLines = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({
        custom_id: `s${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'slow-model', messages: [{ role: 'user', content: 'hello' }] },
      }),
    );
    const slowInput = await upload('slow.jsonl', `${slowLines.join('\n')}\n`, 'batch');
    const slowBatch = await ok('POST', '/batches', {
      input_file_id: slowInput.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await ok('POST', `/batches/${slowBatch.id}/cancel`);
    const response = await ok('POST', '/responses', { model: 'gpt-4o', input: 'hello', background: false });
    // Streams: every event is held against the document's event schemas (one that differs becomes an error frame).
    const weather = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
    const streams = [
      { model: 'gpt-4o', input: 'hello there, in a few pieces', stream: true },
      { model: 'gpt-5', input: 'What is the weather?', stream: true, reasoning: { summary: 'auto' }, tools: [weather] },
      { model: 'o3', input: 'hi', stream: true, store: false, include: ['reasoning.encrypted_content'], max_output_tokens: 16 },
      { model: 'gpt-4o', input: 'hello', stream: true, background: true },
    ];
    let streamed = '';
    for (const body of streams) {
      const r = await call('POST', '/responses', body);
      expect(r.status).toBe(200);
      expect(r.body).not.toContain('event: error');
      streamed = r.body;
    }
    const resumed = await call('GET', `/responses/${/"id":"(resp_\w+)"/.exec(streamed)![1]}?stream=true&starting_after=1`);
    expect(resumed.body).toMatch(/^event: response.in_progress/);
    expect(resumed.body).not.toContain('event: error');
    await ok('POST', '/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const models = await ok('GET', '/models');
    const conversation = await ok('POST', '/conversations', { items: [{ role: 'user', content: 'hello' }] });
    const conversationItems = await ok('GET', `/conversations/${conversation.id}/items`);

    // A thread with a run waiting takes no new message: one without.
    const spare = await ok('POST', '/threads', {});
    // A container with a copied file, and one uploaded (multipart) beside it.
    const container = await ok('POST', '/containers', {
      name: 'walk',
      file_ids: [file.id],
      expires_after: { anchor: 'last_active_at', minutes: 30 },
      memory_limit: '4g',
    });
    const form = new FormData();
    form.append('file', new Blob(['x,y\n1,2\n']), 'points.csv');
    const uploaded = await fetch(`${base}/v1/containers/${container.id}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keys.platform}` },
      body: form,
    });
    expect(uploaded.status).toBe(200);
    const containerFile = (await uploaded.json()) as { id: string };
    const walk: [string, string, unknown?][] = [
      ['GET', '/assistants'],
      ['GET', `/assistants/${assistant.id}`],
      ['POST', `/assistants/${assistant.id}`, { name: 'walked' }],
      ['GET', '/files'],
      ['GET', `/files/${file.id}`],
      ['GET', `/files/${file.id}/content`],
      ['GET', '/vector_stores'],
      ['GET', `/vector_stores/${store.id}`],
      ['POST', `/vector_stores/${store.id}`, { name: 'renamed' }],
      ['GET', `/vector_stores/${store.id}/files`],
      ['GET', `/vector_stores/${store.id}/files/${file.id}`],
      ['POST', `/vector_stores/${store.id}/files/${file.id}`, { attributes: { k: 'v' } }],
      ['GET', `/vector_stores/${store.id}/files/${file.id}/content`],
      ['POST', `/vector_stores/${store.id}/search`, { query: 'return policy' }],
      ['GET', `/vector_stores/${store.id}/file_batches/${fileBatch.id}`],
      ['GET', `/vector_stores/${store.id}/file_batches/${fileBatch.id}/files`],
      ['POST', `/threads/${spare.id}/messages`, { role: 'user', content: 'one more' }],
      ['POST', `/vector_stores/${store.id}/files`, { file_id: other.id }],
      ['GET', `/threads/${thread.id}`],
      ['POST', `/threads/${thread.id}`, { metadata: { k: 'v' } }],
      ['GET', `/threads/${thread.id}/messages/${messages.data[0].id}`],
      ['POST', `/threads/${thread.id}/messages/${messages.data[0].id}`, { metadata: { k: 'v' } }],
      ['GET', `/threads/${thread.id}/runs`],
      ['POST', `/threads/${thread.id}/runs/${run.id}`, { metadata: { k: 'v' } }],
      ['GET', `/threads/${thread.id}/runs/${run.id}/steps/${steps.data[0].id}`],
      ['POST', `/threads/${thread.id}/runs/${run.id}/submit_tool_outputs`, { tool_outputs: [{ tool_call_id: callId, output: 'sunny' }] }],
      ['POST', '/threads/runs', { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'hi' }] } }],
      ['GET', '/batches'],
      ['GET', `/batches/${batch.id}`],
      ['GET', `/responses/${response.id}`],
      ['GET', `/responses/${response.id}/input_items`],
      ['POST', '/responses/input_tokens', { model: 'gpt-4o', input: 'hello' }],
      ['POST', '/conversations', { metadata: { topic: 'walk' }, items: [{ role: 'user', content: 'hi' }] }],
      ['GET', `/conversations/${conversation.id}`],
      ['POST', `/conversations/${conversation.id}`, { metadata: { topic: 'walked' } }],
      ['POST', `/conversations/${conversation.id}/items`, { items: [{ role: 'user', content: 'more' }] }],
      ['GET', `/conversations/${conversation.id}/items`],
      ['GET', `/conversations/${conversation.id}/items/${conversationItems.data[0].id}`],
      ['POST', '/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }],
      ['POST', '/embeddings', { model: 'text-embedding-3-small', input: 'hi' }],
      ['GET', `/models/${models.data[0].id}`],
      ['GET', '/containers'],
      ['GET', `/containers/${container.id}`],
      ['POST', `/containers/${container.id}/files`, { file_id: other.id }],
      ['GET', `/containers/${container.id}/files`],
      ['GET', `/containers/${container.id}/files/${containerFile.id}`],
      ['GET', `/containers/${container.id}/files/${containerFile.id}/content`],
      ['DELETE', `/containers/${container.id}/files/${containerFile.id}`],
      ['DELETE', `/containers/${container.id}`],
    ];
    for (const [method, path, body] of walk) await ok(method, path, body);
    // The cancels and deletes, last.
    const slow = await ok('POST', `/threads/${thread.id}/runs`, { assistant_id: assistant.id, model: 'slow-model' }).catch(() => null);
    if (slow) await ok('POST', `/threads/${thread.id}/runs/${slow.id}/cancel`);
    const cancelFiles = await ok('POST', `/vector_stores/${store.id}/file_batches`, { file_ids: [other.id] });
    await call('POST', `/vector_stores/${store.id}/file_batches/${cancelFiles.id}/cancel`);
    const background = await ok('POST', '/responses', { model: 'slow-model', input: 'hello', background: true });
    await call('POST', `/responses/${background.id}/cancel`);
    await call('DELETE', `/responses/${response.id}`);
    await call('DELETE', `/responses/${response.id}`);
    await call('POST', '/responses/compact', { model: 'gpt-4o', input: 'hello' });
    await ok('DELETE', `/conversations/${conversation.id}/items/${conversationItems.data[0].id}`);
    await ok('DELETE', `/conversations/${conversation.id}`);
    await ok('DELETE', `/threads/${thread.id}/messages/${messages.data[0].id}`);
    await ok('DELETE', `/vector_stores/${store.id}/files/${file.id}`);
    await ok('DELETE', `/vector_stores/${store.id}`);
    await ok('DELETE', `/threads/${thread.id}`);
    await ok('DELETE', `/assistants/${assistant.id}`);
    await ok('DELETE', `/files/${file.id}`);
    await call('DELETE', `/models/${models.data[0].id}`);

    const walked = new Set([...checked].map((k) => k.split(' ').slice(0, 2).join(' ')));
    const missing = Object.keys(subset().operations).filter((op) => !walked.has(op));
    expect(missing).toEqual([]);
  }, 120_000);

  it("accepts the document's request examples, but for the refusals deviations.ts states", async () => {
    const assistant = await ok('POST', '/assistants', {
      model: 'gpt-4o',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    // The examples change `assistant` (its tools among them): runs that must wait for outputs use their own.
    const runner = await ok('POST', '/assistants', {
      model: 'gpt-4o',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    const files = [await upload('a.md', 'Alpha notes.', 'assistants'), await upload('b.md', 'Beta notes.', 'assistants')];
    const batchInput = await upload(
      'in.jsonl',
      `${JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } })}\n`,
      'batch',
    );
    const refused: string[] = [];
    for (const [operation, { examples }] of Object.entries(subset().operations)) {
      const [method, template] = operation.split(' ');
      for (const example of examples.filter((e: Example) => e.body !== undefined)) {
        const name = `${operation} (${example.title})`;
        // Fresh objects for every example: a run that waits for outputs where one is needed.
        const needsRun = template.includes('{run_id}') || example.body!.includes('call_001');
        const { thread, run, callId } = needsRun
          ? await pendingRun(runner.id)
          : { thread: await ok('POST', '/threads', { messages: [{ role: 'user', content: 'hi' }] }), run: { id: '' }, callId: '' };
        const needsStore = template.includes('{vector_store_id}') || example.body!.includes('vs_');
        const store = needsStore ? await ok('POST', '/vector_stores', { file_ids: [files[0].id] }) : { id: '' };
        const ids: Record<string, string> = {
          thread_id: thread.id,
          run_id: run.id,
          assistant_id: assistant.id,
          message_id: (await ok('GET', `/threads/${thread.id}/messages`)).data[0].id,
          vector_store_id: store.id,
          file_id: files[0].id,
          conversation_id: template.includes('{conversation_id}') ? (await ok('POST', '/conversations', {})).id : '',
        };
        const path = template.replace(/\{(\w+)\}/g, (_, p: string) => ids[p] ?? p);
        // The document's placeholder ids, made real.
        const body = example
          .body!.replace(/asst_abc123|asst_123/g, assistant.id)
          .replace(/call_001/g, callId)
          .replace(/file-abc123/g, operation === 'POST /batches' ? batchInput.id : files[0].id)
          .replace(/file-abc456/g, files[1].id)
          .replace(/vs_\w+/g, store.id);
        const r = await call(method, path, undefined, body);
        if (r.status >= 400) refused.push(`${name} → ${r.status} ${r.body?.error?.code ?? ''} ${r.body?.error?.message ?? ''}`);
      }
    }
    const stated = DEVIATIONS.filter((d) => d.example).map((d) => d.example);
    expect(
      refused.map((r) => r.split(' → ')[0]),
      refused.join('\n'),
    ).toEqual(stated);
  }, 180_000);
});
