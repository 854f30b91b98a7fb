import { Type, type Static } from 'typebox';
import type { Outbound } from '../core/outbound.js';
import { redactText } from '../core/redact.js';
import { classesOf, LETTER, NUMBER } from '../core/pretokens.js';
import { upstreamKeyFromEnv } from '../core/upstream-key.js';
import { LONGEST, lowerCased, lowerTable, runEnd, tableLowered, unitsOf } from './lexical.js';
import { wasmChunkSums } from './chunk-sums-wasm.js';
import { NO_ROOM, NOT_IN_TABLE, WasmText } from './text-runs-wasm.js';
import { grown, keyHash, mix, PAIR_SEED, WordFeatureCache } from './word-features.js';

/**
 * Embeddings of chunks and queries. Built in: a hashed bag of features, offline and deterministic
 * (docs/files.md). Or any OpenAI-compatible `/embeddings` server named in the config file.
 */
export interface Embedder {
  /** Names the vectors it makes; a query is compared only with chunks embedded by the same one. */
  readonly id: string;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Dimensions of the built-in embedder's vectors. */
export const BUILTIN_DIMENSIONS = 256;
export const BUILTIN_ID = `builtin:hashed-ngrams-${BUILTIN_DIMENSIONS}-v1`;

/** A feature's weight in a vector from its summed weights: sublinear, 1 + ln 1 = 1 (most are met once). */
const weightOf = (count: number) => (count >= 1 ? 1 + Math.log(count) : count);
/** weightOf(i / 2) for i < HALVES. */
const HALVES = 512;
const WEIGHT_OF_HALVES = Float64Array.from({ length: HALVES }, (_, i) => weightOf(i / 2));

/** A feature's sign from its hash's top bit. */
const SIGN = Float64Array.of(1, -1);

/** TextFeatures' arrays past this many entries are let go after their text. */
const LARGE = 1 << 18;

/** Numbers per slot of TextFeatures' table of the runs met in a text. */
const MET = 4;

/**
 * The features of one text, numbered in the order first met (a feature is a 32-bit value: words,
 * pairs and trigrams that hash alike are one feature, as they were in a Map keyed by the value), and the
 * sums of one piece of it at a time. Each word met gets its record once per text (its hash, its trigram
 * count, the numbers of its feature and its trigrams' features), so the sums of a chunk (auto chunking
 * has every token in two) index arrays instead of probing a table of features per addition.
 */
class TextFeatures {
  /** Per slot (open addressing on the feature's value): its number + 1, 0 when empty. */
  private slots = new Int32Array(1 << 13);
  /** Per number: its feature and its slot. */
  keys = new Uint32Array(1 << 12);
  private slotOf = new Int32Array(1 << 12);
  /** Features numbered in this text. */
  count = 0;
  /** Per word met in this text: hash, trigram count, feature number, trigram feature numbers. */
  words = new Int32Array(1 << 12);
  /** Numbers of `words` in use. */
  wordsUsed = 0;
  /** The runs of letters and digits met in this text: per slot their hash, length (0: empty), record and key's start in `metChars`. */
  private met = new Int32Array(MET << 12);
  private metChars = new Uint16Array(1 << 14);
  private metCharsUsed = 0;
  /** The slots used in `met`, to empty them for the next text. */
  private metSlots: number[] = [];

  /** Per number: its sum in the current piece, 0 when the piece has not met it (every weight is above 0). */
  sums = new Float64Array(1 << 12);
  /** Numbers in the order the current piece first met them. */
  order = new Int32Array(1 << 12);
  size = 0;

  /** Back to the starting sizes, when one large text grew the arrays past LARGE numbers (memory is not held by the largest file seen). */
  trim() {
    if (this.keys.length > LARGE || this.words.length > LARGE || this.met.length > MET * LARGE) Object.assign(this, new TextFeatures());
  }

  beginText() {
    for (let i = 0; i < this.count; i++) this.slots[this.slotOf[i]] = 0;
    this.count = 0;
    this.wordsUsed = 0;
    for (const slot of this.metSlots) this.met[MET * slot + 1] = 0;
    this.metSlots.length = 0;
    this.metCharsUsed = 0;
  }

