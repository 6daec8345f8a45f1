/* The CPU reference's fast path: the forward algorithm by anti-diagonals
 * (reference_wave.h), vectorized by the compiler, with run-time selection
 * of AVX2 or AVX-512 code on x86-64. Bit-identical to the row-by-row
 * oracle (reference_dp.h), which the tests compare it with. */
#ifndef CLPHMM_REFERENCE_WAVE_H
#define CLPHMM_REFERENCE_WAVE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Which code computes a pair's DP. */
typedef enum cph_ref_kernel {
  CPH_REF_AUTO = 0,        /* the fastest wavefront code this CPU runs */
  CPH_REF_SCALAR = 1,      /* the row-by-row oracle (reference_dp.h) */
  CPH_REF_WAVE = 2,        /* wavefront, the build's baseline instructions */
  CPH_REF_WAVE_AVX2 = 3,   /* wavefront, AVX2 (x86-64 with GCC or Clang) */
  CPH_REF_WAVE_AVX512 = 4, /* wavefront, AVX-512F (likewise) */
} cph_ref_kernel;
#define CPH_REF_KERNEL_LAST CPH_REF_WAVE_AVX512

/* Whether this build and CPU can run `k` (AUTO and SCALAR always). */
int cph_ref_kernel_available(cph_ref_kernel k);
/* "auto", "scalar", "wave", "wave-avx2", "wave-avx512". */
const char *cph_ref_kernel_name(cph_ref_kernel k);
/* What AUTO runs here. */
cph_ref_kernel cph_ref_kernel_best(void);

/* The parameter planes of a prepared read (row i at index i - 1 of each,
 * zeros after the read up to a whole strip of the widest kernel). */
enum {
  WAVE_MM,
  WAVE_GAPM,
  WAVE_MX,
  WAVE_XX,
  WAVE_MY,
  WAVE_YY,
  WAVE_MATCH,
  WAVE_MISMATCH,
  WAVE_PLANES
};

/* Scratch for the pairs of reads up to rmax and haplotypes up to hmax
 * bases. Each precision keeps one prepared read, so that a read's
 * parameters are built once for all its haplotypes. */
typedef struct cph_wave_work {
  unsigned char *mem;
  size_t rmax, hmax;
  size_t stride; /* rows of each parameter plane */
  /* per precision (0 float, 1 double): parameter planes, read masks,
   * haplotype masks, diagonals; the prepared read's length and flavor */
  void *par[2], *rmask[2], *hrev[2], *buf[2];
  size_t length[2];
  cph_flavor flavor[2];
  void *rows;     /* the model's per-row parameters, rmax of cph_row_d */
  uint8_t *codes; /* base codes, max(rmax, hmax) */
} cph_wave_work;

/* CLPHMM_ERROR_OUT_OF_MEMORY (with the error set) when it cannot. */
clphmm_status cph_wave_init(cph_wave_work *w, size_t rmax, size_t hmax);
void cph_wave_free(cph_wave_work *w);

/* Prepare a validated, non-empty read of at most rmax bases for `flavor`
 * (CPH_GKL_FLOAT in the float planes, the double flavors in the double
 * ones; preparing one double flavor replaces the other). */
void cph_wave_read(cph_wave_work *w, const clphmm_read *read,
                   cph_flavor flavor);

/* Scaled final sum of the prepared read of that precision against a
 * validated, non-empty haplotype of at most hmax bases, by wavefront code
 * `k` (not SCALAR; one this CPU lacks runs the baseline code). */
float cph_wave_float(cph_wave_work *w, const clphmm_haplotype *hap,
                     cph_ref_kernel k);
double cph_wave_double(cph_wave_work *w, const clphmm_haplotype *hap,
                       cph_ref_kernel k);

#endif
