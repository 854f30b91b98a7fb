import type { Tx } from '../store/db.js';

/**
 * A kind of record an area keeps for a while and then deletes: webhook deliveries, run events, audit
 * entries. Each area declares its rules on its Module (`retention`); the retention area runs them all in
 * bounded batches on the job queue, and knows no area. The SQL of a rule stays in its area's store.
 */
export interface RetentionRule {
  /** The record kind's name in `--retention` and the config file's `retention` section: `webhook_deliveries`. */
  name: string;
  /** What it deletes and which age it goes by, for the docs and the admin view. */
  description: string;
  /** The tables it deletes from (PostgreSQL vacuums them after a sweep that deleted rows). */
  tables: readonly string[];
  /** How long records are kept by default (ms of the Standin clock); null keeps them until the operator sets a time. */
  defaultMs: number | null;
  /**
   * Deletes at most `limit` records older than `cutoffMs` (Standin clock ms, by the rule's own age column)
   * that nothing still needs (a pending delivery, an active run's events), in the caller's transaction.
   * Returns how many it deleted: fewer than `limit` means none are left.
   */
  purge(tx: Tx, cutoffMs: number, limit: number): Promise<number>;
}
