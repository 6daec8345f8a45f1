/* Tests of the file readers (src/io/io.c): fixtures, quality decoding,
 * whitespace tolerance, and one check per class of bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clphmm.h"
#include "model/validate.h"
#include "test_util.h"

/* A string literal as (data, size), embedded NULs included. */
#define MEM(s) (s), (sizeof(s) - 1)

static const char *const BATCH_PLAIN = "2 2\n"
                                       "ACGT IIII IIII IIII ++++\n"
                                       "acgN 5'+I HHHH DDDD ++++\n"
                                       "ACGTTT\n"
                                       "CCGTA\n";

static const char *const PAIRS_PLAIN =
    "# hap read baseq insq delq gcp expected\n"
    "ACGTTT ACGT IIII IIII IIII ++++ -1.5e+00\n"
    "CCGTA ACGT IIII IIII IIII ++++ -2.5e+00\n"
    "ACGTTT acgN 5'+I HHHH DDDD ++++ -inf\n";

/* ---- Helpers ------------------------------------------------------------- */

static clphmm_dataset *load_fixture(const char *name, unsigned flags) {
  clphmm_dataset *ds = NULL;
  CHECK_STATUS(clphmm_dataset_read_file(test_data_path(name), flags, &ds),
               CLPHMM_SUCCESS, NULL);
  CHECK(ds != NULL, "%s: no dataset", name);
  if (ds) {
    /* What the reader builds must pass the library's own validation. */
    size_t pairs = 0;
    uint64_t cells = 0;
    CHECK_STATUS(cph_validate_batches(clphmm_dataset_batches(ds),
                                      clphmm_dataset_n_batches(ds), &pairs,
                                      &cells),
                 CLPHMM_SUCCESS, NULL);
    CHECK(pairs == clphmm_dataset_n_pairs(ds), "%s: validate counts %zu pairs",
          name, pairs);
  }
  return ds;
}

static clphmm_dataset *load_mem(const char *text, unsigned flags) {
  clphmm_dataset *ds = NULL;
  CHECK_STATUS(
      clphmm_dataset_read_memory(text, strlen(text), "mem", flags, &ds),
      CLPHMM_SUCCESS, NULL);
  return ds;
}

/* The content lines (not '#', not blank) of a pair-per-line file, read
 * independently of the library: returns the count and, in *lines, a
 * malloc'd array of malloc'd lines without their newline. */
static size_t read_pair_lines(const char *name, char ***lines) {
  FILE *f = fopen(test_data_path(name), "r");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", name);
    exit(2);
  }
  size_t n = 0;
  char **v = NULL;
  static char buf[1 << 16];
  while (fgets(buf, sizeof buf, f)) {
    buf[strcspn(buf, "\r\n")] = '\0';
    if (buf[0] == '#' || buf[0] == '\0')
      continue;
    char **nv = realloc(v, (n + 1) * sizeof *v);
    char *copy = malloc(strlen(buf) + 1);
    if (!nv || !copy) {
      fprintf(stderr, "out of memory\n");
      exit(2);
    }
    v = nv;
    v[n++] = strcpy(copy, buf);
  }
  fclose(f);
  *lines = v;
  return n;
}

static void free_lines(char **lines, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(lines[i]);
  free(lines);
}

/* The read and its qualities: everything after the first token, up to the
 * last space (so the haplotype and the expected value are excluded). */
static int same_read_part(const char *a, const char *b) {
  const char *sa = strchr(a, ' '), *sb = strchr(b, ' ');
  const char *ea = strrchr(a, ' '), *eb = strrchr(b, ' ');
  return ea - sa == eb - sb && memcmp(sa, sb, (size_t)(ea - sa)) == 0;
}

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

/* Same batches, reads, haplotypes and expected values (lines may differ). */
static int datasets_equal(const clphmm_dataset *a, const clphmm_dataset *b) {
  size_t nb = clphmm_dataset_n_batches(a);
  if (nb != clphmm_dataset_n_batches(b) ||
      clphmm_dataset_n_pairs(a) != clphmm_dataset_n_pairs(b))
    return 0;
  const clphmm_batch *ba = clphmm_dataset_batches(a);
  const clphmm_batch *bb = clphmm_dataset_batches(b);
  for (size_t i = 0; i < nb; i++) {
    if (ba[i].n_reads != bb[i].n_reads ||
        ba[i].n_haplotypes != bb[i].n_haplotypes)
      return 0;
    for (size_t r = 0; r < ba[i].n_reads; r++)
      if (!read_eq(&ba[i].reads[r], &bb[i].reads[r]))
        return 0;
    for (size_t h = 0; h < ba[i].n_haplotypes; h++) {
      const clphmm_haplotype *ha = &ba[i].haplotypes[h];
      const clphmm_haplotype *hb = &bb[i].haplotypes[h];
      if (ha->length != hb->length ||
          !bytes_eq(ha->bases, hb->bases, ha->length))
        return 0;
    }
  }
  const double *ea = clphmm_dataset_expected(a);
  const double *eb = clphmm_dataset_expected(b);
  if (!ea || !eb)
    return ea == eb;
  for (size_t i = 0; i < clphmm_dataset_n_pairs(a); i++)
    if (test_abs_diff(ea[i], eb[i]) != 0.0)
      return 0;
  return 1;
}

