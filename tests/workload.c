#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *alloc(workload *w, size_t bytes) {
  if (w->n_blocks == w->cap_blocks) {
    w->cap_blocks = w->cap_blocks ? 2 * w->cap_blocks : 64;
    w->blocks = realloc(w->blocks, w->cap_blocks * sizeof *w->blocks);
    if (!w->blocks)
      abort();
  }
  void *p = calloc(1, bytes ? bytes : 1);
  if (!p)
    abort();
  return w->blocks[w->n_blocks++] = p;
}

static char base(test_rng *rng) {
  return "ACGT"[test_rng_next(rng) & 3];
}

static clphmm_haplotype make_hap(workload *w, test_rng *rng, size_t len) {
  char *b = alloc(w, len);
  for (size_t i = 0; i < len; i++)
    b[i] = base(rng);
  return (clphmm_haplotype){b, len};
}

/* A read from `hap` with ~5% substitutions (or random when hap is NULL). */
static clphmm_read make_read(workload *w, test_rng *rng, size_t len,
                             const clphmm_haplotype *hap, unsigned qmax) {
  char *b = alloc(w, len);
  uint8_t *q = alloc(w, 4 * len);
  for (size_t i = 0; i < len; i++) {
    int copy = hap && i < hap->length && test_rng_range(rng, 0, 99) >= 5;
    b[i] = copy ? hap->bases[i] : base(rng);
    q[i] = (uint8_t)test_rng_range(rng, 6, qmax);
    q[len + i] = (uint8_t)test_rng_range(rng, 6, 45);
    q[2 * len + i] = (uint8_t)test_rng_range(rng, 6, 45);
    q[3 * len + i] = 10;
  }
  return (clphmm_read){b, q, q + len, q + 2 * len, q + 3 * len, len};
}

static void add(workload *w, clphmm_read *reads, size_t nr,
                clphmm_haplotype *haps, size_t nh) {
  w->batches[w->n_batches++] = (clphmm_batch){reads, nr, haps, nh};
  w->n_pairs += nr * nh;
}

void workload_make(workload *w, test_rng *rng, size_t n_batches, size_t reads,
                   unsigned max_read) {
  memset(w, 0, sizeof *w);
  w->batches = alloc(w, (n_batches + 1) * sizeof *w->batches);
  for (size_t b = 0; b < n_batches; b++) {
    size_t nh = test_rng_range(rng, 1, 4);
    clphmm_haplotype *haps = alloc(w, nh * sizeof *haps);
    for (size_t h = 0; h < nh; h++)
      haps[h] = make_hap(w, rng, test_rng_range(rng, 1, 3 * max_read + 40));
    clphmm_read *rd = alloc(w, reads * sizeof *rd);
    for (size_t r = 0; r < reads; r++) {
      size_t len =
          r == 0 && b == 0 ? 3 * max_read : test_rng_range(rng, 1, max_read);
      rd[r] = make_read(w, rng, len, &haps[0], 60);
    }
    add(w, rd, reads, haps, nh);
  }
  /* Unrelated, high qualities: log10 L far below float's range. */
  clphmm_haplotype *haps = alloc(w, 2 * sizeof *haps);
  clphmm_read *rd = alloc(w, 2 * sizeof *rd);
  for (int i = 0; i < 2; i++) {
    haps[i] = make_hap(w, rng, 150 + 30 * (size_t)i);
    rd[i] = make_read(w, rng, 100 + 20 * (size_t)i, NULL, 60);
  }
  add(w, rd, 2, haps, 2);
}

void workload_free(workload *w) {
  for (size_t i = 0; i < w->n_blocks; i++)
    free(w->blocks[i]);
  free(w->blocks);
  memset(w, 0, sizeof *w);
}

double *workload_out(const workload *w, double fill) {
  double *out = malloc((w->n_pairs ? w->n_pairs : 1) * sizeof *out);
  if (!out)
    abort();
  for (size_t i = 0; i < w->n_pairs; i++)
    out[i] = fill;
  return out;
}

double workload_diff(const workload *w, const double *a, const double *b) {
  double worst = 0;
  for (size_t i = 0; i < w->n_pairs; i++) {
    double d = test_abs_diff(a[i], b[i]);
    if (!(d <= worst))
      worst = d;
  }
  return worst;
}
