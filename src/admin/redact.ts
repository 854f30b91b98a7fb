import { REDACTED, redactText } from '../core/redact.js';

/** The masker by shape lives in core (upstream errors use it too); the request log's callers import it from here. */
export { REDACTED, redactText };

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
/** Body fields that hold secrets (keys, signing secrets, tokens, passwords; an MCP tool's `authorization` and its Authorization header). */
const SECRET_FIELD =
  /(^|_)(secret|password|token|api_key|admin_key|key_value|private_key|client_secret|assertion)$|^(value|secret|key|authorization)$/i;

/** Known secrets to mask verbatim besides the shapes (the admin key in force, whatever its form). */
export type ExtraSecrets = () => readonly string[];

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
