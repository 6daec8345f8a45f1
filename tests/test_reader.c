/* Tests of the streaming reader (clphmm_reader_*, src/io/io.c) and of its line
 * source (src/io/linesrc.c): chunks concatenate to the whole file under every
 * bound, chunks respect their bounds, errors are sticky, stream buffering
 * (lines longer than the first buffer, lines across refills) gives the same
 * batches as memory, over-long lines and binary data are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clphmm.h"
#include "io/linesrc.h"
#include "test_util.h"

/* ---- Helpers ------------------------------------------------------------- */

static int bytes_eq(const void *a, const void *b, size_t n) {
  return n == 0 || memcmp(a, b, n) == 0;
}

static int read_eq(const clphmm_read *a, const clphmm_read *b) {
  size_t n = a->length;
  return n == b->length && bytes_eq(a->bases, b->bases, n) &&
         bytes_eq(a->base_quals, b->base_quals, n) &&
         bytes_eq(a->ins_quals, b->ins_quals, n) &&
         bytes_eq(a->del_quals, b->del_quals, n) &&
         bytes_eq(a->gcp_quals, b->gcp_quals, n);
}

static int batch_eq(const clphmm_batch *a, const clphmm_batch *b) {
  if (a->n_reads != b->n_reads || a->n_haplotypes != b->n_haplotypes)
    return 0;
  for (size_t r = 0; r < a->n_reads; r++)
    if (!read_eq(&a->reads[r], &b->reads[r]))
      return 0;
  for (size_t h = 0; h < a->n_haplotypes; h++)
    if (a->haplotypes[h].length != b->haplotypes[h].length ||
        !bytes_eq(a->haplotypes[h].bases, b->haplotypes[h].bases,
                  a->haplotypes[h].length))
      return 0;
  return 1;
}

static size_t batch_pairs(const clphmm_batch *b) {
  return b->n_reads * b->n_haplotypes;
}

/* Read the whole input through a reader with the given bounds and check
 * that the chunks concatenate to `whole` (batches, lines, expected values)
 * and that each chunk stops at the first batch that reaches a bound. */
static void check_chunks(clphmm_reader *rd, const clphmm_dataset *whole,
                         size_t max_pairs, size_t max_bytes, const char *what) {
  const clphmm_batch *wb = clphmm_dataset_batches(whole);
  const double *we = clphmm_dataset_expected(whole);
  size_t nb = clphmm_dataset_n_batches(whole), b = 0, pair = 0, chunks = 0;
  int ok = 1;
  clphmm_dataset *c = NULL;
  while (ok &&
         clphmm_reader_next(rd, max_pairs, max_bytes, &c) == CLPHMM_SUCCESS &&
         c) {
    chunks++;
    const clphmm_batch *cb = clphmm_dataset_batches(c);
    const double *ce = clphmm_dataset_expected(c);
    size_t cn = clphmm_dataset_n_batches(c), cpairs = 0;
    CHECK(cn > 0, "%s: empty chunk %zu", what, chunks);
    for (size_t i = 0; i < cn && ok; i++, b++) {
      ok = b < nb && batch_eq(&cb[i], &wb[b]) &&
           clphmm_dataset_batch_line(c, i) ==
               clphmm_dataset_batch_line(whole, b);
      CHECK(ok, "%s: chunk %zu batch %zu differs from batch %zu", what, chunks,
            i, b);
      /* Only the last batch of a chunk may reach the pair bound. */
      if (ok && max_pairs && i + 1 < cn)
        CHECK(cpairs + batch_pairs(&cb[i]) < max_pairs,
              "%s: chunk %zu goes on past %zu pairs", what, chunks, max_pairs);
      cpairs += batch_pairs(&cb[i]);
    }
    CHECK(cpairs == clphmm_dataset_n_pairs(c), "%s: chunk %zu pair count", what,
          chunks);
    CHECK((ce == NULL) == (we == NULL), "%s: expected values", what);
    for (size_t i = 0; ok && ce && we && i < cpairs; i++)
      ok = ce[i] == we[pair + i];
    CHECK(ok, "%s: expected values of chunk %zu", what, chunks);
    pair += cpairs;
    clphmm_dataset_destroy(c);
  }
  CHECK(c == NULL, "%s: reader failed: %s", what, clphmm_last_error(NULL));
  clphmm_dataset_destroy(c);
  CHECK(b == nb && pair == clphmm_dataset_n_pairs(whole),
        "%s: chunks hold %zu of %zu batches", what, b, nb);
  if (max_pairs == 1 || max_bytes == 1)
    CHECK(chunks == nb, "%s: %zu chunks for %zu batches", what, chunks, nb);
  /* The end stays the end. */
  CHECK_STATUS(clphmm_reader_next(rd, max_pairs, max_bytes, &c), CLPHMM_SUCCESS,
               NULL);
  CHECK(c == NULL, "%s: a chunk after the end", what);
}

