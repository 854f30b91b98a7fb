import { matches, type Attributes, type Filter } from './filters.js';
import { words } from './lexical.js';

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
 * From `approximateFrom` vectors on (--search-approximate-from; never by default), a store's vectors are
 * searched through a coarse quantizer (an inverted file): LISTS centroids, trained once by spherical k-means
 * on a sample; each vector joins the list of its nearest centroid as it is added, and a query compares
 * itself with the vectors of its PROBE nearest lists only. The lexical half always covers every chunk.
 */
const LISTS = 256;
const PROBE = 16;
const TRAIN_SAMPLE = 8192;
const TRAIN_ROUNDS = 6;

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

/** Grows a typed array to at least `need` elements (doubling). */
function grow<T extends Float32Array | Int32Array | Uint32Array | Uint16Array | Uint8Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2, 16));
  b.set(a);
  return b;
}

interface Posting {
  docs: Int32Array;
  tfs: Uint16Array;
  len: number;
  /** Live chunks holding the word. */
  df: number;
}

export class StoreIndex {
  dimensions = 0;
  /** Centroids (LISTS × dimensions) once trained, and each list's slots. */
  private centroids: Float32Array | null = null;
  private lists: { slots: Int32Array; len: number }[] = [];

  /** `approximateFrom`: vectors from which the quantizer is trained (Infinity: every vector is always compared). */
  constructor(private readonly approximateFrom = Infinity) {}

  private n = 0;
  private live = 0;
  private totalLength = 0;
  private vectors = new Float32Array(0);
  private hasVector = new Uint8Array(0);
  private alive = new Uint8Array(0);
  private fileOf = new Int32Array(0);
  private seqs = new Uint32Array(0);
  private lengths = new Uint32Array(0);
  /** Each slot's distinct words (term ids) and their counts, at `termStart[slot]`…`termStart[slot + 1]`. */
  private termStart = new Uint32Array(1);
  private slotTerms = new Int32Array(0);
  private slotTfs = new Uint16Array(0);
  private termIds = new Map<string, number>();
  private postings: Posting[] = [];
  private files = new Map<string, FileEntry>();
  private fileList: (FileEntry | undefined)[] = [];
  private norms = new Float32Array(0);
  private normsFor = -1;
  private vectorCount = 0;

  /** Chunks held (live). */
  get size(): number {
    return this.live;
  }

  /** Bytes this index holds (typed arrays and an estimate of the word map), for the memory budget. */
  bytes(): number {
    let b =
      this.vectors.byteLength +
      this.hasVector.byteLength +
      this.alive.byteLength +
      this.fileOf.byteLength +
      this.seqs.byteLength +
      this.lengths.byteLength +
      this.termStart.byteLength +
      this.slotTerms.byteLength +
      this.slotTfs.byteLength +
      this.norms.byteLength;
    for (const p of this.postings) b += p.docs.byteLength + p.tfs.byteLength + 64;
    for (const l of this.lists) b += l.slots.byteLength;
    b += this.centroids?.byteLength ?? 0;
    return b + this.termIds.size * 64 + this.files.size * 256;
  }

