import type { Insertable } from 'kysely';
import type { Db } from '../../store/db.js';
import type { WorkloadTables } from './tables.js';

type TokenRow = Insertable<WorkloadTables['workload_tokens']>;
type ExchangeRow = Insertable<WorkloadTables['workload_exchanges']>;

interface Pending {
  token: TokenRow | null;
  exchange: ExchangeRow;
  resolve(): void;
  reject(err: unknown): void;
}

/** Most exchanges one commit carries (keeps multi-row inserts far below SQLite's variable limit). */
const MAX_BATCH = 200;

/**
 * Group commit of exchange writes: the minted token and its audit entry of every exchange that finishes
 * in the same turn of the event loop go into one transaction, so a burst of exchanges pays for one commit
 * instead of one each. Each caller still answers only after its rows are committed, so a token is in the
 * store (and usable on every instance) before the client receives it.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  /** Commits made (for tests and the bench). */
  commits = 0;

  constructor(private readonly db: () => Db) {}

  /** Writes a token (when issued) and an audit entry; resolves once they are committed. */
  write(token: TokenRow | null, exchange: ExchangeRow): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ token, exchange, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const tokens = batch.flatMap((p) => (p.token ? [p.token] : []));
      try {
        await this.db()
          .transaction()
          .execute(async (tx) => {
            if (tokens.length) await tx.insertInto('workload_tokens').values(tokens).execute();
            await tx.insertInto('workload_exchanges').values(batch.map((p) => p.exchange)).execute();
          });
        this.commits++;
        for (const p of batch) p.resolve();
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
  }
}