/* A temporary file in the build tree with the given contents. */
static const char *write_temp(const char *name, const char *data, size_t size) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", CLPHMM_TEST_TMPDIR, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  return path;
}

/* ---- Chunks -------------------------------------------------------------- */

static void test_fixture_chunks(void) {
  static const char *const files[] = {"tiny.in", "10s.in",
                                      "pairhmm-testdata.txt",
                                      "expected.Java.hmmresults.txt"};
  static const size_t bounds[][2] = {{1, 0},    {0, 1},     {7, 0}, {150, 0},
                                     {0, 4000}, {50, 2000}, {0, 0}};
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char path[4096];
    snprintf(path, sizeof path, "%s", test_data_path(files[f]));
    clphmm_dataset *whole = NULL;
    CHECK_STATUS(clphmm_dataset_read_file(path, 0, &whole), CLPHMM_SUCCESS,
                 NULL);
    if (!whole)
      continue;
    for (size_t k = 0; k < sizeof bounds / sizeof bounds[0]; k++) {
      char what[160];
      snprintf(what, sizeof what, "%s, max_pairs %zu, max_bytes %zu", files[f],
               bounds[k][0], bounds[k][1]);
      clphmm_reader *rd = NULL;
      CHECK_STATUS(clphmm_reader_open(path, 0, &rd), CLPHMM_SUCCESS, NULL);
      if (rd)
        check_chunks(rd, whole, bounds[k][0], bounds[k][1], what);
      clphmm_reader_close(rd);
    }
    clphmm_dataset_destroy(whole);
  }
}

/* A byte bound splits where the storage crosses it. */
#define BYTE_BOUND                                                             \
  (24 + sizeof(clphmm_read) + sizeof(clphmm_haplotype) +                       \
   sizeof(clphmm_batch) + sizeof(size_t) + 1)
static void test_byte_bound(void) {
  /* Each batch: 1 read of 4 bases (20 bytes) + 1 haplotype of 4 bases. */
  static const char text[] = "1 1\nACGT IIII IIII IIII ++++\nACGT\n"
                             "1 1\nACGT IIII IIII IIII ++++\nACGT\n"
                             "1 1\nACGT IIII IIII IIII ++++\nACGT\n";
  clphmm_dataset *whole = NULL;
  CHECK_STATUS(
      clphmm_dataset_read_memory(text, sizeof text - 1, "m", 0, &whole),
      CLPHMM_SUCCESS, NULL);
  clphmm_reader *rd = NULL;
  CHECK_STATUS(clphmm_reader_open_memory(text, sizeof text - 1, "m", 0, &rd),
               CLPHMM_SUCCESS, NULL);
  clphmm_dataset *c = NULL;
  /* One batch is 24 bytes of bases and qualities plus its structures
   * (a read, a haplotype, a batch and its line number: 128 bytes on LP64),
   * so a bound between one and two batches is reached by the second. */
  CHECK_STATUS(clphmm_reader_next(rd, 0, BYTE_BOUND, &c), CLPHMM_SUCCESS, NULL);
  CHECK(clphmm_dataset_n_batches(c) == 2, "byte bound: %zu batches",
        clphmm_dataset_n_batches(c));
  clphmm_dataset_destroy(c);
  CHECK_STATUS(clphmm_reader_next(rd, 0, BYTE_BOUND, &c), CLPHMM_SUCCESS, NULL);
  CHECK(clphmm_dataset_n_batches(c) == 1 &&
            clphmm_dataset_batch_line(c, 0) == 7,
        "byte bound: last chunk");
  clphmm_dataset_destroy(c);
  clphmm_reader_close(rd);
  clphmm_dataset_destroy(whole);
}

