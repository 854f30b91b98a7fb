import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../../src/core/settings.js';
import { createStandin, type Standin } from '../../src/server/app.js';
import { startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';
import { chatLine, uploadBatchFile, waitFor } from './fixtures.js';

/**
 * Two instances on one PostgreSQL: A answers the control plane and runs no workers, B runs the batch. A
 * hold set through A holds B's worker; a release through A lets it go.
 */
describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('work holds on several instances', () => {
  let a: TestStandin;
  let b: Standin;
  let client: OpenAI;
  beforeAll(async () => {
    a = await startTestStandin({ dialect: 'postgres', settings: { workers: false } });
    const { settings } = readSettings([], {});
    Object.assign(settings, {
      data: a.ctx.settings.data,
      databaseUrl: a.ctx.settings.databaseUrl,
      port: 0,
      logLevel: 'silent',
      adminKey: TEST_KEYS.admin,
      workers: true,
    });
    b = await createStandin(settings, { logger: false });
    await b.listen();
    client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${await a.listen()}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('holds on the instance that runs the work, and releases from another', async () => {
    const put = (body: unknown) => a.req('PUT', '/admin/v1/projects/proj_demo/work_holds', { key: 'admin', body });
    expect((await put({ batch_hold_at: ['in_progress'] })).status).toBe(200);
    const input = await uploadBatchFile(client, [chatLine('a', 'Hello'), chatLine('b', 'Hi')]);
    const batch = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitFor(client, batch.id, (x) => x.status === 'in_progress');
    await new Promise((r) => setTimeout(r, 2500));
    expect(await client.batches.retrieve(batch.id)).toMatchObject({
      status: 'in_progress',
      request_counts: { total: 2, completed: 0, failed: 0 },
    });
    expect((await put({})).status).toBe(200);
    expect((await waitFor(client, batch.id)).status).toBe('completed');
  });
});
