import { randomUUID } from 'node:crypto';
import { sql, type Compilable, type CompiledQuery, type Kysely } from 'kysely';
import { wallNow, type Clock } from './clock.js';
import { newId } from './ids.js';
import { precompiledQuery, precompiledRows, precompiledWrite, queryAlone, runAlone, type Db, type Exec, type Store } from '../store/db.js';
import type { DB } from '../store/schema.js';
import { groupStatement } from '../store/group-commit.js';
import { keepListening, notify, type Listening } from '../store/listen.js';
import { logWorkTakenOver } from './instance-events.js';
import { outageLog } from './outage-log.js';

/**
 * A durable job queue in the database (the outbox's worker side). Each job kind is declared once with
 * its handler, concurrency and visibility timeout (a typed catalog, as in trigger.dev's redis-worker).
 * Workers claim due jobs — with PostgreSQL `FOR UPDATE SKIP LOCKED`, so any number of instances share
 * the work and each job runs once at a time — and a crashed worker's claim lapses after the visibility
 * timeout, so nothing is lost. Enqueueing inside a transaction commits the job with the state change.
 *
 * A claim is fenced: every claim adds one to `attempts`, so `(id, attempts)` names one claim, and a worker
 * finishes, retries or drops a job only while its claim is the job's latest. A worker whose claim lapsed
 * (it stalled) and whose job another worker has claimed since changes nothing when it ends: the newer
 * claim decides.
 *
 * When a job runs (`run_at`) is Standin-clock time: moving the clock makes work due. How long a claim
 * lasts (`locked_until`) is wall-clock time, as the life of a process is: moving the clock an hour ahead
 * does not lapse the claims of jobs that are running, which would run them again (a webhook sent twice).
 *
 * A poison job cannot crash-loop: every claim also adds one to `open_claims`, committed before the
 * handler runs, and any end of the handler (done, a retry, a throw) sets it back to 0. A claim that finds
 * it past `maxDeaths` has met a job whose handler was running that many times when its process died (or
 * its claim lapsed); the job is failed instead of run again, and its kind's `onAbandon` is told why. A
 * handler that ends after its claim lapsed and was taken takes that claim back out (`endedAfterLapse`).
 *
 * A claim is renewed while its handler runs (a heartbeat every third of the visibility timeout), so the
 * timeout can be short — the time work waits on an instance that died (`--lease-ms`) — without a live
 * instance's long job being taken from it. A renewal that finds the claim gone (another worker took the
 * job after this one stalled) aborts the handler's `signal`; a handler fences its commits with
 * `fence(tx)`, so a zombie that wakes up commits nothing over the new owner.
 *
 * A handler that only looked whether its work may go on (held work, src/holds) returns `recheck: true`
 * with its `retryAt`: that claim is not counted as an attempt (`rechecks` counts it instead; `attempts`
 * stays the fencing token).
 */
export interface JobDefinition<P = any> {
  kind: string;
  /**
   * Runs one job. Return `{ retryAt }` (Standin clock ms) to run it again later (with `recheck: true`,
   * not counted as an attempt); throwing retries after `retryDelayMs`.
   */
  handler: (payload: P, job: JobClaim) => Promise<void | { retryAt: number; recheck?: boolean }>;
  /** Jobs of this kind run at once in one process. */
  concurrency?: number;
  /** How long a claim lasts unless renewed before another worker may take the job (ms; default: the queue's `leaseMs`). */
  visibilityMs?: number;
  /** Delay after an unexpected throw (ms). */
  retryDelayMs?: number;
  /** Give up (and drop the job) after this many attempts; handlers that own retries set it high. */
  maxAttempts?: number;
  /**
   * Told when the job is failed without running because its handler never ended, `maxDeaths` times in a
   * row (a crash-looping poison job): the owning area marks its object failed with `reason`.
   */
  onAbandon?: (payload: P, reason: string) => Promise<void>;
  /** Its handler logs `work.taken_over` itself, naming the object it takes over (the run engine): the queue does not. */
  logsTakeover?: boolean;
}

/** One claim of a job, as its handler sees it. */
export interface JobClaim {
  id: string;
  /** Attempts so far, this one included (rechecks of held work are not counted). */
  attempts: number;
  /** Aborted when this claim is lost: another worker claimed the job after this one stopped renewing it. */
  signal: AbortSignal;
  /**
   * Inside the transaction of the handler's commit: throws ClaimLost unless this claim is still the
   * job's latest (and renews it). On PostgreSQL it locks the job's row until the commit, so no other
   * worker claims the job in between.
   */
  fence(tx: Exec): Promise<void>;
  /**
   * `fence` as a statement to send with others in one transaction (store/db.ts `runTogether`): it renews
   * this claim and fails (a division by zero) unless the claim is still the job's latest, which rolls the
   * transaction back. PostgreSQL only; the caller learns why it failed from `fence` afterwards.
   */
  fenceQuery(db: Exec): Compilable<unknown>;
}

