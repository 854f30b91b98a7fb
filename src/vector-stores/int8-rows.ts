/**
 * A large store's int8 vectors (index-core.ts), held in a WebAssembly memory so that the vector half of a
 * search reads them with a SIMD kernel: 16 bytes of a row at a time against the query quantized to int16
 * (`i32x4.dot_i16x8_s`). Over the 16,384 rows a query reads, 0.3–0.5 ms where the same dot products in
 * JavaScript took 6–9 (docs/files.md, "The vector half in WebAssembly, the lexical half a chunk at a
 * time"). The sums are integers, so exact and alike on every platform. The kernel is a few dozen
 * instructions, encoded below (no toolchain, no file to load); WebAssembly's SIMD is in every Node.js that
 * `engines` names.
 */

/** Rows whose dot products one `dots` call returns at most. */
export const BLOCK = 1024;

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    const b = n & 0x7f;
    n >>>= 7;
    out.push(n ? b | 0x80 : b);
  } while (n);
  return out;
};
const name = (s: string) => [...leb(s.length), ...Buffer.from(s, 'latin1')];
const section = (id: number, bytes: number[]) => [id, ...leb(bytes.length), ...bytes];

/**
 * `dots(query, row, count, d, out)`: for each of `count` rows of `d` int8 from byte `row` on, its dot product
 * with the `d` int16 at `query` (zero past `d`, to a multiple of 16), as an int32 at `out`. A row's last
 * 16 bytes may run into the next row (or the memory's spare 16 bytes): the query's zeros cancel them.
 */
function kernel(): WebAssembly.Module {
  const [Q, ROW, COUNT, D, OUT, X, ACC, V] = [0, 1, 2, 3, 4, 5, 6, 7];
  const I32 = 0x7f;
  const V128 = 0x7b;
  const get = (i: number) => [0x20, i];
  const set = (i: number) => [0x21, i];
  const tee = (i: number) => [0x22, i];
  const i32 = (n: number) => [0x41, ...leb(n)]; // small non-negative constants only (their LEB is the same signed)
  const simd = (op: number, ...imm: number[]) => [0xfd, ...leb(op), ...imm];
  const load = (offset: number) => simd(0x00, 0, ...leb(offset)); // v128.load, unaligned
  const [ADD, SUB, SHL, EQZ, LT_U, STORE, BLOCK_, LOOP, END, BR_IF] = [0x6a, 0x6b, 0x74, 0x45, 0x49, 0x36, 0x02, 0x03, 0x0b, 0x0d];
  const [EXTEND_LOW, EXTEND_HIGH, DOT, ADD4, LANE, CONST] = [0x87, 0x88, 0xba, 0xae, 0x1b, 0x0c];
  // The query's 16 values of this step, as two halves of eight: q + 2x and q + 2x + 16.
  const half = (extend: number, offset: number) => [
    ...get(V),
    ...simd(extend),
    ...get(Q),
    ...get(X),
    ...i32(1),
    SHL,
    ADD,
    ...load(offset),
    ...simd(DOT),
    ...simd(ADD4),
  ];
  const lane = (i: number) => [...get(ACC), ...simd(LANE, i)];
  const body = [
    ...[BLOCK_, 0x40, ...get(COUNT), EQZ, BR_IF, 0],
    ...[LOOP, 0x40, ...simd(CONST, ...new Array<number>(16).fill(0)), ...set(ACC), ...i32(0), ...set(X)],
    ...[LOOP, 0x40, ...get(ROW), ...get(X), ADD, ...load(0), ...set(V), ...get(ACC)],
    ...half(EXTEND_LOW, 0),
    ...half(EXTEND_HIGH, 16),
    ...[...set(ACC), ...get(X), ...i32(16), ADD, ...tee(X), ...get(D), LT_U, BR_IF, 0, END],
    ...[...get(OUT), ...lane(0), ...lane(1), ADD, ...lane(2), ADD, ...lane(3), ADD, STORE, 2, 0],
    ...[...get(OUT), ...i32(4), ADD, ...set(OUT), ...get(ROW), ...get(D), ADD, ...set(ROW)],
    ...[...get(COUNT), ...i32(1), SUB, ...tee(COUNT), BR_IF, 0, END, END, END],
  ];
  const code = [2, 1, I32, 2, V128, ...body];
  return new WebAssembly.Module(
    new Uint8Array([
      ...[0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
      ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),
      ...section(2, [1, ...name('m'), ...name('memory'), 2, 0, 0]),
      ...section(3, [1, 0]),
      ...section(7, [1, ...name('dots'), 0, 0]),
      ...section(10, [1, ...leb(code.length), ...code]),
    ]),
  );
}
let compiled: WebAssembly.Module | undefined;

