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
 * Standard output as the log's destination, in the chosen format. `batched` (a served instance) writes
 * once per turn of the event loop: the lines of the requests answered in one turn are joined and written
 * together after them (setImmediate), so a busy instance makes one write for many lines where pino makes
 * one blocking write a line (bench/metrics.mjs), and a quiet instance still writes its line at once, with
 * no timer. What is pending is written, synchronously, when the process exits: on `process.exit` (the
 * shutdown of SIGTERM and SIGINT), on a crash (an uncaught exception ends in `exit`) and on a normal end.
 * A SIGKILL loses the lines of the current turn only.
 */
export function logDestination(format: LogFormat, opts: { batched: boolean }): pino.DestinationStream {
  const out = pino.destination({ dest: 1, sync: true });
  const shape = format === 'pretty' ? prettyLine(process.stdout.isTTY && !process.env.NO_COLOR) : undefined;
  if (!opts.batched) return shape ? { write: (line: string) => void out.write(shape(line)) } : out;
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending) return;
    const text = pending;
    pending = '';
    out.write(text);
  };
  process.on('exit', flush);
  return {
    write(line: string) {
      pending += shape ? shape(line) : line;
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
}
