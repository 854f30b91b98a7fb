// A text's runs of letters and digits, its words and its features (embedder.ts embedChunks), as
// WebAssembly beside chunk-sums.c and word-cache.c in one module: the same steps as embedder.ts findRuns
// and TextFeatures (word, record, id), so the runs, the words' records and the features' values are those
// of the JavaScript. The words new to the text are looked up in word-cache.c.
// Everything lives in the module's memory: the text's units and classes, which the caller writes where
// `text` answers, then what the scan makes, taken from the memory after them (an array that grows is
// taken anew, twice as large). When the memory is full the scan answers NO_ROOM and the caller does it
// all in JavaScript.
#include <stdint.h>

#define EXPORT(name) __attribute__((export_name(name)))

// core/pretokens.ts's classes.
#define LETTER 4
#define NUMBER 8
#define SECOND 64
// embedder.ts RUN and MET, lexical.ts LONGEST, word-features.ts PAIR_SEED.
#define RUN 5
#define MET 4
#define LONGEST 48
#define PAIR_SEED 0x2545f491u

/** What `runs` answers when a run holds a unit the lowercase table leaves out, or when the memory is full. */
#define NOT_IN_TABLE -1
#define NO_ROOM -2

// word-cache.c.
int32_t cache_find(const uint16_t *units, int32_t from, int32_t to, uint32_t h);
const uint32_t *word_values(int32_t entry);
int32_t word_grams(int32_t entry);
uint32_t mix(uint32_t h);

/** lexical.ts lowerTable, written by the caller once. */
static uint16_t lower_table[1 << 16];

EXPORT("lower_table") uint16_t *lower_table_at(void) { return lower_table; }

// The memory past the module's own: `mark` is where the text's units and classes end, `top` where the
// next array is taken, `limit` the memory's end; `full` once an array did not fit.
extern unsigned char __heap_base;
static unsigned char *mark, *top, *limit;
static int full;

static void *take(uint32_t bytes) {
  unsigned char *at = (unsigned char *)(((uintptr_t)top + 7) & ~(uintptr_t)7);
  if (full || bytes > (uint32_t)(limit - at)) {
    full = 1;
    return 0;
  }
  top = at + bytes;
  return at;
}

/** `count` elements of `size` bytes, zeroed. */
static void *zeroed(uint32_t count, uint32_t size) {
  void *at = take(count * size);
  if (at) __builtin_memset(at, 0, count * size);
  return at;
}

/** `old` (`count` elements of `size` bytes) in an array twice as long; 0 when the memory is full. */
static void *grown(void *old, uint32_t count, uint32_t size) {
  void *at = zeroed(2 * count, size);
  if (at) __builtin_memcpy(at, old, count * size);
  return at;
}

static uint16_t *units;
static uint8_t *classes;
static int32_t length;

/**
 * Room for a text of `n` UTF-16 units: answers where its units go (`n` of them; its classes, `n` bytes, go
 * at `classes_at()`); 0 when the memory cannot hold it. `memory_end`: the memory's size in bytes.
 */
EXPORT("text")
uint16_t *text(int32_t n, uint32_t memory_end) {
  limit = (unsigned char *)(uintptr_t)memory_end;
  top = &__heap_base;
  full = 0;
  units = take(2 * (uint32_t)n);
  classes = take((uint32_t)n);
  mark = top;
  length = n;
  return full ? 0 : units;
}

// embedder.ts TextFeatures: features numbered in the order met (open addressing on the value), the
// records of the words met, and the runs met with their records.
static int32_t *slots;
static uint32_t slots_size;
static uint32_t *keys;
static int32_t count, numbers_size;
static int32_t *words;
static int32_t words_used, words_size;
static int32_t *met;
static uint32_t met_size, met_used;
static uint16_t *met_chars;
static int32_t met_chars_used, met_chars_size;
static int32_t *runs;
static int32_t runs_size;

