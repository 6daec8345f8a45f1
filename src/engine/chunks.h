/* Cutting a call's batches into chunks: a cursor walks the batches and
 * closes a chunk of whole reads (pieces, stage.h) at its bounds on cells,
 * pairs and device bytes. The cut runs on the caller's thread between two
 * chunks, so a batch that fits whole is taken from its sums (stage.h
 * cph_batch_sum, computed on the pool while the call is validated) rather
 * than read by read: on an H200 machine's host the read-by-read cut of a
 * HaplotypeCaller-sized call's chunk (about 600 regions) took 200-234 us
 * of the caller's 2-3 ms per chunk, and a call of 12 such chunks took
 * 100-124 us in all from the sums. The chunks are the same either way. */
#ifndef CLPHMM_CHUNKS_H
#define CLPHMM_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#include "clphmm.h"
#include "engine/stage.h"

/* Where the next chunk starts, where the range it is cut from ends
 * (batch, read: exclusive), and how large chunks may be. */
typedef struct cph_cursor {
  const clphmm_batch *batches;
  size_t n_batches, batch, read, out;
  uint64_t max_cells, max_pairs, max_bytes, min_pairs;
  uint64_t cells_left; /* of the call, from the cursor on (one engine) */
  int ramps;           /* the first chunks are smaller (chunk_k_bounds) */
  size_t real_size;
  size_t end_batch, end_read;
} cph_cursor;

/* A growing list of pieces. */
typedef struct cph_pieces {
  cph_piece *p;
  size_t cap;
} cph_pieces;

/* Whether `cur` is at the end of its range. */
int cph_cursor_at_end(const cph_cursor *cur);

/* The pieces of the next chunk from `cur` (none at the end) into
 * list->p[0 .. *n_pieces): whole reads, at least one, until a bound is
 * reached. `sums` (the batches' cph_batch_sum, or NULL) only makes it
 * faster. */
clphmm_status cph_next_chunk(cph_cursor *cur, const cph_batch_sum *sums,
                             cph_pieces *list, size_t *n_pieces);

#endif
