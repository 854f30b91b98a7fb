import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';

/** The executor inside a listening Standin: its config section, and Standin answering while Python loops. */
describe('code interpreter in a running Standin', { timeout: 60_000 }, () => {
  let s: TestStandin;
  let client: OpenAI;
  beforeAll(async () => {
    s = await startTestStandin();
    client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${await s.listen()}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('takes its root config section, and refuses a bad one with 400 naming the field', async () => {
    const ok = await s.req('POST', '/admin/v1/config', {
      key: 'admin',
      body: {
        code_interpreter: {
          executor: 'pyodide',
          pool_size: 0,
          max_sessions: 2,
          timeout_ms: 20_000,
          memory_mb: 128,
          max_files: 500,
          output_files_limit_bytes: 8 * 1024 * 1024,
          max_processes: 32,
        },
      },
    });
    expect(ok.status).toBe(200);
    for (const bad of [
      { timeout_ms: 'soon' },
      { executor: 'docker' },
      { packages: 'wheels/here' },
      { pool_size: -1 },
      { memory_mb: 1 },
      { sandbox: false },
      { max_processes: 2 },
      { max_files: 0 },
      { output_files_limit_bytes: 'all' },
    ]) {
      const r = await s.req('POST', '/admin/v1/config', { key: 'admin', body: { code_interpreter: bad } });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error.param ?? r.body.error.message).toMatch(/code_interpreter/);
    }
  });

  it('answers API requests while a kernel loops, then stops the loop at the time limit', async () => {
    const ci = s.ctx.services.codeInterpreter;
    // Loads the kernel first (seconds on a busy machine), so what follows is only the loop.
    expect(await ci.execute({ session: 'thread_serving', code: 'import sys\nsys.version_info >= (3, 12)' })).toMatchObject({
      status: 'ok',
      logs: 'True\n',
    });
    let finished = false;
    const loop = ci.execute({ session: 'thread_serving', code: 'while True:\n    pass', timeoutMs: 3000 }).finally(() => (finished = true));
    let answered = 0;
    while (!finished) {
      const page = await client.models.list();
      expect(page.data.length).toBeGreaterThan(0);
      answered++;
    }
    const r = await loop;
    expect(r.status).toBe('timeout');
    expect(r.logs).toContain('[execution stopped: the time limit was reached');
    expect(answered).toBeGreaterThan(3);
    expect((await ci.execute({ session: 'thread_serving', code: 'print("still here")' })).logs).toBe('still here\n');
    expect(ci.stats().sessions).toBe(1);
  }, 120_000);
});
