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

/**
 * Standard output as the log's destination, in the chosen format. `batched` (a served instance) writes in
 * batches: the lines of the next BATCH_MS go out in one write (or at once past BATCH_CHARS), where pino
 * makes one blocking write a line (bench/metrics.mjs). What is pending is written, synchronously, when the
 * process exits: on `process.exit` (the shutdown of SIGTERM and SIGINT), on a crash (an uncaught exception
 * or unhandled rejection ends in `exit`) and on a normal end. A SIGKILL loses the last BATCH_MS of lines.
 */
/** A batch is written this long after its first line at the latest, or at once when it reaches BATCH_CHARS. */
const BATCH_MS = 20;
const BATCH_CHARS = 64 * 1024;

export function logDestination(format: LogFormat, opts: { batched: boolean }): pino.DestinationStream {
  const out = pino.destination({ dest: 1, sync: true });
  const shape = format === 'pretty' ? prettyLine(process.stdout.isTTY && !process.env.NO_COLOR) : undefined;
  if (!opts.batched) return shape ? { write: (line: string) => void out.write(shape(line)) } : out;
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    const text = pending;
    pending = '';
    out.write(text);
  };
  process.on('exit', flush);
  return {
    write(line: string) {
      pending += shape ? shape(line) : line;
      if (pending.length >= BATCH_CHARS) flush();
      else if (!timer) {
        timer = setTimeout(flush, BATCH_MS);
        // The exit handler writes what is pending: the timer keeps no process alive.
        timer.unref();
      }
    },
  };
}
