import { beforeAll, describe, expect, it } from 'vitest';
import { Eku, KeyUsage, makeIntermediate, makeLeaf, makeRoot, type Issued } from '../../../test/identity/certs.js';
import { createClock } from '../../core/clock.js';
import { CertificateVerificationFailed } from './errors.js';
import { DEFAULT_ADMISSION, parseRoot, pemToDer, verifyClientChain, type AdmissionRules, type TrustedRoot } from './x509.js';

const DAY = 86_400_000;
let root: Issued;
let inter: Issued;
let otherRoot: Issued;
let trusted: TrustedRoot;
let other: TrustedRoot;
// Certificates are judged by Standin's clock; an unmoved clock reads the wall time.
const now = () => createClock().now();

const trust = (r: Issued, admission: Partial<AdmissionRules> = {}, id = 'root_1'): TrustedRoot =>
  parseRoot({ id, pem: r.pem, projectId: null, admission: { ...DEFAULT_ADMISSION, ...admission } });

beforeAll(async () => {
  root = await makeRoot('Acme Root');
  inter = await makeIntermediate(root, 'Acme Issuing');
  otherRoot = await makeRoot('Other Org Root');
  trusted = trust(root);
  other = trust(otherRoot, {}, 'root_other');
});

async function refusal(chain: Buffer[], roots: TrustedRoot[] = [trusted], at = now()): Promise<string> {
  try {
    await verifyClientChain(chain, roots, at);
  } catch (err) {
    expect(err).toBeInstanceOf(CertificateVerificationFailed);
    expect((err as CertificateVerificationFailed).code).toBe('invalid_subject_token');
    expect((err as Error).message).not.toMatch(/BEGIN CERTIFICATE/);
    return (err as CertificateVerificationFailed).reason;
  }
  throw new Error('chain accepted');
}

