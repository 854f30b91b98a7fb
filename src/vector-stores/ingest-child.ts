import { Worker } from 'node:worker_threads';
import {
  MEMORY_MARK,
  messagesOf,
  toWire,
  type ChildReply,
  type ChildRequest,
  type ReplyPart,
  type RequestPart,
} from './ingest-protocol.js';
import { AUTO_CHUNKING, chunkText } from './chunk.js';
import { prepareFile, refusalOf } from './prepare.js';

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

const send = (message: ReplyPart | ChildReply) => process.send?.(message);

process.on('disconnect', () => process.exit(0));
/** The bytes of the file being sent (requestOf). */
let data: { id: number; parts: Uint8Array[] } = { id: 0, parts: [] };

process.on('message', (m: RequestPart | ChildRequest) => {
  if (data.id !== m.id) data = { id: m.id, parts: [] };
  if ('data' in m) return void data.parts.push(m.data);
  const req = { ...m, data: Buffer.concat(data.parts) };
  data = { id: 0, parts: [] };
  prepareFile(req).then(
    ({ prepared, starts }) => {
      for (const m of messagesOf(req.id, toWire(prepared, starts))) send(m);
      send({ id: req.id, ok: true, rss: process.memoryUsage.rss() });
    },
    (err: unknown) => send({ id: req.id, ok: false, refusal: refusalOf(err, req.filename), rss: process.memoryUsage.rss() }),
  );
});
// The tokenizer's tables load now, while nothing waits: every file is tokenized.
setImmediate(() => [...chunkText('warm', AUTO_CHUNKING)]);
