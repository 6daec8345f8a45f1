#include "model/validate.h"

#include <stdio.h>

#include "base/error.h"

/* Printable form of a byte for messages. */
static void byte_repr(unsigned char b, char out[8]) {
  if (b >= 0x21 && b < 0x7f) {
    out[0] = '\'';
    out[1] = (char)b;
    out[2] = '\'';
    out[3] = '\0';
  } else {
    static const char hex[] = "0123456789abcdef";
    out[0] = '0';
    out[1] = 'x';
    out[2] = hex[b >> 4];
    out[3] = hex[b & 15];
    out[4] = '\0';
  }
}

static clphmm_status check_bases(const char *bases, size_t len,
                                 const char *what, size_t b, size_t idx) {
  if (len > 0 && !bases)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "batch %zu, %s %zu: bases is NULL but length is %zu", b,
                     what, idx, len);
  for (size_t i = 0; i < len; i++) {
    if (cph_base_code((unsigned char)bases[i]) == CPH_BASE_INVALID) {
      char rep[8];
      byte_repr((unsigned char)bases[i], rep);
      return cph_error(CLPHMM_ERROR_INVALID_BASE,
                       "batch %zu, %s %zu, position %zu: invalid base %s "
                       "(expected A, C, G, T or N)",
                       b, what, idx, i, rep);
    }
  }
  return CLPHMM_SUCCESS;
}

static clphmm_status check_quals(const uint8_t *q, size_t len,
                                 const char *field, size_t b, size_t r) {
  if (len > 0 && !q)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "batch %zu, read %zu: %s is NULL but length is %zu", b, r,
                     field, len);
  for (size_t i = 0; i < len; i++)
    if (q[i] > CPH_MAX_QUAL)
      return cph_error(CLPHMM_ERROR_INVALID_QUALITY,
                       "batch %zu, read %zu, position %zu: %s %u is out of "
                       "range (phred 0..127)",
                       b, r, i, field, (unsigned)q[i]);
  return CLPHMM_SUCCESS;
}

clphmm_status cph_validate_read(const clphmm_read *rd, size_t b, size_t r) {
  clphmm_status st = check_bases(rd->bases, rd->length, "read", b, r);
  if (!st)
    st = check_quals(rd->base_quals, rd->length, "base quality", b, r);
  if (!st)
    st = check_quals(rd->ins_quals, rd->length, "insertion quality", b, r);
  if (!st)
    st = check_quals(rd->del_quals, rd->length, "deletion quality", b, r);
  if (!st)
    st = check_quals(rd->gcp_quals, rd->length, "gap-continuation penalty", b,
                     r);
  return st;
}

/* a * b + acc with overflow detection on uint64. */
static int mul_add_overflows(uint64_t a, uint64_t b, uint64_t *acc) {
  if (a != 0 && b > UINT64_MAX / a)
    return 1;
  uint64_t p = a * b;
  if (*acc > UINT64_MAX - p)
    return 1;
  *acc += p;
  return 0;
}

clphmm_status cph_validate_batch_count(const clphmm_batch *batches, size_t n) {
  if (n > 0 && !batches)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "batches is NULL but n_batches is %zu", n);
  if (n > SIZE_MAX / sizeof *batches)
    return cph_error(CLPHMM_ERROR_TOO_LARGE, "%zu batches do not fit in memory",
                     n);
  return CLPHMM_SUCCESS;
}

clphmm_status cph_validate_batch_shape(const clphmm_batch *bt, size_t b) {
  if ((bt->n_reads > 0 && !bt->reads) ||
      (bt->n_haplotypes > 0 && !bt->haplotypes))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "batch %zu: reads or haplotypes is NULL with a non-zero "
                     "count",
                     b);
  return CLPHMM_SUCCESS;
}

clphmm_status cph_validate_batch(const clphmm_batch *bt, size_t b) {
  clphmm_status shape = cph_validate_batch_shape(bt, b);
  if (shape)
    return shape;
  for (size_t r = 0; r < bt->n_reads; r++) {
    clphmm_status st = cph_validate_read(&bt->reads[r], b, r);
    if (st)
      return st;
  }
  for (size_t h = 0; h < bt->n_haplotypes; h++) {
    const clphmm_haplotype *hp = &bt->haplotypes[h];
    clphmm_status st = check_bases(hp->bases, hp->length, "haplotype", b, h);
    if (st)
      return st;
  }
  return CLPHMM_SUCCESS;
}

static const char *plural(uint64_t n) {
  return n == 1 ? "" : "s";
}

/* ", added to N pairs of earlier batches" when there were any. */
static void earlier_part(char *buf, size_t n, uint64_t before,
                         const char *what) {
  buf[0] = '\0';
  if (before)
    snprintf(buf, n, ", added to %llu %s%s of earlier batches",
             (unsigned long long)before, what, plural(before));
}

static clphmm_status too_long(const char *what, size_t b, size_t i,
                              size_t length) {
  return cph_error(CLPHMM_ERROR_TOO_LARGE,
                   "batch %zu, %s %zu: %zu bases, more than the %u that a "
                   "sequence may have",
                   b, what, i, length, (unsigned)CPH_MAX_SEQ_LENGTH);
}

/* Pairs and cells of a batch whose pointers are valid, added to the
 * totals. Its counts are checked before its reads' and haplotypes' lengths
 * are read: counts that no array or result array could have fail without
 * touching memory. Messages say which count overflowed. */
