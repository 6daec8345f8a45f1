/* The early-exit bound (src/model/bound.h) without a device.
 *
 * For random reads and haplotypes (GATK-like, low gap continuation and
 * uniform 0..127 qualities; reads from 1% to 30% off their haplotype, so
 * that float sums spread around GKL's threshold), the float pass's
 * recurrence in exact-enough double arithmetic gives every row's sums:
 *  - step 1 of the proof: the final sum is at most every row's total
 *    times the growth of the rows after it;
 *  - the kernel's test on every row, with the stored qm, qx and threshold
 *    (cph_rows_scaled), bounds the float sum (the CPU reference's GKL
 *    float pass) and stops only pairs whose float sum is below 2^-99, so
 *    below 1e-28: GKL
 *    rescues every pair the kernel would stop;
 *  - the test stops some pairs (it is not vacuous) and never a pair that
 *    GKL keeps in float;
 * and the bound refuses rows it cannot vouch for, and rounds up. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/bound.h"
#include "model/model.h"
#include "model/validate.h"
#include "reference/reference.h"
#include "test_util.h"

typedef struct profile {
  const char *name;
  unsigned qlo, qhi; /* base qualities */
  unsigned ilo, ihi; /* insertion and deletion qualities */
  unsigned clo, chi; /* gap continuation */
} profile;

static const profile profiles[] = {
    {"GATK-like", 6, 40, 40, 45, 10, 10},
    {"low gap continuation", 6, 40, 10, 45, 1, 10},
    {"uniform 0..127", 0, 127, 0, 127, 0, 127},
};

typedef struct pair_data {
  char *hap, *bases;
  uint8_t *q;
  clphmm_read read;
  clphmm_haplotype h;
} pair_data;

static void make_pair(test_rng *rng, const profile *pf, size_t R, size_t H,
                      unsigned subst_pct, pair_data *p) {
  static const char acgt[] = "ACGT";
  p->hap = malloc(H);
  p->bases = malloc(R);
  p->q = malloc(4 * R);
  if (!p->hap || !p->bases || !p->q)
    abort();
  for (size_t j = 0; j < H; j++)
    p->hap[j] = acgt[test_rng_next(rng) & 3];
  const size_t start = H > R ? test_rng_range(rng, 0, (unsigned)(H - R)) : 0;
  for (size_t i = 0; i < R; i++) {
    const int copy = start + i < H && test_rng_range(rng, 0, 99) >= subst_pct;
    p->bases[i] = copy ? p->hap[start + i] : acgt[test_rng_next(rng) & 3];
    p->q[i] = (uint8_t)test_rng_range(rng, pf->qlo, pf->qhi);
    p->q[R + i] = (uint8_t)test_rng_range(rng, pf->ilo, pf->ihi);
    p->q[2 * R + i] = (uint8_t)test_rng_range(rng, pf->ilo, pf->ihi);
    p->q[3 * R + i] = (uint8_t)test_rng_range(rng, pf->clo, pf->chi);
  }
  p->read =
      (clphmm_read){p->bases, p->q, p->q + R, p->q + 2 * R, p->q + 3 * R, R};
  p->h = (clphmm_haplotype){p->hap, H};
}

static void free_pair(pair_data *p) {
  free(p->hap);
  free(p->bases);
  free(p->q);
}

typedef struct tally {
  size_t pairs, stopped, kept_float, rows_tested;
  size_t proven;  /* double first: rescues proven from the double result */
  double closest; /* the highest log10 likelihood proven */
} tally;

/* Double first (cph_first_limit): where the pair's GKL double result is
 * below its limit, GKL's float sum must be below its threshold. */
static void check_first(const pair_data *p, const char *what, float f,
                        tally *t) {
  double d;
  CHECK_STATUS(cph_reference_pair_double(&p->read, &p->h, CPH_GKL_DOUBLE, &d),
               CLPHMM_SUCCESS, NULL);
  const double ld = cph_log10_double(d);
  const double limit =
      cph_first_limit(p->read.length, p->h.length,
                      cph_first_growth() * cph_first_outgoing(&p->read));
  /* (-inf: low insertion and deletion qualities, whose outgoing
   * probabilities add up to more than 1; see test_first_refusals.) */
  CHECK(limit == -INFINITY || (limit < -64.12 && limit > -66.0),
        "%s: limit %.6f for %zu x %zu", what, limit, p->read.length,
        p->h.length);
  if (ld < limit) {
    CHECK(cph_needs_rescue(f),
          "%s: double result %.6f below the limit %.6f, but the float sum "
          "%.6g stands",
          what, ld, limit, (double)f);
    t->proven++;
    t->closest = ld > t->closest ? ld : t->closest;
  }
}

/* One pair: the recurrence in double over the float pass's probabilities
 * (PAIRHMM_SPEC 5.2, init 2^120 / H as the float pass), row by row. */