/* Sum of reads x haplotypes over the batches. */
static size_t sum_pairs(const clphmm_dataset *ds) {
  const clphmm_batch *b = clphmm_dataset_batches(ds);
  size_t n = 0;
  for (size_t i = 0; i < clphmm_dataset_n_batches(ds); i++)
    n += b[i].n_reads * b[i].n_haplotypes;
  return n;
}

/* ---- Fixtures ------------------------------------------------------------ */

static void test_batch_fixtures(void) {
  static const struct {
    const char *name;
    size_t batches, pairs;
    size_t line1;   /* line of the second batch's header */
    uint64_t cells; /* from tests/data/README.md */
  } cases[] = {{"tiny.in", 3, 332, 57, 492820},
               {"10s.in", 7, 3550, 57, 62380634}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    clphmm_dataset *ds = load_fixture(cases[c].name, 0);
    if (!ds)
      continue;
    size_t nb = clphmm_dataset_n_batches(ds);
    CHECK(nb == cases[c].batches, "%s: %zu batches", cases[c].name, nb);
    CHECK(clphmm_dataset_n_pairs(ds) == cases[c].pairs, "%s: %zu pairs",
          cases[c].name, clphmm_dataset_n_pairs(ds));
    CHECK(sum_pairs(ds) == cases[c].pairs, "%s: batches sum to %zu",
          cases[c].name, sum_pairs(ds));
    CHECK(clphmm_dataset_expected(ds) == NULL, "%s: expected not NULL",
          cases[c].name);
    CHECK(clphmm_dataset_batch_line(ds, 0) == 1, "%s: first batch line",
          cases[c].name);
    CHECK(clphmm_dataset_batch_line(ds, 1) == cases[c].line1,
          "%s: second batch line %zu", cases[c].name,
          clphmm_dataset_batch_line(ds, 1));
    CHECK(clphmm_dataset_batch_line(ds, nb) == 0, "%s: out of range line",
          cases[c].name);
    uint64_t cells = 0;
    const clphmm_batch *b = clphmm_dataset_batches(ds);
    for (size_t i = 0; i < nb; i++) {
      uint64_t rl = 0, hl = 0;
      for (size_t r = 0; r < b[i].n_reads; r++)
        rl += b[i].reads[r].length;
      for (size_t h = 0; h < b[i].n_haplotypes; h++)
        hl += b[i].haplotypes[h].length;
      cells += rl * hl;
    }
    CHECK(cells == cases[c].cells, "%s: %llu cells", cases[c].name,
          (unsigned long long)cells);
    clphmm_dataset_destroy(ds);
  }

  /* tiny.in line 1 is "53 2"; line 2 is the first read. */
  clphmm_dataset *ds = load_fixture("tiny.in", 0);
  if (!ds)
    return;
  const clphmm_batch *b = clphmm_dataset_batches(ds);
  CHECK(b[0].n_reads == 53 && b[0].n_haplotypes == 2, "tiny batch 0: %zux%zu",
        b[0].n_reads, b[0].n_haplotypes);
  const clphmm_read *r = &b[0].reads[0];
  CHECK(r->length == 41, "tiny read 0 length %zu", r->length);
  CHECK(memcmp(r->bases, "CCCTTGCATTTCCATATGGATTTTATAATCAGCCATGTCAA", 41) == 0,
        "tiny read 0 bases");
  /* ">=:>>>??" -> 29 28 25 29 29 29 30 30; "IIIIIIIIIIDHH" -> 40 x10, 35,
   * 39, 39; del "HHII" -> 39 39 40 40; gcp '+' -> 10. */
  static const uint8_t bq[8] = {29, 28, 25, 29, 29, 29, 30, 30};
  static const uint8_t iq[13] = {40, 40, 40, 40, 40, 40, 40,
                                 40, 40, 40, 35, 39, 39};
  static const uint8_t dq[4] = {39, 39, 40, 40};
  CHECK(memcmp(r->base_quals, bq, sizeof bq) == 0, "tiny base quals");
  CHECK(memcmp(r->ins_quals, iq, sizeof iq) == 0, "tiny ins quals");
  CHECK(memcmp(r->del_quals, dq, sizeof dq) == 0, "tiny del quals");
  CHECK(r->gcp_quals[0] == 10 && r->gcp_quals[40] == 10, "tiny gcp quals");
  CHECK(r->ins_quals[40] == 'K' - 33, "tiny last ins qual %u",
        r->ins_quals[40]);
  CHECK(b[0].haplotypes[0].length == 41, "tiny hap 0 length %zu",
        b[0].haplotypes[0].length);
  clphmm_dataset_destroy(ds);
}

