import { BlockList, isIP } from 'node:net';

/**
 * Which peers' X-Forwarded-For Standin believes (`trust_proxy`): the load balancers in front of it. A
 * request from such a peer is from the address the balancer names; from any other peer, X-Forwarded-For
 * is only a header and the peer is the client. Empty (the default) believes no one.
 */
export interface ProxyTrust {
  /** Whether X-Forwarded-For from `address` (a connection's peer, or a hop it names) is believed. */
  trusts(address: string): boolean;
  /** Replaces the list (the config file's `trust_proxy`). */
  set(entries: readonly string[]): void;
  /** The list as given. */
  entries(): readonly string[];
}

/** Splits the setting's comma-separated list. */
export const splitTrustProxy = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const unmapped = (address: string) => (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address);

/** Builds the list; throws a readable error for an entry that is neither an address nor a CIDR. */
function blockListOf(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(unmapped(address));
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!family || extra !== undefined || !(prefix >= 0 && prefix <= (family === 6 ? 128 : 32)))
      throw new Error(`trust_proxy: '${entry}' is not an IP address or CIDR (e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8)`);
    list.addSubnet(unmapped(address), prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** The trust of one Standin, starting from the `--trust-proxy` setting. */
export function createProxyTrust(initial: readonly string[] = []): ProxyTrust {
  let given = [...initial];
  let list = given.length ? blockListOf(given) : undefined;
  return {
    trusts(address) {
      if (!list) return false;
      const a = unmapped(address);
      return list.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
    },
    set(entries) {
      const next = entries.length ? blockListOf(entries) : undefined;
      given = [...entries];
      list = next;
    },
    entries: () => given,
  };
}