  /** Sets (or replaces the name and attributes of) files; their chunks come with `addChunks`. */
  setFiles(metas: readonly FileMeta[]): void {
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

  /** Adds chunks of files given to `setFiles` (chunks of a file not there are ignored). */
  addChunks(page: ChunkPage): void {
    const count = page.texts.length;
    if (!this.dimensions && page.dimensions) this.dimensions = page.dimensions;
    const d = this.dimensions;
    const need = this.n + count;
    this.vectors = grow(this.vectors, need * d);
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
        this.vectors.set(page.vectors.subarray(i * d, (i + 1) * d), s * d);
        this.hasVector[s] = 1;
        this.vectorCount++;
        if (this.centroids) this.assign(s);
      } else this.hasVector[s] = 0;
      const ws = words(page.texts[i]);
      this.lengths[s] = ws.length;
      this.totalLength += ws.length;
      const counts = new Map<string, number>();
      for (const w of ws) counts.set(w, (counts.get(w) ?? 0) + 1);
      const start = this.termStart[s];
      this.slotTerms = grow(this.slotTerms, start + counts.size);
      this.slotTfs = grow(this.slotTfs, start + counts.size);
      let j = start;
      for (const [w, tf] of counts) {
        let t = this.termIds.get(w);
        if (t === undefined) {
          t = this.postings.length;
          this.termIds.set(w, t);
          this.postings.push({ docs: new Int32Array(4), tfs: new Uint16Array(4), len: 0, df: 0 });
        }
        const p = this.postings[t];
        p.docs = grow(p.docs, p.len + 1);
        p.tfs = grow(p.tfs, p.len + 1);
        p.docs[p.len] = s;
        p.tfs[p.len++] = Math.min(tf, 65_535);
        p.df++;
        this.slotTerms[j] = t;
        this.slotTfs[j++] = Math.min(tf, 65_535);
      }
      this.termStart[s + 1] = j;
    }
    if (!this.centroids && this.vectorCount >= this.approximateFrom) this.train();
  }

  /** The `count` centroids nearest a vector (by dot product), best first. */
  private nearest(v: Float32Array, off: number, count: number): number[] {
    const c = this.centroids!;
    const d = this.dimensions;
    const k = c.length / d;
    const dots = count === 1 ? null : new Float32Array(k);
    let best = 0;
    let bestDot = -Infinity;
    for (let j = 0; j < k; j++) {
      let a = 0;
      let b = 0;
      let e = 0;
      let f = 0;
      let x = 0;
      const o = j * d;
      for (; x + 3 < d; x += 4) {
        a += c[o + x] * v[off + x];
        b += c[o + x + 1] * v[off + x + 1];
        e += c[o + x + 2] * v[off + x + 2];
        f += c[o + x + 3] * v[off + x + 3];
      }
      for (; x < d; x++) a += c[o + x] * v[off + x];
      const dot = a + b + e + f;
      if (dots) dots[j] = dot;
      else if (dot > bestDot) {
        bestDot = dot;
        best = j;
      }
    }
    if (!dots) return [best];
    return [...dots.keys()].sort((a, b) => dots[b] - dots[a]).slice(0, count);
  }

  private assign(s: number): void {
    const list = this.lists[this.nearest(this.vectors, s * this.dimensions, 1)[0]];
    list.slots = grow(list.slots, list.len + 1);
    list.slots[list.len++] = s;
  }

  /** Spherical k-means over an even sample of the live vectors (deterministic), then every vector assigned. */
  private train(): void {
    const d = this.dimensions;
    const live: number[] = [];
    for (let s = 0; s < this.n; s++) if (this.alive[s] && this.hasVector[s]) live.push(s);
    const step = Math.max(1, Math.floor(live.length / TRAIN_SAMPLE));
    const sample = live.filter((_, i) => i % step === 0).slice(0, TRAIN_SAMPLE);
    const k = Math.min(LISTS, sample.length);
    const c = new Float32Array(k * d);
    for (let j = 0; j < k; j++) {
      const o = sample[Math.floor((j * sample.length) / k)] * d;
      c.set(this.vectors.subarray(o, o + d), j * d);
    }
    this.centroids = c;
    const of = new Int32Array(sample.length);
    for (let round = 0; round < TRAIN_ROUNDS; round++) {
      sample.forEach((s, i) => (of[i] = this.nearest(this.vectors, s * d, 1)[0]));
      const sums = new Float32Array(k * d);
      sample.forEach((s, i) => {
        for (let x = 0; x < d; x++) sums[of[i] * d + x] += this.vectors[s * d + x];
      });
      for (let j = 0; j < k; j++) {
        let norm = 0;
        for (let x = 0; x < d; x++) norm += sums[j * d + x] ** 2;
        // A centroid left without members keeps its place.
        if (norm > 0) for (let x = 0; x < d; x++) c[j * d + x] = sums[j * d + x] / Math.sqrt(norm);
      }
    }
    this.lists = Array.from({ length: k }, () => ({ slots: new Int32Array(16), len: 0 }));
    for (const s of live) this.assign(s);
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
    this.vectors = new Float32Array(m * d);
    this.hasVector = new Uint8Array(m);
    this.alive = new Uint8Array(m).fill(1);
    this.fileOf = new Int32Array(m);
    this.seqs = new Uint32Array(m);
    this.lengths = new Uint32Array(m);
    this.termStart = new Uint32Array(m + 1);
    let terms = 0;
    for (const s of keep) terms += old.termStart[s + 1] - old.termStart[s];
    this.slotTerms = new Int32Array(terms);
    this.slotTfs = new Uint16Array(terms);
    const newIds = new Map<string, number>();
    const oldWords: string[] = new Array(old.postings.length);
    for (const [w, t] of old.termIds) oldWords[t] = w;
    this.termIds = newIds;
    this.postings = [];
    let j = 0;
    keep.forEach((s, i) => {
      if (d) this.vectors.set(old.vectors.subarray(s * d, (s + 1) * d), i * d);
      this.hasVector[i] = old.hasVector[s];
      this.fileOf[i] = old.fileList[old.fileOf[s]]!.num;
      this.seqs[i] = old.seqs[s];
      this.lengths[i] = old.lengths[s];
      this.termStart[i] = j;
      for (let k = old.termStart[s]; k < old.termStart[s + 1]; k++) {
        const w = oldWords[old.slotTerms[k]];
        let t = newIds.get(w);
        if (t === undefined) {
          t = this.postings.length;
          newIds.set(w, t);
          this.postings.push({ docs: new Int32Array(4), tfs: new Uint16Array(4), len: 0, df: 0 });
        }
        const p = this.postings[t];
        p.docs = grow(p.docs, p.len + 1);
        p.tfs = grow(p.tfs, p.len + 1);
        p.docs[p.len] = i;
        p.tfs[p.len++] = old.slotTfs[k];
        p.df++;
        this.slotTerms[j] = t;
        this.slotTfs[j++] = old.slotTfs[k];
      }
    });
    this.termStart[m] = j;
    for (const f of files) f.slots = f.slots.map((s) => remap[s]);
    for (const l of this.lists) {
      let len = 0;
      for (let j = 0; j < l.len; j++) if (remap[l.slots[j]] >= 0) l.slots[len++] = remap[l.slots[j]];
      l.len = len;
    }
    this.n = m;
    this.normsFor = -1;
  }

  /** BM25's per-chunk length normalization, recomputed when the average length moved. */
  private normsNow(): Float32Array {
    const avg = this.live && this.totalLength ? this.totalLength / this.live : 1;
    if (this.normsFor !== avg || this.norms.length < this.n) {
      this.norms = new Float32Array(this.n);
      for (let s = 0; s < this.n; s++) this.norms[s] = K1 * (1 - B + (B * this.lengths[s]) / avg);
      this.normsFor = avg;
    }
    return this.norms;
  }

  /**
   * BM25 of every slot for the words, scaled into 0..1: divided by what a chunk would score that held every
   * query word infinitely often (each word's ceiling is idf·(k1+1)); `weight ·` that is added into `out`.
   */
  private addBm25(queryWords: readonly string[], weight: number, out: Float32Array): void {
    const unique = [...new Set(queryWords)];
    if (!unique.length || !this.live) return;
    const norms = this.normsNow();
    let ceiling = 0;
    const terms: { idf: number; p?: Posting }[] = [];
    for (const w of unique) {
      const t = this.termIds.get(w);
      const p = t === undefined ? undefined : this.postings[t];
      const df = p?.df ?? 0;
      const idf = Math.log(1 + (this.live - df + 0.5) / (df + 0.5));
      ceiling += idf * (K1 + 1);
      terms.push({ idf, p: df ? p : undefined });
    }
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
        const probed = this.centroids ? this.nearest(qv, 0, PROBE).map((j) => this.lists[j]) : null;
        const total = probed ? probed.reduce((sum, l) => sum + l.len, 0) : n;
        for (let at = 0, li = 0, lj = 0; at < total; at++) {
          let i: number;
          if (probed) {
            while (lj >= probed[li].len) {
              li++;
              lj = 0;
            }
            i = probed[li].slots[lj++];
          } else i = at;
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
    const allowed = filter ? this.fileList.map((f) => (f && matches(filter, f.attributes) ? 1 : 0)) : null;
    for (let i = 0; i < n; i++) if (!this.alive[i] || (allowed && !allowed[this.fileOf[i]])) best[i] = 0;
    return best;
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
  indexes.forEach((index, store) => {
    if (!index) return;
    const scores = index.score(queries, opts.ranker, opts.filter);
    for (let i = 0; i < scores.length; i++) {
      const sc = scores[i];
      if (sc <= 0 || sc < opts.threshold || (top.length === opts.max && sc < top[opts.max - 1].score)) continue;
      const c = { ...index.candidate(i, sc), store };
      if (top.length === opts.max && !before(c, top[opts.max - 1])) continue;
      let at = top.length;
      while (at > 0 && before(c, top[at - 1])) at--;
      top.splice(at, 0, c);
      if (top.length > opts.max) top.pop();
    }
  });
  return top;
}
