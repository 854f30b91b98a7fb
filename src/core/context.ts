import type { FastifyRequest } from 'fastify';
import type { Clock } from './clock.js';
import type { JobQueue } from './jobs.js';
import type { Settings } from './settings.js';
import type { Store } from '../store/db.js';
import type { Auth } from './auth.js';

export interface Logger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
}

/** What every service function receives: settings, the store, the one clock, the job queue, a logger. */
export interface Ctx {
  settings: Settings;
  store: Store;
  clock: Clock;
  jobs: JobQueue;
  log: Logger;
  auth: Auth;
  /**
   * Checks every request meets first, before authentication, as an edge proxy's would (fault injection).
   * Synchronous; an Error refuses the request.
   */
  edge: ((request: FastifyRequest) => Error | undefined)[];
  /** Lines a module adds to the start banner (extra listeners and where to find them). */
  banner?: string[];
  /** Services other modules expose at runtime (e.g. `ratelimit`), keyed by module name. */
  services: Record<string, unknown>;
}