static void check_pair(const pair_data *p, const char *what, tally *t) {
  const size_t R = p->read.length, H = p->h.length;
  cph_row_f *rf = malloc(R * sizeof *rf);
  cph_row_fs *rs = malloc(R * sizeof *rs);
  double *m = calloc(H + 1, sizeof *m), *x = calloc(H + 1, sizeof *x);
  double *y = calloc(H + 1, sizeof *y), *pm = calloc(H + 1, sizeof *pm);
  double *px = calloc(H + 1, sizeof *px), *py = calloc(H + 1, sizeof *py);
  double *total = malloc(R * sizeof *total), *test = malloc(R * sizeof *test);
  uint8_t *rc = malloc(R), *hc = malloc(H);
  if (!rf || !rs || !m || !x || !y || !pm || !px || !py || !total || !test ||
      !rc || !hc)
    abort();
  cph_rows_float(&p->read, rf);
  double wm, wx;
  cph_rows_scaled(&p->read, 0, rs, &wm, &wx);
  cph_encode_bases(p->read.bases, R, rc);
  cph_encode_bases(p->h.bases, H, hc);
  const double init = (double)0x1p120f / (double)H;
  for (size_t j = 0; j <= H; j++)
    py[j] = init;  /* row 0 */
  double prod = 1; /* P_i */
  cph_bound_walk bw = CPH_BOUND_WALK_INIT;
  for (size_t i = 0; i < R; i++) {
    const cph_row_f *r = &rf[i];
    m[0] = x[0] = y[0] = 0;
    double sm = 0, sx = 0, sy = 0;
    for (size_t j = 1; j <= H; j++) {
      const int match =
          rc[i] == hc[j - 1] || rc[i] == CPH_BASE_N || hc[j - 1] == CPH_BASE_N;
      const double prior = match ? r->match : r->mismatch;
      m[j] = prior *
             (pm[j - 1] * r->mm + px[j - 1] * r->gapm + py[j - 1] * r->gapm);
      x[j] = pm[j] * r->mx + px[j] * r->xx;
      y[j] = m[j - 1] * r->my + y[j - 1] * r->yy;
      sm += m[j];
      sx += x[j];
      sy += y[j];
    }
    total[i] = sm + sx; /* F_i */
    /* The scaled sums the kernel would hold (P_i-1 before this row). */
    const double p_prev = prod;
    prod *= r->mm;
    const double g = cph_bound_growth(r->mm, r->gapm, r->mx, r->xx, bw.e_prev);
    bw.e_prev = cph_bound_e(r->my, r->xx);
    cph_bound_step(&bw, r->mm, g);
    test[i] = (double)rs[i].qm * (sm / prod) +
              (double)rs[i].qx * (sx / (p_prev * r->mx));
    double *tmp;
    tmp = pm, pm = m, m = tmp;
    tmp = px, px = x, x = tmp;
    tmp = py, py = y, y = tmp;
  }
  double final = 0;
  for (size_t j = 1; j <= H; j++)
    final += pm[j] + px[j];
  /* Step 1: final <= total_i * G_R / G_i, for every row i. */
  const double GR = bw.growth;
  cph_bound_walk w2 = CPH_BOUND_WALK_INIT;
  for (size_t i = 0; i + 1 < R && isfinite(GR); i++) {
    const double g =
        cph_bound_growth(rf[i].mm, rf[i].gapm, rf[i].mx, rf[i].xx, w2.e_prev);
    w2.e_prev = cph_bound_e(rf[i].my, rf[i].xx);
    cph_bound_step(&w2, rf[i].mm, g);
    CHECK(final <= total[i] * (GR / w2.growth) * (1 + 1e-9),
          "%s: row %zu of %zu: final sum %.6g above the bound %.6g", what, i, R,
          final, total[i] * (GR / w2.growth));
  }
  /* The kernel's test with the stored values (threshold in the last row). */
  float f;
  CHECK_STATUS(cph_reference_pair_float(&p->read, &p->h, &f), CLPHMM_SUCCESS,
               NULL);
  const double T = (double)rs[R - 1].qm;
  int stops = 0;
  for (size_t i = 0; i + 1 < R; i++) {
    t->rows_tested++;
    /* The stored values bound the float sum (1% for its float rounding). */
    CHECK(!(test[i] * T * 0x1p-104 * 1.01 < (double)f),
          "%s: row %zu of %zu: float sum %.6g above the stored bound %.6g",
          what, i, R, (double)f, test[i] * T * 0x1p-104);
    if (test[i] * T < 1) {
      stops = 1;
      CHECK(f < 0x1p-99f && cph_needs_rescue(f),
            "%s: row %zu of %zu stops the pair, but its float sum is %.6g",
            what, i, R, (double)f);
      break;
    }
  }
  check_first(p, what, f, t);
  t->pairs++;
  t->stopped += (size_t)stops;
  t->kept_float += !cph_needs_rescue(f);
  free(rf);
  free(rs);
  free(m);
  free(x);
  free(y);
  free(pm);
  free(px);
  free(py);
  free(total);
  free(test);
  free(rc);
  free(hc);
}