/* ---- Errors -------------------------------------------------------------- */

static void test_sticky_error(void) {
  static const char text[] = "1 1\nA I I I +\nA\n"
                             "1 1\nC I I I +\nC\n"
                             "1 1\nX I I I +\nA\n"
                             "1 1\nG I I I +\nG\n";
  clphmm_reader *rd = NULL;
  CHECK_STATUS(
      clphmm_reader_open_memory(text, sizeof text - 1, "sticky", 0, &rd),
      CLPHMM_SUCCESS, NULL);
  if (!rd)
    return;
  clphmm_dataset *c[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++)
    CHECK_STATUS(clphmm_reader_next(rd, 1, 0, &c[i]), CLPHMM_SUCCESS, NULL);
  CHECK(c[0] && c[1] && clphmm_dataset_batch_line(c[1], 0) == 4,
        "sticky: the chunks before the error");
  for (int k = 0; k < 2; k++) {
    int dummy;
    clphmm_dataset *bad = (clphmm_dataset *)(void *)&dummy;
    CHECK_STATUS(clphmm_reader_next(rd, 1, 0, &bad), CLPHMM_ERROR_INVALID_BASE,
                 NULL);
    CHECK(bad == NULL, "sticky: chunk not reset to NULL");
    CHECK(strstr(clphmm_last_error(NULL), "sticky:8: read base 1 is 'X'") !=
              NULL,
          "sticky: message %d: %s", k, clphmm_last_error(NULL));
    /* Another failure in between must not change what the reader says. */
    clphmm_reader_next(NULL, 0, 0, &bad);
  }
  /* Earlier chunks stay valid after the failure and after closing. */
  clphmm_reader_close(rd);
  CHECK(c[0] && clphmm_dataset_batches(c[0])[0].reads[0].bases[0] == 'A' &&
            c[1] &&
            clphmm_dataset_batches(c[1])[0].haplotypes[0].bases[0] == 'C',
        "sticky: earlier chunks outlive the reader");
  clphmm_dataset_destroy(c[0]);
  clphmm_dataset_destroy(c[1]);
}