static void test_pair_fixture(const char *name, size_t want_pairs) {
  char **lines;
  size_t n_lines = read_pair_lines(name, &lines);
  /* Batches counted independently: a new one whenever the read part of a
   * line differs from the previous line's. */
  size_t want_batches = 0;
  for (size_t i = 0; i < n_lines; i++)
    if (i == 0 || !same_read_part(lines[i], lines[i - 1]))
      want_batches++;
  CHECK(n_lines == want_pairs, "%s: test scan found %zu lines", name, n_lines);

  clphmm_dataset *ds = load_fixture(name, 0);
  if (!ds) {
    free_lines(lines, n_lines);
    return;
  }
  CHECK(clphmm_dataset_n_pairs(ds) == want_pairs, "%s: %zu pairs", name,
        clphmm_dataset_n_pairs(ds));
  CHECK(sum_pairs(ds) == want_pairs, "%s: batches sum to %zu", name,
        sum_pairs(ds));
  CHECK(clphmm_dataset_n_batches(ds) == want_batches,
        "%s: %zu batches, want %zu", name, clphmm_dataset_n_batches(ds),
        want_batches);
  const clphmm_batch *b = clphmm_dataset_batches(ds);
  for (size_t i = 0; i < clphmm_dataset_n_batches(ds); i++)
    CHECK(b[i].n_reads == 1, "%s: batch %zu has %zu reads", name, i,
          b[i].n_reads);
  CHECK(clphmm_dataset_batch_line(ds, 0) == 2, "%s: first batch on line %zu",
        name, clphmm_dataset_batch_line(ds, 0));

  const double *e = clphmm_dataset_expected(ds);
  CHECK(e != NULL, "%s: no expected values", name);
  size_t spots[] = {0, 1, want_pairs / 2, want_pairs - 1};
  for (size_t s = 0; e && s < sizeof spots / sizeof spots[0]; s++) {
    size_t i = spots[s];
    double want = strtod(strrchr(lines[i], ' ') + 1, NULL);
    CHECK(e[i] == want, "%s: expected[%zu] = %g, file says %g", name, i, e[i],
          want);
  }
  /* The haplotype of the last pair is the first token of the last line. */
  const clphmm_batch *last = &b[clphmm_dataset_n_batches(ds) - 1];
  const clphmm_haplotype *h = &last->haplotypes[last->n_haplotypes - 1];
  const char *line = lines[n_lines - 1];
  CHECK(h->length == strcspn(line, " ") &&
            memcmp(h->bases, line, h->length) == 0,
        "%s: last haplotype", name);
  clphmm_dataset_destroy(ds);
  free_lines(lines, n_lines);
}

/* ---- Decoding ------------------------------------------------------------ */

static void test_quality_floor(void) {
  /* '!' = 0, '#' = 2, '&' = 5, '+' = 10; only base qualities are raised. */
  const char *text = "1 1\nacgN !#&+ !#&+ !#&+ !#&+\nACGT\n";
  clphmm_dataset *ds = load_mem(text, 0);
  clphmm_dataset *raw = load_mem(text, CLPHMM_READ_RAW_BASE_QUALS);
  if (!ds || !raw) {
    clphmm_dataset_destroy(ds);
    clphmm_dataset_destroy(raw);
    return;
  }
  const clphmm_read *r = &clphmm_dataset_batches(ds)[0].reads[0];
  const clphmm_read *rr = &clphmm_dataset_batches(raw)[0].reads[0];
  static const uint8_t floored[4] = {6, 6, 6, 10}, as_is[4] = {0, 2, 5, 10};
  CHECK(memcmp(r->base_quals, floored, 4) == 0, "floor applied: %u %u %u %u",
        r->base_quals[0], r->base_quals[1], r->base_quals[2], r->base_quals[3]);
  CHECK(memcmp(rr->base_quals, as_is, 4) == 0, "raw flag: %u %u %u %u",
        rr->base_quals[0], rr->base_quals[1], rr->base_quals[2],
        rr->base_quals[3]);
  CHECK(memcmp(r->ins_quals, as_is, 4) == 0 &&
            memcmp(r->del_quals, as_is, 4) == 0 &&
            memcmp(r->gcp_quals, as_is, 4) == 0,
        "insertion/deletion/gcp are never clamped");
  CHECK(memcmp(r->bases, "acgN", 4) == 0, "bases kept as written");
  clphmm_dataset_destroy(ds);
  clphmm_dataset_destroy(raw);

  /* The top of the range: byte 0xA0 is phred 127, the maximum. */
  ds = load_mem("1 1\nA \240 \240 \240 \240\nA\n", 0);
  if (ds) {
    const clphmm_read *top = &clphmm_dataset_batches(ds)[0].reads[0];
    CHECK(top->base_quals[0] == 127 && top->gcp_quals[0] == 127,
          "phred 127 accepted: %u", top->base_quals[0]);
    clphmm_dataset_destroy(ds);
  }
}

