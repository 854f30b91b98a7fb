/**
 * SPIFFE IDs (`spiffe://<trust-domain>/<path>`) as the SPIFFE-ID specification defines them: a lowercase
 * trust domain of letters, digits, `.`, `-`, `_`; path segments of letters, digits, `.`, `-`, `_`, none empty,
 * `.` or `..`; no port, user info, query or fragment; at most 2048 bytes.
 */
export interface SpiffeId {
  trustDomain: string;
  path: string;
}

const TRUST_DOMAIN = /^[a-z0-9._-]+$/;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Parses a SPIFFE ID, or returns null when `value` is not one. */
export function parseSpiffeId(value: string): SpiffeId | null {
  if (typeof value !== 'string' || value.length > 2048 || !value.startsWith('spiffe://')) return null;
  const rest = value.slice('spiffe://'.length);
  const slash = rest.indexOf('/');
  const trustDomain = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? '' : rest.slice(slash);
  if (!trustDomain || trustDomain.length > 255 || !TRUST_DOMAIN.test(trustDomain)) return null;
  if (path) {
    const segments = path.slice(1).split('/');
    for (const s of segments) if (!s || s === '.' || s === '..' || !SEGMENT.test(s)) return null;
  }
  return { trustDomain, path };
}
