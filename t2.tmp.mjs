// t2.tmp.ts
import { encode } from "gpt-tokenizer";

// src/store/lazy.ts
import { createRequire } from "node:module";
var require2 = createRequire(import.meta.url);
function lazy(name) {
  let mod;
  return () => mod ??= require2(name);
}

// src/core/tokenizer.ts
var library = lazy("gpt-tokenizer");
var constants = lazy("gpt-tokenizer/encodingParams/constants");
var ranksFile = lazy("gpt-tokenizer/bpeRanks/o200k_base");
var PLAIN = { disallowedSpecial: /* @__PURE__ */ new Set() };
var LONG = 256;
var SEGMENT = 65536;
function* encodePieces(text) {
  if (!text) return;
  if (text.length <= LONG) yield library().encode(text, PLAIN);
  else if (!mayHoldLong(text)) yield* ordinaryPieces(text);
  else yield* piecesAroundLong(text);
}
function* ordinaryPieces(text) {
  let from = 0;
  while (text.length - from > SEGMENT) {
    WORD_START.lastIndex = from + SEGMENT;
    const cut = WORD_START.exec(text);
    if (!cut) break;
    yield library().encode(text.slice(from, cut.index), PLAIN);
    from = cut.index;
  }
  yield library().encode(from ? text.slice(from) : text, PLAIN);
}
var WORD_START = /(?<=\S) (?=\p{L})/gu;
function* piecesAroundLong(text) {
  let from = 0;
  for (const m of text.matchAll(constants().O200K_TOKEN_SPLIT_REGEX)) {
    const at = m.index;
    const long = m[0].length > LONG;
    if (at > from && (long || at - from >= SEGMENT)) {
      yield library().encode(text.slice(from, at), PLAIN);
      from = at;
    }
    if (long) {
      yield mergeLong(m[0]);
      from = at + m[0].length;
    }
  }
  if (from < text.length) yield library().encode(text.slice(from), PLAIN);
}
function mayHoldLong(text) {
  const run = (LONG >> 1) - 1;
  let space = 0;
  let solid = 0;
  let tail = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isWhitespace(c)) {
      space++;
      solid = 0;
    } else {
      solid++;
      space = 0;
    }
    tail = c === 10 || c === 13 || c === 47 ? tail + 1 : 0;
    if (space >= run || solid >= run || tail >= run) return true;
  }
  return false;
}
function isWhitespace(c) {
  if (c <= 32) return c === 32 || c >= 9 && c <= 13;
  if (c < 160) return false;
  return c === 160 || c === 5760 || c >= 8192 && c <= 8202 || c === 8232 || c === 8233 || c === 8239 || c === 8287 || c === 12288 || c === 65279;
}
function countText(text) {
  let n = 0;
  for (const piece of encodePieces(text)) n += piece.length;
  return n;
}
var vocab;
function vocabulary() {
  if (vocab) return vocab;
  const rank = /* @__PURE__ */ new Map();
  const bytes = [];
  let longest = 0;
  ranksFile().default.forEach((entry, r) => {
    if (entry === void 0) return;
    const key = typeof entry === "string" ? Buffer.from(entry, "utf8").toString("latin1") : String.fromCharCode(...entry);
    rank.set(key, r);
    bytes[r] = key;
    longest = Math.max(longest, key.length);
  });
  const byteToken = Int32Array.from({ length: 256 }, (_, b) => rank.get(String.fromCharCode(b)));
  return vocab = { rank, bytes, longest, byteToken };
}
var NONE = -1;
var POS = 2 ** 30;
var PAIR_CACHE = 4096;
function mergeLong(piece) {
  const { rank, longest, byteToken } = vocabulary();
  const buf = Buffer.from(piece, "utf8");
  const n = buf.length;
  if (n >= POS) throw new RangeError("a pre-token of 1 GiB or more cannot be tokenized");
  const bytes = n === piece.length ? piece : buf.toString("latin1");
  const whole = n <= longest ? rank.get(bytes) : void 0;
  if (whole !== void 0) return [whole];
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const token = new Int32Array(n);
  const pairRank = new Int32Array(n);
  const seenLeft = new Int32Array(PAIR_CACHE).fill(NONE);
  const seenRight = new Int32Array(PAIR_CACHE);
  const seenRank = new Int32Array(PAIR_CACHE);
  const rankOf = (p) => {
    const q = next[p];
    if (q >= n) return NONE;
    const end = next[q];
    if (end - p > longest) return NONE;
    const l = token[p];
    const r = token[q];
    const h = (Math.imul(l, 2654435761) ^ r) & PAIR_CACHE - 1;
    if (seenLeft[h] === l && seenRight[h] === r) return seenRank[h];
    seenLeft[h] = l;
    seenRight[h] = r;
    return seenRank[h] = rank.get(bytes.slice(p, end)) ?? NONE;
  };
  for (let p = 0; p < n; p++) {
    next[p] = p + 1;
    prev[p] = p - 1;
    token[p] = byteToken[buf[p]];
  }
  const heap = new MinHeap(3 * n);
  for (let p = 0; p + 1 < n; p++) {
    pairRank[p] = rankOf(p);
    if (pairRank[p] !== NONE) heap.add(pairRank[p] * POS + p);
  }
  pairRank[n - 1] = NONE;
  heap.heapify();
  const rerank = (p) => {
    pairRank[p] = rankOf(p);
    if (pairRank[p] !== NONE) heap.push(pairRank[p] * POS + p);
  };
  while (heap.size) {
    const key = heap.pop();
    const r = Math.floor(key / POS);
    const p = key - r * POS;
    if (next[p] === NONE || pairRank[p] !== r) continue;
    const q = next[p];
    next[p] = next[q];
    if (next[q] < n) prev[next[q]] = p;
    next[q] = NONE;
    token[p] = r;
    rerank(p);
    if (prev[p] >= 0) rerank(prev[p]);
  }
  const out = [];
  for (let p = 0; p < n; p = next[p]) out.push(token[p]);
  return out;
}
var MinHeap = class {
  a;
  size = 0;
  constructor(capacity) {
    this.a = new Float64Array(Math.max(1, capacity));
  }
  /** Appends without ordering; call `heapify` before the first pop. */
  add(v) {
    this.a[this.size++] = v;
  }
  heapify() {
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.down(i, this.a[i]);
  }
  push(v) {
    const a = this.a;
    let i = this.size++;
    while (i > 0) {
      const parent = i - 1 >> 1;
      if (a[parent] <= v) break;
      a[i] = a[parent];
      i = parent;
    }
    a[i] = v;
  }
  pop() {
    const top = this.a[0];
    const last = this.a[--this.size];
    if (this.size) this.down(0, last);
    return top;
  }
  down(i, v) {
    const a = this.a;
    const n = this.size;
    for (; ; ) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && a[c + 1] < a[c]) c++;
      if (a[c] >= v) break;
      a[i] = a[c];
      i = c;
    }
    a[i] = v;
  }
};

// t2.tmp.ts
var P = { disallowedSpecial: /* @__PURE__ */ new Set() };
countText("b".repeat(1e3));
var cpu = (f) => {
  const c = process.cpuUsage();
  f();
  const d = process.cpuUsage(c);
  return ((d.user + d.system) / 1e3).toFixed(0);
};
var rnd = (n) => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join("");
var prose = "The quick brown fox jumps over the lazy dog, and then it runs away! 1234 times. ";
var big = prose.repeat(Math.ceil(1048576 / prose.length));
for (let i = 0; i < 2; i++) {
  console.log("a", cpu(() => countText("a".repeat(1 << 20))), "rnd", cpu(() => countText(rnd(1 << 20))), "cjk", cpu(() => countText("\u8A9E".repeat(1 << 18))), "prose new", cpu(() => countText(big)), "prose lib", cpu(() => encode(big, P)), "a 16K lib", cpu(() => encode("a".repeat(16384), P)));
}
