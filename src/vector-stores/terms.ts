import { pieceHash } from '../core/piece-cache.js';
import { bmpClasses, classesOf, LETTER, NUMBER } from '../core/pretokens.js';
import { isWordRun, LONGEST, lowerCased, lowerTable, runEnd, unitsOf, words } from './lexical.js';
import { grown } from './word-features.js';

/**
 * The words of a store's index (index-core.ts) and their term ids, numbered in the order first met, found
 * by a chunk's UTF-16 units rather than as strings: `termsOf` reads a chunk's words (lexical.ts `words`,
 * the same words in the same order) with the character classes and a table of lowercase units, and looks
 * each up in one open-addressing table over flat arrays. The regex, the lowercased copy, a string a word
 * and a Map look-up a word were most of a reader's CPU to add a new file's chunks (and of a store's first
 * load): 106–120 ms a MB of text (auto chunking), more than the ingestion itself.
 * Runs met that are no word (function words) are kept too, with no term, so each is judged once.
 */
export class Terms {
  /** Per slot: its entry + 1 (0: empty) and its key's hash. */
  private slots = new Int32Array(2 * 1024);
  /** Per entry: its key's start in `chars`, its length, its term (-1: no word). */
  private entries = new Int32Array(3 * 512);
  private count = 0;
  private chars = new Uint16Array(4096);
  private charsUsed = 0;
  /** Per term: its entry. */
  private termEntries = new Int32Array(256);
  /** Terms. */
  size = 0;
  /** The terms of the text last given to `termsOf`, in order (its first `termsOf(…)` entries). */
  ids = new Int32Array(1024);
  /** The run being read by termsOfPlain, lowercased (its first LONGEST + 1 units). */
  private readonly run = new Uint16Array(LONGEST + 1);

  /** The terms of `text`'s words, in order, into `ids` (a word not met before becomes a term); how many. */
  termsOf(text: string): number {
    const n = this.termsOfPlain(text);
    return n >= 0 ? n : this.termsOfAny(text);
  }

  /**
   * termsOf in one pass over `text`, each run lowercased and hashed as it is read (no lowercased copy, no
   * classes' array): for a text without surrogates whose letters' and digits' lowercase is one unit
   * whatever surrounds it (lexical.ts `lowerTable`); -1 for any other.
   */
  private termsOfPlain(text: string): number {
    const classes = bmpClasses();
    const lower = lowerTable();
    const run = this.run;
    let n = 0;
    for (let i = 0; i < text.length;) {
      let c = text.charCodeAt(i);
      if ((c & 0xf800) === 0xd800) return -1;
      if (!(classes[c] & (LETTER | NUMBER))) {
        i++;
        continue;
      }
      let length = 0;
      let h = 0x811c9dc5;
      do {
        const l = lower[c];
        if (l === 0) return -1;
        // A run past LONGEST is no word: only its length counts from there.
        if (length <= LONGEST) run[length] = l;
        length++;
        h = Math.imul(h ^ l, 0x01000193);
        c = ++i < text.length ? text.charCodeAt(i) : 0;
      } while (i < text.length && classes[c] & (LETTER | NUMBER));
      // A run cut by a surrogate may go on past it: the whole text is read the other way (the terms made
      // so far are those words' first, in the same order).
      if ((c & 0xf800) === 0xd800 && i < text.length) return -1;
      if (length > LONGEST) continue;
      // pieceHash's last step.
      h ^= h >>> 15;
      const slot = this.find(run, 0, length, h);
      const entry = this.slots[2 * slot] - 1;
      const t = entry >= 0 ? this.entries[3 * entry + 2] : this.make(run, 0, length, h, slot, isWordRun(run, 0, length));
      if (t >= 0) n = this.put(n, t);
    }
    return n;
  }

  /** termsOf for any text: its lowercased copy and classes, or (İ, Σ) its words as strings. */
  private termsOfAny(text: string): number {
    const units = lowerCased(text);
    let n = 0;
    if (units === undefined) {
      for (const w of words(text)) {
        const t = this.term(unitsOf(w), 0, w.length, true);
        if (t >= 0) n = this.put(n, t);
      }
      return n;
    }
    const k = classesOf(text);
    for (let i = 0; i < k.length;) {
      if (!(k[i] & (LETTER | NUMBER))) {
        i++;
        continue;
      }
      const e = runEnd(k, i, k.length);
      if (e - i <= LONGEST) {
        const t = this.term(units, i, e, false);
        if (t >= 0) n = this.put(n, t);
      }
      i = e;
    }
    return n;
  }

