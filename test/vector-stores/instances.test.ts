import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../../src/core/settings.js';
import { createStandin, type Standin } from '../../src/server/app.js';
import { startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';

/**
 * Two instances on one PostgreSQL (and one Redis, when given): A takes uploads and requests and runs no
 * workers, B ingests. Bytes stored through A are read by B; a search on A sees what B indexed; rule 5's
 * window is shared through Redis.
 */
describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('files and vector stores on several instances', () => {
  let a: TestStandin;
  let b: Standin;
  let clientA: OpenAI;
  let clientB: OpenAI;
  const redisUrl = process.env.STANDIN_TEST_REDIS_URL;
  beforeAll(async () => {
    a = await startTestStandin({ dialect: 'postgres', settings: { workers: false, redisUrl } });
    const { settings } = readSettings([], {});
    Object.assign(settings, {
      data: a.ctx.settings.data,
      databaseUrl: a.ctx.settings.databaseUrl,
      redisUrl,
      port: 0,
      logLevel: 'silent',
      adminKey: TEST_KEYS.admin,
      workers: true,
    });
    b = await createStandin(settings, { logger: false });
    clientA = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${await a.listen()}/v1`, maxRetries: 0 });
    clientB = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${await b.listen()}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('stores bytes every instance reads, ingests on B, searches on A', async () => {
    const data = Buffer.from(`${'padding words '.repeat(200_000)}\nThe Brannoch ferry leaves at dawn.`);
    const file = await clientA.files.create({ file: await toFile(data, 'ferry.txt'), purpose: 'assistants' });
    expect(Buffer.compare(Buffer.from(await (await clientB.files.content(file.id)).arrayBuffer()), data)).toBe(0);
    const store = await clientA.vectorStores.create({ name: 'shared' });
    // A search before ingestion caches A's (empty) index; the version bump of B's commit must refresh it.
    expect((await clientA.vectorStores.search(store.id, { query: 'Brannoch ferry' })).data).toEqual([]);
    const attached = await clientA.vectorStores.files.createAndPoll(store.id, { file_id: file.id }, { pollIntervalMs: 50 });
    expect(attached.status).toBe('completed');
    const hits = await clientA.vectorStores.search(store.id, { query: 'When does the Brannoch ferry leave?' });
    expect(hits.data[0].content[0].text).toContain('leaves at dawn');
    await clientB.files.delete(file.id);
    expect((await clientA.vectorStores.search(store.id, { query: 'Brannoch ferry' })).data).toEqual([]);
  });

  it.runIf(redisUrl)('shares rule 5’s window between instances', async () => {
    const file = await clientA.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'assistants' });
    const store = await clientA.vectorStores.create({ name: 'busy' });
    const first = await clientA.vectorStores.files
      .update(file.id, { vector_store_id: store.id, attributes: { n: 0 } })
      .withResponse()
      .catch((e) => e);
    // Not attached yet: a 404, but counted all the same.
    expect(first.status).toBe(404);
    const attach = await clientB.vectorStores.files.create(store.id, { file_id: file.id }).withResponse();
    expect(Number(attach.response.headers.get('x-ratelimit-remaining-requests'))).toBeLessThanOrEqual(298);
  });
});
