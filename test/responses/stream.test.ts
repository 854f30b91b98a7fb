import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openReasoning } from '../../src/responses/reasoning.js';
import { dialects } from '../helpers.js';
import { startEnv, TEST_MODELS, until, type Env } from '../assistants/setup.js';

// A client's first call loads its modules and the routes' validators: slow on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

/**
 * Issue 35: every member of CreateResponse, streaming as the document's events, background streams picked
 * up again, cancel and a client going away, and reasoning models on the built-in model.
 */
const MODELS = { ...TEST_MODELS, 'slow-*': { provider: 'builtin', delay: '60ms', chunk_chars: 4 } };
const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: true,
};

/** The wire object of what an SDK returns, without the members its helpers add (`output_text`, `output_parsed`, `parsed`, `parsed_arguments`). */
export const wire = (v: unknown) =>
  JSON.parse(JSON.stringify(v), (k, value) =>
    ['output_text', 'output_parsed', 'parsed', 'parsed_arguments'].includes(k) ? undefined : value,
  );

/** The events of a raw SSE body. */
function parseSse(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((f) => f.trim())
    .map((f) => {
      const event = /^event: (.*)$/m.exec(f)?.[1] ?? '';
      const data = /^data: (.*)$/m.exec(f)?.[1] ?? '';
      return { event, data: JSON.parse(data) };
    });
}

