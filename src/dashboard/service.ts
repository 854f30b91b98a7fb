import { wallNow } from '../core/clock.js';
import type { Ctx } from '../core/module.js';
import { spendToken, spentTokens } from './store.js';

/** The change concern of signed-out sessions: every instance reloads them when one signs a session out. */
export const SIGNED_OUT = 'dashboard_sessions';

/** Spends a sign-in link in the store; false when it was already used, here or on another instance. */
export async function redeemLink(ctx: Pick<Ctx, 'store' | 'services'>, nonce: string, expiresAt: number): Promise<boolean> {
  const won = await spendToken(ctx.store.db, 'link', nonce, expiresAt, wallNow());
  ctx.services.dashboard.sessions.spend(nonce, expiresAt);
  return won;
}

/** Signs a session out on every instance: spent in the store, and the other instances told to reload. */
export async function signOut(ctx: Pick<Ctx, 'store' | 'services' | 'changes'>, nonce: string, expiresAt: number): Promise<void> {
  await ctx.store.db.transaction().execute(async (tx) => {
    await spendToken(tx, 'session', nonce, expiresAt, wallNow());
    await ctx.changes.bump(tx, SIGNED_OUT);
  });
  ctx.services.dashboard.sessions.spend(nonce, expiresAt);
}

/** Reads the signed-out sessions into this instance's copy. */
export async function loadSignedOut(ctx: Pick<Ctx, 'store' | 'services'>): Promise<void> {
  ctx.services.dashboard.sessions.spendAll(await spentTokens(ctx.store.db, 'session', wallNow()));
}
