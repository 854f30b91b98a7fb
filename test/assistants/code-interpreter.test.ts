import { inflateSync } from 'node:zlib';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { dialects } from '../helpers.js';
import { startChatServer, type ChatServer } from './chat-server.js';
import { startEnv, TEST_MODELS, type Env } from './setup.js';
import { readerOf, watchSnapshots } from './snapshots.js';

type Step = OpenAI.Beta.Threads.Runs.RunStep;
type CodeCall = OpenAI.Beta.Threads.Runs.CodeInterpreterToolCall;
type Message = OpenAI.Beta.Threads.Message;

/** Set before Standin starts: the sandbox must not see it, whichever way the code looks. */
const SECRET = 's3cr3t-marker-of-the-host-environment';
process.env.STANDIN_TEST_CI_SECRET = SECRET;

const python = (code: string) => `Please run this:\n\`\`\`python\n${code}${code.endsWith('\n') ? '' : '\n'}\`\`\``;
/** Kernels load Pyodide (seconds, far more on a busy machine): tests allow for a cold one. */
const SLOW = 180_000;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A pure-Python PNG writer (zlib + struct; no matplotlib in the embedded interpreter). */
const PNG_WRITER = `
import zlib, struct
def png(w, h, rgb):
    raw = b''.join(b'\\x00' + bytes(rgb) * w for _ in range(h))
    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    head = struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)
    return b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', head) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')
`;

const codeCalls = (steps: Step[]): CodeCall[] =>
  steps.flatMap((s) =>
    s.step_details.type === 'tool_calls' ? s.step_details.tool_calls.filter((c) => c.type === 'code_interpreter') : [],
  );
const logsOf = (call: CodeCall) => call.code_interpreter.outputs.flatMap((o) => (o.type === 'logs' ? [o.logs] : [])).join('');
const imagesOf = (call: CodeCall) => call.code_interpreter.outputs.flatMap((o) => (o.type === 'image' ? [o.image.file_id] : []));
const textOf = (m: Message) => {
  const block = m.content.find((b) => b.type === 'text');
  if (block?.type !== 'text') throw new Error('no text block');
  return block.text;
};