static clphmm_status count_batch(const clphmm_batch *bt, size_t b,
                                 uint64_t *pairs, uint64_t *cells) {
  const size_t nr = bt->n_reads, nh = bt->n_haplotypes;
  if (nr > SIZE_MAX / sizeof *bt->reads)
    return cph_error(CLPHMM_ERROR_TOO_LARGE,
                     "batch %zu: %zu reads do not fit in memory", b, nr);
  if (nh > SIZE_MAX / sizeof *bt->haplotypes)
    return cph_error(CLPHMM_ERROR_TOO_LARGE,
                     "batch %zu: %zu haplotypes do not fit in memory", b, nh);
  char earlier[80];
  earlier_part(earlier, sizeof earlier, *pairs, "pair");
  if (mul_add_overflows(nr, nh, pairs))
    return cph_error(CLPHMM_ERROR_TOO_LARGE,
                     "batch %zu: the pair count overflows: %zu read%s x %zu "
                     "haplotype%s%s",
                     b, nr, plural(nr), nh, plural(nh), earlier);
  if (*pairs > SIZE_MAX / sizeof(double))
    return cph_error(CLPHMM_ERROR_TOO_LARGE,
                     "batch %zu: %zu read%s x %zu haplotype%s%s make %llu "
                     "pairs, more results than fit in memory",
                     b, nr, plural(nr), nh, plural(nh), earlier,
                     (unsigned long long)*pairs);
  uint64_t read_len = 0, hap_len = 0;
  size_t long_read = nr, long_hap = nh; /* (the first too long) */
  for (size_t r = 0; r < nr; r++) {
    if (bt->reads[r].length > CPH_MAX_SEQ_LENGTH && long_read == nr)
      long_read = r;
    if (mul_add_overflows(1, bt->reads[r].length, &read_len))
      return cph_error(CLPHMM_ERROR_TOO_LARGE,
                       "batch %zu: the sum of the read lengths overflows (at "
                       "read %zu)",
                       b, r);
  }
  for (size_t h = 0; h < nh; h++) {
    if (bt->haplotypes[h].length > CPH_MAX_SEQ_LENGTH && long_hap == nh)
      long_hap = h;
    if (mul_add_overflows(1, bt->haplotypes[h].length, &hap_len))
      return cph_error(CLPHMM_ERROR_TOO_LARGE,
                       "batch %zu: the sum of the haplotype lengths overflows "
                       "(at haplotype %zu)",
                       b, h);
  }
  earlier_part(earlier, sizeof earlier, *cells, "cell");
  if (mul_add_overflows(read_len, hap_len, cells))
    return cph_error(CLPHMM_ERROR_TOO_LARGE,
                     "batch %zu: the cell count overflows: %zu read%s of %llu "
                     "base%s%s x %zu haplotype%s of %llu base%s%s%s",
                     b, nr, plural(nr), (unsigned long long)read_len,
                     plural(read_len), nr > 1 ? " in all" : "", nh, plural(nh),
                     (unsigned long long)hap_len, plural(hap_len),
                     nh > 1 ? " in all" : "", earlier);
  if (long_read < nr)
    return too_long("read", b, long_read, bt->reads[long_read].length);
  if (long_hap < nh)
    return too_long("haplotype", b, long_hap, bt->haplotypes[long_hap].length);
  return CLPHMM_SUCCESS;
}

clphmm_status cph_count_batches(const clphmm_batch *batches, size_t n_batches,
                                size_t *n_pairs, uint64_t *n_cells) {
  uint64_t pairs = 0, cells = 0;
  for (size_t b = 0; b < n_batches; b++) {
    clphmm_status st = count_batch(&batches[b], b, &pairs, &cells);
    if (st)
      return st;
  }
  if (n_pairs)
    *n_pairs = (size_t)pairs;
  if (n_cells)
    *n_cells = cells;
  return CLPHMM_SUCCESS;
}

clphmm_status cph_validate_batches(const clphmm_batch *batches,
                                   size_t n_batches, size_t *n_pairs,
                                   uint64_t *n_cells) {
  /* Sizes first, as clphmm_compute checks them: an absurd size fails
   * before any base or quality is read. */
  clphmm_status st = cph_validate_shapes(batches, n_batches, n_pairs, n_cells);
  for (size_t b = 0; b < n_batches && !st; b++)
    st = cph_validate_batch(&batches[b], b);
  return st;
}

clphmm_status clphmm_count_pairs(const clphmm_batch *batches, size_t n_batches,
                                 size_t *n_pairs) {
  if (!n_pairs)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_count_pairs: NULL argument");
  const clphmm_status count = cph_validate_batch_count(batches, n_batches);
  if (count)
    return count;
  uint64_t pairs = 0;
  for (size_t b = 0; b < n_batches; b++)
    if (mul_add_overflows(batches[b].n_reads, batches[b].n_haplotypes,
                          &pairs) ||
        pairs > SIZE_MAX)
      return cph_error(CLPHMM_ERROR_TOO_LARGE,
                       "batch %zu: the pair count overflows", b);
  *n_pairs = (size_t)pairs;
  return CLPHMM_SUCCESS;
}

clphmm_status cph_validate_shapes(const clphmm_batch *batches, size_t n,
                                  size_t *n_pairs, uint64_t *n_cells) {
  const clphmm_status count = cph_validate_batch_count(batches, n);
  if (count)
    return count;
  for (size_t b = 0; b < n; b++) {
    clphmm_status st = cph_validate_batch_shape(&batches[b], b);
    if (st)
      return st;
  }
  return cph_count_batches(batches, n, n_pairs, n_cells);
}
