import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapAvailable } from '../../src/code-interpreter/bwrap.js';
import { processTree } from '../../src/code-interpreter/bwrap-watch.js';
import { startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';

/** Processes this test process (and the Standin in it) has started, sandboxes included. */
const descendants = async () => (await processTree(process.pid)).length - 1;

/**
 * The bwrap executor inside a listening Standin: a fork bomb stays within the sandbox's process limit,
 * Standin answers meanwhile, and nothing of it is left on the host after the cell.
 */
describe.runIf(bwrapAvailable())('code interpreter (bwrap) in a running Standin', { timeout: 120_000 }, () => {
  let s: TestStandin;
  let client: OpenAI;
  beforeAll(async () => {
    s = await startTestStandin();
    client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${await s.listen()}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('contains a fork bomb: at most max_processes, Standin answering, nothing left after', async () => {
    const config = { code_interpreter: { executor: 'bwrap', pool_size: 0, max_processes: 32 } };
    expect((await s.req('POST', '/admin/v1/config', { key: 'admin', body: config })).status).toBe(200);
    const ci = s.ctx.services.codeInterpreter;
    const before = await descendants();
    expect(await ci.execute({ session: 'thread_bomb', code: '1 + 1' })).toMatchObject({ status: 'ok', logs: '2\n' });
    const bomb = [
      'import os, time',
      'end = time.time() + 3',
      'while time.time() < end:',
      '    try:',
      '        os.fork()',
      '    except OSError:',
      '        pass',
    ];
    let finished = false;
    let peak = 0;
    const run = ci.execute({ session: 'thread_bomb', code: bomb.join('\n') }).finally(() => (finished = true));
    let answered = 0;
    while (!finished) {
      peak = Math.max(peak, (await descendants()) - before);
      expect((await client.models.list()).data.length).toBeGreaterThan(0);
      answered++;
    }
    await run;
    expect(answered).toBeGreaterThan(3);
    expect(peak).toBeGreaterThan(20);
    expect(peak).toBeLessThanOrEqual(33); // bwrap outside the sandbox, 32 tasks inside
    expect(await descendants()).toBe(before + 3); // bwrap, its init and the driver: the session is kept
    await ci.closeSession('thread_bomb');
    expect(await descendants()).toBe(before);
  });
});
