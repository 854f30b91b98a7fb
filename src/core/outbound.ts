import dns from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type * as Undici from 'undici';
import type { Agent, buildConnector, Dispatcher } from 'undici';
import { lazy } from '../store/lazy.js';
import { isLoopback, type Settings } from './settings.js';

/** undici (a sixth of the bundle) loads on the first outbound call, not at start. */
export const undici = lazy<typeof Undici>('undici');

/**
 * Outbound HTTP with an SSRF guard (webhook deliveries, remote JWKS). The check runs at connect time,
 * on the addresses DNS returned for that very connection, so a name that resolves to a public address
 * when checked and to a private one when used (DNS rebinding) cannot slip through. IP literals in URLs
 * skip DNS, so they are checked before connecting too.
 *
 * Refused unless allow-listed: private (RFC 1918, ULA), carrier-grade NAT, link-local, cloud metadata,
 * loopback (unless `allowLoopback`), unspecified, multicast, documentation and reserved ranges, in IPv4
 * and IPv6 — IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible, NAT64 (`64:ff9b::/96`) and 6to4 addresses
 * are judged by the IPv4 address they carry.
 */

export interface OutboundOptions {
  /** Allow 127.0.0.0/8 and ::1 (Standin allows it while it listens on loopback itself). */
  allowLoopback?: boolean;
  /** CIDRs (`10.0.0.0/8`, `fd00::/8`), single addresses, or host names (`receiver.internal`) that are always allowed. */
  allow?: string[];
  /** Total time for one request: connect, headers and body (ms). Default 10 s. */
  timeoutMs?: number;
  /** Sockets kept per origin. Default 64. */
  connections?: number;
}

export type OutboundRequestOptions = Partial<Omit<Dispatcher.RequestOptions, 'origin' | 'path'>>;

export interface Outbound {
  /** WHATWG fetch through the guarded agent. Redirects are not followed unless `init.redirect` says so (each hop is guarded). */
  fetch(url: string | URL, init?: RequestInit): Promise<Response>;
  /** undici `request` through the guarded agent (faster; never follows redirects). */
  request(url: string | URL, opts?: OutboundRequestOptions): Promise<Dispatcher.ResponseData>;
  /** Whether an address (not a name) may be reached under these options. */
  allowed(address: string): boolean;
  dispatcher: Agent;
  close(): Promise<void>;
}

/** The error of a refused destination; `code` is `ERR_SSRF_BLOCKED`. */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_SSRF_BLOCKED';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`refusing to connect to ${host} (${address}): ${reason} address; allow-list it for local work`);
    this.name = 'BlockedAddressError';
  }
}

const V4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const V6_RANGES: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'reserved'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
];
/** Cloud metadata endpoints (AWS, GCP, Azure, OCI, Alibaba, ECS task metadata, AWS IPv6). Never allowed by `allowLoopback`. */
const METADATA = ['169.254.169.254', '169.254.170.2', '169.254.169.123', '100.100.100.200', 'fd00:ec2::254'];

/** Reads an IPv6 address into 8 16-bit groups (accepts an embedded dotted IPv4 tail). */
function v6Groups(address: string): number[] {
  let text = address.split('%')[0].toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const b = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
export function embeddedIPv4(address: string): string | null {
  const g = v6Groups(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6], g[7]); // ::ffff:a.b.c.d
  if (zero(0, 6) && (g[6] !== 0 || g[7] > 1)) return v4(g[6], g[7]); // ::a.b.c.d (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6], g[7]); // NAT64
  if (g[0] === 0x2002) return v4(g[1], g[2]); // 6to4
  return null;
}

function rangeList(ranges: [string, number, string][], type: 'ipv4' | 'ipv6') {
  return ranges.map(([net, prefix, reason]) => {
    const list = new BlockList();
    list.addSubnet(net, prefix, type);
    return { list, reason, type };
  });
}
const V4 = rangeList(V4_RANGES, 'ipv4');
const V6 = rangeList(V6_RANGES, 'ipv6');

/** Why an address may not be reached by default (`loopback`, `private`, `metadata` …), or null for a public address. */
export function classifyAddress(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'invalid';
  const normalized =
    family === 6
      ? v6Groups(address)
          .map((x) => x.toString(16))
          .join(':')
      : address;
  if (METADATA.some((m) => (isIP(m) === family ? sameAddress(m, normalized) : false))) return 'cloud metadata';
  if (family === 6) {
    const inner = embeddedIPv4(normalized);
    if (inner) return classifyAddress(inner);
    for (const r of V6) if (r.list.check(normalized, 'ipv6')) return r.reason;
    return null;
  }
  for (const r of V4) if (r.list.check(address, 'ipv4')) return r.reason;
  return null;
}

function sameAddress(a: string, b: string): boolean {
  if (isIP(a) === 4) return a === b;
  return v6Groups(a).join(':') === v6Groups(b).join(':');
}

interface AllowList {
  hosts: Set<string>;
  nets: BlockList;
}