static void test_pair_grouping(void) {
  clphmm_dataset *ds = load_mem(
      "AAAA ACGT IIII IIII IIII ++++ -1\n"
      "CCCC ACGT IIII IIII IIII ++++ -2\n"
      "GGGG ACGT IIII IIII IIII +++, -3\n"   /* gcp differs: new batch */
      "TTTT ACGT IIII IIII IIII ++++ -4.5\n" /* same read, not adjacent */
      "ACGTACGT ACGT IIII IIII IIII ++++ -5e-1\n",
      0);
  if (!ds)
    return;
  const clphmm_batch *b = clphmm_dataset_batches(ds);
  CHECK(clphmm_dataset_n_batches(ds) == 3, "grouping: %zu batches",
        clphmm_dataset_n_batches(ds));
  CHECK(clphmm_dataset_n_pairs(ds) == 5, "grouping: %zu pairs",
        clphmm_dataset_n_pairs(ds));
  if (clphmm_dataset_n_batches(ds) == 3) {
    CHECK(b[0].n_haplotypes == 2 && b[1].n_haplotypes == 1 &&
              b[2].n_haplotypes == 2,
          "grouping: batch sizes %zu %zu %zu", b[0].n_haplotypes,
          b[1].n_haplotypes, b[2].n_haplotypes);
    CHECK(clphmm_dataset_batch_line(ds, 0) == 1 &&
              clphmm_dataset_batch_line(ds, 1) == 3 &&
              clphmm_dataset_batch_line(ds, 2) == 4,
          "grouping: batch lines");
    CHECK(b[1].reads[0].gcp_quals[3] == ',' - 33, "grouping: gcp of batch 1");
    CHECK(memcmp(b[2].haplotypes[1].bases, "ACGTACGT", 8) == 0,
          "grouping: last haplotype");
  }
  const double *e = clphmm_dataset_expected(ds);
  static const double want[5] = {-1, -2, -3, -4.5, -0.5};
  for (size_t i = 0; e && i < 5; i++)
    CHECK(e[i] == want[i], "grouping: expected[%zu] = %g", i, e[i]);
  clphmm_dataset_destroy(ds);

  ds = load_mem(PAIRS_PLAIN, 0);
  if (ds) {
    e = clphmm_dataset_expected(ds);
    CHECK(e && e[0] == -1.5 && e[1] == -2.5 && isinf(e[2]) && e[2] < 0,
          "-inf expected value");
    clphmm_dataset_destroy(ds);
  }

  /* A batch with no reads or no haplotypes is legal and yields no pairs. */
  ds = load_mem("0 2\nACGT\nACGT\n2 0\nACGT IIII IIII IIII ++++\n"
                "ACGT IIII IIII IIII ++++\n1 1\nA I I I +\nAC\n",
                0);
  if (ds) {
    b = clphmm_dataset_batches(ds);
    CHECK(clphmm_dataset_n_batches(ds) == 3 && clphmm_dataset_n_pairs(ds) == 1,
          "empty batches: %zu batches %zu pairs", clphmm_dataset_n_batches(ds),
          clphmm_dataset_n_pairs(ds));
    CHECK(b[0].reads == NULL && b[0].n_reads == 0 && b[0].n_haplotypes == 2 &&
              b[1].haplotypes == NULL && b[1].n_reads == 2,
          "empty batches: shapes");
    CHECK(clphmm_dataset_batch_line(ds, 2) == 7, "empty batches: line %zu",
          clphmm_dataset_batch_line(ds, 2));
    clphmm_dataset_destroy(ds);
  }
}

/* ---- Whitespace tolerance ------------------------------------------------ */

