// Token exchange throughput: JWT exchanges/s with a cached JWKS on one process, and X.509 exchanges/s over
// fresh TLS connections (a full handshake with a client certificate per exchange). Baselines in the same
// run: a bare Fastify JSON route (HTTP), jose's jwtVerify of the same token in-process (the crypto floor),
// and fresh TLS handshakes with a client certificate against a bare HTTPS server (the TLS floor).
// Run: npm run build && node bench/identity.mjs
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { request } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { cpuMs, load, report, startBaseline, startStandin } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 50;
const TLS_CONCURRENCY = 16;
const ADMIN = 'sk-admin-bench-identity-0000000000000000';
x509.cryptoProvider.set(webcrypto);

// --- the external IdP: an RS256 key, a JWKS on loopback, one token living an hour ---
const { privateKey, publicKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'bench-1', alg: 'RS256', use: 'sig' };
let jwksFetches = 0;
const jwksServer = createHttpServer((req, res) => {
  jwksFetches++;
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
});
await new Promise((r) => jwksServer.listen(0, '127.0.0.1', r));
const jwksUrl = `http://127.0.0.1:${jwksServer.address().port}/jwks`;
const now = Math.floor(Date.now() / 1000);
const subjectToken = await new SignJWT({ repo: 'acme/api' })
  .setProtectedHeader({ alg: 'RS256', kid: 'bench-1' })
  .setIssuer('https://idp.bench.test')
  .setAudience('standin')
  .setSubject('repo:acme/api:ref:refs/heads/main')
  .setIssuedAt(now)
  .setExpirationTime(now + 3600)
  .sign(privateKey);

// --- certificates: root → intermediate → client leaf (ECDSA P-256) ---
const ec = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const keyPair = () => webcrypto.subtle.generateKey(ec, true, ['sign', 'verify']);
const pemOf = (c) => `${c.toString('pem').trim()}\n`;
const keyPemOf = async (k) =>
  `-----BEGIN PRIVATE KEY-----\n${Buffer.from(await webcrypto.subtle.exportKey('pkcs8', k))
    .toString('base64')
    .match(/.{1,64}/g)
    .join('\n')}\n-----END PRIVATE KEY-----\n`;
