import { afterEach, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../../test/helpers.js';
import * as svc from '../service.js';
import { eventsAfter } from '../store/events.js';
import { getRunById } from '../store/runs.js';
import { threadMessages } from '../store/messages.js';
import { watchdogId } from './jobs.js';

/**
 * A run started by the instance that created it (workers on): leased and started in one statement, its
 * turn's writes and its end in one transaction, its watchdog dropped with its end, its rate-limit ticket
 * taken with its end — with the same events, rows and jobs a run had before.
 */
const P = 'proj_demo';

describe.each(dialects())('a run started in process (%s)', (dialect) => {
  let s: TestStandin | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const until = async (threadId: string, runId: string, statuses: string[]) => {
    for (let t = 0; t < 500; t++) {
      const run = await svc.readRun(s!.ctx, P, threadId, runId);
      if (statuses.includes(run.status)) return run;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`run ${runId} never reached ${statuses.join(' or ')}`);
  };

  it('completes with its events in order, the message written whole, its watchdog gone and its expiry kept', async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    const a = await svc.createAssistant(s.ctx, P, { model: 'gpt-4o' });
    const created = await svc.createThreadAndRun(s.ctx, P, {
      assistant_id: a.id,
      thread: { messages: [{ role: 'user', content: 'hello there' }] },
    });
    // The reply of the create shows the run as it was committed.
    expect(created.status).toBe('queued');
    const done = await until(created.thread_id, created.id, ['completed', 'failed', 'incomplete']);
    expect(done.status).toBe('completed');
    expect(done.started_at).not.toBeNull();
    expect(done.lease_owner).toBeNull();
    expect((await eventsAfter(s.ctx.store.db, created.id, 0)).map((e) => e.event)).toEqual([
      'thread.created',
      'thread.run.created',
      'thread.run.queued',
      'thread.run.in_progress',
      'thread.run.step.created',
      'thread.run.step.in_progress',
      'thread.message.created',
      'thread.message.in_progress',
      'thread.message.delta',
      'thread.message.completed',
      'thread.run.step.completed',
      'thread.run.completed',
    ]);
    const seqs = (await eventsAfter(s.ctx.store.db, created.id, 0)).map((e) => Number(e.seq));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    const reply = (await threadMessages(s.ctx.store.db, created.thread_id)).find((m) => m.role === 'assistant')!;
    expect(reply.status).toBe('completed');
    expect(JSON.parse(reply.content)[0].text.value).toContain('hello there');
    const jobs = await s.ctx.store.db.selectFrom('jobs').select(['id', 'kind', 'payload']).execute();
    const mine = jobs.filter((j) => JSON.parse(j.payload).runId === created.id);
    expect(mine.map((j) => j.kind)).toEqual(['run.expire']);
    expect(jobs.some((j) => j.id === watchdogId(created.id))).toBe(false);
  });

  it('takes the rate-limit ticket with the end: none is left on the ended run', async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    const a = await svc.createAssistant(s.ctx, P, { model: 'gpt-4o' });
    const ticket = { key: 'test', tokens: 1 } as unknown as NonNullable<Parameters<typeof svc.createThreadAndRun>[3]>['ticket'];
    const created = await svc.createThreadAndRun(
      s.ctx,
      P,
      { assistant_id: a.id, thread: { messages: [{ role: 'user', content: 'hi' }] } },
      { ticket },
    );
    expect((await getRunById(s.ctx.store.db, created.id))?.ratelimit_ticket).not.toBeNull();
    await until(created.thread_id, created.id, ['completed']);
    expect((await getRunById(s.ctx.store.db, created.id))?.ratelimit_ticket).toBeNull();
  });
});
