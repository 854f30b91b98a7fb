import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Ctx } from '../../core/module.js';
import { BlockedAddressError, classifyAddress } from '../../core/outbound.js';

/**
 * Whether the SSRF guard (`ctx.outbound`) will let Standin fetch a provider's `jwks_url`, judged when the
 * provider is saved, so a refused destination is a 400 naming the rule rather than a 503 at every exchange.
 * The rules are the guard's: host names listed in `--outbound-allow` pass; otherwise an address literal
 * is judged by `ctx.outbound.allowed`, and a name by the addresses DNS gives for it now — refused when
 * none of them is allowed, as the guard refuses a connection when none is. The guard still judges every
 * fetch (DNS may answer differently later).
 */

/** How long a save waits for DNS before it leaves the judgement to the guard at fetch time. */
const LOOKUP_TIMEOUT_MS = 3_000;

/** The host names of `--outbound-allow` (its other entries are CIDRs and addresses, which `allowed` knows). */
function allowedHosts(setting: string | undefined): Set<string> {
  const hosts = new Set<string>();
  for (const raw of (setting ?? '').split(',')) {
    const entry = raw.trim();
    if (entry && isIP(entry.split('/')[0]) === 0) hosts.add(entry.toLowerCase().replace(/\.$/, ''));
  }
  return hosts;
}

/** The addresses DNS gives for `host`, or null when it gives none in time (unknown yet, or DNS is away). */
async function resolve(host: string): Promise<string[] | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), LOOKUP_TIMEOUT_MS);
    timer.unref();
  });
  try {
    const found = lookup(host, { all: true, verbatim: true }).then(
      (list) => list.map((a) => a.address),
      () => null,
    );
    return await Promise.race([found, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why the outbound guard would refuse to fetch `url` (its own wording), or null when it would connect. */
export async function jwksUrlRefusal(ctx: Pick<Ctx, 'outbound' | 'settings'>, url: URL): Promise<string | null> {
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (allowedHosts(ctx.settings.outboundAllow).has(host)) return null;
  // A name that does not resolve now cannot be judged: the guard refuses it at fetch time if it must.
  const addresses = isIP(host) ? [host] : await resolve(host);
  if (!addresses?.length || addresses.some((a) => ctx.outbound.allowed(a))) return null;
  return new BlockedAddressError(host, addresses[0], classifyAddress(addresses[0]) ?? 'refused').message;
}
