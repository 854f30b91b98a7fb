import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers.js';
import { caller, ensureBuilt, freePort, freshDatabaseUrl, serve } from '../process.js';
import { filler } from './fixtures.js';

const ADMIN = 'sk-admin-vs-crash-test-key-00000000000';
const KEY = 'sk-proj-vs-crash-test-key-000000000000';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(dialects())('kill -9 during vector store ingestion (%s)', (dialect) => {
  const dir = mkdtempSync(join(tmpdir(), 'standin-vs-crash-'));
  let child: ChildProcess | undefined;
  const env: Record<string, string> = { STANDIN_DATA: dir, STANDIN_ADMIN_KEY: ADMIN, STANDIN_LOG_LEVEL: 'error' };

  beforeAll(async () => {
    ensureBuilt();
    if (dialect === 'postgres') {
      env.STANDIN_DATABASE_URL = await freshDatabaseUrl('vscrash');
    }
    env.STANDIN_PORT = String(await freePort());
  }, 120_000);

  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('completes the store after a restart, every file once', async () => {
    child = await serve(env);
    const base = `http://127.0.0.1:${env.STANDIN_PORT}`;
    const call = caller(() => base, KEY);
    expect(
      (await call('/admin/v1/projects/proj_demo/api_keys', { method: 'POST', key: ADMIN, body: { name: 'crash', value: KEY } })).status,
    ).toBe(201);

    // Files large enough that ingesting all of them takes a few seconds (tokenizing is the slow part).
    const names = ['Velmora', 'Ostrand', 'Quillport', 'Zorbania', 'Tessaly', 'Brannoch'];
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const form = new FormData();
      form.append('purpose', 'assistants');
      form.append(
        'file',
        new Blob([`${filler(6000, i + 1)}\n\nThe ${names[i]} archive keeps its vault code, ${7000 + i}, in a locked drawer.`]),
        `doc${i}.txt`,
      );
      const up = await call('/v1/files', { method: 'POST', body: form });
      expect(up.status, JSON.stringify(up.body)).toBe(200);
      ids.push(up.body.id);
    }
    const store = await call('/v1/vector_stores', { method: 'POST', body: { name: 'crash', file_ids: ids } });
    expect(store.status).toBe(200);
    const vs = store.body.id as string;

    // Kill once ingestion is under way: some file done, some not.
    let counts = store.body.file_counts;
    for (let i = 0; i < 1200 && !(counts.completed >= 1 && counts.in_progress >= 1); i++) {
      await sleep(25);
      counts = (await call(`/v1/vector_stores/${vs}`)).body.file_counts;
    }
    expect(counts.in_progress, 'ingestion ended before the kill').toBeGreaterThan(0);
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));

    child = await serve(env);
    if (dialect === 'postgres') {
      // The dead process's claims lapse after their visibility timeout (5 min): move the Standin clock past it.
      expect((await call('/admin/v1/clock/advance', { method: 'POST', key: ADMIN, body: { seconds: 360 } })).status).toBe(200);
    }
    let after = (await call(`/v1/vector_stores/${vs}`)).body;
    for (let i = 0; i < 1200 && after.status !== 'completed'; i++) {
      await sleep(50);
      after = (await call(`/v1/vector_stores/${vs}`)).body;
    }
    expect(after.status).toBe('completed');
    expect(after.file_counts).toEqual({ in_progress: 0, completed: 6, failed: 0, cancelled: 0, total: 6 });
    for (let i = 0; i < 6; i++) {
      const hit = await call(`/v1/vector_stores/${vs}/search`, {
        method: 'POST',
        body: { query: `What is the vault code of the ${names[i]} archive?`, max_num_results: 1 },
      });
      expect(hit.body.data[0].file_id).toBe(ids[i]);
      expect(hit.body.data[0].content[0].text).toContain(`vault code, ${7000 + i}`);
    }
    child.kill('SIGTERM');
  }, 180_000);
});
