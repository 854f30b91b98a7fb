import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { chatLine, fileLines, uploadBatchFile, waitFor } from '../batches/fixtures.js';

/**
 * Issue 25, item 2: a long run without spaces is one pre-token, and gpt-tokenizer's merge is quadratic
 * in it. A 100 KB chat message of one word held the event loop for 19 s, a 120 KB batch line for 37 s.
 * Now each answers, and `GET /v1/models` sent meanwhile answers too. The bounds only tell "it froze"
 * from "it answered" on a loaded machine (the old code took the tens of seconds above).
 */
const FROZE = 12_000;

/** `p`, or a failure naming `what` once FROZE ms have passed. */
function unfrozen<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const froze = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${FROZE} ms`)), FROZE);
  });
  return Promise.race([p, froze]).finally(() => clearTimeout(timer));
}

describe.each(dialects())('hostile input: tokenizing long runs without spaces (%s)', (dialect) => {
  let s: TestStandin;
  let client: OpenAI;
  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${await s.listen()}/v1`, maxRetries: 0, timeout: 60_000 });
  });
  afterAll(() => s?.close());

  it('answers a 100 KB chat message of one word, and GET /v1/models meanwhile', async () => {
    // Lower case throughout: a capital would start a new pre-token.
    const word = 'pneumonoultramicroscopicsilicovolcanoconiosis'.repeat(Math.ceil(100_000 / 45)).slice(0, 100_000);
    const completion = client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: word }] });
    const models = client.models.list();
    const [done, list] = await unfrozen('the chat completion and the model list', Promise.all([completion, models]));
    expect(list.data.length).toBeGreaterThan(0);
    expect(done.choices[0].message.role).toBe('assistant');
    // Counted, not estimated: a run of one long word is about a token per 3 to 4 characters here.
    expect(done.usage!.prompt_tokens).toBeGreaterThan(100_000 / 8);
  }, 30_000);

  it('runs a batch with a 120 KB line of one character, and answers GET /v1/models meanwhile', async () => {
    const input = await uploadBatchFile(client, [chatLine('long', 'a'.repeat(120_000)), chatLine('short', 'Hello there.')]);
    const batch = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const ended = waitFor(client, batch.id, undefined, FROZE);
    const list = await unfrozen('the model list while the batch runs', client.models.list());
    expect(list.data.length).toBeGreaterThan(0);
    const done = await ended;
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const out = await fileLines(client, done.output_file_id!);
    expect(out.map((l) => [l.custom_id, l.response.status_code])).toEqual([
      ['long', 200],
      ['short', 200],
    ]);
    expect(out[0].response.body.usage.prompt_tokens).toBeGreaterThan(120_000 / 8);
  }, 30_000);

  it('counts a special-token look-alike in a message as text, not a 500', async () => {
    const done = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'What is <|endoftext|>?' }],
    });
    expect(done.usage!.prompt_tokens).toBeGreaterThan(6);
  });

  it('refuses an embeddings input of a 200 KB run with context_length_exceeded, promptly', async () => {
    const call = client.embeddings.create({ model: 'text-embedding-3-small', input: '['.repeat(200_000) });
    const err = await unfrozen(
      'the embeddings call',
      call.then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('context_length_exceeded');
  }, 30_000);
});
