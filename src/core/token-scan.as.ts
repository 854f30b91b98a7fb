// AssemblyScript, compiled to WebAssembly by the build (scripts/wasm.mjs: dist/token-scan.wasm), not by tsc.
//
// Where each o200k token of a text ends, in bytes of its UTF-8: core/tokenizer.ts's `tokenEnds` (the
// pre-tokens of pretokens.ts, each looked up in a cache of pre-tokens with their tokens, as
// piece-cache.ts keeps it) over the text's UTF-16 units in this module's memory. The same ends as the
// JavaScript, held against it by tokenizer.test.ts; twice as fast, as a chunker's every character goes
// through it. What needs the vocabulary's merges (a pre-token missing from the cache) or is rare (a
// pre-token over LONG units, a character outside the Basic Multilingual Plane) is left to the
// JavaScript: `scan` stops and says why, and the caller resumes it (core/token-scan.ts).
//
// The memory is laid out by the caller (setUp): the BMP's classes, the tokens' lengths, the cache's slots
// and pool, a buffer for one pre-token's tokens, then per text its units, their classes and the ends.

// Character classes, as pretokens.ts has them.
const UPPER: u32 = 1;
const LOWER: u32 = 2;
const LETTER: u32 = 4;
const NUMBER: u32 = 8;
const SPACE: u32 = 16;
const NEWLINE: u32 = 32;
const SECOND: u32 = 64;

/** Pre-tokens longer than this are the JavaScript's (tokenizer.ts LONG). */
const LONG: i32 = 256;
/** The cache: slots (a power of two, four words each), entries at most, and pool units at most (piece-cache.ts). */
const SLOTS: u32 = 1 << 19;
const CAPACITY: u32 = 200_000;
const MAX_POOL: u32 = 1 << 23;

// Why `scan` stopped.
const DONE: i32 = 0;
/** text[p, e) is not in the cache: the caller merges it into `merged` and calls `add`. */
const MISS: i32 = 1;
/** text[p, e) is over LONG units: the caller writes its ends and calls `resume`. */
const LONG_PIECE: i32 = 2;
/** The ends need more room than `room`: the caller grows it and calls `scan` again. */
const FULL: i32 = 3;
/** The text holds more than `max` tokens. */
const OVER: i32 = 4;

let table: usize = 0;
let lengths: usize = 0;
let slots: usize = 0;
let pool: usize = 0;
let merged: usize = 0;
let used: u32 = 0;
let entries: u32 = 0;

// Where a scan is: the pre-token [p, e) with its hash, the tokens so far and the bytes they end at.
let p: i32 = 0;
let e: i32 = 0;
let hash: u32 = 0;
let count: i32 = 0;
let at: u32 = 0;

export function setUp(tableAt: usize, lengthsAt: usize, slotsAt: usize, poolAt: usize, mergedAt: usize): void {
  table = tableAt;
  lengths = lengthsAt;
  slots = slotsAt;
  pool = poolAt;
  merged = mergedAt;
}

export function position(): i32 {
  return p;
}
export function pieceEnd(): i32 {
  return e;
}
export function tokens(): i32 {
  return count;
}
export function bytes(): u32 {
  return at;
}

/** Starts a text, or goes on past a pre-token the caller handled. */
export function resume(from: i32, tokensSoFar: i32, bytesSoFar: u32): void {
  p = from;
  count = tokensSoFar;
  at = bytesSoFar;
}

function unit(text: usize, i: i32): u32 {
  return load<u16>(text + ((<usize>i) << 1));
}
function cls(k: usize, i: i32): u32 {
  return load<u8>(k + <usize>i);
}
/** The position after the character at `i` (two units for a surrogate pair). */
function next(k: usize, n: i32, i: i32): i32 {
  return i + 1 < n && cls(k, i + 1) == SECOND ? i + 2 : i + 1;
}

/** The class of each unit of text[0, n) into k, from the BMP's table; the first surrogate pair's index (its class is the caller's), or -1. */
export function classes(text: usize, k: usize, n: i32): i32 {
  for (let i = 0; i < n; i++) {
    const c = unit(text, i);
    if ((c & 0xfc00) == 0xd800 && i + 1 < n && (unit(text, i + 1) & 0xfc00) == 0xdc00) return i;
    store<u8>(k + <usize>i, load<u8>(table + <usize>c));
  }
  return -1;
}

/** After a letter run: an English contraction's ending, if one follows (pretokens.ts `suffix`). */
function suffix(text: usize, n: i32, end: i32): i32 {
  if (end >= n || unit(text, end) != 0x27) return end;
  const a = end + 1 < n ? unit(text, end + 1) | 0x20 : 0;
  if (a == 0x73 || a == 0x64 || a == 0x6d || a == 0x74) return end + 2;
  const b = end + 2 < n ? unit(text, end + 2) | 0x20 : 0;
  if ((a == 0x6c && b == 0x6c) || (a == 0x76 && b == 0x65) || (a == 0x72 && b == 0x65)) return end + 3;
  return end;
}

