import { child } from '../lint/findings.js';

export interface ParsedJson {
  value?: unknown;
  /** Syntax error with line and column, when the text is not JSON. */
  error?: { message: string; line: number; column: number };
  /** Keys that appear twice in one object: JSON.parse silently keeps the last one. */
  duplicates: { path: string; key: string; line: number }[];
}

/** Parses JSON text, reporting syntax errors by line/column and duplicate keys by JSON path. */
export function parseJsonStrict(text: string): ParsedJson {
  const duplicates: ParsedJson['duplicates'] = [];
  let i = 0;
  const pos = (at: number) => {
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    return { line, column: at - before.lastIndexOf('\n') };
  };
  const fail = (message: string): never => {
    throw new JsonSyntaxError(message, i);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      else if (text.charCodeAt(i) < 0x20) fail('control character in a string');
      i++;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
    try {
      return JSON.parse(text.slice(start, i));
    } catch {
      return fail('bad escape in a string');
    }
  };
  const value = (path: string, depth: number): unknown => {
    if (depth > 200) fail('nesting deeper than 200 levels');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') return (i++, obj);
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a property name in double quotes');
        const keyAt = i;
        const key = str();
        ws();
        if (text[i] !== ':') fail(`expected ':' after the property name "${key}"`);
        i++;
        if (Object.prototype.hasOwnProperty.call(obj, key)) duplicates.push({ path: child(path, key), key, line: pos(keyAt).line });
        Object.defineProperty(obj, key, {
          value: value(child(path, key), depth + 1),
          enumerable: true,
          configurable: true,
          writable: true,
        });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') return (i++, obj);
        fail("expected ',' or '}' after a property value");
      }
    }
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === ']') return (i++, arr);
      for (;;) {
        arr.push(value(child(path, arr.length), depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') return (i++, arr);
        fail("expected ',' or ']' after an array item");
      }
    }
    if (c === '"') return str();
    const m = /^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail(i >= text.length ? 'unexpected end of the file' : `unexpected character '${c}'`);
    i += m![0].length;
    return JSON.parse(m![0]);
  };
  try {
    const v = value('$', 0);
    ws();
    if (i < text.length) fail('unexpected text after the JSON value');
    return { value: v, duplicates };
  } catch (err) {
    const at = err instanceof JsonSyntaxError ? err.at : i;
    return { error: { message: (err as Error).message, ...pos(at) }, duplicates };
  }
}

/** A syntax error and the offset where it was found. */
class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}
