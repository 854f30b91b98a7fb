/**
 * The run state machine. Every status change of a run is a move of this table, and every write that
 * changes a status is conditional on the run still being in one of the move's source statuses, so two
 * writers racing (a worker and a cancel, an expiry and a completion) cannot both win.
 *
 *     queued ──▶ in_progress ──▶ requires_action ──▶ queued (submit_tool_outputs)
 *        │            └──▶ completed | incomplete | failed
 *        └────────────┴───────────┴──▶ cancelling ──▶ cancelled
 *     any active status ──▶ expired (its 10 minutes are over)
 */

/** Statuses that hold the thread lock: the run is not over. */
export const ACTIVE = ['queued', 'in_progress', 'requires_action', 'cancelling'] as const;
export const TERMINAL = ['completed', 'incomplete', 'failed', 'cancelled', 'expired'] as const;
export const RUN_STATUSES = [...ACTIVE, ...TERMINAL] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Where each status may go next. */
const MOVES: Record<RunStatus, readonly RunStatus[]> = {
  queued: ['in_progress', 'cancelling', 'expired'],
  in_progress: ['requires_action', 'completed', 'incomplete', 'failed', 'cancelling', 'expired'],
  requires_action: ['queued', 'cancelling', 'expired'],
  cancelling: ['cancelled', 'expired'],
  completed: [],
  incomplete: [],
  failed: [],
  cancelled: [],
  expired: [],
};

/** The statuses a run may move to `to` from (the guard of the write that moves it). */
export function sourcesOf(to: RunStatus): RunStatus[] {
  return RUN_STATUSES.filter((from) => MOVES[from].includes(to));
}

/**
 * Active statuses a worker acts on (executes, fails when found orphaned, or ends `cancelled`);
 * `requires_action` waits on the client instead.
 */
export const WORKER_STATUSES: readonly RunStatus[] = ACTIVE.filter((s) => s !== 'requires_action');

export const isActive = (status: string): boolean => (ACTIVE as readonly string[]).includes(status);
export const isTerminal = (status: string): boolean => (TERMINAL as readonly string[]).includes(status);

/** How a run ends: the terminal status with what it carries. */
export type Outcome =
  | { status: 'completed' }
  | { status: 'incomplete'; reason: 'max_completion_tokens' | 'max_prompt_tokens' }
  | { status: 'failed'; error: { code: 'server_error' | 'rate_limit_exceeded' | 'invalid_prompt'; message: string } }
  | { status: 'cancelled' }
  | { status: 'expired' };
