import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStandin, type TestStandin } from '../../../test/helpers.js';
import { uploadFile } from '../../../test/vector-stores/upload.js';
import type { FileStorage } from './interface.js';
import { keepRecent } from './recent.js';

/** A storage in a Map that counts its reads (the database's, in the test's memory). */
function counted() {
  const files = new Map<string, Buffer>();
  const opened: string[] = [];
  const storage: FileStorage = {
    kind: 'db',
    async write(id, source) {
      const parts: Buffer[] = [];
      for await (const chunk of source) {
        if (chunk.toString() === 'fail') throw new Error('the store is down');
        parts.push(chunk);
      }
      files.set(id, Buffer.concat(parts));
      return files.get(id)!.length;
    },
    async open(id) {
      opened.push(id);
      const bytes = files.get(id);
      if (!bytes) throw new Error(`the bytes of ${id} are missing`);
      return Readable.from([bytes]);
    },
    async remove(id) {
      files.delete(id);
    },
    async clear() {
      files.clear();
    },
  };
  return { files, opened, storage };
}

const read = async (stream: AsyncIterable<unknown>) => {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
};
const pieces = (...texts: string[]) => Readable.from(texts.map((t) => Buffer.from(t)));

describe('the files uploaded last, kept in memory in front of the database', () => {
  it('serves a file stored through it without reading it back, when asked for the size its row gives', async () => {
    const { storage, opened, files } = counted();
    const recent = keepRecent(storage, 1000);
    expect(await recent.write('file-a', pieces('hello ', 'world'))).toBe(11);
    expect(files.get('file-a')?.toString()).toBe('hello world');
    expect((await read(await recent.open('file-a', 11))).toString()).toBe('hello world');
    expect(opened).toEqual([]);
    // Another size than the row's, or none: the storage answers.
    expect((await read(await recent.open('file-a'))).toString()).toBe('hello world');
    await expect(recent.open('file-a', 12)).resolves.toBeDefined();
    expect(opened).toEqual(['file-a', 'file-a']);
  });

  it('keeps nothing of a write that failed, or of a file over a quarter of its bytes; the oldest leave first', async () => {
    const { storage, opened } = counted();
    const recent = keepRecent(storage, 100);
    await expect(recent.write('file-failed', pieces('half ', 'fail'))).rejects.toThrow(/down/);
    await expect(recent.open('file-failed', 5)).rejects.toThrow(/missing/);
    await recent.write('file-large', pieces('x'.repeat(20), 'y'.repeat(6)));
    for (const id of ['file-1', 'file-2', 'file-3', 'file-4', 'file-5']) await recent.write(id, pieces('z'.repeat(25)));
    opened.length = 0;
    for (const id of ['file-large', 'file-1', 'file-2', 'file-3', 'file-4', 'file-5'])
      await read(await recent.open(id, id === 'file-large' ? 26 : 25));
    // 26 bytes is over a quarter of 100; five files of 25 are one too many: the first left.
    expect(opened).toEqual(['file-large', 'file-1']);
  });

  it('gathers at most its bytes from the uploads in progress at once: one past them is stored, not kept', async () => {
    const { storage, opened } = counted();
    const recent = keepRecent(storage, 100);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let yielded = 0;
    const held = (text: string) =>
      (async function* () {
        yield Buffer.from(text);
        yielded++;
        await gate;
      })();
    const ids = ['file-1', 'file-2', 'file-3', 'file-4', 'file-5', 'file-6'];
    const writes = ids.map((id) => recent.write(id, held(id.padEnd(20, '.'))));
    while (yielded < ids.length) await new Promise((r) => setImmediate(r));
    release();
    expect(await Promise.all(writes)).toEqual(Array(6).fill(20));
    for (const id of ids) expect((await read(await recent.open(id, 20))).toString()).toBe(id.padEnd(20, '.'));
    expect(opened).toEqual(['file-6']);
    // Once those ended, what they gathered is free again: the next upload is kept.
    await recent.write('file-7', pieces('seven'));
    await read(await recent.open('file-7', 5));
    expect(opened).toEqual(['file-6']);
  });

  it('forgets a file removed, and every file at a reset', async () => {
    const { storage } = counted();
    const recent = keepRecent(storage, 1000);
    await recent.write('file-a', pieces('abc'));
    await recent.write('file-b', pieces('def'));
    await recent.remove('file-a');
    await expect(recent.open('file-a', 3)).rejects.toThrow(/missing/);
    await recent.clear();
    await expect(recent.open('file-b', 3)).rejects.toThrow(/missing/);
  });

  it('keeps the newest bytes of an id written again (a snapshot restored)', async () => {
    const { storage, opened } = counted();
    const recent = keepRecent(storage, 1000);
    await recent.write('file-a', pieces('old'));
    await recent.write('file-a', pieces('new'));
    expect((await read(await recent.open('file-a', 3))).toString()).toBe('new');
    await expect(recent.write('file-a', pieces('fail'))).rejects.toThrow(/down/);
    // The failed write left the stored bytes as they were ('new'), and nothing of its own kept.
    expect((await read(await recent.open('file-a', 3))).toString()).toBe('new');
    expect(opened).toEqual(['file-a']);
  });
});

describe.runIf(process.env.STANDIN_TEST_DATABASE_URL)('a file attached after its upload (PostgreSQL)', () => {
  let s: TestStandin;
  beforeAll(async () => void (s = await startTestStandin({ dialect: 'postgres', settings: { recentFilesMb: 1 } })));
  afterAll(() => s?.close());

  it("is ingested from this instance's memory, and one past --recent-files-mb from the database", async () => {
    const kept = await uploadFile(s, 'kept.txt', 'The lighthouse keeper logs the tides of the northern cape.');
    const read = await uploadFile(s, 'read.txt', `The orchard ledger. ${'Apples and pears. '.repeat(20_000)}`);
    // The bytes stored, with them the proof: the kept file's parts are gone from the database, and it is
    // still ingested; the large one (over a quarter of 1 MB) is read back from its parts.
    await sql`delete from file_parts where file_id = ${kept}`.execute(s.ctx.store.db);
    const created = await s.req('POST', '/v1/vector_stores', { key: 'platform', body: { name: 'recent', file_ids: [kept, read] } });
    expect(created.status).toBe(200);
    await s.ctx.jobs.drain(60_000);
    const files = await s.req('GET', `/v1/vector_stores/${created.body.id}/files`, { key: 'platform' });
    expect(files.body.data.map((f: { status: string }) => f.status)).toEqual(['completed', 'completed']);
    const found = await s.req('POST', `/v1/vector_stores/${created.body.id}/search`, {
      key: 'platform',
      body: { query: 'lighthouse tides' },
    });
    expect(found.body.data[0].file_id).toBe(kept);
    // Deleted, it is forgotten here too: its content is gone for good.
    expect((await s.req('DELETE', `/v1/files/${kept}`, { key: 'platform' })).status).toBe(200);
    expect((await s.req('GET', `/v1/files/${kept}/content`, { key: 'platform' })).status).toBe(404);
  });
});
