import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { insertWrittenFile, sweepUpload, SWEEP_UPLOAD, writeFileBytes } from './service.js';

/**
 * The upload sweep removes bytes whose row never came (a process died mid-upload). It waits on the wall
 * clock: a test that moves the Standin clock past the sweep's hour while a batch's output is being
 * committed must not lose the file's bytes (a snapshot test once found a file row without them).
 */
describe.each(dialects())('files: the upload sweep (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  const bytesOf = async (id: string) => {
    const chunks: Buffer[] = [];
    for await (const c of await s.ctx.services.files.storage.open(id)) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString();
  };
  const write = (text: string) =>
    writeFileBytes(
      s.ctx,
      (async function* () {
        yield Buffer.from(text);
      })(),
    );
  const sweepPayload = async (fileId: string) => {
    const jobs = await s.ctx.store.db.selectFrom('jobs').select('payload').where('kind', '=', SWEEP_UPLOAD).execute();
    const payload = jobs.map((j) => JSON.parse(j.payload)).find((p) => p.fileId === fileId);
    expect(payload, 'the sweep was scheduled').toBeDefined();
    return payload;
  };

  it('keeps bytes whose row is still to come when the Standin clock is moved past the hour', async () => {
    const written = await write('output lines');
    const payload = await sweepPayload(written.id);
    const moved = await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '3h' } });
    expect(moved.status).toBe(200);
    const early = await sweepUpload(s.ctx, payload);
    expect(early).toMatchObject({ retryAt: expect.any(Number) });
    expect((early as { retryAt: number }).retryAt).toBeGreaterThan(s.ctx.clock.now() + 3_500_000);
    await s.ctx.store.db
      .transaction()
      .execute((tx) => insertWrittenFile(s.ctx, tx, 'proj_demo', written, { filename: 'out.jsonl', purpose: 'batch_output' }));
    expect(await bytesOf(written.id)).toBe('output lines');
  });

  it('removes bytes whose row never came once the hour has passed on the wall clock', async () => {
    const written = await write('left by a crash');
    const payload = await sweepPayload(written.id);
    expect(await sweepUpload(s.ctx, { ...payload, due: payload.due - 3_600_000 })).toBeUndefined();
    await expect(s.ctx.services.files.storage.open(written.id)).rejects.toThrow();
  });

  it('leaves a committed file alone, and runs a job queued before `due` existed by the Standin clock', async () => {
    const written = await write('committed');
    await s.ctx.store.db
      .transaction()
      .execute((tx) => insertWrittenFile(s.ctx, tx, 'proj_demo', written, { filename: 'kept.txt', purpose: 'assistants' }));
    expect(await sweepUpload(s.ctx, { fileId: written.id })).toBeUndefined();
    expect(await bytesOf(written.id)).toBe('committed');
  });
});
