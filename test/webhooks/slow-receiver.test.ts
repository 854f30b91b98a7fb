import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { until } from '../fleet/instances.js';
import { startReceiver } from './receiver.js';

const TIMEOUT_MS = 1_500;
const BURST = 300;

/**
 * A receiver that hangs does not hold up other projects' deliveries: once its attempts time out, it may
 * hold a quarter of the delivery slots, and its other deliveries wait (with no attempt counted) while the
 * rest of the queue goes on.
 */
describe.each(dialects())('a slow receiver among others (%s)', (dialect) => {
  let s: TestStandin;
  let hanging: Awaited<ReturnType<typeof startReceiver>>;
  let fast: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true, webhookTimeoutMs: TIMEOUT_MS } });
    await s.listen();
    hanging = await startReceiver(() => ({ status: 200, delayMs: 120_000 }));
    fast = await startReceiver();
  });
  afterAll(async () => {
    await hanging?.close();
    await fast?.close();
    await s?.close();
  });

  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await s.req(method, `/admin/v1${path}`, { key: 'admin', body });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    return r.body;
  };

  it("a burst to a hanging receiver does not hold another project's deliveries back", { timeout: 60_000 }, async () => {
    const other = await admin('POST', '/organizations/org_demo/projects', { name: 'other' });
    await admin('POST', '/projects/proj_demo/webhook_endpoints', { name: 'hangs', url: hanging.url, event_types: ['batch.completed'] });
    const ep = await admin('POST', `/projects/${other.id}/webhook_endpoints`, {
      name: 'fast',
      url: fast.url,
      event_types: ['batch.completed'],
    });
    const trigger = (project: string) => admin('POST', `/projects/${project}/events`, { type: 'batch.completed' });

    await Promise.all(Array.from({ length: BURST }, () => trigger('proj_demo')));
    // The first attempts run out of time: the receiver is known to be slow from then on.
    await until(async () => {
      const row = await s.ctx.store.db
        .selectFrom('webhook_attempts')
        .select('error')
        .where('error', 'like', 'no answer within%')
        .executeTakeFirst();
      return row !== undefined;
    }, 20_000);
    for (let i = 0; i < 5; i++) await trigger(other.id);
    await until(async () => fast.received.length >= 5, 20_000);

    // The other project's events went through while most of the burst had not been tried yet. The first
    // 128 attempts took every slot until they timed out; since then the hanging receiver holds at most 32
    // (a quarter) for a timeout at a time. Before, the burst went on in waves of 128 a timeout apart, and
    // the other project's events waited behind them (at least two waves, 256).
    expect(hanging.received.length, `attempts to the hanging receiver`).toBeLessThan(128 + 2 * 32 + 8);
    const waiting = await s.ctx.store.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('project_id', '=', 'proj_demo')
      .where('attempt_count', '=', 0)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    expect(Number(waiting.n)).toBeGreaterThan(0);
    // Recorded as received (the record is written just after the answer).
    const succeeded = async () =>
      (await admin('GET', `/projects/${other.id}/webhook_endpoints/${ep.id}/deliveries`)).data.filter(
        (d: { status: string }) => d.status === 'succeeded',
      ).length;
    await until(async () => (await succeeded()) === 5);

    // A delivery put off shows when it comes back: each pending delivery whose job is not running now has
    // the job's run_at as its next_attempt_at (one read, so both are seen at one moment).
    const putOff = () =>
      s.ctx.store.db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('jobs as j', (join) => join.on(sql<boolean>`j.id = 'job_' || d.id`))
        .select(['d.id', 'd.next_attempt_at', 'j.run_at', 'j.attempts'])
        .where('d.status', '=', 'pending')
        .where('j.locked_by', 'is', null)
        .where('j.attempts', '>=', 1)
        .execute();
    let put: Awaited<ReturnType<typeof putOff>> = [];
    await until(async () => (put = await putOff()).length > 0, 20_000);
    expect(put.filter((r) => Number(r.next_attempt_at) !== Number(r.run_at))).toEqual([]);
  });
});
