// The token ends of a text (tokenizer.ts tokenEnds), as WebAssembly (token-ends-wasm.ts loads it; `node
// scripts/wasm.mjs` builds it with clang's wasm32 target and writes token-ends.wasm.ts, which a test holds
// to this source). The same steps as the JavaScript: pretokens.ts pretokenEnd over the text's classes,
// then a look-up of the pre-token in a cache of pre-tokens met (the layout of piece-cache.ts, holding each
// token's length in bytes where that holds its id). A pre-token the cache has not met, of SHORT_BYTES
// bytes of UTF-8 at most, is merged here as tokenizer.ts mergeShort merges it (over the vocabulary the
// caller wrote into this memory, `vocabulary`) and remembered. A longer one not met, and a pre-token over
// LONG units, go back to the JavaScript (`ends` returns MISS or LONG_PIECE), which merges it and calls
// `remember` or writes its ends, then `ends` again. No C library: the module imports nothing, and
// everything it reads or writes is in its own memory, at the addresses the caller gives.
#include <stdint.h>

#ifdef __wasm__
#define EXPORT(name) __attribute__((export_name(name)))
#else
// Built natively by bench/ingest-compiled.mjs, to compare.
#define EXPORT(name)
#endif

// Classes of a character (pretokens.ts).
#define UPPER 1
#define LOWER 2
#define LETTER 4
#define NUMBER 8
#define SPACE 16
#define NEWLINE 32
#define SECOND 64

// tokenizer.ts LONG: longer pre-tokens are the JavaScript's (merged in blocks, not remembered).
#define LONG 256
// tokenizer.ts SHORT_BYTES: longer pre-tokens are merged with a heap (mergeLong), in the JavaScript.
#define SHORT_BYTES 48
// tokenizer.ts SHORT_PAIRS_BITS.
#define PAIRS_BITS 16
#define NONE -1

// What `ends` stopped at.
#define DONE 0
#define MISS 1
#define LONG_PIECE 2
#define FULL 3

/** The position after the character at i (two units for a surrogate pair). */
static inline int next(const uint8_t *k, int n, int i) {
  return i + 1 < n && k[i + 1] == SECOND ? i + 2 : i + 1;
}
/** The unit at i, or -1 past the end (where JavaScript's charCodeAt is NaN: equal to nothing, and NaN | 0x20 is no
 * letter). */
static inline int unit(const uint16_t *t, int n, int i) {
  return i < n ? t[i] : -1;
}

/** After a letter run: an English contraction's ending, if one follows. */
static int suffix(const uint16_t *t, int n, int e) {
  if (unit(t, n, e) != 0x27) return e;
  int a = unit(t, n, e + 1) | 0x20;
  if (a == 0x73 || a == 0x64 || a == 0x6d || a == 0x74) return e + 2; // s d m t
  int b = unit(t, n, e + 2) | 0x20;
  if ((a == 0x6c && b == 0x6c) || (a == 0x76 && b == 0x65) || (a == 0x72 && b == 0x65)) return e + 3; // ll ve re
  return e;
}

