import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, upsertServiceAccount } from '../../src/identity/service.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

/**
 * Every /v1 operation of /openapi.json authenticates (401) and authorizes (403: permissions, service
 * account role, IP allowlist) before it reads or validates anything the client sent (400, 404): a key
 * without the permission learns nothing about the body, the query or the ids it sent. A new route is
 * swept without anyone writing a test for it.
 */

interface Operation {
  method: string;
  path: string;
}

/** POST operations that only read (their need is `read`). */
const READING_POSTS = new Set(['POST /v1/vector_stores/{vector_store_id}/search']);

const KEYS = {
  none: 'sk-proj-test-no-permission-key-0000000',
  readOnly: 'sk-proj-test-read-only-key-000000000000',
  reader: 'sk-svcacct-test-reader-role-key-0000000',
};

// What a client might get wrong: a body no route accepts (malformed JSON, unknown members, the wrong
// type), ids that cannot exist, and query values no route accepts.
const BAD_BODIES = ['{', '{"unknown_member_xyz":1}', '[]', '"text"'];
const BAD_QUERY = '?limit=-1&order=sideways&after=%00';
const BAD_ID = 'no_such_id';

describe.each(dialects())('authorization comes before validation on every /v1 operation (%s)', (dialect) => {
  let s: TestStandin;
  let ops: Operation[];
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    const doc = (await s.openapi()) as { paths: Record<string, Record<string, unknown>> };
    ops = Object.entries(doc.paths).flatMap(([path, byMethod]) =>
      path.startsWith('/v1/') ? Object.keys(byMethod).map((m) => ({ method: m.toUpperCase(), path })) : [],
    );
    const db = s.ctx.store.db;
    await createApiKey(s.ctx, db, { projectId: 'proj_demo', name: 'none', value: KEYS.none, permissions: {} });
    // Every resource group the /v1 routes need, as the server collected them.
    const readOnly = Object.fromEntries(s.ctx.auth.groups().map((g) => [g, 'read' as const]));
    await createApiKey(s.ctx, db, { projectId: 'proj_demo', name: 'read-only', value: KEYS.readOnly, permissions: readOnly });
    await upsertServiceAccount(s.ctx, db, 'proj_demo', { id: 'svc_acct_sweep_reader', name: 'reader', role: 'reader' });
    await createApiKey(s.ctx, db, {
      projectId: 'proj_demo',
      name: 'reader',
      value: KEYS.reader,
      serviceAccountId: 'svc_acct_sweep_reader',
    });
  });
  afterAll(async () => s?.close());

  const isWrite = (op: Operation) => op.method !== 'GET' && !READING_POSTS.has(`${op.method} ${op.path}`);
  const urlOf = (op: Operation) => op.path.replace(/\{[^}]+\}/g, BAD_ID) + (op.method === 'GET' ? BAD_QUERY : '');

  /** Each operation with bad input under `key`; returns `METHOD path → status code` for each answer not `want`. */
  async function sweep(key: string | null, which: (op: Operation) => boolean, want: { status: number; code: string }) {
    const findings: string[] = [];
    let probes = 0;
    for (const op of ops.filter(which)) {
      for (const payload of op.method === 'GET' ? [undefined] : BAD_BODIES) {
        const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
        if (payload !== undefined) headers['content-type'] = 'application/json';
        const r = await s.app.inject({ method: op.method as 'GET', url: urlOf(op), payload, headers });
        probes++;
        const code = r.json()?.error?.code;
        if (r.statusCode !== want.status || code !== want.code)
          findings.push(`${op.method} ${op.path} ${payload ?? ''} → ${r.statusCode} ${code}`);
      }
    }
    expect(probes).toBeGreaterThan(0);
    return findings;
  }

  it('refuses keys and mappings whose permissions name a group no route needs (a typo would deny silently)', async () => {
    expect(s.ctx.auth.groups()).toEqual(expect.arrayContaining(['assistants', 'batch', 'files', 'models', 'threads', 'vector_stores']));
    const key = await s.req('POST', '/admin/v1/projects/proj_demo/api_keys', {
      key: 'admin',
      body: { name: 'typo', permissions: { threads: 'read', thread: 'write' } },
    });
    expect(key.status).toBe(400);
    expect(key.body.error).toMatchObject({ param: 'permissions.thread', code: 'unknown_permission_group' });
    expect(key.body.error.message).toContain('the groups are: ');
    const provider = await s.req('POST', '/admin/v1/organizations/org_demo/identity_providers', {
      key: 'admin',
      body: {
        kind: 'x509',
        name: 'typo',
        mappings: [{ name: 'm', service_account_id: 'svc_acct_sweep_reader', project_id: 'proj_demo', permissions: { modles: 'read' } }],
      },
    });
    expect(provider.status).toBe(400);
    expect(provider.body.error).toMatchObject({ code: 'unknown_permission_group' });
    expect(provider.body.error.param).toMatch(/permissions\.modles$/);
  });

  it('finds the /v1 operations, reading and writing', () => {
    expect(ops.length).toBeGreaterThan(50);
    expect(ops.filter(isWrite).length).toBeGreaterThan(20);
  });

  it('without a key, with a wrong one or an ads key, every operation answers 401 whatever it is sent', async () => {
    for (const key of [null, 'sk-proj-no-such-key-000000000000000000', s.keys.ads]) {
      expect(await sweep(key, () => true, { status: 401, code: 'invalid_api_key' })).toEqual([]);
    }
  });

  it('a key without any permission gets 403 on every operation, not 400 or 404', async () => {
    expect(await sweep(KEYS.none, () => true, { status: 403, code: 'missing_scope' })).toEqual([]);
  });

  it('a read-only key gets 403 on every writing operation, and is past authorization on every reading one', async () => {
    expect(await sweep(KEYS.readOnly, isWrite, { status: 403, code: 'missing_scope' })).toEqual([]);
    // Reading operations meet the bad input itself: a 4xx that is not about the credential.
    const reads: string[] = [];
    for (const op of ops.filter((o) => !isWrite(o))) {
      const body = op.method === 'GET' ? undefined : '{"unknown_member_xyz":1}';
      const r = await s.req(op.method, urlOf(op), { key: KEYS.readOnly, body });
      if (r.status === 401 || r.status === 403 || r.status >= 500) reads.push(`${op.method} ${op.path} → ${r.status}`);
    }
    expect(reads).toEqual([]);
  });

  it("a service account key of role 'reader' gets 403 on every writing operation", async () => {
    expect(await sweep(KEYS.reader, isWrite, { status: 403, code: 'insufficient_role' })).toEqual([]);
  });

  it('a full key from an address outside the IP allowlist gets 403 on every operation', async () => {
    const admin = (cidrs: string[]) => s.req('PUT', '/admin/v1/projects/proj_demo/ip_allowlist', { key: 'admin', body: { cidrs } });
    expect((await admin(['203.0.113.0/24'])).status).toBe(200);
    s.ctx.clock.advance(2_000);
    try {
      expect(await sweep(s.keys.platform, () => true, { status: 403, code: 'ip_not_allowed' })).toEqual([]);
    } finally {
      await admin([]);
      s.ctx.clock.advance(2_000);
    }
    // The same key, from inside: past authorization, the bad input is its answer.
    const r = await s.req('POST', '/v1/assistants', { key: 'platform', body: '{"unknown_member_xyz":1}' });
    expect(r.status).toBe(400);
  });
});

describe('a /v1 route that declares no need', () => {
  it('stops the start: it would be open to any key', async () => {
    const { modules } = await import('../../src/server/modules.js');
    const open = { name: 'open_route', routes: (app: TestStandin['app']) => void app.get('/v1/open', async () => ({ ok: true })) };
    await expect(startTestStandin({ modules: [...modules, open], seed: false })).rejects.toThrow(/GET \/v1\/open declares no config.need/);
  });
});
