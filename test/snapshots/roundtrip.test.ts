import { createReadStream, createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toFile } from 'openai';
import { startEnv, type Env } from '../assistants/setup.js';
import { dialects, startTestStandin, type TestDialect, type TestStandin } from '../helpers.js';
import { exportSnapshot, importSnapshot } from '../../src/snapshots/service.js';
import { settingTravels, snapshotTables, untyped } from '../../src/snapshots/tables.js';
import { triggerEvent } from '../../src/webhooks/trigger.js';

const tmp = mkdtempSync(join(tmpdir(), 'standin-snapshot-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Fills a store through its APIs, in every area a snapshot must carry. */
async function populate({ s, client }: Env): Promise<void> {
  const ok = async (r: Promise<{ status: number; body: any }>) => {
    const res = await r;
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body;
  };
  // ads
  for (let i = 0; i < 3; i++)
    await ok(
      s.req('POST', '/ads/v1/ad_groups', {
        key: 'ads',
        body: {
          campaign_id: 'cmp_demo_clicks',
          name: `Group ${i}`,
          status: 'active',
          bidding_config: { billing_event_type: 'click', max_bid_micros: 1_000_000 + i },
        },
      }),
    );
  // identity: an organization, a project, a key
  await ok(s.req('POST', '/admin/v1/organizations', { key: 'admin', body: { name: 'Snapshot org' } }));
  // webhooks: an endpoint, and deliveries of the events the work below emits
  await ok(
    s.req('POST', '/admin/v1/projects/proj_demo/webhook_endpoints', {
      key: 'admin',
      body: { name: 'hook', url: 'http://127.0.0.1:9/hook', event_types: ['response.completed', 'batch.completed'] },
    }),
  );
  // files with bytes (binary, not only text), a vector store over one
  const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256));
  await client.files.create({ file: await toFile(bytes, 'blob.bin'), purpose: 'assistants' });
  const doc = await client.files.create({
    file: await toFile(Buffer.from('Snapshots carry every area.\n'), 'doc.txt'),
    purpose: 'assistants',
  });
  const vs = await client.vectorStores.create({ name: 'kb', file_ids: [doc.id] });
  // a container with a copied file and an uploaded binary one (its bytes in parts)
  const container = await client.containers.create({
    name: 'snap',
    file_ids: [doc.id],
    expires_after: { anchor: 'last_active_at', minutes: 1440 },
  });
  await client.containers.files.create(container.id, { file: await toFile(bytes, 'blob.bin') });
  // assistants, threads, messages, runs
  const asst = await client.beta.assistants.create({ model: 'gpt-4o', name: 'snap' });
  const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'hello' }] });
  await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: asst.id });
  // responses, batches, images
  await client.responses.create({ model: 'gpt-4o', input: 'hi' });
  // conversations, their items, a response's stored items
  const conversation = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'remember me' }] });
  await client.responses.create({ model: 'gpt-4o', input: 'and now?', conversation: conversation.id });
  const input = await client.files.create({
    file: await toFile(
      Buffer.from(
        JSON.stringify({
          custom_id: 'a',
          method: 'POST',
          url: '/v1/chat/completions',
          body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] },
        }) + '\n',
      ),
      'in.jsonl',
    ),
    purpose: 'batch',
  });
  await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  await ok(s.req('POST', '/v1/images/request_audit', { key: 'platform', body: { reason: 'check' } }));
  // rate limits: a fault
  await ok(s.req('POST', '/admin/v1/faults', { key: 'admin', body: { path: '/v1/nothing', status: 503 } }));
  await triggerEvent(s.ctx, 'proj_demo', 'response.completed');
  // The outbox fans events out to deliveries in a worker: wait for one ("it did not freeze" bound).
  for (let i = 0; i < 200 && !(await untyped(s.ctx.store.db).selectFrom('webhook_deliveries').select('id').executeTakeFirst()); i++)
    await new Promise((r) => setTimeout(r, 50));
  // the clock
  await ok(s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '3h' } }));
  expect(vs.id).toMatch(/^vs_/);
}

