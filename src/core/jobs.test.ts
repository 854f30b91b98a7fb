import { afterEach, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { createJobQueue } from './jobs.js';

describe.each(dialects())('job queue (%s)', (dialect) => {
  let s: TestStandin | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('runs a job enqueued in a committed transaction, and not one whose transaction rolled back', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const seen: string[] = [];
    s.ctx.jobs.register({ kind: 'test.echo', handler: async (p: { v: string }) => void seen.push(p.v) });
    await s.ctx.store.db.transaction().execute((tx) => s!.ctx.jobs.enqueue(tx, 'test.echo', { v: 'kept' }));
    await expect(
      s.ctx.store.db.transaction().execute(async (tx) => {
        await s!.ctx.jobs.enqueue(tx, 'test.echo', { v: 'lost' });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    await s.ctx.jobs.drain();
    expect(seen).toEqual(['kept']);
    expect(await s.ctx.store.db.selectFrom('jobs').selectAll().execute()).toEqual([]);
  });

  it('waits for run_at on the Standin clock, and retries when the handler asks', async () => {
    s = await startTestStandin({ dialect, seed: false });
    let calls = 0;
    const { clock } = s.ctx;
    s.ctx.jobs.register({
      kind: 'test.retry',
      handler: async () => {
        calls++;
        return calls < 3 ? { retryAt: clock.now() + 60_000 } : undefined;
      },
    });
    await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.retry', {}, { runAt: clock.now() + 3_600_000 });
    await s.ctx.jobs.drain();
    expect(calls).toBe(0);
    clock.advance(3_600_000);
    await s.ctx.jobs.drain();
    expect(calls).toBe(1);
    clock.advance(60_000);
    await s.ctx.jobs.drain();
    clock.advance(60_000);
    await s.ctx.jobs.drain();
    expect(calls).toBe(3);
    expect(await s.ctx.store.db.selectFrom('jobs').selectAll().execute()).toEqual([]);
  });

  it('reclaims a job whose worker died once its visibility timeout lapses', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const { clock, store } = s.ctx;
    const seen: number[] = [];
    s.ctx.jobs.register({ kind: 'test.crash', visibilityMs: 30_000, handler: async (_p, job) => void seen.push(job.attempts) });
    await s.ctx.jobs.enqueue(store.db, 'test.crash', {});
    // A claim by a worker that then died: locked, attempts counted, never finished.
    await store.db
      .updateTable('jobs')
      .set({ locked_by: 'dead-worker', locked_until: clock.now() + 30_000, attempts: 1 })
      .execute();
    await s.ctx.jobs.drain();
    expect(seen).toEqual([]);
    clock.advance(31_000);
    await s.ctx.jobs.drain();
    expect(seen).toEqual([2]);
  });

  if (dialect === 'postgres') {
    it('shares work between two queues on one database: every job runs exactly once', async () => {
      s = await startTestStandin({ dialect, seed: false });
      const counts = new Map<number, number>();
      const handler = async (p: { n: number }) => {
        counts.set(p.n, (counts.get(p.n) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 1));
      };
      const other = createJobQueue(s.ctx.store, s.ctx.clock, s.ctx.log);
      s.ctx.jobs.register({ kind: 'test.share', concurrency: 8, handler });
      other.register({ kind: 'test.share', concurrency: 8, handler });
      for (let i = 0; i < 200; i++) await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.share', { n: i });
      await Promise.all([s.ctx.jobs.drain(20_000), other.drain(20_000)]);
      expect(counts.size).toBe(200);
      expect([...counts.values()].every((c) => c === 1)).toBe(true);
    });
  }
});
