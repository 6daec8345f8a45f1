/* Fuzz target: the streaming reader on a stream (fmemopen) with a tiny
 * first buffer, so that buffer growth, compaction and lines across refills
 * are exercised, read in chunks whose bounds come from the input. The first
 * 3 bytes are: first buffer size (1..64), max pairs per chunk (0..15),
 * max bytes per chunk (0 or 64..4144); the rest is the file.
 * Invariant (differential): the chunks concatenate to exactly what the
 * whole-file memory reader returns, or both fail with the same status and
 * message. */
#define _GNU_SOURCE /* fmemopen */
#include <stdint.h>

#include "fuzz_common.h"
#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int bytes_eq(const void *a, const void *b, size_t n) {
  return n == 0 || memcmp(a, b, n) == 0;
}

static void check_batch(const clphmm_batch *a, const clphmm_batch *b) {
  FUZZ_ASSERT(a->n_reads == b->n_reads);
  FUZZ_ASSERT(a->n_haplotypes == b->n_haplotypes);
  for (size_t r = 0; r < a->n_reads; r++) {
    const clphmm_read *x = &a->reads[r], *y = &b->reads[r];
    FUZZ_ASSERT(x->length == y->length);
    FUZZ_ASSERT(bytes_eq(x->bases, y->bases, x->length));
    FUZZ_ASSERT(bytes_eq(x->base_quals, y->base_quals, x->length));
    FUZZ_ASSERT(bytes_eq(x->ins_quals, y->ins_quals, x->length));
    FUZZ_ASSERT(bytes_eq(x->del_quals, y->del_quals, x->length));
    FUZZ_ASSERT(bytes_eq(x->gcp_quals, y->gcp_quals, x->length));
  }
  for (size_t h = 0; h < a->n_haplotypes; h++) {
    FUZZ_ASSERT(a->haplotypes[h].length == b->haplotypes[h].length);
    FUZZ_ASSERT(bytes_eq(a->haplotypes[h].bases, b->haplotypes[h].bases,
                         a->haplotypes[h].length));
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3)
    return 0;
  size_t first_buffer = 1 + data[0] % 64, max_pairs = data[1] % 16;
  size_t max_bytes = data[2] % 2 ? 64 + (size_t)data[2] * 16 : 0;
  const char *text = (const char *)data + 3;
  size_t n = size - 3;

  clphmm_dataset *whole = NULL;
  clphmm_status want = clphmm_dataset_read_memory(text, n, "fuzz", 0, &whole);
  char want_msg[1024];
  snprintf(want_msg, sizeof want_msg, "%s", clphmm_last_error(NULL));

  /* fmemopen rejects size 0; an empty stream is /dev/null. */
  FILE *f =
      n ? fmemopen((void *)(uintptr_t)text, n, "rb") : fopen("/dev/null", "rb");
  FUZZ_ASSERT(f != NULL);
  clphmm_reader *rd = NULL;
  FUZZ_ASSERT(cph_reader_open_stream(f, "fuzz", 0, first_buffer, &rd) ==
              CLPHMM_SUCCESS);
  size_t b = 0, pair = 0;
  const double *we = clphmm_dataset_expected(whole);
  clphmm_status st;
  clphmm_dataset *c = NULL;
  while ((st = clphmm_reader_next(rd, max_pairs, max_bytes, &c)) ==
             CLPHMM_SUCCESS &&
         c) {
    const double *ce = clphmm_dataset_expected(c);
    for (size_t i = 0; i < clphmm_dataset_n_batches(c); i++, b++) {
      if (want == CLPHMM_SUCCESS) {
        FUZZ_ASSERT(b < clphmm_dataset_n_batches(whole));
        check_batch(&clphmm_dataset_batches(c)[i],
                    &clphmm_dataset_batches(whole)[b]);
        FUZZ_ASSERT(clphmm_dataset_batch_line(c, i) ==
                    clphmm_dataset_batch_line(whole, b));
      }
    }
    for (size_t i = 0; ce && we && i < clphmm_dataset_n_pairs(c); i++)
      FUZZ_ASSERT(memcmp(&ce[i], &we[pair + i], sizeof *ce) == 0);
    pair += clphmm_dataset_n_pairs(c);
    clphmm_dataset_destroy(c);
  }
  FUZZ_ASSERT(st == want);
  if (want == CLPHMM_SUCCESS) {
    FUZZ_ASSERT(b == clphmm_dataset_n_batches(whole));
    FUZZ_ASSERT(pair == clphmm_dataset_n_pairs(whole));
  } else {
    FUZZ_ASSERT(strcmp(clphmm_last_error(NULL), want_msg) == 0);
  }
  clphmm_reader_close(rd);
  clphmm_dataset_destroy(whole);
  return 0;
}