/** code_interpreter inside runs, through the openai SDK, running real Python (the embedded executor). */
describe.each(dialects())('code_interpreter in runs (%s)', (dialect) => {
  let env: Env;
  let chat: ChatServer;
  let client: OpenAI;
  let assistantId: string;
  /** The thread most tests run on, one after the other: one Python session, loaded once. */
  let shared: string;

  const content = async (fileId: string) => Buffer.from(await (await client.files.content(fileId)).arrayBuffer());
  /** Runs a message on a new thread; returns the run, its code calls and the assistant's reply. */
  const ask = async (text: string, thread: Partial<OpenAI.Beta.ThreadCreateAndRunParams.Thread> = {}, assistant = assistantId) => {
    const run = await client.beta.threads.createAndRunPoll(
      { assistant_id: assistant, thread: { messages: [{ role: 'user', content: text }], ...thread } },
      { pollIntervalMs: 20 },
    );
    const steps = (await client.beta.threads.runs.steps.list(run.id, { thread_id: run.thread_id, order: 'asc' })).data;
    const messages = (await client.beta.threads.messages.list(run.thread_id, { run_id: run.id })).data;
    return { run, steps, calls: codeCalls(steps), reply: messages[0] };
  };
  /** Runs a message on the shared thread (as an additional message of the run). */
  const askShared = async (
    text: string,
    opts: {
      attachments?: OpenAI.Beta.Threads.Message.Attachment[];
      assistant?: string;
      tool_choice?: OpenAI.Beta.AssistantToolChoiceOption;
    } = {},
  ) => {
    const run = await client.beta.threads.runs.createAndPoll(
      shared,
      {
        assistant_id: opts.assistant ?? assistantId,
        additional_messages: [{ role: 'user', content: text, attachments: opts.attachments ?? null }],
        ...(opts.tool_choice ? { tool_choice: opts.tool_choice } : {}),
      },
      { pollIntervalMs: 20 },
    );
    const steps = (await client.beta.threads.runs.steps.list(run.id, { thread_id: shared, order: 'asc' })).data;
    const messages = (await client.beta.threads.messages.list(shared, { run_id: run.id })).data;
    return { run, steps, calls: codeCalls(steps), reply: messages[0] };
  };

  beforeAll(async () => {
    chat = await startChatServer();
    env = await startEnv(dialect, {
      'up-*': { provider: 'upstream', base_url: chat.url, api_key: 'sk-upstream', timeout: '10s' },
      ...TEST_MODELS,
    });
    // A short time limit, so the infinite loop below is stopped quickly.
    await applyConfig(env.s.ctx, env.s.modules, { code_interpreter: { executor: 'pyodide', timeout_ms: 10_000 } });
    client = env.client;
    assistantId = (await client.beta.assistants.create({ model: 'gpt-4o', tools: [{ type: 'code_interpreter' }] })).id;
    shared = (await client.beta.threads.create()).id;
    // Load the shared thread's kernel before the tests start their clocks.
    await env.s.ctx.services.codeInterpreter.execute({ session: shared, code: 'print(1)' });
  }, 300_000);
  afterAll(async () => {
    await env?.s.close();
    await chat?.close();
  });

  it(
    'runs a fenced python block and answers with what it printed',
    async () => {
      const n = 1234;
      let expected = 0;
      for (let i = 0; i < n; i++) expected += i * i * 7;
      const code = `print(sum(i * i * 7 for i in range(${n})))\n`;
      const { run, steps, calls, reply } = await askShared(python(code));
      expect(run.status).toBe('completed');
      expect(steps.map((s) => s.type)).toEqual(['tool_calls', 'message_creation']);
      expect(steps[0].status).toBe('completed');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toEqual({
        id: expect.stringMatching(/^call_/),
        type: 'code_interpreter',
        code_interpreter: { input: code, outputs: [{ type: 'logs', logs: `${expected}\n` }] },
      });
      expect(textOf(reply).value).toContain(String(expected));
    },
    SLOW,
  );

  it(
    'keeps the session of a thread between runs',
    async () => {
      const first = await askShared(python('secret_number = 41'));
      expect(first.run.status).toBe('completed');
      await client.beta.threads.messages.create(shared, { role: 'user', content: python('print(secret_number + 1)') });
      const run = await client.beta.threads.runs.createAndPoll(shared, { assistant_id: assistantId }, { pollIntervalMs: 20 });
      const steps = (await client.beta.threads.runs.steps.list(run.id, { thread_id: shared })).data;
      expect(logsOf(codeCalls(steps)[0])).toBe('42\n');
    },
    SLOW,
  );

  it(
    'reads a file given to it, writes a CSV and a PNG: files of purpose assistants_output, image output, links annotated',
    async () => {
      const input = await client.files.create({
        file: await toFile(Buffer.from('name,qty\napple,3\npear,4\nplum,5\n'), 'stock.csv'),
        purpose: 'assistants',
      });
      const code = [
        PNG_WRITER,
        'import csv',
        `rows = list(csv.DictReader(open('/mnt/data/${input.id}')))`,
        "total = sum(int(r['qty']) for r in rows)",
        "with open('/mnt/data/totals.csv', 'w') as f:",
        "    f.write(f'items,total\\n{len(rows)},{total}\\n')",
        "open('/mnt/data/red.png', 'wb').write(png(3, 2, (255, 0, 0)))",
        'print(total)',
        '',
      ].join('\n');
      const { run, calls, reply } = await askShared(python(code), {
        attachments: [{ file_id: input.id, tools: [{ type: 'code_interpreter' }] }],
      });
      expect(run.status).toBe('completed');
      expect(logsOf(calls[0])).toBe('12\n');
      const [imageId] = imagesOf(calls[0]);
      expect(imageId).toMatch(/^file-/);

      // The PNG: a real image of 3×2 red pixels.
      const png = await content(imageId);
      expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([3, 2]);
      const idatLength = png.readUInt32BE(33);
      expect(png.subarray(37, 41).toString()).toBe('IDAT');
      const raw = inflateSync(png.subarray(41, 41 + idatLength));
      expect(raw).toEqual(Buffer.concat(Array.from({ length: 2 }, () => Buffer.from([0, 255, 0, 0, 255, 0, 0, 255, 0, 0]))));
      const imageFile = await client.files.retrieve(imageId);
      expect(imageFile).toMatchObject({ purpose: 'assistants_output', filename: '/mnt/data/red.png', bytes: png.length });

      // The reply shows the image and links both files with file_path annotations.
      expect(reply.content[0]).toEqual({ type: 'image_file', image_file: { file_id: imageId, detail: 'auto' } });
      const text = textOf(reply);
      const paths = text.annotations.filter((a) => a.type === 'file_path');
      expect(paths.map((a) => a.text).sort()).toEqual(['sandbox:/mnt/data/red.png', 'sandbox:/mnt/data/totals.csv']);
      for (const a of paths) expect(text.value.slice(a.start_index, a.end_index)).toBe(a.text);
      const csv = paths.find((a) => a.text.endsWith('totals.csv'));
      if (csv?.type !== 'file_path') throw new Error('no csv link');
      expect((await content(csv.file_path.file_id)).toString()).toBe('items,total\n3,12\n');
      expect(await client.files.retrieve(csv.file_path.file_id)).toMatchObject({
        purpose: 'assistants_output',
        filename: '/mnt/data/totals.csv',
      });
      const listed = await client.files.list({ purpose: 'assistants_output' });
      expect(listed.data.map((f) => f.id)).toEqual(expect.arrayContaining([imageId, csv.file_path.file_id]));
    },
    SLOW,
  );

  it(
    "finds the files of the thread's and the assistant's tool_resources under /mnt/data",
    async () => {
      const upload = async (text: string) =>
        client.files.create({ file: await toFile(Buffer.from(text), 'note.txt'), purpose: 'assistants' });
      const [mine, theirs] = [await upload('from the thread'), await upload('from the assistant')];
      const assistant = await client.beta.assistants.create({
        model: 'gpt-4o',
        tools: [{ type: 'code_interpreter' }],
        tool_resources: { code_interpreter: { file_ids: [theirs.id] } },
      });
      const code = `print(open('/mnt/data/${mine.id}').read().upper(), '/', open('/mnt/data/${theirs.id}').read())`;
      const { calls } = await ask(python(code), { tool_resources: { code_interpreter: { file_ids: [mine.id] } } }, assistant.id);
      expect(logsOf(calls[0])).toBe('FROM THE THREAD / from the assistant\n');
    },
    SLOW,
  );

  it(
    'reports an exception as logs of a completed run',
    async () => {
      const { run, steps, calls, reply } = await askShared(python('def f(x):\n    return 10 / x\nf(0)\n'));
      expect(run.status).toBe('completed');
      expect(steps[0].status).toBe('completed');
      expect(logsOf(calls[0])).toMatch(/Traceback[\s\S]*ZeroDivisionError/);
      expect(textOf(reply).value).toContain('ZeroDivisionError');
    },
    SLOW,
  );

  it(
    'stops an infinite loop at the time limit and reports it in the logs; the run completes',
    async () => {
      const { run, calls } = await askShared(python('while True:\n    pass\n'));
      expect(run.status).toBe('completed');
      expect(logsOf(calls[0])).toMatch(/time|limit|stopped/i);
      // The thread's next code runs (in a new session).
      const next = await askShared(python('print("alive")'));
      expect(logsOf(next.calls[0])).toBe('alive\n');
    },
    SLOW,
  );

  it(
    'cannot read host files, the environment or the network',
    async () => {
      const port = new URL(env.url).port;
      // Each attempt is its own fenced block, so its own call with its own time limit (one turn, several calls).
      const attempt = (name: string, body: string) =>
        python(
          `def attempt():\n${body.replace(/^/gm, '    ')}\ntry:\n    print('${name}', 'REACHED', repr(attempt())[:200])\n` +
            `except BaseException as e:\n    print('${name}', 'blocked', type(e).__name__)\n`,
        );
      const attempts: [string, string][] = [
        ['passwd', "return open('/etc/passwd').read()"],
        ['proc', "return open('/proc/self/environ').read()"],
        ['env', "import os\nreturn os.environ['STANDIN_TEST_CI_SECRET']"],
        ['js', 'import js\nreturn js.process.env.STANDIN_TEST_CI_SECRET'],
        ['http', `import urllib.request\nreturn urllib.request.urlopen('http://127.0.0.1:${port}/healthz').read()`],
        ['socket', `import socket\nreturn socket.create_connection(('127.0.0.1', ${port}))`],
        ['pyfetch', `from pyodide.http import pyfetch\nreturn pyfetch('http://127.0.0.1:${port}/healthz')`],
      ];
      const { run, steps, calls } = await askShared(attempts.map(([name, body]) => attempt(name, body)).join('\n'));
      expect(run.status).toBe('completed');
      expect(steps[0].status).toBe('completed');
      expect(calls).toHaveLength(attempts.length);
      calls.forEach((call, i) => expect(logsOf(call)).toMatch(new RegExp(`^${attempts[i][0]} blocked`)));
      const logs = calls.map(logsOf).join('');
      expect(logs).not.toContain('REACHED');
      expect(logs).not.toContain(SECRET);
    },
    SLOW,
  );

  it(
    'streams the code as step deltas (toolCallDelta with code_interpreter.input), then its outputs',
    async () => {
      const code = 'total = 0\nfor i in range(10):\n    total += i * 3\nprint("total is", total)\n';
      const stream = client.beta.threads.runs.stream(shared, {
        assistant_id: assistantId,
        additional_messages: [{ role: 'user', content: python(code) }],
      });
      const snapshots = watchSnapshots(stream);
      const inputs: string[] = [];
      const outputs: unknown[] = [];
      const events: string[] = [];
      let done: OpenAI.Beta.Threads.Runs.ToolCall | undefined;
      stream.on('event', (e) => events.push(e.event));
      stream.on('toolCallDelta', (delta) => {
        if (delta.type !== 'code_interpreter') return;
        if (delta.code_interpreter?.input) inputs.push(delta.code_interpreter.input);
        if (delta.code_interpreter?.outputs) outputs.push(...delta.code_interpreter.outputs);
      });
      stream.on('toolCallDone', (call) => (done = call));
      const run = await stream.finalRun();
      expect(run.status).toBe('completed');
      expect(await snapshots.verify(readerOf(client))).toMatchObject({ toolCallDone: 1, textDone: 1 });
      expect(inputs.length).toBeGreaterThan(1);
      expect(inputs.join('')).toBe(code);
      expect(outputs).toEqual([{ index: 0, type: 'logs', logs: 'total is 135\n' }]);
      expect(done).toMatchObject({
        type: 'code_interpreter',
        code_interpreter: { input: code, outputs: [{ type: 'logs', logs: 'total is 135\n' }] },
      });
      const first = events.indexOf('thread.run.step.created');
      expect(events.slice(first, first + 3)).toEqual(['thread.run.step.created', 'thread.run.step.in_progress', 'thread.run.step.delta']);
      expect(events).toContain('thread.run.step.completed');
      expect(events.at(-1)).toBe('thread.run.completed');
      expect((await stream.finalMessages())[0].content[0]).toMatchObject({ type: 'text' });
    },
    SLOW,
  );

  it(
    'forces the tool with tool_choice code_interpreter: the message is the code',
    async () => {
      const { run, calls } = await askShared('print(2 ** 20)', { tool_choice: { type: 'code_interpreter' } });
      expect(run.status).toBe('completed');
      expect(logsOf(calls[0])).toBe(`${2 ** 20}\n`);
    },
    SLOW,
  );

  it(
    'offers the tool to an upstream model as a function and executes the code it writes',
    async () => {
      const upstream = await client.beta.assistants.create({ model: 'up-1', tools: [{ type: 'code_interpreter' }] });
      chat.requests.length = 0;
      const { run, calls, reply } = await askShared('call:code_interpreter print(sum(range(101)))', { assistant: upstream.id });
      expect(run.status).toBe('completed');
      expect(calls[0].code_interpreter).toEqual({ input: 'print(sum(range(101)))', outputs: [{ type: 'logs', logs: '5050\n' }] });
      expect(textOf(reply).value).toBe('Tool said: 5050');
      const offered = chat.requests[0].body.tools.map((t: { function: { name: string } }) => t.function.name);
      expect(offered).toEqual(['code_interpreter']);
      // The second request carries the call and what the code printed.
      expect(chat.requests[1].body.messages.at(-1)).toMatchObject({ role: 'tool', content: '5050' });
    },
    SLOW,
  );

  describe('at most 20 code_interpreter files per thread or assistant', () => {
    const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `file-ci${from + i}`);
    const attach = (list: string[]) => list.map((file_id) => ({ file_id, tools: [{ type: 'code_interpreter' as const }] }));
    const refused = async (p: Promise<unknown>, param: string) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
      expect((err as Error).message).toMatch(/at most 20|maximum length 20/);
    };

    it('assistants: create and modify', async () => {
      await refused(
        client.beta.assistants.create({ model: 'gpt-4o', tool_resources: { code_interpreter: { file_ids: ids(21) } } }),
        'tool_resources.code_interpreter.file_ids',
      );
      const a = await client.beta.assistants.create({ model: 'gpt-4o', tool_resources: { code_interpreter: { file_ids: ids(20) } } });
      await refused(
        client.beta.assistants.update(a.id, { tool_resources: { code_interpreter: { file_ids: ids(21) } } }),
        'tool_resources.code_interpreter.file_ids',
      );
    });

    it('threads: tool_resources and attachments count together, on create, modify, new messages and runs', async () => {
      await refused(
        client.beta.threads.create({ tool_resources: { code_interpreter: { file_ids: ids(21) } } }),
        'tool_resources.code_interpreter.file_ids',
      );
      await refused(
        client.beta.threads.create({
          tool_resources: { code_interpreter: { file_ids: ids(15) } },
          messages: [{ role: 'user', content: 'a', attachments: attach(ids(6, 15)) }],
        }),
        'messages[0].attachments[5].file_id',
      );
      // Files named twice count once: exactly 20 is accepted.
      const thread = await client.beta.threads.create({
        tool_resources: { code_interpreter: { file_ids: ids(15) } },
        messages: [{ role: 'user', content: 'a', attachments: attach([...ids(2), ...ids(3, 15)]) }],
      });
      await refused(
        client.beta.threads.update(thread.id, { tool_resources: { code_interpreter: { file_ids: ids(18, 100) } } }),
        'tool_resources.code_interpreter.file_ids',
      );
      await client.beta.threads.messages.create(thread.id, { role: 'user', content: 'b', attachments: attach(ids(2, 18)) });
      await refused(
        client.beta.threads.messages.create(thread.id, { role: 'user', content: 'c', attachments: attach([...ids(1, 19), ...ids(1, 20)]) }),
        'attachments[1].file_id',
      );
      await refused(
        client.beta.threads.runs.create(thread.id, {
          assistant_id: assistantId,
          additional_messages: [{ role: 'user', content: 'd', attachments: attach(ids(1, 30)) }],
        }),
        'additional_messages[0].attachments[0].file_id',
      );
      // Nothing of the refused requests was kept.
      const messages = await client.beta.threads.messages.list(thread.id);
      expect(messages.data.map((m) => textOf(m).value)).toEqual(['b', 'a']);
      expect((await client.beta.threads.retrieve(thread.id)).tool_resources?.code_interpreter?.file_ids).toEqual(ids(15));
    });

    it('create-and-run: the thread, its messages', async () => {
      await refused(
        client.beta.threads.createAndRun({
          assistant_id: assistantId,
          thread: {
            tool_resources: { code_interpreter: { file_ids: ids(20) } },
            messages: [{ role: 'user', content: 'x', attachments: attach(ids(1, 50)) }],
          },
        }),
        'thread.messages[0].attachments[0].file_id',
      );
      await refused(
        client.beta.threads.createAndRun({ assistant_id: assistantId, tool_resources: { code_interpreter: { file_ids: ids(21) } } }),
        'tool_resources.code_interpreter.file_ids',
      );
    });
  });
});
