#include "reference/reference.h"

#include <math.h>
#include <stdlib.h>

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

clphmm_status cph_reference_pair_float(const clphmm_read *read,
                                       const clphmm_haplotype *hap,
                                       float *sum) {
  *sum = 0.0f;
  if (read->length == 0 || hap->length == 0)
    return CLPHMM_SUCCESS;
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

clphmm_status cph_reference_pair_double(const clphmm_read *read,
                                        const clphmm_haplotype *hap,
                                        cph_flavor flavor, double *sum) {
  *sum = 0.0;
  if (read->length == 0 || hap->length == 0)
    return CLPHMM_SUCCESS;
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

clphmm_status cph_reference_pair(const clphmm_read *read,
                                 const clphmm_haplotype *hap,
                                 clphmm_precision precision, double *result) {
  clphmm_status st;
  if (precision == CLPHMM_PRECISION_FLOAT) {
    float f;
    if ((st = cph_reference_pair_float(read, hap, &f)))
      return st;
    if (!cph_needs_rescue(f)) {
      *result = cph_log10_float(f);
      return CLPHMM_SUCCESS;
    }
  }
  cph_flavor flavor =
      precision == CLPHMM_PRECISION_FLOAT ? CPH_GKL_DOUBLE : CPH_JAVA_DOUBLE;
  double d;
  if ((st = cph_reference_pair_double(read, hap, flavor, &d)))
    return st;
  *result = cph_log10_double(d);
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_reference(const clphmm_batch *batches, size_t n_batches,
                               clphmm_precision precision, double *out) {
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
  for (size_t b = 0; b < n_batches && !st; b++)
    for (size_t r = 0; r < batches[b].n_reads && !st; r++)
      for (size_t h = 0; h < batches[b].n_haplotypes && !st; h++)
        st = cph_reference_pair(&batches[b].reads[r], &batches[b].haplotypes[h],
                                precision, &tmp[k++]);
  if (!st)
    for (size_t i = 0; i < n_pairs; i++)
      out[i] = tmp[i];
  free(tmp);
  return st;
}
