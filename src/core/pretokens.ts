import { readFileSync } from 'node:fs';

/**
 * o200k's pre-tokenizer without its regex: the pieces `O200K_TOKEN_SPLIT_REGEX` (gpt-tokenizer) cuts a
 * text into, found by a scan over a table of character classes. The regex (seven alternatives over
 * Unicode properties) costs 100–250 ms per MB; the scan a tenth of that. Same pieces, held against the
 * regex by pretokens.test.ts on text of every kind.
 *
 * The regex, alternative by alternative (the first that matches at a position wins, each greedy and
 * backtracking within itself), with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], L = [\p{Ll}\p{Lm}\p{Lo}\p{M}],
 * P = [^\r\n\p{L}\p{N}] and S = an optional `'s`, `'d`, `'m`, `'t`, `'ll`, `'ve`, `'re` (any case):
 *   1. P? U* L+ S    2. P? U+ L* S    3. \p{N}{1,3}    4. ` `? [^\s\p{L}\p{N}]+ [\r\n/]*
 *   5. \s* [\r\n]+    6. \s+ (?!\S)    7. \s+
 */

// Classes of a character, as bits.
const UPPER = 1; // in U
const LOWER = 2; // in L
export const LETTER = 4; // \p{L}
export const NUMBER = 8; // \p{N}
const SPACE = 16; // \s
const NEWLINE = 32; // \r or \n
/** The second half of a surrogate pair (the class is on the first half). */
export const SECOND = 64;

const TESTS: [RegExp, number][] = [
  [/^[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]$/u, UPPER],
  [/^[\p{Ll}\p{Lm}\p{Lo}\p{M}]$/u, LOWER],
  [/^\p{L}$/u, LETTER],
  [/^\p{N}$/u, NUMBER],
  [/^\s$/u, SPACE],
  [/^[\r\n]$/u, NEWLINE],
];

function classify(ch: string): number {
  let bits = 0;
  for (const [re, bit] of TESTS) if (re.test(ch)) bits |= bit;
  return bits;
}

/** The Basic Multilingual Plane's classes, each character tested against each class: 50–60 ms. */
export function classTable(): Uint8Array {
  const t = new Uint8Array(0x10000);
  for (let c = 0; c < 0x10000; c++) if (c < 0xd800 || c > 0xdfff) t[c] = classify(String.fromCharCode(c));
  return t;
}

/** Where the build writes classTable() (dist/classes.bin, beside the bundle); from the sources there is none. */
const FILE = new URL('./classes.bin', import.meta.url);

// The BMP's classes on first use: the build's file, else (or if it is not one) tested now, 50–60 ms of the
// thread that first counts or embeds a text; the rest (emoji, rare scripts) as met.
let bmp: Uint8Array | undefined;
const astral = new Map<number, number>();

function table(): Uint8Array {
  if (bmp) return bmp;
  try {
    const file = readFileSync(FILE);
    if (file.length === 0x10000) return (bmp = new Uint8Array(file));
  } catch {
    // No file: running from the sources.
  }
  return (bmp = classTable());
}

/** Loads the table ahead of its first use. */
export const warmClasses = () => void table();

/** The Basic Multilingual Plane's classes, as classesOf reads them (a surrogate's entry is 0). */
export const bmpClasses = (): Uint8Array => table();

/** The class of a code point past the BMP (tested once, then remembered). */
export function astralClass(cp: number): number {
  let bits = astral.get(cp);
  if (bits === undefined) astral.set(cp, (bits = classify(String.fromCodePoint(cp))));
  return bits;
}

/** The class of each UTF-16 unit of `text`: a pair's class on its first unit, SECOND on its second. */
export function classesOf(text: string): Uint8Array {
  const t = table();
  const n = text.length;
  const k = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if ((c & 0xfc00) === 0xd800 && i + 1 < n && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      k[i] = astralClass(text.codePointAt(i)!);
      k[++i] = SECOND;
    } else k[i] = t[c]; // a lone surrogate: no class, as the regex has it
  }
  return k;
}

/**
 * Where the pre-token starting at `p` ends, given `k = classesOf(text)`. Every position starts one (the
 * seventh alternative or the fourth takes any character), so repeated calls cover the text.
 */
export function pretokenEnd(text: string, k: Uint8Array, p: number): number {
  const n = k.length;
  const c = k[p];
  // 1 and 2: a letter run, with one leading character that is no letter, number or line break.
  const lead = (c & (LETTER | NUMBER | NEWLINE)) === 0 ? next(k, p) : -1;
  for (let t = 0; t < 2; t++) {
    const q = t === 0 ? lead : p;
    if (q < 0 || q >= n) continue;
    let e = q;
    let afterLower = -1;
    while (e < n && k[e] & UPPER) {
      const f = next(k, e);
      if (k[e] & LOWER) afterLower = f;
      e = f;
    }
    if (e < n && k[e] & LOWER) {
      while (e < n && k[e] & LOWER) e = next(k, e);
      return suffix(text, e);
    }
    if (afterLower >= 0) return suffix(text, afterLower);
  }
  for (let t = 0; t < 2; t++) {
    const q = t === 0 ? lead : p;
    if (q < 0 || q >= n || !(k[q] & UPPER)) continue;
    let e = q;
    while (e < n && k[e] & UPPER) e = next(k, e);
    while (e < n && k[e] & LOWER) e = next(k, e);
    return suffix(text, e);
  }
  // 3: up to three numbers.
  if (c & NUMBER) {
    let e = p;
    for (let i = 0; i < 3 && e < n && k[e] & NUMBER; i++) e = next(k, e);
    return e;
  }
  // 4: a run of what is no space, letter or number (after an optional space), then line breaks and slashes.
  const q = text.charCodeAt(p) === 0x20 && p + 1 < n && (k[p + 1] & (SPACE | LETTER | NUMBER)) === 0 ? p + 1 : p;
  if ((k[q] & (SPACE | LETTER | NUMBER)) === 0) {
    let e = q;
    while (e < n && (k[e] & (SPACE | LETTER | NUMBER)) === 0) e = next(k, e);
    for (let ch = text.charCodeAt(e); e < n && (ch === 10 || ch === 13 || ch === 0x2f); ch = text.charCodeAt(++e));
    return e;
  }
  // 5–7: whitespace (all of it in the BMP, one unit a character).
  let e = p;
  let afterNewline = -1;
  while (e < n && k[e] & SPACE) {
    if (k[e] & NEWLINE) afterNewline = e + 1;
    e++;
  }
  if (afterNewline >= 0) return afterNewline;
  if (e === n || e - p < 2) return e;
  return e - 1;
}

/** The position after the character at `i` (two units for a surrogate pair). */
const next = (k: Uint8Array, i: number) => (i + 1 < k.length && k[i + 1] === SECOND ? i + 2 : i + 1);

/** After a letter run: an English contraction's ending, if one follows. */
function suffix(text: string, e: number): number {
  if (text.charCodeAt(e) !== 0x27) return e;
  const a = text.charCodeAt(e + 1) | 0x20;
  if (a === 0x73 || a === 0x64 || a === 0x6d || a === 0x74) return e + 2; // s d m t
  const b = text.charCodeAt(e + 2) | 0x20;
  if ((a === 0x6c && b === 0x6c) || (a === 0x76 && b === 0x65) || (a === 0x72 && b === 0x65)) return e + 3; // ll ve re
  return e;
}
