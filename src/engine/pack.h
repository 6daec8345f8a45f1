/* Packing: the structure-of-arrays device layout of a set of pairs (read
 * rows with their transitions and priors, base codes, haplotypes) and the
 * pair list ("jobs") that refers into it. */
#ifndef CLPHMM_PACK_H
#define CLPHMM_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct cph_pack {
  cph_flavor flavor;
  int scaled;            /* rows for the scaled kernel form */
  size_t real_size;      /* 4 (float) or 8 (double) */
  unsigned char *rows;   /* 8 reals per read row (see cph_row_f) */
  unsigned char *rcodes; /* one base code per read row */
  size_t n_rows, cap_rows, cap_rcodes;
  unsigned char *hcodes; /* haplotype codes, word-padded (cph_pack_hap) */
  size_t n_hap, cap_hap;
} cph_pack;

/* The code of "no column" (outside 1..H) in a packed haplotype. */
#define CPH_SYM_NONE 5

/* 32-bit words a packed haplotype of `length` bases takes. */
static inline uint32_t cph_hap_words(size_t length) {
  return (uint32_t)((length + 3) / 4 + 1);
}

/* One pair for the device: offsets into a pack plus where its result goes. */
typedef struct cph_job {
  uint32_t row_off, R, hap_off /* in words */, H;
  /* Weights that turn the scaled-form kernel's two last-row sums into the
   * pair's scaled sum (cph_rows_scaled); 1 and 1 otherwise. */
  double wm, wx;
  size_t out;
  const clphmm_read *read;
  const clphmm_haplotype *hap;
} cph_job;

/* `scaled`: rows for the scaled kernel form (GKL flavors; ignored for
 * Java's double). */
void cph_pack_init(cph_pack *p, cph_flavor flavor, int scaled);
void cph_pack_free(cph_pack *p);
/* Append a read (its rows in the pack's flavor) or a haplotype; returns its
 * offset (rows for a read, 32-bit words for a haplotype) and, for a read,
 * the weights of its sums (cph_job). Fails with CLPHMM_ERROR_TOO_LARGE past
 * 2^32 - 1 entries. */
clphmm_status cph_pack_read(cph_pack *p, const clphmm_read *read, uint32_t *off,
                            double *wm, double *wx);
clphmm_status cph_pack_hap(cph_pack *p, const clphmm_haplotype *hap,
                           uint32_t *off);

#endif
