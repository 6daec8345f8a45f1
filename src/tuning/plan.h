/* Planning: which compiled variants a device uses, and which variant serves
 * each read length (the read-length bins). */
#ifndef CLPHMM_PLAN_H
#define CLPHMM_PLAN_H

#include "opencl/program.h"

#define CPH_MAX_VARIANTS CLPHMM_MAX_BINS

/* The variants of a device, ordered by increasing rows per tile, the
 * long-read variant (":long"), if any, last. */
typedef struct cph_variant_set {
  cph_variant v[CPH_MAX_VARIANTS];
  size_t n;
} cph_variant_set;

/* Choose the shuffle backend and the variant set for a device and a
 * precision from the variant table (tuning.h: environment, tuning file,
 * built-in entries). Double kernels use the entry's double list, else its
 * list with at most 8 rows per lane (twice the registers per row) and
 * without its long-read variant.
 * `scaled` selects the scaled arithmetic form where the entry fuses
 * (cl/pairhmm.cl): float kernels and float mode's double rescue; double
 * mode keeps the fused form for its per-column sums. */
clphmm_status cph_plan_variants(const cph_device *dev, int dbl, int scaled,
                                cph_variant_set *set);

/* Index of the variant serving a read of `rows` rows: the smallest that
 * holds it, else the long-read variant, else the widest variant that tiles
 * it at the least estimated cost (padded rows and per-step overhead, see
 * plan.c). */
size_t cph_plan_bin(const cph_variant_set *set, uint32_t rows);

/* Whether the set has a vector variant (their programs have no row
 * preparation kernel: the host prepares the rows). */
static inline int cph_variant_set_has_vec(const cph_variant_set *set) {
  for (size_t i = 0; i < set->n; i++)
    if (set->v[i].vec)
      return 1;
  return 0;
}

/* "GxC/WG[:long][:rN],..." in set order. */
void cph_plan_format(const cph_variant_set *set, char *buf, size_t n);

#endif