/** The abort reason of `signal` when this process stops and hands the job back to the queue. */
export class HandedBack extends Error {
  constructor() {
    super('this instance stopped and handed the job back');
  }
}

/** Thrown by `fence` (and the abort reason of `signal`): another worker owns the job now. */
export class ClaimLost extends Error {
  constructor() {
    super('another worker claimed this job after this claim lapsed');
  }
}

/** Settings of the queue. */
export interface JobQueueOptions {
  /** Claims in a row whose handler never ended (its process died) after which a job is failed. */
  maxDeaths?: number;
  /** The visibility timeout of kinds that set none (ms; `--lease-ms`). */
  leaseMs?: number;
}

/** `--lease-ms`'s default: work of an instance that died waits this long (ms) before another takes it over. */
export const DEFAULT_LEASE_MS = 10_000;

/** `--job-max-deaths`'s default: a job may die with its process three times, the fourth claim fails it. */
export const DEFAULT_MAX_DEATHS = 3;

export interface JobQueue {
  register(def: JobDefinition): void;
  /** Adds a job. Pass the transaction of the state change so both commit together. */
  enqueue(exec: Exec, kind: string, payload: unknown, opts?: { runAt?: number; id?: string }): Promise<string>;
  /** Adds jobs of one kind, due now, with a statement per ENQUEUE_ROWS of them (a file batch's ingestions); their ids. */
  enqueueAll(exec: Exec, kind: string, payloads: readonly unknown[]): Promise<string[]>;
  /**
   * Drops a job by its id (one its enqueue named), in the caller's transaction: work that became moot
   * with the state change. A handler running it meanwhile ends as any stale claim does (its end changes nothing).
   */
  remove(exec: Exec, id: string): Promise<void>;
  /** Wakes the workers of `kind` (or of every kind) now: after a commit that enqueued work of that kind. */
  wake(kind?: string): void;
  /**
   * Starts claiming. `firstPollInMs`: the first poll of every kind comes that long after (a serving
   * process: its start does not pay for a claim of each kind before its first request); a job enqueued or
   * woken meanwhile is claimed at once, as always.
   */
  start(opts?: { firstPollInMs?: number }): void;
  /**
   * Stops claiming and waits up to `graceMs` for running handlers; those still running then are handed
   * back: their claims released (and, on PostgreSQL, the other instances woken), their `signal` aborted.
   */
  stop(graceMs?: number): Promise<void>;
  /** Runs due work until none is left (tests and `standin` CLI one-shots). */
  drain(timeoutMs?: number): Promise<void>;
  /** Claim statements sent so far (for tests and benches). */
  readonly claims: number;
  /** Looks for due work (the statement of `dueWaitsQuery`) sent so far (for tests and benches). */
  readonly looks: number;
  /**
   * Claim statements sent so far for one kind (for tests: on PostgreSQL another deployment's NOTIFY in the
   * same database may wake other kinds).
   */
  claimsOf(kind: string): number;
}

const POLL_MS = 1000;

/** The ids a job's payload names (`responseId`, `batchId` …), for the takeover's log line. */
function refsOf(payload: string): Record<string, string> {
  try {
    const p = JSON.parse(payload) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(p).filter(([k, v]) => /Id$/.test(k) && typeof v === 'string')) as Record<string, string>;
  } catch {
    return {};
  }
}

/**
 * A statement of the queue built and compiled by Kysely once, then given each call's values by name (the
 * loop runs its claim and its look for due work every second even when idle: building them anew each time
 * was most of an idle process's work). `build` receives sentinel values for the named parameters.
 */
function compiledOnce<A extends Record<string, unknown>, R>(names: readonly (keyof A & string)[], build: (args: A) => Compilable<R>) {
  type Slot = { name: keyof A } | { value: unknown };
  let once: { compiled: CompiledQuery<R>; order: Slot[] } | undefined;
  return (args: A): Compilable<R> => {
    if (!once) {
      const sentinels = Object.fromEntries(names.map((n, i) => [n, `\u0000job${i}\u0000`])) as unknown as A;
      const compiled = build(sentinels).compile();
      const order = compiled.parameters.map((p): Slot => {
        // eslint-disable-next-line no-control-regex -- the sentinels are NUL-delimited so no real value can match
        const m = typeof p === 'string' ? /^\u0000job(\d+)\u0000$/.exec(p) : null;
        return m ? { name: names[Number(m[1])] } : { value: p };
      });
      once = { compiled, order };
    }
    const { compiled, order } = once;
    const parameters = order.map((slot) => ('name' in slot ? args[slot.name] : slot.value));
    return { compile: () => ({ ...compiled, parameters }) };
  };
}