/** The number of feature `h` in this text (embedder.ts TextFeatures.id); -1 when the memory is full. */
static int32_t id(uint32_t h) {
  for (;;) {
    uint32_t mask = slots_size - 1;
    for (uint32_t slot = h & mask;; slot = (slot + 1) & mask) {
      int32_t n = slots[slot] - 1;
      if (n < 0) {
        // At most half full: grow and probe again before the insert that would pass it.
        if (2 * (uint32_t)(count + 1) > slots_size) break;
        if (count == numbers_size) {
          keys = grown(keys, numbers_size, 4);
          if (!keys) return -1;
          numbers_size *= 2;
        }
        keys[count] = h;
        slots[slot] = ++count;
        return count - 1;
      }
      if (keys[n] == h) return n;
    }
    int32_t *bigger = zeroed(2 * slots_size, 4);
    if (!bigger) return -1;
    slots = bigger;
    slots_size *= 2;
    mask = slots_size - 1;
    for (int32_t n = 0; n < count; n++) {
      uint32_t slot = keys[n] & mask;
      while (slots[slot] != 0) slot = (slot + 1) & mask;
      slots[slot] = n + 1;
    }
  }
}

EXPORT("id") int32_t id_of(uint32_t h) { return id(h); }

/** The record of the word cache's `entry` (word-cache.c), as embedder.ts record. */
static int32_t record(int32_t entry) {
  const uint32_t *values = word_values(entry);
  int32_t grams = word_grams(entry);
  if (words_used + 3 + grams > words_size) {
    int32_t size = words_size;
    while (words_used + 3 + grams > size) size *= 2;
    int32_t *bigger = zeroed((uint32_t)size, 4);
    if (!bigger) return -1;
    __builtin_memcpy(bigger, words, 4 * (uint32_t)words_used);
    words = bigger;
    words_size = size;
  }
  int32_t base = words_used;
  words[base] = (int32_t)values[0];
  words[base + 1] = grams;
  words[base + 2] = id(values[1]);
  for (int32_t j = 0; j < grams; j++) words[base + 3 + j] = id(values[2 + j]);
  words_used += 3 + grams;
  return base;
}

static void grow_met(void) {
  int32_t *bigger = zeroed(2 * MET * met_size, 4);
  if (!bigger) return;
  uint32_t mask = 2 * met_size - 1;
  for (uint32_t s = 0; s < met_size; s++) {
    if (met[MET * s + 1] == 0) continue;
    uint32_t slot = (uint32_t)met[MET * s] & mask;
    while (bigger[MET * slot + 1] != 0) slot = (slot + 1) & mask;
    __builtin_memcpy(bigger + MET * slot, met + MET * s, 4 * MET);
  }
  met = bigger;
  met_size *= 2;
}

/**
 * Where the record of the word `units[from, to)` (lowercased, hash `h`) starts in `words`, or -1 when it
 * is no word (embedder.ts TextFeatures.word): looked up in this text's runs met first, then in the word
 * cache. The met table's slots differ from the JavaScript's (it grows at other times), not what it finds.
 */
static int32_t word(int32_t from, int32_t to, uint32_t h) {
  int32_t n = to - from;
  // Once full, the table of runs met may be past half full (it could not grow): nothing more goes in.
  if (n > LONGEST || full) return -1;
  uint32_t mask = met_size - 1;
  uint32_t slot = h & mask;
  for (;; slot = (slot + 1) & mask) {
    int32_t *at = met + MET * slot;
    if (at[1] == 0) break;
    if ((uint32_t)at[0] != h || at[1] != n) continue;
    const uint16_t *chars = met_chars + at[3];
    int32_t i = 0;
    while (i < n && chars[i] == units[from + i]) i++;
    if (i == n) return at[2];
  }
  int32_t entry = cache_find(units, from, to, h);
  int32_t base = entry < 0 ? -1 : record(entry);
  if (met_chars_used + n > met_chars_size) {
    int32_t size = met_chars_size;
    while (met_chars_used + n > size) size *= 2;
    uint16_t *bigger = take(2 * (uint32_t)size);
    if (!bigger) return -1;
    __builtin_memcpy(bigger, met_chars, 2 * (uint32_t)met_chars_used);
    met_chars = bigger;
    met_chars_size = size;
  }
  __builtin_memcpy(met_chars + met_chars_used, units + from, 2 * (uint32_t)n);
  int32_t *at = met + MET * slot;
  at[0] = (int32_t)h;
  at[1] = n;
  at[2] = base;
  at[3] = met_chars_used;
  met_chars_used += n;
  // At most half full.
  if (2 * ++met_used > met_size) grow_met();
  return base;
}