/** pretokens.ts pretokenEnd: where the pre-token starting at p ends. */
static int pretokenEnd(const uint16_t *t, const uint8_t *k, int n, int p) {
  int c = k[p];
  // 1 and 2: a letter run, with one leading character that is no letter, number or line break.
  int lead = (c & (LETTER | NUMBER | NEWLINE)) == 0 ? next(k, n, p) : -1;
  for (int r = 0; r < 2; r++) {
    int q = r == 0 ? lead : p;
    if (q < 0 || q >= n) continue;
    int e = q, afterLower = -1;
    while (e < n && (k[e] & UPPER)) {
      int f = next(k, n, e);
      if (k[e] & LOWER) afterLower = f;
      e = f;
    }
    if (e < n && (k[e] & LOWER)) {
      while (e < n && (k[e] & LOWER)) e = next(k, n, e);
      return suffix(t, n, e);
    }
    if (afterLower >= 0) return suffix(t, n, afterLower);
  }
  for (int r = 0; r < 2; r++) {
    int q = r == 0 ? lead : p;
    if (q < 0 || q >= n || !(k[q] & UPPER)) continue;
    int e = q;
    while (e < n && (k[e] & UPPER)) e = next(k, n, e);
    while (e < n && (k[e] & LOWER)) e = next(k, n, e);
    return suffix(t, n, e);
  }
  // 3: up to three numbers.
  if (c & NUMBER) {
    int e = p;
    for (int i = 0; i < 3 && e < n && (k[e] & NUMBER); i++) e = next(k, n, e);
    return e;
  }
  // 4: a run of what is no space, letter or number (after an optional space), then line breaks and slashes.
  int q = t[p] == 0x20 && p + 1 < n && (k[p + 1] & (SPACE | LETTER | NUMBER)) == 0 ? p + 1 : p;
  if ((k[q] & (SPACE | LETTER | NUMBER)) == 0) {
    int e = q;
    while (e < n && (k[e] & (SPACE | LETTER | NUMBER)) == 0) e = next(k, n, e);
    for (int ch = unit(t, n, e); e < n && (ch == 10 || ch == 13 || ch == 0x2f); ch = unit(t, n, ++e)) {}
    return e;
  }
  // 5–7: whitespace (all of it in the BMP, one unit a character).
  int e = p, afterNewline = -1;
  while (e < n && (k[e] & SPACE)) {
    if (k[e] & NEWLINE) afterNewline = e + 1;
    e++;
  }
  if (afterNewline >= 0) return afterNewline;
  if (e == n || e - p < 2) return e;
  return e - 1;
}

/** The Basic Multilingual Plane's classes (pretokens.ts bmpClasses), written by the caller once. */
static uint8_t bmp[1 << 16];
EXPORT("bmp") uint8_t *bmp_at(void) { return bmp; }

/** What `classes` writes on a surrogate pair's first unit: no class, but the code point's, which the caller finds. */
#define ASTRAL 0x80

/**
 * pretokens.ts classesOf: the class of each unit of `t[0, n)` into `k`, a pair's first unit ASTRAL and its
 * second SECOND, a lone surrogate's 0 (the table's).
 */
EXPORT("classes") void classes(const uint16_t *t, int n, uint8_t *k) {
  for (int i = 0; i < n; i++) {
    uint16_t c = t[i];
    if ((c & 0xfc00) == 0xd800 && i + 1 < n && (t[i + 1] & 0xfc00) == 0xdc00) {
      k[i] = ASTRAL;
      k[++i] = SECOND;
    } else
      k[i] = bmp[c];
  }
}

// The cache (piece-cache.ts's sizes): per slot, its entry's start in `pool` plus one (0: empty), the key's
// hash, and its length << 16 | its tokens; an entry is the pre-token's units, then its tokens' lengths.
#define CAPACITY 200000
#define SLOTS (1 << 19)
#define POOL (1 << 23)
static int32_t slots[4 * SLOTS];
static uint16_t pool[POOL];
static int used, entries;
/** The tokens of the entry `find` found. */
static int found;

/** FNV-1a over the units, its high bits folded into the low ones (piece-cache.ts pieceHash). */
static inline uint32_t pieceHash(const uint16_t *u, int length) {
  uint32_t h = 0x811c9dc5u;
  for (int i = 0; i < length; i++) h = (h ^ u[i]) * 0x01000193u;
  return h ^ (h >> 15);
}

/** Where the lengths of the pre-token `u` start in `pool` (their count in `found`), or -1 - a free slot. */
static int find(const uint16_t *u, int length, uint32_t h) {
  for (int slot = h & (SLOTS - 1);; slot = (slot + 1) & (SLOTS - 1)) {
    int at = slot * 4;
    if (slots[at] == 0) return -1 - slot;
    if ((uint32_t)slots[at + 1] != h || (slots[at + 2] >> 16) != length) continue;
    int start = slots[at] - 1, i = 0;
    while (i < length && pool[start + i] == u[i]) i++;
    if (i == length) {
      found = slots[at + 2] & 0xffff;
      return start + length;
    }
  }
}

/**
 * Remembers the pre-token `u` (length units, at most LONG) and its `count` tokens' lengths in bytes; when
 * the cache is full it starts over (as piece-cache.ts does).
 */