describe.each(dialects())('responses: members, streams, reasoning (%s)', (dialect) => {
  let env: Env;
  const post = (body: object) =>
    fetch(`${env.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.s.keys.platform}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  beforeAll(async () => {
    env = await startEnv(dialect, MODELS);
  });
  afterAll(() => env?.s.close());

  it('accepts every member of CreateResponse and echoes them as Response does', async () => {
    const r = await post({
      model: 'gpt-4.1',
      input: 'hello there',
      include: [],
      store: true,
      stream: false,
      stream_options: null,
      background: false,
      truncation: 'auto',
      parallel_tool_calls: false,
      max_tool_calls: 3,
      max_output_tokens: 500,
      text: { format: { type: 'text' }, verbosity: 'low' },
      tools: [weather],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'get_weather' }] },
      prompt_cache_key: 'k1',
      prompt_cache_retention: '24h',
      safety_identifier: 'user-1',
      service_tier: 'flex',
      top_logprobs: 2,
      temperature: 0.5,
      top_p: 0.9,
      user: 'u',
      metadata: { a: 'b' },
      prompt: null,
      reasoning: null,
      moderation: null,
      context_management: null,
    });
    const body = await r.json();
    expect(r.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      status: 'completed',
      max_tool_calls: 3,
      max_output_tokens: 500,
      parallel_tool_calls: false,
      text: { format: { type: 'text' }, verbosity: 'low' },
      tool_choice: { type: 'allowed_tools', mode: 'auto' },
      prompt_cache_key: 'k1',
      prompt_cache_retention: '24h',
      safety_identifier: 'user-1',
      service_tier: 'flex',
      top_logprobs: 2,
      truncation: 'auto',
      user: 'u',
      metadata: { a: 'b' },
      reasoning: { effort: null, summary: null },
    });
  });

  it('refuses what the document lacks, hosted tools by name, and rules the platform enforces', async () => {
    const cases: [object, number, RegExp][] = [
      [{ model: 'gpt-4.1', input: 'x', frobnicate: 1 }, 400, /Unrecognized request argument supplied: 'frobnicate'/],
      [{ model: 'gpt-4.1', input: 'x', include: ['nope'] }, 400, /include\[0\]/],
      [
        { model: 'gpt-4.1', input: 'x', tools: [{ type: 'web_search_preview' }] },
        400,
        /'tools\[0\]\.type' 'web_search_preview' is not supported on Standin's \/v1\/responses; see docs\/responses\.md/,
      ],
      [{ model: 'gpt-4.1', input: 'x', tools: [{ type: 'frobnicator' }] }, 400, /Invalid value for 'tools\[0\]\.type': "frobnicator"/],
      [{ model: 'gpt-4.1', input: 'x', tools: [{ type: 'function', name: 'f', extra: 1 }] }, 400, /extra/],
      [{ model: 'gpt-4.1', input: 'x', tool_choice: { type: 'image_generation' } }, 400, /'tool_choice\.type' 'image_generation'/],
      [{ model: 'gpt-4.1', input: 'x', tools: [weather], tool_choice: { type: 'function', name: 'nope' } }, 400, /name 'nope' not found/],
      [{ model: 'gpt-4.1', input: 'x', reasoning: { effort: 'high' } }, 400, /'reasoning.effort' is not supported with this model/],
      [{ model: 'gpt-4.1', input: 'x', prompt: { id: 'pmpt_1' } }, 404, /pmpt_1/],
      [{ model: 'gpt-4.1', input: 'x', max_output_tokens: 5 }, 400, /max_output_tokens/],
    ];
    for (const [body, status, message] of cases) {
      const r = await post(body);
      const json = await r.json();
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(json.error.message).toMatch(message);
    }
  });

  it('honours allowed_tools (the model sees only those) and max_tool_calls', async () => {
    const time = { ...weather, name: 'get_time', description: 'time' };
    const body = { model: 'gpt-4.1', input: 'both tools please', tools: [weather, time] };
    const all = await (await post(body)).json();
    expect(all.output.map((o: any) => o.name)).toEqual(['get_weather', 'get_time']);
    const capped = await (await post({ ...body, max_tool_calls: 1 })).json();
    expect(capped.output.map((o: any) => o.name)).toEqual(['get_weather']);
    const allowed = await (
      await post({ ...body, tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'get_time' }] } })
    ).json();
    expect(allowed.output.map((o: any) => o.name)).toEqual(['get_time']);
  });

  it('streams the document events in order, and finalResponse() equals the response retrieved afterwards', async () => {
    const stream = env.client.responses.stream({
      model: 'gpt-4.1',
      input: 'hello stream, answered in several pieces',
      instructions: 'be brief',
    });
    const seen: any[] = [];
    stream.on('event', (e: any) => seen.push(e));
    const final = await stream.finalResponse();
    expect(seen.map((e) => e.sequence_number)).toEqual(seen.map((_, i) => i));
    const types = seen.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.filter((t) => t === 'response.output_text.delta').length).toBeGreaterThan(1);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(final.output_text).toBe('You said: hello stream, answered in several pieces');
    const stored = await env.client.responses.retrieve(final.id);
    expect(wire(stored)).toEqual(wire(final));
    // The request log has the streamed request, as any other.
    const logged = await env.s.req('GET', '/admin/v1/requests?path=/v1/responses', { key: 'admin' });
    expect(logged.body.data).toContainEqual(expect.objectContaining({ method: 'POST', status: 200, model: 'gpt-4.1' }));
  });

  it('streams function calls with their arguments, and a store:false response is not kept', async () => {
    const stream = env.client.responses.stream({ model: 'gpt-4.1', input: 'weather?', tools: [weather], store: false });
    const types: string[] = [];
    stream.on('event', (e: any) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(final.output).toMatchObject([
      { type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
    ]);
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types).toContain('response.function_call_arguments.done');
    await expect(env.client.responses.retrieve(final.id)).rejects.toMatchObject({ status: 404 });
  });

  it('streams a background response and picks the stream up again after a sequence number', async () => {
    const first = await post({ model: 'gpt-4.1', input: 'background hello', background: true, stream: true });
    expect(first.headers.get('content-type')).toMatch(/text\/event-stream/);
    // Admitted by the rate limiter as a plain create is, with its headers.
    expect(first.headers.get('x-ratelimit-remaining-requests')).not.toBeNull();
    const events = parseSse(await first.text());
    expect(events[0]).toMatchObject({ event: 'response.created', data: { response: { status: 'queued' } } });
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)!.event).toBe('response.completed');
    const id = events[0].data.response.id;
    const again = [];
    for await (const e of await env.client.responses.retrieve(id, { stream: true, starting_after: 3 })) again.push(e);
    expect(again.map((e: any) => e.sequence_number)).toEqual(events.slice(4).map((e) => e.data.sequence_number));
    expect(again.at(-1)).toEqual(events.at(-1)!.data);
    const stored = await env.client.responses.retrieve(id);
    expect(stored).toMatchObject({ status: 'completed', output: events.at(-1)!.data.response.output });
    // A response created without stream has no stream to pick up.
    const plain = await env.client.responses.create({ model: 'gpt-4.1', input: 'x', background: true });
    await expect(env.client.responses.retrieve(plain.id, { stream: true })).rejects.toMatchObject({ status: 400 });
  });

  it('ends a background stream on a cancel, and a client that goes away stops a foreground stream', async () => {
    const stream = await env.client.responses.create({
      model: 'slow-model',
      input: 'a slow one to cancel '.repeat(3),
      background: true,
      stream: true,
    });
    const seen: any[] = [];
    let id = '';
    for await (const e of stream as any) {
      seen.push(e);
      if (e.type === 'response.created') id = e.response.id;
      if (e.type === 'response.output_text.delta') await env.client.responses.cancel(id);
    }
    expect(seen.some((e) => e.type === 'response.completed')).toBe(false);
    expect((await env.client.responses.retrieve(id)).status).toBe('cancelled');

    const ac = new AbortController();
    const r = await fetch(`${env.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.s.keys.platform}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow-model', input: 'left behind '.repeat(10), stream: true }),
      signal: ac.signal,
    });
    const reader = r.body!.getReader();
    const { value } = await reader.read();
    const created = parseSse(new TextDecoder().decode(value))[0].data.response.id;
    ac.abort();
    // Stored when it ends, as any foreground response: the model call stopped, the response cancelled.
    const gone = await until(
      () => env.client.responses.retrieve(created).catch(() => null),
      (x) => x !== null,
    );
    expect(gone!.status).toBe('cancelled');
  });

  it('keeps its new doors shut: another project, out-of-range sequence numbers, forged or oversized encrypted_content', async () => {
    const events = parseSse(await (await post({ model: 'gpt-4.1', input: 'mine', background: true, stream: true })).text());
    const id = events[0].data.response.id;
    await expect(env.other.responses.retrieve(id, { stream: true })).rejects.toMatchObject({ status: 404 });
    for (const after of ['-2', '1e12', 'x'])
      await expect(env.client.responses.retrieve(id, { stream: true, starting_after: after as any })).rejects.toMatchObject({
        status: 400,
      });
    // A starting point past the end gives nothing but ends: the response is over.
    const none = [];
    for await (const e of await env.client.responses.retrieve(id, { stream: true, starting_after: 10_000 })) none.push(e);
    expect(none).toEqual([]);
    const big = `stenc1.${'A'.repeat(70_000)}`;
    for (const token of [big, 'stenc1.', 'not-a-token', `stenc1.${Buffer.from('x'.repeat(40)).toString('base64url')}`])
      await expect(openReasoning(env.s.ctx, 'proj_demo', token, 'input[1].encrypted_content')).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining("'input[1].encrypted_content'"),
      });
    // Deleting the response drops its stream.
    await env.client.responses.delete(id);
    await expect(env.client.responses.retrieve(id, { stream: true })).rejects.toMatchObject({ status: 404 });
  });

  it('drops a finished background stream after its keep time (retention rule response_events)', async () => {
    const events = parseSse(await (await post({ model: 'gpt-4.1', input: 'kept a day', background: true, stream: true })).text());
    const id = events[0].data.response.id;
    const count = async () =>
      Number(
        (
          await env.s.ctx.store.db
            .selectFrom('response_events')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('response_id', '=', id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count()).toBe(events.length);
    await env.s.req('POST', '/admin/v1/retention/sweep', { key: 'admin' });
    expect(await count()).toBe(events.length);
    expect((await env.s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '25h' } })).status).toBe(200);
    const sweep = await env.s.req('POST', '/admin/v1/retention/sweep', { key: 'admin' });
    expect(sweep.status).toBe(200);
    expect(await count()).toBe(0);
    expect((await env.client.responses.retrieve(id)).status).toBe('completed');
  });

  it('reasons on reasoning models: a reasoning item, its summary when asked, reasoning_tokens, encrypted_content', async () => {
    const plain = await env.client.responses.create({ model: 'gpt-5', input: 'think about it' });
    expect(plain.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    expect(plain.output[0]).toMatchObject({ type: 'reasoning', summary: [] });
    expect(plain.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(plain.reasoning).toEqual({ effort: 'medium', summary: null });
    const again = await env.client.responses.create({ model: 'gpt-5', input: 'think about it' });
    expect(again.usage).toEqual(plain.usage);
    const none = await env.client.responses.create({ model: 'gpt-5', input: 'think about it', reasoning: { effort: 'none' } });
    expect(none.output.map((o) => o.type)).toEqual(['message']);

    const stream = env.client.responses.stream({
      model: 'o4-mini',
      input: 'think out loud',
      reasoning: { effort: 'high', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    const types: string[] = [];
    stream.on('event', (e: any) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(types).toEqual(
      expect.arrayContaining([
        'response.reasoning_summary_part.added',
        'response.reasoning_summary_text.delta',
        'response.reasoning_summary_text.done',
        'response.reasoning_summary_part.done',
      ]),
    );
    const item = final.output[0] as any;
    expect(item.summary[0].text).toContain('think out loud');
    expect(item.encrypted_content).toMatch(/^stenc1\./);
    const opened = await openReasoning(env.s.ctx, 'proj_demo', item.encrypted_content, 'input[0].encrypted_content');
    expect(opened).toMatchObject({ id: item.id, summary: [item.summary[0].text] });
    const tampered = item.encrypted_content.slice(0, -2) + (item.encrypted_content.endsWith('A') ? 'BB' : 'AA');
    await expect(openReasoning(env.s.ctx, 'proj_demo', tampered, 'p')).rejects.toMatchObject({ status: 400 });
    await expect(openReasoning(env.s.ctx, 'proj_other', item.encrypted_content, 'p')).rejects.toMatchObject({ status: 400 });

    // The stateless client's next turn: the item passed back as it came is read; one altered is refused.
    const next = await env.client.responses.create({
      model: 'o4-mini',
      input: [{ role: 'user', content: 'think out loud' }, item, { role: 'user', content: 'and now?' }] as any,
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    expect(next.status).toBe('completed');
    const forged = env.client.responses.create({
      model: 'o4-mini',
      input: [
        { ...item, encrypted_content: tampered },
        { role: 'user', content: 'and now?' },
      ] as any,
      store: false,
    });
    await expect(forged).rejects.toMatchObject({ status: 400, code: 'invalid_encrypted_content', param: 'input[0].encrypted_content' });
  });
});
