import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { invalid } from '../core/errors.js';
import type { App, Ctx } from '../core/module.js';
import { exportSnapshot, importSnapshot } from './service.js';

const Binary = Type.Unsafe<Readable>({
  type: 'string',
  format: 'binary',
  description: 'A snapshot file (gzip’d JSON lines; docs/snapshots.md).',
});
const Restored = Type.Object({
  object: Type.Literal('snapshot.restored'),
  schema: Type.Array(Type.String(), { description: 'the migrations of the store the snapshot was taken of' }),
  created_at: Type.Integer(),
  clock_offset_ms: Type.Integer(),
  tables: Type.Integer(),
  rows: Type.Integer(),
  files: Type.Integer(),
  bytes: Type.Integer(),
});
const Upload = Type.Unsafe<Readable>({ description: 'A snapshot file (gzip’d JSON lines; docs/snapshots.md), as the body.' });
const TYPES = ['application/gzip', 'application/octet-stream'];

/** `GET /admin/v1/snapshot` (download the whole state) and `POST /admin/v1/snapshot` (replace it with one). */
export async function snapshotRoutes(app: App, ctx: Ctx): Promise<void> {
  app.get('/snapshot', { schema: { produces: ['application/gzip'], response: { 200: Binary } } }, async (_req, reply) => {
    // Taken whole into a temporary file first: the rows are read in one transaction, which a slow
    // download must not hold open.
    const dir = await mkdtemp(join(tmpdir(), 'standin-snapshot-'));
    const path = join(dir, 'out.jsonl.gz');
    try {
      await exportSnapshot(ctx, createWriteStream(path));
      const stream = createReadStream(path);
      await new Promise((resolve, reject) => stream.once('open', resolve).once('error', reject));
      const stamp = new Date(ctx.clock.now()).toISOString().replace(/[:.]/g, '-');
      return reply
        .header('content-type', 'application/gzip')
        .header('content-disposition', `attachment; filename="standin-${stamp}.jsonl.gz"`)
        .send(stream);
    } finally {
      // Open files outlive their name: the download goes on, and nothing is left behind.
      await rm(dir, { recursive: true, force: true });
    }
  });

  await app.register(async (scope) => {
    // The body is the file, streamed to a temporary file as it arrives (never held in memory).
    scope.addContentTypeParser(TYPES, (_req, payload, done) => done(null, payload));
    scope.post('/snapshot', { schema: { consumes: TYPES, body: Upload, response: { 200: Restored } } }, async (req) => {
      const body = req.body as unknown;
      // Another content type is refused by the parser (415) before this; here the body is missing.
      if (!body || typeof (body as Readable).pipe !== 'function')
        throw invalid(`Send the snapshot file as the body, with content-type ${TYPES.join(' or ')}.`, 'body', 'missing_required_parameter');
      const { header, totals } = await importSnapshot(ctx, body as Readable);
      return {
        object: 'snapshot.restored' as const,
        schema: header.schema,
        created_at: header.created_at,
        clock_offset_ms: header.clock_offset_ms,
        ...totals,
      };
    });
  });
}
