/**
 * Pre-tokens remembered with their tokens, in flat typed arrays: a slot holds where its entry starts in
 * `pool` plus one (0: the slot is empty, so the zeroed array costs nothing until written), the
 * pre-token's hash and its lengths; the entry is the pre-token's UTF-16 units followed by its
 * tokens, two units each (low half, high half). A look-up reads the slot and one stretch of the pool
 * (tokenizing makes one for every pre-token of a text; keys and values as strings and arrays cost a
 * chase through memory each). When full it starts over.
 */
export class PieceCache {
  private slots = new Int32Array(4 * SLOTS);
  private pool = new Uint16Array(1 << 20);
  private used = 0;
  private entries = 0;

  /** Where the tokens of the pre-token `units[from, to)` (UTF-16 units) start in `values()` (and how many, in `count`), or `-1 - slot` of a free slot for `add`. */
  find(units: Uint16Array, from: number, to: number, h: number): number {
    const slots = this.slots;
    const pool = this.pool;
    const length = to - from;
    for (let slot = h & (SLOTS - 1); ; slot = (slot + 1) & (SLOTS - 1)) {
      const at = slot * 4;
      if (slots[at] === 0) return -1 - slot;
      if (slots[at + 1] !== h || slots[at + 2] >>> 16 !== length) continue;
      let i = 0;
      const start = slots[at] - 1;
      while (i < length && pool[start + i] === units[from + i]) i++;
      if (i === length) {
        this.count = slots[at + 2] & 0xffff;
        return start + length;
      }
    }
  }

  /** Tokens of the entry `find` or `add` returned last. */
  count = 0;
  /** The pool: valid until the next `add`. */
  values = () => this.pool;

  /** Remembers `tokens` for `units[from, to)` in the free slot `find` named; returns where they start, as `find` does. */
  add(units: Uint16Array, from: number, to: number, h: number, free: number, tokens: readonly number[]): number {
    const length = to - from;
    const need = length + 2 * tokens.length;
    if (length > 0xffff || tokens.length > 0xffff || need > MAX_POOL) throw new RangeError('a pre-token too long to remember');
    if (this.used + need > this.pool.length && this.pool.length < MAX_POOL) {
      const grown = new Uint16Array(Math.min(MAX_POOL, Math.max(this.pool.length * 2, this.used + need)));
      grown.set(this.pool.subarray(0, this.used));
      this.pool = grown;
    }
    if (this.entries >= CAPACITY || this.used + need > this.pool.length) {
      this.slots.fill(0);
      this.used = 0;
      this.entries = 0;
      free = this.find(units, from, to, h);
    }
    const slot = -1 - free;
    const start = this.used;
    const pool = this.pool;
    pool.set(units.subarray(from, to), start);
    for (let i = 0; i < tokens.length; i++) {
      pool[start + length + 2 * i] = tokens[i] & 0xffff;
      pool[start + length + 2 * i + 1] = tokens[i] >>> 16;
    }
    this.used += need;
    this.entries++;
    const at = slot * 4;
    this.slots[at] = start + 1;
    this.slots[at + 1] = h;
    this.slots[at + 2] = (length << 16) | tokens.length;
    this.count = tokens.length;
    return start + length;
  }
}
/** Pre-tokens remembered at most, and slots (twice as many, a power of two). */
const CAPACITY = 200_000;
const SLOTS = 1 << 19;
/** The pool grows to this many units (16 MB) at most. */
const MAX_POOL = 1 << 23;

/** The hash `find` and `add` take: FNV-1a over `units[from, to)`, its high bits folded into the low ones. */
export function pieceHash(units: Uint16Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ units[i], 0x01000193);
  return h ^ (h >>> 15);
}
