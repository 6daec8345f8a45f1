#include "engine/pack.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#define ROW_REALS 8

void cph_pack_init(cph_pack *p, cph_flavor flavor, int scaled) {
  memset(p, 0, sizeof *p);
  p->flavor = flavor;
  p->scaled = flavor != CPH_JAVA_DOUBLE && scaled;
  p->real_size = flavor == CPH_GKL_FLOAT ? sizeof(float) : sizeof(double);
}

void cph_pack_free(cph_pack *p) {
  free(p->rows);
  free(p->rcodes);
  free(p->hcodes);
  memset(p, 0, sizeof *p);
}

/* Make room for `need` elements of `size` bytes in *buf (capacity *cap),
 * doubling. Returns 0 on overflow or allocation failure (buffer kept). */
static int grow(unsigned char **buf, size_t *cap, size_t need, size_t size) {
  if (need <= *cap)
    return 1;
  size_t n = *cap ? *cap : 1024;
  while (n < need)
    n *= 2;
  if (n > SIZE_MAX / size)
    return 0;
  unsigned char *nb = realloc(*buf, n * size);
  if (!nb)
    return 0;
  *buf = nb;
  *cap = n;
  return 1;
}

static clphmm_status too_large(const char *what) {
  return cph_error(CLPHMM_ERROR_TOO_LARGE,
                   "more than 2^32-1 %s in one call; split the input", what);
}

clphmm_status cph_pack_read(cph_pack *p, const clphmm_read *read, uint32_t *off,
                            double *wm, double *wx) {
  size_t need = p->n_rows + read->length;
  if (need > UINT32_MAX)
    return too_large("read bases");
  if (!grow(&p->rows, &p->cap_rows, need, ROW_REALS * p->real_size) ||
      !grow(&p->rcodes, &p->cap_rcodes, need, 1))
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                     "no memory to pack %zu read rows", need);
  unsigned char *dst = p->rows + p->n_rows * ROW_REALS * p->real_size;
  *wm = *wx = 1.0;
  if (p->scaled && read->length > 0)
    cph_rows_scaled(read, p->flavor == CPH_GKL_DOUBLE, dst, wm, wx);
  else if (p->flavor == CPH_GKL_FLOAT)
    cph_rows_float(read, (cph_row_f *)dst);
  else
    cph_rows_double(read, p->flavor, (cph_row_d *)dst);
  cph_encode_bases(read->bases, read->length, p->rcodes + p->n_rows);
  *off = (uint32_t)p->n_rows;
  p->n_rows = need;
  return CLPHMM_SUCCESS;
}

clphmm_status cph_pack_hap(cph_pack *p, const clphmm_haplotype *hap,
                           uint32_t *off) {
  /* Word-aligned, padded with CPH_SYM_NONE to a word boundary plus one
   * whole word of it (the kernels read four codes at a time and keep
   * reading that last word past the end). */
  if (hap->length > UINT32_MAX - 8)
    return too_large("haplotype bases");
  size_t words = cph_hap_words(hap->length);
  size_t need = p->n_hap + 4 * words;
  if (need > UINT32_MAX)
    return too_large("haplotype bases");
  if (!grow(&p->hcodes, &p->cap_hap, need, 1))
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                     "no memory to pack %zu haplotype bases", need);
  unsigned char *dst = p->hcodes + p->n_hap;
  cph_encode_bases(hap->bases, hap->length, dst);
  memset(dst + hap->length, CPH_SYM_NONE, 4 * words - hap->length);
  *off = (uint32_t)(p->n_hap / 4);
  p->n_hap = need;
  return CLPHMM_SUCCESS;
}
