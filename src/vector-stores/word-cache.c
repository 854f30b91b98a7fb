// The built-in embedder's word cache (word-features.ts WordFeatureCache) in WebAssembly, for text-runs.c in
// the same module: per run of letters and digits met (lowercased), its hash, its feature and its
// trigrams' features, or that it is no word; the same hashes as the JavaScript's, so the same features.
// It starts over when full, as the JavaScript's does (at other times: its pools are fixed, not grown).
// Whether a run new to it is a word is the JavaScript's to say (lexical.ts isWordRun, whose function
// words live there): one call out of the module for each run never met, or met before the last start,
// but for a run of ASCII letters and digits longer than every function word, which is a word.
#include <stdint.h>

#define IMPORT(name) __attribute__((import_module("env"), import_name(name)))

/** lexical.ts isWordRun of `units[from, to)`: 1 for a word, 0 for none. */
IMPORT("is_word") int32_t js_is_word(const uint16_t *units, int32_t from, int32_t to);

// word-features.ts CAPACITY, SLOTS, STRIDE, its seeds and the trigrams' mark.
#define CAPACITY 100000
#define SLOTS (1 << 18)
#define STRIDE 4
#define WORD_SEED 0x811c9dc5u
#define GRAM_SEED 0x9e3779b9u
#define MARK 0x23
/** The pools' sizes: CAPACITY words of 10 units (prose's are about 7), and their values. */
#define CHARS (1 << 20)
#define VALUES (1 << 21)

/** Per slot: its entry plus one (0: empty) and its key's hash. */
static int32_t slots[2 * SLOTS];
/** Per entry: its key's start in `chars`, its length, its values' start in `values`, its trigrams (-1: no word). */
static int32_t entries[STRIDE * CAPACITY];
static uint16_t chars[CHARS];
static uint32_t values[VALUES];
static int32_t size, chars_used, values_used;
/** lexical.ts LONGEST_STOPWORD, given once by the caller (`stopwords`). */
static int32_t longest_stopword = 1 << 30;

__attribute__((export_name("stopwords"))) void stopwords(int32_t longest) { longest_stopword = longest; }

/** lexical.ts isWordRun. */
static int32_t is_word(const uint16_t *units, int32_t from, int32_t to) {
  if (to - from > longest_stopword) {
    int32_t i = from;
    while (i < to && ((units[i] >= 0x61 && units[i] <= 0x7a) || (units[i] >= 0x30 && units[i] <= 0x39))) i++;
    if (i == to) return 1;
  }
  return js_is_word(units, from, to);
}

/** word-features.ts mix: murmur3's finalizer. */
uint32_t mix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

static int32_t make(const uint16_t *units, int32_t from, int32_t to, uint32_t h, uint32_t slot) {
  int32_t length = to - from;
  int32_t word = is_word(units, from, to);
  int32_t need = word ? 2 + length : 0;
  if (size == CAPACITY || chars_used + length > CHARS || values_used + need > VALUES) {
    __builtin_memset(slots, 0, sizeof slots);
    size = chars_used = values_used = 0;
    slot = h & (SLOTS - 1);
  }
  int32_t entry = size++;
  int32_t *e = entries + STRIDE * entry;
  e[0] = chars_used;
  e[1] = length;
  e[2] = values_used;
  e[3] = word ? length : -1;
  __builtin_memcpy(chars + chars_used, units + from, 2 * (uint32_t)length);
  chars_used += length;
  slots[2 * slot] = entry + 1;
  slots[2 * slot + 1] = (int32_t)h;
  if (!word) return -1;
  uint32_t *v = values + values_used;
  uint32_t hash = WORD_SEED;
  for (int32_t i = from; i < to; i++) hash = (hash ^ units[i]) * 0x01000193u;
  *v++ = hash;
  *v++ = mix(hash);
  // The trigrams of `#w#`: the first and last take the marks.
  for (int32_t j = 0; j < length; j++) {
    uint32_t g = GRAM_SEED;
    for (int32_t i = j; i < j + 3; i++) g = (g ^ (i == 0 || i == length + 1 ? MARK : units[from + i - 1])) * 0x01000193u;
    *v++ = mix(g);
  }
  values_used += need;
  return entry;
}

/**
 * The entry of `units[from, to)` (a lowercased run of letters and digits of at most lexical.ts LONGEST
 * units, hash `h` as core/piece-cache.ts pieceHash), made on a miss; -1 for no word. Its values stay
 * where `word_values` says until the next miss.
 */
int32_t cache_find(const uint16_t *units, int32_t from, int32_t to, uint32_t h) {
  int32_t length = to - from;
  for (uint32_t slot = h & (SLOTS - 1);; slot = (slot + 1) & (SLOTS - 1)) {
    int32_t entry = slots[2 * slot] - 1;
    if (entry < 0) return make(units, from, to, h, slot);
    if ((uint32_t)slots[2 * slot + 1] != h) continue;
    const int32_t *e = entries + STRIDE * entry;
    if (e[1] != length) continue;
    const uint16_t *key = chars + e[0];
    int32_t i = 0;
    while (i < length && key[i] == units[from + i]) i++;
    if (i == length) return e[3] < 0 ? -1 : entry;
  }
}

/** The entry's values: the word's hash, its feature, then one feature per trigram (`word_grams` of them). */
const uint32_t *word_values(int32_t entry) { return values + entries[STRIDE * entry + 2]; }
int32_t word_grams(int32_t entry) { return entries[STRIDE * entry + 3]; }