  /** The term of `word` (one of `words`), -1 when it has none. */
  id(word: string): number {
    const units = unitsOf(word);
    const h = pieceHash(units, 0, units.length);
    const e = this.find(units, 0, units.length, h);
    return this.slots[2 * e] ? this.entries[3 * (this.slots[2 * e] - 1) + 2] : -1;
  }

  /** Makes `word` the next term (a saved index's words, in order); -1 when it is one already, or no word of `words`. */
  add(word: string): number {
    const units = unitsOf(word);
    if (!units.length || !isWordRun(units, 0, units.length)) return -1;
    const h = pieceHash(units, 0, units.length);
    const slot = this.find(units, 0, units.length, h);
    return this.slots[2 * slot] ? -1 : this.make(units, 0, units.length, h, slot, true);
  }

  /** The word of term `t`. */
  word(t: number): string {
    const entry = this.termEntries[t];
    const start = this.entries[3 * entry];
    return String.fromCharCode(...this.chars.subarray(start, start + this.entries[3 * entry + 1]));
  }

  bytes(): number {
    return this.slots.byteLength + this.entries.byteLength + this.chars.byteLength + this.termEntries.byteLength + this.ids.byteLength;
  }

  private put(n: number, t: number): number {
    if (n === this.ids.length) this.ids = grown(this.ids, n + 1);
    this.ids[n] = t;
    return n + 1;
  }

  /** The term of the run `units[from, to)`, made on a miss (`isWord`: known to be a word). */
  private term(units: Uint16Array, from: number, to: number, isWord: boolean): number {
    const h = pieceHash(units, from, to);
    const slot = this.find(units, from, to, h);
    const entry = this.slots[2 * slot] - 1;
    if (entry >= 0) return this.entries[3 * entry + 2];
    return this.make(units, from, to, h, slot, isWord || isWordRun(units, from, to));
  }

  /** The slot of `units[from, to)` (hash `h`): where it is, or the empty slot where it would go. */
  private find(units: Uint16Array, from: number, to: number, h: number): number {
    const { slots, entries, chars } = this;
    const length = to - from;
    const mask = slots.length / 2 - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const entry = slots[2 * slot] - 1;
      if (entry < 0) return slot;
      if (slots[2 * slot + 1] !== h || entries[3 * entry + 1] !== length) continue;
      const start = entries[3 * entry];
      let i = 0;
      while (i < length && chars[start + i] === units[from + i]) i++;
      if (i === length) return slot;
    }
  }

  private make(units: Uint16Array, from: number, to: number, h: number, slot: number, isWord: boolean): number {
    const length = to - from;
    if (this.charsUsed + length > this.chars.length) this.chars = grown(this.chars, this.charsUsed + length);
    this.chars.set(units.subarray(from, to), this.charsUsed);
    if (3 * (this.count + 1) > this.entries.length) this.entries = grown(this.entries, 3 * (this.count + 1));
    const entry = this.count++;
    this.entries[3 * entry] = this.charsUsed;
    this.entries[3 * entry + 1] = length;
    this.entries[3 * entry + 2] = isWord ? this.newTerm(entry) : -1;
    this.charsUsed += length;
    this.slots[2 * slot] = entry + 1;
    this.slots[2 * slot + 1] = h;
    // At most half full.
    if (2 * this.count > this.slots.length / 2) this.growSlots();
    return this.entries[3 * entry + 2];
  }

  private newTerm(entry: number): number {
    if (this.size === this.termEntries.length) this.termEntries = grown(this.termEntries, this.size + 1);
    this.termEntries[this.size] = entry;
    return this.size++;
  }

  private growSlots(): void {
    const old = this.slots;
    const slots = new Int32Array(2 * old.length);
    const mask = slots.length / 2 - 1;
    for (let s = 0; s < old.length; s += 2) {
      if (!old[s]) continue;
      let slot = old[s + 1] & mask;
      while (slots[2 * slot]) slot = (slot + 1) & mask;
      slots[2 * slot] = old[s];
      slots[2 * slot + 1] = old[s + 1];
    }
    this.slots = slots;
  }
}