function parseAllow(entries: string[]): AllowList {
  const hosts = new Set<string>();
  const nets = new BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) continue;
    const [addr, prefix] = entry.split('/');
    const family = isIP(addr);
    if (family === 0) {
      if (prefix !== undefined) throw new Error(`'${entry}' is not a CIDR`);
      hosts.add(entry.toLowerCase().replace(/\.$/, ''));
      continue;
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix);
    if (!Number.isInteger(bits) || bits < 0 || bits > (family === 4 ? 32 : 128)) throw new Error(`'${entry}' has an invalid prefix length`);
    nets.addSubnet(addr, bits, type);
  }
  return { hosts, nets };
}

/** Builds the guarded outbound client. */
export function createOutbound(opts: OutboundOptions = {}): Outbound {
  const allow = parseAllow(opts.allow ?? []);
  const timeoutMs = opts.timeoutMs ?? 10_000;

  function allowed(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    if (allow.nets.check(address, family === 4 ? 'ipv4' : 'ipv6')) return true;
    const inner = family === 6 ? embeddedIPv4(address) : null;
    if (inner && allow.nets.check(inner, 'ipv4')) return true;
    const reason = classifyAddress(address);
    if (reason === null) return true;
    return reason === 'loopback' && opts.allowLoopback === true;
  }

  function check(host: string, address: string): BlockedAddressError | null {
    if (allow.hosts.has(host.toLowerCase().replace(/\.$/, ''))) return null;
    if (allowed(address)) return null;
    return new BlockedAddressError(host, address, classifyAddress(address) ?? 'refused');
  }

  // Resolves every address, keeps the permitted ones, and hands only those to the socket.
  const lookup: LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const ok = list.filter((a) => check(hostname, a.address) === null);
      if (ok.length === 0) {
        const first = list[0];
        return callback(check(hostname, first?.address ?? '') ?? new Error(`no address for ${hostname}`), '', 0);
      }
      if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, ok);
      callback(null, ok[0].address, ok[0].family);
    });
  };

  // The agent (and undici with it) is made on the first call.
  let agent: Agent | undefined;
  const dispatcher = (): Agent => {
    if (agent) return agent;
    const base = undici().buildConnector({ timeout: Math.min(timeoutMs, 10_000), lookup } as buildConnector.BuildOptions);
    const connect: buildConnector.connector = (options, callback) => {
      const host = options.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host)) {
        const refused = check(host, host);
        if (refused) return callback(refused, null);
      }
      return base(options, callback);
    };
    return (agent = new (undici().Agent)({
      connect,
      connections: opts.connections ?? 64,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 4_000,
    }));
  };

  return {
    get dispatcher() {
      return dispatcher();
    },
    allowed,
    fetch(url, init = {}) {
      const signal = init.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      return undici().fetch(url, { redirect: 'manual', ...(init as object), signal, dispatcher: dispatcher() } as Parameters<
        typeof Undici.fetch
      >[1]) as unknown as Promise<Response>;
    },
    request(url, options: OutboundRequestOptions = {}) {
      const signal = options.signal ?? AbortSignal.timeout(timeoutMs);
      return undici().request(url, { ...options, signal, dispatcher: dispatcher() } as Parameters<
        typeof Undici.request
      >[1]) as Promise<Dispatcher.ResponseData>;
    },
    close: async () => {
      await agent?.close();
    },
  };
}

/**
 * Reads at most `maxBytes` of a response body (fetch `Response` or undici `request` body) and cancels
 * the rest, so a receiver cannot make Standin buffer an endless answer. Returns the text and whether it was cut.
 */
export async function readCapped(
  res: Response | { body: (AsyncIterable<Uint8Array> & { destroy?(): void }) | ReadableStream<Uint8Array> | null },
  maxBytes: number,
): Promise<{ text: string; truncated: boolean; bytes: number }> {
  const body = (res as { body: unknown }).body;
  if (!body) return { text: '', truncated: false, bytes: 0 };
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  const iterable: AsyncIterable<Uint8Array> =
    typeof (body as ReadableStream).getReader === 'function' && !(Symbol.asyncIterator in (body as object))
      ? streamIterable(body as ReadableStream<Uint8Array>)
      : (body as AsyncIterable<Uint8Array>);
  const iterator = iterable[Symbol.asyncIterator]();
  try {
    for (;;) {
      const { value, done } = await iterator.next();
      if (done) break;
      const chunk = Buffer.from(value);
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    if (truncated) {
      await iterator.return?.().catch(() => {});
      (body as { destroy?(): void }).destroy?.();
    }
  }
  // A cut in the middle of a UTF-8 sequence leaves a replacement character; that is fine for an excerpt.
  return { text: Buffer.concat(chunks).toString('utf8'), truncated, bytes: size };
}

async function* streamIterable(stream: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * The SSRF-guarded client of a Standin's outbound calls. Loopback is allowed only while Standin itself
 * listens on loopback (a developer's receiver on localhost); `--outbound-allow` adds CIDRs or hosts.
 */
export function outboundFor(settings: Pick<Settings, 'host' | 'outboundAllow' | 'webhookTimeoutMs'>): Outbound {
  return createOutbound({
    allowLoopback: isLoopback(settings.host),
    allow: (settings.outboundAllow ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    timeoutMs: settings.webhookTimeoutMs,
    connections: 128,
  });
}
