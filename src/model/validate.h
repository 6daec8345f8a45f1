/* Input validation shared by the API entry points and the file readers. */
#ifndef CLPHMM_VALIDATE_H
#define CLPHMM_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "clphmm.h"

/* Base codes used everywhere inside the library (and by the kernels). */
enum {
  CPH_BASE_A = 0,
  CPH_BASE_C = 1,
  CPH_BASE_G = 2,
  CPH_BASE_T = 3,
  CPH_BASE_N = 4,
  CPH_BASE_INVALID = 255
};

/* Highest valid phred value (quality bytes are 0..127). */
#define CPH_MAX_QUAL 127

/* Longest read or haplotype: the staging and the kernels keep a
 * sequence's length, its rows and its haplotype words in 32 bits (a
 * longer haplotype was cut to its low 32 bits, silently). */
#define CPH_MAX_SEQ_LENGTH CLPHMM_MAX_LENGTH

/* Code of a base byte: ACGTN in either case, else CPH_BASE_INVALID. */
static inline uint8_t cph_base_code(unsigned char b) {
  switch (b) {
  case 'A':
  case 'a': return CPH_BASE_A;
  case 'C':
  case 'c': return CPH_BASE_C;
  case 'G':
  case 'g': return CPH_BASE_G;
  case 'T':
  case 't': return CPH_BASE_T;
  case 'N':
  case 'n': return CPH_BASE_N;
  default: return CPH_BASE_INVALID;
  }
}

/* Validate every batch and return the number of pairs and cells: first
 * what cph_validate_shapes checks (the batches' own pointers, counts and
 * sizes that overflow), then each batch's bases and qualities in order. On
 * error the thread's last error names the batch, read or haplotype, field
 * and position. */
clphmm_status cph_validate_batches(const clphmm_batch *batches,
                                   size_t n_batches, size_t *n_pairs,
                                   uint64_t *n_cells);

/* The parts of cph_validate_batches, for callers that validate batches in
 * parallel: one batch's pointers, bases and qualities (`b` is its index,
 * for messages), and the counts of validated batches. */
clphmm_status cph_validate_batch(const clphmm_batch *batch, size_t b);
/* One read's bases and qualities (`b`, `r`: its batch and index, for
 * messages). */
clphmm_status cph_validate_read(const clphmm_read *rd, size_t b, size_t r);
/* The batch array: not NULL with batches in it, and a count that an array
 * could have (checked before any batch is read). */
clphmm_status cph_validate_batch_count(const clphmm_batch *batches, size_t n);
/* Only the batch's own pointers (reads, haplotypes): what must hold before
 * its reads' and haplotypes' lengths can be read. */
clphmm_status cph_validate_batch_shape(const clphmm_batch *batch, size_t b);
clphmm_status cph_count_batches(const clphmm_batch *batches, size_t n_batches,
                                size_t *n_pairs, uint64_t *n_cells);
/* What must hold before a compute call reads the batches: the array, each
 * batch's own pointers (cph_validate_batch_shape), and counts that do not
 * overflow (cph_count_batches). Bases and qualities are checked later, as
 * they are staged. */
clphmm_status cph_validate_shapes(const clphmm_batch *batches, size_t n,
                                  size_t *n_pairs, uint64_t *n_cells);

#endif
