import { LETTER, NUMBER, SECOND } from '../core/pretokens.js';

/**
 * Words for lexical ranking (index-core.ts) and the built-in embedder: runs of letters and digits, lowercased
 * (Unicode-aware), minus a short list of English function words that carry no meaning for retrieval.
 */
const WORD = /[\p{L}\p{N}]+/gu;
/** The longest word kept (in UTF-16 units): a longer run is an identifier, a hash or base64, not a word. */
export const LONGEST = 48;

const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to was we were what when ' +
    'where which who whom why will with would you your'
  ).split(' '),
);

/** Whether `w` (lowercased) is one of the function words `words` leaves out. */
export const isStopword = (w: string): boolean => STOPWORDS.has(w);
/** The longest function word's length: a longer run is never one. */
export const LONGEST_STOPWORD = Math.max(...[...STOPWORDS].map((w) => w.length));

/** The words of a text that count for retrieval, in order. */
export function words(text: string): string[] {
  // match() with the global flag gives the runs themselves, without a match object each.
  const runs = text.toLowerCase().match(WORD);
  if (!runs) return [];
  const out: string[] = [];
  for (const w of runs) if (w.length <= LONGEST && !STOPWORDS.has(w)) out.push(w);
  return out;
}

/**
 * Whether the run `units[from, to)` (the UTF-16 units of a lowercased run of letters and digits, as
 * `runEnd` finds them) is one of `words`: a run of ASCII lowercase letters and digits is one of its runs as
 * it is, a word unless too long or a function word (short ones alone are made a string to ask); others go
 * through `words` itself.
 */
export function isWordRun(units: Uint16Array, from: number, to: number): boolean {
  const length = to - from;
  if (length > LONGEST) return false;
  let ascii = true;
  for (let i = from; i < to && ascii; i++) ascii = (units[i] >= 0x61 && units[i] <= 0x7a) || (units[i] >= 0x30 && units[i] <= 0x39);
  if (ascii) return length > LONGEST_STOPWORD || !isStopword(String.fromCharCode(...units.subarray(from, to)));
  const w = String.fromCharCode(...units.subarray(from, to));
  const kept = words(w);
  return kept.length === 1 && kept[0] === w;
}

/** The end of the run of letters and digits starting at `i` (classes `k`), bounded by `to`. */
export function runEnd(k: Uint8Array, i: number, to: number): number {
  let e = i;
  while (e < to && k[e] & (LETTER | NUMBER)) e += e + 1 < to && k[e + 1] === SECOND ? 2 : 1;
  return e;
}

// Lowercasing that is not one unit for one unit, or depends on what follows (a final sigma): a text
// holding one is embedded chunk by chunk, and its words found by `words`.
const CONTEXTUAL_CASE = /[\u0130\u03a3]/;

/**
 * Per UTF-16 unit: its lowercase, where that is one unit whatever surrounds it; 0 for the units where it
 * may not be (İ, whose lowercase is two units; Σ, whose depends on what follows; the halves of a surrogate
 * pair, whose code point may have a case of its own).
 */
let lowerUnits: Uint16Array | undefined;
export function lowerTable(): Uint16Array {
  if (lowerUnits) return lowerUnits;
  const table = new Uint16Array(1 << 16);
  for (let c = 0; c < table.length; c++) {
    const lower = String.fromCharCode(c).toLowerCase();
    const plain = lower.length === 1 && c !== 0x03a3 && (c & 0xf800) !== 0xd800;
    table[c] = plain ? lower.charCodeAt(0) : 0;
  }
  return (lowerUnits = table);
}
/**
 * The text lowercased unit by unit from lowerTable, each unit the table leaves out (İ, Σ, a surrogate; U+0000,
 * whose lowercase is itself, is one too) kept as it is, and where those are, in order.
 */
export function tableLowered(text: string): { units: Uint16Array; odd: number[] } {
  const table = lowerTable();
  const units = new Uint16Array(text.length);
  const odd: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const l = table[c];
    units[i] = l || c;
    if (l === 0) odd.push(i);
  }
  return { units, odd };
}

/**
 * The text lowercased, as `toLowerCase` makes it, where each character's lowercase is one unit and none
 * depends on its neighbours; otherwise undefined. Made unit by unit from a table: V8 lowercases a text
 * holding any character past U+00FF (nearly every file of prose) through ICU: 8–13 ms per MB on stop 62's
 * machine, where the table's pass costs 1–2. A text with a unit the table leaves out is lowercased by
 * `toLowerCase` and checked as before.
 */
export function lowerCased(text: string): Uint16Array | undefined {
  const { units, odd } = tableLowered(text);
  if (!odd.length) return units;
  const lower = text.toLowerCase();
  return lower.length === text.length && !CONTEXTUAL_CASE.test(text) ? unitsOf(lower) : undefined;
}

/** The UTF-16 units of a string. */
export function unitsOf(s: string): Uint16Array {
  const units = new Uint16Array(s.length);
  for (let i = 0; i < s.length; i++) units[i] = s.charCodeAt(i);
  return units;
}