static void check_variant(const char *plain, const char *variant,
                          const char *what) {
  clphmm_dataset *a = load_mem(plain, 0);
  clphmm_dataset *b = load_mem(variant, 0);
  CHECK(a && b && datasets_equal(a, b), "%s differs from the plain input",
        what);
  clphmm_dataset_destroy(a);
  clphmm_dataset_destroy(b);
}

static void test_whitespace(void) {
  check_variant(BATCH_PLAIN,
                "2\t2\nACGT\tIIII\tIIII\tIIII\t++++\n"
                "acgN\t5'+I\tHHHH DDDD\t++++\nACGTTT\nCCGTA\n",
                "batch: tabs");
  check_variant(BATCH_PLAIN,
                "  2   2  \n ACGT  IIII   IIII IIII \t ++++   \n"
                "acgN 5'+I  HHHH  DDDD ++++\n\tACGTTT\t\nCCGTA \n",
                "batch: runs of spaces, leading/trailing blanks");
  check_variant(BATCH_PLAIN,
                "2 2\r\nACGT IIII IIII IIII ++++\r\n"
                "acgN 5'+I HHHH DDDD ++++\r\nACGTTT\r\nCCGTA\r\n",
                "batch: CRLF");
  check_variant(BATCH_PLAIN,
                "2 2\nACGT IIII IIII IIII ++++\n"
                "acgN 5'+I HHHH DDDD ++++\nACGTTT\nCCGTA",
                "batch: no final newline");
  check_variant(BATCH_PLAIN,
                "# comment\n\n2 2\n  \nACGT IIII IIII IIII ++++\n"
                "  # indented comment\nacgN 5'+I HHHH DDDD ++++\n\r\n"
                "ACGTTT\nCCGTA\n\n\n",
                "batch: comments and blank lines");
  check_variant(PAIRS_PLAIN,
                "ACGTTT\tACGT IIII\tIIII   IIII ++++ \t-1.5e+00\r\n"
                "\n  CCGTA  ACGT IIII IIII IIII ++++ -2.5e+00  \r\n"
                "# a comment between pairs\n"
                "ACGTTT acgN 5'+I HHHH DDDD ++++ -inf",
                "pairs: tabs, spaces, CRLF, comments, no final newline");

  check_variant(PAIRS_PLAIN,
                "ACGTTT\tACGT\tIIII\tIIII\tIIII\t++++\t-1.5e+00\n"
                "CCGTA\t\tACGT\tIIII\tIIII\tIIII\t++++\t-2.5e+00\n"
                "ACGTTT\tacgN\t5'+I\tHHHH\tDDDD\t++++\t-inf\n",
                "pairs: tabs alone");

  /* Blank and comment lines shift the recorded batch lines. */
  clphmm_dataset *ds = load_mem("# c\n\n2 2\nACGT IIII IIII IIII ++++\n"
                                "acgN 5'+I HHHH DDDD ++++\nACGTTT\nCCGTA\n"
                                "\n1 1\nA I I I +\nA\n",
                                0);
  if (ds) {
    CHECK(clphmm_dataset_batch_line(ds, 0) == 3 &&
              clphmm_dataset_batch_line(ds, 1) == 9,
          "batch lines with comments: %zu %zu",
          clphmm_dataset_batch_line(ds, 0), clphmm_dataset_batch_line(ds, 1));
    clphmm_dataset_destroy(ds);
  }
}

/* ---- Bad inputs ---------------------------------------------------------- */

typedef struct bad_case {
  const char *data;
  size_t size;
  clphmm_status status;
  size_t line;
  const char *needle; /* must appear in the message */
} bad_case;