static void test_random_pairs(test_rng *rng) {
  for (size_t k = 0; k < sizeof profiles / sizeof *profiles; k++) {
    tally t = {0};
    t.closest = -INFINITY;
    for (int n = 0; n < 60; n++) {
      pair_data p;
      const size_t R = test_rng_range(rng, 200, 700);
      const size_t H = test_rng_range(rng, (unsigned)R / 2, (unsigned)R + 200);
      make_pair(rng, &profiles[k], R, H, test_rng_range(rng, 1, 30), &p);
      check_pair(&p, profiles[k].name, &t);
      free_pair(&p);
    }
    printf("%-22s %zu pairs, %zu rows tested: %zu stopped, %zu kept in "
           "float; double first: %zu proven (highest %.3f)\n",
           profiles[k].name, t.pairs, t.rows_tested, t.stopped, t.kept_float,
           t.proven, t.closest);
    if (k == 0)
      CHECK(t.stopped > 0 && t.kept_float > 0 && t.proven > 0,
            "%s: the test should stop some pairs, keep others and prove "
            "some rescues (stopped %zu, kept %zu, proven %zu)",
            profiles[k].name, t.stopped, t.kept_float, t.proven);
  }
}

/* Rows the bound cannot vouch for: a gap continuation of 1 (phred 0),
 * insertion and deletion qualities 0 (mm = 0); a threshold too loose for
 * the additive terms. Each gives a NaN threshold, which never stops. */
static void test_refusals(void) {
  CHECK(isnan(cph_bound_growth(0.9, 0.0, 0.1, 1.0, 0.0)),
        "gap continuation 1 accepted");
  CHECK(isnan(cph_bound_growth(0.0, 0.9, 0.1, 0.1, 0.0)), "mm = 0 accepted");
  CHECK(cph_bound_growth(0.999, 0.9, 1e-4, 0.1, 1e-4) >= 1.0,
        "growth of a row like the one above below 1");
  cph_bound_walk w = {1.0, 4.0, 0.5, 0.0};
  CHECK(!isnan(cph_bound_threshold(&w, 1000)), "a valid threshold refused");
  w.growth = 0x1p13;
  CHECK(isnan(cph_bound_threshold(&w, 1024)), "a loose threshold accepted");
  w.growth = NAN;
  CHECK(isnan(cph_bound_threshold(&w, 10)), "an invalid walk accepted");
  /* Reads of CPH_BOUND_MIN_ROWS rows or fewer get none (zeros, NaN); a
   * longer one gets a threshold, unless a gap continuation of phred 0 in
   * its middle makes it NaN. */
  enum { N = CPH_BOUND_MIN_ROWS + 44 };
  static char b[N];
  static uint8_t q[4 * N];
  static cph_row_fs rows[N];
  for (int i = 0; i < N; i++)
    b[i] = "ACGT"[i & 3];
  for (int i = 0; i < 4 * N; i++)
    q[i] = 30;
  double wm, wx;
  const size_t lens[] = {CPH_BOUND_MIN_ROWS, N};
  for (int k = 0; k < 2; k++) {
    const size_t n = lens[k];
    clphmm_read rd = {b, q, q + n, q + 2 * n, q + 3 * n, n};
    cph_rows_scaled(&rd, 0, rows, &wm, &wx);
    CHECK(k ? isfinite(rows[n - 1].qm) && rows[0].qm > 0 && rows[0].qx > 0
            : isnan(rows[n - 1].qm) && rows[0].qm == 0 && rows[0].qx == 0,
          "%zu rows: threshold %g, first row %g %g", n, (double)rows[n - 1].qm,
          (double)rows[0].qm, (double)rows[0].qx);
  }
  q[3 * N + N / 2] = 0; /* gap continuation of a middle row */
  clphmm_read rd = {b, q, q + N, q + 2 * N, q + 3 * N, N};
  cph_rows_scaled(&rd, 0, rows, &wm, &wx);
  CHECK(isnan(rows[N - 1].qm),
        "threshold %g for a read with a gap continuation of phred 0",
        (double)rows[N - 1].qm);
}

/* Double first near GKL's threshold: 300-base reads 3..10% off their
 * haplotypes (GATK-like qualities) give double results around -64; some
 * must be proven within 2 log10 units of it (a limit too high would then
 * prove pairs that GKL keeps in float, which check_first catches). */
