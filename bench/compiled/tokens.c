// bench/ingest-compiled.mjs: the tokenizer's work on a text whose pre-tokens it has all met (src/core/pretokens.ts
// pretokenEnd, then src/core/piece-cache.ts's look-up, then src/core/tokenizer.ts tokenEnds's token ends) in C,
// the same steps, to measure what compiled code makes of it. Not Standin's code: a yardstick. The cache is filled
// with the pre-tokens the JavaScript met and their tokens' lengths in bytes; the ends are checked against the
// JavaScript's by the bench. Built natively (main below: tokens <dir>, prints JSON) and, where clang targets
// it, as WebAssembly (`add` and `ends` exported; the bench drives it).
#include <stdint.h>

#ifdef __wasm__
#define EXPORT(name) __attribute__((export_name(name)))
#else
#define EXPORT(name)
#endif
#define UPPER 1
#define LOWER 2
#define LETTER 4
#define NUMBER 8
#define SPACE 16
#define NEWLINE 32
#define SECOND 64
static inline int nxt(const uint8_t *k, int n, int i) {
  return i + 1 < n && k[i + 1] == SECOND ? i + 2 : i + 1;
}
static inline int cu(const uint16_t *t, int n, int i) {
  return i < n ? t[i] : -1;
}
static int suffix(const uint16_t *t, int n, int e) {
  if (cu(t, n, e) != 0x27) return e;
  int a = cu(t, n, e + 1) | 0x20;
  if (a == 0x73 || a == 0x64 || a == 0x6d || a == 0x74) return e + 2;
  int b = cu(t, n, e + 2) | 0x20;
  if ((a == 0x6c && b == 0x6c) || (a == 0x76 && b == 0x65) || (a == 0x72 && b == 0x65)) return e + 3;
  return e;
}
static int pretokenEnd(const uint16_t *t, const uint8_t *k, int n, int p) {
  int c = k[p];
  int lead = (c & (LETTER | NUMBER | NEWLINE)) == 0 ? nxt(k, n, p) : -1;
  for (int r = 0; r < 2; r++) {
    int q = r == 0 ? lead : p;
    if (q < 0 || q >= n) continue;
    int e = q, afterLower = -1;
    while (e < n && (k[e] & UPPER)) {
      int f = nxt(k, n, e);
      if (k[e] & LOWER) afterLower = f;
      e = f;
    }
    if (e < n && (k[e] & LOWER)) {
      while (e < n && (k[e] & LOWER)) e = nxt(k, n, e);
      return suffix(t, n, e);
    }
    if (afterLower >= 0) return suffix(t, n, afterLower);
  }
  for (int r = 0; r < 2; r++) {
    int q = r == 0 ? lead : p;
    if (q < 0 || q >= n || !(k[q] & UPPER)) continue;
    int e = q;
    while (e < n && (k[e] & UPPER)) e = nxt(k, n, e);
    while (e < n && (k[e] & LOWER)) e = nxt(k, n, e);
    return suffix(t, n, e);
  }
  if (c & NUMBER) {
    int e = p;
    for (int i = 0; i < 3 && e < n && (k[e] & NUMBER); i++) e = nxt(k, n, e);
    return e;
  }
  int q = t[p] == 0x20 && p + 1 < n && (k[p + 1] & (SPACE | LETTER | NUMBER)) == 0 ? p + 1 : p;
  if ((k[q] & (SPACE | LETTER | NUMBER)) == 0) {
    int e = q;
    while (e < n && (k[e] & (SPACE | LETTER | NUMBER)) == 0) e = nxt(k, n, e);
    for (int ch = cu(t, n, e); e < n && (ch == 10 || ch == 13 || ch == 0x2f); ch = cu(t, n, ++e))
      ;
    return e;
  }
  int e = p, afterNewline = -1;
  while (e < n && (k[e] & SPACE)) {
    if (k[e] & NEWLINE) afterNewline = e + 1;
    e++;
  }
  if (afterNewline >= 0) return afterNewline;
  if (e == n || e - p < 2) return e;
  return e - 1;
}
#define SLOTS (1 << 19)
static int32_t slots[4 * SLOTS];
static uint16_t pool[1 << 23];
static int used, entries;
static inline uint32_t pieceHash(const uint16_t *u, int from, int to) {
  uint32_t h = 0x811c9dc5u;
  for (int i = from; i < to; i++) h = (h ^ u[i]) * 0x01000193u;
  return h ^ (h >> 15);
}
static int cnt;
static int findp(const uint16_t *u, int from, int to, uint32_t h) {
  int len = to - from;
  for (int slot = h & (SLOTS - 1);; slot = (slot + 1) & (SLOTS - 1)) {
    int at = slot * 4;
    if (slots[at] == 0) return -1 - slot;
    if ((uint32_t)slots[at + 1] != h || ((uint32_t)slots[at + 2] >> 16) != (uint32_t)len) continue;
    int st = slots[at] - 1, i = 0;
    while (i < len && pool[st + i] == u[from + i]) i++;
    if (i == len) {
      cnt = slots[at + 2] & 0xffff;
      return st + len;
    }
  }
}
/** Remembers a pre-token and its tokens' lengths; 0, or -1 when the cache is full (the bench's texts fit). */
EXPORT("add") int add(const uint16_t *u, int len, const int32_t *lens, int c) {
  if (used + len + c > (int)(sizeof pool / sizeof *pool) || 2 * entries >= SLOTS) return -1;
  entries++;
  uint32_t h = pieceHash(u, 0, len);
  int slot = -1 - findp(u, 0, len, h);
  int st = used;
  for (int j = 0; j < len; j++) pool[st + j] = u[j];
  for (int j = 0; j < c; j++) pool[st + len + j] = lens[j];
  used += len + c;
  slots[slot * 4] = st + 1;
  slots[slot * 4 + 1] = h;
  slots[slot * 4 + 2] = (len << 16) | c;
  return 0;
}
EXPORT("ends") int ends(const uint16_t *t, const uint8_t *k, int n, uint32_t *out) {
  int count = 0;
  uint32_t at = 0;
  for (int q = 0; q < n;) {
    int e = pretokenEnd(t, k, n, q);
    int s = findp(t, q, e, pieceHash(t, q, e));
    if (s < 0) return -1;
    for (int j = 0; j < cnt; j++) out[count++] = at += pool[s + j];
    q = e;
  }
  return count;
}

