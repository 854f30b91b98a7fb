// bench/ingest-compiled.mjs: the built-in embedder's work on a text (src/vector-stores/embedder.ts embedChunks,
// with word-features.ts's cache of words) in C, the same steps and arithmetic, to measure what compiled code
// makes of it. Not Standin's code: a yardstick. Its vectors are checked against the JavaScript's by the bench.
// Usage: embed <dir>  (reads dir/lower.bin and dir/corpus.bin, writes dir/c.vec, prints JSON)
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

#define DIM 256
#define LETTER 4
#define NUMBER 8
#define SECOND 64
#define LONGEST 48
#define LONGEST_STOP 5

static uint16_t lowerT[65536];
static const char *STOP[] = {
    "a",    "an",   "and",   "are",   "as",   "at",    "be",    "been", "but",  "by",    "can", "could", "did", "do",
    "does", "for",  "from",  "had",   "has",  "have",  "he",    "her",  "his",  "how",   "i",   "if",    "in",  "into",
    "is",   "it",   "its",   "me",    "my",   "no",    "not",   "of",   "on",   "or",    "our", "she",   "so",  "than",
    "that", "the",  "their", "them",  "then", "there", "these", "they", "this", "those", "to",  "was",   "we",  "were",
    "what", "when", "where", "which", "who",  "whom",  "why",   "will", "with", "would", "you", "your",  0};

static inline uint32_t mix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}
static inline uint32_t pieceHash(const uint16_t *u, int from, int to) {
  uint32_t h = 0x811c9dc5u;
  for (int i = from; i < to; i++) h = (h ^ u[i]) * 0x01000193u;
  return h ^ (h >> 15);
}
static inline uint32_t fnv(const uint16_t *u, int from, int to, uint32_t seed) {
  uint32_t h = seed;
  for (int i = from; i < to; i++) h = (h ^ u[i]) * 0x01000193u;
  return h;
}
#define PAIR_SEED 0x2545f491u
static inline uint32_t pairOf(uint32_t prev, uint32_t hash) {
  return mix((prev * 31u) ^ hash ^ PAIR_SEED);
}

// ---- word cache
#define CAP 100000
#define SLOTS (1 << 18)
static int32_t wslots[2 * SLOTS];
static int32_t entries[4 * CAP];
static uint16_t *wchars;
static int wcharsCap = 1 << 16, wcharsUsed;
static uint32_t *pool;
static int poolCap = 1 << 16, poolUsed;
static int wsize;

static int isStop(const uint16_t *u, int from, int to) {
  for (const char **s = STOP; *s; s++) {
    int n = strlen(*s);
    if (n != to - from) continue;
    int i = 0;
    while (i < n && (*s)[i] == u[from + i]) i++;
    if (i == n) return 1;
  }
  return 0;
}
static int wmake(const uint16_t *u, int from, int to, uint32_t h, int slot) {
  if (wsize == CAP) {
    memset(wslots, 0, sizeof wslots);
    wsize = 0;
    wcharsUsed = 0;
    poolUsed = 0;
    slot = h & (SLOTS - 1);
  }
  int len = to - from;
  int isWord = len <= LONGEST && (len > LONGEST_STOP || !isStop(u, from, to));
  if (wcharsUsed + len > wcharsCap) {
    wcharsCap = 2 * (wcharsCap > wcharsUsed + len ? wcharsCap : wcharsUsed + len);
    wchars = realloc(wchars, wcharsCap * 2);
  }
  int need = isWord ? 2 + len : 0;
  if (poolUsed + need > poolCap) {
    poolCap = 2 * (poolCap > poolUsed + need ? poolCap : poolUsed + need);
    pool = realloc(pool, poolCap * 4);
  }
  int e = wsize++;
  int at = e * 4;
  entries[at] = wcharsUsed;
  entries[at + 1] = len;
  entries[at + 2] = poolUsed;
  entries[at + 3] = isWord ? len : -1;
  memcpy(wchars + wcharsUsed, u + from, len * 2);
  wcharsUsed += len;
  wslots[2 * slot] = e + 1;
  wslots[2 * slot + 1] = (int32_t)h;
  if (!isWord) return -1;
  int p = poolUsed;
  uint32_t hash = fnv(u, from, to, 0x811c9dc5u);
  pool[p++] = hash;
  pool[p++] = mix(hash);
  for (int j = 0; j < len; j++) {
    uint32_t g = 0x9e3779b9u;
    for (int i = j; i < j + 3; i++) g = (g ^ (i == 0 || i == len + 1 ? 0x23 : u[from + i - 1])) * 0x01000193u;
    pool[p++] = mix(g);
  }
  poolUsed = p;
  return e;
}
static int wfind(const uint16_t *u, int from, int to, uint32_t h) {
  int len = to - from;
  for (int slot = h & (SLOTS - 1);; slot = (slot + 1) & (SLOTS - 1)) {
    int e = wslots[2 * slot] - 1;
    if (e < 0) return wmake(u, from, to, h, slot);
    if ((uint32_t)wslots[2 * slot + 1] != h) continue;
    int at = e * 4;
    if (entries[at + 1] != len) continue;
    int st = entries[at];
    int i = 0;
    while (i < len && wchars[st + i] == u[from + i]) i++;
    if (i == len) return entries[at + 3] < 0 ? -1 : e;
  }
}