/** core/piece-cache.ts pieceHash. */
static uint32_t key_hash(int32_t from, int32_t to) {
  uint32_t h = 0x811c9dc5u;
  for (int32_t i = from; i < to; i++) h = (h ^ units[i]) * 0x01000193u;
  return h ^ (h >> 15);
}

EXPORT("word") int32_t word_of(int32_t from, int32_t to) { return word(from, to, key_hash(from, to)); }

/** The feature number of the pair of the words whose records start at `before` and `base` (embedder.ts pairOf). */
static int32_t pair(int32_t before, int32_t base) {
  return id(mix((uint32_t)words[before] * 31u ^ (uint32_t)words[base] ^ PAIR_SEED));
}

EXPORT("pair") int32_t pair_of(int32_t before, int32_t base) { return pair(before, base); }

/** lexical.ts runEnd. */
static int32_t run_end(int32_t i) {
  int32_t e = i;
  while (e < length && classes[e] & (LETTER | NUMBER)) e += e + 1 < length && classes[e + 1] == SECOND ? 2 : 1;
  return e;
}

/**
 * The text's runs (embedder.ts findRuns), RUN numbers each at `runs_at()`: answers how many, NOT_IN_TABLE or
 * NO_ROOM. With `lowering`, each run's units are lowercased in place from `lower_table` as the run is
 * read; without, the units are lowercased already. Every feature, word and run of an earlier call is let go.
 */
EXPORT("runs")
int32_t find_runs(int lowering) {
  top = mark;
  full = 0;
  slots_size = 1 << 13;
  slots = zeroed(slots_size, 4);
  numbers_size = 1 << 12;
  keys = zeroed((uint32_t)numbers_size, 4);
  count = 0;
  words_size = 1 << 12;
  words = zeroed((uint32_t)words_size, 4);
  words_used = 0;
  met_size = 1 << 12;
  met = zeroed(MET * met_size, 4);
  met_used = 0;
  met_chars_size = 1 << 14;
  met_chars = zeroed((uint32_t)met_chars_size, 2);
  met_chars_used = 0;
  // About one run in six units of prose.
  runs_size = RUN * (length / 6 + 1024);
  runs = zeroed((uint32_t)runs_size, 4);
  if (full) return NO_ROOM;
  int32_t n = 0, kept = -1, previous = -1;
  // Locals: read from the module's memory, they would be read again after each unit lowercased.
  uint16_t *u = units;
  const uint8_t *k = classes;
  int32_t end = length;
  for (int32_t i = 0; i < end;) {
    if (!(k[i] & (LETTER | NUMBER))) {
      i++;
      continue;
    }
    int32_t e = i;
    uint32_t h;
    if (lowering) {
      h = 0x811c9dc5u;
      for (; e < end && k[e] & (LETTER | NUMBER); e++) {
        uint16_t l = lower_table[u[e]];
        if (l == 0) return NOT_IN_TABLE;
        u[e] = l;
        h = (h ^ l) * 0x01000193u;
      }
      h ^= h >> 15;
    } else {
      e = run_end(i);
      h = key_hash(i, e);
    }
    if (RUN * (n + 1) > runs_size) {
      runs = grown(runs, (uint32_t)runs_size, 4);
      runs_size *= 2;
    }
    int32_t base = runs ? word(i, e, h) : -1;
    if (full) return NO_ROOM;
    int32_t *run = runs + RUN * n;
    run[0] = i;
    run[1] = e;
    run[2] = base;
    run[3] = -1;
    run[4] = kept;
    if (base >= 0) {
      if (kept >= 0) run[3] = pair(previous, base);
      kept = n;
      previous = base;
    }
    n++;
    i = e;
  }
  return full ? NO_ROOM : n;
}

EXPORT("classes_at") uint8_t *classes_at(void) { return classes; }
EXPORT("runs_at") int32_t *runs_at(void) { return runs; }
EXPORT("words_at") int32_t *words_at(void) { return words; }
EXPORT("keys_at") uint32_t *keys_at(void) { return keys; }
EXPORT("features") int32_t features(void) { return count; }

/** `bytes` from the memory after the text's arrays (for the chunks' plan, sums and vectors); 0 when full. */
EXPORT("take") void *take_bytes(uint32_t bytes) { return take(bytes); }
EXPORT("zeroed") void *zeroed_bytes(uint32_t bytes) { return zeroed(bytes, 1); }
