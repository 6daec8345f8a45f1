/* Every CPU reference kernel this build and CPU run (the strip kernels in
 * the baseline, AVX2 and AVX-512 builds) against the row-by-row oracle
 * (CPH_REF_SCALAR), bit for bit: the scaled sums of all three flavors (GKL
 * float, GKL double rescue, Java double) and the log10 results of whole
 * batches in both precision modes, on the fixtures and on random pairs of
 * many shapes (strip edges, reads longer than haplotypes, a few long
 * pairs), qualities 0..127 and N and lowercase bases. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "test_util.h"

static cph_ref_kernel kernels[CPH_REF_KERNEL_LAST + 1];
static int n_kernels;
static const cph_flavor flavors[3] = {CPH_GKL_FLOAT, CPH_GKL_DOUBLE,
                                      CPH_JAVA_DOUBLE};
static const char *const flavor_names[3] = {"GKL float", "GKL double",
                                            "Java double"};

/* Bit-identical, except that any NaN equals any NaN (extreme qualities can
 * overflow to inf * 0; NaN payloads are not part of the contract). */
static int same(double a, double b) {
  return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static size_t pairs_checked, mismatches;

/* One pair, every flavor, every kernel against the oracle. */
static void check_pair(const clphmm_read *r, const clphmm_haplotype *h,
                       const char *what) {
  for (int f = 0; f < 3; f++) {
    double want = 0;
    CHECK_STATUS(cph_reference_sum(r, h, flavors[f], CPH_REF_SCALAR, &want),
                 CLPHMM_SUCCESS, NULL);
    for (int k = 0; k < n_kernels; k++) {
      double got = 0;
      CHECK_STATUS(cph_reference_sum(r, h, flavors[f], kernels[k], &got),
                   CLPHMM_SUCCESS, NULL);
      if (!same(got, want) && mismatches++ < 10)
        CHECK(0, "%s %zu x %zu, %s, %s: %a, oracle %a", what, r->length,
              h->length, flavor_names[f], cph_ref_kernel_name(kernels[k]), got,
              want);
    }
  }
  pairs_checked++;
}

/* Whole batches in both modes (per-read parameters reused across
 * haplotypes, rescue, empty sequences): every kernel and AUTO (what
 * clphmm_reference runs) against the oracle. */
static void check_batches(const clphmm_batch *b, size_t nb, const char *what) {
  size_t n;
  CHECK_STATUS(clphmm_count_pairs(b, nb, &n), CLPHMM_SUCCESS, NULL);
  double *want = malloc((n ? n : 1) * sizeof *want);
  double *got = malloc((n ? n : 1) * sizeof *got);
  if (!want || !got)
    abort();
  for (int p = 0; p < 2; p++) {
    const clphmm_precision prec =
        p ? CLPHMM_PRECISION_DOUBLE : CLPHMM_PRECISION_FLOAT;
    CHECK_STATUS(cph_reference_with(b, nb, prec, CPH_REF_SCALAR, want),
                 CLPHMM_SUCCESS, NULL);
    for (int k = -1; k < n_kernels; k++) {
      const cph_ref_kernel kern = k < 0 ? CPH_REF_AUTO : kernels[k];
      if (k < 0)
        CHECK_STATUS(clphmm_reference(b, nb, prec, got), CLPHMM_SUCCESS, NULL);
      else
        CHECK_STATUS(cph_reference_with(b, nb, prec, kern, got), CLPHMM_SUCCESS,
                     NULL);
      size_t bad = 0;
      for (size_t i = 0; i < n; i++)
        if (!same(got[i], want[i]) && bad++ < 3)
          CHECK(0, "%s pair %zu, %s, %s: %.17g, oracle %.17g", what, i,
                p ? "double" : "float", cph_ref_kernel_name(kern), got[i],
                want[i]);
      CHECK(bad == 0, "%s, %s, %s: %zu of %zu results differ", what,
            p ? "double" : "float", cph_ref_kernel_name(kern), bad, n);
    }
  }
  free(want);
  free(got);
}

/* A fixture's batches in both modes, and every `step`-th pair in all three
 * flavors (step > 1 keeps the big fixture fast under sanitizers). */
static void check_fixture(const char *name, size_t step) {
  clphmm_dataset *ds = NULL;
  CHECK_STATUS(clphmm_dataset_read_file(test_data_path(name), 0, &ds),
               CLPHMM_SUCCESS, NULL);
  if (!ds)
    return;
  const clphmm_batch *b = clphmm_dataset_batches(ds);
  const size_t nb = clphmm_dataset_n_batches(ds);
  check_batches(b, nb, name);
  size_t k = 0;
  for (size_t i = 0; i < nb; i++)
    for (size_t r = 0; r < b[i].n_reads; r++)
      for (size_t h = 0; h < b[i].n_haplotypes; h++)
        if (k++ % step == 0)
          check_pair(&b[i].reads[r], &b[i].haplotypes[h], name);
  clphmm_dataset_destroy(ds);
}

/* ---- random pairs ------------------------------------------------------- */

/* Owns the bytes of one random pair. */
typedef struct rpair {
  clphmm_read r;
  clphmm_haplotype h;
  char *rb, *hb;
  uint8_t *q;
} rpair;

static char rand_base(test_rng *g, int style) {
  static const char upper[] = "ACGT", lower[] = "acgt";
  const unsigned u = test_rng_range(g, 0, 99);
  if (style >= 1 && u < (style == 2 ? 25u : 2u))
    return u & 1 ? 'N' : 'n';
  return (style == 2 && u & 2 ? lower : upper)[test_rng_next(g) & 3];
}

/* Qualities: 0 GATK-like, 1 uniform 0..127, 2 only the extremes. */
static uint8_t rand_qual(test_rng *g, int style, unsigned lo, unsigned hi) {
  static const uint8_t edge[] = {0, 1, 2, 126, 127};
  if (style == 1)
    return (uint8_t)test_rng_range(g, 0, 127);
  if (style == 2)
    return edge[test_rng_range(g, 0, 4)];
  return (uint8_t)test_rng_range(g, lo, hi);
}

/* A haplotype and a read copied from it with substitutions (or unrelated),
 * base style 0 ACGT, 1 a little N, 2 much N and lowercase. */
static void make_pair(rpair *p, test_rng *g, size_t R, size_t H) {
  const int bstyle = (int)test_rng_range(g, 0, 2);
  const int qstyle =
      test_rng_range(g, 0, 3) == 0 ? (int)test_rng_range(g, 1, 2) : 0;
  const int related = test_rng_range(g, 0, 3) != 0;
  p->rb = malloc(R ? R : 1);
  p->hb = malloc(H ? H : 1);
  p->q = malloc(4 * (R ? R : 1));
  if (!p->rb || !p->hb || !p->q)
    abort();
  for (size_t j = 0; j < H; j++)
    p->hb[j] = rand_base(g, bstyle);
  const size_t off = H ? test_rng_range(g, 0, (unsigned)H - 1) : 0;
  for (size_t i = 0; i < R; i++) {
    const int copy = related && H && test_rng_range(g, 0, 99) >= 3;
    p->rb[i] = copy ? p->hb[(off + i) % H] : rand_base(g, bstyle);
    p->q[i] = rand_qual(g, qstyle, 6, 60);
    p->q[R + i] = rand_qual(g, qstyle, 6, 45);
    p->q[2 * R + i] = rand_qual(g, qstyle, 6, 45);
    p->q[3 * R + i] = qstyle ? rand_qual(g, qstyle, 0, 0) : 10;
  }
  p->r = (clphmm_read){p->rb, p->q, p->q + R, p->q + 2 * R, p->q + 3 * R, R};
  p->h = (clphmm_haplotype){p->hb, H};
}

static void free_pair(rpair *p) {
  free(p->rb);
  free(p->hb);
  free(p->q);
}

static void check_random(test_rng *g, size_t R, size_t H) {
  rpair p;
  make_pair(&p, g, R, H);
  check_pair(&p.r, &p.h, "random");
  free_pair(&p);
}

/* Lengths around every strip edge of every kernel (2, 4, 8, 16 lanes, one
 * strip or two in flight) and a few realistic ones. */
static const size_t edges[] = {1,  2,  3,  4,   5,   7,   8,   9,   15, 16,
                               17, 31, 32, 33,  47,  48,  49,  63,  64, 65,
                               95, 96, 97, 150, 151, 255, 256, 257, 600};
#define N_EDGES (sizeof edges / sizeof *edges)

/* Batches of random reads and haplotypes, empty ones included. */
static void check_random_batches(test_rng *g) {
  enum { NB = 3, NR = 5, NH = 4 };
  clphmm_batch b[NB];
  clphmm_read reads[NB][NR];
  clphmm_haplotype haps[NB][NH];
  rpair owned[NB][NR + NH];
  for (int i = 0; i < NB; i++) {
    for (int k = 0; k < NR + NH; k++) {
      const size_t R = k == 1 && i == 0 ? 0 : test_rng_range(g, 1, 300);
      const size_t H = k == 2 && i == 1 ? 0 : test_rng_range(g, 1, 400);
      make_pair(&owned[i][k], g, R, H);
      if (k < NR)
        reads[i][k] = owned[i][k].r;
      else
        haps[i][k - NR] = owned[i][k].h;
    }
    b[i] = (clphmm_batch){reads[i], NR, haps[i], NH};
  }
  check_batches(b, NB, "random batches");
  for (int i = 0; i < NB; i++)
    for (int k = 0; k < NR + NH; k++)
      free_pair(&owned[i][k]);
}

/* CLPHMM_REFERENCE_KERNEL selects the code clphmm_reference runs: every
 * available name gives the oracle's results; anything else is an error
 * that names the variable and writes nothing. */
static void check_env(void) {
  clphmm_dataset *ds = NULL;
  CHECK_STATUS(clphmm_dataset_read_file(test_data_path("tiny.in"), 0, &ds),
               CLPHMM_SUCCESS, NULL);
  if (!ds)
    return;
  const clphmm_batch *b = clphmm_dataset_batches(ds);
  const size_t nb = clphmm_dataset_n_batches(ds),
               n = clphmm_dataset_n_pairs(ds);
  double *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
  if (!want || !got)
    abort();
  for (int k = CPH_REF_AUTO; k <= CPH_REF_KERNEL_LAST; k++) {
    const char *name = cph_ref_kernel_name((cph_ref_kernel)k);
    setenv("CLPHMM_REFERENCE_KERNEL", name, 1);
    if (!cph_ref_kernel_available((cph_ref_kernel)k)) {
      CHECK_STATUS(clphmm_reference(b, nb, CLPHMM_PRECISION_FLOAT, got),
                   CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
      continue;
    }
    for (int p = 0; p < 2; p++) {
      const clphmm_precision prec =
          p ? CLPHMM_PRECISION_DOUBLE : CLPHMM_PRECISION_FLOAT;
      CHECK_STATUS(cph_reference_with(b, nb, prec, CPH_REF_SCALAR, want),
                   CLPHMM_SUCCESS, NULL);
      CHECK_STATUS(clphmm_reference(b, nb, prec, got), CLPHMM_SUCCESS, NULL);
      size_t bad = 0;
      for (size_t i = 0; i < n; i++)
        bad += !same(got[i], want[i]);
      CHECK(bad == 0, "CLPHMM_REFERENCE_KERNEL=%s: %zu results differ", name,
            bad);
    }
  }
  setenv("CLPHMM_REFERENCE_KERNEL", "wave-sse9", 1);
  got[0] = 42.0;
  CHECK_STATUS(clphmm_reference(b, nb, CLPHMM_PRECISION_FLOAT, got),
               CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
  CHECK(strstr(clphmm_last_error(NULL), "CLPHMM_REFERENCE_KERNEL='wave-sse9'"),
        "the error names the variable: %s", clphmm_last_error(NULL));
  CHECK(got[0] == 42.0, "nothing written on error");
  unsetenv("CLPHMM_REFERENCE_KERNEL");
  free(want);
  free(got);
  clphmm_dataset_destroy(ds);
}

int main(void) {
  for (int k = CPH_REF_WAVE; k <= CPH_REF_KERNEL_LAST; k++)
    if (cph_ref_kernel_available((cph_ref_kernel)k))
      kernels[n_kernels++] = (cph_ref_kernel)k;
  printf("kernels against the oracle:");
  for (int k = 0; k < n_kernels; k++)
    printf(" %s", cph_ref_kernel_name(kernels[k]));
  printf("%s (auto: %s)\n", n_kernels ? "" : " none in this build",
         cph_ref_kernel_name(cph_ref_kernel_best()));

  check_fixture("tiny.in", 1);
  check_fixture("pairhmm-testdata.txt", 1);
  check_fixture("expected.Java.hmmresults.txt", 1);
  check_fixture("10s.in", 5);

  test_rng g;
  test_rng_init(&g, 0x5eed0017);
  for (size_t a = 0; a < N_EDGES; a++)
    for (size_t b = 0; b < N_EDGES; b += 1 + (a + b) % 3)
      check_random(&g, edges[a], edges[b]);
  for (int i = 0; i < 150; i++)
    check_random(&g, test_rng_range(&g, 1, 600), test_rng_range(&g, 1, 600));
  check_random(&g, 2500, 300); /* a read much longer than its haplotype */
  check_random(&g, 1200, 3100);
  check_random(&g, 2100, 2400);
  check_random_batches(&g);
  check_env();
  printf("%zu pairs x 3 flavors x %d kernels, %zu differ from the oracle\n",
         pairs_checked, n_kernels, mismatches);
  CHECK(mismatches == 0, "%zu pair results differ from the oracle", mismatches);
  return test_finish();
}
