/* The schedule's sort of job keys (engine/schedule.h cph_sort_keys: radix
 * passes on the pool over the bytes of the keys' upper halves that vary)
 * must give the order of a comparison sort of the whole keys (their lower
 * halves are the job indices, ascending, so that order is the stable
 * order of the upper halves): for shapes like a HaplotypeCaller chunk's,
 * wide ranges of every field, a single field varying, with and without a
 * pool, and the trivial cases. */
#include <stdlib.h>
#include <string.h>

#include "engine/pool.h"
#include "engine/schedule.h"
#include "test_util.h"

static int by_value(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* n keys: bins lo_bin..hi_bin, tiles field t_lo..t_hi, H h_lo..h_hi. */
static void make_keys(test_rng *rng, uint64_t *k, size_t n, unsigned hi_bin,
                      unsigned t_lo, unsigned t_hi, unsigned h_lo,
                      unsigned h_hi) {
  for (size_t j = 0; j < n; j++) {
    const uint64_t bin = test_rng_range(rng, 0, hi_bin);
    const uint64_t t = test_rng_range(rng, t_lo, t_hi);
    const uint64_t h = test_rng_range(rng, h_lo, h_hi);
    k[j] = bin << 60 | t << 46 | h << 32 | (uint64_t)j;
  }
}

static void check_sort(cph_pool *pool, const uint64_t *keys, size_t n,
                       const char *what) {
  uint64_t *a = malloc((n ? n : 1) * sizeof *a);
  uint64_t *want = malloc((n ? n : 1) * sizeof *want);
  uint64_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
  if (!a || !want || !tmp)
    abort();
  memcpy(a, keys, n * sizeof *a);
  memcpy(want, keys, n * sizeof *want);
  qsort(want, n, sizeof *want, by_value);
  CHECK(cph_sort_keys(pool, a, tmp, n), "%s: no memory", what);
  CHECK(memcmp(a, want, n * sizeof *a) == 0, "%s (%zu keys, %s pool): order",
        what, n, pool ? "with" : "without");
  free(a);
  free(want);
  free(tmp);
}

/* The cases: key count, highest bin, the tiles field's and H's ranges. */
typedef struct sort_case {
  const char *what;
  size_t n;
  unsigned hi_bin, t_lo, t_hi, h_lo, h_hi;
} sort_case;

static const sort_case cases[] = {
    /* A GPU chunk of a HaplotypeCaller-like mix: a few bins, tiles most
     * first (0x3fff less 1 or 2), haplotypes of 60..1500 bases. */
    {"HaplotypeCaller-like shapes", 70000, 3, 0x3ffd, 0x3ffe, 60, 1500},
    /* Every field wide: every byte varies. */
    {"wide fields", 70000, 15, 0, 0x3fff, 0, 0x3fff},
    /* Narrow tiles and H ranges. */
    {"narrow fields", 70000, 3, 0, 3, 0, 4095},
    {"narrow fields, more tiles", 70000, 3, 0, 7, 0, 4095},
    /* Only H varies; only the bin varies; nothing varies. */
    {"H only", 70000, 0, 5, 5, 0, 0x3fff},
    {"bin only", 70000, 15, 9, 9, 77, 77},
    {"one shape", 70000, 0, 1, 1, 100, 100},
    /* Few keys, one key, none. */
    {"37 keys", 37, 2, 1, 4, 10, 20},
    {"one key", 1, 2, 1, 4, 10, 20},
    {"no keys", 0, 2, 1, 4, 10, 20},
};

int main(void) {
  test_rng rng;
  test_rng_init(&rng, 20261125u);
  cph_pool *pools[2] = {NULL, cph_pool_create(4)};
  uint64_t *k = malloc(70000 * sizeof *k);
  if (!k)
    abort();
  for (int p = 0; p < 2; p++)
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
      const sort_case *sc = &cases[c];
      make_keys(&rng, k, sc->n, sc->hi_bin, sc->t_lo, sc->t_hi, sc->h_lo,
                sc->h_hi);
      check_sort(pools[p], k, sc->n, sc->what);
    }
  free(k);
  /* No keys (a chunk of empty pairs: no scratch allocated yet). */
  CHECK(cph_sort_keys(pools[1], NULL, NULL, 0), "no keys: no memory");
  cph_pool_destroy(pools[1]);
  return test_finish();
}