static const bad_case bad_cases[] = {
    /* invalid bases */
    {MEM("1 1\nACXT IIII IIII IIII ++++\nACGT\n"), CLPHMM_ERROR_INVALID_BASE, 2,
     "read base 3 is 'X'"},
    {MEM("1 1\nACGT IIII IIII IIII ++++\n\nACGU\n"), CLPHMM_ERROR_INVALID_BASE,
     4, "haplotype base 4 is 'U'"},
    {MEM("#c\nACGT ACGT IIII IIII IIII ++++ -1\nAC-T ACGT IIII IIII IIII ++++ "
         "-1\n"),
     CLPHMM_ERROR_INVALID_BASE, 3, "haplotype base 3"},
    {MEM("1 1\nAC\300T IIII IIII IIII ++++\nACGT\n"), CLPHMM_ERROR_INVALID_BASE,
     2, "0xc0"},
    /* qualities above 127 */
    {MEM("1 1\nACGT IIII II\300I IIII ++++\nACGT\n"),
     CLPHMM_ERROR_INVALID_QUALITY, 2, "insertion quality character 3"},
    {MEM("1 1\nACGT \241III IIII IIII ++++\nACGT\n"),
     CLPHMM_ERROR_INVALID_QUALITY, 2, "phred 128"},
    {MEM("ACGT ACGT IIII IIII IIII +++\377 -1\n"), CLPHMM_ERROR_INVALID_QUALITY,
     1, "gap-continuation penalty"},
    /* quality lengths */
    {MEM("1 1\nACGT III IIII IIII ++++\nACGT\n"), CLPHMM_ERROR_PARSE, 2,
     "base quality string has 3 characters but the read has 4 bases"},
    {MEM("ACGT ACGT IIII IIII IIIII ++++ -1\n"), CLPHMM_ERROR_PARSE, 1,
     "deletion quality string has 5"},
    /* headers */
    /* The reader streams, so a header that promises too many reads shows
     * as a haplotype line where a read was expected... */
    {MEM("50 2\nACGT IIII IIII IIII ++++\nACGT\n"), CLPHMM_ERROR_PARSE, 3,
     "for read 2 of 50 (header on line 1), found 1 (does the header promise "
     "too many reads?)"},
    /* ... or as the end of the file. */
    {MEM("3 2\nA I I I +\nA I I I +\nA I I I +\nACGT\n"), CLPHMM_ERROR_PARSE, 1,
     "header promises 3 reads and 2 haplotypes but the file ends at line 5"},
    {MEM("2 1\nACGT IIII IIII IIII ++++\nACGT IIII II"), CLPHMM_ERROR_PARSE, 3,
     "expected 5 tokens (READ BASEQ INSQ DELQ GCP) for read 2 of 2"},
    {MEM("ACGT ACGT IIII IIII IIII ++++ -1\nACGT ACGT IIII II"),
     CLPHMM_ERROR_PARSE, 2, "expected 7 tokens"},
    {MEM("ACGT ACGT IIII IIII IIII ++++ -1\nACGT ACGT IIII IIII IIII ++++ -"),
     CLPHMM_ERROR_PARSE, 2, "expected value '-' is not a number"},
    {MEM("2 1\nACGT IIII IIII IIII ++++\n\n\n\n"), CLPHMM_ERROR_PARSE, 1,
     "header promises 2 reads"},
    {MEM("1 1\nA I I I +\nA\n2 2\nA I I I +\n"), CLPHMM_ERROR_PARSE, 4,
     "but the file ends at line 5"},
    {MEM("two 2\nACGT IIII IIII IIII ++++\nACGT\n"), CLPHMM_ERROR_PARSE, 1,
     "read count 'two' is not"},
    {MEM("1 1\nA I I I +\nA\n1 x\nA I I I +\nA\n"), CLPHMM_ERROR_PARSE, 4,
     "haplotype count 'x'"},
    {MEM("1 1x\nA I I I +\nA\n"), CLPHMM_ERROR_PARSE, 1, "'1x'"},
    {MEM("-1 2\nACGT\nACGT\n"), CLPHMM_ERROR_PARSE, 1,
     "'-1' is not a non-negative"},
    {MEM("+1 1\nA I I I +\nA\n"), CLPHMM_ERROR_PARSE, 1, "'+1'"},
    {MEM("99999999999999999999 2\nA I I I +\nA\n"), CLPHMM_ERROR_PARSE, 1,
     "read count 99999999999999999999 is too large (at most "},
    {MEM("4000000000 4000000000\nA I I I +\nA\n"), CLPHMM_ERROR_PARSE, 3,
     "read 2 of 4000000000"},
    {MEM("4000000000 4000000000\nA I I I +\n"), CLPHMM_ERROR_PARSE, 1,
     "header promises 4000000000 reads"},
    {MEM("4294967296 4294967296\nA I I I +\n"), CLPHMM_ERROR_TOO_LARGE, 1,
     "4294967296 reads x 4294967296 haplotypes overflows the pair count"},
    {MEM("1 18446744073709551615\nA I I I +\nA\n"), CLPHMM_ERROR_PARSE, 1,
     "header promises"},
    /* binary data */
    {MEM("1 1\nAC\0T IIII IIII IIII ++++\nACGT\n"), CLPHMM_ERROR_PARSE, 2,
     "binary data (byte 0x00 at column 3)"},
    {MEM("\x1f\x8b\x08\0\0\0\0\0"), CLPHMM_ERROR_PARSE, 1, "binary data"},
    {MEM("ACGT ACGT IIII IIII IIII ++++ -1\n\n\nACGT\x01"), CLPHMM_ERROR_PARSE,
     4, "binary data"},
    /* empty */
    {MEM(""), CLPHMM_ERROR_PARSE, 1, "empty file, no pairs"},
    {MEM("# only a comment\n\n  \t\n"), CLPHMM_ERROR_PARSE, 3,
     "empty file, no pairs"},
    /* token counts */
    {MEM("1 2 3\n"), CLPHMM_ERROR_PARSE, 1, "found 3 tokens"},
    {MEM("ACGT ACGT IIII IIII IIII ++++ -1\nACGT ACGT IIII IIII ++++ -1\n"),
     CLPHMM_ERROR_PARSE, 2, "expected 7 tokens"},
    {MEM("ACGT ACGT IIII IIII IIII ++++ -1\nA A I I I + -1 extra x y z\n"),
     CLPHMM_ERROR_PARSE, 2, "found 11"},
    {MEM("1 1\nACGT IIII IIII IIII\nACGT\n"), CLPHMM_ERROR_PARSE, 2,
     "expected 5 tokens (READ BASEQ INSQ DELQ GCP) for read 1 of 1"},
    {MEM("1 1\nA I I I +\nACGT ACGT\n"), CLPHMM_ERROR_PARSE, 3,
     "expected 1 token (haplotype 1 of 1"},
    {MEM("1 1\nA I I I +\nA\nA I I I +\n"), CLPHMM_ERROR_PARSE, 4,
     "expected a batch header"},
    /* expected values */
    {MEM("ACGT ACGT IIII IIII IIII ++++ -1.5x\n"), CLPHMM_ERROR_PARSE, 1,
     "expected value '-1.5x' is not a number"},
    {MEM("ACGT ACGT IIII IIII IIII ++++ 1.5e\n"), CLPHMM_ERROR_PARSE, 1,
     "not a number"},
};

