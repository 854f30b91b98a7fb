/**
 * A bounded cache keyed by a stretch of a string (`text[from, to)`), looked up without cutting the stretch
 * out: a hash of its UTF-16 units, then the units compared with the key's. The built-in embedder looks
 * up every word of a text; a Map would need a new string for
 * each (and its hash), which cost more than the work the cache saves. When full it starts over.
 * A slot holds its entry's index plus one, so an empty table is all zeros: a new zeroed array costs no
 * work until its pages are written (the two module-level caches are made at every start).
 */
export class RegionCache<V> {
  /** Per slot: 0 when empty, else the entry's index + 1. */
  private slots: Int32Array;
  private keys: string[] = [];
  private values: V[] = [];

  constructor(private readonly capacity: number) {
    this.slots = new Int32Array(RegionCache.sizeFor(capacity));
  }

  private static sizeFor(capacity: number): number {
    let size = 1024;
    while (size < capacity * 2) size *= 2;
    return size;
  }

  /** The value for `text[from, to)`, made by `make(key)` (and kept) the first time. */
  get(text: string, from: number, to: number, make: (key: string) => V): V {
    let h = 0x811c9dc5;
    for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    h ^= h >>> 15;
    const mask = this.slots.length - 1;
    const length = to - from;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot] - 1;
      if (entry < 0) {
        if (this.keys.length >= this.capacity) {
          this.slots.fill(0);
          this.keys = [];
          this.values = [];
          return this.get(text, from, to, make);
        }
        const key = text.slice(from, to);
        const value = make(key);
        this.keys.push(key);
        this.slots[slot] = this.keys.length;
        this.values.push(value);
        return value;
      }
      const key = this.keys[entry];
      if (key.length === length && sameUnits(key, text, from)) return this.values[entry];
    }
  }
}

function sameUnits(key: string, text: string, from: number): boolean {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) !== text.charCodeAt(from + i)) return false;
  return true;
}
