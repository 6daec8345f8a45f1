/* Tests of the public API (clphmm.h only): version and status strings,
 * pair counting, input validation (status, message, output untouched),
 * valid edge cases (empty inputs, case folding, N, result order, extreme
 * qualities), error reporting and context reuse, device listing and
 * selection. Everything runs on the CPU reference; the device half is
 * skipped (with a "skip" line) when no OpenCL runtime or device exists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clphmm.h"
#include "test_util.h"

#define SENTINEL 12345.0
#define MAX_OUT 64

/* Contexts by precision (NULL when unavailable). */
static clphmm_context *g_ctx[2];

/* ---- helpers ------------------------------------------------------------ */

static void fill_sentinel(double *out, size_t n) {
  for (size_t i = 0; i < n; i++)
    out[i] = SENTINEL;
}

static int untouched(const double *out, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (out[i] != SENTINEL)
      return 0;
  return 1;
}

static int contains(const char *hay, const char *needle) {
  return hay && strstr(hay, needle) != NULL;
}

/* A message for printing (the library promises never NULL). */
static const char *show(const char *s) {
  return s ? s : "(null)";
}

static const char *engine_name(int e) {
  static const char *const names[4] = {"reference/float", "reference/double",
                                       "device/float", "device/double"};
  return names[e];
}

/* Engine e: 0 reference float, 1 reference double, 2 device float, 3
 * device double. Returns 0 when the engine is unavailable. */
static int engine_available(int e) {
  return e < 2 || g_ctx[e - 2] != NULL;
}

static clphmm_status engine_run(int e, const clphmm_batch *b, size_t n,
                                double *out) {
  if (e < 2)
    return clphmm_reference(
        b, n, e ? CLPHMM_PRECISION_DOUBLE : CLPHMM_PRECISION_FLOAT, out);
  return clphmm_compute(g_ctx[e - 2], b, n, out);
}

static const char *engine_error(int e) {
  return clphmm_last_error(e < 2 ? NULL : g_ctx[e - 2]);
}

/* Run engine e and check it succeeds. */
static int engine_ok(int e, const clphmm_batch *b, size_t n, double *out,
                     const char *what) {
  clphmm_status st = engine_run(e, b, n, out);
  CHECK(st == CLPHMM_SUCCESS, "%s: %s failed: %s (%s)", what, engine_name(e),
        clphmm_status_string(st), engine_error(e));
  return st == CLPHMM_SUCCESS;
}

/* Leave a known message in the thread's last error and in each context's,
 * so that message checks after a failure cannot pass on stale text. */
static void prime_errors(void) {
  size_t n;
  clphmm_count_pairs(NULL, 1, &n); /* "clphmm_count_pairs: NULL argument" */
  static const char bad[] = "Z";
  static const uint8_t q[1] = {20};
  clphmm_read rd = {bad, q, q, q, q, 1};
  clphmm_haplotype hp = {"A", 1};
  clphmm_batch bt = {&rd, 1, &hp, 1};
  double out[1];
  for (int p = 0; p < 2; p++)
    if (g_ctx[p])
      clphmm_compute(g_ctx[p], &bt, 1, out); /* batch 0, read 0, position 0 */
  clphmm_count_pairs(NULL, 1, &n);
}

/* A read with owned copies of its bases and four quality arrays. */
typedef struct tread {
  char *bases;
  uint8_t *qual[4]; /* base, insertion, deletion, gcp */
  clphmm_read read;
} tread;

/* Base qualities vary along the read (base_q + k % 5) so that positions
 * are not interchangeable. */
static void tread_init(tread *t, const char *bases, unsigned base_q,
                       unsigned ins_q, unsigned del_q, unsigned gcp_q) {
  size_t n = strlen(bases);
  t->bases = malloc(n + 1);
  for (int k = 0; k < 4; k++)
    t->qual[k] = malloc(n + 1);
  if (!t->bases || !t->qual[0] || !t->qual[1] || !t->qual[2] || !t->qual[3]) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  memcpy(t->bases, bases, n + 1);
  for (size_t i = 0; i < n; i++) {
    unsigned bq = base_q + (unsigned)(i % 5);
    t->qual[0][i] = (uint8_t)(bq > 127 ? 127 : bq);
    t->qual[1][i] = (uint8_t)ins_q;
    t->qual[2][i] = (uint8_t)del_q;
    t->qual[3][i] = (uint8_t)gcp_q;
  }
  t->read = (clphmm_read){t->bases,   t->qual[0], t->qual[1],
                          t->qual[2], t->qual[3], n};
}

static void tread_free(tread *t) {
  free(t->bases);
  for (int k = 0; k < 4; k++)
    free(t->qual[k]);
}

/* The fixture for validation errors: batch 0 has 1 read x 1 haplotype,
 * batch 1 has 3 reads x 2 haplotypes (7 pairs); the tests corrupt batch
 * 1, read 2 or haplotype 1, at position 3. */
#define FX_PAIRS 7
typedef struct fixture {
  tread r0, r1[3];
  char hb0[16], hb1[2][16];
  clphmm_read reads0[1], reads1[3];
  clphmm_haplotype haps0[1], haps1[2];
  clphmm_batch batches[2];
} fixture;

static void fixture_init(fixture *fx) {
  static const char *const rb[3] = {"ACGTACGTAC", "TTGACCAGTA", "GGCATTACGA"};
  tread_init(&fx->r0, "ACGTTGCA", 30, 45, 45, 10);
  for (int r = 0; r < 3; r++)
    tread_init(&fx->r1[r], rb[r], 20 + 5 * (unsigned)r, 40, 42, 10);
  strcpy(fx->hb0, "ACGTTGCAAT");
  strcpy(fx->hb1[0], "ACGTACGTACGTAC");
  strcpy(fx->hb1[1], "GGCATTACGATTGC");
  fx->reads0[0] = fx->r0.read;
  for (int r = 0; r < 3; r++)
    fx->reads1[r] = fx->r1[r].read;
  fx->haps0[0] = (clphmm_haplotype){fx->hb0, strlen(fx->hb0)};
  for (int h = 0; h < 2; h++)
    fx->haps1[h] = (clphmm_haplotype){fx->hb1[h], strlen(fx->hb1[h])};
  fx->batches[0] = (clphmm_batch){fx->reads0, 1, fx->haps0, 1};
  fx->batches[1] = (clphmm_batch){fx->reads1, 3, fx->haps1, 2};
}

static void fixture_free(fixture *fx) {
  tread_free(&fx->r0);
  for (int r = 0; r < 3; r++)
    tread_free(&fx->r1[r]);
}

/* Every engine must return `want`, leave out[] (n_out + 1 elements)
 * untouched and report a message containing s1, s2 and s3 (NULLs skipped). */
static void expect_reject(const clphmm_batch *b, size_t n, size_t n_out,
                          clphmm_status want, const char *label, const char *s1,
                          const char *s2, const char *s3) {
  const char *subs[3] = {s1, s2, s3};
  double out[MAX_OUT];
  for (int e = 0; e < 4; e++) {
    if (!engine_available(e))
      continue;
    prime_errors();
    fill_sentinel(out, n_out + 1);
    clphmm_status st = engine_run(e, b, n, out);
    const char *msg = engine_error(e);
    CHECK(st == want, "%s: %s returned %d (%s), want %d (%s); message: %s",
          label, engine_name(e), (int)st, clphmm_status_string(st), (int)want,
          clphmm_status_string(want), show(msg));
    CHECK(untouched(out, n_out + 1), "%s: %s wrote to out[] on failure", label,
          engine_name(e));
    for (int k = 0; k < 3; k++)
      if (subs[k])
        CHECK(contains(msg, subs[k]), "%s: %s message lacks \"%s\": \"%s\"",
              label, engine_name(e), subs[k], show(msg));
  }
}

