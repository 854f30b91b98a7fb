import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { imageInfo } from './media.js';

/** A real PNG of `w`×`h` grey pixels. */
export function png(w: number, h: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 0, 0, 0, 0], 8);
  const rows = Buffer.concat(Array.from({ length: h }, () => Buffer.concat([Buffer.from([0]), Buffer.alloc(w, 128)])));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A one-page PDF whose text is `text` (uncompressed content stream; offsets computed). */
export function pdf(text: string): Buffer {
  const stream = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

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
