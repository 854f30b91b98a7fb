import { nextTurn } from '../core/next-turn.js';
import { matches, type Attributes, type Filter } from './filters.js';
import { BLOCK, Int8Rows } from './int8-rows.js';
import { CoarseQuantizer, type QuantizerParts } from './ivf.js';
import { Terms } from './terms.js';
import { TopK } from './topk.js';

/**
 * One vector store's search index, changed a file at a time (it lives in the search worker,
 * search-worker.ts): vectors and an inverted index over slots, one slot per chunk. Removing a file
 * kills its slots (their words leave the document frequencies at once); dead slots are reclaimed by a
 * compaction once they outnumber the live ones. Scores are those of the whole-store index this replaced:
 * cosine similarity and BM25 (k1 1.2, b 0.75) over the live chunks, fused as docs/files.md says.
 */

const K1 = 1.2;
const B = 0.75;

/**
 * From `approximateFrom` live chunks on (--search-approximate-from), a store is searched approximately:
 * its vectors are held as int8 rows with a scale each (a quarter of the memory), the vector half reads
 * the lists of a coarse quantizer (ivf.ts) nearest the query, the lexical half finds its best chunks
 * without scoring every chunk that holds a common word (a chunk at a time, with MaxScore: words that cannot
 * lift a chunk into the best CANDIDATES are only looked up), and the union of both lists is scored exactly
 * as below. Below it every chunk is scored.
 */
const CANDIDATES = 200;
/** Vectors from which an approximate store trains its quantizer (fewer are all read). */
const TRAIN_FROM = 4096;
const TRAIN_SAMPLE = 16_384;

/** One page of chunks to add (structured-cloned from the server's thread). */
export interface ChunkPage {
  fileIds: string[];
  seqs: number[];
  texts: string[];
  /** `dimensions` floats per chunk; a chunk's entry in `hasVector` is 0 when it has none of the current embedder. */
  vectors: Float32Array;
  hasVector: Uint8Array;
  dimensions: number;
}

/** A store index as saved (StoreIndex.parts, StoreIndex.restore; the file: index-file.ts). */
export interface IndexParts {
  dimensions: number;
  approximate: boolean;
  /** Slots (chunks, live or dead). */
  n: number;
  /** Exact: `dimensions` floats per slot; approximate: empty. */
  vectors: Float32Array<ArrayBuffer>;
  /** Approximate: int8 rows and their scales; exact: empty. */
  q8: Int8Array<ArrayBuffer>;
  qscale: Float32Array<ArrayBuffer>;
  hasVector: Uint8Array<ArrayBuffer>;
  alive: Uint8Array<ArrayBuffer>;
  fileOf: Int32Array<ArrayBuffer>;
  seqs: Uint32Array<ArrayBuffer>;
  lengths: Uint32Array<ArrayBuffer>;
  termStart: Uint32Array<ArrayBuffer>;
  slotTerms: Int32Array<ArrayBuffer>;
  slotTfs: Uint16Array<ArrayBuffer>;
  /** The words by term id. */
  words: string[];
  maxTf: Uint16Array<ArrayBuffer>;
  /** Infinity for a word no chunk holds. */
  minLen: Float64Array<ArrayBuffer>;
  /** By file number; null where a file was removed. */
  files: (FileMeta | null)[];
  ivf: QuantizerParts | null;
}

export interface FileMeta {
  id: string;
  filename: string;
  attributes: Attributes | null;
}

interface FileEntry extends FileMeta {
  /** Its place in `fileList`. */
  num: number;
  slots: number[];
}

export interface Query {
  vector: Float32Array | null;
  words: string[];
}

export interface Candidate {
  fileId: string;
  filename: string;
  attributes: Attributes | null;
  seq: number;
  score: number;
}

/**
 * Grows a typed array to at least `need` elements, by a quarter at a time (doubling would leave a large
 * store's arrays up to half empty after its first change).
 */
function grow<T extends Float32Array | Int32Array | Uint32Array | Uint16Array | Uint8Array | Int8Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length + (a.length >> 2), 16));
  b.set(a);
  return b;
}

interface Posting {
  docs: Int32Array;
  tfs: Uint16Array;
  len: number;
  /** Live chunks holding the word. */
  df: number;
  /** The highest count and the shortest chunk among `docs` (dead ones included): the word's BM25 bound. */
  maxTf: number;
  minLen: number;
}

// A new posting's arrays are shared empties, replaced by its first `reserve` (two typed arrays less a word).
const NO_DOCS = new Int32Array(0);
const NO_TFS = new Uint16Array(0);
const newPosting = (): Posting => ({ docs: NO_DOCS, tfs: NO_TFS, len: 0, df: 0, maxTf: 0, minLen: Infinity });

/** Gives a posting room for `need` entries: `spare` more when it grows (none for a posting built in one go). */
function reserve(p: Posting, need: number, spare: number): void {
  if (need <= p.docs.length) return;
  const cap = need + Math.floor(spare);
  const docs = new Int32Array(cap);
  docs.set(p.docs.subarray(0, p.len));
  const tfs = new Uint16Array(cap);
  tfs.set(p.tfs.subarray(0, p.len));
  p.docs = docs;
  p.tfs = tfs;
}

/**
 * The room a posting made in one go (a load, a saved index read back) keeps past its entries: a sixteenth.
 * Sized exactly, every posting a new file's words reach was copied whole at its first entry after the
 * load: at a million chunks, a reader spent 1.2 s of CPU copying postings while another instance ingested
 * 10 MB (docs/files.md, "Stop 69").
 */
const spareOf = (len: number) => len >> 4;

/** Past every slot: a walked word's postings are done. */
const NONE = 0x7fffffff;

