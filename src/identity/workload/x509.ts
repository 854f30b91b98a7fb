import { createHash, X509Certificate } from 'node:crypto';
import type * as asn1js from 'asn1js';
import type * as Pkijs from 'pkijs';
import { lazy } from '../../store/lazy.js';

const pkijsLib = lazy<typeof Pkijs>('pkijs');
import { CertificateVerificationFailed } from './errors.js';

/**
 * Client certificate verification for X.509 token exchange. The path from the leaf to an active root is
 * built over the certificates the client presented in the TLS handshake only (missing intermediates are
 * not fetched; no CRL or OCSP), and every link is checked by OpenSSL through Node's X509Certificate:
 * `checkIssued` (names, key identifiers, the issuer's keyCertSign usage) and `verify` (the signature).
 * Every certificate of the path must be within its validity, intermediates must be CAs. The TLS handshake
 * itself proved possession of the leaf's private key. Then the anchor root's admission rules apply.
 *
 * Signature checks and the parse of a leaf's extensions (pkijs) are cached by the certificates' SHA-256,
 * so a workload presenting the same certificate again pays for neither; validity, the trusted root set
 * and the admission rules are evaluated on every exchange.
 */
export const X509_LIMITS = { maxPresented: 10, maxCertBytes: 16 * 1024 } as const;

export type KeyType = 'rsa' | 'rsa-pss' | 'ec' | 'ed25519' | 'ed448';

/** Certificate-admission rules of an mTLS root (wire names). */
export interface AdmissionRules {
  /** The leaf's key usage must be present and include digitalSignature. */
  require_digital_signature: boolean;
  /** `when_present`: an EKU extension must include clientAuth; `required`: it must be present and include it. */
  client_auth_eku: 'when_present' | 'required';
  key_types: KeyType[];
  min_rsa_bits: number;
  ec_curves: string[];
  /** Most intermediate CA certificates between the leaf and the root. */
  max_chain_depth: number;
  /** Longest notBefore→notAfter span of a leaf, in days. */
  max_leaf_lifetime_days: number;
}

export const DEFAULT_ADMISSION: AdmissionRules = {
  require_digital_signature: true,
  client_auth_eku: 'when_present',
  key_types: ['rsa', 'ec', 'ed25519'],
  min_rsa_bits: 2048,
  ec_curves: ['P-256', 'P-384', 'P-521'],
  max_chain_depth: 3,
  max_leaf_lifetime_days: 398,
};

/** A parsed certificate with what path building needs. */
interface Cert {
  fp: string;
  node: X509Certificate;
  /** Validity, Unix seconds. */
  notBefore: number;
  notAfter: number;
}

/** A root as the verifier needs it: parsed once per root and kept. */
export interface TrustedRoot extends Cert {
  id: string;
  projectId: string | null;
  admission: AdmissionRules;
  der: Buffer;
}

export interface CertificateAssertion {
  subject: { dn: DistinguishedName };
  issuer: { dn: DistinguishedName };
  san: { uris: string[]; dns: string[]; emails: string[]; ips: string[] };
  serial_number: string;
  fingerprint_sha256: string;
  not_before: number;
  not_after: number;
  /** The first SPIFFE URI SAN, if any. */
  spiffe_id: string | null;
}

/** Single-valued attributes as strings; `ou` and `dc` as lists. Absent attributes are absent keys. */
export type DistinguishedName = Record<string, string | string[]>;

export interface VerifiedClientCertificate {
  root: TrustedRoot;
  assertion: CertificateAssertion;
  /** Standin clock seconds when the leaf expires. */
  expiresAt: number;
  fingerprint: string;
  /** Certificates in the validated path, leaf first, root last. */
  pathLength: number;
}

const fail = (reason: ConstructorParameters<typeof CertificateVerificationFailed>[0], description: string) =>
  new CertificateVerificationFailed(reason, description);

const sha256 = (der: Buffer) => createHash('sha256').update(der).digest('hex');

/** A Map that forgets its oldest entries beyond `max`. */
class Lru<V> extends Map<string, V> {
  constructor(private readonly max: number) {
    super();
  }
  override set(key: string, value: V): this {
    if (this.size >= this.max) this.delete(this.keys().next().value!);
    return super.set(key, value);
  }
}

