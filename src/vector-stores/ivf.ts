/**
 * A large store's coarse quantizer (an inverted file in two levels), for the vector half of its search
 * (index-core.ts): TOP centroids, each with SUB centroids of its own (TOP·SUB lists), trained once by
 * spherical k-means on a sample. A vector joins the list of its nearest sub-centroid under its nearest
 * top centroid (TOP + SUB dot products, not TOP·SUB); a query ranks the sub-centroids under its
 * TOP_PROBE nearest top centroids and reads their lists, nearest first, until it has read SCAN vectors.
 * Vectors are int8 rows (the index's quantized vectors); their scale does not change which centroid is nearest.
 */
export const TOP = 32;
export const SUB = 32;
const TOP_PROBE = 6;
/** Vectors a query reads at least (when the probed lists hold that many). */
export const SCAN = 16_384;
const ROUNDS = 5;

export interface List {
  slots: Int32Array;
  len: number;
}

/** Dot products of row `off` of `rows` with each of `count` centroids. */
function dots(c: Float32Array, count: number, d: number, rows: Float32Array, off: number, out: Float64Array): void {
  for (let j = 0; j < count; j++) {
    const o = j * d;
    let a = 0;
    let b = 0;
    let e = 0;
    let f = 0;
    let x = 0;
    for (; x + 3 < d; x += 4) {
      a += c[o + x] * rows[off + x];
      b += c[o + x + 1] * rows[off + x + 1];
      e += c[o + x + 2] * rows[off + x + 2];
      f += c[o + x + 3] * rows[off + x + 3];
    }
    for (; x < d; x++) a += c[o + x] * rows[off + x];
    out[j] = a + b + e + f;
  }
}

function argmax(a: Float64Array, count: number): number {
  let best = 0;
  for (let j = 1; j < count; j++) if (a[j] > a[best]) best = j;
  return best;
}

/** Spherical k-means of `points` (m rows of d, unit or not) into k centroids, deterministic. */
export function kmeans(points: Float32Array, m: number, d: number, k: number, rounds = ROUNDS): Float32Array<ArrayBuffer> {
  const c = new Float32Array(k * d);
  if (!m) return c;
  for (let j = 0; j < k; j++) {
    const o = Math.floor((j * m) / k) * d;
    c.set(points.subarray(o, o + d), j * d);
  }
  const of = new Int32Array(m);
  const scratch = new Float64Array(k);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < m; i++) {
      dots(c, k, d, points, i * d, scratch);
      of[i] = argmax(scratch, k);
    }
    const sums = new Float64Array(k * d);
    for (let i = 0; i < m; i++) for (let x = 0; x < d; x++) sums[of[i] * d + x] += points[i * d + x];
    for (let j = 0; j < k; j++) {
      let norm = 0;
      for (let x = 0; x < d; x++) norm += sums[j * d + x] ** 2;
      // A centroid left without members keeps its place.
      if (norm > 0) for (let x = 0; x < d; x++) c[j * d + x] = sums[j * d + x] / Math.sqrt(norm);
    }
  }
  return c;
}

/** A quantizer as saved: `top` and `sub` centroids, each list's length, and the lists' slots in list order. */
export interface QuantizerParts {
  top: Float32Array<ArrayBuffer>;
  sub: Float32Array<ArrayBuffer>;
  lens: Uint32Array<ArrayBuffer>;
  slots: Int32Array<ArrayBuffer>;
}

export class CoarseQuantizer {
  readonly lists: List[] = Array.from({ length: TOP * SUB }, () => ({ slots: new Int32Array(8), len: 0 }));
  private readonly scratchTop = new Float64Array(TOP);
  private readonly scratchSub = new Float64Array(SUB);
  /** The row being filed, as floats (the dot products then read one kind of array only). */
  private readonly row: Float32Array;

  private constructor(
    private readonly d: number,
    private readonly top: Float32Array<ArrayBuffer>,
    private readonly sub: Float32Array<ArrayBuffer>,
  ) {
    this.row = new Float32Array(d);
  }

  /** Trains on `m` sample rows of `d` floats. */
  static train(sample: Float32Array, m: number, d: number): CoarseQuantizer {
    const top = kmeans(sample, m, d, TOP);
    const sub = new Float32Array(TOP * SUB * d);
    const scratch = new Float64Array(TOP);
    const members: number[][] = Array.from({ length: TOP }, () => []);
    for (let i = 0; i < m; i++) {
      dots(top, TOP, d, sample, i * d, scratch);
      members[argmax(scratch, TOP)].push(i);
    }
    members.forEach((rows, t) => {
      const pts = new Float32Array(Math.max(1, rows.length) * d);
      if (rows.length) rows.forEach((r, i) => pts.set(sample.subarray(r * d, (r + 1) * d), i * d));
      else pts.set(top.subarray(t * d, (t + 1) * d));
      sub.set(kmeans(pts, Math.max(1, rows.length), d, SUB), t * SUB * d);
    });
    return new CoarseQuantizer(d, top, sub);
  }

