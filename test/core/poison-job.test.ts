import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatLine, uploadBatchFile } from '../batches/fixtures.js';
import { dialects, startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';
import { bundleChild, freshDatabaseUrl } from '../process.js';
import { wallNow } from '../../src/core/clock.js';

/**
 * A job whose handler kills its process (a decompression bomb, a runaway parser) must not take Standin
 * down at every start: after --job-max-deaths (3) deaths it is failed, its kind told, and the server serves.
 */
let CHILD: string;

beforeAll(async () => {
  CHILD = await bundleChild('test/core/poison-child.ts');
});

/** Starts the child: `listening` gives its URL once it listens (it fails if the child ends first), `exited` how it ended. */
function start(args: string[]): { child: ChildProcess; listening: Promise<string>; exited: Promise<NodeJS.Signals | number | null> } {
  const child = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<NodeJS.Signals | number | null>((r) => child.once('exit', (code, signal) => r(signal ?? code)));
  const listening = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line).url);
    });
    void exited.then((how) => reject(new Error(`the child ended (${how})`)));
  });
  listening.catch(() => {});
  return { child, listening, exited };
}

describe.each(dialects())('a job that kills its process at every start (%s)', (dialect) => {
  const dir = mkdtempSync(join(tmpdir(), 'standin-poison-'));
  const children: ChildProcess[] = [];
  let databaseUrl = '';
  beforeAll(async () => {
    if (dialect === 'postgres') databaseUrl = await freshDatabaseUrl('poison');
  });
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('dies three times, then is failed with a clear reason at the next start, and the server serves', async () => {
    const runs = () => (existsSync(join(dir, 'runs')) ? readFileSync(join(dir, 'runs'), 'utf8').trim().split('\n') : []);
    for (let death = 1; death <= 3; death++) {
      const { child, exited } = start([dir, databaseUrl, dir, death === 1 ? 'enqueue' : '']);
      children.push(child);
      expect(await exited).toBe('SIGKILL');
      expect(runs()).toHaveLength(death);
    }
    const { child, listening, exited } = start([dir, databaseUrl, dir, '']);
    children.push(child);
    const url = await listening;
    const abandoned = join(dir, 'abandoned');
    for (let i = 0; i < 300 && !existsSync(abandoned); i++) await new Promise((r) => setTimeout(r, 50));
    expect(readFileSync(abandoned, 'utf8')).toMatch(
      /^file_poison: The test\.poison job stopped without finishing 3 times in a row .* it was failed rather than run again\.$/,
    );
    expect(runs()).toHaveLength(3);
    const client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${url}/v1`, maxRetries: 0 });
    expect((await client.models.list()).data.length).toBeGreaterThan(0);
    // Still serving a while later: the job is gone, not waiting to kill the process again.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await client.models.list()).data.length).toBeGreaterThan(0);
    expect(runs()).toHaveLength(3);
    child.kill('SIGTERM');
    await exited;
  }, 120_000);
});

/** The areas' onAbandon hooks, through the queue: a job whose claims died three times marks its object failed. */
describe.each(dialects())('objects of abandoned jobs (%s)', (dialect) => {
  let s: TestStandin;
  let client: OpenAI;
  beforeAll(async () => {
    // Workers off: the jobs stay queued until the test has "killed" them.
    s = await startTestStandin({ dialect });
    client = new OpenAI({ apiKey: s.keys.platform, baseURL: `${await s.listen()}/v1`, maxRetries: 0 });
  });
  afterAll(() => s?.close());

  /** Three claims of the kind's jobs whose process died while their handler ran. */
  async function diedThreeTimes(kind: string) {
    const { store } = s.ctx;
    const n = await store.db
      .updateTable('jobs')
      .set({ locked_by: 'dead-worker', locked_until: wallNow() - 1, attempts: 3, open_claims: 3 })
      .where('kind', '=', kind)
      .executeTakeFirst();
    expect(Number(n.numUpdatedRows)).toBe(1);
    await s.ctx.jobs.drain();
  }

  it('fails a batch with a server_error naming the reason', async () => {
    const input = await uploadBatchFile(client, [chatLine('one', 'Hello')]);
    const batch = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await diedThreeTimes('batches.run');
    const failed = await client.batches.retrieve(batch.id);
    expect(failed.status).toBe('failed');
    expect(failed.failed_at).toEqual(expect.any(Number));
    expect(failed.errors?.data).toEqual([
      { code: 'server_error', message: expect.stringContaining('stopped without finishing 3 times in a row'), param: null, line: null },
    ]);
    const events = await s.req('GET', `/admin/v1/events?object_id=${batch.id}`, { key: 'admin' });
    expect(events.body.data.map((e: { event: { type: string } }) => e.event.type)).toContain('batch.failed');
  });

  it('fails a background response with a server_error naming the reason', async () => {
    const r = await client.responses.create({ model: 'gpt-4o-mini', input: 'in the back', background: true });
    expect(r.status).toBe('queued');
    await diedThreeTimes('response.run');
    const failed = await client.responses.retrieve(r.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ code: 'server_error', message: expect.stringContaining('stopped without finishing 3 times in a row') });
    const events = await s.req('GET', `/admin/v1/events?object_id=${r.id}`, { key: 'admin' });
    expect(events.body.data.map((e: { event: { type: string } }) => e.event.type)).toContain('response.failed');
  });
});
