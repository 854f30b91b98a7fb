import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { readCapped, type Outbound } from '../../core/outbound.js';

/**
 * Key sets of JWT providers: inline, or fetched from a JWKS URL through the SSRF guard, cached, and
 * refetched when a token names a `kid` the cached set lacks — at most once per cooldown, so a stream of
 * tokens with made-up kids cannot turn Standin into a request amplifier against the IdP.
 */
export const JWKS_LIMITS = { maxBytes: 256 * 1024, maxKeys: 100, timeoutMs: 5_000 } as const;

/** Fetches and validates a JWKS document; throws JwksError with a message safe to log. */
export type JwksFetcher = (url: string) => Promise<JSONWebKeySet>;

export class JwksError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JwksError';
  }
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

/** Checks a JWKS document: public asymmetric keys only (RSA, EC, OKP), at most JWKS_LIMITS.maxKeys. */
export function validateJwks(doc: unknown): JSONWebKeySet {
  if (!doc || typeof doc !== 'object' || !Array.isArray((doc as { keys?: unknown }).keys))
    throw new JwksError("a JWKS is an object with a 'keys' array");
  const keys = (doc as { keys: unknown[] }).keys;
  if (keys.length > JWKS_LIMITS.maxKeys) throw new JwksError(`a JWKS may hold at most ${JWKS_LIMITS.maxKeys} keys`);
  keys.forEach((k, i) => {
    if (!k || typeof k !== 'object' || Array.isArray(k)) throw new JwksError(`keys[${i}] must be an object`);
    const key = k as Record<string, unknown>;
    if (!['RSA', 'EC', 'OKP'].includes(key.kty as string))
      throw new JwksError(`keys[${i}].kty must be RSA, EC or OKP (symmetric keys are refused)`);
    for (const m of PRIVATE_MEMBERS)
      if (m in key) throw new JwksError(`keys[${i}] holds private key material ('${m}'); publish public keys only`);
    if (key.kid !== undefined && typeof key.kid !== 'string') throw new JwksError(`keys[${i}].kid must be a string`);
  });
  return { keys } as JSONWebKeySet;
}

/** `fetchJwks(url)` over the SSRF-guarded outbound client: GET, 2xx, JSON, size-capped, validated. */
export function jwksFetcher(outbound: Outbound): JwksFetcher {
  return async (url) => {
    let res;
    try {
      res = await outbound.request(url, {
        method: 'GET',
        headers: { accept: 'application/json, application/jwk-set+json' },
        signal: AbortSignal.timeout(JWKS_LIMITS.timeoutMs),
      });
    } catch (err) {
      const code = (err as { code?: string }).code;
      throw new JwksError(
        code === 'ERR_SSRF_BLOCKED' ? (err as Error).message : `fetching the JWKS failed (${code ?? (err as Error).name})`,
      );
    }
    if (res.statusCode < 200 || res.statusCode > 299) {
      await res.body.dump().catch(() => {});
      throw new JwksError(`the JWKS URL answered HTTP ${res.statusCode}`);
    }
    const { text, truncated } = await readCapped(res, JWKS_LIMITS.maxBytes);
    if (truncated) throw new JwksError(`the JWKS is larger than ${JWKS_LIMITS.maxBytes} bytes`);
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new JwksError('the JWKS is not JSON');
    }
    return validateJwks(doc);
  };
}

export interface KeySource {
  /** Provider id plus a version that changes when its key configuration changes. */
  cacheKey: string;
  jwksUrl: string | null;
  jwksInline: JSONWebKeySet | null;
}

interface Entry {
  kids: Set<string>;
  getKey: JWTVerifyGetKey | null;
  fetchedAt: number;
  lastAttemptAt: number;
  inflight: Promise<void> | null;
}

export type KeyLookup = { kind: 'found'; getKey: JWTVerifyGetKey } | { kind: 'unknown_kid' } | { kind: 'unavailable' };

export interface JwksCacheOptions {
  fetch: JwksFetcher;
  /** Milliseconds on the Standin clock. */
  now: () => number;
  /** How long a fetched set is used before it is fetched again (default 10 minutes). */
  ttlMs?: number;
  /** Least time between two fetches of one set caused by unknown kids or failures (default 30 s). */
  cooldownMs?: number;
  onFetchError?: (source: KeySource, err: Error) => void;
}

/** The JWKS cache of all providers of this process. */
export class JwksCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttl: number;
  private readonly cooldown: number;
  /** Fetches made (for tests and the bench). */
  fetches = 0;

  constructor(private readonly opts: JwksCacheOptions) {
    this.ttl = opts.ttlMs ?? 600_000;
    this.cooldown = opts.cooldownMs ?? 30_000;
  }

  /** The key function for a token with this `kid`, refetching the set once per cooldown when the kid is unknown. */
  async lookup(source: KeySource, kid: string): Promise<KeyLookup> {
    let entry = this.entries.get(source.cacheKey);
    if (!entry) {
      entry = { kids: new Set(), getKey: null, fetchedAt: -Infinity, lastAttemptAt: -Infinity, inflight: null };
      this.entries.set(source.cacheKey, entry);
      if (source.jwksInline) this.install(entry, source.jwksInline, this.opts.now());
    }
    if (source.jwksInline) return entry.kids.has(kid) ? { kind: 'found', getKey: entry.getKey! } : { kind: 'unknown_kid' };

    const now = this.opts.now();
    const stale = now - entry.fetchedAt >= this.ttl;
    const unknown = !entry.kids.has(kid);
    const mayFetch = now - entry.lastAttemptAt >= this.cooldown;
    if ((stale || unknown) && source.jwksUrl) {
      if (entry.inflight) await entry.inflight;
      else if (mayFetch) await this.refresh(source, entry);
    }
    if (entry.getKey === null) return { kind: 'unavailable' };
    return entry.kids.has(kid) ? { kind: 'found', getKey: entry.getKey } : { kind: 'unknown_kid' };
  }

  /** Forgets a provider's cached set (its configuration changed or it was deleted). */
  forget(prefix: string): void {
    for (const k of this.entries.keys()) if (k === prefix || k.startsWith(`${prefix}:`)) this.entries.delete(k);
  }

  clear(): void {
    this.entries.clear();
  }

  private refresh(source: KeySource, entry: Entry): Promise<void> {
    if (entry.inflight) return entry.inflight;
    entry.lastAttemptAt = this.opts.now();
    this.fetches++;
    entry.inflight = this.opts
      .fetch(source.jwksUrl!)
      .then((doc) => this.install(entry, doc, this.opts.now()))
      .catch((err: Error) => {
        // A failed refresh keeps the last good set: an IdP outage should not stop tokens signed by known keys.
        this.opts.onFetchError?.(source, err);
      })
      .finally(() => {
        entry.inflight = null;
      });
    return entry.inflight;
  }

  private install(entry: Entry, doc: JSONWebKeySet, at: number): void {
    entry.kids = new Set(doc.keys.map((k) => k.kid).filter((k): k is string => typeof k === 'string'));
    entry.getKey = createLocalJWKSet(doc);
    entry.fetchedAt = at;
  }
}