#ifndef __wasm__
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
static char *readAll(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc(n);
  if (fread(b, 1, n, f) != (size_t)n) exit(2);
  fclose(f);
  return b;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int rounds = atoi(argv[2]);
  // The pre-tokens: per entry its length in units, its tokens' count, its units, its tokens' lengths (int32).
  char *p = readAll(argv[1], "pieces.bin");
  int np = *(int32_t *)p;
  p += 4;
  for (int i = 0; i < np; i++) {
    int len = ((int32_t *)p)[0], c = ((int32_t *)p)[1];
    p += 8;
    uint16_t *u = (uint16_t *)p;
    p += 2 * len + (len % 2 ? 2 : 0);
    if (add(u, len, (int32_t *)p, c) < 0) {
      fprintf(stderr, "the cache is full\n");
      return 1;
    }
    p += 4 * c;
  }
  // The texts: per file its length in units and in UTF-8 bytes, its units, its classes.
  p = readAll(argv[1], "texts.bin");
  int nf = *(int32_t *)p;
  p += 4;
  struct {
    uint16_t *t;
    uint8_t *k;
    int n, bytes;
  } *F = calloc(nf, sizeof *F);
  for (int i = 0; i < nf; i++) {
    F[i].n = ((int32_t *)p)[0];
    F[i].bytes = ((int32_t *)p)[1];
    p += 8;
    F[i].t = (uint16_t *)p;
    p += 2 * F[i].n + (F[i].n % 2 ? 2 : 0);
    F[i].k = (uint8_t *)p;
    p += F[i].n + (4 - F[i].n % 4) % 4;
  }
  uint32_t *out = malloc(4 << 22);
  double best = 1e30;
  uint64_t check = 1469598103934665603ull;
  for (int r = 0; r < rounds; r++) {
    double t = 0, mb = 0;
    for (int i = 0; i < nf; i++) {
      double a = now();
      int n = ends(F[i].t, F[i].k, F[i].n, out);
      t += now() - a;
      mb += F[i].bytes / 1e6;
      if (n < 0) {
        fprintf(stderr, "a pre-token not met\n");
        return 1;
      }
      if (r == 0)
        for (int j = 0; j < n; j++) check = (check ^ out[j]) * 1099511628211ull;
    }
    if (t / mb < best) best = t / mb;
  }
  printf("{\"msPerMb\": %.2f, \"check\": \"%016llx\"}\n", best, (unsigned long long)check);
  return 0;
}
#else
void *memcpy(void *d, const void *s, unsigned long n) {
  char *a = d;
  const char *b = s;
  while (n--) *a++ = *b++;
  return d;
}
#endif
