/**
 * `--log-format pretty`: each JSON log line as one readable line for a terminal — local time, level,
 * message, then the rest as key=value (a request: method, route, status, latency, project, request id).
 * A line that is not a JSON object passes as it is.
 */
const LEVELS: Record<number, [name: string, color: number]> = {
  10: ['TRACE', 90],
  20: ['DEBUG', 36],
  30: ['INFO ', 32],
  40: ['WARN ', 33],
  50: ['ERROR', 31],
  60: ['FATAL', 35],
};
/** pino's own fields, shown in the prefix or not at all. */
const OMIT = new Set(['level', 'time', 'pid', 'hostname', 'msg']);
/** The request line's fields, shown first and bare, in this order. */
const REQUEST = ['method', 'route', 'status'] as const;

/** Makes the formatter; `color` adds ANSI colours to the level (a TTY without NO_COLOR). */
export function prettyLine(color: boolean): (line: string) => string {
  const paint = (code: number, text: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
  return (line) => {
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return line;
    }
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return line;
    const [name, code] = LEVELS[Number(o.level)] ?? [String(o.level).padEnd(5), 0];
    const parts = [clock(Number(o.time)), paint(code, name), String(o.msg ?? '')];
    const rest = { ...o };
    if (o.msg === 'request') {
      parts.push(...REQUEST.map((k) => String(o[k])), `${String(o.ms)}ms`);
      for (const k of [...REQUEST, 'ms']) delete rest[k];
    }
    for (const [k, v] of Object.entries(rest)) if (!OMIT.has(k) && v !== undefined) parts.push(`${k}=${value(k, v)}`);
    return `${parts.join(' ')}\n`;
  };
}

/** Local wall time of the line, to the millisecond. */
function clock(ms: number): string {
  if (!Number.isFinite(ms)) return '--:--:--.---';
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** A value on one line: bare when it has no space or quote, else JSON; an error as its type and message. */
function value(key: string, v: unknown): string {
  if (key === 'err' && v && typeof v === 'object') {
    const e = v as { type?: string; message?: string };
    return JSON.stringify(`${e.type ?? 'Error'}: ${e.message ?? ''}`);
  }
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v);
}