function parseCert(der: Buffer, fp = sha256(der)): Cert {
  const node = new X509Certificate(der);
  return { fp, node, notBefore: Math.floor(Date.parse(node.validFrom) / 1000), notAfter: Math.floor(Date.parse(node.validTo) / 1000) };
}

/** Parses a PEM certificate for use as a trusted root; throws Error with a message naming the rule. */
export function parseRoot(input: { id: string; pem: string; projectId: string | null; admission: AdmissionRules }): TrustedRoot {
  const der = pemToDer(input.pem);
  if (!isCa(pkijsLib().Certificate.fromBER(new Uint8Array(der))))
    throw new Error('an mTLS root must be a CA certificate (basicConstraints cA=true)');
  return { ...parseCert(der), id: input.id, projectId: input.projectId, admission: input.admission, der };
}

/** PEM (one certificate) → DER. */
export function pemToDer(pem: string): Buffer {
  const m = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/.exec(pem);
  if (!m) throw new Error('not a PEM certificate');
  const rest = pem.slice(m.index + m[0].length);
  if (/-----BEGIN/.test(rest)) throw new Error('one certificate per root');
  return Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
}

/** Details of a certificate for listings: subject, fingerprint, validity (seconds). */
export function describeCertificate(der: Buffer): { subject: string; fingerprint_sha256: string; not_before: number; not_after: number } {
  const c = parseCert(der);
  return { subject: c.node.subject.replace(/\n/g, ', '), fingerprint_sha256: c.fp, not_before: c.notBefore, not_after: c.notAfter };
}

/** Facts of a leaf read from its extensions (pkijs), cached by fingerprint. */
interface LeafFacts {
  isCa: boolean;
  keyUsage: number | null;
  extKeyUsage: string[] | null;
  assertion: CertificateAssertion;
}

/**
 * The verifier of one process: caches parsed certificates, leaf facts and the outcome of signature
 * checks (keyed by the SHA-256 of both certificates, so a cached "issued by" is exactly the same bytes).
 */
export class ChainVerifier {
  private readonly certs = new Lru<Cert>(2_000);
  private readonly leaves = new Lru<LeafFacts>(1_000);
  private readonly links = new Lru<boolean>(4_000);

  /**
   * Verifies a client-presented chain (DER, leaf first, then the intermediates the client sent) against
   * `roots` at `nowMs` (Standin clock). Throws CertificateVerificationFailed (`invalid_subject_token`).
   */
  verify(presented: Buffer[], roots: TrustedRoot[], nowMs: number): VerifiedClientCertificate {
    if (presented.length === 0) throw fail('missing', 'No client certificate was presented in the TLS handshake.');
    if (presented.length > X509_LIMITS.maxPresented)
      throw fail('malformed', `At most ${X509_LIMITS.maxPresented} certificates may be presented.`);
    let chain: Cert[];
    let facts: LeafFacts;
    try {
      chain = presented.map((der) => {
        if (der.length > X509_LIMITS.maxCertBytes) throw new Error('too large');
        return this.cert(der);
      });
      facts = this.leafFacts(presented[0], chain[0]);
    } catch {
      throw fail('malformed', 'The client certificate material is malformed.');
    }
    const leaf = chain[0];
    const nowS = Math.floor(nowMs / 1000);
    if (nowS < leaf.notBefore) throw fail('not_yet_valid', 'The client certificate is not yet valid.');
    if (nowS >= leaf.notAfter) throw fail('expired', 'The client certificate has expired.');

    const path = this.buildPath(leaf, chain.slice(1), roots, nowS, new Set([leaf.fp]), 0);
    if (!path) {
      throw fail(
        'untrusted_chain',
        'The client certificate does not chain to an active mTLS root of the organization (intermediates must be presented by the client; all must be within their validity).',
      );
    }
    const root = path[path.length - 1] as TrustedRoot;
    checkAdmission(facts, leaf, path.length - 2, root.admission);
    return { root, assertion: facts.assertion, expiresAt: leaf.notAfter, fingerprint: leaf.fp, pathLength: path.length };
  }

