/* Chunks cut with the batches' sums (engine/chunks.h cph_next_chunk) and
 * pieces planned from them (engine/stage.h cph_stage_pieces) equal those
 * cut and planned read by read (no sums): the same pieces, cursor and
 * staged data, byte for byte, for random batches (empty reads, empty
 * haplotypes, batches without reads or without haplotypes) under random
 * bounds on cells, pairs, device bytes and minimum pairs, over whole calls
 * and over ranges that end inside a batch (a shared call's). Also that the
 * sums are what staging a batch takes, counted here read by read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/chunks.h"
#include "engine/stage.h"
#include "test_util.h"

typedef struct call_data {
  clphmm_batch *batches;
  size_t n;
  cph_batch_sum *sums;
  size_t pairs;
} call_data;

static char *random_bases(test_rng *rng, size_t len) {
  static const char acgt[] = "ACGTN";
  char *b = malloc(len ? len : 1);
  if (!b)
    abort();
  for (size_t i = 0; i < len; i++)
    b[i] = acgt[test_rng_range(rng, 0, 4)];
  return b;
}

static uint8_t *random_quals(test_rng *rng, size_t len) {
  uint8_t *q = malloc(len ? len : 1);
  if (!q)
    abort();
  for (size_t i = 0; i < len; i++)
    q[i] = (uint8_t)test_rng_range(rng, 2, 60);
  return q;
}

/* A length of 0 .. max, 0 about one time in `zero`. */
static size_t random_len(test_rng *rng, size_t max, unsigned zero) {
  return test_rng_range(rng, 0, zero - 1) == 0 ? 0
                                               : test_rng_range(rng, 1, max);
}

static void make_call(test_rng *rng, size_t n, call_data *cd) {
  cd->n = n;
  cd->pairs = 0;
  cd->batches = calloc(n ? n : 1, sizeof *cd->batches);
  cd->sums = calloc(n ? n : 1, sizeof *cd->sums);
  if (!cd->batches || !cd->sums)
    abort();
  for (size_t b = 0; b < n; b++) {
    clphmm_batch *bt = &cd->batches[b];
    const int empty = test_rng_range(rng, 0, 9) == 0;
    bt->n_reads = empty ? 0 : test_rng_range(rng, 0, 12);
    bt->n_haplotypes = empty ? 0 : test_rng_range(rng, 0, 5);
    clphmm_read *reads = calloc(bt->n_reads + 1, sizeof *reads);
    clphmm_haplotype *haps = calloc(bt->n_haplotypes + 1, sizeof *haps);
    if (!reads || !haps)
      abort();
    for (size_t h = 0; h < bt->n_haplotypes; h++) {
      haps[h].length = random_len(rng, 90, 8);
      haps[h].bases = random_bases(rng, haps[h].length);
    }
    for (size_t r = 0; r < bt->n_reads; r++) {
      const size_t len = random_len(rng, 70, 6);
      reads[r].length = len;
      reads[r].bases = random_bases(rng, len);
      reads[r].base_quals = random_quals(rng, len);
      reads[r].ins_quals = random_quals(rng, len);
      reads[r].del_quals = random_quals(rng, len);
      reads[r].gcp_quals = random_quals(rng, len);
    }
    bt->reads = reads;
    bt->haplotypes = haps;
    cph_batch_sum_of(bt, &cd->sums[b]);
    cd->pairs += bt->n_reads * bt->n_haplotypes;
  }
}

static void free_call(call_data *cd) {
  for (size_t b = 0; b < cd->n; b++) {
    const clphmm_batch *bt = &cd->batches[b];
    for (size_t r = 0; r < bt->n_reads; r++) {
      free((void *)bt->reads[r].bases);
      free((void *)bt->reads[r].base_quals);
      free((void *)bt->reads[r].ins_quals);
      free((void *)bt->reads[r].del_quals);
      free((void *)bt->reads[r].gcp_quals);
    }
    for (size_t h = 0; h < bt->n_haplotypes; h++)
      free((void *)bt->haplotypes[h].bases);
    free((void *)bt->reads);
    free((void *)bt->haplotypes);
  }
  free(cd->batches);
  free(cd->sums);
}

/* The sums counted here read by read. */
static void check_sums(const call_data *cd) {
  size_t bad = 0;
  for (size_t b = 0; b < cd->n; b++) {
    const clphmm_batch *bt = &cd->batches[b];
    uint64_t rows = 0, hap_len = 0, words = 0;
    size_t reads = 0, haps = 0;
    for (size_t r = 0; r < bt->n_reads; r++) {
      rows += bt->reads[r].length;
      reads += bt->reads[r].length > 0;
    }
    for (size_t h = 0; h < bt->n_haplotypes; h++) {
      hap_len += bt->haplotypes[h].length;
      words += cph_hap_words(bt->haplotypes[h].length);
      haps += bt->haplotypes[h].length > 0;
    }
    const cph_batch_sum *s = &cd->sums[b];
    bad += s->rows != rows || s->hap_len != hap_len || s->words != words ||
           s->reads != reads || s->haps != haps;
  }
  CHECK(bad == 0, "%zu of %zu batches' sums differ from their count", bad,
        cd->n);
}

/* A stage whose host buffers are plain memory large enough for any chunk
 * of the call (so that staging allocates none: no OpenCL here). */