/** Every row of every table a snapshot carries, sorted, values as JSON (Buffers as base64). */
async function dump(s: TestStandin): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of await snapshotTables(s.ctx.store)) {
    const rows = await untyped(s.ctx.store.db).selectFrom(t.name).selectAll().execute();
    out[t.name] = rows
      .filter((r) => t.name !== 'settings' || settingTravels(r.key))
      .map((r) => JSON.stringify(t.columns.map(([c, kind]) => (kind === 'bytes' ? Buffer.from(r[c] as Buffer).toString('base64') : r[c]))))
      .sort();
  }
  return out;
}

/** The bytes of every stored file, by id. */
async function fileBytes(s: TestStandin): Promise<Record<string, string>> {
  const ids = await untyped(s.ctx.store.db).selectFrom('files').select('id').execute();
  const out: Record<string, string> = {};
  for (const { id } of ids) {
    const chunks: Buffer[] = [];
    for await (const c of await s.ctx.services.files.storage.open(String(id))) chunks.push(c as Buffer);
    out[String(id)] = Buffer.concat(chunks).toString('base64');
  }
  return out;
}

async function exportTo(s: TestStandin, name: string): Promise<string> {
  const path = join(tmp, name);
  await exportSnapshot(s.ctx, createWriteStream(path));
  return path;
}

const other = (d: TestDialect): TestDialect => (d === 'sqlite' && dialects().includes('postgres') ? 'postgres' : 'sqlite');

describe.each(dialects())('snapshots: a store of every area round-trips (from %s)', (dialect) => {
  let env: Env;
  let there: TestStandin;
  let back: TestStandin;
  beforeAll(async () => {
    env = await startEnv(dialect);
    await populate(env);
    await env.s.ctx.jobs.stop(); // workers stopped: nothing moves while it is compared
    there = await startTestStandin({ dialect: other(dialect), seed: false });
    back = await startTestStandin({ dialect, seed: false });
  }, 120_000);
  afterAll(async () => {
    await Promise.all([env?.s.close(), there?.close(), back?.close()]);
  });

  it(`carries every table's rows, the files' bytes and the clock to ${dialect === 'sqlite' ? 'PostgreSQL' : 'SQLite'} and back`, async () => {
    const original = await dump(env.s);
    const bytes = await fileBytes(env.s);
    expect(Object.keys(bytes).length).toBeGreaterThanOrEqual(3);
    // every area has rows (the list is what the populate step promises)
    for (const t of [
      'ad_groups',
      'organizations',
      'api_keys',
      'webhook_endpoints',
      'webhook_deliveries',
      'assistants',
      'threads',
      'thread_messages',
      'thread_runs',
      'run_steps',
      'files',
      'vector_stores',
      'vector_store_chunks',
      'batches',
      'responses',
      'response_items',
      'conversations',
      'conversation_items',
      'image_audit_requests',
      'containers',
      'container_files',
      'container_file_parts',
      'rate_limit_faults',
    ])
      expect(original[t]?.length, t).toBeGreaterThan(0);

    const first = await exportTo(env.s, `${dialect}-1.jsonl.gz`);
    await importSnapshot(there.ctx, first);
    expect(await dump(there)).toEqual(original);
    expect(await fileBytes(there)).toEqual(bytes);
    expect(there.ctx.clock.offsetMs()).toBe(env.s.ctx.clock.offsetMs());

    const second = await exportTo(there, `${dialect}-2.jsonl.gz`);
    await importSnapshot(back.ctx, createReadStream(second));
    expect(await dump(back)).toEqual(original);
    expect(await fileBytes(back)).toEqual(bytes);
    expect(back.ctx.clock.offsetMs()).toBe(env.s.ctx.clock.offsetMs());
    // The imported store serves what it got through its API.
    const files = await back.req('GET', '/v1/files', { key: env.s.keys.platform });
    expect(files.status).toBe(200);
    expect(files.body.data.length).toBe(Object.keys(bytes).length);
    // And its containers' files, byte for byte.
    const [c] = (await back.req('GET', '/v1/containers', { key: env.s.keys.platform })).body.data;
    const blob = (await back.req('GET', `/v1/containers/${c.id}/files`, { key: env.s.keys.platform })).body.data.find(
      (f: { path: string }) => f.path === '/mnt/data/blob.bin',
    );
    const content = await back.app.inject({
      method: 'GET',
      url: `/v1/containers/${c.id}/files/${blob.id}/content`,
      headers: { authorization: `Bearer ${env.s.keys.platform}` },
    });
    expect(content.rawPayload.length).toBe(300_000);
    expect(content.rawPayload[299_999]).toBe((299_999 * 7) % 256);
  }, 120_000);
});

