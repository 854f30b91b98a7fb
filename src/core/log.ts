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

/** A batch is written this long after its first line at the latest, or at once when it reaches BATCH_CHARS. */
const BATCH_MS = 20;
const BATCH_CHARS = 64 * 1024;
/** Past this much waiting on a reader that does not keep up, writing waits for it (memory stays bounded). */
const MAX_BEHIND = 16 * 1024 * 1024;

/**
 * Standard output as the log's destination, in the chosen format. `batched` (a served instance) writes in
 * batches: the lines of the next BATCH_MS go out in one write (or at once past BATCH_CHARS), where pino
 * makes one blocking write a line (bench/metrics.mjs). A batch is the lines appended to one string (V8
 * copies nothing until the write) that `writeSync` encodes in one call. In a loop, encoding each line into
 * a buffer as it came cost nearly three times as much (bench/log-batch.mjs); in a served instance, whose
 * lines are out of the cache by the write, the two cost alike, and this one needs no byte accounting and
 * no special case for a line longer than a batch. What a full pipe (a collector behind) refuses waits for
 * the next batch, and the event loop does not: pino's destination sleeps 100 ms then. Only past MAX_BEHIND
 * bytes behind does a write wait for the reader. What is pending is written, synchronously, when the
 * process exits: on `process.exit` (the shutdown of SIGTERM and SIGINT), on a crash (an uncaught exception
 * or unhandled rejection ends in `exit`) and on a normal end. A SIGKILL loses the last BATCH_MS of lines.
 */
export function logDestination(format: LogFormat, opts: { batched: boolean }): pino.DestinationStream {
  const shape = format === 'pretty' ? prettyLine(process.stdout.isTTY && !process.env.NO_COLOR) : undefined;
  if (!opts.batched) {
    const out = pino.destination({ dest: 1, sync: true });
    return shape ? { write: (line: string) => void out.write(shape(line)) } : out;
  }
  const out = fdWriter(1);
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  // A declared name: bench/metrics.mjs finds it in a CPU profile.
  function writeLogBatch(wait: boolean) {
    clearTimeout(timer);
    timer = undefined;
    const text = pending;
    pending = '';
    // Whatever the reader refused: tried again at the next batch (a timer keeps the retry coming).
    if (!out.write(text, wait)) schedule();
  }
  const schedule = () => {
    timer = setTimeout(() => writeLogBatch(false), BATCH_MS);
    // The exit handler writes what is pending: the timer keeps no process alive.
    timer.unref();
  };
  process.on('exit', () => writeLogBatch(true));
  return {
    write(text: string) {
      pending += shape ? shape(text) : text;
      if (pending.length >= BATCH_CHARS) writeLogBatch(false);
      else if (!timer) schedule();
    },
  };
}

/** Writes to a descriptor that may be non-blocking (a pipe Node opened as stdout is). */
function fdWriter(fd: number): { write(text: string, wait: boolean): boolean } {
  // Bytes a full pipe refused, written before anything newer.
  let behind: Buffer | undefined;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return {
    /** True when everything is written; false when a full pipe kept some back (it goes first next time). */
    write(text, wait) {
      let buf: Buffer;
      if (behind) {
        buf = text ? Buffer.concat([behind, Buffer.from(text)]) : behind;
        behind = undefined;
      } else {
        if (!text) return true;
        // The common case: the whole string in one call, encoded by writeSync itself.
        const written = tryWrite(() => writeSync(fd, text));
        if (written === Buffer.byteLength(text)) return true;
        buf = Buffer.from(text).subarray(written);
      }
      const waits = wait || buf.length > MAX_BEHIND;
      while (buf.length > 0) {
        const written = tryWrite(() => writeSync(fd, buf));
        buf = buf.subarray(written);
        if (written > 0 || buf.length === 0) continue;
        if (!waits) {
          behind = buf;
          return false;
        }
        Atomics.wait(pause, 0, 0, 1);
      }
      return true;
    },
  };
}

/** The bytes a write took; 0 when a full non-blocking pipe took none (EAGAIN). */
function tryWrite(write: () => number): number {
  try {
    return write();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    return 0;
  }
}