/** Per kind, when its soonest job can be claimed: its first unclaimed job's run_at, and the soonest wait of its claimed ones. */
export type DueWaits = { kind: string; next_run: number | string | null; held: number | string | null };

/**
 * When each kind's next job can be claimed. A job is due when its run_at has come (Standin clock) and its
 * claim, if any, has lapsed (wall clock): a kind's wait is its soonest job's (a running job is not due, or
 * the loop would spin while it runs). Read per kind by its indexes rather than over every job (the loop
 * looks every second; a scan of 100,000 jobs held SQLite's thread 40 ms): the first job in run_at order
 * that no live claim holds, and the jobs a live claim holds (a job never waits less than until its run_at,
 * so none after that first one is sooner).
 */
export function dueWaitsQuery(
  db: Kysely<DB>,
  kinds: readonly string[],
  a: { now: number | string; wall: number | string },
): Compilable<DueWaits> {
  const untilRun = sql<number>`run_at - ${a.now}`;
  const untilLapse = sql<number>`locked_until - ${a.wall}`;
  // Kinds are the queue's own names (code, not input): written into the statement as literals.
  const ofKind = (kind: string) =>
    db.selectNoFrom((eb) => [
      sql.lit(kind).as('kind'),
      eb
        .selectFrom('jobs')
        .select('run_at')
        .where('kind', '=', sql.lit(kind))
        .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', a.wall as number)]))
        .orderBy('run_at')
        .limit(1)
        .as('next_run'),
      eb
        .selectFrom('jobs')
        .select(sql<number>`min(case when ${untilLapse} > ${untilRun} then ${untilLapse} else ${untilRun} end)`.as('held'))
        .where('kind', '=', sql.lit(kind))
        .where('locked_until', '>', a.wall as number)
        .as('held'),
    ]);
  const [first, ...rest] = kinds.map(ofKind);
  return rest.reduce((q, k) => q.unionAll(k), first) as unknown as Compilable<DueWaits>;
}

/** Jobs an insert at most (enqueueAll). */
const ENQUEUE_ROWS = 128;
/** The insert of jobs, and the delete of one: compiled once (a run queues its watchdog and drops it). */
const insertJobStatement = precompiledRows<DB['jobs']>(
  ['id', 'kind', 'payload', 'run_at', 'attempts', 'open_claims', 'rechecks', 'locked_by', 'locked_until', 'created_at'],
  (db, rows) => db.insertInto('jobs').values(rows),
);
const removeJob = precompiledWrite(['id'], (db, a: { id: string }) => db.deleteFrom('jobs').where('id', '=', a.id));

/** One claim of a job: `attempts` counts claims, so it is the claim's fencing token. */
interface Claimed {
  id: string;
  attempts: number;
}

/** `open_claims` less the claim of a handler that ended without dying (a hand-back, an end after its claim lapsed). */
const oneClaimLess = sql<number>`case when open_claims > 0 then open_claims - 1 else 0 end`;

type Definition = Required<Omit<JobDefinition, 'onAbandon' | 'logsTakeover'>> & Pick<JobDefinition, 'onAbandon' | 'logsTakeover'>;

/** Every transaction of a job that fences runs it (an ingestion: one to three a file): compiled once. */
const renewStatement = precompiledWrite<{ until: number; id: string; attempts: number; worker: string }>(
  ['until', 'id', 'attempts', 'worker'],
  (db, a) =>
    db
      .updateTable('jobs')
      .set({ locked_until: a.until })
      .where('id', '=', a.id)
      .where('attempts', '=', a.attempts)
      .where('locked_by', '=', a.worker),
);

/** renewStatement as one that fails when it renews nothing (JobClaim.fenceQuery). */
const fenceStatement = precompiledQuery<{ until: number; id: string; attempts: number; worker: string }, { held: number }>(
  ['until', 'id', 'attempts', 'worker'],
  (db, a) =>
    db
      .with('renewed', (w) =>
        w
          .updateTable('jobs')
          .set({ locked_until: a.until })
          .where('id', '=', a.id)
          .where('attempts', '=', a.attempts)
          .where('locked_by', '=', a.worker)
          .returning('id'),
      )
      .selectFrom('renewed')
      .select(sql<number>`1 / count(*)`.as('held')),
);

