import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing: `v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>`,
 * where the key is the base64 part of a `whsec_` secret. Several signatures (during a secret rotation)
 * are space-separated; receivers accept a message when any one matches.
 */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of `bytes` random bytes (24 to 64; 32 by default). */
export function newWebhookSecret(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < 24 || bytes > 64) throw new RangeError('a webhook secret has 24 to 64 random bytes');
  return SECRET_PREFIX + randomBytes(bytes).toString('base64');
}

/** Whether a string is a usable secret: `whsec_` + standard base64 of 24 to 64 bytes. */
export function isWebhookSecret(secret: string): boolean {
  if (!secret.startsWith(SECRET_PREFIX)) return false;
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return false;
  const n = Buffer.from(b64, 'base64').length;
  return n >= 24 && n <= 64;
}

/** One `v1,<base64>` signature. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
}

/** The `webhook-signature` value for every active secret, newest first, space-separated. */
export function signatureHeader(secrets: string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((s) => sign(s, id, timestampSeconds, body)).join(' ');
}
