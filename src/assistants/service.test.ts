import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../../test/helpers.js';
import * as svc from './service.js';
import { runView, stepView } from './views.js';
import { eventsAfter } from './store/events.js';
import { getRunById } from './store/runs.js';
import { runSteps } from './store/steps.js';
import { getThread } from './store/threads.js';
import { wallNow } from '../core/clock.js';

/**
 * The service and the engine without HTTP and without the in-process start: workers are off, so every
 * run goes through its `run.execute` job (the path other instances take), driven by `jobs.drain()`.
 */
let s: TestStandin;
const P = 'proj_demo';
beforeAll(async () => {
  s = await startTestStandin();
});
afterAll(() => s?.close());

const drain = () => s.ctx.jobs.drain(10_000);
const run = async (threadId: string, runId: string) => runView(await svc.readRun(s.ctx, P, threadId, runId));
const events = async (runId: string) => (await eventsAfter(s.ctx.store.db, runId, 0)).map((e) => e.event);

describe('runs through jobs', () => {
  it('a queued run waits for a worker, then completes with its events in order', async () => {
    const a = await svc.createAssistant(s.ctx, P, { model: 'gpt-4o' });
    const r = await svc.createThreadAndRun(s.ctx, P, { assistant_id: a.id, thread: { messages: [{ role: 'user', content: 'hi' }] } });
    expect((await run(r.thread_id, r.id)).status).toBe('queued');
    await drain();
    const done = await run(r.thread_id, r.id);
    expect(done.status).toBe('completed');
    expect(done.usage!.total_tokens).toBeGreaterThan(0);
    expect(await events(r.id)).toEqual([
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
    const row = await getRunById(s.ctx.store.db, r.id);
    expect(row!.lease_owner).toBeNull();
    expect((await getThread(s.ctx.store.db, P, r.thread_id))!.active_run_id).toBeNull();
  });

  it('requires_action, submit, cancel and expiry all go through the job queue', async () => {
    const tool = {
      type: 'function',
      function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
    };
    const a = await svc.createAssistant(s.ctx, P, { model: 'gpt-4o', tools: [tool] });
    const r = await svc.createThreadAndRun(s.ctx, P, {
      assistant_id: a.id,
      tool_choice: 'required',
      thread: { messages: [{ role: 'user', content: 'x' }] },
    });
    await drain();
    const waiting = await run(r.thread_id, r.id);
    expect(waiting.status).toBe('requires_action');
    const [call] = waiting.required_action!.submit_tool_outputs.tool_calls;
    expect(JSON.parse(call.function.arguments)).toEqual({ q: 'example' });
    const { afterSeq } = await svc.submitToolOutputs(s.ctx, P, r.thread_id, r.id, {
      tool_outputs: [{ tool_call_id: call.id, output: '42' }],
    });
    expect((await eventsAfter(s.ctx.store.db, r.id, afterSeq)).map((e) => e.event)).toEqual([
      'thread.run.step.completed',
      'thread.run.queued',
    ]);
    await drain();
    expect((await run(r.thread_id, r.id)).status).toBe('completed');

    const r2 = await svc.createThreadAndRun(s.ctx, P, {
      assistant_id: a.id,
      thread: { messages: [{ role: 'user', content: 'lookup please' }] },
    });
    await drain();
    expect((await run(r2.thread_id, r2.id)).status).toBe('requires_action');
    expect((await svc.cancelRun(s.ctx, P, r2.thread_id, r2.id)).status).toBe('cancelling');
    await drain();
    expect((await run(r2.thread_id, r2.id)).status).toBe('cancelled');

    const r3 = await svc.createThreadAndRun(s.ctx, P, {
      assistant_id: a.id,
      thread: { messages: [{ role: 'user', content: 'lookup again' }] },
    });
    await drain();
    s.ctx.clock.advance(11 * 60_000);
    await drain();
    const row = await getRunById(s.ctx.store.db, r3.id);
    expect(row!.status).toBe('expired');
    const steps = await runSteps(s.ctx.store.db, r3.id);
    expect(steps.map((x) => stepView(x).status)).toEqual(['expired']);
  });

  it('a run left in progress by a dead worker is taken over: the turn in flight is made again, its cut reply dropped', async () => {
    const a = await svc.createAssistant(s.ctx, P, { model: 'gpt-4o' });
    const r = await svc.createThreadAndRun(s.ctx, P, { assistant_id: a.id, thread: { messages: [{ role: 'user', content: 'hi' }] } });
    const db = s.ctx.store.db;
    const now = s.ctx.clock.nowSeconds();
    // What a killed worker leaves behind: in progress, a lapsed lease, and the start of its reply.
    await db
      .updateTable('thread_runs')
      .set({ status: 'in_progress', started_at: now, lease_owner: 'dead:worker', lease_until: wallNow() - 1 })
      .where('id', '=', r.id)
      .execute();
    const cut = { id: 'msg_cut', project_id: P, thread_id: r.thread_id, created_at: now, assistant_id: a.id, run_id: r.id };
    await db
      .insertInto('thread_messages')
      .values({
        ...cut,
        role: 'assistant',
        content: JSON.stringify([{ type: 'text', text: { value: 'Hal', annotations: [] } }]),
        attachments: null,
        metadata: null,
        status: 'in_progress',
        completed_at: null,
        incomplete_at: null,
        incomplete_details: null,
      })
      .execute();
    await db
      .insertInto('run_steps')
      .values({
        id: 'step_cut',
        project_id: P,
        run_id: r.id,
        thread_id: r.thread_id,
        assistant_id: a.id,
        created_at: now,
        type: 'message_creation',
        status: 'in_progress',
        step_details: JSON.stringify({ type: 'message_creation', message_creation: { message_id: 'msg_cut' } }),
        last_error: null,
        cancelled_at: null,
        completed_at: null,
        expired_at: null,
        failed_at: null,
        usage: null,
        metadata: null,
      })
      .execute();
    await drain();
    const done = await run(r.thread_id, r.id);
    expect(done).toMatchObject({ status: 'completed', last_error: null });
    // One reply, one step: the cut ones are gone, the turn was made once more.
    const messages = await db.selectFrom('thread_messages').select(['id', 'role', 'status']).where('thread_id', '=', r.thread_id).execute();
    expect(messages.map((m) => [m.role, m.status])).toEqual([
      ['user', 'completed'],
      ['assistant', 'completed'],
    ]);
    expect(messages.map((m) => m.id)).not.toContain('msg_cut');
    const steps = await runSteps(db, r.id);
    expect(steps.map((x) => [x.id === 'step_cut', x.type, x.status])).toEqual([[false, 'message_creation', 'completed']]);
    // The taken-over run did not start again: one thread.run.in_progress would be the original's (not written here).
    expect((await events(r.id)).filter((e) => e === 'thread.run.in_progress')).toEqual([]);
    expect((await events(r.id)).filter((e) => e === 'thread.run.completed')).toEqual(['thread.run.completed']);
  });

  it('a run whose execution killed its process --job-max-deaths times is failed, not taken over again', async () => {
    const a = await svc.createAssistant(s.ctx, P, { model: 'gpt-4o' });
    const r = await svc.createThreadAndRun(s.ctx, P, { assistant_id: a.id, thread: { messages: [{ role: 'user', content: 'hi' }] } });
    const db = s.ctx.store.db;
    await db
      .updateTable('thread_runs')
      .set({ status: 'in_progress', lease_owner: 'dead:worker', lease_until: wallNow() - 1 })
      .where('id', '=', r.id)
      .execute();
    // Its execute job was running three times when its process died.
    await db
      .updateTable('jobs')
      .set({ locked_by: 'dead', locked_until: wallNow() - 1, attempts: 3, open_claims: 3 })
      .where('kind', '=', 'run.execute')
      .where('payload', 'like', `%${r.id}%`)
      .execute();
    await drain();
    const failed = await run(r.thread_id, r.id);
    expect(failed).toMatchObject({ status: 'failed', last_error: { code: 'server_error' } });
    expect(failed.last_error!.message).toContain('stopped without finishing 3 times');
  });

  it('a run in requires_action whose worker died stays waiting for its outputs', async () => {
    const a = await svc.createAssistant(s.ctx, P, { model: 'gpt-4o' });
    const r = await svc.createThreadAndRun(s.ctx, P, { assistant_id: a.id, thread: { messages: [{ role: 'user', content: 'hi' }] } });
    await s.ctx.store.db
      .updateTable('thread_runs')
      .set({ status: 'requires_action', lease_owner: 'dead:worker', lease_until: wallNow() - 1 })
      .where('id', '=', r.id)
      .execute();
    expect(await s.ctx.services.assistants.engine.sweep()).toBe(0);
    await drain();
    expect((await run(r.thread_id, r.id)).status).toBe('requires_action');
  });

  it('a live lease held elsewhere is respected: the job comes back later instead of executing twice', async () => {
    const a = await svc.createAssistant(s.ctx, P, { model: 'gpt-4o' });
    const r = await svc.createThreadAndRun(s.ctx, P, { assistant_id: a.id, thread: { messages: [{ role: 'user', content: 'hi' }] } });
    await s.ctx.store.db
      .updateTable('thread_runs')
      .set({ lease_owner: 'other:instance', lease_until: wallNow() + 60_000 })
      .where('id', '=', r.id)
      .execute();
    await drain();
    expect((await run(r.thread_id, r.id)).status).toBe('queued');
    // A lease lasts in wall-clock time: moving the Standin clock past it (within the run's expiry) takes nothing over.
    s.ctx.clock.advance(120_000);
    await drain();
    expect((await run(r.thread_id, r.id)).status).toBe('queued');
    await s.ctx.store.db.updateTable('thread_runs').set({ lease_owner: null, lease_until: null }).where('id', '=', r.id).execute();
    // The job looks again when the other lease would have lapsed, at most one lease later.
    s.ctx.clock.advance(svc.watchMs(s.ctx) + 1000);
    await drain();
    expect((await run(r.thread_id, r.id)).status).toBe('completed');
  });
});
