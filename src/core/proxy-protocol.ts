import { isIP, type Socket } from 'node:net';

/**
 * The PROXY protocol (HAProxy's, versions 1 and 2) on a TCP connection a balancer passes through: the
 * balancer writes the client's address before the first byte of the client's own, since it cannot add a
 * header to a TLS stream it does not end. Read only from peers `trusted` (trust_proxy), and only when the
 * connection starts with one: a TLS handshake never starts with either signature, so a balancer that sends
 * none still works. From any other peer the bytes are left to TLS, which refuses them.
 */

/** v1: `PROXY TCP4 <src> <dst> <sport> <dport>\r\n`, at most 107 bytes. */
const V1 = Buffer.from('PROXY ', 'latin1');
const V1_MAX = 107;
/** v2: a 12-byte signature, version and command, family, length (2 bytes), then the addresses. */
const V2 = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const V2_FIXED = 16;
/** A balancer writes its header at once; a peer that has not within this time is dropped. */
const HEADER_TIMEOUT_MS = 10_000;

export type ProxyHeader =
  | { length: number; client: string | null }
  /** The bytes so far start like a header: more are needed. */
  | 'more'
  /** A header that cannot be read. */
  | 'bad'
  /** No header: the connection's own bytes. */
  | null;

/** Reads the header at the start of `buf`: its length and the client address it names (null: a health check's LOCAL or UNKNOWN). */
export function parseProxyHeader(buf: Buffer): ProxyHeader {
  const startsWith = (sig: Buffer) => buf.subarray(0, sig.length).equals(sig.subarray(0, Math.min(sig.length, buf.length)));
  if (buf.length && startsWith(V1)) {
    const end = buf.indexOf('\r\n', 0, 'latin1');
    if (end < 0) return buf.length >= V1_MAX ? 'bad' : 'more';
    if (end + 2 > V1_MAX) return 'bad';
    const [, proto, src, dst, sport, dport, extra] = buf.toString('latin1', 0, end).split(' ');
    if (proto === 'UNKNOWN') return { length: end + 2, client: null };
    const family = proto === 'TCP4' ? 4 : proto === 'TCP6' ? 6 : 0;
    const port = (p: string | undefined) => /^\d{1,5}$/.test(p ?? '') && Number(p) <= 65535;
    if (!family || isIP(src ?? '') !== family || isIP(dst ?? '') !== family || !port(sport) || !port(dport) || extra !== undefined)
      return 'bad';
    return { length: end + 2, client: src };
  }
  if (buf.length && startsWith(V2)) {
    if (buf.length < V2_FIXED) return 'more';
    const length = V2_FIXED + buf.readUInt16BE(14);
    if (buf.length < length) return 'more';
    const version = buf[12] >> 4;
    const command = buf[12] & 0x0f;
    if (version !== 2 || command > 1) return 'bad';
    // LOCAL: the balancer's own connection (a health check); the peer is the client.
    if (command === 0) return { length, client: null };
    const family = buf[13] >> 4;
    if (family === 1 && length >= V2_FIXED + 12) return { length, client: Array.from(buf.subarray(16, 20)).join('.') };
    if (family === 2 && length >= V2_FIXED + 36) {
      const groups: string[] = [];
      for (let i = 0; i < 8; i++) groups.push(buf.readUInt16BE(16 + i * 2).toString(16));
      return { length, client: groups.join(':') };
    }
    // UNSPEC or a family without an IP address (a Unix socket).
    return { length, client: null };
  }
  return null;
}

/**
 * Hands `raw` to `ready` once its PROXY header (if any) is read and taken off the stream, with the client
 * address it names; a peer that is not `trusted` is handed on at once, unread. A header that cannot be read
 * (or never ends) closes the connection.
 */
export function acceptProxied(raw: Socket, trusted: (address: string) => boolean, ready: (client: string | null) => void): void {
  if (!raw.remoteAddress || !trusted(raw.remoteAddress)) return ready(null);
  let buf = Buffer.alloc(0);
  const timer = setTimeout(() => raw.destroy(), HEADER_TIMEOUT_MS);
  const onReadable = () => {
    let chunk: Buffer | null;
    while ((chunk = raw.read() as Buffer | null) !== null) buf = Buffer.concat([buf, chunk]);
    const header = parseProxyHeader(buf);
    if (header === 'more') return;
    stopReading();
    if (header === 'bad') return void raw.destroy();
    const rest = header ? buf.subarray(header.length) : buf;
    if (rest.length) raw.unshift(rest);
    ready(header ? header.client : null);
  };
  // Until it is handed on, the connection's errors (a reset) and end are this function's to take.
  const stopReading = () => {
    clearTimeout(timer);
    raw.off('readable', onReadable);
    raw.off('end', stopReading);
    raw.off('error', stopReading);
  };
  raw.on('readable', onReadable);
  raw.on('end', stopReading);
  raw.on('error', stopReading);
}
