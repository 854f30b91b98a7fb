import { createHash, timingSafeEqual } from 'node:crypto';

/** Keys are high-entropy random strings, so one SHA-256 is the right hash: stored, looked up, never reversed. */
export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** Constant-time comparison of two secrets (or two hashes). */
export function sameSecret(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** What a key looks like in listings: its prefix and last four characters. */
export const redactSecret = (secret: string): string => `${secret.slice(0, secret.indexOf('-', 3) + 1 || 3)}…${secret.slice(-4)}`;