export function createJobQueue(
  store: Store,
  clock: Clock,
  log: {
    error: (o: unknown, msg?: string) => void;
    warn: (o: unknown, msg: string) => void;
    info: (o: unknown, msg: string) => void;
    debug: (o: unknown, msg?: string) => void;
  },
  options: JobQueueOptions = {},
): JobQueue {
  const maxDeaths = options.maxDeaths ?? DEFAULT_MAX_DEATHS;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const defs = new Map<string, Definition>();
  const running = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  // What a stop hands back: each running claim, its kind and its abort.
  const claimsHeld = new Map<Promise<void>, { kind: string; job: Claimed; ac: AbortController }>();
  const workerId = randomUUID();
  let started = false;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  /** When `timer` fires (performance.now() ms); Infinity when none is set. */
  let timerAt = Infinity;
  /** When the loop's last look for due work said to poll next (performance.now() ms). */
  let pollAt = 0;
  let looks = 0;
  let ticking = false;
  let again = false;
  let listening: Listening | undefined;
  // Kinds whose last claim came back short: nothing more is due for them until an enqueue, a wake, a
  // NOTIFY of that kind, a clock move or the next timed poll. Skipping them saves a claim per kind per tick.
  const idle = new Set<string>();
  // Kinds whose last claim came back full: more is waiting. Their slots are refilled a quarter of the
  // concurrency at a time instead of one by one as jobs end, so a backlog costs a claim per batch of jobs.
  const backlog = new Set<string>();
  // Finished jobs are deleted under group commit: a burst of jobs ending together costs one write, not
  // one each. A crash before that commit runs those jobs again, which at-least-once already allows.
  // One statement, no transaction around it (on PostgreSQL one pipelined round trip, store/pipeline.ts).
  const finished = groupStatement<Claimed>(
    () => store.db,
    (db, jobs) => db.deleteFrom('jobs').where((eb) => eb.or(jobs.map((j) => eb.and({ id: j.id, attempts: j.attempts })))),
  );

  /**
   * Retries or drops a job, if this worker's claim is still its latest; a stale claim's write is a no-op.
   * A retry after the handler ended clears `open_claims`; `ended: false` keeps it (the handler never ran).
   */
  async function settle(job: Claimed, runAt: number | 'drop', ended = true, recheck = false) {
    const n = await runAlone(
      store.db,
      runAt === 'drop'
        ? store.db.deleteFrom('jobs').where('id', '=', job.id).where('attempts', '=', job.attempts)
        : store.db
            .updateTable('jobs')
            .set({
              run_at: runAt,
              locked_by: null,
              locked_until: null,
              ...(ended ? { open_claims: 0 } : {}),
              ...(recheck ? { rechecks: sql<number>`rechecks + 1` } : {}),
            })
            .where('id', '=', job.id)
            .where('attempts', '=', job.attempts),
    );
    if (n > 0) return;
    log.debug({ job: job.id, attempts: job.attempts }, 'job was claimed again after this claim lapsed; its end changes nothing');
    if (ended) await endedAfterLapse(job);
  }

  /**
   * A handler whose claim lapsed (its process stalled, a loaded machine) and was taken ended all the
   * same: its process lived, so its claim is taken back out of `open_claims`. Counted, a few lapses of a
   * live instance's claims would fail a job as though it killed its process (`maxDeaths`).
   */
  async function endedAfterLapse(job: Claimed) {
    await store.db
      .updateTable('jobs')
      .set({ open_claims: oneClaimLess })
      .where('id', '=', job.id)
      .where('attempts', '>', job.attempts)
      .execute()
      .catch((err: unknown) => log.warn({ err, job: job.id }, 'taking a lapsed claim back out of the count failed'));
  }

  // A store outage fails every claim and renewal until it ends: logged once each, with a count at the end.
  const claimOutage = outageLog(log, 'claiming jobs');
  const renewOutage = outageLog(log, 'renewing job claims');

  type ClaimArgs = { kind: string; now: number; wall: number; n: number; until: number; worker: string };
  const claimStatement = compiledOnce<ClaimArgs, { id: string; payload: string; attempts: number; open_claims: number; rechecks: number }>(
    ['kind', 'now', 'wall', 'n', 'until', 'worker'],
    (a) => {
      const due = store.db
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', a.kind)
        .where('run_at', '<=', a.now)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', a.wall)]))
        .orderBy('run_at')
        .limit(a.n);
      const sub = store.dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
      return store.db
        .updateTable('jobs')
        .set({
          locked_by: a.worker,
          locked_until: a.until,
          attempts: sql`attempts + 1`,
          open_claims: sql`open_claims + 1`,
        })
        .where('id', 'in', sub)
        .returning(['id', 'payload', 'attempts', 'open_claims', 'rechecks']);
    },
  );

  let claims = 0;
  const claimsByKind = new Map<string, number>();
  async function claim(def: Definition, n: number) {
    claims++;
    claimsByKind.set(def.kind, (claimsByKind.get(def.kind) ?? 0) + 1);
    const wall = wallNow();
    // One statement, no transaction around it: on PostgreSQL it joins the turn's pipelined round trip.
    return queryAlone(
      store.db,
      claimStatement({ kind: def.kind, now: clock.now(), wall, n, until: wall + def.visibilityMs, worker: workerId }),
    );
  }

  /**
   * Extends a claim while its handler runs; false when the claim is no longer the job's latest. A claim
   * already settled (`locked_by` cleared by a retry) is not locked again by a renewal that was under way.
   */
  async function renew(def: Definition, job: Claimed, exec: Exec = store.db): Promise<boolean> {
    return (await renewStatement(exec, { until: wallNow() + def.visibilityMs, id: job.id, attempts: job.attempts, worker: workerId })) > 0;
  }

  /**
   * Runs one job and records how it ended. `release` frees the job's slot as soon as the handler is done:
   * the deletion of a finished job is group-committed afterwards (until then its claim keeps it from
   * being claimed again; a crash before the deletion runs it again, which at-least-once allows).
   */
  async function runOne(
    def: Definition,
    job: Claimed & { payload: string; open_claims: number; rechecks: number },
    release: () => void,
    ac: AbortController,
  ) {
    // This claim is counted in open_claims too: the ones before it never ended.
    if (job.open_claims - 1 >= maxDeaths) return abandon(def, job, job.open_claims - 1);
    // A claim before this one never ended: its instance died (or stalled past its lease), and this one takes over.
    if (job.open_claims > 1 && !def.logsTakeover)
      logWorkTakenOver(log, { kind: def.kind, id: job.id, attempt: job.attempts, ...refsOf(job.payload) });
    const attempts = job.attempts - Number(job.rechecks);
    // The heartbeat: a claim renewed every third of its timeout lapses only when this process stops.
    const beat = setInterval(
      () => {
        renew(def, job).then(
          (held) => {
            renewOutage.ok();
            if (!held) ac.abort(new ClaimLost());
          },
          (err: unknown) => renewOutage.failed(err, { kind: def.kind, job: job.id }),
        );
      },
      Math.max(1, Math.floor(def.visibilityMs / 3)),
    );
    beat.unref();
    const claim: JobClaim = {
      id: job.id,
      attempts,
      signal: ac.signal,
      async fence(tx) {
        if (!(await renew(def, job, tx))) {
          ac.abort(new ClaimLost());
          throw new ClaimLost();
        }
      },
      fenceQuery: (db) => fenceStatement(db, { until: wallNow() + def.visibilityMs, id: job.id, attempts: job.attempts, worker: workerId }),
    };
    try {
      const result = await def.handler(JSON.parse(job.payload), claim);
      clearInterval(beat);
      // Handed back at stop: the claim is released and the job is another worker's now (at least once).
      if (ac.signal.reason instanceof HandedBack) return;
      if (result && typeof result.retryAt === 'number') await settle(job, result.retryAt, true, result.recheck === true);
      else {
        release();
        if (!ac.signal.aborted) return await finished(job);
        log.debug({ job: job.id, attempts: job.attempts }, 'job ended after another worker claimed it');
        await endedAfterLapse(job);
      }
    } catch (err) {
      clearInterval(beat);
      if (ac.signal.reason instanceof HandedBack) {
        log.debug({ kind: def.kind, job: job.id }, 'a job handed back at stop ended');
        return;
      }
      if (err instanceof ClaimLost || ac.signal.aborted) {
        log.warn({ kind: def.kind, job: job.id }, 'a job whose claim another worker took stopped; the new claim decides');
        return await endedAfterLapse(job);
      }
      log.error({ err, kind: def.kind, job: job.id }, 'job failed');
      await settle(job, attempts >= def.maxAttempts ? 'drop' : clock.now() + def.retryDelayMs).catch(() => {});
    }
  }

  /** Fails a job whose handler died `deaths` times: tells its kind, then drops it (fenced, as any end). */
  async function abandon(def: Definition, job: Claimed & { payload: string }, deaths: number) {
    const reason =
      `The ${def.kind} job stopped without finishing ${deaths} times in a row (its process died or its ` +
      `claim lapsed while it ran), so it was failed rather than run again.`;
    log.error({ kind: def.kind, job: job.id, deaths }, 'a job that keeps dying with its process is failed, not run again');
    try {
      await def.onAbandon?.(JSON.parse(job.payload), reason);
    } catch (err) {
      // The owner could not record the failure: try that again later, still without running the handler.
      log.error({ err, kind: def.kind, job: job.id }, 'recording an abandoned job failed');
      return settle(job, clock.now() + def.retryDelayMs, false).catch(() => {});
    }
    await settle(job, 'drop').catch((err) => log.error({ err, kind: def.kind, job: job.id }, 'dropping an abandoned job failed'));
  }

  /**
   * The slots of a kind worth a claim now: every free one, except that while a backlog waits they are
   * refilled only once a quarter of the concurrency is free (a claim per batch of jobs, not per job).
   */
  function claimable(def: Definition): number {
    const busy = running.get(def.kind) ?? 0;
    const free = def.concurrency - busy;
    if (free <= 0 || (busy > 0 && backlog.has(def.kind) && free < Math.ceil(def.concurrency / 4))) return 0;
    return free;
  }

  /** Claims for the kinds with free slots; whether it claimed any job, and whether it tried. */
  async function tick(): Promise<{ claimed: boolean; tried: boolean }> {
    const wanted = [...defs.values()].filter((def) => !idle.has(def.kind)).map((def) => ({ def, free: claimable(def) }));
    // Every kind's claim at once: on PostgreSQL they leave together in the turn's pipelined write.
    const results = await Promise.all(
      wanted
        .filter((w) => w.free > 0)
        .map(({ def, free }) =>
          claim(def, free).then(
            (jobs) => ({ def, free, jobs }),
            (err: unknown) => {
              if (!stopping) claimOutage.failed(err, { kind: def.kind });
              return { def, free, jobs: null };
            },
          ),
        ),
    );
    let claimedAny = false;
    if (results.some((r) => r.jobs)) claimOutage.ok();
    for (const { def, free, jobs } of results) {
      if (!jobs) continue;
      if (jobs.length < free) {
        idle.add(def.kind);
        backlog.delete(def.kind);
      } else backlog.add(def.kind);
      for (const job of jobs) {
        claimedAny = true;
        running.set(def.kind, (running.get(def.kind) ?? 0) + 1);
        let released = false;
        const release = () => {
          if (released) return;
          released = true;
          running.set(def.kind, (running.get(def.kind) ?? 1) - 1);
          schedule(0);
        };
        const ac = new AbortController();
        const p = runOne(def, job, release, ac).finally(() => {
          release();
          inFlight.delete(p);
          claimsHeld.delete(p);
        });
        inFlight.add(p);
        claimsHeld.set(p, { kind: def.kind, job, ac });
      }
    }
    return { claimed: claimedAny, tried: results.length > 0 };
  }

  const waitsStatements = new Map<string, (a: { now: number; wall: number }) => Compilable<DueWaits>>();
  function waitsStatement(kinds: readonly string[]) {
    const key = kinds.join('\n');
    let statement = waitsStatements.get(key);
    if (!statement) waitsStatements.set(key, (statement = compiledOnce(['now', 'wall'], (a) => dueWaitsQuery(store.db, kinds, a))));
    return statement;
  }

  /** How long (ms) until each kind with jobs has one to claim (0 or less: now); undefined when the store fails. */
  async function dueWaits(): Promise<Map<string, number> | undefined> {
    const kinds = [...defs.keys()];
    if (!kinds.length) return new Map();
    looks++;
    const now = clock.now();
    const rows = await queryAlone(store.db, waitsStatement(kinds)({ now, wall: wallNow() })).catch(() => undefined);
    if (!rows) return undefined;
    const waits = new Map<string, number>();
    for (const r of rows) {
      const wait = Math.min(r.next_run == null ? Infinity : Number(r.next_run) - now, r.held == null ? Infinity : Number(r.held));
      if (Number.isFinite(wait)) waits.set(r.kind, wait);
    }
    return waits;
  }

  /**
   * How long until some job of a kind with claimable slots can be claimed, from `waits`. A kind waiting
   * for slots is left out: the end of one of its jobs wakes the loop.
   */
  function waitOf(waits: Map<string, number> | undefined): number {
    let soonest = Infinity;
    for (const def of defs.values()) if (claimable(def) > 0) soonest = Math.min(soonest, waits?.get(def.kind) ?? Infinity);
    if (!Number.isFinite(soonest)) return POLL_MS;
    const wait = Math.max(0, Math.min(POLL_MS, soonest));
    if (wait === 0) idle.clear();
    return wait;
  }

  function schedule(ms: number) {
    if (!started || stopping) return;
    if (ticking) {
      again = true;
      return;
    }
    if (timer) clearTimeout(timer);
    timerAt = performance.now() + ms;
    timer = setTimeout(() => loop(ms > 0), ms);
  }

  /** The first poll, `ms` from now, unless a wake has brought it forward already. */
  function firstPoll(ms: number) {
    if (ms <= 0 || timerAt > performance.now() + ms) schedule(ms);
  }

  /**
   * A job of `kind` is due in `ms`: the loop's timer is brought forward to then (the timed loop then finds
   * it due), rather than a claim now that would find nothing due. While the loop runs, it is woken as for a
   * job due now (its next wait is read after this enqueue).
   */
  function wakeIn(kind: string, ms: number) {
    if (ticking || !started || stopping) return wakeKind(kind);
    if (timerAt > performance.now() + ms) schedule(ms);
  }

  /** Wakes the workers for one kind (or all) now. */
  function wakeKind(kind?: string) {
    if (kind) idle.delete(kind);
    else idle.clear();
    schedule(0);
  }

  async function loop(timed = false) {
    timer = undefined;
    timerAt = Infinity;
    if (stopping || defs.size === 0) return;
    ticking = true;
    let delay = POLL_MS;
    try {
      again = false;
      // The timed poll (work nothing woke the loop for: another instance's, a lapsed claim) looks first
      // which kinds have work due, in one statement, and claims only theirs; an idle second costs that one
      // statement, not a claim of every kind. A wake meanwhile, or a failed look, claims every kind.
      const waits = timed ? await dueWaits() : undefined;
      let dueNone = false;
      if (timed) {
        if (!waits || again) idle.clear();
        else {
          for (const kind of defs.keys())
            if ((waits.get(kind) ?? Infinity) <= 0) idle.delete(kind);
            else idle.add(kind);
          dueNone = [...defs.keys()].every((kind) => idle.has(kind));
        }
      }
      const { claimed, tried } = await tick();
      const left = pollAt - performance.now();
      if (claimed || again) delay = 0;
      // A job's end whose slot waits for a quarter of its kind's to be free (a backlog) claimed nothing and
      // tried nothing: the last look still says when the next job is (a look for every such end was a
      // statement a file of a large batch). Anything enqueued meanwhile woke its kind, and would be tried.
      else if (!timed && !tried && left > 0) delay = left;
      else {
        // Nothing was due: the look's waits say when the next job is (no second look).
        delay = dueNone ? waitOf(waits) : waitOf(await dueWaits());
        pollAt = performance.now() + delay;
      }
    } finally {
      ticking = false;
    }
    schedule(again ? 0 : delay);
  }

  /**
   * Releases the claims of the handlers still running (a stop past its grace): another instance may claim
   * them at once — woken by a NOTIFY of their kinds on PostgreSQL, not after their visibility timeout. A
   * hand-back is an end of the handler, not a death (`open_claims` goes back down). The handlers are
   * aborted and given a second to notice; what they commit after that is fenced off by the next claim.
   */
  async function handBack() {
    const held = [...claimsHeld.values()];
    if (!held.length) return;
    for (const { ac } of held) ac.abort(new HandedBack());
    try {
      await store.db
        .updateTable('jobs')
        .set({ locked_by: null, locked_until: null, open_claims: oneClaimLess })
        .where('locked_by', '=', workerId)
        .where((eb) => eb.or(held.map(({ job }) => eb.and({ id: job.id, attempts: job.attempts }))))
        .execute();
      const kinds = [...new Set(held.map((h) => h.kind))];
      if (store.dialect === 'postgres') for (const kind of kinds) await notify(store.db, 'standin_jobs', kind);
      log.info({ jobs: held.length, kinds }, 'stopping: handed running jobs back to the queue');
    } catch (err) {
      log.error({ err }, 'handing jobs back failed; their claims lapse after their visibility timeout');
    }
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...claimsHeld.keys()]), new Promise((r) => (timeout = setTimeout(r, 1000)))]);
    clearTimeout(timeout);
  }

  clock.onChange(() => wakeKind());

  /** Adds jobs of one kind, due at `runAt` (now when absent), in statements of up to 128 rows; `id` names a single one. */
  async function enqueueAll(exec: Exec, kind: string, payloads: readonly unknown[], runAt?: number, id?: string): Promise<string[]> {
    const now = clock.now();
    const rows = payloads.map((payload) => ({
      id: id ?? newId('job', clock),
      kind,
      payload: JSON.stringify(payload),
      run_at: runAt ?? now,
      attempts: 0,
      open_claims: 0,
      rechecks: 0,
      locked_by: null,
      locked_until: null,
      created_at: now,
    }));
    for (let i = 0; i < rows.length; i += ENQUEUE_ROWS) {
      const insert = insertJobStatement(exec, rows.slice(i, i + ENQUEUE_ROWS));
      // Outside a transaction (an upload's sweep), with the turn's statements on PostgreSQL.
      if (exec.isTransaction) await exec.executeQuery(insert.compile());
      else await runAlone(exec as Db, insert);
    }
    if (!rows.length) return [];
    // A job due now wakes the workers: on PostgreSQL every instance's, by a NOTIFY delivered at commit; on
    // SQLite (one connection: a claim queued now runs after the enqueuing transaction ends, and a
    // rolled-back job is simply not there) this one's. A job due later (a run's watchdog, its expiry, an
    // upload's sweep) costs no claim now: this instance's timer comes forward to it (two claims and a read a
    // run, bench/runs.mjs), and other instances find it at their timed poll (a NOTIFY an upload woke each
    // of them to claim nothing, and look when the next job is).
    const inMs = (runAt ?? now) - now;
    if (store.dialect === 'postgres' && inMs <= 0) await notify(exec, 'standin_jobs', kind);
    else setImmediate(() => (inMs > 0 ? wakeIn(kind, inMs) : wakeKind(kind)));
    return rows.map((r) => r.id);
  }

  return {
    get claims() {
      return claims;
    },
    get looks() {
      return looks;
    },
    claimsOf(kind) {
      return claimsByKind.get(kind) ?? 0;
    },
    register(def) {
      // An option left undefined takes its default (a kind's catalog may spell out what it does not set).
      const set = Object.fromEntries(Object.entries(def).filter(([, v]) => v !== undefined));
      defs.set(def.kind, {
        concurrency: 1,
        visibilityMs: leaseMs,
        retryDelayMs: 5_000,
        maxAttempts: 1_000_000,
        ...set,
      } as Definition);
    },
    async enqueue(exec, kind, payload, opts = {}) {
      const [id] = await enqueueAll(exec, kind, [payload], opts.runAt, opts.id);
      return id;
    },
    enqueueAll: (exec, kind, payloads) => enqueueAll(exec, kind, payloads),
    async remove(exec, id) {
      await removeJob(exec, { id });
    },
    wake(kind) {
      wakeKind(kind);
    },
    start({ firstPollInMs = 0 } = {}) {
      if (started) return;
      started = true;
      stopping = false;
      // Until the first poll every kind counts as idle: a wake (an enqueue at start, as the retention
      // sweep's) claims its own kind, not every kind.
      if (firstPollInMs > 0) for (const kind of defs.keys()) idle.add(kind);
      // Other instances' enqueues wake this one at once; without the connection, the timed poll finds them.
      if (store.dialect === 'postgres' && store.pgPool)
        listening = keepListening(store.pgPool, 'standin_jobs', (kind) => wakeKind(kind || undefined), {
          log,
          onListen: () => wakeKind(),
        });
      // On SQLite this process owns the queue (the store claimed its folder): claims left by a process that
      // was killed are taken back now, not after their visibility timeout.
      if (store.dialect === 'sqlite') {
        store.db
          .updateTable('jobs')
          .set({ locked_by: null, locked_until: null })
          .where('locked_by', 'is not', null)
          .execute()
          .catch((err) => log.error({ err }, 'taking back the claims of a stopped process failed'))
          .finally(() => firstPoll(firstPollInMs));
      } else firstPoll(firstPollInMs);
    },
    async stop(graceMs = Infinity) {
      stopping = true;
      if (timer) clearTimeout(timer);
      while (ticking) await new Promise((r) => setTimeout(r, 5));
      const ended = Promise.allSettled([...inFlight]);
      if (Number.isFinite(graceMs) && inFlight.size) {
        let timeout: NodeJS.Timeout | undefined;
        await Promise.race([ended, new Promise((r) => (timeout = setTimeout(r, graceMs)))]);
        clearTimeout(timeout);
        await handBack();
      } else await ended;
      listening?.stop();
      listening = undefined;
      started = false;
    },
    async drain(timeoutMs = 10_000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        idle.clear();
        const { claimed } = await tick();
        await Promise.allSettled([...inFlight]);
        if (!claimed && inFlight.size === 0) return;
        if (performance.now() > deadline) throw new Error('jobs did not drain in time');
      }
    },
  };
}