static void test_arguments(void) {
  clphmm_reader *rd = NULL;
  clphmm_dataset *c = NULL;
  CHECK_STATUS(clphmm_reader_open(NULL, 0, &rd), CLPHMM_ERROR_INVALID_ARGUMENT,
               NULL);
  CHECK_STATUS(clphmm_reader_open(test_data_path("tiny.in"), 0, NULL),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(clphmm_reader_open(test_data_path("tiny.in"), 0x10u, &rd),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(clphmm_reader_open_memory(NULL, 3, "x", 0, &rd),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(clphmm_reader_open_memory("1 1", 3, "x", 0, NULL),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(clphmm_reader_open_memory("1 1", 3, "x", 0x2u, &rd),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK(rd == NULL, "failed opens leave *reader NULL");
  CHECK_STATUS(clphmm_reader_next(NULL, 0, 0, &c),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK(strstr(clphmm_last_error(NULL), "reader is NULL") != NULL,
        "NULL reader message: %s", clphmm_last_error(NULL));
  clphmm_reader_close(NULL);

  /* A missing file and a directory fail at open, as I/O errors. */
  char path[4096];
  snprintf(path, sizeof path, "%s", test_data_path("no-such-file.in"));
  CHECK_STATUS(clphmm_reader_open(path, 0, &rd), CLPHMM_ERROR_IO, NULL);
  snprintf(path, sizeof path, "%s", test_data_path("bad"));
  CHECK_STATUS(clphmm_reader_open(path, 0, &rd), CLPHMM_ERROR_IO, NULL);
  CHECK(strstr(clphmm_last_error(NULL), "cannot read") != NULL,
        "directory message: %s", clphmm_last_error(NULL));
  CHECK(rd == NULL, "failed opens leave *reader NULL");

  /* NULL data of size 0 and an empty file: the first chunk fails. */
  CHECK_STATUS(clphmm_reader_open_memory(NULL, 0, NULL, 0, &rd), CLPHMM_SUCCESS,
               NULL);
  CHECK_STATUS(clphmm_reader_next(rd, 0, 0, &c), CLPHMM_ERROR_PARSE, NULL);
  CHECK(strstr(clphmm_last_error(NULL), "<memory>:1: empty file") != NULL,
        "empty memory: %s", clphmm_last_error(NULL));
  clphmm_reader_close(rd);
}

/* ---- Stream buffering ---------------------------------------------------- */

/* Append to a growing string (exits on failure: test setup). */
typedef struct text {
  char *p;
  size_t n, cap;
} text;

static void put(text *t, const char *s, size_t n) {
  if (t->n + n + 1 > t->cap) {
    t->cap = (t->n + n + 1) * 2;
    t->p = realloc(t->p, t->cap);
    if (!t->p) {
      fprintf(stderr, "out of memory\n");
      exit(2);
    }
  }
  memcpy(t->p + t->n, s, n);
  t->n += n;
  t->p[t->n] = '\0';
}

static void put_rep(text *t, char c, size_t n) {
  for (size_t i = 0; i < n; i++)
    put(t, &c, 1);
}

/* Batches with one read of `len` bases; qualities cycle so that a shifted
 * copy would not compare equal. */
static void put_batch(text *t, size_t len, unsigned seed) {
  char head[64];
  snprintf(head, sizeof head, "1 2\n");
  put(t, head, strlen(head));
  static const char bases[] = "ACGTN";
  for (size_t i = 0; i < len; i++)
    put(t, &bases[(i + seed) % 5], 1);
  for (int q = 0; q < 4; q++) {
    put(t, " ", 1);
    for (size_t i = 0; i < len; i++) {
      char c = (char)('!' + (i * 7 + seed + (unsigned)q) % 90);
      put(t, &c, 1);
    }
  }
  put(t, "\r\n", 2);
  put_rep(t, 'G', len / 2 + 1);
  put(t, "\n", 1);
  put_rep(t, 'c', seed % 300 + 1);
  put(t, "\n", 1);
}

static void test_stream_buffering(void) {
  text t = {0};
  /* Many short batches so that lines straddle every buffer refill, then
   * lines far longer than the first 64 KiB buffer, then short ones. */
  for (unsigned i = 0; i < 400; i++)
    put_batch(&t, 50 + i % 97, i);
  put_batch(&t, 300000, 7);
  put_batch(&t, 70000, 8);
  for (unsigned i = 0; i < 50; i++)
    put_batch(&t, 10 + i, i);
  const char *path = write_temp("reader-buffering.in", t.p, t.n);
  clphmm_dataset *mem = NULL, *file = NULL;
  CHECK_STATUS(clphmm_dataset_read_memory(t.p, t.n, "m", 0, &mem),
               CLPHMM_SUCCESS, NULL);
  CHECK_STATUS(clphmm_dataset_read_file(path, 0, &file), CLPHMM_SUCCESS, NULL);
  if (mem && file) {
    size_t nb = clphmm_dataset_n_batches(mem);
    int ok = nb == 452 && clphmm_dataset_n_batches(file) == nb;
    for (size_t b = 0; ok && b < nb; b++)
      ok = batch_eq(&clphmm_dataset_batches(mem)[b],
                    &clphmm_dataset_batches(file)[b]) &&
           clphmm_dataset_batch_line(mem, b) ==
               clphmm_dataset_batch_line(file, b);
    CHECK(ok, "stream and memory readers differ (%zu batches)", nb);
    clphmm_reader *rd = NULL;
    CHECK_STATUS(clphmm_reader_open(path, 0, &rd), CLPHMM_SUCCESS, NULL);
    if (rd)
      check_chunks(rd, mem, 3, 0, "buffering, 3 pairs per chunk");
    clphmm_reader_close(rd);
  }
  clphmm_dataset_destroy(mem);
  clphmm_dataset_destroy(file);
  remove(path);
  free(t.p);
}

/* ---- Line limits and binary data ----------------------------------------- */

static void test_max_line_public(void) {
  size_t n = CLPHMM_MAX_LINE_BYTES + 1;
  char *big = malloc(n + 1);
  if (!big) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  memset(big, 'A', n);
  big[n] = '\n';
  clphmm_dataset *ds = NULL;
  CHECK_STATUS(clphmm_dataset_read_memory(big, n + 1, "big", 0, &ds),
               CLPHMM_ERROR_TOO_LARGE, NULL);
  CHECK(strstr(clphmm_last_error(NULL), "big:1: line longer than") != NULL,
        "over-long line: %s", clphmm_last_error(NULL));
  /* Exactly the limit is accepted by the line source (the parser then
   * finds one token, which is no known format). */
  CHECK_STATUS(clphmm_dataset_read_memory(big + 1, n, "big", 0, &ds),
               CLPHMM_ERROR_PARSE, NULL);
  CHECK(strstr(clphmm_last_error(NULL), "unknown format") != NULL,
        "line at the limit: %s", clphmm_last_error(NULL));
  free(big);
}

/* The line source on a stream with a small limit: limit + 1 fails at the
 * right line, with or without a final newline; binary data is found before
 * the limit even without a newline in sight. */
static void test_linesrc_limits(void) {
  text t = {0};
  put_rep(&t, 'x', 100);
  put(&t, "\n", 1);
  put_rep(&t, 'y', 101);
  const char *path = write_temp("reader-limits.txt", t.p, t.n);
  for (int newline = 0; newline < 2; newline++) {
    if (newline) {
      put(&t, "\n", 1);
      path = write_temp("reader-limits.txt", t.p, t.n);
    }
    cph_linesrc s;
    FILE *f = fopen(path, "rb");
    if (!f)
      exit(2);
    cph_linesrc_stream(&s, f, "lim", 0);
    s.max_line = 100;
    const char *p;
    size_t len;
    CHECK(cph_linesrc_next(&s, &p, &len) == 1 && len == 100,
          "limit: first line");
    CHECK(cph_linesrc_next(&s, &p, &len) == -1 &&
              s.error == CLPHMM_ERROR_TOO_LARGE,
          "limit + 1 (newline %d) accepted", newline);
    CHECK(strstr(clphmm_last_error(NULL), "lim:2: line longer than 100") !=
              NULL,
          "limit message: %s", clphmm_last_error(NULL));
    cph_linesrc_close(&s);
  }

  /* 100,000 text bytes then NUL, no newline: binary, not over-long. */
  t.n = 0;
  put_rep(&t, 'A', 100000);
  put(&t, "\0", 1);
  put_rep(&t, 'A', 10);
  path = write_temp("reader-binary.txt", t.p, t.n);
  clphmm_dataset *ds = NULL;
  CHECK_STATUS(clphmm_dataset_read_file(path, 0, &ds), CLPHMM_ERROR_PARSE,
               NULL);
  CHECK(strstr(clphmm_last_error(NULL),
               ":1: binary data (byte 0x00 at column 100001)") != NULL,
        "binary after a refill: %s", clphmm_last_error(NULL));
  remove(path);
  free(t.p);
}

int main(void) {
  test_fixture_chunks();
  test_byte_bound();
  test_sticky_error();
  test_arguments();
  test_stream_buffering();
  test_max_line_public();
  test_linesrc_limits();
  return test_finish();
}
