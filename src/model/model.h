/* The probability model: phred -> probability tables, the quantised
 * match-to-match table, per-row transition parameters and the scaling
 * constants, exactly as GKL (float, double) and GATK Java (double) build
 * them. Shared by the CPU reference and the OpenCL path, so both start from
 * bit-identical parameters (PAIRHMM_SPEC sections 2-5). */
#ifndef CLPHMM_MODEL_H
#define CLPHMM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "clphmm.h"

#define CPH_NQUAL 128 /* valid phred values 0..127 */
#define CPH_MM_SIZE (CPH_NQUAL * (CPH_NQUAL + 1) / 2)

/* Which implementation's tables and final sum a computation follows. */
typedef enum cph_flavor {
  CPH_GKL_FLOAT = 0,  /* float mode, first pass */
  CPH_GKL_DOUBLE = 1, /* float mode, double rescue */
  CPH_JAVA_DOUBLE = 2 /* double mode */
} cph_flavor;

typedef struct cph_tables_f {
  float ph2pr[CPH_NQUAL];
  float mm[CPH_MM_SIZE];
} cph_tables_f;

typedef struct cph_tables_d {
  double ph2pr[CPH_NQUAL];
  double mm[CPH_MM_SIZE];
} cph_tables_d;

/* Immutable tables, built once (thread-safe). */
const cph_tables_f *cph_tables_gkl_float(void);
const cph_tables_d *cph_tables_double(cph_flavor flavor);

/* Per-read-row parameters: the six transitions and the two emission priors
 * of row i (read base i-1). The layout is shared with the kernels. */
typedef struct cph_row_f {
  float mm, gapm, mx, xx, my, yy, match, mismatch;
} cph_row_f;
typedef struct cph_row_d {
  double mm, gapm, mx, xx, my, yy, match, mismatch;
} cph_row_d;

/* Fill rows[0..length-1] for a validated read. */
void cph_rows_float(const clphmm_read *read, cph_row_f *rows);

/* Rows for the scaled fast kernel form (cl/pairhmm.cl): per row i the
 * constants b, g, a and the gap continuation in the first four slots and
 * the two priors in the last two, computed in double from GKL's tables of
 * the precision (float: cph_row_fs, dbl: cph_row_ds, for the rescue). That
 * form keeps row i's M divided by P_i = mm_1 ... mm_i and its X by
 * P_i-1 mx_i; *wm = P_R and *wx = P_R-1 mx_R turn the kernel's two last-row
 * sums into the scaled final sum. */
typedef struct cph_row_fs {
  float b, g, a, gg;
  /* The early-exit bound (model/bound.h): qm_i and qx_i, rounded up;
   * the last row's qm holds the read's threshold T instead. */
  float qm, qx;
  float match, mismatch;
} cph_row_fs;
typedef struct cph_row_ds {
  double b, g, a, gg, unused[2], match, mismatch;
} cph_row_ds;
void cph_rows_scaled(const clphmm_read *read, int dbl, void *rows, double *wm,
                     double *wx);
void cph_rows_double(const clphmm_read *read, cph_flavor flavor,
                     cph_row_d *rows);

/* The scaled form's weights alone (*wm = P_R, *wx = P_R-1 mx_R, as
 * cph_rows_scaled gives them) from a read's insertion and deletion
 * qualities; unchanged for length 0. */
void cph_weights_scaled(const uint8_t *ins, const uint8_t *del, size_t length,
                        int dbl, double *wm, double *wx);

/* The same for four reads at once, as four independent chains of
 * multiplications (32 reads of 150 rows: 4.6 us against 5.2 one by one on
 * an AMD EPYC), into w[2 r], w[2 r + 1]; a read of length 0 keeps its w. */
void cph_weights_scaled4(const uint8_t *const ins[4],
                         const uint8_t *const del[4], const size_t length[4],
                         int dbl, double w[8]);

/* The tables of the device's row preparation (cl/prep.cl and cl/rows.cl,
 * whose TAB_* offsets are these CPH_TAB_*) in a flavor:
 * CPH_PREP_TABLE_ENTRIES values, in double for the scaled form (its
 * constants are computed in double), else in the flavor's precision: the
 * match-to-match table, then per phred value ph2pr, 1 - ph2pr (gapm), the
 * match prior and the mismatch prior, each exactly as cph_rows_scaled,
 * cph_rows_float and cph_rows_double compute them, then the reciprocals
 * of the match-to-match table and of ph2pr (the scaled form's constants
 * multiply by them: cph_rows_scaled), then per phred value, in the scaled
 * float form's table, the float match and mismatch priors side by side in
 * one double's bytes (zeros in the other tables). Writes them to `out`
 * unless NULL; returns their size in bytes. */
#define CPH_TAB_PH2PR CPH_MM_SIZE /* where each section starts (entries) */
#define CPH_TAB_GAPM (CPH_TAB_PH2PR + CPH_NQUAL)
#define CPH_TAB_MATCH (CPH_TAB_GAPM + CPH_NQUAL)
#define CPH_TAB_MISMATCH (CPH_TAB_MATCH + CPH_NQUAL)
#define CPH_TAB_INV_MM (CPH_TAB_MISMATCH + CPH_NQUAL)
#define CPH_TAB_INV_PH2PR (CPH_TAB_INV_MM + CPH_MM_SIZE)
#define CPH_TAB_PRIORS_F (CPH_TAB_INV_PH2PR + CPH_NQUAL)
#define CPH_PREP_TABLE_ENTRIES (CPH_TAB_PRIORS_F + CPH_NQUAL)
size_t cph_prep_tables(cph_flavor flavor, int scaled, void *out);

/* Read or haplotype bases as codes 0..4 (A C G T N), case folded; an
 * invalid byte becomes CPH_BASE_INVALID. Returns the OR of the codes: bit 7
 * is set when a byte was invalid. */
uint8_t cph_encode_bases(const char *bases, size_t length, uint8_t *codes);

/* Scaling constants K (2^120 float, 2^1020 double) and the conversion of a
 * scaled final sum to log10 exactly as each implementation does it. */
#define CPH_SCALE_FLOAT 0x1p120f
#define CPH_SCALE_DOUBLE 0x1p1020
double cph_log10_float(float sum);
double cph_log10_double(double sum);

/* GKL's MIN_ACCEPTED: a float sum below this is recomputed in double.
 * clphmm also recomputes a sum that is not finite (GKL would keep a NaN):
 * valid GATK inputs never give one, but the scaled fast kernel form can
 * overflow on extreme quality jumps, and the rule then falls back to the
 * double computation instead of returning garbage. */
#define CPH_MIN_ACCEPTED 1e-28f
static inline int cph_needs_rescue(float sum) {
  return !(sum >= CPH_MIN_ACCEPTED) || sum > 0x1.fffffep127f;
}

#endif
