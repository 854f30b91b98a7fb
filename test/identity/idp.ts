import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';

/**
 * An external identity provider played by jose: key pairs, a JWKS served on loopback, and tokens signed
 * with any header the test wants (including broken ones).
 */
export interface TestIdp {
  issuer: string;
  jwks: { keys: JWK[] };
  /** Serves the JWKS at http://127.0.0.1:<port>/jwks and counts requests. */
  serve(): Promise<string>;
  requests: number;
  /** Adds a key (rotation); returns its kid. */
  addKey(alg?: 'RS256' | 'ES256'): Promise<string>;
  sign(claims: JWTPayload, opts?: { kid?: string | null; alg?: string; key?: CryptoKey | Uint8Array; typ?: string }): Promise<string>;
  publicJwk(kid?: string): JWK;
  kid: string;
  close(): Promise<void>;
}

export async function createIdp(issuer = 'https://idp.example.test'): Promise<TestIdp> {
  const keys = new Map<string, { alg: string; privateKey: CryptoKey; jwk: JWK }>();
  let server: Server | null = null;
  let counter = 0;
  const idp: TestIdp = {
    issuer,
    jwks: { keys: [] },
    requests: 0,
    kid: '',
    async addKey(alg = 'RS256') {
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
      const kid = `k${++counter}`;
      const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
      keys.set(kid, { alg, privateKey, jwk });
      idp.jwks.keys.push(jwk);
      return kid;
    },
    async sign(claims, opts = {}) {
      const kid = opts.kid === undefined ? idp.kid : opts.kid;
      const entry = keys.get(kid ?? idp.kid) ?? keys.get(idp.kid)!;
      const alg = opts.alg ?? entry.alg;
      const header: Record<string, unknown> = { alg };
      if (kid !== null) header.kid = kid;
      if (opts.typ) header.typ = opts.typ;
      return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(opts.key ?? entry.privateKey);
    },
    publicJwk(kid = idp.kid) {
      return keys.get(kid)!.jwk;
    },
    async serve() {
      server = createServer((req, res) => {
        idp.requests++;
        if (req.url !== '/jwks') {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(idp.jwks));
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
    },
    async close() {
      if (server) await new Promise<void>((r) => server!.close(() => r()));
    },
  };
  idp.kid = await idp.addKey('RS256');
  return idp;
}

/** Claims of a valid token for `aud`, living `life` seconds from `nowS`. */
export function claimsFor(idp: TestIdp, nowS: number, extra: JWTPayload = {}, aud = 'standin', life = 600): JWTPayload {
  return { iss: idp.issuer, aud, sub: 'repo:acme/api:ref:refs/heads/main', iat: nowS - 5, exp: nowS + life, ...extra };
}