  /** The number of feature `h` in this text. */
  id(h: number): number {
    for (;;) {
      const mask = this.slots.length - 1;
      for (let slot = h & mask; ; slot = (slot + 1) & mask) {
        const n = this.slots[slot] - 1;
        if (n < 0) {
          // At most half full: grow and probe again before the insert that would pass it.
          if (2 * (this.count + 1) > this.slots.length) break;
          if (this.count === this.keys.length) this.growNumbers();
          this.keys[this.count] = h;
          this.slotOf[this.count] = slot;
          this.slots[slot] = ++this.count;
          return this.count - 1;
        }
        if (this.keys[n] === h >>> 0) return n;
      }
      this.growSlots();
    }
  }

  /**
   * Where the record of the word `lower[from, to)` (the UTF-16 units of a lowercased text) starts in
   * `words`, or -1 when it is no word: looked up in this text's words first (a few thousand in a file,
   * where the word cache holds a hundred thousand spread over megabytes), then in the word cache.
   */
  word(lower: Uint16Array, from: number, to: number, h = keyHash(lower, from, to)): number {
    const length = to - from;
    if (length > LONGEST) return -1;
    const met = this.met;
    const mask = met.length / MET - 1;
    let slot = h & mask;
    for (; ; slot = (slot + 1) & mask) {
      const at = MET * slot;
      if (met[at + 1] === 0) break;
      if (met[at] !== h || met[at + 1] !== length) continue;
      const start = met[at + 3];
      let i = 0;
      while (i < length && this.metChars[start + i] === lower[from + i]) i++;
      if (i === length) return met[at + 2];
    }
    const entry = wordCache.find(lower, from, to, h);
    const base = entry < 0 ? -1 : this.record(entry);
    if (this.metChars.length < this.metCharsUsed + length) {
      const grown = new Uint16Array(Math.max(2 * this.metChars.length, this.metCharsUsed + length));
      grown.set(this.metChars);
      this.metChars = grown;
    }
    this.metChars.set(lower.subarray(from, to), this.metCharsUsed);
    const at = MET * slot;
    met[at] = h;
    met[at + 1] = length;
    met[at + 2] = base;
    met[at + 3] = this.metCharsUsed;
    this.metCharsUsed += length;
    this.metSlots.push(slot);
    // At most half full.
    if (2 * this.metSlots.length > met.length / MET) this.growMet();
    return base;
  }

  /** The record of the word cache's `entry` in `words` (made now: the entry's index lasts until the cache's next miss). */
  private record(entry: number): number {
    const grams = wordCache.grams(entry);
    if (this.wordsUsed + 3 + grams > this.words.length) {
      const grown = new Int32Array(Math.max(2 * this.words.length, this.wordsUsed + 3 + grams));
      grown.set(this.words);
      this.words = grown;
    }
    const base = this.wordsUsed;
    const start = wordCache.start(entry);
    const values = wordCache.values();
    this.words[base] = values[start];
    this.words[base + 1] = grams;
    // id() grows this object's arrays, not the cache's: `values` stays valid.
    this.words[base + 2] = this.id(values[start + 1]);
    for (let j = 0; j < grams; j++) this.words[base + 3 + j] = this.id(values[start + 2 + j]);
    this.wordsUsed += 3 + grams;
    return base;
  }

  /** The feature number of the pair of the words whose records start at `before` and `base`. */
  pair(before: number, base: number): number {
    return this.id(pairOf(this.words[before], this.words[base]));
  }

  private growMet() {
    const old = this.met;
    const met = new Int32Array(2 * old.length);
    const mask = met.length / MET - 1;
    const slots: number[] = [];
    for (const s of this.metSlots) {
      let slot = old[MET * s] & mask;
      while (met[MET * slot + 1] !== 0) slot = (slot + 1) & mask;
      met.set(old.subarray(MET * s, MET * s + MET), MET * slot);
      slots.push(slot);
    }
    this.met = met;
    this.metSlots = slots;
  }

  /** Starts a piece: the sums of the one before were emptied by `finish`. */
  beginPiece() {
    this.size = 0;
  }

