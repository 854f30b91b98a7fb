import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, TEST_KEYS, type TestStandin } from '../../test/helpers.js';
import { form } from '../../test/files/form.js';

/** `/v1/files`: upload (multipart), list, retrieve, content, delete, expiry; errors and project scoping. */
describe.each(dialects())('files (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { fileUploadLimit: 3_000_000 } });
  });
  afterAll(() => s?.close());

  const upload = async (parts: Parameters<typeof form>[0], key = TEST_KEYS.platform) => {
    const { payload, headers } = form(parts);
    const res = await s.app.inject({ method: 'POST', url: '/v1/files', payload, headers: { ...headers, authorization: `Bearer ${key}` } });
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };

  it('uploads a file (file part first), retrieves, lists and returns its bytes exactly', async () => {
    const data = Buffer.from(Array.from({ length: 2_500_000 }, (_, i) => (i * 7919) % 256));
    const up = await upload([
      ['file', { filename: 'blob.bin', data }],
      ['purpose', 'assistants'],
    ]);
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body).toMatchObject({
      object: 'file',
      bytes: data.length,
      filename: 'blob.bin',
      purpose: 'assistants',
      status: 'processed',
      expires_at: null,
    });
    expect(up.body.id).toMatch(/^file-[0-9a-z]{24}$/);
    const got = await s.req('GET', `/v1/files/${up.body.id}`, { key: 'platform' });
    expect(got.body).toEqual(up.body);
    const content = await s.app.inject({
      method: 'GET',
      url: `/v1/files/${up.body.id}/content`,
      headers: { authorization: `Bearer ${TEST_KEYS.platform}` },
    });
    expect(content.statusCode).toBe(200);
    expect(content.headers['content-type']).toBe('application/octet-stream');
    expect(Buffer.compare(content.rawPayload, data)).toBe(0);
    const list = await s.req('GET', '/v1/files?purpose=assistants', { key: 'platform' });
    expect(list.body.data.map((f: { id: string }) => f.id)).toContain(up.body.id);
    expect((await s.req('GET', '/v1/files?purpose=vision', { key: 'platform' })).body.data).toEqual([]);
  });

  it('keeps an empty file and a field sent before the file', async () => {
    const up = await upload([
      ['purpose', 'user_data'],
      ['file', { filename: 'empty.txt', data: '' }],
    ]);
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.bytes).toBe(0);
    const content = await s.app.inject({
      method: 'GET',
      url: `/v1/files/${up.body.id}/content`,
      headers: { authorization: `Bearer ${TEST_KEYS.platform}` },
    });
    expect(content.rawPayload.length).toBe(0);
  });

  it('pages with limit, after and order', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          await upload([
            ['file', { filename: `p${i}.txt`, data: `page ${i}` }],
            ['purpose', 'evals'],
          ])
        ).body.id,
      );
    const first = await s.req('GET', '/v1/files?purpose=evals&limit=2&order=asc', { key: 'platform' });
    expect(first.body.data.map((f: { id: string }) => f.id)).toEqual(ids.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    const next = await s.req('GET', `/v1/files?purpose=evals&limit=2&order=asc&after=${first.body.last_id}`, { key: 'platform' });
    expect(next.body.data.map((f: { id: string }) => f.id)).toEqual([ids[2]]);
    expect(next.body.has_more).toBe(false);
    expect((await s.req('GET', '/v1/files?limit=0', { key: 'platform' })).status).toBe(400);
    expect((await s.req('GET', '/v1/files?limit=10001', { key: 'platform' })).status).toBe(400);
  });

  it('deletes a file and frees its bytes', async () => {
    const up = await upload([
      ['file', { filename: 'gone.txt', data: 'bye' }],
      ['purpose', 'assistants'],
    ]);
    const del = await s.req('DELETE', `/v1/files/${up.body.id}`, { key: 'platform' });
    expect(del.body).toEqual({ id: up.body.id, object: 'file', deleted: true });
    expect((await s.req('GET', `/v1/files/${up.body.id}`, { key: 'platform' })).status).toBe(404);
    expect((await s.req('GET', `/v1/files/${up.body.id}/content`, { key: 'platform' })).status).toBe(404);
    expect((await s.req('DELETE', `/v1/files/${up.body.id}`, { key: 'platform' })).status).toBe(404);
    if (dialect === 'sqlite') expect(existsSync(join(s.ctx.settings.data, 'files', up.body.id))).toBe(false);
    else expect(await s.ctx.store.db.selectFrom('file_parts').select('seq').where('file_id', '=', up.body.id).execute()).toEqual([]);
  });

  it('expires files on the Standin clock (batch files after 30 days by default)', async () => {
    const short = await upload([
      ['file', { filename: 'short.txt', data: 'x' }],
      ['purpose', 'assistants'],
      ['expires_after[anchor]', 'created_at'],
      ['expires_after[seconds]', '3600'],
    ]);
    expect(short.status, JSON.stringify(short.body)).toBe(200);
    expect(short.body.expires_at).toBe(short.body.created_at + 3600);
    const batch = await upload([
      ['file', { filename: 'b.jsonl', data: '{}' }],
      ['purpose', 'batch'],
    ]);
    expect(batch.body.expires_at).toBe(batch.body.created_at + 30 * 86_400);
    s.ctx.clock.advance(3601_000);
    expect((await s.req('GET', `/v1/files/${short.body.id}`, { key: 'platform' })).status).toBe(404);
    expect((await s.req('GET', `/v1/files/${batch.body.id}`, { key: 'platform' })).status).toBe(200);
    await s.ctx.jobs.drain();
    expect(await s.ctx.store.db.selectFrom('files').select('id').where('id', '=', short.body.id).execute()).toEqual([]);
  });

  it('refuses bad input with 400 and the parameter, keeping nothing', async () => {
    const before = dialect === 'sqlite' ? readdirSync(join(s.ctx.settings.data, 'files')).length : 0;
    const bad = await upload([
      ['file', { filename: 'a.txt', data: 'x' }],
      ['purpose', 'wishes'],
    ]);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: 'purpose', code: 'invalid_value' });
    const noPurpose = await upload([['file', { filename: 'a.txt', data: 'x' }]]);
    expect(noPurpose.body.error).toMatchObject({ param: 'purpose', code: 'missing_required_parameter' });
    const noFile = await upload([['purpose', 'assistants']]);
    expect(noFile.body.error).toMatchObject({ param: 'file', code: 'missing_required_parameter' });
    const extra = await upload([
      ['purpose', 'assistants'],
      ['colour', 'red'],
      ['file', { filename: 'a.txt', data: 'x' }],
    ]);
    expect(extra.body.error).toMatchObject({ param: 'colour', code: 'unknown_parameter' });
    const expiry = await upload([
      ['file', { filename: 'a.txt', data: 'x' }],
      ['purpose', 'assistants'],
      ['expires_after[anchor]', 'created_at'],
      ['expires_after[seconds]', '60'],
    ]);
    expect(expiry.body.error.param).toBe('expires_after.seconds');
    const two = await upload([
      ['file', { filename: 'a.txt', data: 'x' }],
      ['file', { filename: 'b.txt', data: 'y' }],
      ['purpose', 'assistants'],
    ]);
    expect(two.status).toBe(400);
    const long = await upload([
      ['purpose', 'assistants'],
      ['file', { filename: `${'n'.repeat(1025)}.txt`, data: 'x' }],
    ]);
    expect(long.body.error).toMatchObject({ param: 'file', code: 'invalid_value' });
    const json = await s.req('POST', '/v1/files', { key: 'platform', body: { purpose: 'assistants' } });
    expect(json.status).toBe(400);
    expect(json.body.error.code).toBe('invalid_content_type');
    const broken = await s.app.inject({
      method: 'POST',
      url: '/v1/files',
      payload: '--xyz\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassist',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz', authorization: `Bearer ${TEST_KEYS.platform}` },
    });
    expect(broken.statusCode).toBe(400);
    if (dialect === 'sqlite') expect(readdirSync(join(s.ctx.settings.data, 'files')).length).toBe(before);
  });

  it('refuses a file over the upload limit with 413 and keeps none of it', async () => {
    const big = await upload([
      ['purpose', 'assistants'],
      ['file', { filename: 'big.bin', data: Buffer.alloc(3_000_001) }],
    ]);
    expect(big.status).toBe(413);
    expect(big.body.error).toMatchObject({ param: 'file', code: 'file_too_large' });
    if (dialect === 'sqlite') expect(readdirSync(join(s.ctx.settings.data, 'files')).filter((f) => f.endsWith('.part'))).toEqual([]);
    else {
      const orphans = await s.ctx.store.db
        .selectFrom('file_parts')
        .select('file_id')
        .where('file_id', 'not in', (eb) => eb.selectFrom('files').select('id'))
        .execute();
      expect(orphans).toEqual([]);
    }
  });

  it('keeps projects apart and needs the files scope', async () => {
    const up = await upload([
      ['file', { filename: 'mine.txt', data: 'mine' }],
      ['purpose', 'assistants'],
    ]);
    await s.req('POST', '/admin/v1/projects/proj_demo/api_keys', {
      key: 'admin',
      body: { name: 'read-only', value: 'sk-proj-files-read-only-000000000000', permissions: { files: 'read' } },
    });
    const ro = await upload(
      [
        ['file', { filename: 'x.txt', data: 'x' }],
        ['purpose', 'assistants'],
      ],
      'sk-proj-files-read-only-000000000000',
    );
    expect(ro.status).toBe(403);
    expect((await s.req('GET', `/v1/files/${up.body.id}`, { key: 'sk-proj-files-read-only-000000000000' })).status).toBe(200);
    expect((await s.req('GET', '/v1/files')).status).toBe(401);
    const other = await s.req('POST', '/admin/v1/organizations/org_demo/projects', { key: 'admin', body: { name: 'other' } });
    expect(other.status, JSON.stringify(other.body)).toBeLessThan(300);
    await s.req('POST', `/admin/v1/projects/${other.body.id}/api_keys`, {
      key: 'admin',
      body: { name: 'k', value: 'sk-proj-other-project-key-00000000000' },
    });
    expect((await s.req('GET', `/v1/files/${up.body.id}`, { key: 'sk-proj-other-project-key-00000000000' })).status).toBe(404);
    expect((await s.req('GET', `/v1/files/${up.body.id}/content`, { key: 'sk-proj-other-project-key-00000000000' })).status).toBe(404);
    expect((await s.req('DELETE', `/v1/files/${up.body.id}`, { key: 'sk-proj-other-project-key-00000000000' })).status).toBe(404);
    expect((await s.req('GET', '/v1/files', { key: 'sk-proj-other-project-key-00000000000' })).body.data).toEqual([]);
  });
});
