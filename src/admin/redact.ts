/** Headers whose values are credentials: never shown, whoever asks. */
const SECRET_HEADERS = new Set([
  'authorization',
  'x-admin-key',
  'cookie',
  'set-cookie',
  'proxy-authorization',
  'openai-api-key',
  'api-key',
]);
/** Body fields that hold secrets (keys, signing secrets, tokens, passwords). */
const SECRET_FIELD = /(^|_)(secret|password|token|api_key|admin_key|key_value|private_key|client_secret|assertion)$|^(value|secret|key)$/i;
/** Values that look like a credential wherever they appear: API keys, webhook secrets, JWTs. */
const SECRET_VALUE = /^(sk-[A-Za-z0-9_-]{8,}|whsec_[A-Za-z0-9+/=]{8,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/;
const REDACTED = '[redacted]';

/** Headers with credentials replaced, names lowercased, arrays joined. */
export function redactHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const n = name.toLowerCase();
    out[n] = SECRET_HEADERS.has(n) ? REDACTED : Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/** A copy of a JSON value with secret-named fields and secret-looking strings replaced. */
export function redactJson(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return SECRET_VALUE.test(value) ? REDACTED : value;
  if (value === null || typeof value !== 'object' || depth > 32) return value;
  if (Array.isArray(value)) return value.map((v) => redactJson(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = typeof v === 'string' && SECRET_FIELD.test(k) ? REDACTED : redactJson(v, depth + 1);
  return out;
}

/** A body as text with its secrets redacted: JSON is parsed and redacted, other text is kept as is. */
export function redactBody(body: unknown): unknown {
  if (typeof body !== 'string') return redactJson(body);
  try {
    return redactJson(JSON.parse(body));
  } catch {
    return body.replace(/(sk-|whsec_)[A-Za-z0-9_+/=-]{8,}/g, REDACTED);
  }
}