/* ---- sizes before contents ----------------------------------------------- */

/* Counts that overflow or that no array could have, and lengths whose
 * cells overflow, are TOO_LARGE on every engine (the reference as the
 * device), found before any base is read: each batch's read has an invalid
 * first base, which a check of the contents first would report, and past
 * what these arrays really hold lies memory that is not the caller's. */
static void test_sizes_first(void) {
  static const uint8_t q[4] = {20, 20, 20, 20};
  clphmm_read rd = {"XCGT", q, q, q, q, 4};
  clphmm_haplotype hp = {"ACGT", 4};
  char want[256];
  /* n_reads x n_haplotypes overflows; after a batch of one pair. */
  clphmm_batch pairs[2] = {{&rd, 1, &hp, 1}, {&rd, SIZE_MAX / 64, &hp, 128}};
  snprintf(want, sizeof want,
           "batch 1: the pair count overflows: %zu reads x 128 haplotypes, "
           "added to 1 pair of earlier batches",
           SIZE_MAX / 64);
  expect_reject(pairs, 2, 1, CLPHMM_ERROR_TOO_LARGE, "pair count overflow",
                want, NULL, NULL);
  snprintf(want, sizeof want,
           "batch 0: the pair count overflows: %zu reads x 128 haplotypes",
           SIZE_MAX / 64);
  expect_reject(pairs + 1, 1, 1, CLPHMM_ERROR_TOO_LARGE,
                "pair count overflow, one batch", want, NULL, NULL);
  double out[1];
  clphmm_reference(pairs + 1, 1, CLPHMM_PRECISION_FLOAT, out);
  CHECK(!contains(clphmm_last_error(NULL), "earlier"),
        "one batch: the message names earlier batches: %s",
        clphmm_last_error(NULL));
  /* More pairs than an array of results can hold. */
  clphmm_batch most = {&rd, SIZE_MAX / 64, &hp, 16};
  snprintf(want, sizeof want,
           "batch 0: %zu reads x 16 haplotypes make %llu pairs, more results "
           "than fit in memory",
           SIZE_MAX / 64, (unsigned long long)(SIZE_MAX / 64 * 16));
  expect_reject(&most, 1, 1, CLPHMM_ERROR_TOO_LARGE, "pairs beyond memory",
                want, NULL, NULL);
  /* More reads than an array can hold (no haplotypes: no pairs). */
  clphmm_batch reads = {&rd, SIZE_MAX, &hp, 0};
  snprintf(want, sizeof want, "batch 0: %zu reads do not fit in memory",
           SIZE_MAX);
  expect_reject(&reads, 1, 1, CLPHMM_ERROR_TOO_LARGE, "reads beyond memory",
                want, NULL, NULL);
  /* One read and one haplotype of 2^63 bases each: 2^126 cells. A later
   * batch's size comes before an earlier batch's invalid base. */
  clphmm_read long_rd[2] = {{"XCGT", q, q, q, q, SIZE_MAX / 2 + 1},
                            {"XCGT", q, q, q, q, SIZE_MAX / 4 + 1}};
  clphmm_haplotype long_hp = {"ACGT", SIZE_MAX / 2 + 1};
  clphmm_batch cells[2] = {{&rd, 1, &hp, 1}, {long_rd, 1, &long_hp, 1}};
  snprintf(want, sizeof want,
           "batch 1: the cell count overflows: 1 read of %zu bases x 1 "
           "haplotype of %zu bases, added to 16 cells of earlier batches",
           SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 1);
  expect_reject(cells, 2, 1, CLPHMM_ERROR_TOO_LARGE, "cell count overflow",
                want, NULL, NULL);
  /* Two reads whose lengths add up to 2^63 + 2^62: their sum. */
  clphmm_batch two = {long_rd, 2, &long_hp, 1};
  snprintf(want, sizeof want,
           "batch 0: the cell count overflows: 2 reads of %llu bases in all "
           "x 1 haplotype of %zu bases",
           (unsigned long long)(SIZE_MAX / 2 + 1) + SIZE_MAX / 4 + 1,
           SIZE_MAX / 2 + 1);
  expect_reject(&two, 1, 1, CLPHMM_ERROR_TOO_LARGE, "cell count, two reads",
                want, NULL, NULL);
  /* A haplotype or read longer than 32 bits count (the staging and the
   * kernels' limit: a haplotype of 2^32 + 100 bases once computed as one
   * of 100, silently), with few cells: refused before a base is read. */
  const size_t over = (size_t)UINT32_MAX + 101;
  clphmm_haplotype wide_hp = {"ACGT", over};
  clphmm_batch wide = {&rd, 1, &wide_hp, 1};
  snprintf(want, sizeof want,
           "batch 0, haplotype 0: %zu bases, more than the 4294967280 that a "
           "sequence may have",
           over);
  expect_reject(&wide, 1, 1, CLPHMM_ERROR_TOO_LARGE, "haplotype over 2^32",
                want, NULL, NULL);
  clphmm_read long_one = {"XCGT", q, q, q, q, over};
  clphmm_batch tall = {&long_one, 1, &hp, 1};
  snprintf(want, sizeof want, "batch 0, read 0: %zu bases", over);
  expect_reject(&tall, 1, 1, CLPHMM_ERROR_TOO_LARGE, "read over 2^32", want,
                NULL, NULL);
  /* More batches than an array can hold: refused before the second is
   * read (the count of ranges that validate them once wrapped to 0). */
  const size_t n_most = SIZE_MAX / sizeof(clphmm_batch) + 1;
  snprintf(want, sizeof want, "%zu batches do not fit in memory", n_most);
  expect_reject(pairs, n_most, 1, CLPHMM_ERROR_TOO_LARGE,
                "batches beyond memory", want, NULL, NULL);
}

/* ---- many batches ----------------------------------------------------- */

/* Many one-pair batches: a call's shapes are checked, its batches summed
 * (the sums that chunks are cut and staged from: a sum in the wrong place
 * moves rows and results) and its results copied to out on the pool
 * (compute.c, SHAPE_RANGE, COPY_PART; engine/chunks.c): 140,000
 * batches of 7 reads x 16 haplotypes taken in turn, against the reference
 * pair by pair; then a batch in the middle with NULL reads, named in the
 * message, with out untouched. */