EXPORT("remember") void remember(const uint16_t *u, int length, const uint32_t *lengths, int count) {
  if (length < 1 || length > LONG || count < 1 || count > 0xffff) return;
  uint32_t h = pieceHash(u, length);
  int free = find(u, length, h);
  if (free >= 0) return;
  if (entries >= CAPACITY || used + length + count > POOL) {
    for (int i = 0; i < 4 * SLOTS; i++) slots[i] = 0;
    used = entries = 0;
    free = find(u, length, h);
  }
  int at = (-1 - free) * 4;
  for (int i = 0; i < length; i++) pool[used + i] = u[i];
  for (int i = 0; i < count; i++) pool[used + length + i] = lengths[i];
  slots[at] = used + 1;
  slots[at + 1] = h;
  slots[at + 2] = (length << 16) | count;
  used += length + count;
  entries++;
}

// vocabulary.ts Vocabulary, in this memory: written there once by the caller, then `vocabulary`.
static const uint8_t *v_bytes, *v_lengths;
static const uint32_t *v_offsets;
static const int32_t *v_slots, *v_byte_token;
static uint32_t v_mask;
static int v_longest;

/** Where the vocabulary's tables are (vocabulary.ts); `slot_count` a power of two. */
EXPORT("vocabulary")
void vocabulary(const uint8_t *bytes, const uint8_t *lengths, const uint32_t *offsets, const int32_t *slots, uint32_t slot_count,
                const int32_t *byte_token, int longest) {
  v_bytes = bytes;
  v_lengths = lengths;
  v_offsets = offsets;
  v_slots = slots;
  v_mask = slot_count - 1;
  v_byte_token = byte_token;
  v_longest = longest;
}

/** vocabulary.ts rankOf: the token whose bytes are `b[0, n)`, or -1. */
static int rank_of(const uint8_t *b, int n) {
  if (n > v_longest) return -1;
  uint32_t h = 0x811c9dc5u;
  for (int i = 0; i < n; i++) h = (h ^ b[i]) * 0x01000193u;
  h ^= h >> 15;
  for (uint32_t slot = h & v_mask, probes = 0; probes <= v_mask; slot = (slot + 1) & v_mask, probes++) {
    int t = v_slots[slot] - 1;
    if (t < 0) return -1;
    uint32_t start = v_offsets[t];
    if (v_offsets[t + 1] - start != (uint32_t)n) continue;
    int i = 0;
    while (i < n && v_bytes[start + i] == b[i]) i++;
    if (i == n) return t;
  }
  return -1;
}

/** tokenizer.ts encodeUtf8: the UTF-8 of `u[0, length)` into `utf8` (a lone surrogate as U+FFFD); its length. */
static uint8_t utf8[3 * LONG];
static int encode_utf8(const uint16_t *u, int length) {
  int n = 0;
  for (int i = 0; i < length; i++) {
    uint32_t c = u[i];
    if (c < 0x80) utf8[n++] = c;
    else if (c < 0x800) {
      utf8[n++] = 0xc0 | (c >> 6);
      utf8[n++] = 0x80 | (c & 0x3f);
    } else if ((c & 0xfc00) == 0xd800 && i + 1 < length && (u[i + 1] & 0xfc00) == 0xdc00) {
      c = 0x10000 + ((c - 0xd800) << 10) + (u[++i] - 0xdc00u);
      utf8[n++] = 0xf0 | (c >> 18);
      utf8[n++] = 0x80 | ((c >> 12) & 0x3f);
      utf8[n++] = 0x80 | ((c >> 6) & 0x3f);
      utf8[n++] = 0x80 | (c & 0x3f);
    } else {
      if ((c & 0xf800) == 0xd800) c = 0xfffd;
      utf8[n++] = 0xe0 | (c >> 12);
      utf8[n++] = 0x80 | ((c >> 6) & 0x3f);
      utf8[n++] = 0x80 | (c & 0x3f);
    }
  }
  return n;
}

// tokenizer.ts mergeShort's parts (token[i] from byte start[i]; ranks[i]: the rank of parts i and i + 1
// merged, NONE when that is no token) and its pairs met across pre-tokens (the left token plus one: 0 is
// none met), direct-mapped.
static int32_t token[SHORT_BYTES], start[SHORT_BYTES + 1], ranks[SHORT_BYTES];
static int parts;
static int32_t pair_left[1 << PAIRS_BITS], pair_right[1 << PAIRS_BITS], pair_merged[1 << PAIRS_BITS];

