#include "test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int test_checks_passed;
int test_checks_failed;

void test_fail(const char *file, int line, const char *fmt, ...) {
  test_checks_failed++;
  fprintf(stderr, "FAIL %s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

clphmm_status test_check_status(clphmm_status got, clphmm_status want,
                                const clphmm_context *ctx, const char *expr,
                                const char *file, int line) {
  if (got == want)
    test_checks_passed++;
  else
    test_fail(file, line, "%s returned %d (%s), want %d (%s); last error: %s",
              expr, (int)got, clphmm_status_string(got), (int)want,
              clphmm_status_string(want), clphmm_last_error(ctx));
  return got;
}

int test_finish(void) {
  printf("%d passed, %d failed\n", test_checks_passed, test_checks_failed);
  return test_checks_failed == 0 && test_checks_passed > 0 ? 0 : 1;
}

char *test_env_set(const char *name, const char *value) {
  const char *was = getenv(name);
  char *saved = was ? strdup(was) : NULL;
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
  return saved;
}

void test_env_restore(const char *name, char *saved) {
  if (saved)
    setenv(name, saved, 1);
  else
    unsetenv(name);
  free(saved);
}

const char *test_data_path(const char *name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", CLPHMM_TEST_DATA, name);
  return buf;
}

size_t test_read_numbers(const char *path, double **values) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  size_t n = 0, cap = 1024;
  double *v = malloc(cap * sizeof *v);
  char line[256];
  while (v && fgets(line, sizeof line, f)) {
    if (n == cap) {
      cap *= 2;
      double *nv = realloc(v, cap * sizeof *v);
      if (!nv) {
        free(v);
        v = NULL;
        break;
      }
      v = nv;
    }
    v[n++] = strncmp(line, "-inf", 4) == 0 ? -INFINITY : strtod(line, NULL);
  }
  fclose(f);
  if (!v) {
    fprintf(stderr, "out of memory reading %s\n", path);
    exit(2);
  }
  *values = v;
  return n;
}

void test_rng_init(test_rng *rng, uint64_t default_seed) {
  const char *env = getenv("CLPHMM_TEST_SEED");
  rng->s = env && *env ? strtoull(env, NULL, 0) : default_seed;
  if (rng->s == 0)
    rng->s = 0x9E3779B97F4A7C15ull;
}

uint64_t test_rng_next(test_rng *rng) {
  uint64_t x = rng->s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng->s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

unsigned test_rng_range(test_rng *rng, unsigned lo, unsigned hi) {
  return lo + (unsigned)(test_rng_next(rng) % ((uint64_t)hi - lo + 1));
}

double test_abs_diff(double a, double b) {
  if (isinf(a) && isinf(b) && (a < 0) == (b < 0))
    return 0.0;
  if (isnan(a) || isnan(b))
    return INFINITY;
  return fabs(a - b);
}
