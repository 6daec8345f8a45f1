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
#include <stdint.h>

#include "model/model.h"

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

/* ---- Double first ----------------------------------------------------
 *
 * The claim: a pair of R rows and H columns (R + H <= 2^21, at most 2^40
 * cells) whose GKL double result is L_d (log10, as the rescue returns it)
 * has a float pass sum f < 1e-28f whenever
 *     L_d < -28 - log10(2^120) - log10(2) - (R + H + 1) log10(g),
 * g = cph_first_growth(). GKL would then rescue it, and its answer is L_d.
 *
 * 1. Paths. Each cell of the recurrences (PAIRHMM_SPEC 5.2) is a sum over
 *    paths from row 0 of products of coefficients: prior x mm or prior x
 *    gapm entering a row's M, mx or xx entering its X, my or yy for a
 *    step along the row in Y. A path takes one coefficient per row (R)
 *    and at most one per column it advances along a row (H), so at most
 *    R + H, and starts at init = K / H (K = 2^120 in float, 2^1020 in
 *    double); GKL's sum adds the last row's M and X.
 * 2. Tables. Every float coefficient is at most t^2 times the double one
 *    (t: the largest ratio of a float table entry, mm, ph2pr, gapm = 1 -
 *    ph2pr and the priors 1 - ph2pr and ph2pr / 3, to the double one), so
 *    in exact arithmetic the float recurrence's sum, scaled by 2^-120, is
 *    at most t^(2(R + H)) times the double one's, scaled by 2^-1020.
 * 3. Rounding. As in the early exit's proof (part 2 above), each cell the
 *    float pass computes is at most (1 + 2^-24)^4 times the recurrence
 *    applied to the computed cells, plus at most 2^-148; the scaled form
 *    is a change of variables with the same bound; flushing denormals
 *    only lowers cells; rounding is monotone. So the computed sum is at
 *    most the exact sum of the recurrence whose coefficients are each
 *    multiplied by (1 + 2^-20) (covering (1 + 2^-24)^4 and the scaled
 *    form's double constants), i.e. at most (1 + 2^-20)^(R + H) times,
 *    plus the additive terms grown along the paths after them. With s the
 *    largest sum of a state's outgoing double coefficients (mm + mx + my,
 *    gapm + gg: 1 up to rounding; priors are at most 1), a path's
 *    continuation weighs at most s^(R + H) times that much: the additive
 *    terms total at most 3 2^40 2^-148 g^(R + H) < 2^-105 g^(R + H).
 *    The last row's sums over at most 2^21 + 1 columns lose at most a
 *    factor (1 + 2^-24)^(2^21 + 2) < 1.14, init = fl(2^120 / H) and the
 *    final rounding to float a factor 1 + 2^-23 together, and the scaled
 *    form's weights in double much less.
 * 4. The double side. The rescue's result is GKL's double computation
 *    (the exact pass, or the scaled form where its sum stands): the same
 *    path sums with double coefficients, each cell within (1 + 2^-53)^4
 *    of the recurrence, so its sum is at least (1 - 2^-50)^(5 (R + H)) >
 *    1 - 2^-26 times the exact one, less additive terms of double's
 *    subnormal range that vanish after scaling by 2^-900; the log10 adds
 *    a relative error near 2^-52.
 * Together, with g = (1 + 2^-20) t^2 s (s >= 1 from the pair's read:
 * tables of all qualities would give s = 2, from insertion and deletion
 * qualities of 0): f < 1.15 g^(R + H + 1)
 * 10^(L_d + log10(2^120)) + 2^-105 g^(R + H), which the claim's condition
 * (a factor 2, and g^(R + H + 1)) keeps below 1e-28f (1e-28 (1 -
 * 3e-8); 2^-105 g^(R + H) < 2.2e-31 for g^(2^21) < 10). NaN fails the
 * test; -inf (a double sum of 0) passes it. */
static double ratio_up(double f, double d, double most) {
  if (f == 0.0 && d == 0.0)
    return most;
  if (!(d > 0.0))
    return INFINITY;
  const double r = f / d * (1.0 + 0x1p-50);
  return r > most ? r : most;
}

double cph_first_growth(void) {
  const cph_tables_f *tf = cph_tables_gkl_float();
  const cph_tables_d *td = cph_tables_double(CPH_GKL_DOUBLE);
  double t = 1.0;
  for (size_t k = 0; k < CPH_MM_SIZE; k++)
    t = ratio_up(tf->mm[k], td->mm[k], t);
  for (size_t q = 0; q < CPH_NQUAL; q++) {
    const float fp = tf->ph2pr[q];
    t = ratio_up(fp, td->ph2pr[q], t);
    t = ratio_up(1.0f - fp, 1.0 - td->ph2pr[q], t);
    t = ratio_up(fp / 3.0f, td->ph2pr[q] / 3.0, t);
  }
  return (1.0 + 0x1p-20) * t * t * (1.0 + 0x1p-50);
}

double cph_first_outgoing(const clphmm_read *read) {
  const cph_tables_d *td = cph_tables_double(CPH_GKL_DOUBLE);
  double s = 1.0;
  for (size_t k = 0; k < read->length; k++) {
    const unsigned i = read->ins_quals[k] & 127, d = read->del_quals[k] & 127;
    const unsigned c = read->gcp_quals[k] & 127, hi = i > d ? i : d;
    const double m =
        td->mm[hi * (hi + 1) / 2 + (i + d - hi)] + td->ph2pr[i] + td->ph2pr[d];
    const double x = (1.0 - td->ph2pr[c]) + td->ph2pr[c];
    s = m > s ? m : s;
    s = x > s ? x : s;
  }
  return s * (1.0 + 0x1p-50);
}

/* log10(2^120), and log10(1e-28f) less a margin for its rounding. */
#define LOG10_K_FLOAT 36.12359947967774
#define LOG10_MIN_ACCEPTED (-28.000001)

double cph_first_limit(size_t rows, size_t cols, double growth) {
  if (!(growth < INFINITY) || rows > ((size_t)1 << 21) ||
      cols > ((size_t)1 << 21) - rows ||
      (rows && (uint64_t)(cols + 1) > (((uint64_t)1 << 40) / (rows + 1))))
    return -INFINITY;
  const double spread = (double)(rows + cols + 1) * log10(growth);
  if (!(spread < 1.0)) /* g^(R + H) < 10, for the additive terms */
    return -INFINITY;
  return LOG10_MIN_ACCEPTED - LOG10_K_FLOAT - log10(2.0) - spread;
}
