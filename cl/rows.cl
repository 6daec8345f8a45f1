/* One read row's transitions and priors from its raw bytes: what the row
 * preparation (prep.cl) stores for the lane-group kernel, and what that
 * kernel computes itself in programs built with CPH_INLINE (pairhmm.cl:
 * a small call's launches then need no preparation kernel in front of
 * them). Both use row_of, so both have the host's bits (cph_rows_scaled,
 * cph_rows_float, cph_rows_double): the scaled form's constants in double
 * from the tables of the flavor, rounded once to the program's precision;
 * double division is correctly rounded in OpenCL and contraction is off
 * here, so nothing is fused.
 *
 * Tables (host: cph_prep_tables): the match-to-match table (CPH_MM_SIZE
 * entries), then ph2pr, gapm = 1 - ph2pr, the match prior 1 - ph2pr and the
 * mismatch prior ph2pr / 3 for phred 0..127, each computed by the host in
 * the flavor's precision (in double for the scaled form, widened exactly
 * from float in float mode), then the reciprocals of the match-to-match
 * table and of ph2pr (the scaled form's constants).
 *
 * Raw bytes (n rows): five arrays of n bytes, base codes (the kernels read
 * them directly), base, insertion and deletion qualities and gap
 * continuation penalties.
 *
 * The scaled form needs double arithmetic: on devices without it the
 * functions are absent (ROWS_ON 0) and the host prepares the rows. Vector
 * programs (the CPU kernel) leave them out too: the host prepares their
 * rows. */
#ifndef CPH_VEC
#define CPH_VEC 0
#endif
#if !CPH_VEC && (!CPH_SCALED || CPH_DOUBLE || defined(cl_khr_fp64))
#define ROWS_ON 1
#else
#define ROWS_ON 0
#endif
#if ROWS_ON
#pragma OPENCL FP_CONTRACT OFF
#if CPH_SCALED && !CPH_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if CPH_SCALED
typedef double tab_t;
#else
typedef real tab_t;
#endif
#define NQUAL 128
#define TAB_PH2PR (NQUAL * (NQUAL + 1) / 2)
#define TAB_GAPM (TAB_PH2PR + NQUAL)
#define TAB_MATCH (TAB_GAPM + NQUAL)
#define TAB_MISMATCH (TAB_MATCH + NQUAL)
#define TAB_INV_MM (TAB_MISMATCH + NQUAL) /* 1 / mm, as the mm table */
#define TAB_INV_PH2PR (TAB_INV_MM + NQUAL * (NQUAL + 1) / 2)

static uint mm_index(uint i, uint d) {
  const uint hi = max(i, d), lo = min(i, d);
  return hi * (hi + 1) / 2 + lo;
}

/* Row s of the raw bytes (n rows), `first` when it is its read's first
 * row: in the scaled form (b, g, a, gg, 0, 0, match, mismatch), the
 * constants taking the row above (1s above the first row); else (mm,
 * gapm, mx, xx, my, yy, match, mismatch). */
static real8 row_of(__global const tab_t *tab, __global const uchar *raw,
                    size_t n, size_t s, int first) {
  const uint q = raw[n + s], i = raw[2 * n + s], d = raw[3 * n + s],
             c = raw[4 * n + s];
  const real match = (real)tab[TAB_MATCH + q],
             mismatch = (real)tab[TAB_MISMATCH + q];
#if CPH_SCALED
  /* Products with the reciprocals of mm and mx, in the host's order
   * (scaled_step in src/model/model.c: no divisions). */
  const tab_t rmm = tab[TAB_INV_MM + mm_index(i, d)],
              gapm = tab[TAB_GAPM + c];
  const tab_t rmx = tab[TAB_INV_PH2PR + i], gg = tab[TAB_PH2PR + c];
  tab_t rpmm = 1, pmx = 1, pmy = 1;
  if (!first) {
    const uint pi = raw[2 * n + s - 1], pd = raw[3 * n + s - 1];
    rpmm = tab[TAB_INV_MM + mm_index(pi, pd)];
    pmx = tab[TAB_PH2PR + pi];
    pmy = tab[TAB_PH2PR + pd];
  }
  const real b = (real)(gapm * pmx * rmm * rpmm);
  const real g = (real)(gapm * pmy * rmm);
  const real a = (real)(gg * pmx * rmx * rpmm);
  return (real8)(b, g, a, (real)gg, (real)0, (real)0, match, mismatch);
#else
  const real ph_c = tab[TAB_PH2PR + c];
  return (real8)(tab[mm_index(i, d)], tab[TAB_GAPM + c], tab[TAB_PH2PR + i],
                 ph_c, tab[TAB_PH2PR + d], ph_c, match, mismatch);
#endif
}
#endif
