import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers.js';
import { filler } from '../vector-stores/fixtures.js';
import { startEnv, TEST_MODELS, until, weatherTool, type Env } from './setup.js';
import { readerOf, watchSnapshots } from './snapshots.js';

const FACT = 'The launch code of the Zephyr probe is 7731-ALPHA.';
/** Kernels load Pyodide (seconds, far more on a busy machine). */
const SLOW = 180_000;
/** A pure-Python PNG writer (no matplotlib in the embedded interpreter). */
const PNG_WRITER = `
import zlib, struct
def png(w, h, rgb):
    raw = b''.join(b'\\x00' + bytes(rgb) * w for _ in range(h))
    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    head = struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)
    return b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', head) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')
`;
const python = (...blocks: string[]) => `Please run this:\n${blocks.map((b) => `\`\`\`python\n${b}\n\`\`\``).join('\n')}`;

type Stream = ReturnType<OpenAI['beta']['threads']['runs']['stream']>;

/**
 * Issue 24: for every kind of streamed object, the SDK's accumulated snapshots equal what the API
 * returns afterwards (snapshots.ts), with small pieces (`chunk_chars`) so every value arrives in many deltas.
 */
describe.each(dialects())('streamed snapshots equal the stored objects (%s)', (dialect) => {
  let env: Env;
  let client: OpenAI;
  let plain: string;
  let searcher: string;
  let coder: string;

  /** Consumes a stream and verifies its snapshots; returns the counts and the final run. */
  const streamed = async (stream: Stream, include: OpenAI.Beta.Threads.Runs.RunStepInclude[] = []) => {
    const snapshots = watchSnapshots(stream);
    await stream.done();
    const counts = await snapshots.verify(readerOf(client, include));
    return { counts, run: await stream.finalRun(), messages: await stream.finalMessages() };
  };

  beforeAll(async () => {
    env = await startEnv(dialect, {
      'slow-*': TEST_MODELS['slow-*'],
      '*': {
        provider: 'builtin',
        chunk_chars: 3,
        rules: [
          ...TEST_MODELS['*'].rules,
          {
            match: 'narrate',
            reply: 'Let me look that up for you.',
            tool_calls: [{ name: 'get_weather', arguments: { city: 'Rome' } }],
            after_tool_outputs: 'In Rome it is {{output}}.',
          },
          {
            match: 'mixed search',
            tool_calls: [
              { name: 'file_search', arguments: { query: 'Zephyr probe launch code' } },
              { name: 'get_weather', arguments: { city: 'Paris' } },
            ],
            after_tool_outputs: 'Paris: {{output}}.',
          },
          {
            match: 'twin search',
            tool_calls: [
              { name: 'file_search', arguments: { query: 'Zephyr probe launch code' } },
              { name: 'file_search', arguments: { query: 'garden' } },
            ],
          },
        ],
      },
    });
    client = env.client;
    const fact = await client.files.create({
      file: await toFile(Buffer.from(`# Zephyr\n\n${filler(6, 2)}\n\n${FACT}\n\n${filler(6, 4)}`), 'zephyr.md'),
      purpose: 'assistants',
    });
    const garden = await client.files.create({
      file: await toFile(Buffer.from(`# Garden\n\n${filler(8, 7)}`), 'garden.md'),
      purpose: 'assistants',
    });
    const store = await client.vectorStores.create({ name: 'probes', file_ids: [fact.id, garden.id] });
    await until(
      () => client.vectorStores.retrieve(store.id),
      (vs) => vs.status === 'completed',
    );
    plain = (await client.beta.assistants.create({ model: 'gpt-4o', tools: [weatherTool] })).id;
    searcher = (
      await client.beta.assistants.create({
        model: 'gpt-4o',
        tools: [{ type: 'file_search' }, weatherTool],
        tool_resources: { file_search: { vector_store_ids: [store.id] } },
      })
    ).id;
    coder = (await client.beta.assistants.create({ model: 'gpt-4o', tools: [{ type: 'code_interpreter' }] })).id;
  }, SLOW);
  afterAll(() => env?.s.close());

  const thread = async (content: OpenAI.Beta.ThreadCreateParams.Message['content']) =>
    (await client.beta.threads.create({ messages: [{ role: 'user', content }] })).id;

  it('plain text', async () => {
    const t = await thread('stream this reply to me in many small pieces');
    const { counts, run, messages } = await streamed(client.beta.threads.runs.stream(t, { assistant_id: plain }));
    expect(run.status).toBe('completed');
    expect(counts).toMatchObject({ messages: 1, steps: 1, textDone: 1, messageDone: 1, runStepDone: 1 });
    expect(messages[0].content).toHaveLength(1);
  });

  it('text with file_search citations, with and without the results content', async () => {
    for (const include of [[], ['step_details.tool_calls[*].file_search.results[*].content' as const]]) {
      const t = await thread('What is the launch code of the Zephyr probe?');
      const { counts, run, messages } = await streamed(client.beta.threads.runs.stream(t, { assistant_id: searcher, include }), include);
      expect(run.status).toBe('completed');
      expect(counts).toMatchObject({ steps: 2, toolCallDone: 1, textDone: 1 });
      const text = messages[0].content[0];
      if (text.type !== 'text') throw new Error('expected text');
      expect(text.text.annotations).toHaveLength(1);
    }
  });

  it('two file searches in one step: each call is done with its results', async () => {
    const t = await thread('twin search please');
    const stream = client.beta.threads.runs.stream(t, { assistant_id: searcher });
    const done: OpenAI.Beta.Threads.Runs.ToolCall[] = [];
    stream.on('toolCallDone', (c) => done.push(structuredClone(c)));
    const { counts } = await streamed(stream);
    expect(counts.toolCallDone).toBe(2);
    for (const c of done) expect(c.type === 'file_search' && c.file_search.results?.length).toBeGreaterThan(0);
  });

  it('a function call: requires_action, then submitToolOutputsStream; text before the call is its own message', async () => {
    const t = await thread('narrate the forecast for Rome');
    const first = await streamed(client.beta.threads.runs.stream(t, { assistant_id: plain }));
    expect(first.run.status).toBe('requires_action');
    expect(first.counts).toMatchObject({ messages: 1, steps: 2, toolCallDone: 1, messageDone: 1 });
    const call = first.run.required_action!.submit_tool_outputs.tool_calls[0];
    const second = await streamed(
      client.beta.threads.runs.submitToolOutputsStream(first.run.id, {
        thread_id: t,
        tool_outputs: [{ tool_call_id: call.id, output: 'sunny' }],
      }),
    );
    expect(second.run.status).toBe('completed');
    expect(second.counts).toMatchObject({ messages: 1, textDone: 1 });
    expect(second.messages[0].content[0]).toMatchObject({ text: { value: 'In Rome it is sunny.' } });
  });

  it('a file search and a function call in one step, then the answer', async () => {
    const t = await thread('mixed search please');
    const first = await streamed(client.beta.threads.runs.stream(t, { assistant_id: searcher }));
    expect(first.run.status).toBe('requires_action');
    expect(first.counts.toolCallDone).toBe(2);
    const call = first.run.required_action!.submit_tool_outputs.tool_calls[0];
    const second = await streamed(
      client.beta.threads.runs.submitToolOutputsStream(first.run.id, {
        thread_id: t,
        tool_outputs: [{ tool_call_id: call.id, output: '21C' }],
      }),
    );
    expect(second.run.status).toBe('completed');
  });

  it('an incomplete message: a content filter, and the completion limit of an incomplete run', async () => {
    const filtered = await streamed(client.beta.threads.runs.stream(await thread('say something filtered'), { assistant_id: plain }));
    expect(filtered.counts).toMatchObject({ messages: 1, messageDone: 1 });
    const cut = await streamed(
      client.beta.threads.runs.stream(await thread('tell me a long story'), { assistant_id: plain, max_completion_tokens: 256 }),
    );
    expect(cut.run.status).toBe('incomplete');
    expect(cut.counts).toMatchObject({ messages: 1, messageDone: 1, textDone: 1 });
  });

  it('image_url content given by the user', async () => {
    const t = await thread([
      { type: 'text', text: 'what is in this picture' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
    ]);
    const { counts, run } = await streamed(client.beta.threads.runs.stream(t, { assistant_id: plain }));
    expect(run.status).toBe('completed');
    expect(counts.textDone).toBe(1);
    const [user] = (await client.beta.threads.messages.list(t, { order: 'asc' })).data;
    expect(user.content[1]).toEqual({ type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } });
  });

  it(
    'code_interpreter: input, logs and image outputs, then a message with the image_file and file_path annotations',
    async () => {
      const t = await thread(
        python(
          `${PNG_WRITER}\nopen('/mnt/data/red.png', 'wb').write(png(3, 2, (255, 0, 0)))\nprint('drawn')`,
          "open('/mnt/data/blue.png', 'wb').write(png(2, 2, (0, 0, 255)))\nprint('again')",
        ),
      );
      const { counts, run, messages } = await streamed(client.beta.threads.runs.stream(t, { assistant_id: coder }));
      expect(run.status).toBe('completed');
      expect(counts).toMatchObject({ steps: 2, toolCallDone: 2, imageFileDone: 2, textDone: 1 });
      expect(messages[0].content.map((c) => c.type)).toEqual(['image_file', 'image_file', 'text']);
    },
    SLOW,
  );
});
