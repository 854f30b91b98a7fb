import { constants, crc32, deflateRawSync } from 'node:zlib';
import { DOCUMENT_XML, DOCX_PARTS } from '../vector-stores/fixtures.js';
import { zipEntries, zipEntry } from '../zip.js';

/**
 * Hostile files of issue 25, made here and small on disk. A deflate stream of a repeated chunk is the
 * chunk's deflated blocks (flushed, so each stands alone) repeated, then an empty final block: a few
 * kilobytes per inflated megabyte, built in milliseconds.
 */
const MB = 1024 * 1024;

/** Raw deflate of `chunk` repeated `times`, between `head` and `tail`; with the CRC-32 and size of the whole. */
function repeatedDeflate(head: string, chunk: string, times: number, tail: string) {
  const flush = { level: 9, finishFlush: constants.Z_FULL_FLUSH };
  const piece = deflateRawSync(Buffer.from(chunk), flush);
  const c = Buffer.from(chunk);
  let crc = crc32(head);
  for (let i = 0; i < times; i++) crc = crc32(c, crc);
  crc = crc32(tail, crc);
  const packed = Buffer.concat([
    deflateRawSync(Buffer.from(head), flush),
    ...Array<Buffer>(times).fill(piece),
    deflateRawSync(Buffer.from(tail)),
  ]);
  return { packed, size: Buffer.byteLength(head) + c.length * times + Buffer.byteLength(tail), crc: crc >>> 0 };
}

/** A DOCX whose `word/document.xml` inflates to about `mb` megabytes of paragraphs (issue 25 #1: 300). */
export function docxBomb(mb = 300): Buffer {
  const paragraph = '<w:p><w:r><w:t>All work and no play makes a dull document.</w:t></w:r></w:p>';
  const chunk = paragraph.repeat(Math.floor(MB / paragraph.length));
  const doc = repeatedDeflate(DOCUMENT_XML[0], chunk, mb, DOCUMENT_XML[1]);
  return zipEntries([...Object.entries(DOCX_PARTS).map(([name, text]) => zipEntry(name, text)), { name: 'word/document.xml', ...doc }]);
}

/** A zlib stream of `mb` megabytes of zeros (the Adler-32 of n zeros is n mod 65521 in its high half, 1 low). */
function zerosZlib(mb: number): Buffer {
  const piece = deflateRawSync(Buffer.alloc(MB), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((mb * MB) % 65521) * 65536 + 1) >>> 0);
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array<Buffer>(mb).fill(piece), Buffer.from([0x03, 0x00]), adler]);
}

/** A one-page PDF whose content stream (FlateDecode) inflates to `mb` megabytes of zeros (issue 25 #5: 2048). */
export function pdfBomb(mb = 2048): Buffer {
  const stream = zerosZlib(mb);
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let size = 0;
  const push = (b: Buffer | string) => {
    const buf = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    parts.push(buf);
    size += buf.length;
  };
  push('%PDF-1.4\n');
  const objects: (string | Buffer[])[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << >> >>',
    [Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'), stream, Buffer.from('\nendstream', 'latin1')],
  ];
  objects.forEach((o, i) => {
    offsets.push(size);
    push(`${i + 1} 0 obj\n`);
    if (typeof o === 'string') push(o);
    else o.forEach(push);
    push('\nendobj\n');
  });
  const xref = size;
  push(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`);
  push(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

/** `<div>` × n, a word, `</div>` × n (issue 25 #3: 500,000, 5.5 MB). */
export const htmlBomb = (n = 500_000) => Buffer.from(`${'<div>'.repeat(n)}deep${'</div>'.repeat(n)}`);

/** `[` × n then `]` × n (issue 25: 2 MB froze the server for minutes). */
export const jsonBomb = (n = 1_000_000) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`);

/** One word of n letters, no spaces (issue 25: 150 KB froze the server 22 s). */
export const longWord = (n = 150_000) => Buffer.from('a'.repeat(n));