static int pair_rank(int i) {
  if (i + 1 >= parts) return NONE;
  int32_t l = token[i], r = token[i + 1];
  uint32_t h = ((uint32_t)l * 0x9e3779b1u ^ (uint32_t)r * 0x85ebca6bu) >> (32 - PAIRS_BITS);
  if (pair_left[h] == l + 1 && pair_right[h] == r) return pair_merged[h];
  pair_left[h] = l + 1;
  pair_right[h] = r;
  return pair_merged[h] = rank_of(utf8 + start[i], start[i + 2] - start[i]);
}

/**
 * tokenizer.ts merge for a pre-token of `n` bytes of UTF-8 (in `utf8`, at most SHORT_BYTES): a token as a
 * whole, or mergeShortBytes' merges (the lowest-ranked pair first, the leftmost among equals). Its tokens
 * are `token[0, parts)`.
 */
static void merge_short(int n) {
  int whole = rank_of(utf8, n);
  if (whole >= 0) {
    token[0] = whole;
    parts = 1;
    return;
  }
  parts = n;
  for (int i = 0; i < n; i++) {
    token[i] = v_byte_token[utf8[i]];
    start[i] = i;
  }
  start[n] = n;
  for (int i = 0; i < parts; i++) ranks[i] = pair_rank(i);
  for (;;) {
    int lowest = NONE, at = -1;
    for (int i = 0; i < parts - 1; i++) {
      if (ranks[i] != NONE && (at < 0 || ranks[i] < lowest)) {
        lowest = ranks[i];
        at = i;
      }
    }
    if (at < 0) break;
    token[at] = lowest;
    for (int i = at + 1; i < parts - 1; i++) {
      token[i] = token[i + 1];
      ranks[i] = ranks[i + 1];
    }
    for (int i = at + 1; i < parts; i++) start[i] = start[i + 1];
    parts--;
    ranks[at] = pair_rank(at);
    if (at > 0) ranks[at - 1] = pair_rank(at - 1);
  }
}

/** Where `ends` is, carried between calls: the position in the text, the ends written, the last end (bytes), and the
 * end of the pre-token it stopped at. */
struct state {
  int p, count;
  uint32_t at;
  int e;
};

/**
 * The ends of the tokens of `t` (n units, classes `k`) from `s->p` on, written to `out` from `s->count`
 * (at most `capacity` in all). Stops at the text's end (DONE), at a pre-token not met (MISS) or over LONG
 * units (LONG_PIECE), `s->e` its end, or where the next pre-token's ends would pass `capacity` (FULL).
 */
EXPORT("ends") int ends(const uint16_t *t, const uint8_t *k, int n, uint32_t *out, int capacity, struct state *s) {
  int p = s->p, count = s->count, status = DONE;
  uint32_t at = s->at;
  while (p < n) {
    int e = pretokenEnd(t, k, n, p);
    s->e = e;
    if (e - p > LONG) {
      status = LONG_PIECE;
      break;
    }
    uint32_t h = pieceHash(t + p, e - p);
    int from = find(t + p, e - p, h);
    if (from < 0) {
      // Merged here when short (and the vocabulary given), remembered, and found again.
      int n = v_bytes ? encode_utf8(t + p, e - p) : SHORT_BYTES + 1;
      if (n > SHORT_BYTES) {
        status = MISS;
        break;
      }
      merge_short(n);
      uint32_t lengths[SHORT_BYTES];
      for (int i = 0; i < parts; i++) lengths[i] = v_lengths[token[i]];
      remember(t + p, e - p, lengths, parts);
      from = find(t + p, e - p, h);
      if (from < 0) {
        status = MISS;
        break;
      }
    }
    if (count + found > capacity) {
      status = FULL;
      break;
    }
    for (int i = 0; i < found; i++) out[count++] = at += pool[from + i];
    p = e;
  }
  s->p = p;
  s->count = count;
  s->at = at;
  return status;
}
