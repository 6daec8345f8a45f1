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
 * table and of ph2pr (the scaled form's constants), then per phred value
 * float mode's match and mismatch priors as two floats (the scaled float
 * form reads them so).
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
/* The tables' sections, as src/model/model.h's CPH_TAB_* (entries). */
#define NQUAL 128
#define TAB_PH2PR (NQUAL * (NQUAL + 1) / 2)
#define TAB_GAPM (TAB_PH2PR + NQUAL)
#define TAB_MATCH (TAB_GAPM + NQUAL)
#define TAB_MISMATCH (TAB_MATCH + NQUAL)
#define TAB_INV_MM (TAB_MISMATCH + NQUAL) /* 1 / mm, as the mm table */
#define TAB_INV_PH2PR (TAB_INV_MM + NQUAL * (NQUAL + 1) / 2)
/* float mode's (match, mismatch) as float pairs, in the double table of the
 * scaled form */
#define TAB_PRIORS_F (TAB_INV_PH2PR + NQUAL)

static uint mm_index(uint i, uint d) {
  const uint hi = max(i, d), lo = min(i, d);
  return hi * (hi + 1) / 2 + lo;
}

/* What a row takes from the row above in the scaled form, as one vector:
 * its 1/mm, mx and my (1s above a read's first row). A kernel computing a
 * run of rows carries them from one row to the next instead of loading
 * the row above's bytes and tables again. (H100, 1e10 cells, kernels
 * computing their rows: with float priors, row_below's fpri, 3.30 instead
 * of 3.37 ms at 128 bases and 3.00 instead of 3.07 at 256; the two
 * together 3.30 instead of 3.42 and 3.00 instead of 3.10.) A vector, not a
 * struct: a struct returned or passed by pointer leaves alias scopes after
 * inlining, which SPIR-V's translator turns into declarations its
 * validator rejects. */
#if CPH_SCALED
typedef double4 above_t; /* (1/mm, mx, my, unused) */
#define ABOVE_FIRST ((above_t)(1, 1, 1, 0))
#else
typedef int above_t; /* nothing: the other forms take no row above */
#define ABOVE_FIRST 0
#endif

/* What row s of the raw bytes (n rows) gives the row below it. */
static above_t above_row(__global const tab_t *tab, __global const uchar *raw,
                         size_t n, size_t s) {
#if CPH_SCALED
  const uint i = raw[2 * n + s], d = raw[3 * n + s];
  return (above_t)(tab[TAB_INV_MM + mm_index(i, d)], tab[TAB_PH2PR + i],
                   tab[TAB_PH2PR + d], 0);
#else
  return ABOVE_FIRST;
#endif
}

/* Row s of the raw bytes (n rows) below the row that gave `ab`
 * (ABOVE_FIRST for a read's first row): in the scaled form (b, g, a, gg,
 * 0, 0, match, mismatch); else (mm, gapm, mx, xx, my, yy, match,
 * mismatch). fpri (a constant): the scaled float form takes its priors as
 * floats (TAB_PRIORS_F: one load, no conversions), the same values. On
 * the H100, with the rows carried (above_t), that made the kernels
 * computing their rows faster (3.30 against 3.49 ms for 1e10 cells at 128
 * bases) and the row preparation slower (564 against 462 us at 64 bases),
 * which keeps the double priors. */
static real8 row_below(__global const tab_t *tab, __global const uchar *raw,
                       size_t n, size_t s, above_t ab, int fpri) {
  const uint q = raw[n + s], i = raw[2 * n + s], d = raw[3 * n + s],
             c = raw[4 * n + s];
  real match, mismatch;
#if CPH_SCALED && !CPH_DOUBLE
  if (fpri) {
    const float2 pr = vload2(q, (__global const float *)(tab + TAB_PRIORS_F));
    match = pr.s0;
    mismatch = pr.s1;
  } else
#endif
  {
    match = (real)tab[TAB_MATCH + q];
    mismatch = (real)tab[TAB_MISMATCH + q];
  }
#if CPH_SCALED
  /* Products with the reciprocals of mm and mx, in the host's order
   * (scaled_step in src/model/model.c: no divisions). */
  const tab_t rmm = tab[TAB_INV_MM + mm_index(i, d)],
              gapm = tab[TAB_GAPM + c];
  const tab_t rmx = tab[TAB_INV_PH2PR + i], gg = tab[TAB_PH2PR + c];
  const real b = (real)(gapm * ab.s1 * rmm * ab.s0);
  const real g = (real)(gapm * ab.s2 * rmm);
  const real a = (real)(gg * ab.s1 * rmx * ab.s0);
  return (real8)(b, g, a, (real)gg, (real)0, (real)0, match, mismatch);
#else
  (void)ab;
  const real ph_c = tab[TAB_PH2PR + c];
  return (real8)(tab[mm_index(i, d)], tab[TAB_GAPM + c], tab[TAB_PH2PR + i],
                 ph_c, tab[TAB_PH2PR + d], ph_c, match, mismatch);
#endif
}

/* Row s alone, `first` when it is its read's first row. */
static real8 row_of(__global const tab_t *tab, __global const uchar *raw,
                    size_t n, size_t s, int first) {
  return row_below(tab, raw, n, s,
                   first ? ABOVE_FIRST : above_row(tab, raw, n, s - 1), 0);
}
#endif
