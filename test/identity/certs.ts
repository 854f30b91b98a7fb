import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * Certificates for the tests and the bench, made with @peculiar/x509: roots, intermediates and leaves with
 * any validity, key usage, EKU, SAN, key type and CA flag a test needs.
 */
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export type KeyAlg = 'ec-p256' | 'ec-p384' | 'rsa-2048' | 'rsa-1024' | 'ed25519' | 'ec-k256';

export interface Issued {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
  pem: string;
  der: Buffer;
  /** PKCS#8 PEM of the private key (for TLS clients). */
  keyPem: string;
  alg: KeyAlg;
}

const DAY = 86_400_000;

function algorithm(alg: KeyAlg): { gen: EcKeyGenParams | RsaHashedKeyGenParams | Algorithm; sign: Algorithm | EcdsaParams } {
  switch (alg) {
    case 'ec-p256':
      return { gen: { name: 'ECDSA', namedCurve: 'P-256' }, sign: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams };
    case 'ec-p384':
      return { gen: { name: 'ECDSA', namedCurve: 'P-384' }, sign: { name: 'ECDSA', hash: 'SHA-384' } as EcdsaParams };
    case 'ec-k256':
      return { gen: { name: 'ECDSA', namedCurve: 'K-256' }, sign: { name: 'ECDSA', hash: 'SHA-256' } as EcdsaParams };
    case 'rsa-2048':
    case 'rsa-1024':
      return {
        gen: {
          name: 'RSASSA-PKCS1-v1_5',
          modulusLength: alg === 'rsa-2048' ? 2048 : 1024,
          publicExponent: new Uint8Array([1, 0, 1]),
          hash: 'SHA-256',
        },
        sign: { name: 'RSASSA-PKCS1-v1_5' },
      };
    case 'ed25519':
      return { gen: { name: 'Ed25519' }, sign: { name: 'Ed25519' } };
  }
}

async function keyPair(alg: KeyAlg): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(algorithm(alg).gen as EcKeyGenParams, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function finish(cert: x509.X509Certificate, keys: CryptoKeyPair, alg: KeyAlg): Promise<Issued> {
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END PRIVATE KEY-----\n`;
  return { cert, keys, pem: `${cert.toString('pem').trim()}\n`, der: Buffer.from(cert.rawData), keyPem, alg };
}

export interface CertOptions {
  name?: string;
  notBefore?: Date;
  notAfter?: Date;
  alg?: KeyAlg;
}

/** A self-signed root CA. */
export async function makeRoot(name = 'Test Root', opts: CertOptions = {}): Promise<Issued> {
  const alg = opts.alg ?? 'ec-p256';
  const keys = await keyPair(alg);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${name}, O=Standin Tests`,
    keys,
    signingAlgorithm: algorithm(alg).sign,
    notBefore: opts.notBefore ?? new Date(Date.now() - DAY),
    notAfter: opts.notAfter ?? new Date(Date.now() + 3650 * DAY),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return finish(cert, keys, alg);
}

async function signedBy(
  issuer: Issued,
  name: string,
  keys: CryptoKeyPair,
  extensions: x509.Extension[],
  opts: CertOptions,
): Promise<x509.X509Certificate> {
  return x509.X509CertificateGenerator.create({
    subject: name,
    issuer: issuer.cert.subject,
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    signingAlgorithm: algorithm(issuer.alg).sign,
    notBefore: opts.notBefore ?? new Date(Date.now() - DAY),
    notAfter: opts.notAfter ?? new Date(Date.now() + 30 * DAY),
    extensions: [
      ...extensions,
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(issuer.keys.publicKey),
    ],
  });
}

/** An intermediate CA signed by `issuer`. */
export async function makeIntermediate(issuer: Issued, name = 'Test Intermediate', opts: CertOptions = {}): Promise<Issued> {
  const alg = opts.alg ?? 'ec-p256';
  const keys = await keyPair(alg);
  const cert = await signedBy(
    issuer,
    `CN=${name}, O=Standin Tests`,
    keys,
    [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
    { notAfter: new Date(Date.now() + 365 * DAY), ...opts },
  );
  return finish(cert, keys, alg);
}

export interface LeafOptions extends CertOptions {
  cn?: string;
  ou?: string[];
  uris?: string[];
  dns?: string[];
  /** Default digitalSignature; null leaves the extension out. */
  keyUsage?: number | null;
  /** Default [clientAuth]; null leaves the extension out. */
  eku?: string[] | null;
  ca?: boolean;
}

/** A client leaf signed by `issuer`. */
export async function makeLeaf(issuer: Issued, opts: LeafOptions = {}): Promise<Issued> {
  const alg = opts.alg ?? 'ec-p256';
  const keys = await keyPair(alg);
  const ext: x509.Extension[] = [];
  if (opts.ca) ext.push(new x509.BasicConstraintsExtension(true, undefined, true));
  const ku = opts.keyUsage === undefined ? x509.KeyUsageFlags.digitalSignature : opts.keyUsage;
  if (ku !== null) ext.push(new x509.KeyUsagesExtension(ku, true));
  const eku = opts.eku === undefined ? [x509.ExtendedKeyUsage.clientAuth] : opts.eku;
  if (eku !== null) ext.push(new x509.ExtendedKeyUsageExtension(eku, false));
  const names: x509.JsonGeneralName[] = [
    ...(opts.uris ?? []).map((value) => ({ type: 'url' as const, value })),
    ...(opts.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
  ];
  if (names.length) ext.push(new x509.SubjectAlternativeNameExtension(names, false));
  const ou = (opts.ou ?? []).map((u) => `, OU=${u}`).join('');
  const cert = await signedBy(issuer, `CN=${opts.cn ?? 'worker-1'}${ou}, O=Acme`, keys, ext, opts);
  return finish(cert, keys, alg);
}

export const KeyUsage = x509.KeyUsageFlags;
export const Eku = x509.ExtendedKeyUsage;