static void test_many_batches(void) {
  enum { NB = 140000, NR = 7, NH = 16 };
  static char rbases[NR][24], hbases[NH][40];
  static uint8_t quals[24];
  static const char acgt[] = "ACGT";
  clphmm_read rd[NR];
  clphmm_haplotype hp[NH];
  memset(quals, 30, sizeof quals);
  for (int r = 0; r < NR; r++) {
    for (int i = 0; i < 24; i++)
      rbases[r][i] = acgt[(i * (r + 1) + i / 3) % 4];
    rd[r] =
        (clphmm_read){rbases[r], quals, quals, quals, quals, (size_t)(12 + r)};
  }
  for (int h = 0; h < NH; h++) {
    for (int i = 0; i < 40; i++)
      hbases[h][i] = acgt[(i + (i % (h + 2) == 0)) % 4];
    hp[h] = (clphmm_haplotype){hbases[h], (size_t)(20 + h)};
  }
  clphmm_batch *b = malloc(NB * sizeof *b);
  double *out = malloc((NB + 1) * sizeof *out), *ref = malloc(NB * sizeof *ref);
  if (!b || !out || !ref)
    abort();
  for (size_t i = 0; i < NB; i++)
    b[i] = (clphmm_batch){&rd[i % NR], 1, &hp[i % NH], 1};
  for (int e = 2; e < 4; e++) {
    if (!engine_available(e) ||
        !engine_ok(e - 2, b, NB, ref, "many batches: the reference"))
      continue;
    if (!engine_ok(e, b, NB, out, "many batches"))
      continue;
    size_t bad = 0;
    const double tol = e == 2 ? 1e-5 : 1e-9;
    for (size_t i = 0; i < NB; i++)
      bad += !(fabs(out[i] - ref[i]) <= tol);
    CHECK(bad == 0,
          "many batches: %s: %zu of %d results differ from the "
          "reference",
          engine_name(e), bad, NB);
    /* One bad batch: the parallel check finds it, the caller names it. */
    b[100000].reads = NULL;
    prime_errors();
    fill_sentinel(out, NB + 1);
    clphmm_status st = engine_run(e, b, NB, out);
    CHECK(st == CLPHMM_ERROR_INVALID_ARGUMENT &&
              contains(engine_error(e), "batch 100000"),
          "many batches, NULL reads in batch 100000: %s returned %s: %s",
          engine_name(e), clphmm_status_string(st), show(engine_error(e)));
    CHECK(untouched(out, NB + 1), "many batches: %s wrote to out on failure",
          engine_name(e));
    b[100000].reads = &rd[100000 % NR];
  }
  free(b);
  free(out);
  free(ref);
}

/* ---- version, status strings --------------------------------------------- */

static void test_version_and_status(void) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", CLPHMM_VERSION_MAJOR,
           CLPHMM_VERSION_MINOR, CLPHMM_VERSION_PATCH);
  const char *v = clphmm_version();
  CHECK(v && strcmp(v, want) == 0, "clphmm_version() = \"%s\", want \"%s\"",
        v ? v : "(null)", want);

  const char *s[CLPHMM_ERROR_PARSE + 1];
  for (int i = 0; i <= CLPHMM_ERROR_PARSE; i++) {
    s[i] = clphmm_status_string((clphmm_status)i);
    CHECK(s[i] && *s[i], "status %d has an empty string", i);
    if (!s[i])
      s[i] = "";
    for (int j = 0; j < i; j++)
      CHECK(strcmp(s[i], s[j]) != 0, "statuses %d and %d share \"%s\"", i, j,
            s[i]);
  }
  const char *u = clphmm_status_string((clphmm_status)99);
  CHECK(u && *u, "unknown status has no string");
  for (int i = 0; u && i <= CLPHMM_ERROR_PARSE; i++)
    CHECK(strcmp(u, s[i]) != 0, "unknown status reads like status %d (\"%s\")",
          i, u);
  u = clphmm_status_string((clphmm_status)-1);
  CHECK(u && *u, "status -1 has no string");
}

/* ---- clphmm_count_pairs -------------------------------------------------- */

static void test_count_pairs(void) {
  clphmm_read dummy_read = {0};
  clphmm_haplotype dummy_hap = {0};
  clphmm_batch b[3] = {{&dummy_read, 2, &dummy_hap, 3},
                       {NULL, 0, &dummy_hap, 5},
                       {&dummy_read, 4, &dummy_hap, 1}};
  size_t n = 999;
  CHECK_STATUS(clphmm_count_pairs(b, 3, &n), CLPHMM_SUCCESS, NULL);
  CHECK(n == 2 * 3 + 0 + 4 * 1, "count_pairs = %zu, want 10", n);
  n = 999;
  CHECK_STATUS(clphmm_count_pairs(b, 1, &n), CLPHMM_SUCCESS, NULL);
  CHECK(n == 6, "count_pairs(first batch) = %zu, want 6", n);
  n = 999;
  CHECK_STATUS(clphmm_count_pairs(NULL, 0, &n), CLPHMM_SUCCESS, NULL);
  CHECK(n == 0, "count_pairs(no batches) = %zu, want 0", n);
  CHECK_STATUS(clphmm_count_pairs(NULL, 2, &n), CLPHMM_ERROR_INVALID_ARGUMENT,
               NULL);
  CHECK_STATUS(clphmm_count_pairs(b, 3, NULL), CLPHMM_ERROR_INVALID_ARGUMENT,
               NULL);

  /* reads is never dereferenced by count_pairs. */
  clphmm_batch big = {&dummy_read, SIZE_MAX / 2 + 1, &dummy_hap, 4};
  n = 999;
  CHECK_STATUS(clphmm_count_pairs(&big, 1, &n), CLPHMM_ERROR_TOO_LARGE, NULL);
  CHECK(n == 999, "count_pairs wrote %zu on overflow", n);
  CHECK(*clphmm_last_error(NULL) != '\0', "no message after overflow");
  /* Each product fits, the sum does not. */
  clphmm_batch two[2] = {{&dummy_read, SIZE_MAX / 2 + 1, &dummy_hap, 1},
                         {&dummy_read, SIZE_MAX / 2 + 1, &dummy_hap, 1}};
  CHECK_STATUS(clphmm_count_pairs(two, 1, &n), CLPHMM_SUCCESS, NULL);
  CHECK(n == SIZE_MAX / 2 + 1, "count_pairs = %zu", n);
  CHECK_STATUS(clphmm_count_pairs(two, 2, &n), CLPHMM_ERROR_TOO_LARGE, NULL);
}

/* ---- invalid inputs ------------------------------------------------------ */

static void test_invalid_bases(void) {
  static const unsigned char bad[4] = {'X', '-', 0x00, 0xFF};
  char label[96];
  for (int k = 0; k < 4; k++) {
    fixture fx;
    fixture_init(&fx);
    fx.r1[2].bases[3] = (char)bad[k];
    snprintf(label, sizeof label, "read base 0x%02x", bad[k]);
    expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_BASE, label,
                  "batch 1", "read 2", "position 3");
    fixture_free(&fx);

    fixture_init(&fx);
    fx.hb1[1][3] = (char)bad[k];
    snprintf(label, sizeof label, "haplotype base 0x%02x", bad[k]);
    expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_BASE, label,
                  "batch 1", "haplotype 1", "position 3");
    fixture_free(&fx);
  }
  /* Lowercase letters other than acgtn and IUPAC codes are rejected too. */
  static const char more[] = "RYxu.";
  for (const char *c = more; *c; c++) {
    fixture fx;
    fixture_init(&fx);
    fx.r1[2].bases[3] = *c;
    snprintf(label, sizeof label, "read base '%c'", *c);
    expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_BASE, label,
                  "batch 1", "read 2", "position 3");
    fixture_free(&fx);
  }
  /* A bad byte in batch 0 (the first position) is found too. */
  fixture fx;
  fixture_init(&fx);
  fx.r0.bases[0] = 'B';
  expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_BASE,
                "batch 0 read base", "batch 0", "read 0", "position 0");
  fixture_free(&fx);
}