  add(n: number, w: number) {
    const sum = this.sums[n];
    if (sum === 0) this.order[this.size++] = n;
    this.sums[n] = sum + w;
  }

  /** Adds the word whose record starts at `base`: its feature, its pair (feature number `pair`, -1: none) and its trigrams. */
  addWord(base: number, pair: number) {
    const words = this.words;
    this.add(words[base + 2], 1);
    if (pair >= 0) this.add(pair, 0.5);
    const grams = words[base + 1];
    const weight = 0.5 / grams;
    for (let j = 0; j < grams; j++) this.add(words[base + 3 + j], weight);
  }

  /** The vector of the piece's features, into `v` (zeroed, BUILTIN_DIMENSIONS long), normalized. */
  finish(v: Float32Array): Float32Array {
    const { order, keys, sums } = this;
    for (let i = 0; i < this.size; i++) {
      const n = order[i];
      const h = keys[n];
      const count = sums[n];
      sums[n] = 0;
      // Below 1 a count is its own weight (most trigrams, pairs met once); whole and half counts (words and
      // pairs) from a table of the same values.
      const halves = 2 * count;
      const weight = count < 1 ? count : halves < HALVES && halves === Math.floor(halves) ? WEIGHT_OF_HALVES[halves] : weightOf(count);
      // The sign as a factor (exact): a branch on the hash's top bit is a coin toss the processor mispredicts half the time.
      v[h & (BUILTIN_DIMENSIONS - 1)] += weight * SIGN[h >>> 31];
    }
    return normalize(v);
  }

  private growNumbers() {
    const length = 2 * this.keys.length;
    this.keys = grown(this.keys, length);
    this.slotOf = grown(this.slotOf, length);
    this.sums = grown(this.sums, length);
    this.order = grown(this.order, length);
  }

