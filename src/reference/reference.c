#include "reference/reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/validate.h"

#define CPH_T float
#define CPH_ROW cph_row_f
#define CPH_DP dp_float
#include "reference/reference_dp.h"
#undef CPH_T
#undef CPH_ROW
#undef CPH_DP

#define CPH_T double
#define CPH_ROW cph_row_d
#define CPH_DP dp_double
#include "reference/reference_dp.h"
#undef CPH_T
#undef CPH_ROW
#undef CPH_DP

/* Scratch for one pair, in one allocation: the six rolling DP rows, the
 * read's row parameters, and the base codes of read and haplotype. */
typedef struct scratch {
  unsigned char *mem;
  void *work, *rows;
  uint8_t *rc, *hc;
} scratch;

static clphmm_status scratch_alloc(const clphmm_read *read,
                                   const clphmm_haplotype *hap, size_t row_size,
                                   size_t cell_size, scratch *s) {
  size_t r = read->length, h = hap->length;
  s->mem = r <= SIZE_MAX / 64 && h <= SIZE_MAX / 64
               ? malloc(6 * (h + 1) * cell_size + r * row_size + r + h)
               : NULL;
  if (!s->mem)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                     "reference: no memory for a %zu x %zu pair", r, h);
  s->work = s->mem;
  s->rows = s->mem + 6 * (h + 1) * cell_size;
  s->rc = (uint8_t *)s->rows + r * row_size;
  s->hc = s->rc + r;
  cph_encode_bases(read->bases, r, s->rc);
  cph_encode_bases(hap->bases, h, s->hc);
  return CLPHMM_SUCCESS;
}

/* The row-by-row oracle on one pair, with its own scratch. */
static clphmm_status scalar_float(const clphmm_read *read,
                                  const clphmm_haplotype *hap, float *sum) {
  scratch s;
  clphmm_status st =
      scratch_alloc(read, hap, sizeof(cph_row_f), sizeof(float), &s);
  if (st)
    return st;
  cph_rows_float(read, s.rows);
  *sum = dp_float(s.rows, s.rc, read->length, s.hc, hap->length, 0, s.work);
  free(s.mem);
  return CLPHMM_SUCCESS;
}

static clphmm_status scalar_double(const clphmm_read *read,
                                   const clphmm_haplotype *hap,
                                   cph_flavor flavor, double *sum) {
  scratch s;
  clphmm_status st =
      scratch_alloc(read, hap, sizeof(cph_row_d), sizeof(double), &s);
  if (st)
    return st;
  cph_rows_double(read, flavor, s.rows);
  *sum = dp_double(s.rows, s.rc, read->length, s.hc, hap->length,
                   flavor == CPH_JAVA_DOUBLE, s.work);
  free(s.mem);
  return CLPHMM_SUCCESS;
}

/* AUTO, or a kernel this build or CPU lacks, is the best one here. */
static cph_ref_kernel resolve(cph_ref_kernel k) {
  return k == CPH_REF_AUTO || !cph_ref_kernel_available(k)
             ? cph_ref_kernel_best()
             : k;
}

clphmm_status cph_reference_sum(const clphmm_read *read,
                                const clphmm_haplotype *hap, cph_flavor flavor,
                                cph_ref_kernel kernel, double *sum) {
  *sum = 0.0;
  kernel = resolve(kernel);
  if (read->length == 0 || hap->length == 0)
    return CLPHMM_SUCCESS;
  clphmm_status st;
  if (kernel == CPH_REF_SCALAR) {
    float f = 0.0f;
    st = flavor == CPH_GKL_FLOAT ? scalar_float(read, hap, &f)
                                 : scalar_double(read, hap, flavor, sum);
    if (!st && flavor == CPH_GKL_FLOAT)
      *sum = f;
    return st;
  }
  cph_wave_work w;
  if ((st = cph_wave_init(&w, read->length, hap->length)))
    return st;
  cph_wave_read(&w, read, flavor);
  *sum = flavor == CPH_GKL_FLOAT ? cph_wave_float(&w, hap, kernel)
                                 : cph_wave_double(&w, hap, kernel);
  cph_wave_free(&w);
  return CLPHMM_SUCCESS;
}

clphmm_status cph_reference_pair_float(const clphmm_read *read,
                                       const clphmm_haplotype *hap,
                                       float *sum) {
  double d;
  clphmm_status st =
      cph_reference_sum(read, hap, CPH_GKL_FLOAT, CPH_REF_AUTO, &d);
  *sum = (float)d; /* exact: the float sum widened and back */
  return st;
}

clphmm_status cph_reference_pair_double(const clphmm_read *read,
                                        const clphmm_haplotype *hap,
                                        cph_flavor flavor, double *sum) {
  return cph_reference_sum(read, hap, flavor, CPH_REF_AUTO, sum);
}

clphmm_status cph_reference_pair_with(const clphmm_read *read,
                                      const clphmm_haplotype *hap,
                                      clphmm_precision precision,
                                      cph_ref_kernel kernel, double *result) {
  double s;
  clphmm_status st;
  if (precision == CLPHMM_PRECISION_FLOAT) {
    if ((st = cph_reference_sum(read, hap, CPH_GKL_FLOAT, kernel, &s)))
      return st;
    if (!cph_needs_rescue((float)s)) {
      *result = cph_log10_float((float)s);
      return CLPHMM_SUCCESS;
    }
  }
  const cph_flavor flavor =
      precision == CLPHMM_PRECISION_FLOAT ? CPH_GKL_DOUBLE : CPH_JAVA_DOUBLE;
  if ((st = cph_reference_sum(read, hap, flavor, kernel, &s)))
    return st;
  *result = cph_log10_double(s);
  return CLPHMM_SUCCESS;
}