  /** What a saved index keeps of it (index-file.ts): the centroids, and each list's slots one after another. */
  parts(): QuantizerParts {
    const lens = new Uint32Array(this.lists.length);
    let total = 0;
    this.lists.forEach((l, i) => (total += lens[i] = l.len));
    const slots = new Int32Array(total);
    let at = 0;
    for (const l of this.lists) {
      slots.set(l.slots.subarray(0, l.len), at);
      at += l.len;
    }
    return { top: this.top, sub: this.sub, lens, slots };
  }

  /**
   * The quantizer of a saved index, its parts checked: the centroids' sizes for `d`, one length per list
   * adding up to the slots given, and every slot below `n` (a list read by a query indexes the store's rows).
   */
  static restore(parts: QuantizerParts, d: number, n: number): CoarseQuantizer {
    const { top, sub, lens, slots } = parts;
    if (top.length !== TOP * d || sub.length !== TOP * SUB * d || lens.length !== TOP * SUB)
      throw new Error('the quantizer does not match its dimensions');
    let total = 0;
    for (const len of lens) total += len;
    if (total !== slots.length) throw new Error("the quantizer's lists do not add up");
    for (const s of slots) if (s < 0 || s >= n) throw new Error("a quantizer's list names a chunk the index does not hold");
    const q = new CoarseQuantizer(d, top, sub);
    let at = 0;
    q.lists.forEach((l, i) => {
      l.slots = slots.slice(at, at + lens[i]);
      if (l.slots.length < 8) {
        const room = new Int32Array(8);
        room.set(l.slots);
        l.slots = room;
      }
      l.len = lens[i];
      at += lens[i];
    });
    return q;
  }

  /** Files slot `slot`, whose vector is row `off` of `rows`. */
  add(slot: number, rows: ArrayLike<number>, off: number): void {
    const d = this.d;
    const row = this.row;
    for (let x = 0; x < d; x++) row[x] = rows[off + x];
    dots(this.top, TOP, d, row, 0, this.scratchTop);
    const t = argmax(this.scratchTop, TOP);
    dots(this.sub.subarray(t * SUB * d, (t + 1) * SUB * d), SUB, d, row, 0, this.scratchSub);
    const list = this.lists[t * SUB + argmax(this.scratchSub, SUB)];
    if (list.len === list.slots.length) {
      const grown = new Int32Array(list.len * 2);
      grown.set(list.slots);
      list.slots = grown;
    }
    list.slots[list.len++] = slot;
  }

  /** The lists a query reads, nearest first, until they hold `SCAN` slots (dead ones included). */
  probe(q: Float32Array): List[] {
    const d = this.d;
    const topDots = new Float64Array(TOP);
    dots(this.top, TOP, d, q, 0, topDots);
    const tops = [...topDots.keys()].sort((a, b) => topDots[b] - topDots[a]).slice(0, TOP_PROBE);
    const ranked: { list: number; dot: number }[] = [];
    const subDots = new Float64Array(SUB);
    for (const t of tops) {
      dots(this.sub.subarray(t * SUB * d, (t + 1) * SUB * d), SUB, d, q, 0, subDots);
      for (let j = 0; j < SUB; j++) ranked.push({ list: t * SUB + j, dot: subDots[j] });
    }
    ranked.sort((a, b) => b.dot - a.dot || a.list - b.list);
    const out: List[] = [];
    let held = 0;
    for (const { list } of ranked) {
      if (held >= SCAN) break;
      const l = this.lists[list];
      if (!l.len) continue;
      out.push(l);
      held += l.len;
    }
    return out;
  }

  /** After a compaction: old slot → new slot (-1: gone). */
  remap(remap: Int32Array): void {
    for (const l of this.lists) {
      let len = 0;
      for (let j = 0; j < l.len; j++) if (remap[l.slots[j]] >= 0) l.slots[len++] = remap[l.slots[j]];
      l.len = len;
    }
  }

  bytes(): number {
    let b = this.top.byteLength + this.sub.byteLength;
    for (const l of this.lists) b += l.slots.byteLength;
    return b;
  }
}