  private growSlots() {
    this.slots = new Int32Array(2 * this.slots.length);
    const mask = this.slots.length - 1;
    for (let n = 0; n < this.count; n++) {
      let slot = this.keys[n] & mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
      this.slots[slot] = n + 1;
      this.slotOf[n] = slot;
    }
  }
}
const wordCache = new WordFeatureCache();
const features = new TextFeatures();

/** The pair feature of a word (hash `hash`) after the word `previous`. */
const pairOf = (previous: number, hash: number) => mix(Math.imul(previous, 31) ^ hash ^ PAIR_SEED);

/**
 * The built-in embedding of a text: its words (weight 1), pairs of neighbouring words (0.5) and the
 * character trigrams of each word with its edges marked (`#ca`, `cap`, …, `al#`; 0.5 in all per word),
 * each feature counted with a sublinear weight (1 + ln count when it reaches 1), hashed (FNV-1a, then
 * murmur3's finalizer) into 256 buckets with a sign from the hash's top bit, and L2-normalized.
 * Texts that share words, word pairs or word stems land near each other; nothing else is modelled.
 */
export const embedBuiltin = (text: string): Float32Array => embedInto(text, new Float32Array(BUILTIN_DIMENSIONS));

/** embedBuiltin into `into` (zeroed, BUILTIN_DIMENSIONS long). */
function embedInto(text: string, into: Float32Array): Float32Array {
  // The words of lexical.ts's `words` (runs of letters and digits of the lowercased text, some left out),
  // found with the pre-tokenizer's class table rather than its regex.
  const lower = text.toLowerCase();
  const k = classesOf(lower);
  const units = unitsOf(lower);
  features.beginText();
  features.beginPiece();
  let previous = 0;
  let first = true;
  for (let i = 0; i < k.length;) {
    if (!(k[i] & (LETTER | NUMBER))) {
      i++;
      continue;
    }
    const e = runEnd(k, i, k.length);
    const base = features.word(units, i, e);
    i = e;
    if (base < 0) continue;
    const hash = features.words[base];
    features.addWord(base, first ? -1 : features.id(pairOf(previous, hash)));
    first = false;
    previous = hash;
  }
  features.finish(into);
  features.trim();
  return into;
}

/** Per run of letters and digits in embedChunks: start, end, word record (-1: no word), pair feature number and the run before it that is a word (-1: none). */
const RUN = 5;
/** Numbers a chunk's plan may add at once (its counts and run numbers, or a word). */
const PLAN_ROOM = 8;
/** embedChunks' plans of chunks, kept from text to text. */
let planOfText = new Int32Array(1024);

/** embedChunks' runs, kept from text to text (1 MB of prose has about 150,000; more than LARGE are let go). */
let runsOfText = new Int32Array(RUN * 1024);

/** The UTF-16 units of `text` (a copy of its memory). */
function unitsInto(text: string): Uint16Array {
  const units = new Uint16Array(text.length);
  Buffer.from(units.buffer).write(text, 'utf16le');
  return units;
}

/**
 * The runs of letters and digits of a text (classes `k`, units `lower`) into `runsOfText`, RUN numbers
 * each: its start and end, its word's record (-1: no word), its pair's feature (-1: none) and the run
 * before it that is a word (-1: none); answers how many. With `table` (lexical.ts lowerTable), each run's
 * units are lowercased in `lower` from it as the run is read, its hash made in the same pass; -1 at a unit
 * the table leaves out. Without, `lower` is lowercased already.
 */
function findRuns(k: Uint8Array, lower: Uint16Array, table?: Uint16Array): number {
  let runs = runsOfText;
  let n = 0;
  let kept = -1;
  let previous = 0;
  const length = k.length;
  for (let i = 0; i < length;) {
    if (!(k[i] & (LETTER | NUMBER))) {
      i++;
      continue;
    }
    let e = i;
    let h;
    if (table) {
      // pieceHash (word-features.ts keyHash) of the lowercased units, made as they are; a surrogate
      // (a letter past the BMP) is one of the units the table leaves out.
      h = 0x811c9dc5;
      for (; e < length && k[e] & (LETTER | NUMBER); e++) {
        const l = table[lower[e]];
        if (l === 0) return -1;
        lower[e] = l;
        h = Math.imul(h ^ l, 0x01000193);
      }
      h ^= h >>> 15;
    } else {
      e = runEnd(k, i, length);
      h = keyHash(lower, i, e);
    }
    if (RUN * (n + 1) > runs.length) runs = runsOfText = grown(runs, 2 * runs.length);
    const base = features.word(lower, i, e, h);
    const r = RUN * n;
    runs[r] = i;
    runs[r + 1] = e;
    runs[r + 2] = base;
    runs[r + 3] = -1;
    runs[r + 4] = kept;
    if (base >= 0) {
      const hash = features.words[base];
      if (kept >= 0) runs[r + 3] = features.id(pairOf(previous, hash));
      kept = n;
      previous = hash;
    }
    n++;
    i = e;
  }
  return n;
}

/**
 * The plans of a text's chunks (chunk-sums.c `chunks`) into `planOfText`, over its scan: per chunk, the
 * words where its runs differ from the text's (a word its edges cut; its first words, whose pairs the
 * text's do not give) and the runs between as found. The chunks planned are pushed to `planned`; one that
 * is no stretch of the text at `starts` (a window that cut a character), that holds a unit the scan read as
 * it is (`odd`), or that comes before the one planned last, to `alone`. Answers the plans' length.
 */
function planChunks(
  text: string,
  chunks: readonly { text: string }[],
  starts: readonly number[],
  scanned: Scanned,
  planned: number[],
  alone: number[],
): number {
  const { runs, n } = scanned;
  let keptLast = n - 1;
  while (keptLast >= 0 && runs[RUN * keptLast + 2] < 0) keptLast--;
  let plan = planOfText;
  let p = 0;
  let r0 = 0;
  let to = 0;
  let lastStart = 0;
  let lastEnd = 0;
  const entry = (base: number, pair: number) => {
    if (p + PLAN_ROOM > plan.length) plan = planOfText = grown(plan, 2 * plan.length);
    plan[p++] = base;
    plan[p++] = pair;
  };
  for (let c = 0; c < chunks.length; c++) {
    const piece = chunks[c].text;
    const s = starts[c];
    // Compared as strings (a memory compare): startsWith goes unit by unit, 30 times slower, a sixth of this
    // function. A chunk before the one planned last is embedded alone too: the plans walk the runs forward
    // (chunkText yields the chunks in order).
    const e = s + piece.length;
    if (!(s >= 0) || s < lastStart || e < lastEnd || text.slice(s, e) !== piece || holdsOdd(scanned.odd, s, e)) {
      alone.push(c);
      continue;
    }
    lastStart = s;
    lastEnd = e;
    if (p + PLAN_ROOM > plan.length) plan = planOfText = grown(plan, 2 * plan.length);
    planned.push(c);
    // The runs the chunk holds: whole ones as found, those its edges cut as the cut words they are.
    while (r0 < n && runs[RUN * r0 + 1] <= s) r0++;
    let last = -1;
    let lastBase = -1;
    let lastWhole = false;
    // The words before the chunk's runs agree with the text's: a cut first word, the first word (no pair) and the one after a cut word.
    let counted = p++;
    let r = r0;
    const word = (a: number, b: number, whole: boolean) => {
      let base = runs[RUN * r + 2];
      if (!whole) base = scanned.word(Math.max(a, s), Math.min(b, e));
      if (base < 0) return;
      entry(base, last < 0 ? -1 : scanned.pair(lastBase, base));
      last = r;
      lastBase = base;
      lastWhole = whole;
    };
    for (; r < n && runs[RUN * r] < e; r++) {
      const a = runs[RUN * r];
      const b = runs[RUN * r + 1];
      const whole = a >= s && b <= e;
      if (whole && lastWhole && runs[RUN * r + 4] === last) break;
      word(a, b, whole);
    }
    plan[counted] = (p - counted - 1) / 2;
    // Then whole runs, as the text has them.
    to = Math.max(to, r);
    while (to < n && runs[RUN * to + 1] <= e) to++;
    plan[p++] = r;
    plan[p++] = to;
    const kept = to < n ? runs[RUN * to + 4] : keptLast;
    if (kept >= r) {
      last = kept;
      lastBase = runs[RUN * kept + 2];
      lastWhole = true;
    }
    // And a last word its end cuts.
    counted = p++;
    for (r = Math.max(r, to); r < n && runs[RUN * r] < e; r++) word(runs[RUN * r], runs[RUN * r + 1], false);
    plan[counted] = (p - counted - 1) / 2;
  }
  return p;
}

/** Whether `odd` (positions in order) holds one in [s, e). */
function holdsOdd(odd: readonly number[], s: number, e: number): boolean {
  if (!odd.length) return false;
  let lo = 0;
  let hi = odd.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (odd[mid] < s) lo = mid + 1;
    else hi = mid;
  }
  return lo < odd.length && odd[lo] < e;
}