// ---- text features
static int32_t *slots;
static int slotsLen = 1 << 13;
static uint32_t *keys;
static int32_t *slotOf;
static double *sums;
static int32_t *order;
static int numCap = 1 << 12;
static int fcount;
static int32_t *words;
static int wordsCap = 1 << 12, wordsUsed;
#define MET 4
static int32_t *met;
static int metLen = MET << 12;
static uint16_t *metChars;
static int metCharsCap = 1 << 14, metCharsUsed;
static int32_t *metSlots;
static int metSlotsN, metSlotsCap = 1 << 12;

static void growSlots(void) {
  free(slots);
  slotsLen *= 2;
  slots = calloc(slotsLen, 4);
  int mask = slotsLen - 1;
  for (int n = 0; n < fcount; n++) {
    int s = keys[n] & mask;
    while (slots[s]) s = (s + 1) & mask;
    slots[s] = n + 1;
    slotOf[n] = s;
  }
}
static void growNumbers(void) {
  int len = 2 * numCap;
  keys = realloc(keys, len * 4);
  slotOf = realloc(slotOf, len * 4);
  order = realloc(order, len * 4);
  sums = realloc(sums, len * 8);
  memset(sums + numCap, 0, (len - numCap) * 8);
  numCap = len;
}
static int fid(uint32_t h) {
  for (;;) {
    int mask = slotsLen - 1;
    for (int slot = h & mask;; slot = (slot + 1) & mask) {
      int n = slots[slot] - 1;
      if (n < 0) {
        if (2 * (fcount + 1) > slotsLen) break;
        if (fcount == numCap) growNumbers();
        keys[fcount] = h;
        slotOf[fcount] = slot;
        slots[slot] = ++fcount;
        return fcount - 1;
      }
      if (keys[n] == h) return n;
    }
    growSlots();
  }
}
static int record(int e) {
  int grams = entries[e * 4 + 3];
  if (wordsUsed + 3 + grams > wordsCap) {
    wordsCap = 2 * (wordsCap > wordsUsed + 3 + grams ? wordsCap : wordsUsed + 3 + grams);
    words = realloc(words, wordsCap * 4);
  }
  int base = wordsUsed;
  int start = entries[e * 4 + 2];
  words[base] = pool[start];
  words[base + 1] = grams;
  words[base + 2] = fid(pool[start + 1]);
  for (int j = 0; j < grams; j++) words[base + 3 + j] = fid(pool[start + 2 + j]);
  wordsUsed += 3 + grams;
  return base;
}
static void growMet(void) {
  int newLen = 2 * metLen;
  int32_t *m = calloc(newLen, 4);
  int mask = newLen / MET - 1;
  for (int i = 0; i < metSlotsN; i++) {
    int s = metSlots[i];
    int slot = met[MET * s] & mask;
    while (m[MET * slot + 1]) slot = (slot + 1) & mask;
    memcpy(m + MET * slot, met + MET * s, MET * 4);
    metSlots[i] = slot;
  }
  free(met);
  met = m;
  metLen = newLen;
}
static int fword(const uint16_t *lower, int from, int to) {
  int len = to - from;
  if (len > LONGEST) return -1;
  uint32_t h = pieceHash(lower, from, to);
  int mask = metLen / MET - 1;
  int slot = h & mask;
  for (;; slot = (slot + 1) & mask) {
    int at = MET * slot;
    if (met[at + 1] == 0) break;
    if ((uint32_t)met[at] != h || met[at + 1] != len) continue;
    int st = met[at + 3];
    int i = 0;
    while (i < len && metChars[st + i] == lower[from + i]) i++;
    if (i == len) return met[at + 2];
  }
  int e = wfind(lower, from, to, h);
  int base = e < 0 ? -1 : record(e);
  if (metCharsCap < metCharsUsed + len) {
    metCharsCap = 2 * metCharsCap + len;
    metChars = realloc(metChars, metCharsCap * 2);
  }
  memcpy(metChars + metCharsUsed, lower + from, len * 2);
  int at = MET * slot;
  met[at] = h;
  met[at + 1] = len;
  met[at + 2] = base;
  met[at + 3] = metCharsUsed;
  metCharsUsed += len;
  if (metSlotsN == metSlotsCap) {
    metSlotsCap *= 2;
    metSlots = realloc(metSlots, metSlotsCap * 4);
  }
  metSlots[metSlotsN++] = slot;
  if (2 * metSlotsN > metLen / MET) growMet();
  return base;
}
static void beginText(void) {
  for (int i = 0; i < fcount; i++) slots[slotOf[i]] = 0;
  fcount = 0;
  wordsUsed = 0;
  for (int i = 0; i < metSlotsN; i++) met[MET * metSlots[i] + 1] = 0;
  metSlotsN = 0;
  metCharsUsed = 0;
}
static double WOH[512];
static inline double weightOf(double c) {
  return c >= 1 ? 1 + log(c) : c;
}
static void finish(int size, float *v) {
  for (int i = 0; i < size; i++) {
    int n = order[i];
    uint32_t h = keys[n];
    double count = sums[n];
    sums[n] = 0;
    double halves = 2 * count;
    double w = count < 1 ? count : (halves < 512 && halves == floor(halves) ? WOH[(int)halves] : weightOf(count));
    v[h & (DIM - 1)] = (float)((double)v[h & (DIM - 1)] + w * ((h >> 31) ? -1.0 : 1.0));
  }
  double s = 0;
  for (int i = 0; i < DIM; i++) s += (double)v[i] * (double)v[i];
  double norm = sqrt(s);
  if (norm > 0)
    for (int i = 0; i < DIM; i++) v[i] = (float)((double)v[i] / norm);
}

