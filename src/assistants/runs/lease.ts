import { randomUUID } from 'node:crypto';
import { wallNow } from '../../core/clock.js';
import type { Ctx } from '../../core/module.js';
import type { Exec } from '../../store/db.js';
import type { RunBus } from '../bus.js';
import { claimLease, claimQueued, leaseOf, renewLease } from '../store/runs.js';

/**
 * The lease a worker holds on the run it executes: an owner token and an expiry (`--lease-ms`), renewed
 * every third of it. Every write the worker makes is conditional on still holding it while the run is
 * `in_progress`, so a cancel, an expiry, a deletion by anyone — or another instance that took the run
 * over after this one stalled — makes its next write fail and the worker stops (fencing). A lease that
 * lapses marks a worker that died: another takes the run over (engine.ts). A lease lasts in wall-clock
 * time, as the life of a process does: moving the Standin clock does not lapse it.
 */
export const leaseMs = (ctx: Pick<Ctx, 'settings'>): number => ctx.settings.leaseMs;
/** How often a cross-instance change of a running run is looked for, at most. */
const CHECK_MS = 100;

/** The worker no longer holds the run (thrown by its writes, and the abort reason of its model call). */
export class Lost extends Error {
  constructor() {
    super('the run changed under the worker');
  }
}

/** A new lease token of this process (`<process>:<random>`). */
export const leaseToken = (processId: string): string => `${processId}:${randomUUID().slice(0, 8)}`;

/** Takes the lease of a run a worker acts on, unless a live lease holds it. Returns the run, or undefined. */
export function claim(ctx: Pick<Ctx, 'store' | 'settings'>, runId: string, token: string) {
  const now = wallNow();
  return claimLease(ctx.store.db, runId, token, now, now + leaseMs(ctx));
}

/**
 * Takes the lease of a queued run and starts it in the caller's transaction (one statement: see
 * claimQueued). Returns the run in progress, or undefined when it was not queued and free.
 */
export function claimAndStart(ctx: Pick<Ctx, 'clock' | 'settings'>, tx: Exec, runId: string, token: string) {
  const now = wallNow();
  return claimQueued(tx, runId, token, { now, until: now + leaseMs(ctx) }, { nowMs: ctx.clock.now(), nowSeconds: ctx.clock.nowSeconds() });
}

/** Renews the lease inside the caller's transaction; throws Lost when the worker no longer holds the run. */
export async function holdLease(ctx: Pick<Ctx, 'settings'>, tx: Exec, runId: string, token: string): Promise<void> {
  if (!(await renewLease(tx, runId, token, wallNow() + leaseMs(ctx)))) throw new Lost();
}

/**
 * Keeps the lease while the run executes (a heartbeat), and aborts `ac` when the run leaves
 * `in_progress` or the lease is lost (another instance's cancel arrives through the bus). Returns the
 * function that stops watching.
 */
export function watchLease(
  ctx: Pick<Ctx, 'store' | 'settings'>,
  bus: RunBus,
  runId: string,
  token: string,
  ac: AbortController,
): () => void {
  const db = ctx.store.db;
  const check = async () => {
    const row = await leaseOf(db, runId).catch(() => undefined);
    // `queued` is what an older notification may still show before this worker's start commits.
    if (!row || row.lease_owner !== token || (row.status !== 'in_progress' && row.status !== 'queued')) ac.abort(new Lost());
  };
  // Our own commits notify too: a notification is checked at most every CHECK_MS, counted from the
  // start, so a run that ends within it reads nothing here (a cancel in this process interrupts directly;
  // one within the window is checked at its end, never dropped).
  let lastCheck = performance.now();
  let pending: NodeJS.Timeout | undefined;
  const checkNow = () => {
    pending = undefined;
    if (ac.signal.aborted) return;
    lastCheck = performance.now();
    void check();
  };
  const off = bus.on(runId, () => {
    if (ac.signal.aborted || pending) return;
    const wait = lastCheck + CHECK_MS - performance.now();
    if (wait <= 0) return checkNow();
    pending = setTimeout(checkNow, wait);
    pending.unref();
  });
  const beat = setInterval(
    async () => {
      const renewed = await renewLease(db, runId, token, wallNow() + leaseMs(ctx)).catch(() => false);
      if (!renewed) ac.abort(new Lost());
    },
    Math.max(1, Math.floor(leaseMs(ctx) / 3)),
  );
  beat.unref();
  return () => {
    off();
    clearInterval(beat);
    clearTimeout(pending);
  };
}
