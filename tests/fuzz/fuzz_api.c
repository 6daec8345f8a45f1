/* Fuzz target: the API's validation and the CPU reference on batches decoded
 * from the fuzz bytes (at most 3 batches of 3 reads x 3 haplotypes of 24
 * bases; any byte may land in a base or a quality; NULL pointers and
 * non-zero lengths; out-of-range precision values).
 * Oracle: the target decides independently whether the input is valid and,
 * if not, which class of defect the library must report first (the sizes
 * of every batch first, as clphmm_compute checks them: the first batch with
 * a NULL reads or haplotypes array; then batches in order, in a batch the
 * reads (bases, then the four quality arrays), then the haplotypes).
 * Invariants: the status is that class; on failure out[] is untouched and the
 * message names the batch; on success every result is written, a number (see
 * fuzz_result_ok) for non-empty sequences, -inf for empty ones, and nothing
 * past the end. */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXB 3
#define MAXR 3
#define MAXH 3
#define MAXL 24

typedef struct input {
  const uint8_t *p;
  size_t n;
} input;

static unsigned take(input *in) {
  if (in->n == 0)
    return 0;
  in->n--;
  return *in->p++;
}

typedef struct decoded {
  clphmm_batch batches[MAXB];
  clphmm_read reads[MAXB][MAXR];
  clphmm_haplotype haps[MAXB][MAXH];
  char bases[MAXB][MAXR + MAXH][MAXL];
  uint8_t quals[MAXB][MAXR][4][MAXL];
  size_t n_batches;
  clphmm_status want; /* first defect's class, or success */
  size_t want_batch;
  size_t null_batch; /* the first batch with a NULL array, or SIZE_MAX */
} decoded;

/* A byte that is mostly a valid base, sometimes anything. */
static char base_byte(input *in) {
  static const char ok[] = "ACGTNacgtn";
  unsigned v = take(in);
  return v < 240 ? ok[v % 10] : (char)take(in);
}

/* Mostly valid phred values, sometimes 128..255. */
static uint8_t qual_byte(input *in) {
  unsigned v = take(in);
  return (uint8_t)(v < 248 ? v % 128 : 128 + take(in) % 128);
}

static int bases_valid(const char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strchr("ACGTNacgtn", b[i]) || b[i] == '\0')
      return 0;
  return 1;
}

static int quals_valid(const uint8_t *q, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (q[i] > 127)
      return 0;
  return 1;
}

static void note(decoded *d, clphmm_status st, size_t b) {
  if (d->want == CLPHMM_SUCCESS) {
    d->want = st;
    d->want_batch = b;
  }
}

static void decode_read(input *in, decoded *d, size_t b, size_t r) {
  clphmm_read *rd = &d->reads[b][r];
  size_t len = take(in) % (MAXL + 1);
  unsigned nulls = take(in); /* bit k: array k is NULL (rarely) */
  nulls = nulls >= 224 ? nulls & 31 : 0;
  for (size_t i = 0; i < len; i++)
    d->bases[b][r][i] = base_byte(in);
  for (int k = 0; k < 4; k++)
    for (size_t i = 0; i < len; i++)
      d->quals[b][r][k][i] = qual_byte(in);
  *rd = (clphmm_read){d->bases[b][r],    d->quals[b][r][0], d->quals[b][r][1],
                      d->quals[b][r][2], d->quals[b][r][3], len};
  if (nulls & 1)
    rd->bases = NULL;
  const uint8_t **q[4] = {&rd->base_quals, &rd->ins_quals, &rd->del_quals,
                          &rd->gcp_quals};
  for (int k = 0; k < 4; k++)
    if (nulls & (2u << k))
      *q[k] = NULL;
  /* The oracle, in the library's order for one read. */
  if (len == 0)
    return;
  if (!rd->bases)
    note(d, CLPHMM_ERROR_INVALID_ARGUMENT, b);
  else if (!bases_valid(rd->bases, len))
    note(d, CLPHMM_ERROR_INVALID_BASE, b);
  for (int k = 0; k < 4; k++) {
    if (!*q[k])
      note(d, CLPHMM_ERROR_INVALID_ARGUMENT, b);
    else if (!quals_valid(*q[k], len))
      note(d, CLPHMM_ERROR_INVALID_QUALITY, b);
  }
}

static void decode_hap(input *in, decoded *d, size_t b, size_t h) {
  size_t len = take(in) % (MAXL + 1);
  int null = take(in) >= 250;
  char *bases = d->bases[b][MAXR + h];
  for (size_t i = 0; i < len; i++)
    bases[i] = base_byte(in);
  d->haps[b][h] = (clphmm_haplotype){null ? NULL : bases, len};
  if (len == 0)
    return;
  if (null)
    note(d, CLPHMM_ERROR_INVALID_ARGUMENT, b);
  else if (!bases_valid(bases, len))
    note(d, CLPHMM_ERROR_INVALID_BASE, b);
}