  private cert(der: Buffer): Cert {
    const fp = sha256(der);
    let c = this.certs.get(fp);
    if (!c) this.certs.set(fp, (c = parseCert(der, fp)));
    return c;
  }

  private leafFacts(der: Buffer, leaf: Cert): LeafFacts {
    let f = this.leaves.get(leaf.fp);
    if (!f) {
      const parsed = pkijsLib().Certificate.fromBER(new Uint8Array(der));
      const eku = parsed.extensions?.find((e) => e.extnID === OID.extKeyUsage);
      f = {
        isCa: isCa(parsed),
        keyUsage: keyUsageBits(parsed),
        extKeyUsage: eku ? ((eku.parsedValue as Pkijs.ExtKeyUsage | undefined)?.keyPurposes ?? []) : null,
        assertion: assertionOf(parsed, leaf),
      };
      this.leaves.set(leaf.fp, f);
    }
    return f;
  }

  /** Whether `child` was issued and signed by `issuer` (OpenSSL), cached by both fingerprints. */
  private issuedBy(child: Cert, issuer: Cert): boolean {
    const key = `${child.fp}>${issuer.fp}`;
    let ok = this.links.get(key);
    if (ok === undefined) {
      ok = child.node.checkIssued(issuer.node) && child.node.verify(issuer.node.publicKey);
      this.links.set(key, ok);
    }
    return ok;
  }

  /** Depth-first path search to a trusted root, over the presented intermediates only; every link and certificate valid now. */
  private buildPath(
    cert: Cert,
    intermediates: Cert[],
    roots: TrustedRoot[],
    nowS: number,
    used: Set<string>,
    depth: number,
  ): Cert[] | null {
    if (depth > X509_LIMITS.maxPresented) return null;
    for (const root of roots) {
      if (nowS >= root.notBefore && nowS < root.notAfter && this.issuedBy(cert, root)) return [cert, root];
    }
    for (const inter of intermediates) {
      if (used.has(inter.fp) || !inter.node.ca || nowS < inter.notBefore || nowS >= inter.notAfter) continue;
      if (!this.issuedBy(cert, inter)) continue;
      used.add(inter.fp);
      const rest = this.buildPath(inter, intermediates, roots, nowS, used, depth + 1);
      used.delete(inter.fp);
      if (rest) return [cert, ...rest];
    }
    return null;
  }
}

const OID = {
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

/** basicConstraints cA, read from the extension itself (OpenSSL's notion of "CA" also weighs key usage). */
function isCa(cert: Pkijs.Certificate): boolean {
  const ext = cert.extensions?.find((e) => e.extnID === OID.basicConstraints);
  return Boolean((ext?.parsedValue as Pkijs.BasicConstraints | undefined)?.cA);
}

/** The key usage bits as a number (bit 0 = digitalSignature … bit 8 = decipherOnly), or null when absent. */
function keyUsageBits(cert: Pkijs.Certificate): number | null {
  const ext = cert.extensions?.find((e) => e.extnID === OID.keyUsage);
  if (!ext) return null;
  const bits = (ext.parsedValue as asn1js.BitString | undefined)?.valueBlock?.valueHexView;
  if (!bits) return 0;
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = bits[i >> 3] ?? 0;
    if (byte & (0x80 >> (i & 7))) value |= 1 << i;
  }
  return value;
}
const KU_DIGITAL_SIGNATURE = 1 << 0;
const KU_KEY_CERT_SIGN = 1 << 5;