/* One pair's log10 likelihood in a precision mode, rescue included (as
 * cph_reference_pair), with the batch's scratch, where `first` (the float
 * flavor in float mode) is already prepared; *dbl_ready says whether the
 * double rescue flavor is too. */
static clphmm_status pair_result(cph_wave_work *w, const clphmm_read *read,
                                 const clphmm_haplotype *hap, cph_flavor first,
                                 cph_ref_kernel kernel, int *dbl_ready,
                                 double *result) {
  if (read->length == 0 || hap->length == 0) {
    *result = cph_log10_double(0.0); /* -inf, as GATK Java */
    return CLPHMM_SUCCESS;
  }
  if (kernel == CPH_REF_SCALAR)
    return cph_reference_pair_with(read, hap,
                                   first == CPH_GKL_FLOAT
                                       ? CLPHMM_PRECISION_FLOAT
                                       : CLPHMM_PRECISION_DOUBLE,
                                   kernel, result);
  if (first == CPH_GKL_FLOAT) {
    const float f = cph_wave_float(w, hap, kernel);
    if (!cph_needs_rescue(f)) {
      *result = cph_log10_float(f);
      return CLPHMM_SUCCESS;
    }
    if (!*dbl_ready)
      cph_wave_read(w, read, CPH_GKL_DOUBLE);
    *dbl_ready = 1;
  }
  *result = cph_log10_double(cph_wave_double(w, hap, kernel));
  return CLPHMM_SUCCESS;
}

/* The longest read and haplotype of a batch. */
static void batch_max(const clphmm_batch *b, size_t *rmax, size_t *hmax) {
  *rmax = *hmax = 0;
  for (size_t r = 0; r < b->n_reads; r++)
    if (b->reads[r].length > *rmax)
      *rmax = b->reads[r].length;
  for (size_t h = 0; h < b->n_haplotypes; h++)
    if (b->haplotypes[h].length > *hmax)
      *hmax = b->haplotypes[h].length;
}

/* Every pair of a batch into out, read-major. Each read's parameters are
 * built once per flavor for all its haplotypes. */
static clphmm_status batch_results(const clphmm_batch *b,
                                   clphmm_precision precision,
                                   cph_ref_kernel kernel, double *out) {
  const cph_flavor first =
      precision == CLPHMM_PRECISION_FLOAT ? CPH_GKL_FLOAT : CPH_JAVA_DOUBLE;
  size_t rmax, hmax;
  batch_max(b, &rmax, &hmax);
  kernel = resolve(kernel);
  if (b->n_reads == 0 || b->n_haplotypes == 0)
    return CLPHMM_SUCCESS;
  cph_wave_work w;
  clphmm_status st =
      kernel == CPH_REF_SCALAR ? CLPHMM_SUCCESS : cph_wave_init(&w, rmax, hmax);
  if (st)
    return st;
  size_t k = 0;
  for (size_t r = 0; r < b->n_reads && !st; r++) {
    const clphmm_read *read = &b->reads[r];
    int dbl_ready = first != CPH_GKL_FLOAT;
    if (kernel != CPH_REF_SCALAR && read->length)
      cph_wave_read(&w, read, first);
    for (size_t h = 0; h < b->n_haplotypes && !st; h++)
      st = pair_result(&w, read, &b->haplotypes[h], first, kernel, &dbl_ready,
                       &out[k++]);
  }
  if (kernel != CPH_REF_SCALAR)
    cph_wave_free(&w);
  return st;
}

clphmm_status cph_reference_with(const clphmm_batch *batches, size_t n_batches,
                                 clphmm_precision precision,
                                 cph_ref_kernel kernel, double *out) {
  size_t n_pairs;
  clphmm_status st = cph_validate_batches(batches, n_batches, &n_pairs, NULL);
  if (st)
    return st;
  if (precision != CLPHMM_PRECISION_FLOAT &&
      precision != CLPHMM_PRECISION_DOUBLE)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_reference: unknown precision %d", (int)precision);
  if (n_pairs > 0 && !out)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_reference: out is NULL");
  double *tmp = malloc((n_pairs ? n_pairs : 1) * sizeof *tmp);
  if (!tmp)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                     "clphmm_reference: no memory for %zu results", n_pairs);
  size_t k = 0;
  for (size_t b = 0; b < n_batches && !st; b++) {
    st = batch_results(&batches[b], precision, kernel, tmp + k);
    k += batches[b].n_reads * batches[b].n_haplotypes;
  }
  if (!st)
    for (size_t i = 0; i < n_pairs; i++)
      out[i] = tmp[i];
  free(tmp);
  return st;
}

clphmm_status clphmm_reference(const clphmm_batch *batches, size_t n_batches,
                               clphmm_precision precision, double *out) {
  /* CLPHMM_REFERENCE_KERNEL picks the code (results are the same), for
   * benchmarks: the row-by-row oracle, or one instruction set. */
  cph_ref_kernel kernel = CPH_REF_AUTO;
  const char *env = getenv("CLPHMM_REFERENCE_KERNEL");
  if (env && *env) {
    int k = CPH_REF_AUTO;
    while (k <= CPH_REF_KERNEL_LAST &&
           strcmp(env, cph_ref_kernel_name((cph_ref_kernel)k)))
      k++;
    if (k > CPH_REF_KERNEL_LAST || !cph_ref_kernel_available(k))
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "CLPHMM_REFERENCE_KERNEL='%s' is not one of auto, "
                       "scalar, wave, wave-avx2, wave-avx512 that this "
                       "build and CPU run (auto: %s)",
                       env, cph_ref_kernel_name(cph_ref_kernel_best()));
    kernel = (cph_ref_kernel)k;
  }
  return cph_reference_with(batches, n_batches, precision, kernel, out);
}