const rootKeys = await keyPair();
const root = await x509.X509CertificateGenerator.createSelfSigned({
  name: 'CN=Bench Root',
  keys: rootKeys,
  signingAlgorithm: ec,
  extensions: [
    new x509.BasicConstraintsExtension(true, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    await x509.SubjectKeyIdentifierExtension.create(rootKeys.publicKey),
  ],
});
const interKeys = await keyPair();
const inter = await x509.X509CertificateGenerator.create({
  subject: 'CN=Bench Issuing',
  issuer: root.subject,
  publicKey: interKeys.publicKey,
  signingKey: rootKeys.privateKey,
  signingAlgorithm: ec,
  extensions: [
    new x509.BasicConstraintsExtension(true, 0, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
    await x509.SubjectKeyIdentifierExtension.create(interKeys.publicKey),
    await x509.AuthorityKeyIdentifierExtension.create(rootKeys.publicKey),
  ],
});
const leafKeys = await keyPair();
const leaf = await x509.X509CertificateGenerator.create({
  subject: 'CN=worker-1, O=Acme',
  issuer: inter.subject,
  publicKey: leafKeys.publicKey,
  signingKey: interKeys.privateKey,
  signingAlgorithm: ec,
  notAfter: new Date(Date.now() + 30 * 86_400_000),
  extensions: [
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
    await x509.SubjectKeyIdentifierExtension.create(leafKeys.publicKey),
    await x509.AuthorityKeyIdentifierExtension.create(interKeys.publicKey),
  ],
});
const clientCert = pemOf(leaf) + pemOf(inter);
const clientKey = await keyPemOf(leafKeys.privateKey);

// --- Standin with a config file: one service account, a jwt and an x509 provider, the root ---
const data = mkdtempSync(join(tmpdir(), 'standin-bench-identity-'));
const configPath = join(data, 'config.json');
writeFileSync(
  configPath,
  JSON.stringify({
    organizations: [
      {
        id: 'org_bench',
        name: 'Bench',
        projects: [{ id: 'proj_bench', name: 'bench', service_accounts: [{ id: 'svc_acct_bench', name: 'bench' }] }],
        mtls_roots: [{ id: 'mtlsroot_bench', name: 'bench', certificate: pemOf(root) }],
        identity_providers: [
          {
            id: 'idp_bench_jwt',
            kind: 'jwt',
            name: 'ci',
            issuer: 'https://idp.bench.test',
            audiences: ['standin'],
            algorithms: ['RS256'],
            jwks_url: jwksUrl,
            attribute_mapping: { 'vendor.subject': 'assertion.sub', 'attribute.repo': 'assertion.repo' },
            attribute_condition: 'assertion.repo.startsWith("acme/")',
            mappings: [
              {
                name: 'ci',
                service_account_id: 'svc_acct_bench',
                project_id: 'proj_bench',
                attribute_match: { 'attribute.repo': 'acme/api' },
                permissions: { models: 'read' },
              },
            ],
          },
          {
            id: 'idp_bench_x509',
            kind: 'x509',
            name: 'workers',
            attribute_condition: 'assertion.subject.dn.o == "Acme"',
            mappings: [
              {
                name: 'workers',
                service_account_id: 'svc_acct_bench',
                project_id: 'proj_bench',
                attribute_match: { 'vendor.subject': 'worker-1' },
              },
            ],
          },
        ],
      },
    ],
  }),
);
const mtlsPort = await freePort();
const standin = await startStandin({
  data,
  args: ['--config', configPath, '--mtls-port', String(mtlsPort)],
  env: { STANDIN_ADMIN_KEY: ADMIN },
});
const serverCa = (
  await (await fetch(`${standin.url}/admin/v1/mtls/server_certificate`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()
).certificate;

const jwtBody = JSON.stringify({
  grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
  subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
  subject_token: subjectToken,
  identity_provider_id: 'idp_bench_jwt',
  service_account_id: 'svc_acct_bench',
});
const x509Body = JSON.stringify({
  grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
  subject_token_type: 'urn:vendor:params:oauth:token-type:x509',
  identity_provider_id: 'idp_bench_x509',
  service_account_id: 'svc_acct_bench',
});

// Warm-up exchange (fetches the JWKS once; every later exchange uses the cached set).
const first = await fetch(`${standin.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: jwtBody });
if (first.status !== 200) throw new Error(`JWT exchange failed: ${first.status} ${await first.text()}`);
const warm = await tlsPost(mtlsPort, serverCa, x509Body, clientCert, clientKey);
if (warm.status !== 200) throw new Error(`X.509 exchange failed: ${warm.status} ${warm.body}`);

const rows = [];
// HTTP: bare route vs JWT exchange, autocannon over keep-alive connections.
const baseline = await startBaseline();
const b = await measured(baseline.child.pid, () =>
  load({
    url: `${baseline.url}/item`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
    connections: CONNECTIONS,
    duration: DURATION,
  }),
);
const fetchesBefore = jwksFetches;
const s = await measured(standin.child.pid, () =>
  load({
    url: `${standin.url}/oauth/token`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: jwtBody,
    connections: CONNECTIONS,
    duration: DURATION,
  }),
);
await baseline.stop();
rows.push(row('baseline: bare Fastify JSON POST', b));
rows.push(row('JWT exchange (RS256, cached JWKS)', s));

// Crypto floor: jose verifying the same token in this process, one at a time.
const keySet = createLocalJWKSet({ keys: [jwk] });
let verified = 0;
const tv = performance.now();
while (performance.now() - tv < DURATION * 1000) {
  await jwtVerify(subjectToken, keySet, { issuer: 'https://idp.bench.test', audience: 'standin', algorithms: ['RS256'] });
  verified++;
}
rows.push({
  operation: 'baseline: jose jwtVerify in-process',
  'per second': Math.round(verified / DURATION),
  'p50 ms': '-',
  'p99 ms': '-',
  'server CPU µs each': '-',
  'per server CPU-second': '-',
  errors: 0,
});

// TLS: fresh connections with a client certificate, against a bare HTTPS server, then the X.509 exchange.
const bare = await startBareTls();
const t = await measured(bare.pid, () => tlsLoad(bare.port, bare.ca, '{}', clientCert, clientKey));
await bare.stop();
rows.push(row('baseline: fresh mTLS handshake + bare HTTPS POST', t));
const x = await measured(standin.child.pid, () => tlsLoad(mtlsPort, serverCa, x509Body, clientCert, clientKey));
rows.push(row('X.509 exchange, fresh TLS connection each', x));

await standin.stop();
jwksServer.close();
report('identity', rows, [
  `JWT: autocannon, ${CONNECTIONS} keep-alive connections, ${DURATION} s; JWKS fetches during the run: ${jwksFetches - fetchesBefore} (cached).`,
  `X.509: ${TLS_CONCURRENCY} concurrent clients, each request on a new TLS 1.3 connection presenting leaf + intermediate (ECDSA P-256), ${DURATION} s.`,
  'One Standin process on SQLite; every exchange writes the minted token and an audit entry. Load generator on the same 2-core machine.',
  "Server CPU: user+system time of the server process (from /proc) over the run divided by the requests served; 'per server CPU-second' is what one fully used core would sustain, a figure less sensitive to other load on the machine than the wall-clock rate.",
]);

// ---------------------------------------------------------------------------------------------------------

/** Runs `fn` and adds the CPU time the server process `pid` spent meanwhile. */
async function measured(pid, fn) {
  const before = cpuSeconds(pid);
  const r = await fn();
  return { ...r, cpu: cpuSeconds(pid) - before };
}

function cpuSeconds(pid) {
  return cpuMs(pid) / 1000;
}

function row(operation, r) {
  const served = r.total ?? r.rps * DURATION;
  const cpuUs = served ? Math.round((r.cpu / served) * 1e6) : 0;
  return {
    operation,
    'per second': r.rps,
    'p50 ms': r.p50,
    'p99 ms': r.p99,
    'server CPU µs each': cpuUs,
    'per server CPU-second': cpuUs ? Math.round(1e6 / cpuUs) : 0,
    errors: r.errors,
  };
}

function freePort() {
  return new Promise((resolve) => {
    const srv = createNetServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function tlsPost(port, ca, body, cert, key) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/oauth/token',
        ca,
        servername: 'localhost',
        cert,
        key,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function tlsLoad(port, ca, body, cert, key) {
  const latencies = [];
  let errors = 0;
  const end = performance.now() + DURATION * 1000;
  await Promise.all(
    Array.from({ length: TLS_CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const r = await tlsPost(port, ca, body, cert, key).catch(() => ({ status: 0 }));
        if (r.status !== 200) errors++;
        else latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p) =>
    latencies.length ? Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] * 10) / 10 : 0;
  return { rps: Math.round(latencies.length / DURATION), total: latencies.length, p50: pct(0.5), p99: pct(0.99), errors };
}

/** A bare HTTPS server asking for a client certificate, in its own process, with Standin's server identity for parity. */
async function startBareTls() {
  const kp = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=localhost',
    keys: kp,
    signingAlgorithm: ec,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'localhost' }])],
  });
  const certPem = pemOf(cert);
  const keyPem = await keyPemOf(kp.privateKey);
  const code = `
    const https = require('node:https');
    const { constants } = require('node:crypto');
    const server = https.createServer({ key: process.env.K, cert: process.env.C, ca: [process.env.C], requestCert: true, rejectUnauthorized: false, secureOptions: constants.SSL_OP_NO_TICKET }, (req, res) => {
      req.resume();
      req.on('end', () => { const peer = req.socket.getPeerCertificate(true); res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: Boolean(peer.raw) })); });
    });
    server.listen(0, '127.0.0.1', () => console.log('LISTEN ' + server.address().port));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', code], {
      env: { ...process.env, K: keyPem, C: certPem },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout.on('data', (d) => {
      const m = /LISTEN (\d+)/.exec(String(d));
      if (m)
        resolve({
          port: Number(m[1]),
          pid: child.pid,
          ca: certPem,
          stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))),
        });
    });
    child.on('exit', (c) => reject(new Error(`bare TLS server exited with ${c}`)));
  });
}
