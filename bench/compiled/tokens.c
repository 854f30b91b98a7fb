// bench/ingest-compiled.mjs: Standin's WebAssembly token ends (src/core/token-ends.c) built natively, to
// compare. Its cache is filled with the pre-tokens the JavaScript met and their tokens' lengths, then it runs
// over every text; the ends are checked against the JavaScript's by the bench.
// Usage: tokens <dir> <rounds>  (reads dir/pieces.bin and dir/texts.bin, prints JSON)
#include <stdint.h>

#include "../../src/core/token-ends.c"
#include "io.h"

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int rounds = atoi(argv[2]);
  // The pre-tokens: per entry its length in units, its tokens' count, its units (padded to 4 bytes), its tokens'
  // lengths.
  char *p = readAll(argv[1], "pieces.bin");
  int np = *(int32_t *)p;
  p += 4;
  for (int i = 0; i < np; i++) {
    int length = ((int32_t *)p)[0], count = ((int32_t *)p)[1];
    p += 8;
    const uint16_t *u = (uint16_t *)p;
    p += 2 * length + (length % 2 ? 2 : 0);
    remember(u, length, (uint32_t *)p, count);
    p += 4 * count;
  }
  // The texts: per file its length in units and in UTF-8 bytes, its units, its classes (each padded to 4 bytes).
  p = readAll(argv[1], "texts.bin");
  int nf = *(int32_t *)p;
  p += 4;
  struct {
    uint16_t *t;
    uint8_t *k;
    int n, bytes;
  } *F = calloc(nf, sizeof *F);
  int longest = 0;
  for (int i = 0; i < nf; i++) {
    F[i].n = ((int32_t *)p)[0];
    F[i].bytes = ((int32_t *)p)[1];
    p += 8;
    F[i].t = (uint16_t *)p;
    p += 2 * F[i].n + (F[i].n % 2 ? 2 : 0);
    F[i].k = (uint8_t *)p;
    p += F[i].n + (4 - F[i].n % 4) % 4;
    if (F[i].n > longest) longest = F[i].n;
  }
  uint32_t *out = malloc(4 * 3 * (size_t)longest + 4);
  double best = 1e30;
  uint64_t check = 1469598103934665603ull;
  for (int r = 0; r < rounds; r++) {
    double t = 0, mb = 0;
    for (int i = 0; i < nf; i++) {
      struct state s = {0, 0, 0, 0};
      double a = now();
      int status = ends(F[i].t, F[i].k, F[i].n, out, 3 * F[i].n, &s);
      t += now() - a;
      mb += F[i].bytes / 1e6;
      if (status != DONE) {
        fprintf(stderr, "a pre-token not met, or over LONG units (status %d)\n", status);
        return 1;
      }
      if (r == 0)
        for (int j = 0; j < s.count; j++) check = (check ^ out[j]) * 1099511628211ull;
    }
    if (t / mb < best) best = t / mb;
  }
  printf("{\"msPerMb\": %.2f, \"check\": \"%016llx\"}\n", best, (unsigned long long)check);
  return 0;
}
