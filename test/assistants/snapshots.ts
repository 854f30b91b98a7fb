import type OpenAI from 'openai';
import { expect } from 'vitest';

/**
 * The invariant of a streamed run (issue 24): what the SDK's `AssistantStream` builds from the events —
 * `finalRun()`, `finalRunSteps()`, `finalMessages()` and the objects its per-event callbacks hand over
 * (`textDone`, `imageFileDone`, `toolCallDone`, `runStepDone`, `messageDone`) — equals the objects read
 * back through the API once the stream has ended, field for field.
 *
 * Independent of the SDK major (4.x to 6.x share `AssistantStream`'s events and accumulation): the caller
 * gives the stream and a `SnapshotReader` (`readerOf(client, include)` for the installed major; another major
 * writes its own four one-liners). Use:
 *
 * ```ts
 * const stream = client.beta.threads.runs.stream(threadId, { assistant_id });
 * const snapshots = watchSnapshots(stream); // before the stream is consumed
 * … // consume it (for await, finalRun(), done())
 * const seen = await snapshots.verify(readerOf(client)); // at once: before submitting outputs or another run
 * ```
 *
 * Two things the SDK does by design are allowed for, nothing else: the `index` each array item of a delta
 * carries (the SDK's merge key) stays in its snapshot, so it is dropped before comparing; and a message
 * snapshot keeps the lifecycle members of `thread.message.created` (the SDK applies later message events
 * to the snapshot's content only), so `finalMessages()` is compared without them and `messageDone`'s
 * message, which carries them, is compared whole.
 */

/** Reads of the objects a stream carried (arguments in the order of the 4.x/5.x SDK methods). */
export interface SnapshotReader {
  run(threadId: string, runId: string): Promise<unknown>;
  step(threadId: string, runId: string, stepId: string): Promise<unknown>;
  message(threadId: string, messageId: string): Promise<unknown>;
  /** A file's metadata: an image a message shows must exist. */
  file(fileId: string): Promise<unknown>;
}

/** The members of `AssistantStream` used here (the same from openai 4.x to 6.x). */
export interface SnapshotStream {
  // The SDK types each event's listener; only its arguments' shapes matter here.
  on(event: any, listener: (...args: any[]) => void): unknown;
  finalRun(): Promise<unknown>;
  finalRunSteps(): Promise<unknown[]>;
  finalMessages(): Promise<unknown[]>;
}

/** How many objects of each kind were compared (a test asserts the kinds it means to cover). */
export interface SnapshotCounts {
  messages: number;
  steps: number;
  textDone: number;
  imageFileDone: number;
  toolCallDone: number;
  runStepDone: number;
  messageDone: number;
}

type Obj = Record<string, unknown>;
type Content = { type: string; text?: unknown; image_file?: { file_id: string } };
type Message = Obj & { id: string; thread_id: string; content: Content[] };
type Step = Obj & { id: string; run_id: string; thread_id: string; step_details: { type: string; tool_calls?: (Obj & { id: string })[] } };
type Run = Obj & { id: string; thread_id: string };

/** The message members the SDK's snapshot keeps from `thread.message.created`. */
const LIFECYCLE = ['status', 'completed_at', 'incomplete_at', 'incomplete_details'];

