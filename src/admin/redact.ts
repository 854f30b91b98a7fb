/** Headers whose values are credentials: never shown, whoever asks. */
const SECRET_HEADERS = new Set([
  'authorization',
  'x-admin-key',
  'cookie',
  'set-cookie',
  'x-standin-dashboard',
  'proxy-authorization',
  'openai-api-key',
  'api-key',
]);
/** Body fields that hold secrets (keys, signing secrets, tokens, passwords). */
const SECRET_FIELD = /(^|_)(secret|password|token|api_key|admin_key|key_value|private_key|client_secret|assertion)$|^(value|secret|key)$/i;
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

/** Known secrets to mask verbatim besides the shapes (the admin key in force, whatever its form). */
export type ExtraSecrets = () => readonly string[];

/** `text` with every secret-looking part (and each of `extra`) replaced by `[redacted]`. */
export function redactText(text: string, extra: readonly string[] = []): string {
  let out = text.replace(SECRET_SHAPE, (_match, bearer?: string) => (bearer ? bearer + REDACTED : REDACTED));
  // Only secrets long enough not to mask ordinary words (an unset admin key is '').
  for (const secret of extra) if (secret.length >= 8 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/** Headers with credentials replaced, names lowercased, arrays joined; secrets in other headers masked. */
export function redactHeaders(headers: Record<string, unknown>, extra: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const n = name.toLowerCase();
    out[n] = SECRET_HEADERS.has(n) ? REDACTED : redactText(Array.isArray(value) ? value.join(', ') : String(value), extra);
  }
  return out;
}

/** A copy of a JSON value with secret-named fields replaced and secrets masked inside every string (keys too). */
export function redactJson(value: unknown, extra: readonly string[] = [], depth = 0): unknown {
  if (typeof value === 'string') return redactText(value, extra);
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any body the JSON parser lets in: shown as text, still masked.
  if (depth > 64) return redactText(JSON.stringify(value), extra);
  if (Array.isArray(value)) return value.map((v) => redactJson(v, extra, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[redactText(k, extra)] = typeof v === 'string' && SECRET_FIELD.test(k) ? REDACTED : redactJson(v, extra, depth + 1);
  return out;
}

/** A body with its secrets redacted: JSON (parsed or text) field by field, any other text by shape. */
export function redactBody(body: unknown, extra: readonly string[] = []): unknown {
  if (typeof body !== 'string') return redactJson(body, extra);
  try {
    return redactJson(JSON.parse(body), extra);
  } catch {
    return redactText(body, extra);
  }
}