static void stage_init(cph_stage *s, const call_data *cd) {
  memset(s, 0, sizeof *s);
  size_t rows = 1, words = 1, reads = 1;
  for (size_t b = 0; b < cd->n; b++) {
    rows += cd->sums[b].rows;
    words += cd->sums[b].words;
    reads += cd->batches[b].n_reads;
  }
  cph_hostbuf *bufs[4] = {&s->raw, &s->reads, &s->hcodes, &s->weights};
  const size_t bytes[4] = {CPH_RAW_ROW_BYTES * rows, 8 * reads, 4 * words,
                           16 * reads};
  for (int i = 0; i < 4; i++) {
    bufs[i]->ptr = calloc(bytes[i], 1);
    bufs[i]->cap = bytes[i];
    if (!bufs[i]->ptr)
      abort();
  }
  s->flavor = CPH_GKL_FLOAT;
  s->real_size = sizeof(float);
}

/* The staged data of two stages of the same pieces agree. */
static int same_stage(const cph_stage *a, const cph_stage *b, size_t n_pieces) {
  if (a->n_rows != b->n_rows || a->n_reads != b->n_reads ||
      a->n_hwords != b->n_hwords || a->n_jobs != b->n_jobs)
    return 0;
  return !memcmp(a->offs, b->offs, 4 * n_pieces * sizeof *a->offs) &&
         !memcmp(a->raw.ptr, b->raw.ptr, CPH_RAW_ROW_BYTES * a->n_rows) &&
         !memcmp(a->reads.ptr, b->reads.ptr, 8 * a->n_reads) &&
         !memcmp(a->hcodes.ptr, b->hcodes.ptr, 4 * a->n_hwords) &&
         !memcmp(a->jobs, b->jobs, a->n_jobs * sizeof *a->jobs);
}

static uint64_t random_bound(test_rng *rng, uint64_t typical) {
  return test_rng_range(rng, 0, 3) == 0
             ? UINT64_MAX
             : test_rng_range(rng, 1, (unsigned)typical);
}

/* Cut the call from `start` with and without sums, staging each chunk
 * both ways; returns the chunks cut. */
static size_t cut_both(const call_data *cd, const cph_cursor *start,
                       test_rng *rng) {
  cph_cursor a = *start, b = *start;
  cph_pieces pa = {0}, pb = {0};
  cph_stage sa, sb;
  stage_init(&sa, cd);
  stage_init(&sb, cd);
  const cph_bufctx none = {0};
  double *res = malloc((cd->pairs ? cd->pairs : 1) * sizeof *res);
  if (!res)
    abort();
  size_t chunks = 0, bad = 0;
  for (;;) {
    size_t na = 0, nb = 0;
    CHECK_STATUS(cph_next_chunk(&a, NULL, &pa, &na), CLPHMM_SUCCESS, NULL);
    CHECK_STATUS(cph_next_chunk(&b, cd->sums, &pb, &nb), CLPHMM_SUCCESS, NULL);
    if (na != nb || (na && memcmp(pa.p, pb.p, na * sizeof *pa.p)) ||
        memcmp(&a, &b, sizeof a)) {
      CHECK(0, "chunk %zu: %zu pieces read by read, %zu from the sums", chunks,
            na, nb);
      break;
    }
    if (na == 0)
      break;
    chunks++;
    const size_t skip = test_rng_range(rng, 0, 3) == 0 ? 40 : 0;
    CHECK_STATUS(cph_stage_pieces(&none, NULL, &sa, cd->batches, NULL, pa.p, na,
                                  skip, res),
                 CLPHMM_SUCCESS, NULL);
    CHECK_STATUS(cph_stage_pieces(&none, NULL, &sb, cd->batches, cd->sums, pb.p,
                                  nb, skip, res),
                 CLPHMM_SUCCESS, NULL);
    bad += !same_stage(&sa, &sb, na);
    if (chunks > 10000)
      break;
  }
  CHECK(bad == 0, "%zu of %zu chunks staged differently from the sums", bad,
        chunks);
  free(pa.p);
  free(pb.p);
  free(res);
  cph_stage_release(&none, &sa);
  cph_stage_release(&none, &sb);
  return chunks;
}

int main(void) {
  test_rng rng;
  test_rng_init(&rng, 20261127u);
  size_t chunks = 0;
  for (int round = 0; round < 200; round++) {
    call_data cd;
    make_call(&rng, test_rng_range(&rng, 0, 60), &cd);
    check_sums(&cd);
    cph_cursor cur = {.batches = cd.batches,
                      .n_batches = cd.n,
                      .end_batch = cd.n,
                      .real_size = round % 2 ? sizeof(double) : sizeof(float),
                      .cells_left = UINT64_MAX};
    cur.max_cells = random_bound(&rng, 40000);
    cur.max_pairs = random_bound(&rng, 60);
    cur.max_bytes = random_bound(&rng, 60000);
    cur.min_pairs = test_rng_range(&rng, 0, 40);
    /* A range that ends inside a batch (a shared call's), or the call. */
    if (cd.n && round % 3 == 0) {
      cur.end_batch = test_rng_range(&rng, 0, (unsigned)cd.n - 1);
      cur.end_read = cd.batches[cur.end_batch].n_reads / 2;
    }
    chunks += cut_both(&cd, &cur, &rng);
    free_call(&cd);
  }
  CHECK(chunks > 200, "only %zu chunks cut in 200 calls", chunks);
  printf("chunks: %zu cut alike with and without the batches' sums\n", chunks);
  return test_finish();
}