/**
 * The built-in embeddings of the chunks of one text, one after the other (BUILTIN_DIMENSIONS each): to
 * the bit those of `embedBuiltin` on each chunk's text, with the lowercasing, the character classes, the
 * word look-ups and the numbering of features made once for the whole text instead of once per chunk
 * (auto chunking has every token in two chunks): the scan by text-runs.c and the sums and vectors by
 * chunk-sums.c, in WebAssembly (in JavaScript for a text past its memory). `starts[i]` is where chunk i's text begins in `text`
 * (UTF-16 units); a chunk whose text is not found there (a window that cut a character) is embedded on
 * its own. `classes`: the text's character classes (pretokens.ts `classesOf`), where the caller made them
 * for the tokenizer.
 */
export function embedChunks(
  text: string,
  chunks: readonly { text: string }[],
  starts: readonly number[],
  classes?: Uint8Array,
): Float32Array {
  const out = new Float32Array(chunks.length * BUILTIN_DIMENSIONS);
  const at = (i: number) => out.subarray(i * BUILTIN_DIMENSIONS, (i + 1) * BUILTIN_DIMENSIONS);
  const k = classes ?? classesOf(text);
  // In WebAssembly, or in JavaScript where the module's memory cannot hold the text and what its scan makes.
  for (const scan of [scanInWasm, scanInJavaScript]) {
    const scanned = scan(text, k);
    if (scanned === undefined) continue;
    // Each chunk that is a stretch of the text is planned, and the plans summed at once; the others are embedded alone.
    const planned: number[] = [];
    const alone: number[] = [];
    const p = planChunks(text, chunks, starts, scanned, planned, alone);
    const vectors = planned.length ? scanned.sums(planOfText.subarray(0, p), planned.length) : new Float32Array(0);
    if (vectors === undefined) continue;
    if (planned.length === chunks.length) out.set(vectors);
    else planned.forEach((c, i) => at(c).set(vectors.subarray(i * BUILTIN_DIMENSIONS, (i + 1) * BUILTIN_DIMENSIONS)));
    // After the rest: embedInto starts a text of its own.
    for (const c of alone) embedInto(chunks[c].text, at(c));
    break;
  }
  features.trim();
  if (runsOfText.length > RUN * LARGE) runsOfText = new Int32Array(RUN * 1024);
  if (planOfText.length > LARGE) planOfText = new Int32Array(1024);
  return out;
}

