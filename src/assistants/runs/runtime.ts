import type { Ctx } from '../../core/module.js';
import type { RunBus } from '../bus.js';
import type { RunHandlers } from './jobs.js';

/**
 * What the assistants area keeps per Standin instance, published as `ctx.services.assistants` (module.ts).
 * The service layer queues, starts and stops runs through it, the engine implements it: neither imports
 * the other.
 */
export interface AssistantsRuntime {
  /** Wakes the followers of a run (streams, the executor watching for a cancel) after a commit. */
  bus: RunBus;
  /** This process runs workers: it starts the runs it queues itself, without waiting for the job loop. */
  direct: boolean;
  engine: RunEngine;
}

/** Executes runs (engine.ts). */
export interface RunEngine {
  /** Stops a run this process is executing (cancel, expiry, deletion). */
  interrupt(runId: string): void;
  /** Starts executing a run here now (after the commit that queued it); when it cannot start here, a job retries it. */
  kick(runId: string): void;
  /**
   * Starts no run here any more, waits up to `timeoutMs` for the runs this process executes, then hands
   * the rest back (leases released, jobs due now: another instance takes them over at once).
   */
  stop(timeoutMs?: number): Promise<void>;
  /** Re-queues runs left behind by a stopped process. Returns how many. */
  sweep(): Promise<number>;
  /** Fails a run whose execution kept killing its process (the job queue gave up on it), with `reason`. */
  abandon(runId: string, reason: string): Promise<void>;
  /** The handlers of the run job kinds (jobs.ts). */
  handlers: RunHandlers;
}

export const runtime = (ctx: Pick<Ctx, 'services'>): AssistantsRuntime => ctx.services.assistants;
