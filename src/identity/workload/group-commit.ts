import type { Insertable } from 'kysely';
import type { Db } from '../../store/db.js';
import { groupCommit } from '../../store/group-commit.js';
import type { WorkloadTables } from './tables.js';

type TokenRow = Insertable<WorkloadTables['workload_tokens']>;
type ExchangeRow = Insertable<WorkloadTables['workload_exchanges']>;

/**
 * Exchange writes under group commit (store/group-commit.ts): the minted token and the audit entry of
 * every exchange finishing in the same turn of the event loop go into one transaction. Each caller still
 * answers only after its rows are committed, so a token is in the store (and usable on every instance)
 * before the client receives it.
 */
export function exchangeWriter(db: () => Db) {
  return groupCommit<{ token: TokenRow | null; exchange: ExchangeRow }>(db, async (tx, items) => {
    const tokens = items.flatMap((i) => (i.token ? [i.token] : []));
    if (tokens.length) await tx.insertInto('workload_tokens').values(tokens).execute();
    await tx.insertInto('workload_exchanges').values(items.map((i) => i.exchange)).execute();
  });
}
