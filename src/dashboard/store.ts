import type { Exec } from '../store/db.js';

/** The SQL of the dashboard: spent sign-in tokens. */

/**
 * Records a token as spent; false when it already was (on any instance): the insert is the one decision,
 * so two instances redeeming one link at once cannot both win. Sweeps tokens that expired meanwhile.
 */
export async function spendToken(exec: Exec, kind: string, nonce: string, expiresAt: number, nowMs: number): Promise<boolean> {
  await exec.deleteFrom('dashboard_spent_tokens').where('expires_at', '<=', nowMs).execute();
  const r = await exec
    .insertInto('dashboard_spent_tokens')
    .values({ nonce, kind, expires_at: expiresAt })
    .onConflict((oc) => oc.column('nonce').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** The unexpired spent tokens of `kind` (a signed-out session is refused on every request, so each instance holds them). */
export const spentTokens = async (exec: Exec, kind: string, nowMs: number) =>
  (
    await exec
      .selectFrom('dashboard_spent_tokens')
      .select(['nonce', 'expires_at'])
      .where('kind', '=', kind)
      .where('expires_at', '>', nowMs)
      .execute()
  ).map((r) => ({ nonce: r.nonce, expiresAt: Number(r.expires_at) }));
