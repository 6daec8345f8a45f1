/* Datasets: batches plus the storage they point into. The file reader
 * (io.c) collects a chunk of input into a cph_store, recording reads,
 * haplotypes and batches as offsets and indices into growable arrays
 * (realloc may move them); cph_dataset_build turns the store into a
 * clphmm_dataset, building the public pointers once nothing moves any
 * more. */
#ifndef CLPHMM_DATASET_H
#define CLPHMM_DATASET_H

#include <stddef.h>

#include "clphmm.h"

/* A growable array of elements of one size. */
typedef struct cph_vec {
  void *p;
  size_t n, cap; /* in elements */
} cph_vec;

/* Make room for `more` elements of `elem` bytes. 0 on success, -1 when the
 * size overflows or malloc fails. */
int cph_vec_reserve(cph_vec *v, size_t elem, size_t more);

/* Append one zeroed element; returns it, or NULL when out of memory. The
 * pointer is only valid until the next push onto the same vec. */
void *cph_vec_push(cph_vec *v, size_t elem);

typedef struct cph_span {
  size_t off, len; /* in the arena */
} cph_span;

typedef struct cph_pending_batch {
  size_t read0, n_reads, hap0, n_haps, line;
} cph_pending_batch;

typedef struct cph_store {
  cph_vec arena;    /* char: a read is its bases then 4 quality strings */
  cph_vec reads;    /* cph_span */
  cph_vec haps;     /* cph_span */
  cph_vec batches;  /* cph_pending_batch */
  cph_vec expected; /* double, pair format only */
} cph_store;

void cph_store_free(cph_store *st);

/* Bytes the dataset built from `st` will hold (storage and structures). */
size_t cph_store_bytes(const cph_store *st);

/* Move the store's contents into a new dataset (the store is left empty
 * and reusable). `pair_format` keeps the expected values. Returns
 * CLPHMM_SUCCESS, CLPHMM_ERROR_OUT_OF_MEMORY or CLPHMM_ERROR_TOO_LARGE (the
 * pair count overflows size_t) without setting a message: the caller knows
 * the file and line. On failure the store is unchanged. */
clphmm_status cph_dataset_build(cph_store *st, int pair_format,
                                clphmm_dataset **out);

#endif
