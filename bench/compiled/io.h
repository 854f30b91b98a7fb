// What bench/compiled's programs share: CPU time, and reading one of the bench's input files whole.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/** CPU time of the process, ms. */
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/** The file `name` of the folder `dir`, whole (the program exits 2 when it cannot). */
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