static void check_message(const char *name, size_t line, const char *needle,
                          const char *what) {
  char prefix[4200];
  snprintf(prefix, sizeof prefix, "%s:%zu: ", name, line);
  const char *msg = clphmm_last_error(NULL);
  CHECK(strncmp(msg, prefix, strlen(prefix)) == 0,
        "%s: message '%s' does not start with '%s'", what, msg, prefix);
  CHECK(strstr(msg, needle) != NULL, "%s: message '%s' lacks '%s'", what, msg,
        needle);
}

static void test_bad_memory(void) {
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const bad_case *c = &bad_cases[i];
    char name[32], what[48];
    snprintf(name, sizeof name, "case%zu", i);
    snprintf(what, sizeof what, "bad case %zu", i);
    int dummy;
    clphmm_dataset *ds = (clphmm_dataset *)(void *)&dummy;
    clphmm_status st =
        clphmm_dataset_read_memory(c->data, c->size, name, 0, &ds);
    CHECK(st == c->status, "%s: status %d (%s), want %d; message: %s", what,
          (int)st, clphmm_status_string(st), (int)c->status,
          clphmm_last_error(NULL));
    CHECK(ds == NULL, "%s: dataset not reset to NULL", what);
    if (st != CLPHMM_SUCCESS)
      check_message(name, c->line, c->needle, what);
    else
      clphmm_dataset_destroy(ds);
  }
}

/* A line of many tokens separated by tabs alone: counted right, and split
 * in one pass (the search for each token's end once went to the end of a
 * line without spaces: a line of 400,000 such tokens took 20 s). */
static void test_many_tab_tokens(void) {
  const size_t n = 300000;
  char *data = malloc(2 * n + 1);
  CHECK(data != NULL, "no memory for a line of %zu tokens", n);
  if (!data)
    return;
  for (size_t i = 0; i < n; i++) {
    data[2 * i] = 'A';
    data[2 * i + 1] = '\t';
  }
  data[2 * n] = '\n';
  clphmm_dataset *ds = NULL;
  const clphmm_status st =
      clphmm_dataset_read_memory(data, 2 * n + 1, "tabs", 0, &ds);
  CHECK(st == CLPHMM_ERROR_PARSE, "a line of %zu tab-separated tokens: %s", n,
        clphmm_status_string(st));
  if (st != CLPHMM_SUCCESS)
    check_message("tabs", 1, "found 300000 tokens", "tab-separated tokens");
  clphmm_dataset_destroy(ds);
  free(data);
}

