import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../admin/config-file.js';
import { startChatServer } from '../../test/assistants/chat-server.js';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { pdf, png } from '../../test/media.js';
import { admissionText, assemble } from './inputs.js';
import { imageInfo, readDataUrl } from './media.js';

describe('image headers', () => {
  it('reads the type and size of PNG, GIF, JPEG and WebP headers, and nothing else', () => {
    expect(imageInfo(png(7, 3))).toEqual({ mediaType: 'image/png', width: 7, height: 3 });
    const gif = Buffer.from('GIF89a\x05\x00\x02\x00\x00\x00\x00', 'latin1');
    expect(imageInfo(gif)).toEqual({ mediaType: 'image/gif', width: 5, height: 2 });
    // SOI, an APP0 segment of 16 bytes, then SOF0: precision, height 0x0120, width 0x0200.
    const jpeg = Buffer.concat([
      Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
      Buffer.alloc(14),
      Buffer.from([0xff, 0xc0, 0, 17, 8, 0x01, 0x20, 0x02, 0x00, 3]),
    ]);
    expect(imageInfo(jpeg)).toEqual({ mediaType: 'image/jpeg', width: 512, height: 288 });
    const webp = Buffer.alloc(30);
    webp.write('RIFF', 0, 'latin1');
    webp.write('WEBPVP8X', 8, 'latin1');
    webp.writeUIntLE(99, 24, 3);
    webp.writeUIntLE(49, 27, 3);
    expect(imageInfo(webp)).toEqual({ mediaType: 'image/webp', width: 100, height: 50 });
    expect(imageInfo(Buffer.from('not an image at all, just text'))).toBeNull();
  });
});

describe('assemble', () => {
  it('puts instructions first, then the context, then the input; the calls of one turn are one assistant message', () => {
    const call = (id: string) => ({
      role: 'assistant' as const,
      content: null,
      tool_calls: [{ id, type: 'function' as const, function: { name: 'f', arguments: '{}' } }],
    });
    const messages = assemble(
      'be brief',
      [{ role: 'user', content: 'earlier' }],
      [{ role: 'user', content: 'ab' }, call('c1'), null, call('c2'), { role: 'tool', tool_call_id: 'c1', content: 'one' }],
    );
    expect(messages).toEqual([
      { role: 'developer', content: 'be brief' },
      { role: 'user', content: 'earlier' },
      { role: 'user', content: 'ab' },
      { role: 'assistant', content: null, tool_calls: [expect.objectContaining({ id: 'c1' }), expect.objectContaining({ id: 'c2' })] },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
    ]);
  });
});

describe('bounds', () => {
  it('refuses a data URL past its limit from its length, before decoding it', () => {
    expect(() => readDataUrl(`data:image/png;base64,${'A'.repeat(4000)}`, 1000, 'p')).toThrow(/larger than/);
    expect(readDataUrl('data:text/plain,a%20b', 1000, 'p').data.toString()).toBe('a b');
    expect(() => readDataUrl('data:image/png;base64,@@@', 1000, 'p')).toThrow(/not valid base64/);
  });

  it('leaves the bytes of data URLs and file_data out of what the rate limiter counts', () => {
    const big = `data:image/png;base64,${'A'.repeat(100_000)}`;
    const text = admissionText([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'hello' },
          { type: 'input_image', image_url: big },
        ],
      },
      { role: 'user', content: [{ type: 'input_file', file_data: big, filename: 'a.pdf' }] },
    ]);
    expect(text.length).toBeLessThan(300);
    expect(text).toContain('hello');
    expect(admissionText('plain')).toBe('plain');
  });
});

