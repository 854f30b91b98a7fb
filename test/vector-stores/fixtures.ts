import type { Ctx } from '../../src/core/module.js';
import { builtinEmbedder, embedBuiltin, toBlob } from '../../src/vector-stores/embedder.js';
import * as store from '../../src/vector-stores/store.js';
import { zipEntries, zipEntry } from '../zip.js';

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

/** How `putChunks` names and marks what it puts. */
export interface PutChunks {
  files: number;
  perFile: number;
  /** Seeds the words; the same seed puts the same text. */
  seed: number;
  /** Words of each chunk, before its marker. */
  words: number;
  fileId: (file: number) => string;
  marker: (file: number, seq: number) => string;
  attributes?: (file: number) => string | null;
}

/**
 * Puts `files × perFile` chunks of generated prose (a few words repeated, and a marker each) straight into
 * a store, embedded by the built-in embedder, with no ingestion, logged as one change.
 */
export async function putChunks(ctx: Ctx, storeId: string, o: PutChunks): Promise<void> {
  const vocab = 'ferry harbour copper mine railway signal ledger bread oven valley river bridge tower lamp clock'.split(' ');
  let x = o.seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  const fileIds: string[] = [];
  await ctx.store.db.transaction().execute(async (tx) => {
    for (let f = 0; f < o.files; f++) {
      const fileId = o.fileId(f);
      fileIds.push(fileId);
      await store.upsertStoreFiles(tx, [
        {
          vector_store_id: storeId,
          file_id: fileId,
          project_id: 'proj_demo',
          filename: `${fileId}.txt`,
          status: 'completed',
          usage_bytes: 1,
          created_at: 0,
          last_error: null,
          chunking: '{}',
          attributes: o.attributes?.(f) ?? null,
          batch_id: null,
          ingest_id: 'ingest_fill',
        },
      ]);
      const rows: store.ChunkRow[] = [];
      for (let seq = 0; seq < o.perFile; seq++) {
        const text = Array.from({ length: o.words }, () => vocab[next() % vocab.length]).join(' ') + ` ${o.marker(f, seq)}`;
        rows.push({
          vector_store_id: storeId,
          file_id: fileId,
          seq,
          text,
          tokens: o.words + 1,
          embedding: toBlob(embedBuiltin(text)),
          embedder: builtinEmbedder.id,
        });
      }
      await store.insertChunks(tx, rows);
    }
    await store.bumpVersion(tx, storeId, fileIds);
  });
}