static void test_invalid_qualities(void) {
  static const char *const field[4] = {"base quality", "insertion quality",
                                       "deletion quality", "gcp"};
  static const unsigned values[2] = {128, 255};
  char label[96];
  for (int f = 0; f < 4; f++) {
    for (int v = 0; v < 2; v++) {
      fixture fx;
      fixture_init(&fx);
      fx.r1[2].qual[f][3] = (uint8_t)values[v];
      snprintf(label, sizeof label, "%s %u", field[f], values[v]);
      expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_QUALITY,
                    label, "batch 1", "read 2", "position 3");
      fixture_free(&fx);
    }
    /* 127 at the same place is accepted. */
    fixture fx;
    fixture_init(&fx);
    fx.r1[2].qual[f][3] = 127;
    double out[FX_PAIRS + 1];
    fill_sentinel(out, FX_PAIRS + 1);
    CHECK_STATUS(clphmm_reference(fx.batches, 2, CLPHMM_PRECISION_FLOAT, out),
                 CLPHMM_SUCCESS, NULL);
    CHECK(out[FX_PAIRS] == SENTINEL && out[FX_PAIRS - 1] != SENTINEL,
          "%s 127: output not written exactly", field[f]);
    fixture_free(&fx);
  }
}

static void test_null_pointers(void) {
  char label[96];
  fixture fx;
  fixture_init(&fx);
  fx.reads1[2].bases = NULL;
  expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_ARGUMENT,
                "NULL read bases", "batch 1", "read 2", NULL);
  fixture_free(&fx);

  fixture_init(&fx);
  fx.haps1[1].bases = NULL;
  expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_ARGUMENT,
                "NULL haplotype bases", "batch 1", "haplotype 1", NULL);
  fixture_free(&fx);

  for (int f = 0; f < 4; f++) {
    fixture_init(&fx);
    const uint8_t **q[4] = {&fx.reads1[2].base_quals, &fx.reads1[2].ins_quals,
                            &fx.reads1[2].del_quals, &fx.reads1[2].gcp_quals};
    *q[f] = NULL;
    snprintf(label, sizeof label, "NULL quality array %d", f);
    expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_ARGUMENT, label,
                  "batch 1", "read 2", NULL);
    fixture_free(&fx);
  }

  fixture_init(&fx);
  expect_reject(NULL, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_ARGUMENT,
                "NULL batches", "batches", NULL, NULL);

  fx.batches[1].reads = NULL;
  expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_ARGUMENT,
                "NULL reads", "batch 1", "reads", NULL);
  fx.batches[1].reads = fx.reads1;
  fx.batches[1].haplotypes = NULL;
  expect_reject(fx.batches, 2, FX_PAIRS, CLPHMM_ERROR_INVALID_ARGUMENT,
                "NULL haplotypes", "batch 1", "haplotypes", NULL);
  fx.batches[1].haplotypes = fx.haps1;

  /* NULL out with pairs to write. */
  for (int e = 0; e < 4; e++) {
    if (!engine_available(e))
      continue;
    prime_errors();
    clphmm_status st = engine_run(e, fx.batches, 2, NULL);
    CHECK(st == CLPHMM_ERROR_INVALID_ARGUMENT, "NULL out: %s returned %s",
          engine_name(e), clphmm_status_string(st));
    CHECK(contains(engine_error(e), "out"), "NULL out: %s message \"%s\"",
          engine_name(e), engine_error(e));
  }

  /* NULL context. */
  double out[FX_PAIRS + 1];
  fill_sentinel(out, FX_PAIRS + 1);
  prime_errors();
  CHECK_STATUS(clphmm_compute(NULL, fx.batches, 2, out),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK(untouched(out, FX_PAIRS + 1), "compute(NULL context) wrote to out");
  CHECK(contains(clphmm_last_error(NULL), "context"),
        "compute(NULL context) message: \"%s\"", clphmm_last_error(NULL));
  fixture_free(&fx);
}

