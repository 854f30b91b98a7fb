import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { ClaimLost, createJobQueue, dueWaitsQuery, HandedBack } from './jobs.js';
import { wallNow } from './clock.js';
import { runsTogetherAtOnce, runTogether, type Store } from '../store/db.js';

/**
 * A claim lapses as its worker's visibility timeout runs out, in wall-clock time (moving the Standin clock
 * does not lapse it: clock-claims.test.ts): a test makes it lapse now rather than wait.
 */
const lapseClaims = (store: Store) =>
  store.db
    .updateTable('jobs')
    .set({ locked_until: wallNow() - 1 })
    .where('locked_by', 'is not', null)
    .execute();

/** A handler's two moments: `started()` tells the test it began (`began`); it waits for `open()` (`opened`). */
const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  let started!: () => void;
  const began = new Promise<void>((r) => (started = r));
  return { open, opened, started, began };
};

/** A job row as another instance would have written it, behind this queue's back; held by `lockedUntil` if given. */
const jobRow = (o: { id: string; kind: string; runAt: number; createdAt: number; lockedUntil?: number }) => ({
  id: o.id,
  kind: o.kind,
  payload: '{}',
  run_at: o.runAt,
  attempts: o.lockedUntil === undefined ? 0 : 1,
  open_claims: o.lockedUntil === undefined ? 0 : 1,
  rechecks: 0,
  locked_by: o.lockedUntil === undefined ? null : 'another-instance',
  locked_until: o.lockedUntil ?? null,
  created_at: o.createdAt,
});

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

  it('refills a backlog a quarter of the concurrency at a time, never over it, each job once', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const ran: number[] = [];
    let running = 0;
    let most = 0;
    s.ctx.jobs.register({
      kind: 'test.backlog',
      concurrency: 16,
      handler: async (p: { i: number }) => {
        most = Math.max(most, ++running);
        // Jobs end one by one, at different times.
        await new Promise((r) => setTimeout(r, 1 + ((p.i * 5) % 17) * 2));
        running--;
        ran.push(p.i);
      },
    });
    await s.ctx.store.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 96; i++) await s!.ctx.jobs.enqueue(tx, 'test.backlog', { i });
    });
    const before = s.ctx.jobs.claimsOf('test.backlog');
    const looked = s.ctx.jobs.looks;
    s.ctx.jobs.start();
    for (let t = 0; ran.length < 96 && t < 500; t++) await new Promise((r) => setTimeout(r, 20));
    expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 96 }, (_, i) => i));
    expect(most).toBeLessThanOrEqual(16);
    // One claim per job would be 64 or more; refilled two slots at a time, about 64 / 2.
    expect(s.ctx.jobs.claimsOf('test.backlog') - before).toBeLessThanOrEqual(36);
    // Nor a look for due work per job (26 here when each end looked): an end whose slot waits for the quarter asks nothing.
    expect(s.ctx.jobs.looks - looked).toBeLessThanOrEqual(8);
  });

  it("remove drops a job by its id with the caller's transaction: a rolled-back removal keeps it, a committed one never runs", async () => {
    s = await startTestStandin({ dialect, seed: false });
    const seen: string[] = [];
    s.ctx.jobs.register({ kind: 'test.moot', handler: async (p: { v: string }) => void seen.push(p.v) });
    await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.moot', { v: 'a' }, { id: 'job_moot_a' });
    await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.moot', { v: 'b' }, { id: 'job_moot_b' });
    await expect(
      s.ctx.store.db.transaction().execute(async (tx) => {
        await s!.ctx.jobs.remove(tx, 'job_moot_a');
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    await s.ctx.store.db.transaction().execute((tx) => s!.ctx.jobs.remove(tx, 'job_moot_b'));
    // Removing what is not there is no error.
    await s.ctx.jobs.remove(s.ctx.store.db, 'job_moot_none');
    await s.ctx.jobs.drain();
    expect(seen).toEqual(['a']);
  });

  it('a job due later costs no claim until it is due (nor a NOTIFY waking every instance), and runs once due: here by the timer, on another instance at its timed poll', async () => {
    s = await startTestStandin({ dialect, seed: false });
    let ran = 0;
    s.ctx.jobs.register({ kind: 'test.later', handler: async () => void ran++ });
    s.ctx.jobs.start();
    // The start's own claims (on PostgreSQL also those of its LISTEN, once it listens): until none came for
    // a while. The next timed poll claims nothing: no job is due.
    for (let seen = -1; seen !== s.ctx.jobs.claims;) {
      seen = s.ctx.jobs.claims;
      await new Promise((r) => setTimeout(r, 300));
    }
    const before = s.ctx.jobs.claims;
    await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.later', {}, { runAt: s.ctx.clock.now() + 300 });
    await new Promise((r) => setTimeout(r, 100));
    expect(s.ctx.jobs.claims - before).toBe(0);
    for (let t = 0; ran === 0 && t < 100; t++) await new Promise((r) => setTimeout(r, 10));
    expect(ran).toBe(1);
    if (dialect !== 'postgres') return;
    const other = createJobQueue(s.ctx.store, s.ctx.clock, s.ctx.log);
    let elsewhere = 0;
    other.register({ kind: 'test.elsewhere', handler: async () => void elsewhere++ });
    other.start();
    try {
      await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.elsewhere', {}, { runAt: s.ctx.clock.now() + 300 });
      for (let t = 0; elsewhere === 0 && t < 300; t++) await new Promise((r) => setTimeout(r, 10));
      expect(elsewhere).toBe(1);
    } finally {
      await other.stop();
    }
  });

  it('the timed poll claims only the kinds with work due: an idle second costs no claim, work nothing woke it for still runs', async () => {
    s = await startTestStandin({ dialect, seed: false });
    let ran = 0;
    s.ctx.jobs.register({ kind: 'test.quiet', handler: async () => undefined });
    s.ctx.jobs.register({ kind: 'test.unwoken', handler: async () => void ran++ });
    // Every kind's claims on SQLite; on PostgreSQL this test's kinds only: the suites sharing the database
    // notify the same channel, and a NOTIFY of a kind wakes that kind here too.
    const claims = () =>
      dialect === 'sqlite' ? s!.ctx.jobs.claims : s!.ctx.jobs.claimsOf('test.quiet') + s!.ctx.jobs.claimsOf('test.unwoken');
    s.ctx.jobs.start();
    // The start's own claims; then at least one timed poll with nothing due.
    await new Promise((r) => setTimeout(r, 50));
    const before = claims();
    await new Promise((r) => setTimeout(r, 1300));
    expect(claims() - before).toBe(0);
    // A job written behind the queue's back (as another instance's whose notification was missed): no
    // wake-up, so the next timed poll finds it, and claims its kind alone.
    const now = s.ctx.clock.now();
    await s.ctx.store.db
      .insertInto('jobs')
      .values(jobRow({ id: 'job_unwoken', kind: 'test.unwoken', runAt: now, createdAt: now }))
      .execute();
    for (let t = 0; ran === 0 && t < 300; t++) await new Promise((r) => setTimeout(r, 10));
    expect(ran).toBe(1);
    // Its kind's claim (and, once the job ends, the claim that refills its slot): not one for every kind.
    await new Promise((r) => setTimeout(r, 50));
    expect(claims() - before).toBeLessThanOrEqual(2);
  });

  it('the timed look for due work finds a due job behind many claimed ones, and reads by index, not every job', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const ran: string[] = [];
    s.ctx.jobs.register({ kind: 'test.crowded', handler: async (_p, job) => void ran.push(job.id) });
    const now = s.ctx.clock.now();
    const job = (id: string, runAt: number, lockedUntil?: number) =>
      jobRow({ id, kind: 'test.crowded', runAt, createdAt: now, lockedUntil });
    // A start on SQLite takes back every claim (it owns the queue): the claims below are made after it.
    s.ctx.jobs.start();
    await new Promise((r) => setTimeout(r, 50));
    // Written behind the queue's back, so that only the timed look finds them: 300 jobs held by live claims
    // of another worker, all due before the one job nobody holds.
    const held = Array.from({ length: 300 }, (_, i) => job(`job_held_${i}`, now - 10_000 + i, wallNow() + 3_600_000));
    for (let i = 0; i < held.length; i += 100)
      await s.ctx.store.db
        .insertInto('jobs')
        .values(held.slice(i, i + 100))
        .execute();
    await s.ctx.store.db.insertInto('jobs').values(job('job_free', now)).execute();
    for (let t = 0; ran.length === 0 && t < 300; t++) await new Promise((r) => setTimeout(r, 10));
    expect(ran).toEqual(['job_free']);
    if (dialect === 'sqlite') {
      const { sql: text, parameters } = dueWaitsQuery(s.ctx.store.db, ['test.crowded', 'test.other'], { now, wall: wallNow() }).compile();
      const plan = await s.ctx.store.db.executeQuery(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
      const details = (plan.rows as { detail: string }[]).map((r) => r.detail);
      expect(parameters.length).toBeGreaterThan(0);
      expect(details.filter((d) => /\bjobs\b/.test(d))).not.toHaveLength(0);
      expect(details.filter((d) => /^SCAN jobs/.test(d))).toEqual([]);
    }
  });

  it('a start with its first poll later claims nothing until then; work enqueued meanwhile runs at once', async () => {
    if (dialect !== 'sqlite') return;
    s = await startTestStandin({ dialect, seed: false });
    const ran: string[] = [];
    s.ctx.jobs.register({ kind: 'test.first', handler: async (p: { v: string }) => void ran.push(p.v) });
    s.ctx.jobs.register({ kind: 'test.other', handler: async (p: { v: string }) => void ran.push(p.v) });
    await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.first', { v: 'left from before' });
    // The enqueue's wake comes on the next turn of the event loop: before the start, it claims nothing.
    await new Promise((r) => setImmediate(r));
    const before = s.ctx.jobs.claims;
    s.ctx.jobs.start({ firstPollInMs: 60_000 });
    await new Promise((r) => setTimeout(r, 100));
    expect(s.ctx.jobs.claims - before).toBe(0);
    expect(ran).toEqual([]);
    // An enqueue wakes its kind at once; the loop, awake, then finds what else is due (the job left from before).
    await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.other', { v: 'enqueued' });
    for (let t = 0; ran.length < 2 && t < 200; t++) await new Promise((r) => setTimeout(r, 10));
    expect(ran[0]).toBe('enqueued');
    expect([...ran].sort()).toEqual(['enqueued', 'left from before']);
  });

  it('reclaims a job whose worker died once its visibility timeout lapses', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const { store } = s.ctx;
    const seen: number[] = [];
    s.ctx.jobs.register({ kind: 'test.crash', visibilityMs: 30_000, handler: async (_p, job) => void seen.push(job.attempts) });
    await s.ctx.jobs.enqueue(store.db, 'test.crash', {});
    // A claim by a worker that then died: locked, attempts counted, never finished.
    await store.db
      .updateTable('jobs')
      .set({ locked_by: 'dead-worker', locked_until: wallNow() + 30_000, attempts: 1 })
      .execute();
    await s.ctx.jobs.drain();
    expect(seen).toEqual([]);
    await lapseClaims(store);
    await s.ctx.jobs.drain();
    expect(seen).toEqual([2]);
  });

  it('renews a running claim, so a job longer than its visibility timeout is not taken from a live worker', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const { clock, store, log } = s.ctx;
    const other = createJobQueue(store, clock, log);
    const runs: string[] = [];
    const long = (who: string) => async () => {
      runs.push(who);
      await new Promise((r) => setTimeout(r, 1200));
    };
    s.ctx.jobs.register({ kind: 'test.long', visibilityMs: 300, handler: long('first') });
    other.register({ kind: 'test.long', visibilityMs: 300, handler: long('other') });
    await s.ctx.jobs.enqueue(store.db, 'test.long', {});
    const first = s.ctx.jobs.drain();
    // The other worker looks again and again while the first one works four visibility timeouts long.
    for (let i = 0; i < 10 && runs.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 8; i++) {
      await other.drain();
      await new Promise((r) => setTimeout(r, 100));
    }
    await first;
    expect(runs).toEqual(['first']);
    expect(await store.db.selectFrom('jobs').selectAll().execute()).toEqual([]);
  });

  it('a store outage is logged once when claims start failing and once when they work again, not once per attempt', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const { clock, store } = s.ctx;
    const lines: { level: string; o: Record<string, unknown>; msg?: string }[] = [];
    const log = {
      error: (o: unknown, msg?: string) => void lines.push({ level: 'error', o: o as Record<string, unknown>, msg }),
      warn: (o: unknown, msg?: string) => void lines.push({ level: 'warn', o: o as Record<string, unknown>, msg }),
      info: () => undefined,
      debug: () => undefined,
    };
    const queue = createJobQueue(store, clock, log);
    queue.register({ kind: 'test.a', handler: async () => undefined });
    queue.register({ kind: 'test.b', handler: async () => undefined });
    // The outage: every claim fails (the table is gone for a moment).
    await sql`alter table jobs rename to jobs_away`.execute(store.db);
    for (let i = 0; i < 5; i++) await queue.drain();
    await sql`alter table jobs_away rename to jobs`.execute(store.db);
    await queue.enqueue(store.db, 'test.a', {});
    await queue.drain();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['error', 'claiming jobs failed; retrying, and logging once when it works again'],
      ['warn', 'claiming jobs works again after 10 failed attempts'],
    ]);
    expect(lines[0].o).not.toHaveProperty('err');
    expect(lines[1].o).toMatchObject({ failures: 10 });
  });

  it('a stop past its grace hands a running job back: claim released, handler aborted, another worker takes it at once', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const { clock, store, log } = s.ctx;
    const stopping = createJobQueue(store, clock, log, { leaseMs: 60_000 });
    let reason: unknown;
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    // A handler that would outlive any drain: it ends only when its claim is aborted.
    stopping.register({
      kind: 'test.endless',
      handler: (_p, job) =>
        new Promise<void>((resolve) => {
          started();
          job.signal.addEventListener('abort', () => ((reason = job.signal.reason), resolve()));
        }),
    });
    await stopping.enqueue(store.db, 'test.endless', {});
    stopping.start();
    await running;
    await stopping.stop(50);
    expect(reason).toBeInstanceOf(HandedBack);
    const [row] = await store.db.selectFrom('jobs').selectAll().execute();
    // Released, not lapsed: due now for another worker, and not counted as a death of its handler.
    expect(row).toMatchObject({ locked_by: null, locked_until: null, attempts: 1 });
    expect(Number(row.open_claims)).toBe(0);
    const seen: number[] = [];
    s.ctx.jobs.register({ kind: 'test.endless', handler: async (_p, job) => void seen.push(job.attempts) });
    await s.ctx.jobs.drain();
    expect(seen).toEqual([2]);
  });

  it('a worker whose claim another took is told (signal) and its fenced commit writes nothing', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const { clock, store, log } = s.ctx;
    const stale = createJobQueue(store, clock, log);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let began!: () => void;
    const started = new Promise<void>((r) => (began = r));
    const outcome: { aborted?: boolean; fenced?: unknown; together?: unknown } = {};
    const insertSetting = (key: string) => store.db.insertInto('settings').values({ key, value: 'wrote' });
    stale.register({
      kind: 'test.zombie',
      visibilityMs: 30_000,
      handler: async (_p, job) => {
        began();
        await held; // the zombie stalls
        await store.db
          .transaction()
          .execute(async (tx) => {
            await job.fence(tx);
            await tx.insertInto('settings').values({ key: 'zombie', value: 'wrote' }).execute();
          })
          .catch((err: unknown) => (outcome.fenced = err));
        // The fence as a statement of a transaction sent in one go (PostgreSQL): it fails, and the whole with it.
        if (runsTogetherAtOnce(store.db))
          outcome.together = await runTogether(store.db, [job.fenceQuery(store.db), insertSetting('zombie together')]).catch((e) => e);
        outcome.aborted = job.signal.aborted;
      },
    });
    const fresh: number[] = [];
    s.ctx.jobs.register({
      kind: 'test.zombie',
      visibilityMs: 30_000,
      handler: async (_p, job) => {
        fresh.push(job.attempts);
        if (runsTogetherAtOnce(store.db)) await runTogether(store.db, [job.fenceQuery(store.db), insertSetting('fresh together')]);
      },
    });
    await stale.enqueue(store.db, 'test.zombie', {});
    const zombie = stale.drain();
    await started;
    await lapseClaims(store); // its claim lapses; the live worker takes the job over and finishes it
    await s.ctx.jobs.drain();
    release();
    await zombie;
    expect(fresh).toEqual([2]);
    expect(outcome.fenced).toBeInstanceOf(ClaimLost);
    expect(outcome.aborted).toBe(true);
    expect(await store.db.selectFrom('settings').selectAll().where('key', '=', 'zombie').execute()).toEqual([]);
    if (dialect === 'postgres') {
      expect(outcome.together).toMatchObject({ code: '22012' });
      const keys = await store.db.selectFrom('settings').select('key').where('key', 'like', '% together').execute();
      expect(keys).toEqual([{ key: 'fresh together' }]);
    }
  });

  it('a recheck of held work is not counted as an attempt', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const seen: number[] = [];
    s.ctx.jobs.register({
      kind: 'test.held',
      handler: async (_p, job) => {
        seen.push(job.attempts);
        if (seen.length <= 3) return { retryAt: s!.ctx.clock.now(), recheck: true };
        if (seen.length === 4) return { retryAt: s!.ctx.clock.now() };
      },
    });
    await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.held', {});
    await s.ctx.jobs.drain();
    // Three rechecks, then the first attempt, which asks for a plain retry: the second attempt.
    expect(seen).toEqual([1, 1, 1, 1, 2]);
  });

  it.each(['completes', 'asks for a retry', 'throws'] as const)(
    'a worker whose claim lapsed and was claimed again changes nothing when it %s; the newer claim decides',
    async (ending) => {
      s = await startTestStandin({ dialect, seed: false });
      const { clock, store } = s.ctx;
      const first = gate();
      const second = gate();
      const stale = createJobQueue(store, clock, s.ctx.log);
      stale.register({
        kind: 'test.fence',
        visibilityMs: 30_000,
        retryDelayMs: 1_000,
        handler: async () => {
          first.started();
          await first.opened;
          if (ending === 'throws') throw new Error('the stale worker failed');
          return ending === 'asks for a retry' ? { retryAt: clock.now() + 1_000 } : undefined;
        },
      });
      s.ctx.jobs.register({
        kind: 'test.fence',
        visibilityMs: 30_000,
        handler: async () => {
          second.started();
          await second.opened;
        },
      });
      const id = await s.ctx.jobs.enqueue(store.db, 'test.fence', {});
      const row = () =>
        store.db.selectFrom('jobs').select(['attempts', 'locked_until', 'run_at', 'open_claims']).where('id', '=', id).executeTakeFirst();

      const staleDrain = stale.drain();
      const freshDrain = first.began.then(async () => {
        await lapseClaims(store); // the first claim lapses
        return s!.ctx.jobs.drain();
      });
      try {
        await second.began;
        const claimedAgain = await row();
        expect(claimedAgain?.attempts).toBe(2);

        first.open();
        await staleDrain;
        // The stale worker's end left the second claim as it was: the job is still there, still claimed. A retry
        // or a throw finds the claim taken and takes its own out of the count; a completion that did not see
        // the claim taken (its heartbeat had not run yet) ends in the grouped deletion, which tells it nothing.
        expect(await row()).toEqual({ ...claimedAgain, open_claims: ending === 'completes' ? 2 : 1 });

        second.open();
        await freshDrain;
        expect(await row()).toBeUndefined();
      } finally {
        // A failed expectation must not leave a handler waiting (closing the Standin waits for it).
        first.open();
        second.open();
        await Promise.allSettled([staleDrain, freshDrain]);
      }
    },
  );

  it('a handler that ends after its claim lapsed and was taken is not counted as a death', async () => {
    s = await startTestStandin({ dialect, seed: false });
    const { clock, store, log } = s.ctx;
    const stale = createJobQueue(store, clock, log);
    const first = gate();
    const second = gate();
    // The stale worker's heartbeat (a third of 300 ms) finds its claim taken, and its handler ends on the signal.
    stale.register({
      kind: 'test.lapse',
      visibilityMs: 300,
      handler: (_p, job) => new Promise<void>((r) => (first.started(), job.signal.addEventListener('abort', () => r()))),
    });
    s.ctx.jobs.register({ kind: 'test.lapse', visibilityMs: 30_000, handler: () => (second.started(), second.opened) });
    const id = await stale.enqueue(store.db, 'test.lapse', {});
    const openClaims = async () =>
      Number((await store.db.selectFrom('jobs').select('open_claims').where('id', '=', id).executeTakeFirstOrThrow()).open_claims);
    const staleDrain = stale.drain();
    await first.began;
    await lapseClaims(store);
    const freshDrain = s.ctx.jobs.drain();
    try {
      await second.began;
      await staleDrain;
      // The two claims were open; the stale one's end takes it back: the live claim alone is counted.
      expect(await openClaims()).toBe(1);
    } finally {
      second.open();
      await Promise.allSettled([staleDrain, freshDrain]);
    }
  });

  describe('a job whose process keeps dying while it runs', () => {
    /** A claim by a worker that then died, `times` in a row: each counted before its handler ran. */
    async function diedWhileRunning(times: number) {
      const { store } = s!.ctx;
      await store.db
        .updateTable('jobs')
        .set({ locked_by: 'dead-worker', locked_until: wallNow() - 1, attempts: times, open_claims: times })
        .execute();
    }

    it('runs again after fewer deaths than the limit, then is failed without running, its kind told why', async () => {
      s = await startTestStandin({ dialect, seed: false });
      const ran: number[] = [];
      const told: [unknown, string][] = [];
      s.ctx.jobs.register({
        kind: 'test.poison',
        handler: async (_p, job) => void ran.push(job.attempts),
        onAbandon: async (payload, reason) => void told.push([payload, reason]),
      });
      await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.poison', { fileId: 'file_1' });
      await diedWhileRunning(2);
      await s.ctx.jobs.drain();
      expect(ran).toEqual([3]);
      expect(told).toEqual([]);

      await s.ctx.jobs.enqueue(s.ctx.store.db, 'test.poison', { fileId: 'file_2' });
      await diedWhileRunning(3);
      await s.ctx.jobs.drain();
      expect(ran).toEqual([3]);
      expect(told).toEqual([[{ fileId: 'file_2' }, expect.stringContaining('stopped without finishing 3 times in a row')]]);
      expect(await s.ctx.store.db.selectFrom('jobs').selectAll().execute()).toEqual([]);
    });

    it('counts deaths in a row: a handler that ends (a retry, a throw) starts the count again', async () => {
      s = await startTestStandin({ dialect, seed: false });
      const { store, clock } = s.ctx;
      let calls = 0;
      s.ctx.jobs.register({
        kind: 'test.flaky',
        retryDelayMs: 1_000,
        handler: async () => {
          calls++;
          if (calls === 1) throw new Error('flaky');
          return { retryAt: clock.now() + 1_000 };
        },
      });
      const id = await s.ctx.jobs.enqueue(store.db, 'test.flaky', {});
      const openClaims = async () =>
        (await store.db.selectFrom('jobs').select('open_claims').where('id', '=', id).executeTakeFirstOrThrow()).open_claims;
      await diedWhileRunning(2);
      await s.ctx.jobs.drain();
      expect(calls).toBe(1);
      expect(await openClaims()).toBe(0);
      clock.advance(1_000);
      await s.ctx.jobs.drain();
      expect(calls).toBe(2);
      expect(await openClaims()).toBe(0);
    });

    it('keeps a job whose owner could not record the failure, and tries that again without running it', async () => {
      s = await startTestStandin({ dialect, seed: false });
      const { store, clock } = s.ctx;
      let ran = 0;
      let tries = 0;
      s.ctx.jobs.register({
        kind: 'test.unrecorded',
        retryDelayMs: 1_000,
        handler: async () => void ran++,
        onAbandon: async () => {
          if (++tries === 1) throw new Error('the database blinked');
        },
      });
      await s.ctx.jobs.enqueue(store.db, 'test.unrecorded', {});
      await diedWhileRunning(5);
      await s.ctx.jobs.drain();
      expect([ran, tries]).toEqual([0, 1]);
      expect(await store.db.selectFrom('jobs').select('open_claims').execute()).toEqual([{ open_claims: 6 }]);
      clock.advance(1_000);
      await s.ctx.jobs.drain();
      expect([ran, tries]).toEqual([0, 2]);
      expect(await store.db.selectFrom('jobs').selectAll().execute()).toEqual([]);
    });

    it('takes its limit from the queue options', async () => {
      s = await startTestStandin({ dialect, seed: false });
      const { store, clock, log } = s.ctx;
      const strict = createJobQueue(store, clock, log, { maxDeaths: 1 });
      let ran = 0;
      const told: string[] = [];
      strict.register({ kind: 'test.strict', handler: async () => void ran++, onAbandon: async (_p, reason) => void told.push(reason) });
      await strict.enqueue(store.db, 'test.strict', {});
      await diedWhileRunning(1);
      await strict.drain();
      expect(ran).toBe(0);
      expect(told).toHaveLength(1);
    });
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