/** A text's runs of letters and digits (findRuns) and words, for planning and summing its chunks. */
interface Scanned {
  n: number;
  runs: Int32Array;
  /** The record of the word `lower[from, to)` (-1: no word), as TextFeatures.word. */
  word(from: number, to: number): number;
  /** The feature number of the pair of the words whose records start at `before` and `base`. */
  pair(before: number, base: number): number;
  /** The vectors of `count` chunks planned in `plan`; undefined when they cannot be made this way. */
  sums(plan: Int32Array, count: number): Float32Array | undefined;
  /** Where the units the scan read as they are, not lowercased, are (lowered): a chunk holding one is embedded alone. */
  odd: readonly number[];
}

/**
 * The text lowercased for a scan without the table: whole, where each character's lowercase is one unit and
 * none depends on its neighbours (lexical.ts lowerCased); else from the table, the units it leaves out
 * kept as they are (İ, whose lowercase is two units; Σ, whose lowercase depends on what follows), and
 * listed in `odd`. A chunk that holds none of those is lowercased alone as from the table, the same
 * units: its words are the text's. One that holds one is embedded alone.
 */
function lowered(text: string): { units: Uint16Array; odd: readonly number[] } {
  const units = lowerCased(text);
  return units ? { units, odd: [] } : tableLowered(text);
}

/**
 * The text's runs found in WebAssembly (text-runs.c, the same steps as findRuns, kept in the module's
 * memory for the plans and sums); undefined where the memory cannot hold them. The runs are lowercased
 * from the table as they are read, unless one holds a unit the table leaves out: then the text is
 * lowercased first (`lowered`).
 */
function scanInWasm(text: string, k: Uint8Array): Scanned | undefined {
  const t = WasmText.of(text, k);
  if (!t) return undefined;
  let n = t.scan(true);
  let odd: readonly number[] = [];
  if (n === NOT_IN_TABLE) {
    const lower = lowered(text);
    t.units.set(lower.units);
    odd = lower.odd;
    n = t.scan(false);
  }
  if (n === NO_ROOM) return undefined;
  return {
    n,
    odd,
    runs: t.runs(n),
    word: (from, to) => t.word(from, to),
    pair: (before, base) => t.pair(before, base),
    sums: (plan, count) => t.sums(plan, count, WEIGHT_OF_HALVES),
  };
}

/**
 * The text's runs found in JavaScript (findRuns; TextFeatures holds its words and features), as scanInWasm
 * does. Where the lowercased text is as long as the text and no character's case depends on its neighbours,
 * each character's lowercase is one character of the same length and of the same class, letter or number
 * (embedder.test.ts checks every code point): the text's classes are the lowercased text's.
 */
function scanInJavaScript(text: string, k: Uint8Array): Scanned {
  let lower = unitsInto(text);
  features.beginText();
  let n = findRuns(k, lower, lowerTable());
  let odd: readonly number[] = [];
  if (n < 0) {
    ({ units: lower, odd } = lowered(text));
    features.beginText();
    n = findRuns(k, lower);
  }
  const runs = runsOfText.subarray(0, RUN * n);
  return {
    n,
    odd,
    runs,
    word: (from, to) => features.word(lower, from, to),
    pair: (before, base) => features.pair(before, base),
    sums: (plan, count) => wasmChunkSums(plan, count, runs, features, WEIGHT_OF_HALVES) ?? sumChunks(plan, count, runs),
  };
}

