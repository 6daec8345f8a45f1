/* A random workload shared by the fault and determinism tests: batches of
 * reads of mixed lengths (every read-length bin, a multi-tile read) against
 * haplotypes, reads copied from a haplotype with substitutions, plus one
 * batch of unrelated high-quality pairs whose float results need the double
 * rescue. */
#ifndef CLPHMM_TEST_WORKLOAD_H
#define CLPHMM_TEST_WORKLOAD_H

#include "test_util.h"

typedef struct workload {
  clphmm_batch *batches;
  size_t n_batches, n_pairs;
  void **blocks; /* every allocation, freed by workload_free */
  size_t n_blocks, cap_blocks;
} workload;

/* `n_batches` batches of `reads` reads (lengths 1..max_read, plus one read
 * of 3 * max_read) and 1..4 haplotypes, then the rescue batch. */
void workload_make(workload *w, test_rng *rng, size_t n_batches, size_t reads,
                   unsigned max_read);
void workload_free(workload *w);

/* A malloc'd output array of n_pairs values, each set to `fill`. */
double *workload_out(const workload *w, double fill);

/* Max |a - b| over the pairs (-inf equals -inf; NaN counts as infinite). */
double workload_diff(const workload *w, const double *a, const double *b);

#endif
