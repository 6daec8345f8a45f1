/* Shared checks of the fuzz targets. A broken invariant calls abort(), which
 * libFuzzer reports as a crash with the input that caused it. */
#ifndef CLPHMM_FUZZ_COMMON_H
#define CLPHMM_FUZZ_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clphmm.h"

#define FUZZ_ASSERT(cond)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__,     \
              #cond);                                                          \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/* Cells (sum of read x haplotype lengths) above which a target does not
 * run the CPU reference on an accepted input: keeps executions fast. */
#define FUZZ_MAX_CELLS 20000

static inline size_t fuzz_cells(const clphmm_batch *b, size_t n) {
  size_t cells = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t r = 0; r < b[i].n_reads; r++)
      for (size_t h = 0; h < b[i].n_haplotypes; h++) {
        cells += b[i].reads[r].length * b[i].haplotypes[h].length;
        if (cells > FUZZ_MAX_CELLS)
          return cells;
      }
  return cells;
}

/* Whether a read has a row whose insertion and deletion error
 * probabilities sum to more than 1 (e.g. both qualities 0..3): there the
 * transitions out of the match state sum to more than 1, matchToMatch is 0
 * (specification, section 3.1), and the "likelihood" can grow past the
 * floating-point range. GATK's and GKL's formulas are followed as they are,
 * so such reads may give +inf or NaN; see the README. */
static inline int fuzz_degenerate(const clphmm_read *rd) {
  for (size_t i = 0; i < rd->length; i++)
    if (pow(10.0, -rd->ins_quals[i] / 10.0) +
            pow(10.0, -rd->del_quals[i] / 10.0) >
        1.0)
      return 1;
  return 0;
}

/* A computed log10 likelihood of a valid pair: a number, unless the read
 * is degenerate (above). */
static inline int fuzz_result_ok(double v, const clphmm_read *rd) {
  return !isnan(v) || fuzz_degenerate(rd);
}

/* Whatever a reader accepts must compute: validation passes, every result
 * is written and is a number. */
static inline void fuzz_compute_dataset(const clphmm_dataset *ds,
                                        clphmm_precision precision) {
  const clphmm_batch *b = clphmm_dataset_batches(ds);
  size_t nb = clphmm_dataset_n_batches(ds), n = clphmm_dataset_n_pairs(ds);
  size_t counted = 0;
  FUZZ_ASSERT(clphmm_count_pairs(b, nb, &counted) == CLPHMM_SUCCESS);
  FUZZ_ASSERT(counted == n);
  if (fuzz_cells(b, nb) > FUZZ_MAX_CELLS)
    return;
  double *out = malloc((n + 1) * sizeof *out);
  FUZZ_ASSERT(out != NULL);
  for (size_t i = 0; i <= n; i++)
    out[i] = NAN;
  clphmm_status st = clphmm_reference(b, nb, precision, out);
  if (st != CLPHMM_SUCCESS)
    fprintf(stderr, "reference failed: %s\n", clphmm_last_error(NULL));
  FUZZ_ASSERT(st == CLPHMM_SUCCESS);
  size_t i = 0;
  for (size_t k = 0; k < nb; k++)
    for (size_t r = 0; r < b[k].n_reads; r++)
      for (size_t h = 0; h < b[k].n_haplotypes; h++, i++)
        FUZZ_ASSERT(fuzz_result_ok(out[i], &b[k].reads[r]));
  FUZZ_ASSERT(isnan(out[n])); /* nothing written past the end */
  free(out);
}

#endif