static int32_t *runs;
static int runsCap = 5 * 1024;
static inline int runEnd(const uint8_t *k, int i, int to) {
  int e = i;
  while (e < to && (k[e] & (LETTER | NUMBER))) e += (e + 1 < to && k[e + 1] == SECOND) ? 2 : 1;
  return e;
}

static void embedChunks(const uint16_t *text, int len, const uint8_t *k, int nChunks, const int32_t *cs, float *out,
                        uint16_t *lower) {
  memset(out, 0, (size_t)nChunks * DIM * 4);
  for (int i = 0; i < len; i++) lower[i] = lowerT[text[i]]; // (the corpus has no unit the table leaves out)
  beginText();
  int n = 0, kept = -1;
  uint32_t previous = 0;
  for (int i = 0; i < len;) {
    if (!(k[i] & (LETTER | NUMBER))) {
      i++;
      continue;
    }
    int e = runEnd(k, i, len);
    if (5 * (n + 1) > runsCap) {
      runsCap *= 2;
      runs = realloc(runs, runsCap * 4);
    }
    int base = fword(lower, i, e);
    int r = 5 * n;
    runs[r] = i;
    runs[r + 1] = e;
    runs[r + 2] = base;
    runs[r + 3] = -1;
    runs[r + 4] = kept;
    if (base >= 0) {
      uint32_t hash = words[base];
      if (kept >= 0) runs[r + 3] = fid(pairOf(previous, hash));
      kept = n;
      previous = hash;
    }
    n++;
    i = e;
  }
  int r0 = 0;
  for (int c = 0; c < nChunks; c++) {
    int s = cs[2 * c], e = s + cs[2 * c + 1];
    while (r0 < n && runs[5 * r0 + 1] <= s) r0++;
    int size = 0, last = -1, lastBase = -1, lastWhole = 0;
    for (int r = r0; r < n && runs[5 * r] < e; r++) {
      int a = runs[5 * r], b = runs[5 * r + 1];
      int whole = a >= s && b <= e;
      int base = runs[5 * r + 2];
      int pair = runs[5 * r + 3];
      if (!whole || !lastWhole || runs[5 * r + 4] != last) {
        if (!whole) base = fword(lower, a > s ? a : s, b < e ? b : e);
        if (base < 0) continue;
        pair = last < 0 ? -1 : fid(pairOf(words[lastBase], words[base]));
      } else if (base < 0)
        continue;
      int f = words[base + 2];
      double sum = sums[f];
      if (sum == 0) order[size++] = f;
      sums[f] = sum + 1;
      if (pair >= 0) {
        sum = sums[pair];
        if (sum == 0) order[size++] = pair;
        sums[pair] = sum + 0.5;
      }
      int grams = words[base + 1];
      double w = 0.5 / grams;
      for (int j = base + 3; j < base + 3 + grams; j++) {
        f = words[j];
        sum = sums[f];
        if (sum == 0) order[size++] = f;
        sums[f] = sum + w;
      }
      last = r;
      lastBase = base;
      lastWhole = whole;
    }
    finish(size, out + (size_t)c * DIM);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  for (int i = 0; i < 512; i++) WOH[i] = weightOf(i / 2.0);
  memcpy(lowerT, readAll(argv[1], "lower.bin"), sizeof lowerT);
  char *p = readAll(argv[1], "corpus.bin");
  wchars = malloc(wcharsCap * 2);
  pool = malloc(poolCap * 4);
  slots = calloc(slotsLen, 4);
  keys = malloc(numCap * 4);
  slotOf = malloc(numCap * 4);
  order = malloc(numCap * 4);
  sums = calloc(numCap, 8);
  words = malloc(wordsCap * 4);
  met = calloc(metLen, 4);
  metChars = malloc(metCharsCap * 2);
  metSlots = malloc(metSlotsCap * 4);
  runs = malloc(runsCap * 4);
  // Per file: its length in units and in UTF-8 bytes, its chunks (start, length), its units, its classes.
  int nf = *(int32_t *)p;
  p += 4;
  struct {
    uint16_t *t;
    uint8_t *k;
    int len, bytes, nc;
    int32_t *cs;
  } *F = calloc(nf, sizeof *F);
  int longest = 0, most = 0;
  for (int i = 0; i < nf; i++) {
    int32_t *meta = (int32_t *)p;
    F[i].len = meta[0];
    F[i].bytes = meta[1];
    F[i].nc = meta[2];
    F[i].cs = meta + 3;
    p += 4 * (3 + 2 * meta[2]);
    F[i].t = (uint16_t *)p;
    p += 2 * F[i].len + (F[i].len % 2 ? 2 : 0);
    F[i].k = (uint8_t *)p;
    p += F[i].len + (4 - F[i].len % 4) % 4;
    if (F[i].len > longest) longest = F[i].len;
    if (F[i].nc > most) most = F[i].nc;
  }
  uint16_t *lower = malloc(2 * (size_t)longest + 2);
  float *out = malloc((size_t)most * DIM * 4);
  // The sets of bench/ingest-compiled.mjs: the first half new (caches empty), the second half new after it, then the
  // second half again (seen).
  const char *names[] = {"new", "new after", "seen"};
  int from[] = {0, nf / 2, nf / 2}, to[] = {nf / 2, nf, nf};
  char vec[4096];
  snprintf(vec, sizeof vec, "%s/c.vec", argv[1]);
  FILE *o = fopen(vec, "wb");
  printf("{");
  for (int s = 0; s < 3; s++) {
    double t = 0, mb = 0;
    for (int i = from[s]; i < to[s]; i++) {
      double a = now();
      embedChunks(F[i].t, F[i].len, F[i].k, F[i].nc, F[i].cs, out, lower);
      t += now() - a;
      mb += F[i].bytes / 1e6;
      if (s < 2) fwrite(out, 4, (size_t)F[i].nc * DIM, o);
    }
    printf("%s\"%s\": %.2f", s ? ", " : "", names[s], t / mb);
  }
  printf("}\n");
  fclose(o);
  return 0;
}
