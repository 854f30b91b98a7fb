import { writeSync } from 'node:fs';
import pino from 'pino';
import { prettyLine } from './log-pretty.js';

/** What a log line looks like: `json`, one JSON object a line (the default, for collectors); `pretty`, for a terminal. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The `--log-format` setting, checked: anything else is refused at start, not ignored. */
export function logFormatOf(value: string): LogFormat {
  if (!(LOG_FORMATS as readonly string[]).includes(value)) throw new Error(`--log-format must be 'json' or 'pretty', got '${value}'`);
  return value as LogFormat;
}

/** A batch is written this long after its first line at the latest, or at once when it reaches BATCH_BYTES. */
const BATCH_MS = 20;
const BATCH_BYTES = 64 * 1024;
/** Past this much waiting on a reader that does not keep up, writing waits for it (memory stays bounded). */
const MAX_BEHIND = 16 * 1024 * 1024;

/**
 * Standard output as the log's destination, in the chosen format. `batched` (a served instance) writes in
 * batches: the lines of the next BATCH_MS go out in one write (or at once past BATCH_BYTES), where pino
 * makes one blocking write a line (bench/metrics.mjs). Each line is encoded into the batch's buffer as it
 * comes, while it is small and flat: joining a batch's strings and encoding the whole cost half a
 * microsecond a line (pino's destination encodes a string three times and copies it once more). What a
 * full pipe (a collector behind) refuses waits for the next batch, and the event loop does not: pino's
 * destination sleeps 100 ms then. Only past MAX_BEHIND bytes behind does a write wait for the reader.
 * What is pending is written, synchronously, when the process exits: on `process.exit` (the shutdown of
 * SIGTERM and SIGINT), on a crash (an uncaught exception or unhandled rejection ends in `exit`) and on a
 * normal end. A SIGKILL loses the last BATCH_MS of lines.
 */
export function logDestination(format: LogFormat, opts: { batched: boolean }): pino.DestinationStream {
  const shape = format === 'pretty' ? prettyLine(process.stdout.isTTY && !process.env.NO_COLOR) : undefined;
  if (!opts.batched) {
    const out = pino.destination({ dest: 1, sync: true });
    return shape ? { write: (line: string) => void out.write(shape(line)) } : out;
  }
  const out = fdWriter(1);
  const batch = Buffer.allocUnsafe(BATCH_BYTES);
  let used = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = (wait: boolean, also?: Buffer) => {
    clearTimeout(timer);
    timer = undefined;
    const bytes = batch.subarray(0, used);
    used = 0;
    // Whatever the reader refused: tried again at the next batch (a timer keeps the retry coming).
    let refused = !out.write(bytes, wait);
    if (also) refused = !out.write(also, wait) || refused;
    if (refused) schedule();
  };
  const schedule = () => {
    timer = setTimeout(() => flush(false), BATCH_MS);
    // The exit handler writes what is pending: the timer keeps no process alive.
    timer.unref();
  };
  process.on('exit', () => flush(true));
  return {
    write(text: string) {
      const line = shape ? shape(text) : text;
      // A UTF-16 unit is at most three bytes of UTF-8: a line that may not fit goes after what is pending,
      // and one that may be larger than a batch (a long error) on its own.
      if (used + line.length * 3 > BATCH_BYTES) {
        if (line.length * 3 > BATCH_BYTES) return flush(false, Buffer.from(line));
        flush(false);
      }
      used += batch.write(line, used);
      if (!timer) schedule();
    },
  };
}

/** Writes to a descriptor that may be non-blocking (a pipe Node opened as stdout is). */
function fdWriter(fd: number): { write(bytes: Buffer, wait: boolean): boolean } {
  // Bytes a full pipe refused, written before anything newer.
  let behind: Buffer | undefined;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return {
    /**
     * True when everything is written; false when a full pipe kept some back (copied: it goes first next
     * time). `bytes` is the caller's to reuse once this returns.
     */
    write(bytes, wait) {
      let buf: Buffer | undefined = bytes.length ? bytes : undefined;
      if (behind) buf = buf ? Buffer.concat([behind, buf]) : behind;
      behind = undefined;
      if (!buf) return true;
      const waits = wait || buf.length > MAX_BEHIND;
      while (buf.length > 0) {
        try {
          buf = buf.subarray(writeSync(fd, buf));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
          if (!waits) {
            behind = buf.buffer === bytes.buffer ? Buffer.from(buf) : buf;
            return false;
          }
          Atomics.wait(pause, 0, 0, 1);
        }
      }
      return true;
    },
  };
}