function checkAdmission(facts: LeafFacts, leaf: Cert, intermediates: number, rules: AdmissionRules): void {
  const refuse = (rule: string) => fail('admission', `The client certificate is refused by the root's admission rules: ${rule}.`);
  const ku = facts.keyUsage;
  if (facts.isCa || (ku !== null && ku & KU_KEY_CERT_SIGN)) throw refuse('the leaf must not be a CA certificate');
  if (rules.require_digital_signature && (ku === null || !(ku & KU_DIGITAL_SIGNATURE)))
    throw refuse('key usage must include digitalSignature');
  if (facts.extKeyUsage && !facts.extKeyUsage.includes(OID.clientAuth)) throw refuse('extended key usage must include clientAuth');
  if (!facts.extKeyUsage && rules.client_auth_eku === 'required') throw refuse('an extended key usage with clientAuth is required');

  const key = leaf.node.publicKey;
  const type = key.asymmetricKeyType as KeyType | undefined;
  if (!type || !rules.key_types.includes(type)) throw refuse(`key type must be one of ${rules.key_types.join(', ')}`);
  const details = key.asymmetricKeyDetails ?? {};
  if ((type === 'rsa' || type === 'rsa-pss') && (details.modulusLength ?? 0) < rules.min_rsa_bits)
    throw refuse(`RSA keys must have at least ${rules.min_rsa_bits} bits`);
  if (type === 'ec') {
    const curve = namedCurve(details.namedCurve);
    if (!curve || !rules.ec_curves.includes(curve)) throw refuse(`EC keys must use one of ${rules.ec_curves.join(', ')}`);
  }
  if (intermediates > rules.max_chain_depth) throw refuse(`at most ${rules.max_chain_depth} intermediate certificates`);
  if (leaf.notAfter - leaf.notBefore > rules.max_leaf_lifetime_days * 86_400)
    throw refuse(`a leaf may be valid for at most ${rules.max_leaf_lifetime_days} days`);
}

const CURVES: Record<string, string> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
  'P-256': 'P-256',
  'P-384': 'P-384',
  'P-521': 'P-521',
};
const namedCurve = (name: string | undefined) => (name ? (CURVES[name] ?? name) : null);

const DN_KEYS: Record<string, string> = {
  '2.5.4.3': 'cn',
  '2.5.4.10': 'o',
  '2.5.4.11': 'ou',
  '2.5.4.6': 'c',
  '2.5.4.7': 'l',
  '2.5.4.8': 'st',
  '2.5.4.5': 'serial_number',
  '1.2.840.113549.1.9.1': 'email',
  '0.9.2342.19200300.100.1.25': 'dc',
  '0.9.2342.19200300.100.1.1': 'uid',
};
const MULTI = new Set(['ou', 'dc']);

function dnOf(name: Pkijs.RelativeDistinguishedNames): DistinguishedName {
  const out: DistinguishedName = {};
  for (const tv of name.typesAndValues) {
    const key = DN_KEYS[tv.type];
    if (!key) continue;
    const value = String((tv.value as { valueBlock?: { value?: unknown } }).valueBlock?.value ?? '');
    if (MULTI.has(key)) out[key] = [...((out[key] as string[] | undefined) ?? []), value];
    else if (!(key in out)) out[key] = value;
  }
  return out;
}

function assertionOf(parsed: Pkijs.Certificate, leaf: Cert): CertificateAssertion {
  const san = { uris: [] as string[], dns: [] as string[], emails: [] as string[], ips: [] as string[] };
  const ext = parsed.extensions?.find((e) => e.extnID === OID.subjectAltName);
  for (const name of (ext?.parsedValue as Pkijs.AltName | undefined)?.altNames ?? []) {
    if (name.type === 6) san.uris.push(String(name.value));
    else if (name.type === 2) san.dns.push(String(name.value));
    else if (name.type === 1) san.emails.push(String(name.value));
    else if (name.type === 7) san.ips.push(ipOf((name.value as asn1js.OctetString).valueBlock.valueHexView));
  }
  return {
    subject: { dn: dnOf(parsed.subject) },
    issuer: { dn: dnOf(parsed.issuer) },
    san,
    serial_number: leaf.node.serialNumber.toLowerCase(),
    fingerprint_sha256: leaf.fp,
    not_before: leaf.notBefore,
    not_after: leaf.notAfter,
    spiffe_id: san.uris.find((u) => u.startsWith('spiffe://')) ?? null,
  };
}

function ipOf(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  if (bytes.length === 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
    return groups.join(':');
  }
  return Buffer.from(bytes).toString('hex');
}

const shared = new ChainVerifier();

/** `ChainVerifier.verify` with a process-wide verifier (and its caches). */
export async function verifyClientChain(presented: Buffer[], roots: TrustedRoot[], nowMs: number): Promise<VerifiedClientCertificate> {
  return shared.verify(presented, roots, nowMs);
}
