#include "engine/chunks.h"

#include <stdlib.h>

#include "base/error.h"

int cph_cursor_at_end(const cph_cursor *cur) {
  return cur->batch > cur->end_batch ||
         (cur->batch == cur->end_batch && cur->read >= cur->end_read);
}

static int add_piece(cph_pieces *list, size_t *n, cph_piece p) {
  if (*n == list->cap) {
    size_t cap = list->cap ? 2 * list->cap : 64;
    cph_piece *np = realloc(list->p, cap * sizeof *np);
    if (!np)
      return 0;
    list->p = np;
    list->cap = cap;
  }
  list->p[(*n)++] = p;
  return 1;
}

/* The running totals of the chunk being cut. */
typedef struct totals {
  uint64_t cells, pairs, bytes;
} totals;

/* Whether the cursor's batch, from its first read to its last, fits the
 * chunk whole: then the read-by-read cut below would take every read
 * (each of its bounds grows with the reads taken, and none is reached at
 * the batch's total), so it is taken as one piece from its sums. (Device
 * bytes are linear in rows, words, reads and pairs: the batch's are the
 * sum of its reads' and its haplotypes'.) */
static int whole_batch_fits(const cph_cursor *cur, const cph_batch_sum *bs,
                            const totals *t, totals *add) {
  const clphmm_batch *bt = &cur->batches[cur->batch];
  if (cur->read != 0 || cur->batch == cur->end_batch || bt->n_reads == 0)
    return 0;
  add->cells = bs->rows * bs->hap_len;
  add->pairs = (uint64_t)bt->n_reads * bt->n_haplotypes;
  add->bytes = cph_stage_device_bytes(bs->rows, bs->words, bt->n_reads,
                                      add->pairs, cur->real_size);
  return t->cells + add->cells <= cur->max_cells &&
         t->pairs + add->pairs <= cur->max_pairs &&
         t->bytes + add->bytes <= cur->max_bytes;
}

clphmm_status cph_next_chunk(cph_cursor *cur, const cph_batch_sum *sums,
                             cph_pieces *list, size_t *n_pieces) {
  totals t = {0, 0, 0};
  size_t n = 0;
  while (!cph_cursor_at_end(cur)) {
    const clphmm_batch *bt = &cur->batches[cur->batch];
    cph_batch_sum own;
    const cph_batch_sum *bs = sums ? &sums[cur->batch] : &own;
    if (!sums)
      cph_batch_haps_of(bt, &own);
    totals add;
    if (sums && whole_batch_fits(cur, bs, &t, &add)) {
      if (!add_piece(list, &n,
                     (cph_piece){cur->batch, 0, bt->n_reads, cur->out}))
        return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for chunks");
      t.cells += add.cells;
      t.pairs += add.pairs;
      t.bytes += add.bytes;
      cur->out += add.pairs;
      cur->batch++;
      continue;
    }
    const size_t n_reads =
        cur->batch == cur->end_batch ? cur->end_read : bt->n_reads;
    const uint64_t hap_len = bs->hap_len;
    size_t r = cur->read;
    uint64_t pbytes =
        cph_stage_device_bytes(0, bs->words, 0, 0, cur->real_size);
    for (; r < n_reads; r++) {
      const uint64_t len = bt->reads[r].length;
      const uint64_t rb =
          cph_stage_device_bytes(len, 0, 1, bt->n_haplotypes, cur->real_size);
      const int empty = n == 0 && r == cur->read;
      if (!empty && ((t.cells + len * hap_len > cur->max_cells &&
                      t.pairs >= cur->min_pairs) ||
                     t.pairs + bt->n_haplotypes > cur->max_pairs ||
                     t.bytes + pbytes + rb > cur->max_bytes))
        break;
      t.cells += len * hap_len;
      t.pairs += bt->n_haplotypes;
      pbytes += rb;
    }
    if (r > cur->read || bt->n_reads == 0) {
      if (!add_piece(list, &n, (cph_piece){cur->batch, cur->read, r, cur->out}))
        return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for chunks");
      t.bytes += pbytes;
      cur->out += (r - cur->read) * bt->n_haplotypes;
    }
    if (r < bt->n_reads) { /* a bound, or the range's end, was reached */
      cur->read = r;
      break;
    }
    cur->batch++;
    cur->read = 0;
  }
  *n_pieces = n;
  cur->cells_left = cur->cells_left > t.cells ? cur->cells_left - t.cells : 0;
  return CLPHMM_SUCCESS;
}