static void decode(input *in, decoded *d) {
  memset(d, 0, sizeof *d);
  d->null_batch = SIZE_MAX;
  d->n_batches = take(in) % (MAXB + 1);
  for (size_t b = 0; b < d->n_batches; b++) {
    size_t nr = take(in) % (MAXR + 1), nh = take(in) % (MAXH + 1);
    unsigned nulls = take(in);
    for (size_t r = 0; r < nr; r++)
      decode_read(in, d, b, r);
    clphmm_batch *bt = &d->batches[b];
    *bt = (clphmm_batch){d->reads[b], nr, d->haps[b], nh};
    if (nulls >= 240 && nr > 0) {
      bt->reads = NULL;
      if (d->null_batch == SIZE_MAX)
        d->null_batch = b;
      continue; /* the haplotypes are never looked at */
    }
    for (size_t h = 0; h < nh; h++)
      decode_hap(in, d, b, h);
    if (nulls >= 232 && nulls < 240 && nh > 0) {
      bt->haplotypes = NULL;
      if (d->null_batch == SIZE_MAX)
        d->null_batch = b;
    }
  }
  /* NULL arrays, of any batch, come before any read's defect. */
  if (d->null_batch != SIZE_MAX) {
    d->want = CLPHMM_ERROR_INVALID_ARGUMENT;
    d->want_batch = d->null_batch;
  }
}

/* Show a pair whose result breaks an invariant (for the crash report). */
static void print_pair(const clphmm_read *rd, const clphmm_haplotype *hp,
                       int precision, double v) {
  fprintf(stderr, "precision %d, result %g\nread  %.*s\nhap   %.*s\n",
          precision, v, (int)rd->length, rd->bases, (int)hp->length, hp->bases);
  const uint8_t *q[4] = {rd->base_quals, rd->ins_quals, rd->del_quals,
                         rd->gcp_quals};
  for (int k = 0; k < 4; k++) {
    fprintf(stderr, "qual%d", k);
    for (size_t i = 0; i < rd->length; i++)
      fprintf(stderr, " %u", q[k][i]);
    fputc('\n', stderr);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  unsigned p = take(&in);
  /* Mostly a valid precision; sometimes an out-of-range value. */
  int precision = p < 250 ? (int)(p & 1) : (int)p - 248;
  decoded *d = malloc(sizeof *d);
  FUZZ_ASSERT(d != NULL);
  decode(&in, d);
  if (precision != 0 && precision != 1 && d->want == CLPHMM_SUCCESS) {
    d->want = CLPHMM_ERROR_INVALID_ARGUMENT;
    d->want_batch = SIZE_MAX;
  }
  size_t n = 0;
  FUZZ_ASSERT(clphmm_count_pairs(d->batches, d->n_batches, &n) ==
              CLPHMM_SUCCESS);
  double *out = malloc((n + 1) * sizeof *out);
  FUZZ_ASSERT(out != NULL);
  for (size_t i = 0; i <= n; i++)
    out[i] = NAN;
  clphmm_status st = clphmm_reference(d->batches, d->n_batches,
                                      (clphmm_precision)precision, out);
  const char *msg = clphmm_last_error(NULL);
  if (st != d->want)
    fprintf(stderr, "status %d, oracle %d (batch %zu): %s\n", (int)st,
            (int)d->want, d->want_batch, msg);
  FUZZ_ASSERT(st == d->want);
  if (st != CLPHMM_SUCCESS) {
    for (size_t i = 0; i <= n; i++)
      FUZZ_ASSERT(isnan(out[i]));
    FUZZ_ASSERT(msg[0] != '\0');
    if (d->want_batch != SIZE_MAX) {
      char where[32];
      snprintf(where, sizeof where, "batch %zu", d->want_batch);
      FUZZ_ASSERT(strstr(msg, where) != NULL);
    }
  } else {
    size_t i = 0;
    for (size_t b = 0; b < d->n_batches; b++) {
      const clphmm_batch *bt = &d->batches[b];
      for (size_t r = 0; r < bt->n_reads; r++)
        for (size_t h = 0; h < bt->n_haplotypes; h++, i++) {
          int empty = bt->reads[r].length == 0 || bt->haplotypes[h].length == 0;
          if (empty ? !(isinf(out[i]) && out[i] < 0)
                    : !fuzz_result_ok(out[i], &bt->reads[r]))
            print_pair(&bt->reads[r], &bt->haplotypes[h], precision, out[i]);
          FUZZ_ASSERT(empty ? isinf(out[i]) && out[i] < 0
                            : fuzz_result_ok(out[i], &bt->reads[r]));
        }
    }
    FUZZ_ASSERT(i == n && isnan(out[n]));
  }
  free(out);
  free(d);
  return 0;
}
