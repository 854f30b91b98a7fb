/**
 * The lines of a JSONL file as it streams in: one line in memory at a time, each with where it ends (the
 * byte after its newline), so a batch can resume at a line without reading what came before it again.
 * Blank lines are skipped (a trailing newline, CRLF endings); a line longer than `maxBytes` is not held:
 * it comes out with `tooLong` and no text.
 */
export interface InputLine {
  /** The line without its line ending; empty when `tooLong`. */
  text: string;
  /** 1-based line number in the file (blank lines counted). */
  number: number;
  /** Byte offset just past this line's newline. */
  end: number;
  tooLong?: boolean;
}

const NL = 0x0a;

/**
 * Reads `source` from byte `start` of the file (the bytes before it are skipped unread as lines: the source
 * streams from the file's start), numbering lines from `firstNumber`.
 */
export async function* readLines(
  source: AsyncIterable<Buffer>,
  opts: { maxBytes: number; start?: number; firstNumber?: number },
): AsyncGenerator<InputLine> {
  let skip = opts.start ?? 0;
  let offset = skip;
  let number = opts.firstNumber ?? 1;
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  const emit = (end: number): InputLine | undefined => {
    const line: InputLine | undefined = tooLong
      ? { text: '', number, end, tooLong: true }
      : lineOf(parts.length === 1 ? parts[0] : Buffer.concat(parts, size), number, end);
    parts = [];
    size = 0;
    tooLong = false;
    number++;
    return line;
  };
  for await (const raw of source) {
    let chunk = raw;
    if (skip > 0) {
      if (chunk.length <= skip) {
        skip -= chunk.length;
        continue;
      }
      chunk = chunk.subarray(skip);
      skip = 0;
    }
    let pos = 0;
    while (pos < chunk.length) {
      const nl = chunk.indexOf(NL, pos);
      const stop = nl < 0 ? chunk.length : nl;
      if (!tooLong) {
        if (size + (stop - pos) > opts.maxBytes) {
          tooLong = true;
          parts = [];
          size = 0;
        } else if (stop > pos) {
          parts.push(chunk.subarray(pos, stop));
          size += stop - pos;
        }
      }
      offset += stop - pos;
      if (nl < 0) break;
      offset += 1;
      pos = nl + 1;
      const line = emit(offset);
      if (line) yield line;
    }
  }
  if (size > 0 || tooLong) {
    const line = emit(offset);
    if (line) yield line;
  }
}

/** A line's text without `\r`, or undefined when it is blank. */
function lineOf(bytes: Buffer, number: number, end: number): InputLine | undefined {
  let text = bytes.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (text.trim() === '') return undefined;
  return { text, number, end };
}
