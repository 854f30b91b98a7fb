import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers.js';
import { filler } from '../vector-stores/fixtures.js';
import { startChatServer, type ChatServer } from './chat-server.js';
import { startEnv, TEST_MODELS, until, weatherTool, type Env } from './setup.js';
import { readerOf, watchSnapshots } from './snapshots.js';

const FACT = 'The launch code of the Zephyr probe is 7731-ALPHA.';
const QUESTION = 'What is the launch code of the Zephyr probe?';
const INCLUDE = 'step_details.tool_calls[*].file_search.results[*].content' as const;
const MARKER = '【0:0†source】';

type Message = OpenAI.Beta.Threads.Message;
type Step = OpenAI.Beta.Threads.Runs.RunStep;

const textOf = (m: Message) => (m.content[0] as OpenAI.Beta.Threads.TextContentBlock).text;
const searchOf = (s: Step) => {
  if (s.step_details.type !== 'tool_calls') throw new Error(`not a tool_calls step: ${s.type}`);
  const call = s.step_details.tool_calls[0];
  if (call.type !== 'file_search') throw new Error(`not a file_search call: ${call.type}`);
  return call;
};

/** file_search inside runs, through the openai SDK: retrieval, citations, steps, attachments, streaming, upstream models. */
describe.each(dialects())('file_search in runs (%s)', (dialect) => {
  let env: Env;
  let chat: ChatServer;
  let client: OpenAI;
  let factFile: OpenAI.FileObject;
  let storeId: string;
  let assistantId: string;
  /** An assistant with file_search and no vector store of its own. */
  let bareId: string;

  const upload = async (text: string, name: string) =>
    client.files.create({ file: await toFile(Buffer.from(text), name), purpose: 'assistants' });
  const ready = (id: string) =>
    until(
      () => client.vectorStores.retrieve(id),
      (vs) => vs.status === 'completed',
    );
  const assistantMessage = async (threadId: string, runId: string) => {
    const list = await client.beta.threads.messages.list(threadId, { run_id: runId });
    expect(list.data).toHaveLength(1);
    return list.data[0];
  };

  beforeAll(async () => {
    chat = await startChatServer();
    env = await startEnv(dialect, {
      'up-*': { provider: 'upstream', base_url: chat.url, api_key: 'sk-upstream', timeout: '5s' },
      'slow-*': TEST_MODELS['slow-*'],
      '*': {
        provider: 'builtin',
        rules: [
          ...TEST_MODELS['*'].rules,
          {
            match: 'mixed search',
            tool_calls: [
              { name: 'file_search', arguments: { query: 'Zephyr probe launch code' } },
              { name: 'get_weather', arguments: { city: 'Paris' } },
            ],
          },
        ],
      },
    });
    client = env.client;
    factFile = await upload(`# Zephyr\n\n${filler(6, 2)}\n\n${FACT}\n\n${filler(6, 4)}`, 'zephyr.md');
    const store = await client.vectorStores.create({ name: 'probes', file_ids: [factFile.id] });
    storeId = store.id;
    const batch = await client.vectorStores.fileBatches.uploadAndPoll(
      storeId,
      { files: [await toFile(Buffer.from(`# Garden\n\n${filler(12, 7)}`), 'garden.md')] },
      { pollIntervalMs: 20 },
    );
    expect(batch.status).toBe('completed');
    await ready(storeId);
    assistantId = (
      await client.beta.assistants.create({
        model: 'gpt-4o',
        instructions: 'Answer from the files.',
        tools: [{ type: 'file_search' }, weatherTool],
        tool_resources: { file_search: { vector_store_ids: [storeId] } },
      })
    ).id;
    bareId = (await client.beta.assistants.create({ model: 'gpt-4o', tools: [{ type: 'file_search' }] })).id;
  });
  afterAll(async () => {
    await env?.s.close();
    await chat?.close();
  });

  it('createAndRunPoll answers from the files with a file_citation; the tool_calls step shows the search', async () => {
    const run = await client.beta.threads.createAndRunPoll(
      { assistant_id: assistantId, thread: { messages: [{ role: 'user', content: QUESTION }] } },
      { pollIntervalMs: 20 },
    );
    expect(run.status).toBe('completed');
    expect(run.required_action).toBeNull();
    const text = textOf(await assistantMessage(run.thread_id, run.id));
    expect(text.value).toBe(`${FACT}${MARKER}`);
    const start = text.value.indexOf(MARKER);
    expect(text.annotations).toEqual([
      {
        type: 'file_citation',
        text: MARKER,
        start_index: start,
        end_index: start + MARKER.length,
        file_citation: { file_id: factFile.id },
      },
    ]);

    const steps = await client.beta.threads.runs.steps.list(run.id, { thread_id: run.thread_id, order: 'asc' });
    expect(steps.data.map((s) => [s.type, s.status])).toEqual([
      ['tool_calls', 'completed'],
      ['message_creation', 'completed'],
    ]);
    const call = searchOf(steps.data[0]);
    expect(call.id).toMatch(/^call_/);
    expect(call.file_search.ranking_options).toEqual({ ranker: 'default_2024_08_21', score_threshold: 0 });
    const results = call.file_search.results!;
    expect(results[0]).toEqual({ file_id: factFile.id, file_name: 'zephyr.md', score: expect.any(Number) });
    expect(results.length).toBeGreaterThan(1);
    expect(results.every((r) => r.score > 0 && r.score <= 1 && !('content' in r))).toBe(true);
    expect(results.map((r) => r.score)).toEqual(results.map((r) => r.score).sort((a, b) => b - a));
    // Steps add up to the run's usage.
    const total = steps.data.reduce((n, s) => n + s.usage!.total_tokens, 0);
    expect(run.usage!.total_tokens).toBe(total);

    // Content only with include[], on list and retrieve.
    const withContent = await client.beta.threads.runs.steps.list(run.id, { thread_id: run.thread_id, order: 'asc', include: [INCLUDE] });
    const full = searchOf(withContent.data[0]).file_search.results!;
    expect(full.map((r) => r.file_id)).toEqual(results.map((r) => r.file_id));
    expect(full[0].content).toEqual([{ type: 'text', text: expect.stringContaining(FACT) }]);
    expect(full.every((r) => r.content!.length === 1)).toBe(true);
    const one = await client.beta.threads.runs.steps.retrieve(steps.data[0].id, { thread_id: run.thread_id, run_id: run.id });
    expect(one).toEqual(steps.data[0]);
    const oneFull = await client.beta.threads.runs.steps.retrieve(steps.data[0].id, {
      thread_id: run.thread_id,
      run_id: run.id,
      include: [INCLUDE],
    });
    expect(oneFull).toEqual(withContent.data[0]);
  });

  it('max_num_results, score_threshold and a forced file_search tool_choice apply to the search', async () => {
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'Zephyr probe launch code' }] });
    const run = await client.beta.threads.runs.createAndPoll(
      thread.id,
      {
        assistant_id: assistantId,
        tools: [{ type: 'file_search', file_search: { max_num_results: 1, ranking_options: { score_threshold: 0.05 } } }],
        tool_choice: { type: 'file_search' },
      },
      { pollIntervalMs: 20 },
    );
    expect(run.status).toBe('completed');
    expect(run.tools).toEqual([
      { type: 'file_search', file_search: { max_num_results: 1, ranking_options: { ranker: 'auto', score_threshold: 0.05 } } },
    ]);
    const [step] = (await client.beta.threads.runs.steps.list(run.id, { thread_id: thread.id, order: 'asc' })).data;
    const call = searchOf(step);
    expect(call.file_search.ranking_options).toEqual({ ranker: 'default_2024_08_21', score_threshold: 0.05 });
    expect(call.file_search.results!.map((r) => r.file_id)).toEqual([factFile.id]);
    expect(textOf(await assistantMessage(thread.id, run.id)).value).toBe(`${FACT}${MARKER}`);

    // Nothing reaches a threshold of 1: the answer says so and cites nothing.
    const t2 = await client.beta.threads.create({ messages: [{ role: 'user', content: QUESTION }] });
    const strict = await client.beta.threads.runs.createAndPoll(
      t2.id,
      { assistant_id: assistantId, tools: [{ type: 'file_search', file_search: { ranking_options: { score_threshold: 1 } } }] },
      { pollIntervalMs: 20 },
    );
    expect(strict.status).toBe('completed');
    const [strictStep] = (await client.beta.threads.runs.steps.list(strict.id, { thread_id: t2.id, order: 'asc' })).data;
    expect(searchOf(strictStep).file_search.results).toEqual([]);
    const none = textOf(await assistantMessage(t2.id, strict.id));
    expect(none).toEqual({ value: 'I found nothing about that in the files.', annotations: [] });

    // Without a vector store there is nothing to search: the model is not offered the tool.
    const t3 = await client.beta.threads.create({ messages: [{ role: 'user', content: QUESTION }] });
    const bare = await client.beta.threads.runs.createAndPoll(t3.id, { assistant_id: bareId }, { pollIntervalMs: 20 });
    expect(bare.status).toBe('completed');
    const bareSteps = await client.beta.threads.runs.steps.list(bare.id, { thread_id: t3.id });
    expect(bareSteps.data.map((s) => s.type)).toEqual(['message_creation']);
  });

  it('refuses file_search limits with 400 and the param, on assistants, runs and create-and-run', async () => {
    const thread = await client.beta.threads.create();
    const cases: [OpenAI.Beta.FileSearchTool['file_search'], string][] = [
      [{ max_num_results: 0 }, 'tools[0].file_search.max_num_results'],
      [{ max_num_results: 51 }, 'tools[0].file_search.max_num_results'],
      [{ ranking_options: { score_threshold: 1.5 } }, 'tools[0].file_search.ranking_options.score_threshold'],
    ];
    for (const [settings, param] of cases) {
      const tools = [{ type: 'file_search' as const, file_search: settings }];
      // One request at a time: a refused request made ahead of its await would be an unhandled rejection.
      for (const attempt of [
        () => client.beta.assistants.create({ model: 'gpt-4o', tools }),
        () => client.beta.threads.runs.create(thread.id, { assistant_id: assistantId, tools }),
        () => client.beta.threads.createAndRun({ assistant_id: assistantId, tools }),
      ]) {
        const err = await attempt().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param, type: 'invalid_request_error' });
      }
    }
    expect(await client.beta.threads.runs.list(thread.id)).toMatchObject({ data: [] });
    // The default number of results follows the model.
    const small = await client.beta.assistants.create({ model: 'gpt-3.5-turbo', tools: [{ type: 'file_search' }] });
    expect(small.tools).toEqual([
      { type: 'file_search', file_search: { max_num_results: 5, ranking_options: { ranker: 'auto', score_threshold: 0 } } },
    ]);
  });

  it('unknown vector store and file ids are refused with 404 naming the field', async () => {
    const missingStore = await client.beta.assistants
      .create({ model: 'gpt-4o', tool_resources: { file_search: { vector_store_ids: ['vs_missing'] } } })
      .catch((e: unknown) => e);
    expect(missingStore).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missingStore as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      message: "No vector store found with id 'vs_missing'.",
      param: 'tool_resources.file_search.vector_store_ids[0]',
    });
    const thread = await client.beta.threads.create();
    await expect(
      client.beta.threads.update(thread.id, { tool_resources: { file_search: { vector_store_ids: ['vs_missing'] } } }),
    ).rejects.toMatchObject({ status: 404, error: { param: 'tool_resources.file_search.vector_store_ids[0]' } });
    await expect(
      client.beta.threads.createAndRun({
        assistant_id: assistantId,
        thread: { tool_resources: { file_search: { vector_store_ids: ['vs_missing'] } } },
      }),
    ).rejects.toMatchObject({ status: 404, error: { param: 'thread.tool_resources.file_search.vector_store_ids[0]' } });
    await expect(
      client.beta.threads.messages.create(thread.id, {
        role: 'user',
        content: 'x',
        attachments: [{ file_id: 'file-missing', tools: [{ type: 'file_search' }] }],
      }),
    ).rejects.toMatchObject({ status: 404, error: { message: "No file found with id 'file-missing'.", param: 'attachments[0].file_id' } });
    // Nothing was kept of the refused message, and the thread got no store.
    expect((await client.beta.threads.messages.list(thread.id)).data).toEqual([]);
    expect((await client.beta.threads.retrieve(thread.id)).tool_resources).toEqual({});
    // A store of another project is not found either.
    await expect(
      env.other.beta.assistants.create({ model: 'gpt-4o', tool_resources: { file_search: { vector_store_ids: [storeId] } } }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('message attachments create the thread’s vector store (7-day expiry), which the run searches', async () => {
    const own = await upload(`# Logbook\n\n${filler(4, 9)}\n\nThe keeper of the north light is named Ottoline Brisk.`, 'logbook.txt');
    const thread = await client.beta.threads.create({
      messages: [
        { role: 'user', content: 'Who keeps the north light?', attachments: [{ file_id: own.id, tools: [{ type: 'file_search' }] }] },
      ],
    });
    const vsId = thread.tool_resources!.file_search!.vector_store_ids![0];
    expect(vsId).toMatch(/^vs_/);
    const vs = await client.vectorStores.retrieve(vsId);
    expect(vs.expires_after).toEqual({ anchor: 'last_active_at', days: 7 });
    expect(vs.expires_at).toBe(vs.last_active_at! + 7 * 86_400);
    expect(vs.file_counts.total).toBe(1);
    // The run waits for the thread's store to be ingested, then finds the file (the assistant has no store).
    const run = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: bareId }, { pollIntervalMs: 20 });
    expect(run.status).toBe('completed');
    const text = textOf(await assistantMessage(thread.id, run.id));
    expect(text.value).toBe(`The keeper of the north light is named Ottoline Brisk.${MARKER}`);
    expect(text.annotations).toMatchObject([{ type: 'file_citation', text: MARKER, file_citation: { file_id: own.id } }]);

    // More attachments join the same store; the assistant's store is searched along with it.
    const later = await upload('Ottoline Brisk retired in the spring.', 'retired.txt');
    const msg = await client.beta.threads.messages.create(thread.id, {
      role: 'user',
      content: QUESTION,
      attachments: [
        { file_id: later.id, tools: [{ type: 'file_search' }] },
        { file_id: own.id, tools: [{ type: 'code_interpreter' }, { type: 'file_search' }] },
      ],
    });
    expect(msg.attachments).toHaveLength(2);
    expect((await client.beta.threads.retrieve(thread.id)).tool_resources).toEqual({ file_search: { vector_store_ids: [vsId] } });
    expect((await client.vectorStores.retrieve(vsId)).file_counts.total).toBe(2);
    const second = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistantId }, { pollIntervalMs: 20 });
    const answer = textOf(await assistantMessage(thread.id, second.id));
    expect(answer.value).toBe(`${FACT}${MARKER}`);
    expect(answer.annotations[0]).toMatchObject({ file_citation: { file_id: factFile.id } });

    // additional_messages attach too; a thread without a store gets one.
    const t2 = await client.beta.threads.create();
    const third = await client.beta.threads.runs.createAndPoll(
      t2.id,
      {
        assistant_id: bareId,
        additional_messages: [
          { role: 'user', content: 'Who keeps the north light?', attachments: [{ file_id: own.id, tools: [{ type: 'file_search' }] }] },
        ],
      },
      { pollIntervalMs: 20 },
    );
    expect(third.status).toBe('completed');
    expect((await client.beta.threads.retrieve(t2.id)).tool_resources!.file_search!.vector_store_ids).toHaveLength(1);
    expect(textOf(await assistantMessage(t2.id, third.id)).annotations[0]).toMatchObject({ file_citation: { file_id: own.id } });
  });

  it('the tool_resources helper makes real stores: a thread’s expires after 7 days, an assistant’s does not', async () => {
    const a = await client.beta.assistants.create({
      model: 'gpt-4o',
      tools: [{ type: 'file_search' }],
      tool_resources: { file_search: { vector_stores: [{ file_ids: [factFile.id], metadata: { kind: 'helper' } }] } },
    });
    const aStore = await client.vectorStores.retrieve(a.tool_resources!.file_search!.vector_store_ids![0]);
    expect(aStore).toMatchObject({ metadata: { kind: 'helper' }, expires_at: null, file_counts: { total: 1 } });
    const t = await client.beta.threads.create({ tool_resources: { file_search: { vector_stores: [{ file_ids: [factFile.id] }] } } });
    const tStore = await client.vectorStores.retrieve(t.tool_resources!.file_search!.vector_store_ids![0]);
    expect(tStore.expires_after).toEqual({ anchor: 'last_active_at', days: 7 });
    await ready(aStore.id);
    const run = await client.beta.threads.createAndRunPoll(
      { assistant_id: a.id, thread: { messages: [{ role: 'user', content: QUESTION }] } },
      { pollIntervalMs: 20 },
    );
    expect(textOf(await assistantMessage(run.thread_id, run.id)).annotations[0]).toMatchObject({ file_citation: { file_id: factFile.id } });
  });

  it('deleting a thread deletes the stores Standin made for it, never one the client made or another still names', async () => {
    const gone = async (id: string) => {
      const err = await client.vectorStores.retrieve(id).catch((e: unknown) => e);
      return err instanceof OpenAI.NotFoundError;
    };
    const own = await upload('The lighthouse of Skerry Point was lit in 1861.', 'skerry.txt');
    const attachment = { file_id: own.id, tools: [{ type: 'file_search' as const }] };

    // Attachments: the store made for them goes with the thread, its chunks too (a search of it is a 404).
    const t1 = await client.beta.threads.create({ messages: [{ role: 'user', content: 'When?', attachments: [attachment] }] });
    const made = t1.tool_resources!.file_search!.vector_store_ids![0];
    await ready(made);
    expect(await client.beta.threads.delete(t1.id)).toMatchObject({ id: t1.id, deleted: true });
    expect(await gone(made)).toBe(true);
    const search = await client.vectorStores.search(made, { query: 'Skerry' }).catch((e: unknown) => e);
    expect(search).toBeInstanceOf(OpenAI.NotFoundError);
    // The file itself is the client's: it stays.
    expect((await client.files.retrieve(own.id)).id).toBe(own.id);

    // The tool_resources helper: made for the thread, deleted with it.
    const t2 = await client.beta.threads.create({ tool_resources: { file_search: { vector_stores: [{ file_ids: [own.id] }] } } });
    const helper = t2.tool_resources!.file_search!.vector_store_ids![0];
    await client.beta.threads.delete(t2.id);
    expect(await gone(helper)).toBe(true);

    // A store the client created and gave by id stays, with the thread's attachments added to it.
    const mine = await client.vectorStores.create({ name: 'mine' });
    const t3 = await client.beta.threads.create({
      tool_resources: { file_search: { vector_store_ids: [mine.id] } },
      messages: [{ role: 'user', content: 'When?', attachments: [attachment] }],
    });
    expect(t3.tool_resources!.file_search!.vector_store_ids).toEqual([mine.id]);
    await client.beta.threads.delete(t3.id);
    expect((await client.vectorStores.retrieve(mine.id)).file_counts.total).toBe(1);

    // A store made for one thread that the client has since given to another thread (or an assistant) stays.
    const t4 = await client.beta.threads.create({ messages: [{ role: 'user', content: 'When?', attachments: [attachment] }] });
    const shared = t4.tool_resources!.file_search!.vector_store_ids![0];
    const t5 = await client.beta.threads.create({ tool_resources: { file_search: { vector_store_ids: [shared] } } });
    await client.beta.threads.delete(t4.id);
    expect((await client.vectorStores.retrieve(shared)).id).toBe(shared);
    // Once nothing names it, it is the client's to delete: deleting t5 leaves it (it was not made for t5).
    await client.beta.threads.delete(t5.id);
    expect(await gone(shared)).toBe(false);

    // A store detached from its thread (modify) is still the thread's own, and goes with it.
    const t6 = await client.beta.threads.create({ messages: [{ role: 'user', content: 'When?', attachments: [attachment] }] });
    const detached = t6.tool_resources!.file_search!.vector_store_ids![0];
    await client.beta.threads.update(t6.id, { tool_resources: { file_search: { vector_store_ids: [mine.id] } } });
    await client.beta.threads.delete(t6.id);
    expect(await gone(detached)).toBe(true);
    expect(await gone(mine.id)).toBe(false);
  });

  it('streams the tool_calls step (created, in_progress, a delta with the call then one with its results, completed) before the cited message', async () => {
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: QUESTION }] });
    const stream = client.beta.threads.runs.stream(thread.id, { assistant_id: assistantId });
    const snapshots = watchSnapshots(stream);
    const events: { event: string; data: any }[] = [];
    for await (const e of stream) events.push(e);
    expect(await snapshots.verify(readerOf(client))).toMatchObject({ steps: 2, toolCallDone: 1, textDone: 1 });
    const names = events.map((e) => e.event);
    const toolStep = events.find((e) => e.event === 'thread.run.step.created' && e.data.type === 'tool_calls')!.data;
    const ofTool = events.filter((e) => e.event.startsWith('thread.run.step.') && e.data.id === toolStep.id);
    expect(ofTool.map((e) => e.event)).toEqual([
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.run.step.delta',
      'thread.run.step.delta',
      'thread.run.step.completed',
    ]);
    expect(ofTool[0].data.step_details).toEqual({ type: 'tool_calls', tool_calls: [] });
    expect(ofTool[2].data).toMatchObject({
      object: 'thread.run.step.delta',
      delta: { step_details: { type: 'tool_calls', tool_calls: [{ index: 0, type: 'file_search', file_search: {} }] } },
    });
    // The search's results follow in a delta of their own, without their content unless include[] asked for it.
    const results = ofTool[3].data.delta.step_details.tool_calls[0];
    expect(results).toMatchObject({ index: 0, type: 'file_search', file_search: { ranking_options: { ranker: expect.any(String) } } });
    expect(results.file_search.results[0]).toEqual({ file_id: factFile.id, file_name: 'zephyr.md', score: expect.any(Number) });
    const done = searchOf(ofTool[4].data);
    expect(done.file_search.results![0]).toEqual({ file_id: factFile.id, file_name: 'zephyr.md', score: expect.any(Number) });
    // The message follows the search, and ends with its citation.
    expect(names.indexOf('thread.message.created')).toBeGreaterThan(names.indexOf('thread.run.step.completed'));
    expect(names.at(-1)).toBe('thread.run.completed');
    const [message] = await stream.finalMessages();
    expect(textOf(message).annotations).toMatchObject([{ type: 'file_citation', text: MARKER, file_citation: { file_id: factFile.id } }]);
    const deltaAnnotations = events
      .filter((e) => e.event === 'thread.message.delta')
      .flatMap((e) => e.data.delta.content[0].text.annotations ?? []);
    expect(deltaAnnotations).toMatchObject([{ index: 0, type: 'file_citation', text: MARKER, file_citation: { file_id: factFile.id } }]);

    // With include[] on the run, the streamed step carries the content.
    const t2 = await client.beta.threads.create({ messages: [{ role: 'user', content: QUESTION }] });
    const withContent = client.beta.threads.runs.stream(t2.id, { assistant_id: assistantId, include: [INCLUDE] });
    const withSnapshots = watchSnapshots(withContent);
    const completed: Step[] = [];
    for await (const e of withContent) if (e.event === 'thread.run.step.completed') completed.push(e.data);
    expect(searchOf(completed[0]).file_search.results![0].content![0].text).toContain(FACT);
    expect(await withSnapshots.verify(readerOf(client, [INCLUDE]))).toMatchObject({ toolCallDone: 1 });
  });

  it('a turn with a file search and a function call: the search runs, the function waits for its output', async () => {
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'mixed search please' }] });
    const run = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistantId }, { pollIntervalMs: 20 });
    expect(run.status).toBe('requires_action');
    const calls = run.required_action!.submit_tool_outputs.tool_calls;
    expect(calls.map((c) => c.function.name)).toEqual(['get_weather']);
    const done = await client.beta.threads.runs.submitToolOutputsAndPoll(
      run.id,
      { thread_id: thread.id, tool_outputs: [{ tool_call_id: calls[0].id, output: '21C' }] },
      { pollIntervalMs: 20 },
    );
    expect(done.status).toBe('completed');
    const [step] = (await client.beta.threads.runs.steps.list(run.id, { thread_id: thread.id, order: 'asc' })).data;
    expect(step.status).toBe('completed');
    if (step.step_details.type !== 'tool_calls') throw new Error('expected tool calls');
    expect(step.step_details.tool_calls.map((c) => c.type)).toEqual(['file_search', 'function']);
    expect(step.step_details.tool_calls[1]).toMatchObject({ function: { name: 'get_weather', output: '21C' } });
    const text = textOf(await assistantMessage(thread.id, run.id));
    expect(text.value).toBe(`${FACT}${MARKER}\nget_weather returned: 21C`);
    expect(text.annotations).toMatchObject([{ file_citation: { file_id: factFile.id } }]);
  });

  it('an upstream model is offered file_search as a function; Standin runs its call and feeds the results back', async () => {
    const up = await client.beta.assistants.create({
      model: 'up-1',
      tools: [{ type: 'file_search' }, weatherTool],
      tool_resources: { file_search: { vector_store_ids: [storeId] } },
    });
    const before = chat.requests.length;
    const run = await client.beta.threads.createAndRunPoll(
      { assistant_id: up.id, thread: { messages: [{ role: 'user', content: 'call:file_search Zephyr probe launch code' }] } },
      { pollIntervalMs: 20 },
    );
    expect(run.status).toBe('completed');
    expect(run.usage).toEqual({ prompt_tokens: 22, completion_tokens: 14, total_tokens: 36 });
    const sent = chat.requests.slice(before).map((r) => r.body);
    expect(sent).toHaveLength(2);
    expect(sent[0].tools.map((t: any) => t.function.name)).toEqual(['get_weather', 'file_search']);
    expect(sent[0].tools[1].function.parameters).toMatchObject({ properties: { query: { type: 'string' } }, required: ['query'] });
    expect(sent[0]).not.toHaveProperty('retrieval');
    const [asked, answered] = sent[1].messages.slice(-2);
    expect(asked).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_up_1', type: 'function', function: { name: 'file_search', arguments: '{"query":"Zephyr probe launch code"}' } },
      ],
    });
    expect(answered).toMatchObject({ role: 'tool', tool_call_id: 'call_up_1' });
    expect(answered.content.startsWith(`${MARKER} zephyr.md (score `)).toBe(true);
    expect(answered.content).toContain(FACT);
    const text = textOf(await assistantMessage(run.thread_id, run.id));
    expect(text.value).toBe(`Upstream found it${MARKER}.`);
    expect(text.annotations).toEqual([
      { type: 'file_citation', text: MARKER, start_index: 17, end_index: 17 + MARKER.length, file_citation: { file_id: factFile.id } },
    ]);
    const steps = await client.beta.threads.runs.steps.list(run.id, { thread_id: run.thread_id, order: 'asc' });
    expect(steps.data.map((s) => s.type)).toEqual(['tool_calls', 'message_creation']);
    expect(searchOf(steps.data[0]).id).toBe('call_up_1');
  });

  // Last: it moves the clock of this Standin 8 days on.
  it('a thread store expires 7 days after its last activity; a run searching it then fails with the reason', async () => {
    const own = await upload('The ferry leaves at dawn from pier nine.', 'ferry.txt');
    const thread = await client.beta.threads.create({
      messages: [
        { role: 'user', content: 'When does the ferry leave?', attachments: [{ file_id: own.id, tools: [{ type: 'file_search' }] }] },
      ],
    });
    const vsId = thread.tool_resources!.file_search!.vector_store_ids![0];
    await ready(vsId);
    expect((await env.s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '8d' } })).status).toBe(200);
    expect((await client.vectorStores.retrieve(vsId)).status).toBe('expired');
    const run = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: bareId }, { pollIntervalMs: 20 });
    expect(run.status).toBe('failed');
    expect(run.last_error).toEqual({ code: 'server_error', message: `The vector store ${vsId} has expired; create a new one.` });
    const [step] = (await client.beta.threads.runs.steps.list(run.id, { thread_id: thread.id })).data;
    expect(step).toMatchObject({ type: 'tool_calls', status: 'failed', last_error: { code: 'server_error' } });
  });
});
