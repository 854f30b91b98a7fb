import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, TEST_KEYS, type TestStandin } from '../helpers.js';

/** The openai SDK against a listening Standin: uploads from a buffer (toFile) and from a stream, content, list, delete. */
describe.each(dialects())('files through the openai SDK (%s)', (dialect) => {
  let s: TestStandin;
  let client: OpenAI;
  const dir = mkdtempSync(join(tmpdir(), 'standin-files-sdk-'));
  beforeAll(async () => {
    s = await startTestStandin({ dialect, settings: { workers: true } });
    client = new OpenAI({ apiKey: TEST_KEYS.platform, baseURL: `${await s.listen()}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uploads with toFile and reads the content back byte for byte', async () => {
    const data = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256));
    const file = await client.files.create({ file: await toFile(data, 'bytes.bin'), purpose: 'assistants' });
    expect(file).toMatchObject({ object: 'file', bytes: data.length, filename: 'bytes.bin', purpose: 'assistants', status: 'processed' });
    const content = await client.files.content(file.id);
    expect(Buffer.compare(Buffer.from(await content.arrayBuffer()), data)).toBe(0);
    expect(await client.files.retrieve(file.id)).toEqual(file);
  });

  it('uploads a file stream (3 MB, streamed by the SDK) with an expiry', async () => {
    const path = join(dir, 'stream.txt');
    const text = 'streamed line of text\n'.repeat(150_000);
    writeFileSync(path, text);
    const file = await client.files.create({
      file: createReadStream(path),
      purpose: 'user_data',
      expires_after: { anchor: 'created_at', seconds: 7200 },
    });
    expect(file).toMatchObject({ bytes: Buffer.byteLength(text), filename: 'stream.txt', purpose: 'user_data' });
    expect(file.expires_at).toBe(file.created_at + 7200);
    expect(await (await client.files.content(file.id)).text()).toBe(text);
  });

  it('lists with auto-pagination and deletes', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await client.files.create({ file: await toFile(Buffer.from(`n${i}`), `n${i}.txt`), purpose: 'evals' })).id);
    const seen: string[] = [];
    for await (const f of client.files.list({ purpose: 'evals', limit: 2 })) seen.push(f.id);
    expect(seen).toEqual([...ids].reverse());
    expect(await client.files.delete(ids[0])).toEqual({ id: ids[0], object: 'file', deleted: true });
    await expect(client.files.retrieve(ids[0])).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('refuses an unknown purpose with a BadRequestError naming it', async () => {
    const err = await client.files
      .create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'wishes' as 'assistants' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('purpose');
  });
});
