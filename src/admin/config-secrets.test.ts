import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestStandin, type TestStandin } from '../../test/helpers.js';
import { applyConfig, checkConfig, readConfigFile } from './config-file.js';
import { resolveSecretRefs, secretRefsIn } from './config-secrets.js';

const API_KEY = 'sk-proj-from-a-file-0000000000000000';
const ADS_KEY = 'sk-ads-from-the-environment-00000000';

describe('secrets in the config file by reference', () => {
  let s: TestStandin;
  let dir: string;
  beforeAll(async () => {
    s = await startTestStandin({ seed: false });
    dir = mkdtempSync(join(tmpdir(), 'standin-config-secrets-'));
    mkdirSync(join(dir, 'secrets'));
    writeFileSync(join(dir, 'secrets', 'app-key'), `${API_KEY}\n`);
  });
  afterAll(async () => s?.close());

  it('resolves { file } (relative to the config file) and { env } at secret fields, and only there', () => {
    const doc = {
      admin_key: { env: 'ADMIN' },
      organizations: [
        {
          name: 'Org',
          projects: [
            {
              name: 'P',
              api_keys: [{ name: 'app', value: { file: 'secrets/app-key' } }],
              webhooks: [{ name: 'w', url: 'https://x', secret: 'whsec_x' }],
            },
          ],
        },
      ],
      // Not a secret field: a look-alike object is left as it is (and the schema judges it).
      other: { file: 'secrets/app-key' },
    };
    expect(secretRefsIn(doc)).toEqual(['admin_key', 'organizations[0].projects[0].api_keys[0].value']);
    const out = resolveSecretRefs(doc, dir, { ADMIN: 'sk-admin-from-env-000000000000000' }) as any;
    expect(out.admin_key).toBe('sk-admin-from-env-000000000000000');
    expect(out.organizations[0].projects[0].api_keys[0].value).toBe(API_KEY);
    expect(out.organizations[0].projects[0].webhooks[0].secret).toBe('whsec_x');
    expect(out.other).toEqual({ file: 'secrets/app-key' });
  });

  it('names the field and the cause when a reference cannot be read', () => {
    const at = (value: unknown) => ({ organizations: [{ name: 'O', projects: [{ name: 'P', api_keys: [{ name: 'a', value }] }] }] });
    expect(() => resolveSecretRefs(at({ file: 'nope' }), dir, {})).toThrow(
      `organizations[0].projects[0].api_keys[0].value: cannot read ${join(dir, 'nope')}: ENOENT`,
    );
    expect(() => resolveSecretRefs(at({ env: 'UNSET_VAR' }), dir, {})).toThrow('the environment variable UNSET_VAR is not set');
    writeFileSync(join(dir, 'empty'), '\n');
    expect(() => resolveSecretRefs(at({ file: join(dir, 'empty') }), dir, {})).toThrow('is empty');
  });

  it('a config file with references applies, and the keys it read work', async () => {
    const file = join(dir, 'standin.yaml');
    writeFileSync(
      file,
      [
        'organizations:',
        '  - id: org_refs',
        '    name: Refs',
        '    projects:',
        '      - id: proj_refs',
        '        name: Refs',
        '        api_keys:',
        '          - name: app',
        '            value: { file: secrets/app-key }',
        '    ad_accounts:',
        '      - id: adacct_refs',
        '        name: Refs',
        '        currency: USD',
        '        api_keys:',
        '          - name: ads',
        '            value: { env: STANDIN_TEST_ADS_KEY }',
      ].join('\n'),
    );
    process.env.STANDIN_TEST_ADS_KEY = ADS_KEY;
    try {
      await applyConfig(s.ctx, s.modules, readConfigFile(file));
    } finally {
      delete process.env.STANDIN_TEST_ADS_KEY;
    }
    expect((await s.req('GET', '/v1/models', { key: API_KEY })).status).toBe(200);
    expect((await s.req('GET', '/ads/v1/campaigns?ad_account_id=adacct_refs', { key: ADS_KEY })).status).not.toBe(401);
  });

  it('a config sent to the control plane may not hold references: 400, naming the field', async () => {
    expect(checkConfig(s.modules, { admin_key: { file: '/etc/passwd' } })).toEqual([
      'admin_key: a reference ({ file } or { env }) is read only from the config file Standin starts with (--config); give the secret itself',
    ]);
    const r = await s.req('POST', '/admin/v1/config', { key: 'admin', body: { admin_key: { file: '/etc/passwd' } } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_config' });
    expect(r.body.error.message).toContain('admin_key: a reference');
  });

  it('a secret Standin generates for the file goes to a file of the data folder only its user reads; the log says where', async () => {
    const warn = vi.spyOn(s.ctx.log, 'warn');
    let calls: unknown[][];
    try {
      await applyConfig(s.ctx, s.modules, {
        organizations: [
          {
            id: 'org_gen',
            name: 'Gen',
            projects: [
              {
                id: 'proj_gen',
                name: 'Gen',
                api_keys: [{ name: 'made' }],
                webhooks: [{ name: 'hook', url: 'https://hooks.example.com/x', event_types: ['response.completed'] }],
              },
            ],
          },
        ],
      });
      calls = [...warn.mock.calls];
    } finally {
      warn.mockRestore();
    }
    const lines = calls.map((c) => JSON.stringify(c));
    expect(lines).toHaveLength(2);
    const files = calls.map((c) => (c[0] as { secret_file: string }).secret_file);
    const [key, hook] = files.map((f) => readFileSync(f, 'utf8').trim());
    expect(key).toMatch(/^sk-proj-/);
    expect(hook).toMatch(/^whsec_/);
    for (const [i, f] of files.entries()) {
      expect(f.startsWith(join(s.ctx.settings.data, 'generated-secrets'))).toBe(true);
      expect(statSync(f).mode & 0o777).toBe(0o600);
      expect(lines[i]).toContain(f);
    }
    // Neither secret is in a log line.
    expect(lines.join('\n')).not.toContain(key);
    expect(lines.join('\n')).not.toContain(hook);
    // The key works; the endpoint signs with the secret of the file (its hint is the file's last four characters).
    expect((await s.req('GET', '/v1/models', { key })).status).toBe(200);
    const endpoints = await s.req('GET', '/admin/v1/projects/proj_gen/webhook_endpoints', { key: 'admin' });
    expect(endpoints.body.data[0].secret_hint).toBe(`whsec_…${hook.slice(-4)}`);
  });
});