describe('verifyClientChain', () => {
  it('accepts leaf → intermediate → root and exposes the assertion', async () => {
    const leaf = await makeLeaf(inter, {
      cn: 'worker-7',
      ou: ['payments', 'eu'],
      uris: ['spiffe://acme.test/worker'],
      dns: ['w7.acme.test'],
    });
    const v = await verifyClientChain([leaf.der, inter.der], [other, trusted], now());
    expect(v.root.id).toBe('root_1');
    expect(v.pathLength).toBe(3);
    expect(v.assertion.subject.dn).toEqual({ cn: 'worker-7', ou: ['payments', 'eu'], o: 'Acme' });
    expect(v.assertion.issuer.dn.cn).toBe('Acme Issuing');
    expect(v.assertion.san.uris).toEqual(['spiffe://acme.test/worker']);
    expect(v.assertion.san.dns).toEqual(['w7.acme.test']);
    expect(v.assertion.spiffe_id).toBe('spiffe://acme.test/worker');
    expect(v.expiresAt).toBe(v.assertion.not_after);
  });

  it('accepts a leaf signed by the root directly, and RSA and Ed25519 keys', async () => {
    for (const alg of ['rsa-2048', 'ed25519'] as const) {
      const leaf = await makeLeaf(root, { alg });
      await expect(verifyClientChain([leaf.der], [trusted], now())).resolves.toBeTruthy();
    }
  });

  it('refuses no certificate and malformed material', async () => {
    expect(await refusal([])).toBe('missing');
    expect(await refusal([Buffer.from('not a certificate')])).toBe('malformed');
  });

  it("refuses a chain to another organization's root", async () => {
    const leaf = await makeLeaf(inter);
    expect(await refusal([leaf.der, inter.der], [other])).toBe('untrusted_chain');
    expect(await refusal([leaf.der, inter.der], [])).toBe('untrusted_chain');
  });

  it('refuses a missing intermediate (never fetched)', async () => {
    const leaf = await makeLeaf(inter);
    expect(await refusal([leaf.der])).toBe('untrusted_chain');
  });

  it('refuses a root presented by the client as if it were trusted', async () => {
    const leaf = await makeLeaf(otherRoot);
    expect(await refusal([leaf.der, otherRoot.der])).toBe('untrusted_chain');
  });

  it('refuses a leaf whose signature does not verify (same names, other key)', async () => {
    const impostor = await makeRoot('Acme Root');
    const leaf = await makeLeaf(impostor);
    expect(await refusal([leaf.der])).toBe('untrusted_chain');
  });

  it('refuses an expired or not-yet-valid leaf', async () => {
    const expired = await makeLeaf(inter, { notBefore: new Date(now() - 10 * DAY), notAfter: new Date(now() - DAY) });
    expect(await refusal([expired.der, inter.der])).toBe('expired');
    const future = await makeLeaf(inter, { notBefore: new Date(now() + DAY), notAfter: new Date(now() + 10 * DAY) });
    expect(await refusal([future.der, inter.der])).toBe('not_yet_valid');
  });

  it('refuses an expired intermediate', async () => {
    const oldInter = await makeIntermediate(root, 'Old Issuing', {
      notBefore: new Date(now() - 10 * DAY),
      notAfter: new Date(now() - DAY),
    });
    const leaf = await makeLeaf(oldInter);
    expect(await refusal([leaf.der, oldInter.der])).toBe('untrusted_chain');
  });

  it('uses the given clock, not the wall clock', async () => {
    const leaf = await makeLeaf(inter, { notAfter: new Date(now() + 2 * DAY) });
    await expect(verifyClientChain([leaf.der, inter.der], [trusted], now())).resolves.toBeTruthy();
    expect(await refusal([leaf.der, inter.der], [trusted], now() + 3 * DAY)).toBe('expired');
  });

  it('refuses a CA certificate as the leaf', async () => {
    const caLeaf = await makeLeaf(inter, { ca: true, keyUsage: KeyUsage.digitalSignature });
    expect(await refusal([caLeaf.der, inter.der])).toBe('admission');
    const signer = await makeLeaf(inter, { keyUsage: KeyUsage.digitalSignature | KeyUsage.keyCertSign });
    expect(await refusal([signer.der, inter.der])).toBe('admission');
    // An intermediate presented as the leaf is a CA too.
    expect(await refusal([inter.der])).toBe('admission');
  });

  it('admission: digitalSignature, clientAuth EKU when present, key types and sizes', async () => {
    expect(await refusal([(await makeLeaf(inter, { keyUsage: KeyUsage.keyEncipherment })).der, inter.der])).toBe('admission');
    expect(await refusal([(await makeLeaf(inter, { keyUsage: null })).der, inter.der])).toBe('admission');
    expect(await refusal([(await makeLeaf(inter, { eku: [Eku.serverAuth] })).der, inter.der])).toBe('admission');
    // No EKU at all passes "when present" and fails "required".
    const noEku = await makeLeaf(inter, { eku: null });
    await expect(verifyClientChain([noEku.der, inter.der], [trusted], now())).resolves.toBeTruthy();
    expect(await refusal([noEku.der, inter.der], [trust(root, { client_auth_eku: 'required' })])).toBe('admission');
    expect(await refusal([(await makeLeaf(inter, { alg: 'rsa-1024' })).der, inter.der])).toBe('admission');
    expect(await refusal([(await makeLeaf(inter, { alg: 'ec-p384' })).der, inter.der], [trust(root, { ec_curves: ['P-256'] })])).toBe(
      'admission',
    );
    expect(await refusal([(await makeLeaf(inter, { alg: 'ed25519' })).der, inter.der], [trust(root, { key_types: ['ec'] })])).toBe(
      'admission',
    );
  });

  it('admission: chain depth and leaf lifetime', async () => {
    const leaf = await makeLeaf(inter);
    expect(await refusal([leaf.der, inter.der], [trust(root, { max_chain_depth: 0 })])).toBe('admission');
    const long = await makeLeaf(inter, { notAfter: new Date(now() + 200 * DAY) });
    expect(await refusal([long.der, inter.der], [trust(root, { max_leaf_lifetime_days: 90 })])).toBe('admission');
  });

  it('parseRoot refuses a non-CA certificate and bad PEM', async () => {
    const leaf = await makeLeaf(root);
    expect(() => trust(leaf)).toThrow(/CA certificate/);
    expect(() => pemToDer('nope')).toThrow(/PEM/);
    expect(() => pemToDer(root.pem + inter.pem)).toThrow(/one certificate/);
  });
});
