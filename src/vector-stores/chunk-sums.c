// The sums and vectors of a text's chunks (embedder.ts embedChunks), as WebAssembly: the additions of each
// chunk's words, pairs and trigrams and the vector made of their sums, the same operations in the same
// order as the JavaScript, so every vector is the same to the bit. The JavaScript finds the text's runs,
// its words and its features, and plans each chunk (chunk-sums-wasm.ts); this adds. `node scripts/wasm.mjs`
// builds it with clang's wasm32 target into chunk-sums.wasm.ts, which a test holds to this source. No C
// library: the module imports only Math.log, and everything it reads or writes is in its own memory, at
// the addresses the caller gives.
#include <stdint.h>

// Built for wasm32 only (token-ends.c is built natively too, by a bench).
#define EXPORT(name) __attribute__((export_name(name)))
#define IMPORT(name) __attribute__((import_module("env"), import_name(name)))

// embedder.ts BUILTIN_DIMENSIONS, HALVES, RUN.
#define DIMENSIONS 256
#define HALVES 512
#define RUN 5

/** JavaScript's Math.log: the weight of a sum that the table has not (1 + ln sum, as embedder.ts weightOf). */
IMPORT("log") double js_log(double x);

/**
 * The features a chunk has met (`order`, `size` of them) and their sums (zero where not met, as they are
 * left), passed along as locals: as globals in the module's memory, each addition read them again after
 * each store (a store through a pointer may change any of them, for all the compiler knows).
 */
struct chunk {
  double *sums;
  int32_t *order;
  int size;
};

static inline void add(struct chunk *c, int32_t f, double w) {
  // Without a branch (the processor mispredicts whether a feature is new to the chunk): `order` has room
  // for one more than the features, and the number written past the chunk's is written over next.
  double sum = c->sums[f];
  c->order[c->size] = f;
  c->size += sum == 0;
  c->sums[f] = sum + w;
}

/** A word (its record at `base` in `words`) with its pair's feature (-1: none), as embedder.ts addWord. */
static inline void add_word(struct chunk *c, const int32_t *words, int32_t base, int32_t pair) {
  add(c, words[base + 2], 1);
  if (pair >= 0) add(c, pair, 0.5);
  int32_t grams = words[base + 1];
  double weight = 0.5 / grams;
  for (int32_t j = base + 3; j < base + 3 + grams; j++) add(c, words[j], weight);
}

/** The vector of the features met, as embedder.ts finish then normalize. */
static void finish(struct chunk *c, const uint32_t *keys, const double *weight_of_halves, float *v) {
  double *sums = c->sums;
  const int32_t *order = c->order;
  for (int i = 0, size = c->size; i < size; i++) {
    int32_t n = order[i];
    uint32_t h = keys[n];
    double count = sums[n];
    sums[n] = 0;
    double halves = 2 * count;
    // The table's value read whatever the count (its first where out of range), so the weight is chosen
    // without a branch but for the rare sums that need a logarithm.
    int whole = halves < HALVES && halves == __builtin_floor(halves);
    double from_table = weight_of_halves[whole ? (int)halves : 0];
    double weight = count < 1 ? count : whole ? from_table : 1 + js_log(count);
    int d = h & (DIMENSIONS - 1);
    v[d] = (float)((double)v[d] + (h >> 31 ? -weight : weight));
  }
  double sum = 0;
  for (int i = 0; i < DIMENSIONS; i++) sum += (double)v[i] * (double)v[i];
  double norm = __builtin_sqrt(sum);
  if (norm > 0)
    for (int i = 0; i < DIMENSIONS; i++) v[i] = (float)((double)v[i] / norm);
}

/**
 * The vectors of `count` chunks into `out` (zeroed, DIMENSIONS floats a chunk). `plan`, per chunk: the
 * number of words before its runs agree with the text's, each as its record and pair; the first and end
 * of the runs taken as the text has them (a run whose record is -1 is no word); then 0 or 1 words after
 * them, each as its record and pair. `runs`: the text's runs (RUN numbers each, embedder.ts). `sums`:
 * a double per feature, all zero; they are again at the end. `order`: room for an int32 a feature.
 */
EXPORT("chunks")
void chunks(const int32_t *plan, int count, const int32_t *runs, const int32_t *words, const uint32_t *keys,
            double *sums, int32_t *order, const double *weight_of_halves, float *out) {
  for (int c = 0; c < count; c++) {
    // A local the compiler keeps in registers once add_word is inlined.
    struct chunk k = {sums, order, 0};
    for (int n = *plan++; n > 0; n--, plan += 2) add_word(&k, words, plan[0], plan[1]);
    int32_t from = *plan++;
    int32_t to = *plan++;
    for (int32_t r = from; r < to; r++) {
      const int32_t *run = runs + RUN * r;
      if (run[2] >= 0) add_word(&k, words, run[2], run[3]);
    }
    for (int n = *plan++; n > 0; n--, plan += 2) add_word(&k, words, plan[0], plan[1]);
    finish(&k, keys, weight_of_halves, out + DIMENSIONS * c);
  }
}