/** The first index from `from` on whose slot in `docs[0 … len)` (ascending) is at least `s`. */
function gallop(docs: Int32Array, from: number, len: number, s: number): number {
  if (from >= len || docs[from] >= s) return from;
  let lo = from;
  let step = 1;
  while (lo + step < len && docs[lo + step] < s) {
    lo += step;
    step *= 2;
  }
  let hi = Math.min(lo + step, len);
  while (lo + 1 < hi) {
    const mid = (lo + hi) >> 1;
    if (docs[mid] < s) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Pending chunks from which the postings are built in one go (each sized once) rather than grown. */
const BULK = 1024;

/** A query word's idf and postings (none when no live chunk holds it). */
interface QueryTerm {
  idf: number;
  t: number;
  p?: Posting;
}

export class StoreIndex {
  dimensions = 0;
  /** Searched approximately (from `approximateFrom` live chunks on; stays so). */
  approximate = false;

  /** `approximateFrom`: live chunks from which the store is searched approximately (Infinity: never). */
  constructor(private readonly approximateFrom = Infinity) {}

  private n = 0;
  private live = 0;
  private totalLength = 0;
  /** Exact: `dimensions` floats per slot. Approximate: int8 rows in `q8`, each times its `qscale`. */
  private vectors = new Float32Array(0);
  private rows8 = new Int8Rows(0);
  private get q8(): Int8Array<ArrayBuffer> {
    return this.rows8.array;
  }
  private qscale = new Float32Array(0);
  private ivf: CoarseQuantizer | null = null;
  private hasVector = new Uint8Array(0);
  private alive = new Uint8Array(0);
  private fileOf = new Int32Array(0);
  private seqs = new Uint32Array(0);
  private lengths = new Uint32Array(0);
  /** Each slot's distinct words (term ids) and their counts, at `termStart[slot]`…`termStart[slot + 1]`. */
  private termStart = new Uint32Array(1);
  private slotTerms = new Int32Array(0);
  private slotTfs = new Uint16Array(0);
  private terms = new Terms();
  private postings: Posting[] = [];
  private files = new Map<string, FileEntry>();
  private fileList: (FileEntry | undefined)[] = [];
  private norms = new Float32Array(0);
  private normsFor = -1;
  private vectorCount = 0;
  /**
   * Slots below this are in the postings; those from it on have their words (and the document
   * frequencies count them) but join the postings at the next `flush` (before a search), all at once.
   */
  private posted = 0;
  /** Per term, its count in the chunk being added (0 between chunks); the chunk's distinct terms in order. */
  private seen = new Int32Array(0);
  private order = new Int32Array(0);

  /**
   * Grows with every change of what the index holds (files, chunks, postings, the quantizer): a save
   * written a slice at a time (index-file.ts) is given up when it moved meanwhile.
   */
  changes = 0;

  /** Chunks held (live). */
  get size(): number {
    return this.live;
  }

  /** Bytes this index holds (typed arrays and an estimate of the word map), for the memory budget. */
  bytes(): number {
    let b =
      this.vectors.byteLength +
      this.rows8.byteLength +
      this.qscale.byteLength +
      this.hasVector.byteLength +
      this.alive.byteLength +
      this.fileOf.byteLength +
      this.seqs.byteLength +
      this.lengths.byteLength +
      this.termStart.byteLength +
      // Entries not yet in the postings, as they will be there.
      (this.termStart[this.n] - this.termStart[this.posted]) * 6 +
      this.slotTerms.byteLength +
      this.slotTfs.byteLength +
      this.norms.byteLength;
    for (const p of this.postings) b += p.docs.byteLength + p.tfs.byteLength + 64;
    b += this.ivf?.bytes() ?? 0;
    return b + this.terms.bytes() + this.files.size * 256;
  }

  /**
   * What a saved index keeps (index-file.ts), flushed first: views of the arrays over the slots in use
   * (nothing copied), the words in term id order with each word's BM25 bound, the file table in number
   * order (a removed file's number holds null) and the quantizer. The rest (live counts, total length,
   * document frequencies, each file's slots, the postings) follows from these and is made again by `restore`.
   */
  parts(): IndexParts {
    this.flush();
    const { n, dimensions: d } = this;
    const words = new Array<string>(this.postings.length);
    for (let t = 0; t < words.length; t++) words[t] = this.terms.word(t);
    const maxTf = new Uint16Array(this.postings.length);
    const minLen = new Float64Array(this.postings.length);
    this.postings.forEach((p, t) => {
      maxTf[t] = p.maxTf;
      minLen[t] = p.minLen;
    });
    return {
      dimensions: d,
      approximate: this.approximate,
      n,
      vectors: this.approximate ? new Float32Array(0) : this.vectors.subarray(0, n * d),
      q8: this.approximate ? this.q8.subarray(0, n * d) : new Int8Array(0),
      qscale: this.approximate ? this.qscale.subarray(0, n) : new Float32Array(0),
      hasVector: this.hasVector.subarray(0, n),
      alive: this.alive.subarray(0, n),
      fileOf: this.fileOf.subarray(0, n),
      seqs: this.seqs.subarray(0, n),
      lengths: this.lengths.subarray(0, n),
      termStart: this.termStart.subarray(0, n + 1),
      slotTerms: this.slotTerms.subarray(0, this.termStart[n]),
      slotTfs: this.slotTfs.subarray(0, this.termStart[n]),
      words,
      maxTf,
      minLen,
      files: this.fileList.map((f) => (f ? { id: f.id, filename: f.filename, attributes: f.attributes } : null)),
      ivf: this.ivf?.parts() ?? null,
    };
  }

  /**
   * An index from saved parts, every one checked against the others first (a saved file is outside input:
   * a term id, file number or list slot out of range, a count over its word's bound, a chunk of a removed
   * file, or a store saved under another `approximateFrom` is refused with an error, never indexed). The
   * arrays are taken as they are (they may be longer than the slots in use: room for the changes that
   * follow); the postings are built from the chunks' words, as a load builds them. Every 65,536 chunks it
   * lets other work in (`pause`: the worker's searches of other stores), as a load does between pages.
   */
  static async restore(parts: IndexParts, approximateFrom = Infinity, pause = nextTurn): Promise<StoreIndex> {
    const fail = (why: string): never => {
      throw new Error(`the saved index is not valid: ${why}`);
    };
    const { n, dimensions: d, approximate, termStart, slotTerms, slotTfs, alive, hasVector, fileOf, lengths } = parts;
    if (!Number.isSafeInteger(n) || n < 0 || !Number.isSafeInteger(d) || d < 0 || d > 65_536) fail('its sizes');
    const atLeast = (a: { length: number }, len: number, what: string) => {
      if (a.length < len) fail(`${what} is shorter than its chunks`);
    };
    if (approximate) {
      atLeast(parts.q8, n * d, 'the int8 vectors');
      atLeast(parts.qscale, n, 'the scales');
    } else atLeast(parts.vectors, n * d, 'the vectors');
    for (const [a, what] of [
      [hasVector, 'hasVector'],
      [alive, 'alive'],
      [fileOf, 'the file numbers'],
      [parts.seqs, 'the chunk numbers'],
      [lengths, 'the lengths'],
    ] as const)
      atLeast(a, n, what);
    atLeast(termStart, n + 1, 'the word offsets');
    if (termStart[0] !== 0) fail('the word offsets');
    const entries = termStart[n];
    atLeast(slotTerms, entries, "the chunks' words");
    atLeast(slotTfs, entries, "the chunks' word counts");
    const terms = parts.words.length;
    atLeast(parts.maxTf, terms, "the words' bounds");
    atLeast(parts.minLen, terms, "the words' bounds");

    const x = new StoreIndex(approximateFrom);
    for (const m of parts.files) {
      if (m === null) {
        x.fileList.push(undefined);
        continue;
      }
      const attributes = m?.attributes;
      if (
        typeof m?.id !== 'string' ||
        typeof m.filename !== 'string' ||
        (attributes !== null && (typeof attributes !== 'object' || Array.isArray(attributes))) ||
        x.files.has(m.id)
      )
        fail('its file table');
      const entry: FileEntry = { id: m.id, filename: m.filename, attributes, num: x.fileList.length, slots: [] };
      x.files.set(m.id, entry);
      x.fileList.push(entry);
    }
    for (let t = 0; t < terms; t++) {
      const w = parts.words[t];
      if (typeof w !== 'string' || x.terms.add(w) !== t) fail('its word table');
      const minLen = parts.minLen[t];
      if (!(minLen === Infinity || (Number.isInteger(minLen) && minLen >= 0))) fail("a word's bound");
      x.postings.push({ ...newPosting(), maxTf: parts.maxTf[t], minLen });
    }
    const files = x.fileList.length;
    // One pass checks every chunk and counts each word's live chunks (its posting's exact size); a second
    // fills the postings, in slot order as a flush would.
    const df = new Int32Array(terms);
    const { maxTf, minLen } = parts;
    for (let s = 0; s < n; s++) {
      if ((s & 0xffff) === 0xffff) await pause();
      const from = termStart[s];
      const to = termStart[s + 1];
      if (to < from || to > entries) fail('the word offsets');
      if (alive[s] > 1 || hasVector[s] > 1 || fileOf[s] < 0 || fileOf[s] >= files) fail(`chunk ${s}`);
      if (!alive[s]) {
        for (let j = from; j < to; j++) if (slotTerms[j] < 0 || slotTerms[j] >= terms || slotTfs[j] === 0) fail(`the words of chunk ${s}`);
        continue;
      }
      const file = x.fileList[fileOf[s]] ?? fail(`chunk ${s} is of a removed file`);
      file.slots.push(s);
      x.live++;
      const len = lengths[s];
      x.totalLength += len;
      if (hasVector[s]) {
        if (approximate && !Number.isFinite(parts.qscale[s])) fail(`the scale of chunk ${s}`);
        x.vectorCount++;
      }
      for (let j = from; j < to; j++) {
        const t = slotTerms[j];
        const tf = slotTfs[j];
        if (t < 0 || t >= terms || tf === 0) fail(`the words of chunk ${s}`);
        if (tf > maxTf[t] || len < minLen[t]) fail(`a word of chunk ${s} is past its bound`);
        df[t]++;
      }
    }
    const docs: Int32Array[] = new Array<Int32Array>(terms);
    const tfs: Uint16Array[] = new Array<Uint16Array>(terms);
    x.postings.forEach((p, t) => {
      p.df = p.len = df[t];
      docs[t] = p.docs = new Int32Array(df[t] + spareOf(df[t]));
      tfs[t] = p.tfs = new Uint16Array(p.docs.length);
    });
    const at = new Int32Array(terms);
    for (let s = 0; s < n; s++) {
      if ((s & 0xffff) === 0xffff) await pause();
      if (!alive[s]) continue;
      for (let j = termStart[s]; j < termStart[s + 1]; j++) {
        const t = slotTerms[j];
        const k = at[t]++;
        docs[t][k] = s;
        tfs[t][k] = slotTfs[j];
      }
    }
    if (approximate !== x.live >= approximateFrom) fail('it was saved under another --search-approximate-from');
    if (parts.ivf) {
      if (!approximate || !d) fail('a quantizer in an exact index');
      x.ivf = CoarseQuantizer.restore(parts.ivf, d, n);
    }
    x.dimensions = d;
    x.approximate = approximate;
    x.vectors = parts.vectors;
    if (approximate) x.rows8 = Int8Rows.of(parts.q8, d);
    x.qscale = parts.qscale;
    x.hasVector = hasVector;
    x.alive = alive;
    x.fileOf = fileOf;
    x.seqs = parts.seqs;
    x.lengths = lengths;
    x.termStart = termStart;
    x.slotTerms = slotTerms;
    x.slotTfs = slotTfs;
    x.n = n;
    x.posted = n;
    x.seen = new Int32Array(terms);
    // Trains the quantizer if a load's flush would have (it was not yet when saved).
    x.flush();
    return x;
  }

  /** Sets (or replaces the name and attributes of) files; their chunks come with `addChunks`. */
  setFiles(metas: readonly FileMeta[]): void {
    this.changes++;
    for (const m of metas) {
      const had = this.files.get(m.id);
      if (had) Object.assign(had, { filename: m.filename, attributes: m.attributes });
      else {
        const entry: FileEntry = { ...m, num: this.fileList.length, slots: [] };
        this.files.set(m.id, entry);
        this.fileList.push(entry);
      }
    }
  }

  /** Removes files and their chunks. */
  removeFiles(ids: readonly string[]): void {
    this.changes++;
    for (const id of ids) {
      const f = this.files.get(id);
      if (!f) continue;
      for (const s of f.slots) this.kill(s);
      this.files.delete(id);
      this.fileList[f.num] = undefined;
    }
    if (this.n - this.live > Math.max(1024, this.live)) this.compact();
  }

  private kill(s: number): void {
    if (!this.alive[s]) return;
    this.alive[s] = 0;
    this.live--;
    this.totalLength -= this.lengths[s];
    if (this.hasVector[s]) this.vectorCount--;
    for (let j = this.termStart[s]; j < this.termStart[s + 1]; j++) this.postings[this.slotTerms[j]].df--;
  }

  /** Stores a vector as slot `s`'s int8 row and scale. */
  private quantize(v: Float32Array, from: number, s: number): void {
    const d = this.dimensions;
    let max = 0;
    for (let x = 0; x < d; x++) max = Math.max(max, Math.abs(v[from + x]));
    const scale = max / 127 || 1;
    this.qscale[s] = scale;
    for (let x = 0; x < d; x++) this.q8[s * d + x] = Math.round(v[from + x] / scale);
  }

  /** Adds chunks of files given to `setFiles` (chunks of a file not there are ignored). */
  addChunks(page: ChunkPage): void {
    this.changes++;
    const count = page.texts.length;
    if (!this.dimensions && page.dimensions) this.dimensions = page.dimensions;
    const d = this.dimensions;
    const need = this.n + count;
    if (this.approximate) {
      this.rows8.reserve(need);
      this.qscale = grow(this.qscale, need);
    } else this.vectors = grow(this.vectors, need * d);
    this.hasVector = grow(this.hasVector, need);
    this.alive = grow(this.alive, need);
    this.fileOf = grow(this.fileOf, need);
    this.seqs = grow(this.seqs, need);
    this.lengths = grow(this.lengths, need);
    this.termStart = grow(this.termStart, need + 1);
    for (let i = 0; i < count; i++) {
      const file = this.files.get(page.fileIds[i]);
      if (!file) continue;
      const s = this.n++;
      file.slots.push(s);
      this.fileOf[s] = file.num;
      this.seqs[s] = page.seqs[i];
      this.alive[s] = 1;
      this.live++;
      if (page.hasVector[i] && page.dimensions === d) {
        if (this.approximate) {
          this.quantize(page.vectors, i * d, s);
          this.ivf?.add(s, this.q8, s * d);
        } else this.vectors.set(page.vectors.subarray(i * d, (i + 1) * d), s * d);
        this.hasVector[s] = 1;
        this.vectorCount++;
      } else this.hasVector[s] = 0;
      const len = this.terms.termsOf(page.texts[i]);
      const ids = this.terms.ids;
      while (this.postings.length < this.terms.size) this.postings.push(newPosting());
      if (this.seen.length < this.postings.length) this.seen = grow(this.seen, this.postings.length);
      this.lengths[s] = len;
      this.totalLength += len;
      // The chunk's distinct words as term ids with their counts, in order of first appearance.
      if (this.order.length < len) this.order = new Int32Array(Math.max(len, this.order.length * 2));
      const order = this.order;
      let distinct = 0;
      const seen = this.seen;
      for (let j = 0; j < len; j++) {
        const t = ids[j];
        if (seen[t]++ === 0) order[distinct++] = t;
      }
      const start = this.termStart[s];
      this.slotTerms = grow(this.slotTerms, start + distinct);
      this.slotTfs = grow(this.slotTfs, start + distinct);
      for (let k = 0; k < distinct; k++) {
        const t = order[k];
        const tf = Math.min(seen[t], 65_535);
        seen[t] = 0;
        this.slotTerms[start + k] = t;
        this.slotTfs[start + k] = tf;
        const p = this.postings[t];
        p.df++;
        if (tf > p.maxTf) p.maxTf = tf;
        if (len < p.minLen) p.minLen = len;
      }
      this.termStart[s + 1] = start + distinct;
    }
    if (!this.approximate && this.live >= this.approximateFrom) this.goApproximate();
  }

  /**
   * Puts the chunks added since the last flush into the postings (in slot order, which the lexical
   * search's binary search needs) and trains an approximate store's quantizer once it has the vectors
   * for it. Searches flush first; a load flushes at its end. Many chunks at once (a store's load) are
   * posted in one go, each posting sized once.
   */
  flush(): void {
    if (this.posted < this.n || (this.approximate && !this.ivf && this.vectorCount >= TRAIN_FROM)) this.changes++;
    if (this.approximate && !this.ivf && this.vectorCount >= TRAIN_FROM) {
      this.train();
      this.inListOrder();
    }
    const from = this.posted;
    const to = this.n;
    const { slotTerms, slotTfs, termStart, alive, postings } = this;
    if (to - from >= BULK) {
      const add = new Int32Array(postings.length);
      for (let s = from; s < to; s++) if (alive[s]) for (let j = termStart[s]; j < termStart[s + 1]; j++) add[slotTerms[j]]++;
      for (let t = 0; t < add.length; t++) {
        const p = postings[t];
        if (add[t]) reserve(p, p.len + add[t], Math.max(p.len / 4, spareOf(p.len + add[t])));
      }
    }
    for (let s = from; s < to; s++) {
      if (!alive[s]) continue;
      for (let j = termStart[s]; j < termStart[s + 1]; j++) {
        const p = postings[slotTerms[j]];
        if (p.len === p.docs.length) reserve(p, p.len + 1, Math.max(4, p.len / 2));
        p.docs[p.len] = s;
        p.tfs[p.len++] = slotTfs[j];
      }
    }
    this.posted = to;
  }

  /** From exact to approximate: the vectors become int8 rows (the floats are let go). */
  private goApproximate(): void {
    const d = this.dimensions;
    this.rows8 = new Int8Rows(d, Math.max(this.vectors.length / d, this.n));
    this.qscale = new Float32Array(Math.max(this.n, 16));
    for (let s = 0; s < this.n; s++) if (this.hasVector[s]) this.quantize(this.vectors, s * d, s);
    this.vectors = new Float32Array(0);
    this.approximate = true;
  }

  /** The quantizer, trained on an even sample of the live vectors (deterministic), then every vector filed. */
  private train(): void {
    const d = this.dimensions;
    const live: number[] = [];
    for (let s = 0; s < this.n; s++) if (this.alive[s] && this.hasVector[s]) live.push(s);
    const step = Math.max(1, Math.floor(live.length / TRAIN_SAMPLE));
    const sample = live.filter((_, i) => i % step === 0).slice(0, TRAIN_SAMPLE);
    const rows = new Float32Array(sample.length * d);
    sample.forEach((s, i) => {
      for (let x = 0; x < d; x++) rows[i * d + x] = this.q8[s * d + x] * this.qscale[s];
    });
    this.ivf = CoarseQuantizer.train(rows, sample.length, d);
    for (const s of live) this.ivf.add(s, this.q8, s * d);
  }

  /**
   * Renumbers the live slots in the order of the quantizer's lists (each list's slots then follow one
   * another), so a query reads each list's int8 rows from one stretch of memory instead of scattered over
   * the store's array: the vector half's time was memory latency. Dead slots leave; term ids stay, and the
   * postings are filled again (in their arrays, which hold enough) by the flush that follows.
   */
  private inListOrder(): void {
    const ivf = this.ivf!;
    const d = this.dimensions;
    const order: number[] = [];
    for (const l of ivf.lists) for (let j = 0; j < l.len; j++) if (this.alive[l.slots[j]]) order.push(l.slots[j]);
    for (let s = 0; s < this.n; s++) if (this.alive[s] && !this.hasVector[s]) order.push(s);
    const m = order.length;
    // Room for a sixteenth more, so the changes that follow a load do not copy every array at once.
    const cap = m + (m >> 4) + 16;
    const remap = new Int32Array(this.n).fill(-1);
    order.forEach((s, i) => (remap[s] = i));
    const old = {
      q8: this.q8,
      qscale: this.qscale,
      hasVector: this.hasVector,
      fileOf: this.fileOf,
      seqs: this.seqs,
      lengths: this.lengths,
      termStart: this.termStart,
      slotTerms: this.slotTerms,
      slotTfs: this.slotTfs,
    };
    let terms = 0;
    for (const s of order) terms += old.termStart[s + 1] - old.termStart[s];
    this.allocateSlots(cap, m, terms + (terms >> 4) + 16);
    let j = 0;
    order.forEach((s, i) => {
      this.q8.set(old.q8.subarray(s * d, (s + 1) * d), i * d);
      this.qscale[i] = old.qscale[s];
      this.hasVector[i] = old.hasVector[s];
      this.fileOf[i] = old.fileOf[s];
      this.seqs[i] = old.seqs[s];
      this.lengths[i] = old.lengths[s];
      this.termStart[i] = j;
      const from = old.termStart[s];
      const to = old.termStart[s + 1];
      this.slotTerms.set(old.slotTerms.subarray(from, to), j);
      this.slotTfs.set(old.slotTfs.subarray(from, to), j);
      j += to - from;
    });
    this.termStart[m] = j;
    for (const f of this.files.values()) f.slots = f.slots.map((s) => remap[s]).filter((s) => s >= 0);
    ivf.remap(remap);
    for (const p of this.postings) p.len = 0;
    this.posted = 0;
    this.n = m;
    this.normsFor = -1;
  }

  /**
   * New per-slot arrays for `cap` slots, the first `live` of them alive, with room for `terms` words
   * (the vectors as int8 rows in an approximate store, floats otherwise): what a renumbering fills.
   */
  private allocateSlots(cap: number, live: number, terms: number): void {
    const d = this.dimensions;
    if (this.approximate) {
      this.rows8 = new Int8Rows(d, cap);
      this.qscale = new Float32Array(cap);
    } else this.vectors = new Float32Array(cap * d);
    this.hasVector = new Uint8Array(cap);
    this.alive = new Uint8Array(cap).fill(1, 0, live);
    this.fileOf = new Int32Array(cap);
    this.seqs = new Uint32Array(cap);
    this.lengths = new Uint32Array(cap);
    this.termStart = new Uint32Array(cap + 1);
    this.slotTerms = new Int32Array(terms);
    this.slotTfs = new Uint16Array(terms);
  }

  /** Rebuilds the arrays with live slots only (words unused by any live chunk leave). */
  private compact(): void {
    const keep: number[] = [];
    for (let s = 0; s < this.n; s++) if (this.alive[s]) keep.push(s);
    const d = this.dimensions;
    const old = { ...this };
    const files = [...this.files.values()];
    files.forEach((f, i) => (f.num = i));
    this.fileList = files;
    const remap = new Int32Array(this.n).fill(-1);
    keep.forEach((s, i) => (remap[s] = i));
    const m = keep.length;
    let terms = 0;
    for (const s of keep) terms += old.termStart[s + 1] - old.termStart[s];
    this.allocateSlots(m, m, terms);
    // Old term → new (-1: not met yet); the new terms numbered in the order the live chunks meet them.
    const newTerm = new Int32Array(old.postings.length).fill(-1);
    this.terms = new Terms();
    this.postings = [];
    let j = 0;
    keep.forEach((s, i) => {
      if (d && this.approximate) {
        this.q8.set(old.rows8.array.subarray(s * d, (s + 1) * d), i * d);
        this.qscale[i] = old.qscale[s];
      } else if (d) this.vectors.set(old.vectors.subarray(s * d, (s + 1) * d), i * d);
      this.hasVector[i] = old.hasVector[s];
      this.fileOf[i] = old.fileList[old.fileOf[s]]!.num;
      this.seqs[i] = old.seqs[s];
      const len = old.lengths[s];
      this.lengths[i] = len;
      this.termStart[i] = j;
      for (let k = old.termStart[s]; k < old.termStart[s + 1]; k++) {
        let t = newTerm[old.slotTerms[k]];
        if (t < 0) {
          t = newTerm[old.slotTerms[k]] = this.terms.add(old.terms.word(old.slotTerms[k]));
          this.postings.push(newPosting());
        }
        const tf = old.slotTfs[k];
        const p = this.postings[t];
        p.df++;
        if (tf > p.maxTf) p.maxTf = tf;
        if (len < p.minLen) p.minLen = len;
        this.slotTerms[j] = t;
        this.slotTfs[j++] = tf;
      }
    });
    this.termStart[m] = j;
    for (const f of files) f.slots = f.slots.map((s) => remap[s]);
    this.ivf?.remap(remap);
    this.seen = new Int32Array(this.postings.length);
    this.n = m;
    this.posted = 0;
    this.normsFor = -1;
    this.flush();
  }

  /** BM25's per-chunk length normalization, recomputed when the average length moved. */
  private normsNow(): Float32Array {
    const avg = this.avgLength();
    if (this.normsFor !== avg || this.norms.length < this.n) {
      this.norms = new Float32Array(this.n);
      for (let s = 0; s < this.n; s++) this.norms[s] = K1 * (1 - B + (B * this.lengths[s]) / avg);
      this.normsFor = avg;
    }
    return this.norms;
  }

  private avgLength(): number {
    return this.live && this.totalLength ? this.totalLength / this.live : 1;
  }

  /** The query's distinct words with their idf, and the BM25 ceiling (Σ idf·(k1+1)). */
  private queryTerms(queryWords: readonly string[]): { terms: QueryTerm[]; ceiling: number } {
    let ceiling = 0;
    const terms: QueryTerm[] = [];
    for (const w of new Set(queryWords)) {
      const t = this.terms.id(w);
      const p = t < 0 ? undefined : this.postings[t];
      const df = p?.df ?? 0;
      const idf = Math.log(1 + (this.live - df + 0.5) / (df + 0.5));
      ceiling += idf * (K1 + 1);
      terms.push({ idf, t, p: df ? p : undefined });
    }
    return { terms, ceiling };
  }

  /**
   * BM25 of every slot for the words, scaled into 0..1: divided by what a chunk would score that held every
   * query word infinitely often (each word's ceiling is idf·(k1+1)); `weight ·` that is added into `out`.
   */
  private addBm25(queryWords: readonly string[], weight: number, out: Float32Array): void {
    if (!queryWords.length || !this.live) return;
    const norms = this.normsNow();
    const { terms, ceiling } = this.queryTerms(queryWords);
    const scale = weight / ceiling;
    for (const { idf, p } of terms) {
      if (!p) continue;
      const factor = scale * idf * (K1 + 1);
      for (let j = 0; j < p.len; j++) {
        const s = p.docs[j];
        const tf = p.tfs[j];
        out[s] += (factor * tf) / (tf + norms[s]);
      }
    }
  }

  /**
   * The best scores over the queries of every slot (0 for dead slots and files the filter leaves out):
   * `ranker: none` ranks by embedding similarity alone; otherwise half and half with BM25. Without any
   * vector of the current embedder, BM25 alone.
   */
  score(queries: readonly Query[], ranker: string, filter: Filter | undefined): Float32Array {
    this.flush();
    const n = this.n;
    const best = new Float32Array(n);
    const one = new Float32Array(n);
    const vectorWeight = !this.vectorCount ? 0 : ranker === 'none' ? 1 : 0.5;
    const lexicalWeight = 1 - vectorWeight;
    const d = this.dimensions;
    const v = this.vectors;
    for (const q of queries) {
      one.fill(0);
      if (vectorWeight > 0 && q.vector && q.vector.length === d) {
        const qv = q.vector;
        const d4 = d - (d % 4);
        for (let i = 0; i < n; i++) {
          const off = i * d;
          if (!this.hasVector[i] || !this.alive[i]) continue;
          let a = 0;
          let b = 0;
          let c = 0;
          let e = 0;
          let k = 0;
          for (; k < d4; k += 4) {
            a += v[off + k] * qv[k];
            b += v[off + k + 1] * qv[k + 1];
            c += v[off + k + 2] * qv[k + 2];
            e += v[off + k + 3] * qv[k + 3];
          }
          for (; k < d; k++) a += v[off + k] * qv[k];
          const dot = a + b + c + e;
          if (dot > 0) one[i] = vectorWeight * Math.min(1, dot);
        }
      }
      if (lexicalWeight > 0) this.addBm25(q.words, lexicalWeight, one);
      for (let i = 0; i < n; i++) if (one[i] > best[i]) best[i] = one[i];
    }
    const allowed = this.allowed(filter);
    for (let i = 0; i < n; i++) if (!this.alive[i] || (allowed && !allowed[this.fileOf[i]])) best[i] = 0;
    return best;
  }

  /** Per file number, 1 when the filter keeps the file (null: no filter). */
  private allowed(filter: Filter | undefined): Uint8Array | null {
    return filter ? Uint8Array.from(this.fileList, (f) => (f && matches(filter, f.attributes) ? 1 : 0)) : null;
  }

  /** The int8 cosine of slot `s` with a query vector. */
  private dot8(s: number, qv: Float32Array): number {
    const d = this.dimensions;
    const v = this.q8;
    const off = s * d;
    let a = 0;
    let b = 0;
    let c = 0;
    let e = 0;
    let k = 0;
    for (; k + 3 < d; k += 4) {
      a += v[off + k] * qv[k];
      b += v[off + k + 1] * qv[k + 1];
      c += v[off + k + 2] * qv[k + 2];
      e += v[off + k + 3] * qv[k + 3];
    }
    for (; k < d; k++) a += v[off + k] * qv[k];
    return (a + b + c + e) * this.qscale[s];
  }

  /**
   * An approximate store's candidates and their scores: per query, the `k` best chunks by cosine among the
   * lists its quantizer points to (every vector before it is trained) and the `k` best by BM25 (exact); the
   * union is scored as `score` would (with the int8 vectors), best over the queries.
   */
  candidates(queries: readonly Query[], ranker: string, filter: Filter | undefined, k: number): { slots: number[]; scores: number[] } {
    this.flush();
    const vectorWeight = !this.vectorCount ? 0 : ranker === 'none' ? 1 : 0.5;
    const lexicalWeight = 1 - vectorWeight;
    const allowed = this.allowed(filter);
    const ok = (s: number) => this.alive[s] === 1 && (!allowed || allowed[this.fileOf[s]] === 1);
    const pool = new Set<number>();
    const prepared = queries.map((q) => ({
      vector: vectorWeight > 0 && q.vector && q.vector.length === this.dimensions ? q.vector : null,
      ...this.queryTerms(lexicalWeight > 0 ? q.words : []),
    }));
    const norms = this.normsNow();
    for (const q of prepared) {
      if (q.vector) this.vectorTop(q.vector, k, ok, pool);
      if (q.terms.length && this.live) this.lexicalTop(q.terms, k, ok, pool, norms);
    }
    const slots = [...pool];
    const scores = slots.map((s) => {
      let best = 0;
      for (const q of prepared) {
        let one = 0;
        if (q.vector && this.hasVector[s]) {
          const dot = this.dot8(s, q.vector);
          if (dot > 0) one = vectorWeight * Math.min(1, dot);
        }
        if (q.terms.length) {
          const scale = lexicalWeight / q.ceiling;
          for (const { idf, t, p } of q.terms) {
            if (!p) continue;
            for (let j = this.termStart[s]; j < this.termStart[s + 1]; j++)
              if (this.slotTerms[j] === t) {
                const tf = this.slotTfs[j];
                one += (scale * idf * (K1 + 1) * tf) / (tf + norms[s]);
                break;
              }
          }
        }
        one = Math.fround(one);
        if (one > best) best = one;
      }
      return best;
    });
    return { slots, scores };
  }

  /**
   * The `k` best slots by (int8) cosine among those the quantizer points to, into `out`: the dot products
   * a run of consecutive slots at a time (a list's slots follow one another since `inListOrder`) by the
   * WebAssembly kernel (int8-rows.ts), against the query rounded to int16.
   */
  private vectorTop(qv: Float32Array, k: number, ok: (s: number) => boolean, out: Set<number>): void {
    const top = new TopK(k);
    const lists = this.ivf ? this.ivf.probe(qv) : [{ slots: null, len: this.n }];
    const { rows8, qscale, hasVector } = this;
    const unit = rows8.setQuery(qv);
    if (!unit) return;
    for (const { slots, len } of lists)
      for (let j = 0; j < len;) {
        const from = slots ? slots[j] : j;
        let run = 1;
        while (run < BLOCK && j + run < len && (slots ? slots[j + run] : j + run) === from + run) run++;
        const dots = rows8.dots(from, run);
        for (let i = 0; i < run; i++) {
          const s = from + i;
          const dot = dots[i] * unit * qscale[s];
          if (dot > 0 && dot > top.floor && hasVector[s] && ok(s)) top.push(s, dot);
        }
        j += run;
      }
    for (let i = 0; i < top.size; i++) out.add(top.slots[i]);
  }

  /**
   * The `k` best slots by BM25 for the words (exact, up to ties), into `out`: chunk at a time over the
   * words' postings (each in slot order) with MaxScore. Each word's bound is its idf·(k1+1)·tf/(tf+norm)
   * at its highest count and shortest chunk; the words are taken from the lowest bound up, and those whose
   * bounds together cannot lift a chunk past the k-th best so far are no longer walked, only looked up
   * (galloping forward) for the chunks the others bring, and not even that once a chunk cannot reach the
   * k-th best. The postings are read in order and each chunk's norm once, where a score per slot
   * accumulated word after word read memory at random (docs/files.md, "The vector half in WebAssembly,
   * the lexical half a chunk at a time").
   */
  private lexicalTop(terms: QueryTerm[], k: number, ok: (s: number) => boolean, out: Set<number>, norms: Float32Array): void {
    const avg = this.avgLength();
    const list = terms
      .filter((t) => t.p)
      .map(({ idf, p }) => {
        const w = idf * (K1 + 1);
        const tf = p!.maxTf;
        return { p: p!, w, ub: ((w * tf) / (tf + K1 * (1 - B + (B * p!.minLen) / avg))) * (1 + 1e-6) };
      })
      .sort((a, b) => a.ub - b.ub);
    const m = list.length;
    if (!m) return;
    // below[i]: the bounds of words 0 … i - 1 together.
    const below = new Float64Array(m + 1);
    for (let i = 0; i < m; i++) below[i + 1] = below[i] + list[i].ub;
    const at = new Int32Array(m);
    const next = (i: number) => (at[i] < list[i].p.len ? list[i].p.docs[at[i]] : NONE);
    // The walked words (first … m - 1), a min-heap on the slot each is at.
    let first = 0;
    const heap = new Int32Array(m);
    let size = 0;
    const down = (h: number) => {
      for (;;) {
        const l = 2 * h + 1;
        if (l >= size) return;
        const c = l + 1 < size && next(heap[l + 1]) < next(heap[l]) ? l + 1 : l;
        if (next(heap[c]) >= next(heap[h])) return;
        [heap[c], heap[h]] = [heap[h], heap[c]];
        h = c;
      }
    };
    const walk = () => {
      size = 0;
      for (let i = first; i < m; i++) heap[size++] = i;
      for (let h = (size >> 1) - 1; h >= 0; h--) down(h);
    };
    walk();
    const top = new TopK(k);
    let theta = 0;
    while (size) {
      const s = next(heap[0]);
      if (s === NONE) break;
      const alive = ok(s);
      let score = 0;
      while (size && next(heap[0]) === s) {
        const i = heap[0];
        if (alive) {
          const tf = list[i].p.tfs[at[i]];
          score += (list[i].w * tf) / (tf + norms[s]);
        }
        at[i]++;
        down(0);
      }
      if (!alive) continue;
      for (let i = first - 1; i >= 0 && score + below[i + 1] > theta; i--) {
        const p = list[i].p;
        const j = (at[i] = gallop(p.docs, at[i], p.len, s));
        if (j < p.len && p.docs[j] === s) score += (list[i].w * p.tfs[j]) / (p.tfs[j] + norms[s]);
      }
      top.push(s, score);
      if (top.size < k) continue;
      theta = top.floor;
      if (below[first + 1] <= theta) {
        while (first < m && below[first + 1] <= theta) first++;
        walk();
      }
    }
    for (let i = 0; i < top.size; i++) out.add(top.slots[i]);
  }

  /** The chunk in a slot. */
  candidate(slot: number, score: number): Candidate {
    const f = this.fileList[this.fileOf[slot]]!;
    return { fileId: f.id, filename: f.filename, attributes: f.attributes, seq: this.seqs[slot], score };
  }
}

/** Ranks candidates: higher score first, then store order, file id and chunk order (the same answer on every instance). */
export function before(a: Candidate & { store: number }, b: Candidate & { store: number }): boolean {
  if (a.score !== b.score) return a.score > b.score;
  if (a.store !== b.store) return a.store < b.store;
  if (a.fileId !== b.fileId) return a.fileId < b.fileId;
  return a.seq < b.seq;
}

/** The best `max` chunks of the stores scoring at least `threshold` (and above 0), best first. */
export function searchIndexes(
  indexes: readonly (StoreIndex | undefined)[],
  queries: readonly Query[],
  opts: { ranker: string; filter?: Filter; max: number; threshold: number },
): (Candidate & { store: number })[] {
  const top: (Candidate & { store: number })[] = [];
  const consider = (index: StoreIndex, store: number, i: number, sc: number) => {
    if (sc <= 0 || sc < opts.threshold || (top.length === opts.max && sc < top[opts.max - 1].score)) return;
    const c = { ...index.candidate(i, sc), store };
    if (top.length === opts.max && !before(c, top[opts.max - 1])) return;
    let at = top.length;
    while (at > 0 && before(c, top[at - 1])) at--;
    top.splice(at, 0, c);
    if (top.length > opts.max) top.pop();
  };
  indexes.forEach((index, store) => {
    if (!index) return;
    if (index.approximate) {
      const { slots, scores } = index.candidates(queries, opts.ranker, opts.filter, Math.max(CANDIDATES, 4 * opts.max));
      slots.forEach((s, i) => consider(index, store, s, scores[i]));
      return;
    }
    const scores = index.score(queries, opts.ranker, opts.filter);
    for (let i = 0; i < scores.length; i++) consider(index, store, i, scores[i]);
  });
  return top;
}
