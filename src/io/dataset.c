#include "io/dataset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct clphmm_dataset {
  char *arena; /* every base and quality byte */
  clphmm_read *reads;
  clphmm_haplotype *haps;
  clphmm_batch *batches;
  size_t *batch_lines;
  double *expected; /* one per pair; NULL for the batch format */
  size_t n_batches;
  size_t n_pairs;
};

/* ---- Growable arrays ----------------------------------------------------- */

int cph_vec_reserve(cph_vec *v, size_t elem, size_t more) {
  if (more <= v->cap - v->n)
    return 0;
  if (more > SIZE_MAX / elem - v->n)
    return -1;
  size_t need = v->n + more;
  size_t cap = v->cap ? v->cap : 16;
  while (cap < need)
    cap = cap > SIZE_MAX / elem / 2 ? need : cap * 2;
  void *p = realloc(v->p, cap * elem);
  if (!p)
    return -1;
  v->p = p;
  v->cap = cap;
  return 0;
}

void *cph_vec_push(cph_vec *v, size_t elem) {
  if (cph_vec_reserve(v, elem, 1))
    return NULL;
  char *slot = (char *)v->p + v->n++ * elem;
  memset(slot, 0, elem);
  return slot;
}

/* ---- Store --------------------------------------------------------------- */

void cph_store_free(cph_store *st) {
  free(st->arena.p);
  free(st->reads.p);
  free(st->haps.p);
  free(st->batches.p);
  free(st->expected.p);
  memset(st, 0, sizeof *st);
}

size_t cph_store_bytes(const cph_store *st) {
  return st->arena.n + st->reads.n * sizeof(clphmm_read) +
         st->haps.n * sizeof(clphmm_haplotype) +
         st->batches.n * (sizeof(clphmm_batch) + sizeof(size_t)) +
         st->expected.n * sizeof(double);
}

/* ---- Building ------------------------------------------------------------ */

/* calloc for n elements; zero elements give NULL, which is not a failure
 * (hence the separate flag). */
static void *alloc_array(size_t n, size_t elem, int *failed) {
  if (n == 0)
    return NULL;
  void *p = calloc(n, elem);
  if (!p)
    *failed = 1;
  return p;
}

static void fill_reads(clphmm_dataset *ds, const cph_store *st) {
  const cph_span *s = st->reads.p;
  for (size_t i = 0; i < st->reads.n; i++) {
    const char *b = ds->arena + s[i].off;
    const uint8_t *q = (const uint8_t *)b;
    size_t len = s[i].len;
    ds->reads[i] =
        (clphmm_read){b, q + len, q + 2 * len, q + 3 * len, q + 4 * len, len};
  }
  const cph_span *h = st->haps.p;
  for (size_t i = 0; i < st->haps.n; i++)
    ds->haps[i] = (clphmm_haplotype){ds->arena + h[i].off, h[i].len};
}

/* Fill the batches and count the pairs; fails only if the count overflows. */
static int fill_batches(clphmm_dataset *ds, const cph_store *st) {
  const cph_pending_batch *pb = st->batches.p;
  size_t pairs = 0;
  for (size_t i = 0; i < st->batches.n; i++) {
    clphmm_batch *b = &ds->batches[i];
    b->n_reads = pb[i].n_reads;
    b->n_haplotypes = pb[i].n_haps;
    /* NULL + 0 is undefined, hence the guards. */
    b->reads = b->n_reads ? ds->reads + pb[i].read0 : NULL;
    b->haplotypes = b->n_haplotypes ? ds->haps + pb[i].hap0 : NULL;
    ds->batch_lines[i] = pb[i].line;
    if (b->n_reads && b->n_haplotypes > SIZE_MAX / b->n_reads)
      return -1;
    size_t n = b->n_reads * b->n_haplotypes;
    if (n > SIZE_MAX - pairs)
      return -1;
    pairs += n;
  }
  ds->n_pairs = pairs;
  return 0;
}

clphmm_status cph_dataset_build(cph_store *st, int pair_format,
                                clphmm_dataset **out) {
  clphmm_dataset *ds = calloc(1, sizeof *ds);
  if (!ds)
    return CLPHMM_ERROR_OUT_OF_MEMORY;
  int failed = 0;
  ds->reads = alloc_array(st->reads.n, sizeof *ds->reads, &failed);
  ds->haps = alloc_array(st->haps.n, sizeof *ds->haps, &failed);
  ds->batches = alloc_array(st->batches.n, sizeof *ds->batches, &failed);
  ds->batch_lines =
      alloc_array(st->batches.n, sizeof *ds->batch_lines, &failed);
  ds->n_batches = st->batches.n;
  if (failed) {
    clphmm_dataset_destroy(ds);
    return CLPHMM_ERROR_OUT_OF_MEMORY;
  }
  /* The arena grew by doubling; give the slack back before pointing into
   * it (a failed shrink just keeps the bigger block). */
  if (st->arena.n > 0 && st->arena.n < st->arena.cap) {
    char *shrunk = realloc(st->arena.p, st->arena.n);
    if (shrunk) {
      st->arena.p = shrunk;
      st->arena.cap = st->arena.n;
    }
  }
  ds->arena = st->arena.p;
  fill_reads(ds, st);
  if (fill_batches(ds, st)) {
    ds->arena = NULL; /* still the store's */
    clphmm_dataset_destroy(ds);
    return CLPHMM_ERROR_TOO_LARGE;
  }
  st->arena = (cph_vec){0};
  if (pair_format) {
    ds->expected = st->expected.p;
    st->expected = (cph_vec){0};
  }
  /* The index arrays were copied into public form: start them afresh. */
  st->reads.n = st->haps.n = st->batches.n = st->expected.n = 0;
  *out = ds;
  return CLPHMM_SUCCESS;
}

/* ---- Public accessors ---------------------------------------------------- */

void clphmm_dataset_destroy(clphmm_dataset *ds) {
  if (!ds)
    return;
  free(ds->arena);
  free(ds->reads);
  free(ds->haps);
  free(ds->batches);
  free(ds->batch_lines);
  free(ds->expected);
  free(ds);
}

const clphmm_batch *clphmm_dataset_batches(const clphmm_dataset *ds) {
  return ds ? ds->batches : NULL;
}

size_t clphmm_dataset_n_batches(const clphmm_dataset *ds) {
  return ds ? ds->n_batches : 0;
}

size_t clphmm_dataset_n_pairs(const clphmm_dataset *ds) {
  return ds ? ds->n_pairs : 0;
}

const double *clphmm_dataset_expected(const clphmm_dataset *ds) {
  return ds ? ds->expected : NULL;
}

size_t clphmm_dataset_batch_line(const clphmm_dataset *ds, size_t b) {
  return ds && b < ds->n_batches ? ds->batch_lines[b] : 0;
}