/** The vectors of `count` chunks planned in `plan` (chunk-sums.c `chunks`), from the text's `runs` and features: the WebAssembly's steps, in JavaScript, for a text too large for its memory. */
function sumChunks(plan: Int32Array, count: number, runs: Int32Array): Float32Array {
  const out = new Float32Array(count * BUILTIN_DIMENSIONS);
  let p = 0;
  for (let c = 0; c < count; c++) {
    features.beginPiece();
    for (let k = plan[p++]; k > 0; k--, p += 2) features.addWord(plan[p], plan[p + 1]);
    const to = plan[p + 1];
    for (let r = plan[p]; r < to; r++) if (runs[RUN * r + 2] >= 0) features.addWord(runs[RUN * r + 2], runs[RUN * r + 3]);
    p += 2;
    for (let k = plan[p++]; k > 0; k--, p += 2) features.addWord(plan[p], plan[p + 1]);
    features.finish(out.subarray(c * BUILTIN_DIMENSIONS, (c + 1) * BUILTIN_DIMENSIONS));
  }
  return out;
}

/** Scales a vector to length 1 (a zero vector stays zero). */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}

export const builtinEmbedder: Embedder = {
  id: BUILTIN_ID,
  embed: async (texts) => texts.map(embedBuiltin),
};

/** The config file's root `vector_stores` section. */
export const VectorStoresConfig = Type.Object(
  {
    /** An OpenAI-compatible embeddings server; without it the built-in embedder is used. */
    embeddings: Type.Optional(
      Type.Object(
        {
          /** Up to `/v1`: `{base_url}/embeddings` is called. */
          base_url: Type.String({ minLength: 1, maxLength: 2000 }),
          model: Type.String({ minLength: 1, maxLength: 256 }),
          api_key: Type.Optional(Type.String({ maxLength: 4000 })),
          /** Name of an environment variable holding the key, `STANDIN_UPSTREAM_…` (keeps secrets out of the file). */
          api_key_env: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          /** Texts per request (default 64). */
          batch_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 2048 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type VectorStoresConfig = Static<typeof VectorStoresConfig>;

/**
 * An embedder calling `{base_url}/embeddings` through the SSRF-guarded client; vectors are normalized on
 * arrival. Throws when `api_key_env` names a variable not meant for an upstream key, or one not set.
 */
export function upstreamEmbedder(outbound: Outbound, config: NonNullable<VectorStoresConfig['embeddings']>): Embedder {
  const url = `${config.base_url.replace(/\/+$/, '')}/embeddings`;
  const key =
    config.api_key ?? (config.api_key_env ? upstreamKeyFromEnv(config.api_key_env, 'vector_stores.embeddings.api_key_env') : undefined);
  const batch = config.batch_size ?? 64;
  return {
    id: `upstream:${config.model}`,
    async embed(texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batch) {
        const input = texts.slice(i, i + batch);
        const res = await outbound.fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify({ model: config.model, input, encoding_format: 'float' }),
        });
        // Its text may repeat the key it was sent: masked (then cut, so no key is left half shown) before it
        // becomes a file's error or a log line.
        if (!res.ok)
          throw new Error(
            redactText(`the embeddings server answered ${res.status}: ${(await res.text()).slice(0, 8192)}`, [key]).slice(0, 340),
          );
        const body = (await res.json()) as { data?: { index?: number; embedding?: unknown }[] };
        const data = Array.isArray(body.data) ? [...body.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)) : [];
        if (
          data.length !== input.length ||
          !data.every((d) => Array.isArray(d.embedding) && d.embedding.every((x) => Number.isFinite(x)))
        ) {
          throw new Error(
            `the embeddings server answered ${data.length} vectors for ${input.length} inputs, or vectors that are not finite numbers`,
          );
        }
        for (const d of data) out.push(normalize(Float32Array.from(d.embedding as number[])));
      }
      return out;
    },
  };
}

/** A vector as stored (Float32, little-endian on every platform Node runs on). */
export const toBlob = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
/** A stored vector back (copied: a blob's bytes need not be 4-byte aligned). */
export const fromBlob = (b: Uint8Array): Float32Array => new Float32Array(Uint8Array.from(b).buffer);
