import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { ClaimLost } from '../core/jobs.js';
import { EventLog } from './event-log.js';
import { ResponseWriter } from './events.js';
import type { CreateResponseRequest, ResponseObject } from './schemas.js';
import { createResponse, runResponse } from './service.js';
import { eventsAfter } from './stream-store.js';

/**
 * The stream of a background response taken over by another run (its first instance died mid-answer): a
 * follower reads one stream — numbers that never repeat or go back, one `response.in_progress` — and a
 * stalled first owner whose claim lapsed writes nothing more. (test/deploy/takeover.test.ts kills a real
 * instance on PostgreSQL.)
 */
describe.each(dialects())('responses: the event log across a takeover (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  const request: CreateResponseRequest = { model: 'gpt-4o-mini', input: 'tell me about lighthouses', background: true, stream: true };
  const logged = async (id: string) =>
    (await eventsAfter(s.ctx.store.db, id, -1, 1000)).map((r) => JSON.parse(r.data) as { type: string; sequence_number: number });

  /** The first owner: it starts the run and streams part of an answer, then dies. */
  async function firstOwnerDies(r: ResponseObject) {
    const log = await EventLog.open(s.ctx, r.id);
    const writer = new ResponseWriter({ ...r, status: 'in_progress' }, s.ctx.clock, log.sink);
    writer.inProgress();
    writer.chunk({ type: 'text', delta: 'You said' });
    await log.settle();
  }

  it('continues the stream after the events the first owner kept: no number twice, one in_progress', async () => {
    const r = await createResponse(s.ctx, 'proj_demo', request);
    await firstOwnerDies(r);
    const before = await logged(r.id);
    expect(before.map((e) => e.type)).toEqual([
      'response.created',
      'response.queued',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
    ]);
    await runResponse(s.ctx, { responseId: r.id, projectId: 'proj_demo', request });
    const events = await logged(r.id);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.filter((e) => e.type === 'response.in_progress')).toHaveLength(1);
    expect(events.slice(0, before.length)).toEqual(before);
    expect(events.at(-1)!.type).toBe('response.completed');
    // A follower picking up after the last event it read gets the rest, in order.
    const res = await s.app.inject({
      method: 'GET',
      url: `/v1/responses/${r.id}?stream=true&starting_after=${before.length - 1}`,
      headers: { authorization: `Bearer ${s.keys.platform}` },
    });
    const seqs = [...res.body.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
    expect(seqs).toEqual(events.slice(before.length).map((e) => e.sequence_number));
  });

  it('a run that never logged in_progress logs it once; a stalled owner whose claim lapsed writes nothing', async () => {
    const r = await createResponse(s.ctx, 'proj_demo', request);
    await runResponse(s.ctx, { responseId: r.id, projectId: 'proj_demo', request });
    const types = (await logged(r.id)).map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(['response.created', 'response.queued', 'response.in_progress']);
    expect(types.filter((t) => t === 'response.in_progress')).toHaveLength(1);

    const other = await createResponse(s.ctx, 'proj_demo', request);
    const lapsed = {
      fence: async () => {
        throw new ClaimLost();
      },
    };
    const zombie = await EventLog.open(s.ctx, other.id, lapsed);
    const writer = new ResponseWriter({ ...other, status: 'in_progress' }, s.ctx.clock, zombie.sink);
    writer.inProgress();
    writer.chunk({ type: 'text', delta: 'late' });
    await expect(zombie.settle()).rejects.toBeInstanceOf(ClaimLost);
    expect((await logged(other.id)).map((e) => e.type)).toEqual(['response.created', 'response.queued']);
  });
});
