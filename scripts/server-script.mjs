// The server's script as a start compiles it (src/core/code-cache.ts), made of esbuild's output
// (dist/standin.cjs, scripts/bundle-options.mjs `serverScript`) in two steps:
// - Wrapped in Node's CommonJS wrapper, so the file's text is compiled as read: wrapped at each start, the
//   4.8 MB of text were copied into a new string first.
// - In ASCII, so a start reads it as Latin-1, which Node hands to V8 as a one-byte string kept outside the
//   heap, with no decoding. One non-ASCII character made the whole script a two-byte string decoded from
//   UTF-8: 9.6 MB in V8's heap, twice (the file's text and the wrapped source).
// Together 6,100 fewer page faults and 40 ms less CPU a start (docs/operations.md, stop 47).
// esbuild's ASCII output (its default) escapes strings, templates and names; it leaves comments and
// regular expressions as written. Here each character of those is made ASCII: in a comment a `?` (one
// character for one, so every column of the source map stays right), in a regular expression (or a
// string) its `\uXXXX` escape (the same pattern, with or without the `u` flag; a later column of that
// line moves in the source map). Any other stops the build: no escape keeps its meaning (a `String.raw`
// template, say), and a start must not read it as Latin-1.
import { parse } from 'acorn';
import { readFileSync, writeFileSync } from 'node:fs';

const NON_ASCII = /[\u0080-\uffff]/g;
/** The tokens in which a `\uXXXX` escape means the character it replaces (esbuild leaves none in strings). */
const ESCAPED = new Set(['regexp', 'string']);

/** `text` with each non-ASCII character of its comments, regular expressions and strings made ASCII; throws on any other. */
export function asciiText(text, name = 'script') {
  const at = [...text.matchAll(NON_ASCII)].map((m) => m.index);
  if (!at.length) return text;
  const spans = [];
  const onComment = (_block, _text, start, end) => spans.push({ start, end, kind: 'comment' });
  const onToken = (t) => ESCAPED.has(t.type.label) && spans.push({ start: t.start, end: t.end, kind: t.type.label });
  parse(text, { ecmaVersion: 'latest', sourceType: 'script', allowReturnOutsideFunction: true, allowHashBang: true, onComment, onToken });
  spans.sort((a, b) => a.start - b.start);
  let out = '';
  let from = 0;
  let s = 0;
  for (const i of at) {
    while (s < spans.length && spans[s].end <= i) s++;
    const span = spans[s];
    if (!span || span.start > i) {
      const line = text.slice(0, i).split('\n').length;
      throw new Error(
        `${name}: a non-ASCII character outside a comment, regular expression or string, line ${line}: ${text.slice(Math.max(0, i - 40), i + 40)}`,
      );
    }
    const unit = text.charCodeAt(i);
    out += text.slice(from, i) + (span.kind === 'comment' ? '?' : `\\u${unit.toString(16).padStart(4, '0')}`);
    from = i + 1;
  }
  return out + text.slice(from);
}

/**
 * Node's CommonJS wrapper, as Node writes it: opened on the first line, so every later line and column of
 * the script stay its source map's.
 */
const WRAPPER = ['(function (exports, require, module, __filename, __dirname) {', '\n})'];

/** Rewrites esbuild's script `file` as a start compiles it: wrapped, in ASCII (asciiText). */
export function finishServerScript(file) {
  writeFileSync(file, WRAPPER[0] + asciiText(readFileSync(file, 'utf8'), file) + WRAPPER[1]);
}