describe.each(dialects())('response inputs (%s)', (dialect) => {
  let s: TestStandin;
  const create = (body: unknown, key = 'platform') => s.req('POST', '/v1/responses', { key, body });
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(() => s?.close());

  it('reads an image (data URL) by its header and gives the built-in model its type and size', async () => {
    const url = `data:image/png;base64,${png(64, 48).toString('base64')}`;
    const r = await create({
      model: 'gpt-4o-mini',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: url },
          ],
        },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.output[0].content[0].text).toContain('[image: image/png, 64x48 pixels]');
    const items = await s.req('GET', `/v1/responses/${r.body.id}/input_items`, { key: 'platform' });
    expect(items.status, JSON.stringify(items.body)).toBe(200);
    expect(items.body.data).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        status: 'completed',
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is this?' },
          { type: 'input_image', image_url: url, file_id: null, detail: 'auto' },
        ],
      },
    ]);
  });

  it('sends an upstream model the image and the file as Chat Completions content parts', async () => {
    const server = await startChatServer();
    try {
      await applyConfig(s.ctx, s.modules, { models: { 'up-*': { provider: 'upstream', base_url: server.url, stream: false } } });
      const image = `data:image/png;base64,${png(2, 2).toString('base64')}`;
      const file = pdf('Upstream reads this.').toString('base64');
      const r = await create({
        model: 'up-1',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'look' },
              { type: 'input_image', image_url: image, detail: 'low' },
              { type: 'input_file', filename: 'a.pdf', file_data: file },
            ],
          },
        ],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(server.requests.at(-1).body.messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: image, detail: 'low' } },
            { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${file}` } },
          ],
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it('names the part and the rule when an input part is wrong', async () => {
    const missing = await create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_image' }] }] });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({
      param: 'input[0].content[0]',
      message: expect.stringContaining("exactly one of 'image_url' and 'file_id'"),
    });
    const wrongType = await create({
      model: 'gpt-4o-mini',
      input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }],
    });
    expect(wrongType.body.error).toMatchObject({ param: 'input[0].content[0].type', code: 'invalid_value' });
    const noText = await create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_text' }] }] });
    expect(noText.body.error).toMatchObject({
      param: 'input[0].content[0].text',
      message: "Missing required parameter: 'input[0].content[0].text'.",
    });
    const notImage = await create({
      model: 'gpt-4o-mini',
      input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,aGVsbG8=' }] }],
    });
    expect(notImage.body.error).toMatchObject({ param: 'input[0].content[0].image_url', code: 'invalid_image_format' });
  });
});

describe.each(dialects())('response inputs: files, references, function calls, attacks (%s)', (dialect) => {
  let s: TestStandin;
  let base: string;
  const other = 'sk-proj-other-inputs-key-00000000000';
  const create = (body: unknown, key = 'platform') => s.req('POST', '/v1/responses', { key, body });
  const upload = async (name: string, data: Buffer, key = s.keys.platform) => {
    const form = new FormData();
    form.append('purpose', 'user_data');
    form.append('file', new Blob([new Uint8Array(data)]), name);
    const res = await fetch(`${base}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    base = await s.listen();
    const project = await s.req('POST', '/admin/v1/organizations/org_demo/projects', { key: 'admin', body: { name: 'other-inputs' } });
    await s.req('POST', `/admin/v1/projects/${project.body.id}/api_keys`, { key: 'admin', body: { name: 'k', value: other } });
  });
  afterAll(() => s?.close());

  it('gives the built-in model the extracted text of a PDF (file_id and file_data) and of an image file', async () => {
    const doc = pdf('The return policy is thirty days.');
    const fileId = await upload('policy.pdf', doc);
    const byId = await create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_file', file_id: fileId }] }] });
    expect(byId.status, JSON.stringify(byId.body)).toBe(200);
    expect(byId.body.output[0].content[0].text).toContain('[file: policy.pdf]\nThe return policy is thirty days.');
    const inline = await create({
      model: 'gpt-4o-mini',
      input: [
        {
          role: 'user',
          content: [{ type: 'input_file', filename: 'p.pdf', file_data: `data:application/pdf;base64,${doc.toString('base64')}` }],
        },
      ],
    });
    expect(inline.body.output[0].content[0].text).toContain('The return policy is thirty days.');
    const imageId = await upload('pic.png', png(3, 2));
    const image = await create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_image', file_id: imageId }] }] });
    expect(image.body.output[0].content[0].text).toContain('[image: image/png, 3x2 pixels]');
    // Another project's file is not there for this one.
    const stolen = await create(
      { model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_file', file_id: fileId }] }] },
      other,
    );
    expect(stolen.status).toBe(404);
    const stolenImage = await create(
      { model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_image', file_id: imageId }] }] },
      other,
    );
    expect(stolenImage.status).toBe(404);
  });

  it('fetches an image_url and a file_url (loopback is allowed while Standin listens on it), bounded in size', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      if (req.url === '/pic.png') return res.writeHead(200, { 'content-type': 'image/png' }).end(png(9, 4));
      if (req.url === '/doc') return res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf('Fetched from a URL.'));
      if (req.url === '/endless') {
        res.writeHead(200, { 'content-type': 'image/png' });
        const chunk = Buffer.alloc(1024 * 1024);
        const pump = () => {
          while (res.write(chunk));
        };
        res.on('drain', pump);
        pump();
        return;
      }
      res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const at = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const r = await create({
        model: 'gpt-4o-mini',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_image', image_url: `${at}/pic.png` },
              { type: 'input_file', file_url: `${at}/doc` },
            ],
          },
        ],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.output[0].content[0].text).toContain('[image: image/png, 9x4 pixels]');
      expect(r.body.output[0].content[0].text).toContain('[file: doc.pdf]\nFetched from a URL.');
      const endless = await create({
        model: 'gpt-4o-mini',
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: `${at}/endless` }] }],
      });
      expect(endless.body.error).toMatchObject({ code: 'file_too_large', param: 'input[0].content[0].image_url' });
      // A redirect is not followed (its target might be anywhere).
      const moved = await create({
        model: 'gpt-4o-mini',
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: `${at}/moved` }] }],
      });
      expect(moved.body.error).toMatchObject({ code: 'invalid_image_url', message: expect.stringContaining('answered 302') });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('refuses an image_url to a private or metadata address through the outbound guard, and bounds a data URL', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/x.png', 'http://10.1.2.3/x.png']) {
      const r = await create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_image', image_url: url }] }] });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({
        param: 'input[0].content[0].image_url',
        message: expect.stringContaining('refusing to connect'),
      });
    }
    const huge = `data:image/png;base64,${'A'.repeat(2 * 1024 * 1024)}`;
    const big = await create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_image', image_url: huge }] }] });
    expect(big.status).toBe(413);
  });

  it('resolves an item_reference within the project only, and round-trips function calls', async () => {
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    const first = await create({ model: 'gpt-4o-mini', input: 'call get_weather please', tools, tool_choice: 'required' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const call = first.body.output.find((o: { type: string }) => o.type === 'function_call');
    expect(call).toMatchObject({ id: expect.stringMatching(/^fc_/), name: 'get_weather' });
    // The call passed back as it came, with its output; then a reference to the first turn's call item.
    const second = await create({
      model: 'gpt-4o-mini',
      input: [
        { role: 'user', content: 'call get_weather please' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21 C' },
      ],
      tools,
    });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.output[0].content[0].text).toContain('sunny, 21 C');
    const items = await s.req('GET', `/v1/responses/${second.body.id}/input_items?order=asc`, { key: 'platform' });
    expect(items.body.data.map((i: { type: string }) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
    expect(items.body.data[1]).toEqual(call);
    const referenced = await create({
      model: 'gpt-4o-mini',
      input: [
        { role: 'user', content: 'call get_weather please' },
        { type: 'item_reference', id: call.id },
        { type: 'function_call_output', call_id: call.call_id, output: 'rain' },
      ],
      tools,
    });
    expect(referenced.status, JSON.stringify(referenced.body)).toBe(200);
    expect(referenced.body.output[0].content[0].text).toContain('rain');
    const foreign = await create({ model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: call.id }] }, other);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toMatchObject({ param: 'input[0].id' });
  });

  it('pages input items with limit, order and after', async () => {
    const input = Array.from({ length: 5 }, (_, i) => ({ role: 'user', content: `m${i}` }));
    const r = await create({ model: 'gpt-4o-mini', input });
    const page = (q: string) => s.req('GET', `/v1/responses/${r.body.id}/input_items?${q}`, { key: 'platform' });
    const desc = await page('limit=2');
    expect(desc.body.data.map((i: any) => i.content[0].text)).toEqual(['m4', 'm3']);
    expect(desc.body.has_more).toBe(true);
    const next = await page(`limit=2&after=${desc.body.last_id}`);
    expect(next.body.data.map((i: any) => i.content[0].text)).toEqual(['m2', 'm1']);
    const asc = await page('order=asc&limit=10&include=message.input_image.image_url');
    expect(asc.body).toMatchObject({ has_more: false, first_id: asc.body.data[0].id });
    expect(asc.body.data.map((i: any) => i.content[0].text)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect((await page('limit=0')).status).toBe(400);
    expect((await s.req('GET', `/v1/responses/${r.body.id}/input_items`, { key: other })).status).toBe(404);
  });

  it('counts input tokens as the built-in model counts a response', async () => {
    const body = { model: 'gpt-4o-mini', instructions: 'be brief', input: [{ role: 'user', content: 'how many tokens is this?' }] };
    const counted = await s.req('POST', '/v1/responses/input_tokens', { key: 'platform', body });
    expect(counted.status, JSON.stringify(counted.body)).toBe(200);
    const r = await create(body);
    expect(counted.body).toEqual({ object: 'response.input_tokens', input_tokens: r.body.usage.input_tokens });
    const compact = await s.req('POST', '/v1/responses/compact', { key: 'platform', body: { model: 'gpt-4o-mini', input: 'x' } });
    expect(compact.status).toBe(400);
    expect(compact.body.error.message).toContain('/v1/responses/compact');
  });
});
