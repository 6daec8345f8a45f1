/* The early-exit bound of float mode's first pass: a proven upper bound on
 * a pair's final float sum from any one of its rows, so that the kernel can
 * stop a pair whose sum is certain to fall below GKL's threshold (1e-28)
 * and send it to the double rescue without computing its remaining rows.
 * A pair that GKL would not rescue is never stopped. The proof is in
 * bound.c; cl/prep.cl computes the same values operation by operation. */
#ifndef CLPHMM_BOUND_H
#define CLPHMM_BOUND_H

#include <stddef.h>

#include "clphmm.h"

/* The kernel stops a pair after row i when
 *     (qm_i * sum_m + qx_i * sum_x) * T < 1
 * for the (scaled) sums of row i's m and x over its columns, qm_i = P_i /
 * G_i and qx_i = qm_i mx_i / mm_i the row's slots 4 and 5 of the scaled
 * form's rows (cph_row_fs), T the read's threshold, stored in slot 4 of its
 * last row (whose own qm is never needed). NaN thresholds (an invalid row, a
 * bound too loose) never stop. The bound also assumes haplotypes of at most
 * CPH_BOUND_MAX_H bases (the kernel checks). */
#define CPH_BOUND_MAX_H (1u << 20)

/* Reads of at most this many rows get no bound (slots 4 and 5 zero, a NaN
 * threshold): they rarely span several tiles, and the row preparation of
 * HaplotypeCaller-sized reads would pay for it (its time tripled on the
 * H200). cl/prep.cl has the same constant. */
#define CPH_BOUND_MIN_ROWS 256

/* Per-read state of the walk over rows 1..R. */
typedef struct cph_bound_walk {
  double prod;   /* P_i = mm_1 ... mm_i */
  double growth; /* G_i = gamma_1 ... gamma_i */
  double gmin;   /* min(1, G_1, ..., G_i) */
  double e_prev; /* e of row i (cph_bound_e), for row i + 1 */
} cph_bound_walk;

#define CPH_BOUND_WALK_INIT                                                    \
  { 1.0, 1.0, 1.0, 0.0 }

/* Row i's share of deletions relative to its matches, e_i = rho my_i /
 * (1 - rho gg_i), which the next row's growth factor takes (0 before the
 * first row). */
double cph_bound_e(double my, double gg);

/* Row i's growth factor gamma_i from its probabilities and the row
 * above's e, or NaN when the bound does not hold for the row (mm <= 0, a
 * gap continuation of 1). Inputs are the float pass's probabilities (GKL's
 * float tables), widened. */
double cph_bound_growth(double mm, double gapm, double mx, double gg,
                        double e_prev);

/* Advance the walk by row i (P_i, G_i, Gmin) and return q_i = P_i / G_i. */
double cph_bound_step(cph_bound_walk *w, double mm, double growth);

/* The read's threshold T after its last row R: 2^104 G_R, or NaN when the
 * walk was invalid or (R + 1) G_R / Gmin exceeds 2^20 (see bound.c). */
double cph_bound_threshold(const cph_bound_walk *w, size_t rows);

/* x rounded up to a float (+inf above FLT_MAX, NaN stays NaN), as OpenCL's
 * convert_float_rtp. */
float cph_float_up(double x);

/* A row's stored weight: x rounded up, and at least FLT_MIN, so that a
 * device or thread that flushes denormals never reads it as 0 (NaN stays
 * NaN). */
float cph_bound_slot(double x);

/* ---- Double first ----------------------------------------------------
 * Float mode may compute a pair's double rescue before its float pass
 * (src/engine/compute.c, "double first"): where the double result proves
 * that GKL's float sum falls below its threshold, that result is GKL's
 * answer and the float pass is not needed; any other pair then runs its
 * float pass as usual. The proof is in bound.c. */

/* The per-coefficient growth factor of the proof from GKL's float and
 * double tables (at least 1 + 2^-20), or +inf where a float entry is
 * positive and its double one is not; and the factor of a read (at least
 * 1): the largest sum of a state's outgoing double probabilities over its
 * rows. A pair's growth is their product. */
double cph_first_growth(void);
double cph_first_outgoing(const clphmm_read *read);

/* The log10 likelihood below which a pair of R rows and H columns whose
 * GKL double result is that value certainly falls below GKL's float
 * threshold (1e-28f), with `growth` from cph_first_growth; -inf where the
 * proof does not cover the pair's size (R + H > 2^21, or more than 2^40
 * cells) or growth is not finite. */
double cph_first_limit(size_t rows, size_t cols, double growth);

#endif
