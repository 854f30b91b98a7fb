import { Worker } from 'node:worker_threads';
import { readFileInSlices } from '../core/file-slices.js';
import {
  BUNDLED,
  MEMORY_MARK,
  messagesOf,
  RETIRE_AT,
  toWire,
  type ChildReply,
  type ChildRequest,
  type FileAt,
  type ReplyBundle,
  type ReplyPart,
  type RequestPart,
} from './ingest-protocol.js';
import { AUTO_CHUNKING, chunkText } from './chunk.js';
import { embedChunks } from './embedder.js';
import { prepareFile, refusalOf, type Refusal } from './prepare.js';

/**
 * An ingestion process (started by ingest-pool.ts with `fork`; argv[2] is its memory limit in bytes):
 * prepares one file at a time as the server asks over IPC. A watchdog thread, which runs whatever this
 * thread is stuck in, kills the process past its memory limit (resident memory, so the buffers pdf.js or
 * an inflater allocate outside the V8 heap count too) and when the server is gone, so a server killed
 * mid-file leaves no ingestion running.
 */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
setInterval(() => {
  if (process.ppid !== workerData.parent) process.kill(process.pid, 'SIGKILL');
  if (process.memoryUsage.rss() > workerData.limit) {
    try { writeSync(2, workerData.mark + '\\n'); } catch {}
    process.kill(process.pid, 'SIGKILL');
  }
}, 20);
`;

const limit = Number(process.argv[2]);
new Worker(WATCHDOG, { eval: true, workerData: { parent: process.ppid, limit, mark: MEMORY_MARK } }).unref();

const send = (message: ReplyPart | ChildReply | ReplyBundle) => process.send?.(message);

/**
 * Resident memory after a file. Past RETIRE_AT of the limit the pool replaces the process, so a full
 * collection comes first: a big file's arrays (its bytes, classes, token ends, vectors) are freed only by
 * one. A file of 8 MB took a process of 130 MB to 260–310 MB, and to 175 MB once collected (with the
 * allocator's settings of ingest-pool.ts), where a new process costs 0.5–0.8 s of CPU and starts with its
 * caches empty.
 */
function residentAfterFile(): number {
  const rss = process.memoryUsage.rss();
  if (rss <= limit * RETIRE_AT || typeof globalThis.gc !== 'function') return rss;
  globalThis.gc();
  return process.memoryUsage.rss();
}

process.on('disconnect', () => process.exit(0));
/** The bytes of the file being sent (requestOf). */
let data: { id: number; parts: Uint8Array[] } = { id: 0, parts: [] };

/** The bytes of a file named by its place on disk; throws (the file is tried again later) when they are not there, or not all there. */
function readAt(at: FileAt): Buffer {
  const bytes = readFileInSlices(at.path);
  if (bytes.length !== at.bytes) throw new Error(`the file holds ${bytes.length} bytes where ${at.bytes} were stored`);
  return bytes;
}

/**
 * The parts of a file sent as one buffer. A file of one part (up to DATA_PART bytes: most) is that part as
 * it arrived, a view of the message Node read, not a copy: a copy of a fresh 512 KB cost 1.5 ms here, most of
 * it the first touch of its pages.
 */
const joined = (parts: Uint8Array[]): Buffer =>
  parts.length === 1 ? Buffer.from(parts[0].buffer, parts[0].byteOffset, parts[0].byteLength) : Buffer.concat(parts);

process.on('message', (m: RequestPart | ChildRequest) => {
  if (data.id !== m.id) data = { id: m.id, parts: [] };
  if ('data' in m) return void data.parts.push(m.data);
  const { id, filename, at, ...rest } = m;
  let bytes: Buffer;
  try {
    bytes = at ? readAt(at) : joined(data.parts);
  } catch (err) {
    // The system's code, not its message: that names the path, and the error may become the file's `last_error`.
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return void send({ id, ok: false, error: `the file could not be read: ${why}`, rss: residentAfterFile() });
  } finally {
    data = { id: 0, parts: [] };
  }
  prepareFile({ ...rest, filename, data: bytes })
    .then(
      (result) => {
        // A text file's text is the bytes the server sent (less a byte-order mark): named, not sent back.
        const parts = [...messagesOf(id, toWire(result, at ? undefined : bytes))];
        // A small reply goes with its end, as one message.
        if (parts.length < BUNDLED) return { parts };
        for (const part of parts) send(part);
        return { parts: [] };
      },
      (err: unknown) => ({ parts: [], refusal: refusalOf(err, filename) }),
    )
    // Nothing holds the file's bytes, text or chunks here but a small reply: the collection can free them.
    .then(({ parts, refusal }: { parts: ReplyPart[]; refusal?: Refusal }) => {
      const rss = residentAfterFile();
      const end: ChildReply = refusal ? { id, ok: false, refusal, rss } : { id, ok: true, rss };
      send(parts.length ? { id, bundle: [...parts, end] } : end);
    });
});
// The tokenizer's and the embedder's tables are made now, while nothing waits: every file is tokenized,
// and most are embedded here.
setImmediate(() => {
  const starts: number[] = [];
  embedChunks('warm', [...chunkText('warm', AUTO_CHUNKING, starts)], starts);
});