static void test_bad_files(void) {
  static const struct {
    const char *file;
    clphmm_status status;
    size_t line;
    const char *needle;
  } cases[] = {
      {"bad/bad_base.in", CLPHMM_ERROR_INVALID_BASE, 3, "read base 3 is 'X'"},
      {"bad/bad_hap_base.txt", CLPHMM_ERROR_INVALID_BASE, 2,
       "haplotype base 5 is 'Z'"},
      {"bad/bad_qual.in", CLPHMM_ERROR_INVALID_QUALITY, 2, "phred 159"},
      {"bad/bad_qual_len.txt", CLPHMM_ERROR_PARSE, 3,
       "deletion quality string has 3 characters but the read has 4"},
      {"bad/truncated.in", CLPHMM_ERROR_PARSE, 4,
       "for read 3 of 50 (header on line 1), found 1"},
      {"bad/header_negative.in", CLPHMM_ERROR_PARSE, 1, "'-3'"},
      {"bad/header_text.in", CLPHMM_ERROR_PARSE, 5, "'three'"},
      {"bad/header_huge.in", CLPHMM_ERROR_PARSE, 1, "too large"},
      {"bad/binary.in", CLPHMM_ERROR_PARSE, 2, "binary data"},
      {"bad/empty.in", CLPHMM_ERROR_PARSE, 1, "empty file, no pairs"},
      {"bad/token_count.txt", CLPHMM_ERROR_PARSE, 3,
       "expected 7 tokens (HAP READ BASEQ INSQ DELQ GCP EXPECTED), found 6"},
      {"bad/bad_expected.txt", CLPHMM_ERROR_PARSE, 2,
       "'minus-one' is not a number"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s", test_data_path(cases[i].file));
    clphmm_dataset *ds = NULL;
    clphmm_status st = clphmm_dataset_read_file(path, 0, &ds);
    CHECK(st == cases[i].status, "%s: status %d (%s); message: %s",
          cases[i].file, (int)st, clphmm_status_string(st),
          clphmm_last_error(NULL));
    CHECK(ds == NULL, "%s: dataset not NULL", cases[i].file);
    check_message(path, cases[i].line, cases[i].needle, cases[i].file);
    clphmm_dataset_destroy(ds);
  }
}

static void test_io_errors(void) {
  clphmm_dataset *ds = NULL;
  const char *missing = test_data_path("no-such-file.in");
  char path[4096];
  snprintf(path, sizeof path, "%s", missing);
  CHECK_STATUS(clphmm_dataset_read_file(path, 0, &ds), CLPHMM_ERROR_IO, NULL);
  CHECK(ds == NULL, "missing file: dataset not NULL");
  const char *msg = clphmm_last_error(NULL);
  CHECK(strncmp(msg, path, strlen(path)) == 0 &&
            strstr(msg, ": cannot open: ") != NULL,
        "missing file message: %s", msg);

  /* A directory opens but cannot be read. */
  snprintf(path, sizeof path, "%s", test_data_path("bad"));
  CHECK_STATUS(clphmm_dataset_read_file(path, 0, &ds), CLPHMM_ERROR_IO, NULL);
  CHECK(ds == NULL, "directory: dataset not NULL");
}

static void test_arguments(void) {
  clphmm_dataset *ds = NULL;
  CHECK_STATUS(clphmm_dataset_read_file(NULL, 0, &ds),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(clphmm_dataset_read_file(test_data_path("tiny.in"), 0, NULL),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(clphmm_dataset_read_memory(NULL, 5, "x", 0, &ds),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(
      clphmm_dataset_read_memory("1 1\nA I I I +\nA\n", 16, "x", 0, NULL),
      CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK_STATUS(
      clphmm_dataset_read_memory("1 1\nA I I I +\nA\n", 16, "x", 0x80u, &ds),
      CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK(ds == NULL, "bad arguments: dataset not NULL");
  /* NULL with size 0 is an empty input, and a NULL name gets a default. */
  CHECK_STATUS(clphmm_dataset_read_memory(NULL, 0, NULL, 0, &ds),
               CLPHMM_ERROR_PARSE, NULL);
  CHECK(strstr(clphmm_last_error(NULL), ":1: empty file") != NULL,
        "NULL name message: %s", clphmm_last_error(NULL));

  /* Accessors tolerate NULL. */
  CHECK(clphmm_dataset_batches(NULL) == NULL &&
            clphmm_dataset_n_batches(NULL) == 0 &&
            clphmm_dataset_n_pairs(NULL) == 0 &&
            clphmm_dataset_expected(NULL) == NULL &&
            clphmm_dataset_batch_line(NULL, 0) == 0,
        "accessors on NULL");
  clphmm_dataset_destroy(NULL);
}

int main(void) {
  test_batch_fixtures();
  test_pair_fixture("pairhmm-testdata.txt", 104);
  test_pair_fixture("expected.Java.hmmresults.txt", 284);
  test_quality_floor();
  test_pair_grouping();
  test_whitespace();
  test_bad_memory();
  test_many_tab_tokens();
  test_bad_files();
  test_io_errors();
  test_arguments();
  return test_finish();
}
