// Issue 34, "a snapshot is data, never a path or a setting": each finding of the probe as an attack.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';
import { form } from '../files/form.js';
import { importSnapshot } from '../../src/snapshots/service.js';
import { untyped } from '../../src/snapshots/tables.js';

const tmp = mkdtempSync(join(tmpdir(), 'standin-security-snap-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A file outside every Standin folder that no request may read or delete. */
const canary = join(tmp, 'canary.txt');
const SECRET = `canary-${Math.random().toString(36).slice(2)}`;
writeFileSync(canary, SECRET);

/** A snapshot's lines with a row added to `table` (the end line's count follows). */
function withRow(lines: string[], table: string, row: (columns: string[]) => unknown[]): string[] {
  const at = lines.findIndex((l) => l.startsWith(`{"table":"${table}"`));
  expect(at, table).toBeGreaterThan(0);
  const columns = JSON.parse(lines[at]).columns.map((c: string[]) => c[0]);
  const end = JSON.parse(lines.at(-1)!);
  end.end.rows++;
  return [...lines.slice(0, at + 1), JSON.stringify(row(columns)), ...lines.slice(at + 1, -1), JSON.stringify(end)];
}

/** A `files` row of the project whose id is `id`. */
const fileObject = (id: string): Record<string, unknown> => ({
  id,
  project_id: 'proj_demo',
  filename: 'x.txt',
  bytes: SECRET.length,
  purpose: 'assistants',
  created_at: 1,
  expires_at: null,
});
const fileRow = (id: string) => (columns: string[]) => columns.map((c) => fileObject(id)[c] ?? null);

describe.each(dialects())('security: snapshots and file storage (%s)', (dialect) => {
  let s: TestStandin;
  let good: Buffer;
  let uploaded: string;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    const { payload, headers } = form([
      ['purpose', 'assistants'],
      ['file', { filename: 'a.txt', data: 'kept bytes' }],
    ]);
    const up = await s.app.inject({
      method: 'POST',
      url: '/v1/files',
      payload,
      headers: { ...headers, authorization: `Bearer ${s.keys.platform}` },
    });
    expect(up.statusCode, up.body).toBe(200);
    uploaded = up.json().id;
    const r = await s.app.inject({ method: 'GET', url: '/admin/v1/snapshot', headers: { authorization: `Bearer ${s.keys.admin}` } });
    expect(r.statusCode).toBe(200);
    good = r.rawPayload;
  }, 60_000);
  afterAll(() => s?.close());

  const lines = () => gunzipSync(good).toString('utf8').trimEnd().split('\n');
  const gz = (l: string[]) => gzipSync(l.join('\n') + '\n');
  const post = (body: Buffer) =>
    s.app.inject({
      method: 'POST',
      url: '/admin/v1/snapshot',
      headers: { authorization: `Bearer ${s.keys.admin}`, 'content-type': 'application/gzip' },
      payload: body,
    });
  const fileIds = async () => (await untyped(s.ctx.store.db).selectFrom('files').select('id').execute()).map((r) => String(r.id)).sort();
  const refused = async (body: Buffer, pattern: RegExp) => {
    const before = await fileIds();
    const r = await post(body);
    expect(r.statusCode, r.body).toBe(400);
    expect(r.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_snapshot' });
    expect(r.json().error.message).toMatch(pattern);
    expect(await fileIds()).toEqual(before);
    return r.json().error.message as string;
  };
  /** The id that reaches the canary from the folder storage's folder. */
  const escape = () => relative(join(s.ctx.settings.data, 'files'), canary);

  it('refuses a snapshot whose files rows (or any id column) carry a path, before anything is written', async () => {
    for (const id of [escape(), '../../../x', canary, 'file-../../x', 'file-a/b', 'file-\u0000', '..', 'x'])
      await refused(gz(withRow(lines(), 'files', fileRow(id))), /files\.id is .* not an id of its kind/);
    // The bytes section of such a file, and ids of other kinds that point elsewhere.
    await refused(
      gz(
        withRow(lines(), 'vector_store_texts', (c) =>
          c.map((n) => ({ vector_store_id: 'vs_x', file_id: '../../x', text: 't' })[n] ?? null),
        ),
      ),
      /file_id/,
    );
    await refused(
      gz(
        withRow(lines(), 'projects', (c) =>
          c.map((n) => ({ id: 'proj_../x', organization_id: 'org_demo', name: 'p', created_at: 1 })[n] ?? null),
        ),
      ),
      /projects\.id/,
    );
    await refused(
      gz(withRow(lines(), 'batches', (c) => c.map((n) => ({ id: 'batch_x', output_file_id: '/proc/self/environ' })[n] ?? null))),
      /batches\.output_file_id/,
    );
    expect(readFileSync(canary, 'utf8')).toBe(SECRET);
  });

  it('reads and deletes nothing outside the storage, whatever a row says (the row put in the store directly)', async () => {
    const id = escape();
    await untyped(s.ctx.store.db).insertInto('files').values(fileObject(id)).execute();
    try {
      const path = `/v1/files/${encodeURIComponent(id)}`;
      const content = await s.req('GET', `${path}/content`, { key: 'platform' });
      expect(content.status).toBe(404);
      expect(JSON.stringify(content.body)).not.toContain(SECRET);
      expect((await s.req('GET', path, { key: 'platform' })).status).toBe(404);
      expect((await s.req('DELETE', path, { key: 'platform' })).status).toBe(404);
      expect((await s.req('GET', `/admin/v1/projects/proj_demo/files/${encodeURIComponent(id)}/content`, { key: 'admin' })).status).toBe(
        404,
      );
      // The storage itself refuses the name, whoever asks (a job's payload, an export).
      const { storage } = s.ctx.services.files;
      for (const name of [id, '../x', canary, 'a\u0000b', '', '.'.repeat(2)]) {
        await expect(storage.open(name), name).rejects.toThrow(/not a name file storage keeps bytes under/);
        await expect(storage.remove(name), name).rejects.toThrow(/not a name file storage keeps bytes under/);
        await expect(storage.write(name, (async function* () {})()), name).rejects.toThrow(/not a name file storage keeps bytes under/);
        // Nor is it named to an ingestion process, which reads a file of the folder storage itself.
        if (storage.localPath) expect(() => storage.localPath!(name), name).toThrow(/not a name file storage keeps bytes under/);
      }
      // An export leaves the row's bytes out rather than read them.
      const r = await s.app.inject({ method: 'GET', url: '/admin/v1/snapshot', headers: { authorization: `Bearer ${s.keys.admin}` } });
      expect(gunzipSync(r.rawPayload).toString('utf8')).not.toContain(Buffer.from(SECRET).toString('base64').slice(0, 12));
      expect(readFileSync(canary, 'utf8')).toBe(SECRET);
      // A file of the project still reads.
      expect((await s.req('GET', `/v1/files/${uploaded}/content`, { key: 'platform' })).body).toBe('kept bytes');
    } finally {
      await untyped(s.ctx.store.db).deleteFrom('files').where('id', '=', id).execute();
    }
  });

  it('refuses a repeated or unknown column: the admin key cannot be set through the last of two key columns', async () => {
    const attacker = 'sk-admin-attacker-000000000000000000000000';
    const l = lines();
    const at = l.findIndex((x) => x.startsWith('{"table":"settings"'));
    let next = at + 1;
    while (l[next].startsWith('[')) next++;
    const end = JSON.parse(l.at(-1)!);
    end.end.rows += 1 - (next - at - 1);
    const twice = [
      ...l.slice(0, at),
      JSON.stringify({
        table: 'settings',
        columns: [
          ['key', 'text'],
          ['value', 'text'],
          ['key', 'text'],
        ],
      }),
      JSON.stringify(['seeded_at', attacker, 'admin_key']),
      ...l.slice(next, -1),
      JSON.stringify(end),
    ];
    await refused(gz(twice), /names column key twice/);
    // The values that would be written are what is checked: the admin key and the instance's root settings stay home.
    for (const key of ['admin_key', 'config.trust_proxy', 'config.vendor', 'clock_generation', 'made_up'])
      await refused(gz(withRow(lines(), 'settings', () => [key, attacker])), /is not one a snapshot carries/);
    const settings = await untyped(s.ctx.store.db).selectFrom('settings').select(['key', 'value']).execute();
    expect(settings.map((r) => r.value)).not.toContain(attacker);
    expect((await s.req('GET', '/admin/v1/clock', { key: attacker })).status).toBe(401);
  });

  it("keeps the instance's own settings through an import, and exports none of them", async () => {
    const db = untyped(s.ctx.store.db);
    await db.insertInto('settings').values({ key: 'config.vendor', value: 'instance-vendor' }).execute();
    try {
      const r = await s.app.inject({ method: 'GET', url: '/admin/v1/snapshot', headers: { authorization: `Bearer ${s.keys.admin}` } });
      expect(gunzipSync(r.rawPayload).toString('utf8')).not.toContain('instance-vendor');
      expect((await post(good)).statusCode).toBe(200);
      expect(await db.selectFrom('settings').select('value').where('key', '=', 'config.vendor').executeTakeFirst()).toEqual({
        value: 'instance-vendor',
      });
    } finally {
      await db.deleteFrom('settings').where('key', '=', 'config.vendor').execute();
    }
  });

  it("neither exports nor imports the app host's signing keys", async () => {
    await untyped(s.ctx.store.db).insertInto('app_host_keys').values({ name: 'download_urls', value: 'instance-secret-value' }).execute();
    try {
      const r = await s.app.inject({ method: 'GET', url: '/admin/v1/snapshot', headers: { authorization: `Bearer ${s.keys.admin}` } });
      const text = gunzipSync(r.rawPayload).toString('utf8');
      expect(text).not.toContain('app_host_keys');
      expect(text).not.toContain('instance-secret-value');
      const l = lines();
      const end = JSON.parse(l.at(-1)!);
      end.end.tables++;
      end.end.rows++;
      const first = l.findIndex((x) => x.startsWith('{"file"'));
      const cut = first > 0 ? first : l.length - 1;
      await refused(
        gz([
          ...l.slice(0, cut),
          JSON.stringify({
            table: 'app_host_keys',
            columns: [
              ['name', 'text'],
              ['value', 'text'],
            ],
          }),
          JSON.stringify(['download_urls', 'attacker-chosen-key']),
          ...l.slice(cut, -1),
          JSON.stringify(end),
        ]),
        /table app_host_keys is the instance's own/,
      );
    } finally {
      await untyped(s.ctx.store.db).deleteFrom('app_host_keys').execute();
    }
  });

  it('refuses anything after the end line: 64 MiB of newlines after a valid snapshot stop at the first one', async () => {
    const text = gunzipSync(good);
    // Two gzip members, as `cat a.gz b.gz` makes: the second is the bomb (small on disk).
    const bomb = Buffer.concat([gzipSync(text), gzipSync(Buffer.alloc(64 * 1024 * 1024, '\n'), { level: 9 })]);
    expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
    const count = text.toString('utf8').trimEnd().split('\n').length;
    // Read no further than the line after the end line.
    const message = await refused(bomb, /follows the end line/);
    expect(message).toContain(`line ${count + 1} follows the end line`);
    await refused(gz([...lines(), '']), new RegExp(`line ${count + 1} follows the end line`));
    await refused(gz([...lines(), lines()[1]]), /follows the end line/);
  });

  it('bounds an import by its decompressed size and its time, changing nothing', async () => {
    const settings = s.ctx.settings;
    const saved = { ...settings };
    try {
      settings.snapshotMaxExpandedBytes = 1000;
      await refused(good, /expands to more than 1000 bytes \(--snapshot-max-expanded-bytes\)/);
      Object.assign(settings, saved, { snapshotTimeoutMs: 0 });
      await refused(good, /took longer than 0 ms/);
      Object.assign(settings, saved, { snapshotMaxBytes: 100 });
      await refused(good, /larger than 100 bytes/);
    } finally {
      Object.assign(settings, saved);
    }
    expect((await post(good)).statusCode).toBe(200);
  });

  it('says a snapshot file named on the command line does not exist, or is not a file', async () => {
    await expect(importSnapshot(s.ctx, join(tmp, 'nonexistent.jsonl.gz'))).rejects.toThrow(/nonexistent\.jsonl\.gz does not exist/);
    await expect(importSnapshot(s.ctx, tmp)).rejects.toThrow(/is not a file/);
    expect(s.ctx.services.snapshots?.importing).toBe(false);
  });

  it('never gives the import lock to an upload still arriving, and cuts one that trickles', async () => {
    const url = new URL(await s.listen());
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      `POST /admin/v1/snapshot HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${s.keys.admin}\r\n` +
        `Content-Type: application/gzip\r\nContent-Length: ${good.length}\r\n\r\n`,
    );
    socket.write(good.subarray(0, 10));
    let sent = 10;
    // A byte every 500 ms: never idle long enough for the body's idle bound, far below any person's or job's rate.
    const drip = setInterval(() => sent < good.length - 1 && socket.writable && socket.write(good.subarray(sent, ++sent)), 500);
    try {
      // Meanwhile the lock is free: another import runs to its end.
      await new Promise((r) => setTimeout(r, 1000));
      expect(s.ctx.services.snapshots?.importing).toBe(false);
      const other = await post(good);
      expect(other.statusCode, other.body).toBe(200);
      // And the trickle is cut (the minimum rate), the lock still free.
      await closed;
      expect(s.ctx.services.snapshots?.importing).toBe(false);
      expect((await post(good)).statusCode).toBe(200);
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
  }, 60_000);
});

describe('security: the command line with a hostile snapshot', () => {
  it('standin exec --import refuses a snapshot whose file row names the environment, and exports nothing of it', async () => {
    const s = await startTestStandin();
    let good: Buffer;
    try {
      good = (await s.app.inject({ method: 'GET', url: '/admin/v1/snapshot', headers: { authorization: `Bearer ${s.keys.admin}` } }))
        .rawPayload;
    } finally {
      await s.close();
    }
    const l = gunzipSync(good).toString('utf8').trimEnd().split('\n');
    const hostile = join(tmp, 'hostile.jsonl.gz');
    writeFileSync(hostile, gzipSync(withRow(l, 'files', fileRow(`${'../'.repeat(20)}proc/self/environ`)).join('\n') + '\n'));
    const out = join(tmp, 'exported.jsonl.gz');
    const { spawn } = await import('node:child_process');
    const token = `job-token-${Math.random().toString(36).slice(2)}`;
    const child = spawn(process.execPath, ['dist/main.js', 'exec', '--import', hostile, '--export-on-exit', out, '--', 'node', '-e', '0'], {
      env: { ...process.env, CI_JOB_TOKEN: token, STANDIN_LOG_LEVEL: 'warn', STANDIN_DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout!.on('data', (d) => (text += d));
    child.stderr!.on('data', (d) => (text += d));
    const code = await new Promise((r) => child.once('exit', r));
    expect(code, text).not.toBe(0);
    expect(text).toMatch(/cannot import .*files\.id is .* not an id of its kind/);
    expect(existsSync(out) && gunzipSync(readFileSync(out)).toString('utf8').includes(token)).toBe(false);

    const missing = spawn(process.execPath, ['dist/main.js', 'import', '--data', join(tmp, 'cli-data'), join(tmp, 'nonexistent.gz')], {
      env: { ...process.env, STANDIN_DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let said = '';
    missing.stderr!.on('data', (d) => (said += d));
    expect(await new Promise((r) => missing.once('exit', r))).toBe(2);
    expect(said).toMatch(/nonexistent\.gz does not exist/);
    expect(said).not.toMatch(/gzip/);
  }, 60_000);
});
