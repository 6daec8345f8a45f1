/* The early-exit bound (bound.h). The proof, for one read of R rows and a
 * haplotype of H <= 2^20 bases, in float mode's first pass.
 *
 * 1. Exact arithmetic. Write Sm_k, Sx_k, Sy_k for the sums of row k's M, X
 *    and Y over columns 1..H. From the recurrences (PAIRHMM_SPEC 5.2, row
 *    k's probabilities, xx = yy = gg; priors <= 1; column 0 is zero):
 *        Sm_k <= mm_k Sm_k-1 + gapm_k (Sx_k-1 + Sy_k-1)
 *        Sx_k  = mx_k Sm_k-1 + gg_k Sx_k-1
 *        Sy_k <= my_k Sm_k + gg_k Sy_k,  so  Sy_k <= e_k Sm_k,
 *    e_k = my_k / (1 - gg_k): a row's deletions are bounded by its matches.
 *    So F_k = Sm_k + Sx_k, GKL's sum on the last row, satisfies
 *        F_k <= gamma_k F_k-1,
 *        gamma_k = max(mm_k + mx_k + gapm_k e_k-1, gapm_k + gg_k),
 *    and F_R <= F_i gamma_i+1 ... gamma_R for any row i >= 1. Since mm is
 *    about 1 - mx - my, the first term is about 1 + my_k-1 - my_k and the
 *    second about 1: the bound stays tight while the deletion quality holds
 *    or rises, and loosens with every drop.
 *
 * 2. Rounding. The kernel computes each cell with float coefficients (one
 *    rounding each, from double) and at most three float operations on
 *    nonnegative values, so each computed cell is at most (1 + 2^-24)^4
 *    times the exact recurrence applied to the computed cells above and to
 *    the left, plus at most 2^-148 (round to nearest in the subnormal
 *    range; flushing denormals only lowers cells). The scaled form keeps
 *    m = M / P_k, x = X / (P_k-1 mx_k), y = Y / (P_k my_k) (P_k = mm_1 ...
 *    mm_k <= 1): a linear change of variables, so the same holds for the
 *    unscaled values M' = P_k m etc. of the computed cells. By induction
 *    from row i, every later computed row is bounded by the recurrence
 *    with every coefficient times rho0 = (1 + 2^-24)^4, started from the
 *    computed row i, plus additive terms. Step 1 for that recurrence gives
 *    the factor rho0 max(mm + mx + gapm e', gapm + gg), e' = rho0 my_k-1 /
 *    (1 - rho0 gg_k-1), plus an additive H 2^-148 / (1 - rho0 gg_k-1) <
 *    5 2^20 2^-148 per row from the deletions (1 / (1 - rho gg) < 5 for any
 *    gap continuation of phred >= 1; phred 0 is refused). cph_bound_growth
 *    uses rho = 1 + 2^-20 in both places, which covers rho0 and the double
 *    rounding of its own operations. Write G_i = gamma_1 ... gamma_i and
 *    Gmin = min(1, G_1, ..., G_R) (in practice 1: gapm + gg is 1 up to a
 *    rounding that rho covers).
 *
 * 3. The test. For the computed row i, F'_i = P_i Sm + P_i-1 mx_i Sx =
 *    (P_i / G_i) G_i (Sm + (mx_i / mm_i) Sx) (Sm, Sx: sums of the scaled m
 *    and x of row i), and GKL's sum from the computed last row is at most
 *    (G_R / G_i) F'_i + A. A collects the additive terms: per row at most
 *    2^21 cells (H + G + 3 columns, G <= 64) of 2^-148 and the deletions'
 *    5 2^20 2^-148, under 2^-124, each grown by at most G_R / G_k <= G_R /
 *    Gmin: A <= (R + 1) (G_R / Gmin) 2^-124 <= 2^-104 when (R + 1) G_R /
 *    Gmin <= 2^20, which the threshold requires. The float pass then sums
 *    the last row over at most 2^20 + 3 columns (a factor (1 +
 *    2^-24)^(2^20 + 3) < 1.07), and the host weights the sums in double and
 *    rounds to float: GKL's float sum f is below 1.07 (1 + 2^-22) ((G_R /
 *    G_i) F'_i + A).
 *    The kernel stops when (qm_i Sm + qx_i Sx) T < 1 in float, with qm_i >=
 *    P_i / G_i, qx_i >= (mx_i / mm_i) P_i / G_i and T >= 2^104 G_R (all
 *    rounded up; P_i and G_i carry at most 2^-30 of double rounding; P_i
 *    may even underflow in double, which needs F'_i below 2^-1000).
 *    qm_i and qx_i are at least FLT_MIN (cph_bound_slot): a device that
 *    flushes denormals would read smaller weights as 0 and stop any pair.
 *    The kernel's sums of the row lose at most a factor 1.07 and 2^20
 *    2^-150 to rounding, its three operations a factor (1 - 2^-24)^-3, and
 *    a product below FLT_MIN that flushes to 0 hides less than 2^-126 T <=
 *    2^-2 of the test's value (T <= 2^124 since G_R <= 2^20), two of them
 *    2^-1. So a stop means (G_R / G_i) F'_i < 1.5 1.08 2^-104 + 2^-120,
 *    and f < 1.08 (1.7 2^-104 + 2^-104) < 2^-101, far below GKL's
 *    threshold 1e-28 > 2^-94: GKL rescues every stopped pair.
 *
 * The margin costs little: a pair stops about 2.5 log10 units after its
 * row sums fall below 1e-28 times its remaining growth, at the end of the
 * tile where that happens. */
#include "model/bound.h"

#include <float.h>
#include <math.h>

#define BOUND_RHO (1.0 + 0x1p-20)

double cph_bound_e(double my, double gg) {
  return BOUND_RHO * my / (1.0 - BOUND_RHO * gg);
}

double cph_bound_growth(double mm, double gapm, double mx, double gg,
                        double e_prev) {
  if (!(mm > 0.0) || !(BOUND_RHO * gg < 1.0))
    return NAN;
  const double g1 = mm + mx + gapm * e_prev, g2 = gapm + gg;
  return BOUND_RHO * (g1 > g2 ? g1 : g2);
}

double cph_bound_step(cph_bound_walk *w, double mm, double growth) {
  w->prod = w->prod * mm;
  w->growth = w->growth * growth;
  w->gmin = w->growth < w->gmin ? w->growth : w->gmin;
  return w->prod / w->growth;
}

double cph_bound_threshold(const cph_bound_walk *w, size_t rows) {
  const double g = w->growth;
  return g * ((double)rows + 1.0) <= 0x1p20 * w->gmin ? g * 0x1p104 : NAN;
}

float cph_bound_slot(double x) {
  return x < (double)FLT_MIN ? FLT_MIN : cph_float_up(x);
}

float cph_float_up(double x) {
  float f = (float)x;
  if ((double)f < x)
    f = nextafterf(f, INFINITY);
  return f;
}