static void test_invalid_precision(void) {
  fixture fx;
  fixture_init(&fx);
  static const int bad[2] = {7, -1};
  for (int k = 0; k < 2; k++) {
    double out[FX_PAIRS + 1];
    fill_sentinel(out, FX_PAIRS + 1);
    prime_errors();
    CHECK_STATUS(clphmm_reference(fx.batches, 2, (clphmm_precision)bad[k], out),
                 CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
    CHECK(untouched(out, FX_PAIRS + 1),
          "reference with precision %d wrote to out", bad[k]);
    CHECK(contains(clphmm_last_error(NULL), "precision"),
          "precision %d: message \"%s\"", bad[k], clphmm_last_error(NULL));

    clphmm_options o;
    clphmm_options_init(&o);
    o.precision = (clphmm_precision)bad[k];
    clphmm_context *c = g_ctx[0]; /* any non-NULL value */
    clphmm_context *sentinel_ctx = c;
    prime_errors();
    clphmm_status st = clphmm_context_create(&o, &c);
    if (g_ctx[0]) {
      CHECK(st == CLPHMM_ERROR_INVALID_ARGUMENT,
            "context_create(precision %d) returned %s", bad[k],
            clphmm_status_string(st));
      CHECK(contains(clphmm_last_error(NULL), "precision"),
            "context_create(precision %d): message \"%s\"", bad[k],
            clphmm_last_error(NULL));
    } else {
      CHECK(st == CLPHMM_ERROR_INVALID_ARGUMENT ||
                st == CLPHMM_ERROR_NO_OPENCL || st == CLPHMM_ERROR_NO_DEVICE,
            "context_create(precision %d) returned %s", bad[k],
            clphmm_status_string(st));
    }
    CHECK(c == NULL, "context_create failed but left *context = %p", (void *)c);
    if (st == CLPHMM_SUCCESS && c && c != sentinel_ctx)
      clphmm_context_destroy(c);
  }
  CHECK_STATUS(clphmm_context_create(NULL, NULL), CLPHMM_ERROR_INVALID_ARGUMENT,
               NULL);
  fixture_free(&fx);
}

/* ---- valid edge cases ---------------------------------------------------- */

static void test_zero_batches(void) {
  fixture fx;
  fixture_init(&fx);
  for (int e = 0; e < 4; e++) {
    if (!engine_available(e))
      continue;
    double out[2];
    fill_sentinel(out, 2);
    engine_ok(e, NULL, 0, out, "zero batches (NULL)");
    engine_ok(e, fx.batches, 0, out, "zero batches");
    CHECK(untouched(out, 2), "%s wrote results for zero batches",
          engine_name(e));
    engine_ok(e, NULL, 0, NULL, "zero batches, NULL out");
  }
  fixture_free(&fx);
}

static void test_empty_batches(void) {
  fixture fx;
  fixture_init(&fx);
  /* Only the last batch has pairs: 1 read x 1 haplotype. */
  clphmm_batch b[4] = {{fx.reads1, 3, fx.haps1, 0},
                       {NULL, 0, fx.haps1, 2},
                       {fx.reads1, 0, NULL, 0},
                       {fx.reads1 + 1, 1, fx.haps1 + 1, 1}};
  size_t n = 0;
  CHECK_STATUS(clphmm_count_pairs(b, 4, &n), CLPHMM_SUCCESS, NULL);
  CHECK(n == 1, "count_pairs = %zu, want 1", n);
  for (int e = 0; e < 4; e++) {
    if (!engine_available(e))
      continue;
    double out[2], one[2];
    fill_sentinel(out, 2);
    fill_sentinel(one, 2);
    if (!engine_ok(e, b, 4, out, "batches without pairs") ||
        !engine_ok(e, b + 3, 1, one, "single batch"))
      continue;
    CHECK(out[0] == one[0] && isfinite(out[0]),
          "%s: %.17g with empty batches, %.17g alone", engine_name(e), out[0],
          one[0]);
    CHECK(out[1] == SENTINEL && one[1] == SENTINEL, "%s wrote past the end",
          engine_name(e));
    fill_sentinel(out, 2);
    engine_ok(e, b, 3, NULL, "only empty batches, NULL out");
    engine_ok(e, b, 3, out, "only empty batches");
    CHECK(untouched(out, 2), "%s wrote results for empty batches",
          engine_name(e));
  }
  fixture_free(&fx);
}

static void test_empty_sequences(void) {
  fixture fx;
  fixture_init(&fx);
  static const uint8_t q[1] = {30};
  /* reads: normal, empty with NULL pointers, empty with valid pointers;
   * haplotypes likewise. */
  clphmm_read reads[3] = {
      fx.r1[0].read, {NULL, NULL, NULL, NULL, NULL, 0}, {"A", q, q, q, q, 0}};
  clphmm_haplotype haps[3] = {fx.haps1[0], {NULL, 0}, {"C", 0}};
  clphmm_batch b = {reads, 3, haps, 3};
  for (int e = 0; e < 4; e++) {
    if (!engine_available(e))
      continue;
    double out[10];
    fill_sentinel(out, 10);
    if (!engine_ok(e, &b, 1, out, "empty sequences"))
      continue;
    for (int r = 0; r < 3; r++) {
      for (int h = 0; h < 3; h++) {
        double v = out[r * 3 + h];
        if (r == 0 && h == 0)
          CHECK(isfinite(v) && v < 0, "%s: normal pair gives %g",
                engine_name(e), v);
        else
          CHECK(isinf(v) && v < 0,
                "%s: read %d (len %zu) x hap %d (len %zu) "
                "gives %g, want -inf",
                engine_name(e), r, reads[r].length, h, haps[h].length, v);
      }
    }
    CHECK(out[9] == SENTINEL, "%s wrote past the end", engine_name(e));
  }
  fixture_free(&fx);
}

static void lower_copy(char *dst, const char *src) {
  for (; *src; src++, dst++)
    *dst = (char)(*src >= 'A' && *src <= 'Z' ? *src - 'A' + 'a' : *src);
  *dst = '\0';
}

static void test_lowercase(void) {
  /* The read and haplotype mismatch in places, so folding lowercase to
   * anything but the same base would change the result. */
  tread up, lo;
  tread_init(&up, "ACGTTAGCNAC", 25, 40, 40, 10);
  tread_init(&lo, "ACGTTAGCNAC", 25, 40, 40, 10);
  lower_copy(lo.bases, up.bases);
  char hup[] = "TTACGATAGCTACNAG", hlo[sizeof hup];
  lower_copy(hlo, hup);
  clphmm_read reads[2] = {up.read, lo.read};
  clphmm_haplotype haps[2] = {{hup, strlen(hup)}, {hlo, strlen(hlo)}};
  clphmm_batch b = {reads, 2, haps, 2};
  for (int e = 0; e < 4; e++) {
    if (!engine_available(e))
      continue;
    double out[4];
    if (!engine_ok(e, &b, 1, out, "lowercase"))
      continue;
    CHECK(isfinite(out[0]), "%s: uppercase pair gives %g", engine_name(e),
          out[0]);
    for (int k = 1; k < 4; k++)
      CHECK(out[k] == out[0],
            "%s: %s read x %s haplotype gives %.17g, "
            "uppercase %.17g",
            engine_name(e), k / 2 ? "lowercase" : "uppercase",
            k % 2 ? "lowercase" : "uppercase", out[k], out[0]);
  }
  tread_free(&up);
  tread_free(&lo);
}

static void test_n_matches_anything(void) {
  tread rn, rln, ra, rb;
  tread_init(&rn, "NNNNNNNNNN", 30, 45, 45, 10);
  tread_init(&rln, "nnnnnnnnnn", 30, 45, 45, 10);
  tread_init(&ra, "ACGTACGTAC", 30, 45, 45, 10);
  tread_init(&rb, "TTGCAAGCTA", 30, 45, 45, 10);
  char h1[] = "ACGTACGTACGT", h2[] = "TGCATTGACCAG", hn[] = "NNNNNNNNNNNN";
  char hln[] = "nnnnnnnnnnnn";
  clphmm_read reads[4] = {rn.read, rln.read, ra.read, rb.read};
  clphmm_haplotype haps[4] = {{h1, 12}, {h2, 12}, {hn, 12}, {hln, 12}};
  clphmm_batch b = {reads, 4, haps, 4};
  for (int e = 0; e < 4; e++) {
    if (!engine_available(e))
      continue;
    double o[16];
    if (!engine_ok(e, &b, 1, o, "N bases"))
      continue;
    const char *en = engine_name(e);
    /* The haplotypes differ for a real read (the check has teeth). */
    CHECK(fabs(o[2 * 4 + 0] - o[2 * 4 + 1]) > 1.0,
          "%s: ACGT read gives %g and %g on two haplotypes", en, o[8], o[9]);
    /* All-N read: every haplotype of the same length gives the same. */
    for (int r = 0; r < 2; r++)
      for (int h = 1; h < 4; h++)
        CHECK(o[r * 4 + h] == o[r * 4 + 0],
              "%s: N read %d x hap %d gives %.17g, hap 0 %.17g", en, r, h,
              o[r * 4 + h], o[r * 4]);
    CHECK(o[1 * 4] == o[0], "%s: 'n' read %.17g, 'N' read %.17g", en, o[4],
          o[0]);
    /* All-N haplotype: every read with the same qualities gives the same. */
    for (int h = 2; h < 4; h++)
      for (int r = 1; r < 4; r++)
        CHECK(o[r * 4 + h] == o[h],
              "%s: read %d x N hap %d gives %.17g, "
              "read 0 %.17g",
              en, r, h, o[r * 4 + h], o[h]);
    /* Every cell of an all-N read takes the match prior 1-e >= e/3, so it
     * scores at least as well as any read with the same qualities. */
    for (int r = 2; r < 4; r++)
      for (int h = 0; h < 2; h++)
        CHECK(o[h] >= o[r * 4 + h],
              "%s: N read %.17g < read %d %.17g on "
              "hap %d",
              en, o[h], r, o[r * 4 + h], h);
  }
  tread_free(&rn);
  tread_free(&rln);
  tread_free(&ra);
  tread_free(&rb);
}

/* Results are read-major with batch offsets: compare a two-batch call with
 * one call per pair. */
static void test_result_order(void) {
  tread ta[2], tb[3];
  tread_init(&ta[0], "ACGTACGTTGCA", 20, 40, 40, 10);
  tread_init(&ta[1], "GATTACA", 35, 45, 45, 10);
  tread_init(&tb[0], "CCGGTTAA", 30, 30, 50, 10);
  tread_init(&tb[1], "TGCATGCATG", 25, 45, 35, 10);
  tread_init(&tb[2], "AAAACCCCGG", 40, 45, 45, 12);
  clphmm_read ra[2] = {ta[0].read, ta[1].read};
  clphmm_read rb[3] = {tb[0].read, tb[1].read, tb[2].read};
  clphmm_haplotype ha[3] = {
      {"ACGTACGTTGCAAC", 14}, {"TTGATTACAGG", 11}, {"CCCCCCCCCCCCCCCCCC", 18}};
  clphmm_haplotype hb[2] = {{"CCGGTTAAGG", 10}, {"AAAACCCCGGTTTGCATG", 18}};
  clphmm_batch b[2] = {{ra, 2, ha, 3}, {rb, 3, hb, 2}};
  enum { N = 2 * 3 + 3 * 2 };
  size_t n = 0;
  CHECK_STATUS(clphmm_count_pairs(b, 2, &n), CLPHMM_SUCCESS, NULL);
  CHECK(n == N, "count_pairs = %zu, want %d", n, N);

  double single[2][N]; /* reference results, one pair per call */
  for (int p = 0; p < 2; p++) {
    size_t k = 0;
    for (int bi = 0; bi < 2; bi++) {
      for (size_t r = 0; r < b[bi].n_reads; r++) {
        for (size_t h = 0; h < b[bi].n_haplotypes; h++, k++) {
          clphmm_batch one = {&b[bi].reads[r], 1, &b[bi].haplotypes[h], 1};
          single[p][k] = NAN;
          engine_ok(p, &one, 1, &single[p][k], "single pair");
        }
      }
    }
    /* Distinct values, so a misplaced result cannot go unnoticed. */
    for (int i = 0; i < N; i++)
      for (int j = 0; j < i; j++)
        CHECK(fabs(single[p][i] - single[p][j]) > 1e-3,
              "%s: pairs %d and %d too close (%g, %g)", engine_name(p), i, j,
              single[p][i], single[p][j]);
  }
  for (int e = 0; e < 4; e++) {
    if (!engine_available(e))
      continue;
    double out[N + 1];
    fill_sentinel(out, N + 1);
    if (!engine_ok(e, b, 2, out, "two batches"))
      continue;
    const double *want = single[e % 2];
    double tol = e < 2 ? 0.0 : (e == 2 ? 1e-5 : 1e-7);
    for (int i = 0; i < N; i++)
      CHECK(fabs(out[i] - want[i]) <= tol,
            "%s: result %d = %.17g, the pair alone gives %.17g", engine_name(e),
            i, out[i], want[i]);
    CHECK(out[N] == SENTINEL, "%s wrote past the end", engine_name(e));
    /* Second batch alone lands at offset 0. */
    fill_sentinel(out, N + 1);
    if (engine_ok(e, b + 1, 1, out, "second batch"))
      for (int i = 0; i < 6; i++)
        CHECK(fabs(out[i] - want[6 + i]) <= tol,
              "%s: batch 1 alone, result %d = %.17g, want %.17g",
              engine_name(e), i, out[i], want[6 + i]);
    CHECK(out[6] == SENTINEL, "%s wrote past the end", engine_name(e));
  }
  for (int i = 0; i < 2; i++)
    tread_free(&ta[i]);
  for (int i = 0; i < 3; i++)
    tread_free(&tb[i]);
}

static void test_extreme_qualities(void) {
  /* Every combination of 0 and 127 in the four arrays; base qualities are
   * constant (tread_init adds k % 5, so set them again). */
  tread t[16];
  clphmm_read reads[16];
  for (int c = 0; c < 16; c++) {
    unsigned v[4];
    for (int f = 0; f < 4; f++)
      v[f] = (c >> f) & 1 ? 127 : 0;
    tread_init(&t[c], "ACGTTGCANA", v[0], v[1], v[2], v[3]);
    memset(t[c].qual[0], (int)v[0], t[c].read.length);
    reads[c] = t[c].read;
  }
  clphmm_haplotype haps[3] = {
      {"ACGTTGCAGA", 10}, {"TTTTACGTTGCAGATTTT", 18}, {"GGGGGGGG", 8}};
  clphmm_batch b = {reads, 16, haps, 3};
  for (int e = 0; e < 4; e++) {
    if (!engine_available(e))
      continue;
    double out[48];
    if (!engine_ok(e, &b, 1, out, "qualities 0 and 127"))
      continue;
    int bad = 0;
    for (int i = 0; i < 48; i++) {
      int ok = !isnan(out[i]) && (isfinite(out[i]) || out[i] < 0);
      if (!ok && bad++ < 4)
        CHECK(0, "%s: read %d (quals %s%s%s%s) x hap %d gives %g",
              engine_name(e), i / 3, (i / 3) & 1 ? "Q127 " : "Q0 ",
              (i / 3) & 2 ? "I127 " : "I0 ", (i / 3) & 4 ? "D127 " : "D0 ",
              (i / 3) & 8 ? "C127" : "C0", i % 3, out[i]);
    }
    CHECK(bad == 0, "%s: %d results NaN or +inf", engine_name(e), bad);
  }
  for (int c = 0; c < 16; c++)
    tread_free(&t[c]);
}

/* ---- errors and context reuse -------------------------------------------- */

static void test_last_error_and_reuse(void) {
  fixture fx;
  fixture_init(&fx);
  double first[FX_PAIRS], out[FX_PAIRS + 1];

  /* Reference: the message of a failed call, then success again. */
  fx.r1[2].bases[3] = 'X';
  prime_errors();
  CHECK_STATUS(clphmm_reference(fx.batches, 2, CLPHMM_PRECISION_FLOAT, out),
               CLPHMM_ERROR_INVALID_BASE, NULL);
  CHECK(contains(clphmm_last_error(NULL), "position 3") &&
            contains(clphmm_last_error(NULL), "read 2"),
        "reference error message: \"%s\"", clphmm_last_error(NULL));
  fx.r1[2].bases[3] = 'A';
  CHECK_STATUS(clphmm_reference(fx.batches, 2, CLPHMM_PRECISION_FLOAT, first),
               CLPHMM_SUCCESS, NULL);
  CHECK(clphmm_last_error(NULL) != NULL, "last_error(NULL) is NULL");

  for (int p = 0; p < 2; p++) {
    clphmm_context *ctx = g_ctx[p];
    if (!ctx)
      continue;
    CHECK(clphmm_last_error(ctx) != NULL, "last_error(ctx) is NULL");
    if (CHECK_STATUS(clphmm_compute(ctx, fx.batches, 2, first), CLPHMM_SUCCESS,
                     ctx))
      continue;
    clphmm_stats st0;
    CHECK_STATUS(clphmm_context_stats(ctx, &st0), CLPHMM_SUCCESS, ctx);
    CHECK(st0.pairs == FX_PAIRS, "stats.pairs = %llu, want %d",
          (unsigned long long)st0.pairs, FX_PAIRS);

    fx.r1[2].qual[1][3] = 200;
    prime_errors();
    fill_sentinel(out, FX_PAIRS + 1);
    CHECK_STATUS(clphmm_compute(ctx, fx.batches, 2, out),
                 CLPHMM_ERROR_INVALID_QUALITY, ctx);
    CHECK(untouched(out, FX_PAIRS + 1), "failed compute wrote to out");
    const char *m = clphmm_last_error(ctx);
    CHECK(contains(m, "batch 1") && contains(m, "read 2") &&
              contains(m, "position 3") && contains(m, "200"),
          "compute error message: \"%s\"", m);
    clphmm_stats st1;
    CHECK_STATUS(clphmm_context_stats(ctx, &st1), CLPHMM_SUCCESS, ctx);
    CHECK(st1.pairs == st0.pairs && st1.cells == st0.cells,
          "stats changed by a failed call: pairs %llu, cells %llu",
          (unsigned long long)st1.pairs, (unsigned long long)st1.cells);

    fx.r1[2].qual[1][3] = 40;
    fill_sentinel(out, FX_PAIRS + 1);
    CHECK_STATUS(clphmm_compute(ctx, fx.batches, 2, out), CLPHMM_SUCCESS, ctx);
    for (int i = 0; i < FX_PAIRS; i++)
      CHECK(out[i] == first[i],
            "precision %d: after an error, result %d = "
            "%.17g, before %.17g",
            p, i, out[i], first[i]);
    CHECK(out[FX_PAIRS] == SENTINEL, "compute wrote past the end");
  }
  fixture_free(&fx);
}

/* ---- devices ------------------------------------------------------------- */

static void test_options_init(void) {
  clphmm_options o;
  memset(&o, 0xA5, sizeof o);
  clphmm_options_init(&o);
  CHECK(o.device == NULL && o.precision == CLPHMM_PRECISION_FLOAT &&
            o.max_cells_per_launch == 0 && o.profile == 0,
        "clphmm_options_init defaults wrong");
  clphmm_options_init(NULL); /* must not crash */
}

static int find_cpu_device(size_t count) {
  for (size_t i = 0; i < count; i++) {
    clphmm_device_info info;
    if (clphmm_device_get_info(i, &info) == CLPHMM_SUCCESS &&
        info.type == CLPHMM_DEVICE_CPU)
      return 1;
  }
  return 0;
}

/* Create a context with options.device = NULL and CLPHMM_DEVICE = env. */
static clphmm_status create_with_env(const char *env, const char *device,
                                     clphmm_context **ctx) {
  setenv("CLPHMM_DEVICE", env, 1);
  clphmm_options o;
  clphmm_options_init(&o);
  o.device = device;
  return clphmm_context_create(&o, ctx);
}

static void test_devices(void) {
  size_t count = 0;
  CHECK_STATUS(clphmm_device_count(&count), CLPHMM_SUCCESS, NULL);
  CHECK(count >= 1, "device_count = %zu with a working context", count);
  CHECK_STATUS(clphmm_device_count(NULL), CLPHMM_ERROR_INVALID_ARGUMENT, NULL);

  clphmm_device_info info, first;
  memset(&first, 0, sizeof first);
  for (size_t i = 0; i < count; i++) {
    if (CHECK_STATUS(clphmm_device_get_info(i, &info), CLPHMM_SUCCESS, NULL))
      continue;
    CHECK(info.index == i, "device %zu reports index %zu", i, info.index);
    CHECK(info.name[0] != '\0', "device %zu has no name", i);
    if (i == 0)
      first = info;
  }
  prime_errors();
  CHECK_STATUS(clphmm_device_get_info(count, &info), CLPHMM_ERROR_NO_DEVICE,
               NULL);
  CHECK(*clphmm_last_error(NULL) != '\0', "no message for a bad index");
  CHECK_STATUS(clphmm_device_get_info(0, NULL), CLPHMM_ERROR_INVALID_ARGUMENT,
               NULL);

  /* The default context's device. */
  memset(&info, 0, sizeof info);
  CHECK_STATUS(clphmm_context_device(g_ctx[0], &info), CLPHMM_SUCCESS,
               g_ctx[0]);
  CHECK(info.name[0] != '\0', "context device has no name");
  CHECK(info.index < count, "context device index %zu of %zu", info.index,
        count);
  clphmm_device_info listed;
  if (info.index < count &&
      clphmm_device_get_info(info.index, &listed) == CLPHMM_SUCCESS)
    CHECK(strcmp(listed.name, info.name) == 0,
          "context device \"%s\" is listed as \"%s\"", info.name, listed.name);
  CHECK_STATUS(clphmm_context_device(NULL, &info),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(clphmm_context_device(g_ctx[0], NULL),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);

  const char *saved = getenv("CLPHMM_DEVICE");
  char *saved_copy = saved ? strdup(saved) : NULL;
  unsetenv("CLPHMM_DEVICE");

  /* An unknown selector: NO_DEVICE and a message that lists the devices. */
  clphmm_options o;
  clphmm_options_init(&o);
  o.device = "no-such-device-xyz";
  clphmm_context *c = NULL;
  prime_errors();
  CHECK_STATUS(clphmm_context_create(&o, &c), CLPHMM_ERROR_NO_DEVICE, NULL);
  CHECK(c == NULL, "failed context_create left a context");
  const char *m = clphmm_last_error(NULL);
  CHECK(contains(m, "no-such-device-xyz"), "message lacks the selector: \"%s\"",
        show(m));
  CHECK(first.name[0] && contains(m, first.name),
        "message does not list device 0 (\"%s\"): \"%s\"", first.name, show(m));

  /* Index "0". */
  o.device = "0";
  c = NULL;
  if (!CHECK_STATUS(clphmm_context_create(&o, &c), CLPHMM_SUCCESS, NULL) && c) {
    CHECK_STATUS(clphmm_context_device(c, &info), CLPHMM_SUCCESS, c);
    CHECK(info.index == 0 && strcmp(info.name, first.name) == 0,
          "device \"0\" opened device %zu (\"%s\")", info.index, info.name);
    clphmm_context_destroy(c);
  }
  /* An index past the end. */
  char idx[32];
  snprintf(idx, sizeof idx, "%zu", count);
  o.device = idx;
  c = NULL;
  CHECK_STATUS(clphmm_context_create(&o, &c), CLPHMM_ERROR_NO_DEVICE, NULL);
  CHECK(c == NULL, "failed context_create left a context");

  /* CLPHMM_DEVICE is honoured when options.device is NULL... */
  c = NULL;
  CHECK_STATUS(create_with_env("no-such-device-xyz", NULL, &c),
               CLPHMM_ERROR_NO_DEVICE, NULL);
  CHECK(c == NULL, "failed context_create left a context");
  c = NULL;
  prime_errors();
  clphmm_status st = clphmm_context_create(NULL, &c);
  CHECK(st == CLPHMM_ERROR_NO_DEVICE,
        "CLPHMM_DEVICE=no-such-device-xyz ignored with NULL options (%s)",
        clphmm_status_string(st));
  if (c)
    clphmm_context_destroy(c);
  /* ...and overridden by options.device. */
  c = NULL;
  if (!CHECK_STATUS(create_with_env("no-such-device-xyz", "0", &c),
                    CLPHMM_SUCCESS, NULL))
    clphmm_context_destroy(c);
  /* "" is no selector, as NULL is (the header): CLPHMM_DEVICE, named in
   * the error... */
  c = NULL;
  prime_errors();
  CHECK_STATUS(create_with_env("no-such-device-xyz", "", &c),
               CLPHMM_ERROR_NO_DEVICE, NULL);
  CHECK(c == NULL, "failed context_create left a context");
  m = clphmm_last_error(NULL);
  CHECK(contains(m, "'no-such-device-xyz' (from CLPHMM_DEVICE)"),
        "options.device \"\": message does not name CLPHMM_DEVICE: \"%s\"",
        show(m));
  /* ...else the default device, as with NULL; an empty CLPHMM_DEVICE is
   * unset. */
  clphmm_device_info by_null, by_empty;
  memset(&by_null, 0, sizeof by_null);
  memset(&by_empty, 0xA5, sizeof by_empty);
  c = NULL;
  if (!CHECK_STATUS(create_with_env("", NULL, &c), CLPHMM_SUCCESS, NULL) && c) {
    CHECK_STATUS(clphmm_context_device(c, &by_null), CLPHMM_SUCCESS, c);
    clphmm_context_destroy(c);
  }
  c = NULL;
  if (!CHECK_STATUS(create_with_env("", "", &c), CLPHMM_SUCCESS, NULL) && c) {
    CHECK_STATUS(clphmm_context_device(c, &by_empty), CLPHMM_SUCCESS, c);
    CHECK(by_empty.index == by_null.index,
          "options.device \"\" opened device %zu, NULL device %zu",
          by_empty.index, by_null.index);
    clphmm_context_destroy(c);
  }
  unsetenv("CLPHMM_DEVICE");
  if (find_cpu_device(count)) {
    c = NULL;
    if (!CHECK_STATUS(create_with_env("cpu", NULL, &c), CLPHMM_SUCCESS, NULL) &&
        c) {
      CHECK_STATUS(clphmm_context_device(c, &info), CLPHMM_SUCCESS, c);
      CHECK(info.type == CLPHMM_DEVICE_CPU,
            "CLPHMM_DEVICE=cpu opened \"%s\" of type %d", info.name,
            (int)info.type);
      clphmm_context_destroy(c);
    }
  } else {
    printf("skip: no CPU OpenCL device for the CLPHMM_DEVICE=cpu check\n");
  }

  if (saved_copy)
    setenv("CLPHMM_DEVICE", saved_copy, 1);
  else
    unsetenv("CLPHMM_DEVICE");
  free(saved_copy);
}

/* Engine settings from the environment that are not numbers in their
 * range: context creation fails with INVALID_ARGUMENT and a message that
 * names the variable and the value; an empty value is the default. */
static void test_bad_settings(void) {
  static const char *const cases[][2] = {
      {"CLPHMM_WAIT_SPIN_US", "abc"},
      {"CLPHMM_WAIT_SPIN_US", "2000000"},
      {"CLPHMM_WAIT_SPIN_US", "-5"},
      {"CLPHMM_EARLY_FLUSH", "2"},
      {"CLPHMM_PACK_BYTES", "1e6"},
      {"CLPHMM_HOST_THREADS", "0"},
      {"CLPHMM_CONCURRENT_TILES", "x3"},
      {"CLPHMM_CHUNK_CELLS", "0"},
      {"CLPHMM_SPLIT", "0"},
      {"CLPHMM_SPLIT", "65"},
      {"CLPHMM_SIDE_QUEUE", "2"},
      {"CLPHMM_COPY_QUEUE", "yes"},
      {"CLPHMM_PREP_QUEUE", "2"},
      {"CLPHMM_PREP_LANES", "4"},
      {"CLPHMM_PREP_LANES", "12"},
      {"CLPHMM_PREP_LANES", "65"},
      {"CLPHMM_INLINE_ROWS", "3"},
      {"CLPHMM_INLINE_COLS", "abc"},
      {"CLPHMM_EXIT_CELLS", "-1"},
      /* (strtoull skips blanks and takes a sign: these were 2^64 - 5 and
       * the like; out of range was its largest value.) */
      {"CLPHMM_EXIT_CELLS", " -1"},
      {"CLPHMM_EXACT_DIRECT", "\t-5"},
      {"CLPHMM_CHUNK_CELLS", " -1"},
      {"CLPHMM_CHUNK_CELLS", "99999999999999999999999"},
      {"CLPHMM_CHUNK_CELLS", "9223372036854775808"},
      {"CLPHMM_INLINE_COLS", "+5"},
      {"CLPHMM_EXACT_DIRECT", "1e7"},
      {"CLPHMM_CHUNK_RAMP", "0"},
      {"CLPHMM_CHUNK_RAMP", "65"},
      {"CLPHMM_RESCUE_PAIRS", "0"},
      {"CLPHMM_RESCUE_PAIRS", "lots"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *name = cases[i][0], *value = cases[i][1];
    char *saved = test_env_set(name, value);
    clphmm_context *c = NULL;
    prime_errors();
    clphmm_status st = clphmm_context_create(NULL, &c);
    if (st == CLPHMM_ERROR_NO_OPENCL || st == CLPHMM_ERROR_NO_DEVICE) {
      printf("skip: settings check (%s)\n", clphmm_status_string(st));
    } else {
      const char *m = clphmm_last_error(NULL);
      CHECK(st == CLPHMM_ERROR_INVALID_ARGUMENT && c == NULL, "%s='%s' gave %s",
            name, value, clphmm_status_string(st));
      CHECK(contains(m, name) && contains(m, value),
            "%s='%s': the message does not name both: \"%s\"", name, value,
            show(m));
    }
    if (c)
      clphmm_context_destroy(c);
    setenv(name, "", 1);
    c = NULL;
    st = clphmm_context_create(NULL, &c);
    CHECK(st == CLPHMM_SUCCESS || st == CLPHMM_ERROR_NO_OPENCL ||
              st == CLPHMM_ERROR_NO_DEVICE,
          "%s='' (the default) gave %s", name, clphmm_status_string(st));
    if (c)
      clphmm_context_destroy(c);
    test_env_restore(name, saved);
  }
  /* Extra build options longer than the programs' option buffer holds
   * beside their own (they were cut silently, an option in two). */
  char opts[701];
  for (size_t i = 0; i < 700; i += 7)
    memcpy(opts + i, "-DPAD=1", 7);
  opts[700] = '\0';
  char *saved = test_env_set("CLPHMM_BUILD_OPTIONS", opts);
  clphmm_context *c = NULL;
  clphmm_status st = clphmm_context_create(NULL, &c);
  if (st != CLPHMM_ERROR_NO_OPENCL && st != CLPHMM_ERROR_NO_DEVICE)
    CHECK(st == CLPHMM_ERROR_INVALID_ARGUMENT && c == NULL &&
              contains(clphmm_last_error(NULL),
                       "CLPHMM_BUILD_OPTIONS of 700 bytes is too long"),
          "700 bytes of CLPHMM_BUILD_OPTIONS gave %s: %s",
          clphmm_status_string(st), show(clphmm_last_error(NULL)));
  if (c)
    clphmm_context_destroy(c);
  test_env_restore("CLPHMM_BUILD_OPTIONS", saved);
}

/* ---- main ---------------------------------------------------------------- */

static void open_contexts(void) {
  clphmm_status st = clphmm_context_create(NULL, &g_ctx[0]);
  if (st == CLPHMM_ERROR_NO_OPENCL || st == CLPHMM_ERROR_NO_DEVICE) {
    printf("skip: device tests (%s: %s)\n", clphmm_status_string(st),
           clphmm_last_error(NULL));
    g_ctx[0] = NULL;
    return;
  }
  CHECK(st == CLPHMM_SUCCESS && g_ctx[0], "context_create(NULL): %s (%s)",
        clphmm_status_string(st), clphmm_last_error(NULL));
  if (st)
    return;
  clphmm_device_info info;
  if (clphmm_context_device(g_ctx[0], &info) == CLPHMM_SUCCESS)
    printf("device: %s (%s)\n", info.name, info.platform);
  clphmm_options o;
  clphmm_options_init(&o);
  o.precision = CLPHMM_PRECISION_DOUBLE;
  st = clphmm_context_create(&o, &g_ctx[1]);
  if (st == CLPHMM_ERROR_NO_DEVICE && !info.has_fp64) {
    printf("skip: double precision device tests (%s)\n",
           clphmm_last_error(NULL));
    g_ctx[1] = NULL;
    return;
  }
  CHECK(st == CLPHMM_SUCCESS, "double context_create: %s (%s)",
        clphmm_status_string(st), clphmm_last_error(NULL));
}

int main(void) {
  open_contexts();
  test_version_and_status();
  test_count_pairs();
  test_sizes_first();
  test_options_init();
  test_bad_settings();
  test_invalid_bases();
  test_invalid_qualities();
  test_null_pointers();
  test_many_batches();
  test_invalid_precision();
  test_zero_batches();
  test_empty_batches();
  test_empty_sequences();
  test_lowercase();
  test_n_matches_anything();
  test_result_order();
  test_extreme_qualities();
  test_last_error_and_reuse();
  if (g_ctx[0])
    test_devices();
  else
    printf("skip: device listing and selection tests\n");
  clphmm_context_destroy(g_ctx[0]);
  clphmm_context_destroy(g_ctx[1]);
  return test_finish();
}
