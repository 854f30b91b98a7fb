import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../../test/helpers.js';
import { dbStorage, PART_BYTES } from './db.js';

describe.each(dialects())('files kept in the database (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => void (s = await startTestStandin({ dialect, seed: false })));
  afterAll(() => s.close());

  const read = async (stream: AsyncIterable<unknown>) => {
    const parts: Buffer[] = [];
    for await (const part of stream) parts.push(part as Buffer);
    return parts;
  };

  it('reads a file back in its parts, and stops at the size its row gives without asking for a part past it', async () => {
    const storage = dbStorage(s.ctx.store.db);
    const bytes = Buffer.alloc(2 * PART_BYTES + 12_345);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
    const id = `file-dbstorage${dialect}`;
    expect(
      await storage.write(
        id,
        (async function* () {
          for (let at = 0; at < bytes.length; at += 64 * 1024) yield bytes.subarray(at, at + 64 * 1024);
        })(),
      ),
    ).toBe(bytes.length);
    const whole = await read(await storage.open(id));
    expect(whole.length).toBe(3);
    expect(Buffer.concat(whole).equals(bytes)).toBe(true);
    expect(Buffer.concat(await read(await storage.open(id, bytes.length))).equals(bytes)).toBe(true);
    // Told the size of the first part, it ends there: the parts after it are not read.
    const first = await read(await storage.open(id, whole[0].length));
    expect(first.length).toBe(1);
    expect(first[0].equals(whole[0])).toBe(true);
    await storage.remove(id);
    await expect(storage.open(id, bytes.length)).rejects.toThrow(/missing/);
  });

  it("reads a small file's one part with the turn's other statements (PostgreSQL's pipelined connections), and a large one's on a connection of its own", async () => {
    const storage = dbStorage(s.ctx.store.db);
    const pipeline = s.ctx.store.pipeline;
    const pipelined = pipeline && vi.spyOn(pipeline, 'rows');
    for (const size of [2_000, 200_000]) {
      const bytes = Buffer.alloc(size, size % 251);
      const id = `file-dbstorage${dialect}${size}`;
      await storage.write(id, Readable.from([bytes]));
      pipelined?.mockClear();
      expect(Buffer.concat(await read(await storage.open(id, size))).equals(bytes)).toBe(true);
      const reads = pipelined?.mock.calls.filter(([sql]) => sql.includes('file_parts')).length;
      if (pipelined) expect(reads, String(size)).toBe(size < 65_536 ? 1 : 0);
      await storage.remove(id);
      await expect(storage.open(id, size)).rejects.toThrow(/missing/);
    }
    pipelined?.mockRestore();
  });
});
