import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { makeIntermediate, makeLeaf, makeRoot } from '../identity/certs.js';
import type { TestIdp } from '../identity/idp.js';
import type { Live } from './instance.js';
import { json, type Ran, type Shell } from './shell.js';

/** What the curl checks share: the live instance, the working folder of the shell, an identity provider, earlier answers. */
export interface CurlState {
  live: Live;
  dir: string;
  idp: TestIdp;
  /** The answer of each check's command, by its `shown`. */
  answers: Map<string, Ran>;
}

/** One documented curl command: found by `shown`; `prepare` makes the state it needs and returns the command to paste. */
export interface CurlCheck {
  shown: string;
  prepare(state: CurlState, command: string, shell: Shell): Promise<string>;
  check(answer: Ran, state: CurlState): void;
}

/** The README tour's placeholders: the keys its banner printed, its address, and a receiver for the webhook. */
export function tourPlaceholders(live: Live, hookUrl: string): [string, string][] {
  return [
    ['sk-ads-…', live.keys.ads],
    ['sk-proj-…', live.keys.platform],
    ['sk-admin-…', live.keys.admin],
    ['http://127.0.0.1:8080', live.url],
    ['http://127.0.0.1:9000/hook', hookUrl],
  ];
}

/** Lines of the README tour the test does not paste, with the reason. */
export const TOUR_NOT_RUN = [{ shown: 'open "$B/apps"', why: 'opens a browser; the test fetches $B/apps instead' }];

/** Documented curl lines the test does not run, with the reason. */
export const CURL_NOT_RUN = [
  {
    shown: 'x-standin-upstream',
    why: 'asks nginx in front of two instances (docs/deploy.md): test/deploy/deploy.test.ts runs that recipe',
  },
  {
    shown: 'https://standin.internal:8443/readyz',
    why: "asks nginx's TLS listener (docs/deploy.md): test/deploy/deploy.test.ts runs that recipe",
  },
  {
    shown: 'http://127.0.0.1:8081/readyz',
    why: 'asks one instance of the deployment during an upgrade (docs/deploy.md): test/deploy/upgrade.test.ts runs an upgrade',
  },
  {
    shown: 'http://127.0.0.1:808$1/readyz',
    why: "waits for an instance of the deployment without systemd (docs/deploy.md's standin_ready): test/deploy/pasted.test.ts pastes it",
  },
  { shown: 'https://deb.nodesource.com/', why: "installs Node from NodeSource on a Debian machine (docs/deploy.md's first step)" },
  { shown: 'apt-get install', why: 'installs Debian packages (curl among them), no curl request (docs/deploy.md)' },
];