/** Where the pre-token starting at `from` ends (pretokens.ts `pretokenEnd`, alternative by alternative). */
function pretokenEnd(text: usize, k: usize, n: i32, from: i32): i32 {
  const c = cls(k, from);
  // 1 and 2: a letter run, with one leading character that is no letter, number or line break.
  const lead = (c & (LETTER | NUMBER | NEWLINE)) == 0 ? next(k, n, from) : -1;
  for (let t = 0; t < 2; t++) {
    const q = t == 0 ? lead : from;
    if (q < 0 || q >= n) continue;
    let end = q;
    let afterLower = -1;
    while (end < n && cls(k, end) & UPPER) {
      const f = next(k, n, end);
      if (cls(k, end) & LOWER) afterLower = f;
      end = f;
    }
    if (end < n && cls(k, end) & LOWER) {
      while (end < n && cls(k, end) & LOWER) end = next(k, n, end);
      return suffix(text, n, end);
    }
    if (afterLower >= 0) return suffix(text, n, afterLower);
  }
  for (let t = 0; t < 2; t++) {
    const q = t == 0 ? lead : from;
    if (q < 0 || q >= n || !(cls(k, q) & UPPER)) continue;
    let end = q;
    while (end < n && cls(k, end) & UPPER) end = next(k, n, end);
    while (end < n && cls(k, end) & LOWER) end = next(k, n, end);
    return suffix(text, n, end);
  }
  // 3: up to three numbers.
  if (c & NUMBER) {
    let end = from;
    for (let i = 0; i < 3 && end < n && cls(k, end) & NUMBER; i++) end = next(k, n, end);
    return end;
  }
  // 4: a run of what is no space, letter or number (after an optional space), then line breaks and slashes.
  const q = unit(text, from) == 0x20 && from + 1 < n && (cls(k, from + 1) & (SPACE | LETTER | NUMBER)) == 0 ? from + 1 : from;
  if ((cls(k, q) & (SPACE | LETTER | NUMBER)) == 0) {
    let end = q;
    while (end < n && (cls(k, end) & (SPACE | LETTER | NUMBER)) == 0) end = next(k, n, end);
    while (end < n) {
      const u = unit(text, end);
      if (u != 10 && u != 13 && u != 0x2f) break;
      end++;
    }
    return end;
  }
  // 5–7: whitespace.
  let end = from;
  let afterNewline = -1;
  while (end < n && cls(k, end) & SPACE) {
    if (cls(k, end) & NEWLINE) afterNewline = end + 1;
    end++;
  }
  if (afterNewline >= 0) return afterNewline;
  if (end == n || end - from < 2) return end;
  return end - 1;
}

/** The slot holding text[from, to) (hash `h`), or the free slot where it would go. */
function slotOf(text: usize, from: i32, to: i32, h: u32): usize {
  const length = <u32>(to - from);
  let slot = h & (SLOTS - 1);
  for (;;) {
    const s = slots + ((<usize>slot) << 4);
    const start = load<u32>(s);
    if (start == 0) return s;
    if (load<u32>(s, 4) == h && load<u32>(s, 8) >>> 16 == length) {
      const key = pool + ((<usize>(start - 1)) << 1);
      const units = text + ((<usize>from) << 1);
      let i: usize = 0;
      while (i < length && load<u16>(key + (i << 1)) == load<u16>(units + (i << 1))) i++;
      if (i == length) return s;
    }
    slot = (slot + 1) & (SLOTS - 1);
  }
  return 0;
}

/**
 * Ends the tokens of text[0, n) from where `resume` left off into `ends` (room for `room`), until the text
 * is done (DONE) or the caller must act: MISS, LONG_PIECE, FULL or OVER (past `max` tokens).
 */
export function scan(text: usize, k: usize, n: i32, ends: usize, room: i32, max: i32): i32 {
  // In locals while scanning (the module's globals are where the caller reads them after a stop).
  let from = p;
  let tokensSoFar = count;
  let bytesSoFar = at;
  let why = DONE;
  while (from < n) {
    const to = pretokenEnd(text, k, n, from);
    if (to - from > LONG) {
      why = LONG_PIECE;
      e = to;
      break;
    }
    let h: u32 = 0x811c9dc5;
    for (let i = from; i < to; i++) h = (h ^ unit(text, i)) * 0x01000193;
    h ^= h >>> 15;
    const s = slotOf(text, from, to, h);
    const start = load<u32>(s);
    if (start == 0) {
      why = MISS;
      e = to;
      hash = h;
      break;
    }
    const info = load<u32>(s, 8);
    const tokens = <i32>(info & 0xffff);
    if (tokensSoFar + tokens > max || tokensSoFar + tokens > room) {
      why = tokensSoFar + tokens > max ? OVER : FULL;
      break;
    }
    const tokenAt = pool + ((<usize>(start - 1 + (info >>> 16))) << 1);
    let out = ends + ((<usize>tokensSoFar) << 2);
    for (let i = 0; i < tokens; i++) {
      bytesSoFar += load<u8>(lengths + <usize>load<u32>(tokenAt + ((<usize>i) << 2)));
      store<u32>(out, bytesSoFar);
      out += 4;
    }
    tokensSoFar += tokens;
    from = to;
  }
  p = from;
  count = tokensSoFar;
  at = bytesSoFar;
  return why;
}

/** Remembers text[p, e) (the pre-token of the last MISS) with the `n` tokens in `merged`; the cache starts over when full. */
export function add(text: usize, n: u32): void {
  const length = <u32>(e - p);
  const need = length + 2 * n;
  if (entries >= CAPACITY || used + need > MAX_POOL) {
    memory.fill(slots, 0, (<usize>SLOTS) << 4);
    used = 0;
    entries = 0;
  }
  const s = slotOf(text, p, e, hash);
  const start = used;
  const key = pool + ((<usize>start) << 1);
  for (let i: u32 = 0; i < length; i++) store<u16>(key + ((<usize>i) << 1), unit(text, p + <i32>i));
  memory.copy(key + ((<usize>length) << 1), merged, (<usize>n) << 2);
  used += need;
  entries++;
  store<u32>(s, start + 1);
  store<u32>(s, hash, 4);
  store<u32>(s, (length << 16) | n, 8);
}