describe.each(dialects())('snapshots: the control plane and hostile files (%s)', (dialect) => {
  let s: TestStandin;
  let good: Buffer;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    await s.req('POST', '/ads/v1/ad_groups', {
      key: 'ads',
      body: {
        campaign_id: 'cmp_demo_clicks',
        name: 'Kept',
        status: 'active',
        bidding_config: { billing_event_type: 'click', max_bid_micros: 1_000_000 },
      },
    });
    const r = await s.app.inject({ method: 'GET', url: '/admin/v1/snapshot', headers: { authorization: `Bearer ${s.keys.admin}` } });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/gzip');
    good = r.rawPayload;
  });
  afterAll(() => s?.close());

  const post = (body: Buffer, key = s.keys.admin) =>
    s.app.inject({
      method: 'POST',
      url: '/admin/v1/snapshot',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/gzip' },
      payload: body,
    });
  const groups = async () =>
    (await s.req('GET', '/ads/v1/ad_groups?campaign_id=cmp_demo_clicks', { key: 'ads' })).body.data.map((g: any) => g.name);

  it('restores a downloaded snapshot, replacing what was made since', async () => {
    await s.req('POST', '/ads/v1/ad_groups', {
      key: 'ads',
      body: {
        campaign_id: 'cmp_demo_clicks',
        name: 'Made later',
        status: 'active',
        bidding_config: { billing_event_type: 'click', max_bid_micros: 1_000_000 },
      },
    });
    expect(await groups()).toContain('Made later');
    const r = await post(good);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ object: 'snapshot.restored' });
    expect(await groups()).toContain('Kept');
    expect(await groups()).not.toContain('Made later');
  });

  it('runs one import at a time on an instance (409 for a second one meanwhile)', async () => {
    const path = join(tmp, `one-at-a-time-${dialect}.jsonl.gz`);
    writeFileSync(path, good);
    const first = importSnapshot(s.ctx, path);
    await expect(importSnapshot(s.ctx, path)).rejects.toMatchObject({ status: 409, code: 'import_in_progress' });
    await first;
    await importSnapshot(s.ctx, path);
  });

  it('needs the admin key', async () => {
    expect((await post(good, s.keys.platform)).statusCode).toBe(401);
  });

  const lines = () => gunzipSync(good).toString('utf8').trimEnd().split('\n');
  const refused = async (body: Buffer, pattern: RegExp) => {
    const before = await groups();
    const r = await post(body);
    expect(r.statusCode, r.body).toBe(400);
    expect(r.json().error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_snapshot' });
    expect(r.json().error.message).toMatch(pattern);
    expect(await groups()).toEqual(before); // nothing changed
  };

  it('refuses garbage, a cut file, unknown tables and columns, the admin key, and deep nesting with a 400, changing nothing', async () => {
    await refused(Buffer.from('not a snapshot at all'), /not a gzip file/);
    await refused(gzipSync('{"hello":1}\n'), /header/);
    const l = lines();
    await refused(gzipSync(l.slice(0, -1).join('\n')), /ends early/);
    await refused(gzipSync(l.slice(0, -10).join('\n')), /ends early|end line/);
    const table = l.findIndex((x) => x.startsWith('{"table":"ad_groups"'));
    const unknownTable = [...l];
    unknownTable[table] = unknownTable[table].replace('"ad_groups"', '"sqlite_master"');
    await refused(gzipSync(unknownTable.join('\n')), /not a table of this Standin/);
    const unknownColumn = [...l];
    unknownColumn[table] = unknownColumn[table].replace('["id","text"]', '["id; DROP TABLE ad_groups","text"]');
    await refused(gzipSync(unknownColumn.join('\n')), /not a column of this Standin/);
    const settings = l.findIndex((x) => x.startsWith('{"table":"settings"'));
    const cols = JSON.parse(l[settings]).columns.map((c: string[]) => c[0]);
    const adminRow = JSON.stringify(cols.map((c: string) => (c === 'key' ? 'admin_key' : 'sk-admin-stolen-000000000000')));
    const end = JSON.parse(l.at(-1)!);
    end.end.rows++;
    await refused(
      gzipSync([...l.slice(0, settings + 1), adminRow, ...l.slice(settings + 1, -1), JSON.stringify(end)].join('\n')),
      /instance's own/,
    );
    await refused(gzipSync(`${l[0]}\n"${'A'.repeat(17 * 1024 * 1024)}"\n`), /longer than/);
    const twice = JSON.parse(l.at(-1)!);
    twice.end.rows++;
    await refused(
      gzipSync([...l.slice(0, table + 2), l[table + 1], ...l.slice(table + 2, -1), JSON.stringify(twice)].join('\n')),
      /refused a row/,
    );
    const deep = [...l];
    deep.splice(table + 1, 0, '['.repeat(100_000) + ']'.repeat(100_000));
    await refused(gzipSync(deep.join('\n')), /nested deeper/);
    const wrongKind = [...l];
    const row = JSON.parse(wrongKind[table + 1]);
    row[0] = { $ne: 1 };
    wrongKind[table + 1] = JSON.stringify(row);
    await refused(gzipSync(wrongKind.join('\n')), /not a value of kind/);
    const traversal = [...l];
    traversal.splice(-1, 0, JSON.stringify({ file: '../../etc/passwd' }));
    await refused(gzipSync(traversal.join('\n')), /names a file/);
    // a snapshot of a later Standin
    const later = [...l];
    const header = JSON.parse(later[0]);
    header.schema.push('999912312359_from_the_future');
    later[0] = JSON.stringify(header);
    await refused(gzipSync(later.join('\n')), /does not have/);
  });

  it('still imports a snapshot taken one migration earlier (tables it lacks stay empty, added columns take their defaults)', async () => {
    const { migrate } = await import('../../src/store/migrate.js');
    const { openStore } = await import('../../src/store/db.js');
    const { modules } = await import('../../src/server/modules.js');
    const { writeSnapshot } = await import('../../src/snapshots/export.js');
    const all = modules.flatMap((m) => Object.keys(m.migrations ?? {})).sort();
    // The store of a Standin one migration behind, holding this one's state (each table's columns as of then).
    const vs = await s.req('POST', '/v1/vector_stores', { key: 'platform', body: { name: 'from an older Standin' } });
    expect(vs.status).toBe(200);
    const older = openStore({ dataDir: mkdtempSync(join(tmp, 'older-')) });
    await migrate(older, modules, all.at(-2));
    for (const t of await snapshotTables(older)) {
      const rows = (
        await untyped(s.ctx.store.db)
          .selectFrom(t.name)
          .select(t.columns.map(([c]) => c))
          .execute()
      ).filter((r) => t.name !== 'settings' || settingTravels(r.key));
      if (rows.length) await untyped(older.db).insertInto(t.name).values(rows).execute();
    }
    const path = join(tmp, 'older.jsonl.gz');
    await writeSnapshot(
      { store: older, storage: s.ctx.services.files.storage, clockOffsetMs: 0, now: Date.now() },
      createWriteStream(path),
    );
    await older.close();
    const header = JSON.parse(gunzipSync(readFileSync(path)).toString('utf8').split('\n')[0]);
    expect(header.schema).toEqual(all.slice(0, -1));

    await s.req('DELETE', `/v1/vector_stores/${vs.body.id}`, { key: 'platform' });
    const r = await post(readFileSync(path));
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().schema).toEqual(all.slice(0, -1));
    const back = await s.req('GET', `/v1/vector_stores/${vs.body.id}`, { key: 'platform' });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body.name).toBe('from an older Standin');
    expect(await groups()).toContain('Kept');
  });
});