const PAGE = 65_536;
const up16 = (n: number) => (n + 15) & ~15;

/** Which memory a view is of: `Int8Rows.of` takes rows a saved index was read into without copying them. */
const owners = new WeakMap<ArrayBufferLike, Int8Rows>();

export class Int8Rows {
  /** The rows, `d` bytes each: a view of the memory, replaced when it grows. */
  array: Int8Array<ArrayBuffer> = new Int8Array(0);
  private memory: WebAssembly.Memory | null = null;
  private dotsOf: ((q: number, row: number, count: number, d: number, out: number) => void) | null = null;
  private query = new Int16Array(0);
  private out = new Int32Array(0);
  /** Where the rows start: after the query (padded to 16 values) and `BLOCK` results. */
  private readonly base: number;

  constructor(
    readonly d: number,
    rows = 0,
  ) {
    this.base = up16(2 * up16(d) + 4 * BLOCK);
    this.reserve(rows);
  }

  /** The rows of `a` (`d` bytes each) as Int8Rows: the ones they are a view of, or a copy. */
  static of(a: Int8Array, d: number): Int8Rows {
    const owner = owners.get(a.buffer);
    if (owner && owner.d === d && owner.array === a) return owner;
    const rows = new Int8Rows(d, d ? Math.ceil(a.length / d) : 0);
    rows.array.set(a);
    return rows;
  }

  /** Room for at least `rows` rows, growing by a quarter at a time; the rows held stay. */
  reserve(rows: number): void {
    const have = this.d ? this.array.length / this.d : 0;
    if (rows <= have || !this.d) return;
    const want = Math.max(rows, have + (have >> 2), 16);
    // 16 spare bytes: the last row's last load may read past it.
    const pages = Math.ceil((this.base + want * this.d + 16) / PAGE);
    if (!this.memory) {
      this.memory = new WebAssembly.Memory({ initial: pages });
      const { dots } = new WebAssembly.Instance((compiled ??= kernel()), { m: { memory: this.memory } }).exports;
      this.dotsOf = dots as Int8Rows['dotsOf'];
    } else if (pages > this.memory.buffer.byteLength / PAGE) this.memory.grow(pages - this.memory.buffer.byteLength / PAGE);
    const buffer = this.memory.buffer;
    this.query = new Int16Array(buffer, 0, up16(this.d));
    this.out = new Int32Array(buffer, 2 * up16(this.d), BLOCK);
    this.array = new Int8Array(buffer, this.base, Math.floor((buffer.byteLength - this.base - 16) / this.d) * this.d);
    owners.set(buffer, this);
  }

  /**
   * Sets the query for `dots`: `q` (d floats) rounded to int16 at a scale that keeps every sum within
   * int32 (127 · scale · d < 2³¹). Returns what turns a dot product back into `q`'s units.
   */
  setQuery(q: Float32Array): number {
    let max = 0;
    for (let x = 0; x < this.d; x++) max = Math.max(max, Math.abs(q[x]));
    if (!max) {
      this.query.fill(0);
      return 0;
    }
    const scale = Math.min(32_767, Math.floor(0x7fffffff / (127 * this.d))) / max;
    for (let x = 0; x < this.d; x++) this.query[x] = Math.round(q[x] * scale);
    return 1 / scale;
  }

  /** The dot products of rows `from` … `from + count - 1` (count ≤ BLOCK) with the query, first in an array of BLOCK: valid until the next call. */
  dots(from: number, count: number): Int32Array {
    this.dotsOf!(0, this.base + from * this.d, count, this.d, this.query.byteLength);
    return this.out;
  }

  get byteLength(): number {
    return this.array.byteLength;
  }
}