static void test_first_near(test_rng *rng) {
  tally t = {0};
  t.closest = -INFINITY;
  size_t kept = 0;
  for (int n = 0; n < 240; n++) {
    pair_data p;
    make_pair(rng, &profiles[0], 300, 320, 3 + (unsigned)n % 8, &p);
    float f;
    CHECK_STATUS(cph_reference_pair_float(&p.read, &p.h, &f), CLPHMM_SUCCESS,
                 NULL);
    check_first(&p, "near the threshold", f, &t);
    kept += !cph_needs_rescue(f);
    free_pair(&p);
  }
  printf("near the threshold     240 pairs: %zu proven (highest %.3f), %zu "
         "kept in float\n",
         t.proven, t.closest, kept);
  CHECK(t.proven > 0 && t.closest > -66.4 && kept > 0,
        "near the threshold: %zu proven, highest %.3f, %zu kept", t.proven,
        t.closest, kept);
}

/* Double first's limit refuses what its proof does not cover: sizes
 * (R + H > 2^21, more than 2^40 cells), growth not finite, a growth that
 * the pair's size makes too loose; it falls with the size; a read with
 * insertion and deletion qualities of 0 (mm + mx + my = 2) gets no limit;
 * GKL's float tables are within a few hundred float ulps of the double
 * ones (the growth is near 1 + 2^-20). */
static void test_first_refusals(void) {
  const double g = cph_first_growth();
  CHECK(g >= 1.0 + 0x1p-20 && g < 1.0 + 0x1p-16, "growth %.9g", g);
  const double l1 = cph_first_limit(1000, 2000, g),
               l2 = cph_first_limit(20000, 30000, g);
  CHECK(l1 < -64.4 && l2 < l1 && l1 > -65.0, "limits %.6f and %.6f", l1, l2);
  CHECK(isinf(cph_first_limit((size_t)1 << 21, 1, g)) &&
            isinf(cph_first_limit(1, (size_t)1 << 21, g)) &&
            isinf(cph_first_limit((size_t)1 << 20, (size_t)1 << 20, g)) &&
            isinf(cph_first_limit(10, 10, INFINITY)) &&
            isinf(cph_first_limit(10, 10, NAN)) &&
            isinf(cph_first_limit(1000, 1000, 1.01)),
        "a limit where the proof does not hold");
  CHECK(!isinf(cph_first_limit(300000, 300000, g)),
        "no limit at 300,000 x 300,000");
  enum { N = 50 };
  static char b[N];
  static uint8_t q[4 * N];
  for (int i = 0; i < N; i++)
    b[i] = 'A';
  for (int i = 0; i < 4 * N; i++)
    q[i] = 30;
  clphmm_read rd = {b, q, q + N, q + 2 * N, q + 3 * N, N};
  const double s30 = cph_first_outgoing(&rd);
  q[N + 7] = q[2 * N + 7] = 0;
  const double s0 = cph_first_outgoing(&rd);
  CHECK(s30 >= 1.0 && s30 < 1.0 + 1e-6 && s0 >= 2.0 &&
            isinf(cph_first_limit(N, 100, g * s0)),
        "outgoing factors %.17g (qualities 30) and %.17g (0)", s30, s0);
}

static void test_float_up(void) {
  CHECK(cph_float_up(0.5) == 0.5f, "exact value moved");
  const float third = cph_float_up(1.0 / 3.0);
  CHECK((double)third >= 1.0 / 3.0 &&
            (double)nextafterf(third, 0.0f) < 1.0 / 3.0,
        "1/3 rounded to %.9g, not up to the next float", (double)third);
  CHECK((double)cph_float_up(0.1) >= 0.1, "0.1 not rounded up");
  CHECK(isinf(cph_float_up(1e300)), "1e300 not +inf");
  CHECK(cph_float_up(1e-300) > 0.0f, "1e-300 rounded to 0");
  CHECK(isnan(cph_float_up(NAN)), "NaN not kept");
  CHECK(cph_float_up(0.0) == 0.0f, "0 moved");
  /* Stored weights are at least FLT_MIN: a device that flushes denormals
   * must not read a tiny weight as 0 (which stops every pair). */
  CHECK(cph_bound_slot(1e-45) == FLT_MIN && cph_bound_slot(0.0) == FLT_MIN,
        "a weight below FLT_MIN not raised to it");
  CHECK(cph_bound_slot(0.5) == 0.5f && isnan(cph_bound_slot(NAN)) &&
            (double)cph_bound_slot(0.1) >= 0.1,
        "cph_bound_slot changed a normal weight or NaN");
}

int main(void) {
  test_rng rng;
  test_rng_init(&rng, 20261125);
  printf("seed %llu (set CLPHMM_TEST_SEED to reproduce another)\n",
         (unsigned long long)rng.s);
  test_random_pairs(&rng);
  test_refusals();
  test_first_near(&rng);
  test_first_refusals();
  test_float_up();
  return test_finish();
}
