/**
 * Masking secrets by their shape, shared by the request log (src/admin/redact.ts) and every text that
 * comes from outside and may repeat a credential (an upstream model's or embedder's error message).
 */
export const REDACTED = '[redacted]';

/**
 * What a secret looks like, wherever it sits in a text (inside a chat message, a URL, a header): every
 * key Standin issues (`sk-proj-`, `sk-svcacct-`, `sk-ads-`, `sk-admin-`, any `sk-`), webhook secrets
 * (`whsec_`), workload tokens (`wit_`), JWTs, the dashboard's session and sign-in tokens, and whatever
 * follows `Bearer`. A secret starts where a run of token characters starts (the lookbehind), so a failed
 * attempt is never retried inside the same run: the scan stays linear on any input.
 */
const SECRET_SHAPE = new RegExp(
  [
    '(?<![A-Za-z0-9_-])(?:',
    'sk-[A-Za-z0-9_-]{8,}',
    '|whsec_[A-Za-z0-9+/=]{8,}',
    '|wit_[A-Za-z0-9_-]{8,}',
    '|eyJ[A-Za-z0-9_-]{4,}\\.[A-Za-z0-9_-]{4,}\\.[A-Za-z0-9_-]*',
    '|(?:session|link)\\.\\d{10,16}\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}',
    ')',
    '|\\b(Bearer[ \\t]+)[^\\s"\',;]{8,}',
  ].join(''),
  'gi',
);

/** `text` with every secret-looking part (and each of `extra`) replaced by `[redacted]`. */
export function redactText(text: string, extra: readonly (string | undefined)[] = []): string {
  let out = text.replace(SECRET_SHAPE, (_match, bearer?: string) => (bearer ? bearer + REDACTED : REDACTED));
  // Only secrets long enough not to mask ordinary words (an unset admin key is '').
  for (const secret of extra) if (secret && secret.length >= 8 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}
