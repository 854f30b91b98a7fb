import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers.js';
import { ensureBuilt, freePort, freshDatabaseUrl, serve } from '../process.js';
import { chatLine, fileLines, uploadBatchFile, waitFor } from './fixtures.js';

const ADMIN = 'sk-admin-batch-crash-test-key-000000000';
const KEY = 'sk-proj-batch-crash-test-key-0000000000';
const LINES = 6000;

/**
 * kill -9 while a batch runs, then restart (on PostgreSQL: two instances sharing the work): every line is
 * in the output exactly once, in input order.
 */
describe.each(dialects())('kill -9 during a batch (%s)', (dialect) => {
  const dir = mkdtempSync(join(tmpdir(), 'standin-batch-crash-'));
  const children: ChildProcess[] = [];
  const env: Record<string, string> = { STANDIN_DATA: dir, STANDIN_ADMIN_KEY: ADMIN, STANDIN_LOG_LEVEL: 'error' };

  beforeAll(async () => {
    ensureBuilt();
    if (dialect === 'postgres') env.STANDIN_DATABASE_URL = await freshDatabaseUrl('batchcrash');
    env.STANDIN_PORT = String(await freePort());
  }, 120_000);

  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('resumes after a restart with every line once in the output', async () => {
    const first = await serve(env);
    children.push(first);
    const base = `http://127.0.0.1:${env.STANDIN_PORT}`;
    const admin = (path: string, body: unknown) =>
      fetch(`${base}/admin/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await admin('/projects/proj_demo/api_keys', { name: 'crash', value: KEY })).status).toBe(201);
    const client = new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, maxRetries: 3 });

    const lines = Array.from({ length: LINES }, (_, i) => chatLine(`line-${i}`, `Request number ${i}: tell me something about it.`));
    const input = await uploadBatchFile(client, lines);
    const b = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const during = await waitFor(client, b.id, (x) => (x.request_counts?.completed ?? 0) > 0, 120_000);
    expect(during.status, 'the batch ended before the kill').toBe('in_progress');
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));

    const second = await serve(env);
    children.push(second);
    if (dialect === 'postgres') {
      // A second instance on the same database shares the work.
      const other = await serve({ ...env, STANDIN_PORT: String(await freePort()) });
      children.push(other);
      // The dead process's claim lapses after its visibility timeout (2 min): move the Standin clock past it.
      expect((await admin('/clock/advance', { seconds: 150 })).status).toBe(200);
    }
    const done = await waitFor(client, b.id, undefined, 170_000);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
    expect(done.error_file_id).toBeNull();
    const output = await fileLines(client, done.output_file_id!);
    expect(output.length).toBe(LINES);
    expect(output.map((l) => l.custom_id)).toEqual(lines.map((_, i) => `line-${i}`));
    expect(new Set(output.map((l) => l.id)).size).toBe(LINES);
    expect(output.every((l) => l.response.status_code === 200)).toBe(true);
    for (const c of children) c.kill('SIGTERM');
  }, 240_000);
});
