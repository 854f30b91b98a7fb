import { crc32, deflateRawSync } from 'node:zlib';

/** Small documents made in the test, so no binary fixture needs to be trusted: a one-page PDF and a DOCX. */

/** A one-page PDF (Helvetica) showing `lines`, with a correct cross-reference table. */
export function makePdf(lines: string[]): Buffer {
  const esc = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const content = `BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((l) => `(${esc(l)}) Tj T*`).join(' ')} ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** One entry of a zip archive: its name, deflated bytes, inflated size and CRC-32. */
export interface ZipEntry {
  name: string;
  packed: Buffer;
  size: number;
  crc: number;
}

/** A zip archive of deflated entries, as DOCX packages are. */
export function zipEntries(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const { name, packed, size, crc } of entries) {
    const n = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(n.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(packed.length, 20);
    entry.writeUInt32LE(size, 24);
    entry.writeUInt16LE(n.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, n, packed);
    central.push(entry, n);
    offset += 30 + n.length + packed.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A zip entry of a text, deflated. */
export function zipEntry(name: string, text: string): ZipEntry {
  const data = Buffer.from(text);
  return { name, packed: deflateRawSync(data), size: data.length, crc: crc32(data) };
}

/** The package parts every DOCX has besides its document. */
export const DOCX_PARTS: Record<string, string> = {
  '[Content_Types].xml':
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  '_rels/.rels':
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
};

/** The opening and closing of a DOCX's `word/document.xml` around its paragraphs. */
export const DOCUMENT_XML = [
  '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>',
  '</w:body></w:document>',
];

const escXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A minimal DOCX with one paragraph per entry of `paragraphs`. */
export function makeDocx(paragraphs: string[]): Buffer {
  const body = paragraphs.map((p) => `<w:p><w:r><w:t>${escXml(p)}</w:t></w:r></w:p>`).join('');
  return zipEntries([
    ...Object.entries(DOCX_PARTS).map(([name, text]) => zipEntry(name, text)),
    zipEntry('word/document.xml', `${DOCUMENT_XML[0]}${body}${DOCUMENT_XML[1]}`),
  ]);
}

/** Filler text on many topics, none of them the facts a test looks for. */
export function filler(paragraphs: number, seed = 1): string {
  const topics = [
    'river barges',
    'alpine meadows',
    'bread ovens',
    'railway signals',
    'copper mines',
    'lighthouse keepers',
    'orchard pruning',
    'harbour tides',
    'paper mills',
    'weaving looms',
  ];
  const verbs = ['describes', 'records', 'explains', 'surveys', 'compares'];
  const out: string[] = [];
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  for (let i = 0; i < paragraphs; i++) {
    const t = topics[next() % topics.length];
    const u = topics[next() % topics.length];
    out.push(
      `Section ${i + 1} ${verbs[next() % verbs.length]} ${t} and ${u}. The ledger of ${t} lists ${next() % 900} entries, while notes on ${u} run to ${next() % 90} pages of careful observation.`,
    );
  }
  return out.join('\n\n');
}