const admin = async (live: Live, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${live.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${live.keys.admin}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
};

/** The organization docs/identity.md sets up (its ids and rules), with keys and a CA of the test's own. */
async function identitySetup(state: CurlState): Promise<void> {
  if (existsSync(join(state.dir, 'leaf.key'))) return;
  const root = await makeRoot('Acme workload CA');
  const intermediate = await makeIntermediate(root);
  const leaf = await makeLeaf(intermediate, { cn: 'worker-1', uris: ['spiffe://acme.internal/worker'] });
  writeFileSync(join(state.dir, 'leaf-and-intermediates.pem'), leaf.pem + intermediate.pem);
  writeFileSync(join(state.dir, 'leaf.key'), leaf.keyPem);
  await admin(state.live, 'POST', '/admin/v1/config', {
    organizations: [
      {
        id: 'org_acme',
        name: 'Acme',
        projects: [{ id: 'proj_ci', name: 'CI', service_accounts: [{ id: 'svc_acct_deployer', name: 'deployer', role: 'member' }] }],
        mtls_roots: [{ id: 'mtlsroot_acme', name: 'Acme workload CA', certificate: root.pem }],
        identity_providers: [
          {
            id: 'idp_github',
            kind: 'jwt',
            name: 'github-actions',
            issuer: state.idp.issuer,
            audiences: ['https://standin.example'],
            algorithms: ['RS256'],
            jwks: state.idp.jwks,
            attribute_condition: 'assertion.repository_owner == "acme"',
            attribute_mapping: {
              'vendor.subject': 'assertion.sub',
              'attribute.repo': 'assertion.repository',
              'attribute.ref': 'assertion.ref',
            },
            mappings: [
              {
                name: 'deploy-from-main',
                service_account_id: 'svc_acct_deployer',
                project_id: 'proj_ci',
                attribute_match: { 'attribute.repo': 'acme/api', 'attribute.ref': 'refs/heads/main' },
                permissions: { models: 'read', responses: 'write' },
              },
            ],
          },
          {
            id: 'idp_workers',
            kind: 'x509',
            name: 'workers',
            attribute_condition: 'assertion.subject.dn.o == "Acme"',
            attribute_mapping: {
              'vendor.subject': 'assertion.subject.dn.cn',
              'attribute.spiffe': 'assertion.san.uris.size() > 0 ? assertion.san.uris[0] : ""',
            },
            mappings: [
              {
                name: 'workers',
                service_account_id: 'svc_acct_deployer',
                project_id: 'proj_ci',
                attribute_match: { 'attribute.spiffe': 'spiffe://acme.internal/worker' },
              },
            ],
          },
        ],
      },
    ],
  });
}

/** The token answer docs/identity.md shows. */
function tokenAnswer(r: Ran, scope?: string): void {
  expect(r.status).toBe(200);
  const body = json(r);
  expect(body).toMatchObject({
    issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    token_type: 'Bearer',
    expires_in: 3600,
    ...(scope ? { scope } : {}),
  });
  expect(body.access_token).toMatch(/^wit_/);
}

export const CURL_CHECKS: CurlCheck[] = [
  {
    // docs/batches.md: upload a JSONL file of requests.
    shown: '/v1/files -H',
    async prepare(state, command) {
      const line = (n: number) =>
        JSON.stringify({
          custom_id: `request-${n}`,
          method: 'POST',
          url: '/v1/chat/completions',
          body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `Hello ${n}` }] },
        });
      writeFileSync(join(state.dir, 'requests.jsonl'), `${line(1)}\n${line(2)}\n`);
      return command;
    },
    check(r) {
      expect(r.status).toBe(200);
      expect(json(r)).toMatchObject({ object: 'file', purpose: 'batch', filename: 'requests.jsonl' });
    },
  },
  {
    // docs/batches.md: the batch over that file (`file-…` is the id the upload answered).
    shown: '/v1/batches -H',
    async prepare(state, command) {
      return command.replace('file-…', json(state.answers.get('/v1/files -H')!).id);
    },
    check(r) {
      expect(r.status).toBe(200);
      expect(json(r)).toMatchObject({ object: 'batch', endpoint: '/v1/chat/completions', completion_window: '24h' });
    },
  },
  {
    // docs/batches.md: hold a project's batches in progress, pace finalizing.
    shown: '"batch_hold_at":["in_progress"]',
    async prepare(_state, command) {
      return command;
    },
    check(r) {
      expect(r.status).toBe(200);
      expect(json(r)).toMatchObject({ object: 'project.work_holds', batch_hold_at: ['in_progress'], batch_pace: { finalizing: '5m' } });
    },
  },
  {
    // docs/files.md: hold a project's vector store ingestion.
    shown: '-d \'{"ingestion":"hold"}\'',
    async prepare(_state, command) {
      return command;
    },
    check(r) {
      expect(r.status).toBe(200);
      expect(json(r)).toMatchObject({ object: 'project.work_holds', batch_hold_at: [], ingestion: 'hold' });
    },
  },
  {
    // docs/files.md: release it again.
    shown: '-d \'{"ingestion":"run"}\'',
    async prepare(_state, command) {
      return command;
    },
    check(r) {
      expect(r.status).toBe(200);
      expect(json(r)).toMatchObject({ object: 'project.work_holds', ingestion: 'run' });
    },
  },
  {
    // docs/batches.md: release everything held.
    shown: '-X DELETE $B/admin/v1/projects/proj_demo/work_holds',
    async prepare(_state, command) {
      return command;
    },
    check(r) {
      expect(r.status).toBe(200);
      expect(json(r)).toMatchObject({ object: 'project.work_holds', batch_hold_at: [], ingestion: 'run' });
    },
  },
  {
    // docs/identity.md: a JWT exchange; $ID_TOKEN is a token of the provider the page configures.
    shown: '"identity_provider_id": "idp_github"',
    async prepare(state, command, shell) {
      await identitySetup(state);
      const now = Math.floor(Date.now() / 1000);
      const token = await state.idp.sign({
        iss: state.idp.issuer,
        aud: 'https://standin.example',
        sub: 'repo:acme/api:ref:refs/heads/main',
        repository_owner: 'acme',
        repository: 'acme/api',
        ref: 'refs/heads/main',
        iat: now - 5,
        exp: now + 7200,
      });
      await shell.run(`export ID_TOKEN=${token}`);
      return command;
    },
    check: (r) => tokenAnswer(r, 'models.read responses.write'),
  },
  {
    // docs/operations.md: the metrics of the instance, behind the admin key.
    shown: '/admin/v1/metrics',
    async prepare(_state, command) {
      return command;
    },
    check(r) {
      expect(r.out).toMatch(/^standin_http_request_duration_seconds_count\{method="\w+",route="[^"]+",status="\d{3}"\} \d+$/m);
    },
  },
  {
    // docs/identity.md: the mTLS listener's certificate, for curl's --cacert.
    shown: '/admin/v1/mtls/server_certificate',
    async prepare(_state, command) {
      return command;
    },
    check(_r, state) {
      expect(readFileSync(join(state.dir, 'standin-mtls.pem'), 'utf8')).toMatch(/^-----BEGIN CERTIFICATE-----/);
    },
  },
  {
    // docs/identity.md: an X.509 exchange on the mTLS token endpoint (8443 there; the live one's port here).
    shown: '--cert leaf-and-intermediates.pem',
    async prepare(state, command) {
      await identitySetup(state);
      const listeners = (await admin(state.live, 'GET', '/admin/v1/listeners')) as { data: { name: string; url: string }[] };
      const port = new URL(listeners.data.find((l) => l.name === 'mtls_token')!.url).port;
      return command.replace('https://localhost:8443', `https://localhost:${port}`);
    },
    check: (r) => tokenAnswer(r),
  },
  {
    // docs/deploy.md: liveness.
    shown: '/livez',
    prepare: async (_state, command) => command,
    check(r) {
      expect(r.status).toBe(200);
      expect(json(r)).toEqual({ status: 'ok' });
    },
  },
  {
    // docs/deploy.md: readiness, with its checks.
    shown: '/readyz',
    prepare: async (_state, command) => command,
    check(r) {
      expect(r.status).toBe(200);
      expect(json(r)).toMatchObject({ status: 'ready', checks: expect.arrayContaining([{ name: 'store', ok: true }]) });
    },
  },
];
