import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../../src/core/settings.js';
import { createStandin, type Standin } from '../../src/server/app.js';
import { applyConfig } from '../../src/admin/config-file.js';
import { TEST_KEYS } from '../helpers.js';
import { bundleChild } from '../process.js';
import { TEST_MODELS, until } from './setup.js';

/**
 * A process killed mid-run (SIGKILL, no chance to clean up): on restart the run is not left in
 * progress — a run that was executing is taken over and completes (its cut reply made again), a run
 * still queued is executed.
 */
let CHILD: string;
const models = { 'glacial-*': { provider: 'builtin', delay: '2s', chunk_chars: 4 }, ...TEST_MODELS };

beforeAll(async () => {
  CHILD = await bundleChild('test/assistants/crash-child.ts');
});

async function startChild(dir: string, workers: boolean): Promise<{ child: ChildProcess; client: OpenAI }> {
  const child = spawn(process.execPath, [CHILD, dir, String(workers), JSON.stringify(models)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line).url);
    });
    child.on('exit', (code) => reject(new Error(`child exited with ${code}`)));
  });
  return { child, client: new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${url}/v1`, maxRetries: 0 }) };
}

async function restart(dir: string, config = models): Promise<{ standin: Standin; client: OpenAI }> {
  const { settings } = readSettings([], {});
  Object.assign(settings, { data: dir, port: 0, logLevel: 'silent', adminKey: TEST_KEYS.admin, workers: true });
  const standin = await createStandin(settings, { logger: false });
  await applyConfig(standin.ctx, standin.modules, { models: config });
  const url = await standin.listen();
  return { standin, client: new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${url}/v1`, maxRetries: 0 }) };
}

describe('a process killed mid-run (sqlite)', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('takes over the run that was executing: the cut reply is made again, once, and the run completes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-crash-'));
    dirs.push(dir);
    const { child, client } = await startChild(dir, true);
    const assistant = await client.beta.assistants.create({ model: 'glacial-model' });
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'a reply that takes a long time to write' }] });
    const run = await client.beta.threads.runs.create(thread.id, { assistant_id: assistant.id });
    await until(
      () => client.beta.threads.messages.list(thread.id, { run_id: run.id }),
      (p) => p.data.length === 1,
      10_000,
    );
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));

    // The restarted process serves the same model name without the delay, so the turn made again is quick.
    const { standin, client: again } = await restart(dir, { ...models, 'glacial-*': { provider: 'builtin', delay: '0s', chunk_chars: 4 } });
    try {
      const ended = await until(
        () => again.beta.threads.runs.retrieve(run.id, { thread_id: thread.id }),
        (r) => r.status !== 'in_progress',
        10_000,
      );
      expect(ended).toMatchObject({ status: 'completed', last_error: null });
      const messages = (await again.beta.threads.messages.list(thread.id, { run_id: run.id })).data;
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatchObject({ status: 'completed', incomplete_details: null });
      const steps = (await again.beta.threads.runs.steps.list(run.id, { thread_id: thread.id })).data;
      expect(steps.map((s) => [s.type, s.status])).toEqual([['message_creation', 'completed']]);
      // The thread is free again.
      expect(
        (
          await again.beta.threads.runs.createAndPoll(thread.id, {
            assistant_id: (await again.beta.assistants.create({ model: 'gpt-4o' })).id,
          })
        ).status,
      ).toBe('completed');
    } finally {
      await standin.close();
    }
  });

  it('executes on restart a run that was still queued', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-crash-'));
    dirs.push(dir);
    const { child, client } = await startChild(dir, false);
    const assistant = await client.beta.assistants.create({ model: 'gpt-4o' });
    const run = await client.beta.threads.createAndRun({
      assistant_id: assistant.id,
      thread: { messages: [{ role: 'user', content: 'queued before the crash' }] },
    });
    expect(run.status).toBe('queued');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const { standin, client: again } = await restart(dir);
    try {
      const done = await again.beta.threads.runs.poll(run.id, { thread_id: run.thread_id }, { pollIntervalMs: 20 });
      expect(done.status).toBe('completed');
    } finally {
      await standin.close();
    }
  });
});
