/* The host's weights of a staged chunk (engine/stage.h cph_stage_weights,
 * for chunks whose kernels compute their rows): every read's pair of
 * weights equals cph_weights_scaled of its quality bytes, bit for bit, in
 * both precisions, on the calling thread (a region's few rows) and on the
 * pool (a large rescue chunk's), with reads of length 0 keeping 1, 1 and
 * parts of reads that are not a multiple of four; and cph_stage_weights_of:
 * the reads of the wanted jobs (several jobs of one read, reads of length
 * 0 among them) get exactly those weights, every other read keeps its
 * staged NaN, bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pool.h"
#include "engine/stage.h"
#include "model/model.h"
#include "test_util.h"

static void check_weights(cph_pool *pool, size_t n_reads, size_t max_len,
                          int dbl, int of, test_rng *rng) {
  uint32_t *reads = malloc(2 * (n_reads ? n_reads : 1) * sizeof *reads);
  size_t n_rows = 0;
  for (size_t k = 0; reads && k < n_reads; k++) {
    reads[2 * k] = (uint32_t)n_rows;
    reads[2 * k + 1] =
        k % 97 == 5 ? 0 : (uint32_t)test_rng_range(rng, 1, max_len);
    n_rows += reads[2 * k + 1];
  }
  uint8_t *raw = malloc(5 * (n_rows ? n_rows : 1));
  double *w = malloc(2 * (n_reads ? n_reads : 1) * sizeof *w);
  if (!reads || !raw || !w)
    abort();
  for (size_t i = 0; i < 5 * n_rows; i++)
    raw[i] = (uint8_t)test_rng_range(rng, 0, 127);
  /* (The speculative pass's copied staging holds NaN until computed.) */
  const double unset = of ? NAN : 1.0;
  for (size_t i = 0; i < 2 * n_reads; i++)
    w[i] = unset;
  cph_stage s;
  memset(&s, 0, sizeof s);
  s.flavor = dbl ? CPH_GKL_DOUBLE : CPH_GKL_FLOAT;
  s.scaled = 1;
  s.n_rows = n_rows;
  s.n_reads = n_reads;
  s.raw.ptr = raw;
  s.reads.ptr = reads;
  s.weights.ptr = w;
  cph_job *jobs = NULL;
  unsigned char *want = NULL;
  if (of) {
    /* Three jobs per read; about one in four wanted, in an order that
     * visits reads out of turn. */
    s.n_jobs = 3 * n_reads;
    jobs = calloc(s.n_jobs ? s.n_jobs : 1, sizeof *jobs);
    want = calloc(s.n_jobs ? s.n_jobs : 1, 1);
    if (!jobs || !want)
      abort();
    for (size_t i = 0; i < s.n_jobs; i++) {
      jobs[i].read = (uint32_t)((i * 7) % n_reads);
      jobs[i].out = s.n_jobs - 1 - i;
      want[jobs[i].out] = test_rng_range(rng, 0, 3) == 0;
    }
    s.jobs = jobs;
    cph_stage_weights_of(&s, want);
  } else
    cph_stage_weights(&s, pool);
  size_t bad = 0;
  for (size_t k = 0; k < n_reads; k++) {
    double wm = unset, wx = unset;
    const size_t row = reads[2 * k];
    int wanted = !of;
    for (size_t i = 0; of && i < s.n_jobs; i++)
      wanted |= jobs[i].read == k && want[jobs[i].out];
    if (wanted)
      cph_weights_scaled(raw + 2 * n_rows + row, raw + 3 * n_rows + row,
                         reads[2 * k + 1], dbl, &wm, &wx);
    /* (Bits: an unwanted read's NaN stays that NaN.) */
    bad += memcmp(&w[2 * k], &wm, sizeof wm) != 0 ||
           memcmp(&w[2 * k + 1], &wx, sizeof wx) != 0;
  }
  CHECK(bad == 0,
        "%zu reads of up to %zu rows (%zu rows, pool %s, dbl %d, of %d): "
        "%zu weights differ",
        n_reads, max_len, n_rows, pool ? "yes" : "no", dbl, of, bad);
  free(jobs);
  free(want);
  free(reads);
  free(raw);
  free(w);
}

int main(void) {
  test_rng rng;
  test_rng_init(&rng, 20261126u);
  cph_pool *pools[2] = {NULL, cph_pool_create(4)};
  for (int p = 0; p < 2; p++)
    for (int dbl = 0; dbl < 2; dbl++) {
      check_weights(pools[p], 30, 250, dbl, 0, &rng);   /* a region */
      check_weights(pools[p], 4099, 200, dbl, 0, &rng); /* a rescue chunk */
      check_weights(pools[p], 0, 10, dbl, 0, &rng);
    }
  for (int dbl = 0; dbl < 2; dbl++) {
    check_weights(NULL, 30, 250, dbl, 1, &rng); /* a region's rescue */
    check_weights(NULL, 211, 250, dbl, 1, &rng);
    check_weights(NULL, 0, 10, dbl, 1, &rng);
  }
  cph_pool_destroy(pools[1]);
  return test_finish();
}
