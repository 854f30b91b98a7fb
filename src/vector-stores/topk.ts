/**
 * The best `k` slots by a score (a min-heap on the score; equal scores keep the lower slot), for the
 * candidate lists of a large store's search (index-core.ts).
 */
export class TopK {
  readonly slots: Int32Array;
  readonly scores: Float64Array;
  size = 0;

  constructor(readonly k: number) {
    this.slots = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  /** The score a slot must beat to enter once the heap is full (-Infinity before). */
  get floor(): number {
    return this.size < this.k ? -Infinity : this.scores[0];
  }

  push(slot: number, score: number): void {
    const { slots, scores } = this;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (scores[p] <= score) break;
        slots[i] = slots[p];
        scores[i] = scores[p];
        i = p;
      }
      slots[i] = slot;
      scores[i] = score;
      return;
    }
    if (score <= scores[0]) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const r = l + 1;
      const c = r < this.size && scores[r] < scores[l] ? r : l;
      if (scores[c] >= score) break;
      slots[i] = slots[c];
      scores[i] = scores[c];
      i = c;
    }
    slots[i] = slot;
    scores[i] = score;
  }
}

/** The k-th largest of `values[0..count)` (0 when fewer), without changing `values`' order beyond `work`. */
export function kthLargest(values: Float64Array, count: number, k: number, work: Float64Array): number {
  if (count < k) return 0;
  const a = work.subarray(0, count);
  a.set(values.subarray(0, count));
  // Quickselect for index count - k in ascending order.
  let lo = 0;
  let hi = count - 1;
  const want = count - k;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    if (want <= j) hi = j;
    else if (want >= i) lo = i;
    else break;
  }
  return a[want];
}