/** A copy without the `index` merge key of array items (deltas' items carry it; API objects do not). */
export function withoutIndex<T>(value: T, inArray = false): T {
  if (Array.isArray(value)) return value.map((v) => withoutIndex(v, true)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Obj = {};
  for (const [k, v] of Object.entries(value)) if (!(inArray && k === 'index')) out[k] = withoutIndex(v);
  return out as T;
}

const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const omit = (o: Obj, keys: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

/** Reads through the installed SDK (6.x signatures); `include` as the stream's request gave it. */
export function readerOf(client: OpenAI, include: OpenAI.Beta.Threads.Runs.RunStepInclude[] = []): SnapshotReader {
  return {
    run: (threadId, runId) => client.beta.threads.runs.retrieve(runId, { thread_id: threadId }),
    step: (threadId, runId, stepId) =>
      client.beta.threads.runs.steps.retrieve(stepId, { thread_id: threadId, run_id: runId, ...(include.length ? { include } : {}) }),
    message: (threadId, messageId) => client.beta.threads.messages.retrieve(messageId, { thread_id: threadId }),
    file: (fileId) => client.files.retrieve(fileId),
  };
}

/** Records the stream's per-event snapshots (copied when handed over); `verify` compares them all with the API. */
export function watchSnapshots(stream: SnapshotStream) {
  const textDone: { text: unknown; message: Message }[] = [];
  const imageFileDone: { image: { file_id: string }; message: Message }[] = [];
  const toolCallDone: (Obj & { id: string })[] = [];
  const runStepDone: { step: Step; snapshot: Step }[] = [];
  const messageDone: Message[] = [];
  stream.on('textDone', (text: unknown, message: Message) => textDone.push({ text: copy(text), message: copy(message) }));
  stream.on('imageFileDone', (image: { file_id: string }, message: Message) =>
    imageFileDone.push({ image: copy(image), message: copy(message) }),
  );
  stream.on('toolCallDone', (call: Obj & { id: string }) => toolCallDone.push(copy(call)));
  stream.on('runStepDone', (step: Step, snapshot: Step) => runStepDone.push({ step: copy(step), snapshot: copy(snapshot) }));
  stream.on('messageDone', (message: Message) => messageDone.push(copy(message)));

  /** Compares every snapshot with the API's object; call it once the stream has ended, before the run moves on. */
  async function verify(read: SnapshotReader): Promise<SnapshotCounts> {
    const run = (await stream.finalRun()) as Run;
    const steps = (await stream.finalRunSteps()) as Step[];
    const messages = (await stream.finalMessages()) as Message[];
    const messageCache = new Map<string, Promise<Message>>();
    const readMessage = (m: Message) => {
      if (!messageCache.has(m.id)) messageCache.set(m.id, read.message(m.thread_id, m.id) as Promise<Message>);
      return messageCache.get(m.id)!;
    };
    const stepOf = new Map(steps.map((s) => [s.id, read.step(s.thread_id, s.run_id, s.id) as Promise<Step>]));

    expect(withoutIndex(run), `finalRun() ${run.id}`).toEqual(await read.run(run.thread_id, run.id));
    for (const s of steps) expect(withoutIndex(s), `finalRunSteps() ${s.id}`).toEqual(await stepOf.get(s.id));
    for (const m of messages) {
      const api = await readMessage(m);
      expect(omit(withoutIndex(m), LIFECYCLE), `finalMessages() ${m.id}`).toEqual(omit(api, LIFECYCLE));
      for (const c of api.content) if (c.type === 'image_file') await read.file(c.image_file!.file_id);
    }
    for (const m of messageDone) expect(m, `messageDone ${m.id}`).toEqual(await readMessage(m));
    for (const { text, message } of textDone) {
      const api = await readMessage(message);
      expect(
        api.content.filter((c) => c.type === 'text').map((c) => c.text),
        `textDone of ${message.id}`,
      ).toContainEqual(withoutIndex(text));
      expectPrefix(message, api, 'textDone');
    }
    for (const { image, message } of imageFileDone) {
      const api = await readMessage(message);
      expect(
        api.content.filter((c) => c.type === 'image_file').map((c) => c.image_file),
        `imageFileDone of ${message.id}`,
      ).toContainEqual(image);
      // The image is a file the application can fetch (a doubled id was a 404).
      await read.file(image.file_id);
      expectPrefix(message, api, 'imageFileDone');
    }
    for (const call of toolCallDone) {
      const owner = steps.find((s) => s.step_details.tool_calls?.some((c) => c.id === call.id));
      expect(owner, `toolCallDone ${call.id}: a step of the stream holds it`).toBeDefined();
      const api = await stepOf.get(owner!.id)!;
      expect(
        api.step_details.tool_calls?.find((c) => c.id === call.id),
        `toolCallDone ${call.id}`,
      ).toEqual(withoutIndex(call, true));
    }
    for (const { step, snapshot } of runStepDone) {
      const api = await (stepOf.get(step.id) ?? read.step(step.thread_id, step.run_id, step.id));
      expect(step, `runStepDone ${step.id}`).toEqual(api);
      expect(withoutIndex(snapshot), `runStepDone snapshot ${step.id}`).toEqual(api);
    }
    return {
      messages: messages.length,
      steps: steps.length,
      textDone: textDone.length,
      imageFileDone: imageFileDone.length,
      toolCallDone: toolCallDone.length,
      runStepDone: runStepDone.length,
      messageDone: messageDone.length,
    };
  }
  return { verify };
}

/** A message snapshot taken mid-stream holds the first blocks of the final content, each already whole but the last. */
function expectPrefix(snapshot: Message, api: Message, what: string) {
  const got = withoutIndex(snapshot.content);
  expect(got.length, `${what}: ${snapshot.id} has at most the final blocks`).toBeLessThanOrEqual(api.content.length);
  expect(got.slice(0, -1), `${what}: ${snapshot.id} blocks before the current one`).toEqual(api.content.slice(0, got.length - 1));
}
