import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, dialects, startTestStandin, TEST_KEYS, type TestStandin } from '../../test/helpers.js';
import { form } from '../../test/files/form.js';

/** `/v1/containers…` through the openai SDK and by hand: the objects, their files, expiry and retention, errors and attacks. */
describe.each(dialects())('containers (%s)', (dialect) => {
  let s: TestStandin;
  let client: OpenAI;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${await s.listen()}/v1`, maxRetries: 0 });
  });
  afterAll(() => s?.close());

  const upload = async (containerId: string, filename: string, data: Buffer | string, extra: [string, string][] = []) => {
    const { payload, headers } = form([['file', { filename, data }], ...extra]);
    const res = await s.app.inject({
      method: 'POST',
      url: `/v1/containers/${containerId}/files`,
      payload,
      headers: { ...headers, authorization: `Bearer ${TEST_KEYS.platform}` },
    });
    return { status: res.statusCode, body: res.json() };
  };

  it('creates, retrieves, lists (by name, paged) and deletes containers with the SDK', async () => {
    const c = await client.containers.create({
      name: 'analysis',
      expires_after: { anchor: 'last_active_at', minutes: 5 },
      memory_limit: '4g',
    });
    expect(c).toMatchObject({
      object: 'container',
      name: 'analysis',
      status: 'running',
      expires_after: { anchor: 'last_active_at', minutes: 5 },
      memory_limit: '4g',
    });
    expect(c.id).toMatch(/^cntr_[0-9a-z]{24}$/);
    expect(c.last_active_at).toBe(c.created_at);
    expect(await client.containers.retrieve(c.id)).toEqual(c);
    const other = await client.containers.create({ name: 'other' });
    expect(other).toMatchObject({ expires_after: { anchor: 'last_active_at', minutes: 20 }, memory_limit: '1g' });
    const named = await client.containers.list({ name: 'analysis' } as never);
    expect(named.data.map((x) => x.id)).toEqual([c.id]);
    const first = await s.req('GET', '/v1/containers?limit=1&order=asc', { key: 'platform' });
    expect(first.body).toMatchObject({ object: 'list', has_more: true });
    const next = await s.req('GET', `/v1/containers?limit=1&order=asc&after=${first.body.last_id}`, { key: 'platform' });
    expect(next.body.data[0].id).not.toBe(first.body.data[0].id);
    await client.containers.delete(other.id);
    const gone = await s.req('GET', `/v1/containers/${other.id}`, { key: 'platform' });
    expect(gone.status).toBe(404);
    expect(gone.body.error.message).toBe(`No container found with id '${other.id}'.`);
    const deleted = await s.req('DELETE', `/v1/containers/${c.id}`, { key: 'platform' });
    expect(deleted.body).toEqual({ id: c.id, object: 'container.deleted', deleted: true });
  });

  it('holds files: uploaded, copied from /v1/files (at creation and after), listed, read back byte-exact, deleted', async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from('a,b\n1,2\n'), 'table.csv'), purpose: 'user_data' });
    const c = await client.containers.create({ name: 'files', file_ids: [file.id] });
    const listed = await client.containers.files.list(c.id);
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({
      object: 'container.file',
      container_id: c.id,
      path: '/mnt/data/table.csv',
      bytes: 8,
      source: 'user',
    });
    expect(listed.data[0].id).toMatch(/^cfile_/);

    const data = Buffer.from(Array.from({ length: 1_500_000 }, (_, i) => (i * 31) % 256));
    const up = await client.containers.files.create(c.id, { file: await toFile(data, 'blob.bin') });
    expect(up).toMatchObject({ path: '/mnt/data/blob.bin', bytes: data.length, source: 'user' });
    const content = await client.containers.files.content.retrieve(up.id, { container_id: c.id });
    expect(Buffer.compare(Buffer.from(await content.arrayBuffer()), data)).toBe(0);
    expect(await client.containers.files.retrieve(up.id, { container_id: c.id })).toEqual(up);

    const copied = await client.containers.files.create(c.id, { file_id: file.id });
    expect(copied.path).toBe('/mnt/data/table.csv');
    // The copy replaced the file at that path.
    expect((await client.containers.files.list(c.id)).data.map((f) => f.id).sort()).toEqual([up.id, copied.id].sort());

    await client.containers.files.delete(up.id, { container_id: c.id });
    const again = await s.req('GET', `/v1/containers/${c.id}/files/${up.id}`, { key: 'platform' });
    expect(again.status).toBe(404);
    // The parts of its bytes went with it.
    const parts = await s.ctx.store.db.selectFrom('container_file_parts').select('seq').where('container_file_id', '=', up.id).execute();
    expect(parts).toEqual([]);
  });

  it('expires after its idle minutes on the Standin clock; retention then deletes its files', async () => {
    const c = await client.containers.create({ name: 'short', expires_after: { anchor: 'last_active_at', minutes: 1 } });
    await upload(c.id, 'note.txt', 'hello');
    expect((await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '30s' } })).status).toBe(200);
    expect((await client.containers.retrieve(c.id)).status).toBe('running');
    // A write marks it active: its minute counts again from now.
    const touched = await upload(c.id, 'more.txt', 'more');
    expect(touched.status).toBe(200);
    const active = await client.containers.retrieve(c.id);
    expect(active.last_active_at).toBeGreaterThan(c.last_active_at!);
    await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '61s' } });
    expect((await client.containers.retrieve(c.id)).status).toBe('expired');
    const refused = await upload(c.id, 'late.txt', 'late');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'container_expired', param: 'container_id' });
    expect((await client.containers.files.list(c.id)).data).toHaveLength(2);
    const report = await s.req('POST', '/admin/v1/retention/sweep', { key: 'admin' });
    expect(report.body.rules.find((r: { name: string }) => r.name === 'container_files')).toMatchObject({ deleted: 2 });
    expect((await client.containers.files.list(c.id)).data).toEqual([]);
    expect((await client.containers.retrieve(c.id)).status).toBe('expired');
  });

  it('refuses bad input by name: unknown fields, skills, an allow-list, bad expiry, missing name, unknown files', async () => {
    const post = (body: unknown) => s.req('POST', '/v1/containers', { key: 'platform', body });
    const cases: [unknown, string | null][] = [
      [{ name: 'x', color: 'red' }, 'color'],
      [{}, 'name'],
      [{ name: 'x', skills: [{ type: 'skill_reference', skill_id: 'skill_1' }] }, 'skills'],
      [{ name: 'x', network_policy: { type: 'allowlist', allowed_domains: ['example.com'] } }, 'network_policy.type'],
      [{ name: 'x', expires_after: { anchor: 'created_at', minutes: 5 } }, 'expires_after.anchor'],
      [{ name: 'x', expires_after: { anchor: 'last_active_at', minutes: 0 } }, 'expires_after.minutes'],
      [{ name: 'x', memory_limit: '2g' }, 'memory_limit'],
      [{ name: 'x', file_ids: ['file-nope'] }, 'file_ids[0]'],
    ];
    for (const [body, param] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(body)).toBeLessThan(500);
      expect(res.body.error.param, JSON.stringify(body)).toBe(param);
    }
    expect((await post({ name: 'x', network_policy: { type: 'disabled' } })).status).toBe(200);
    const c = (await post({ name: 'files' })).body;
    const json = (body: unknown) => s.req('POST', `/v1/containers/${c.id}/files`, { key: 'platform', body });
    expect((await json({ file_id: 'file-nope' })).body.error).toMatchObject({ param: 'file_id' });
    expect((await json({ file_id: 'x', purpose: 'y' })).body.error).toMatchObject({ param: 'purpose', code: 'unknown_parameter' });
    expect((await json({})).body.error).toMatchObject({ param: 'file_id', code: 'missing_required_parameter' });
    expect((await json(['file_id'])).status).toBe(400);
    expect((await upload(c.id, 'a.txt', 'a', [['purpose', 'x']])).body.error).toMatchObject({ param: 'purpose' });
    expect((await s.req('GET', '/v1/containers?limit=101', { key: 'platform' })).status).toBe(400);
    expect((await s.req('GET', `/v1/containers/${c.id}/files/../../x`, { key: 'platform' })).status).toBe(404);
  });

  it('keeps an uploaded name inside /mnt/data (traversal, separators, dots) and containers inside their project', async () => {
    const c = await client.containers.create({ name: 'attack' });
    for (const [name, path] of [
      ['../../etc/passwd', '/mnt/data/passwd'],
      ['..', '/mnt/data/upload'],
      ['a\\..\\b.txt', '/mnt/data/b.txt'],
      ['', '/mnt/data/upload'],
    ]) {
      const res = await upload(c.id, name, 'x');
      expect(res.status, name).toBe(200);
      expect(res.body.path, name).toBe(path);
    }
    const project = (await s.req('POST', '/admin/v1/organizations/org_demo/projects', { key: 'admin', body: { name: 'Other' } })).body;
    const key = (await s.req('POST', `/admin/v1/projects/${project.id}/api_keys`, { key: 'admin', body: { name: 'k' } })).body;
    const secret = key.value ?? key.key ?? key.secret;
    const theirs = await s.req('GET', `/v1/containers/${c.id}`, { key: secret });
    expect(theirs.status).toBe(404);
    expect((await s.req('GET', `/v1/containers/${c.id}/files`, { key: secret })).status).toBe(404);
    expect((await s.req('DELETE', `/v1/containers/${c.id}`, { key: secret })).status).toBe(404);
    expect(await countRows(s, 'containers')).toBeGreaterThan(0);
  });
});
