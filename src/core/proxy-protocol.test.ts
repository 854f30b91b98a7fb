import { describe, expect, it } from 'vitest';
import { parseProxyHeader } from './proxy-protocol.js';

const SIG = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
const v2 = (verCmd: number, family: number, addresses: number[]) =>
  Buffer.from([...SIG, verCmd, family, addresses.length >> 8, addresses.length & 0xff, ...addresses]);

describe('PROXY protocol header', () => {
  it('reads v1: TCP4, TCP6 and UNKNOWN, with the bytes after it left alone', () => {
    const v1 = Buffer.from('PROXY TCP4 198.51.100.7 10.0.0.1 5555 443\r\n\x16\x03\x01');
    expect(parseProxyHeader(v1)).toEqual({ length: v1.length - 3, client: '198.51.100.7' });
    expect(parseProxyHeader(Buffer.from('PROXY TCP6 2001:db8::1 ::1 5555 443\r\n'))).toMatchObject({ client: '2001:db8::1' });
    expect(parseProxyHeader(Buffer.from('PROXY UNKNOWN\r\n'))).toEqual({ length: 15, client: null });
  });

  it('reads v2: IPv4, IPv6, and LOCAL (the peer is the client)', () => {
    expect(parseProxyHeader(v2(0x21, 0x11, [198, 51, 100, 7, 10, 0, 0, 1, 0x15, 0xb3, 0x01, 0xbb]))).toEqual({
      length: 28,
      client: '198.51.100.7',
    });
    const six = [0x20, 0x01, 0x0d, 0xb8, ...new Array(11).fill(0), 1, ...new Array(16).fill(0), 0, 1, 0, 2];
    expect(parseProxyHeader(v2(0x21, 0x21, six))).toEqual({ length: 52, client: '2001:db8:0:0:0:0:0:1' });
    expect(parseProxyHeader(v2(0x20, 0x00, []))).toEqual({ length: 16, client: null });
  });

  it('asks for more while the bytes so far start like a header', () => {
    for (const part of ['P', 'PROXY', 'PROXY TCP4 198.51.100.7 10.0.0.1 5555 44']) expect(parseProxyHeader(Buffer.from(part))).toBe('more');
    expect(parseProxyHeader(Buffer.from(SIG.slice(0, 5)))).toBe('more');
    expect(parseProxyHeader(v2(0x21, 0x11, [198, 51, 100, 7]).subarray(0, 18))).toBe('more');
  });

  it('finds no header in a TLS handshake, and refuses headers it cannot read', () => {
    expect(parseProxyHeader(Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5]))).toBeNull();
    expect(parseProxyHeader(Buffer.from('GET / HTTP/1.1\r\n'))).toBeNull();
    for (const bad of [
      'PROXY TCP4 not-an-ip 10.0.0.1 5555 443\r\n',
      'PROXY TCP4 2001:db8::1 10.0.0.1 5555 443\r\n',
      'PROXY TCP4 198.51.100.7 10.0.0.1 5555 99999\r\n',
      'PROXY TCP4 198.51.100.7 10.0.0.1 5555 443 extra\r\n',
      'PROXY UDP4 198.51.100.7 10.0.0.1 5555 443\r\n',
      `PROXY ${'x'.repeat(110)}`,
    ])
      expect(parseProxyHeader(Buffer.from(bad)), bad).toBe('bad');
    expect(parseProxyHeader(v2(0x11, 0x11, [198, 51, 100, 7, 10, 0, 0, 1, 0, 1, 0, 2]))).toBe('bad');
    expect(parseProxyHeader(v2(0x22, 0x11, [198, 51, 100, 7, 10, 0, 0, 1, 0, 1, 0, 2]))).toBe('bad');
  });
});
