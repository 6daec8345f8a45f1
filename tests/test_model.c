/* Tests of the probability model (src/model/model.c) and the base/quality
 * validation helpers (src/model/validate.h): phred tables, the quantised
 * match-to-match table, per-row parameters, base codes, the final log10
 * conversion and the rescue threshold. Expected values are derived here
 * from the formulas of PAIRHMM_SPEC sections 2-4 and 10. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/validate.h"
#include "test_util.h"

/* Index of T(hi, lo) in the packed triangular table (spec 3.1). */
static size_t tri_index(unsigned a, unsigned b) {
  unsigned hi = a > b ? a : b, lo = a > b ? b : a;
  return (size_t)hi * (hi + 1) / 2 + lo;
}

static double rel_diff(double a, double b) {
  double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  return m == 0.0 ? 0.0 : fabs(a - b) / m;
}

static const char *flavor_name(int f) {
  return f == 0 ? "gkl-float" : f == 1 ? "gkl-double" : "java-double";
}

/* Value of T in flavor f (0 float, 1 GKL double, 2 Java double). */
static double mm_value(int f, unsigned ins, unsigned del) {
  size_t k = tri_index(ins, del);
  if (f == 0)
    return cph_tables_gkl_float()->mm[k];
  return cph_tables_double(f == 1 ? CPH_GKL_DOUBLE : CPH_JAVA_DOUBLE)->mm[k];
}

/* ---- ph2pr --------------------------------------------------------------- */

static void test_ph2pr(void) {
  const cph_tables_f *tf = cph_tables_gkl_float();
  const cph_tables_d *tg = cph_tables_double(CPH_GKL_DOUBLE);
  const cph_tables_d *tj = cph_tables_double(CPH_JAVA_DOUBLE);
  CHECK(tf && tg && tj, "tables are NULL");
  if (!tf || !tg || !tj)
    return;
  int bad_f = 0, bad_g = 0, bad_j = 0;
  for (int q = 0; q < CPH_NQUAL; q++) {
    float want_f = powf(10.f, -((float)q) / 10.f);
    double want_g = pow(10.0, -((double)q) / 10.0);
    double want_j = pow(10.0, q / -10.0);
    if (tf->ph2pr[q] != want_f && bad_f++ < 5)
      CHECK(0, "float ph2pr[%d] = %.9g, want %.9g", q, tf->ph2pr[q], want_f);
    if (tg->ph2pr[q] != want_g && bad_g++ < 5)
      CHECK(0, "GKL double ph2pr[%d] = %.17g, want %.17g", q, tg->ph2pr[q],
            want_g);
    if (tj->ph2pr[q] != want_j && bad_j++ < 5)
      CHECK(0, "Java ph2pr[%d] = %.17g, want %.17g", q, tj->ph2pr[q], want_j);
  }
  CHECK(bad_f == 0, "%d float ph2pr entries differ", bad_f);
  CHECK(bad_g == 0, "%d GKL double ph2pr entries differ", bad_g);
  CHECK(bad_j == 0, "%d Java ph2pr entries differ", bad_j);
  /* Anchor points independent of the formula's rounding. */
  CHECK(tf->ph2pr[0] == 1.0f && tg->ph2pr[0] == 1.0 && tj->ph2pr[0] == 1.0,
        "ph2pr[0] is not 1");
  CHECK(fabs(tj->ph2pr[10] - 0.1) < 1e-17 && fabs(tj->ph2pr[30] - 1e-3) < 1e-18,
        "Java ph2pr[10] = %.17g, ph2pr[30] = %.17g", tj->ph2pr[10],
        tj->ph2pr[30]);
}

/* ---- match-to-match ------------------------------------------------------ */

static void test_mm_exact_zeros(void) {
  for (int f = 0; f < 3; f++) {
    /* 10^-0 + 10^-0 = 2 > 1 and 2 * 10^-0.3 > 1: p is clamped to 1. */
    CHECK(mm_value(f, 0, 0) == 0.0, "%s T(0,0) = %.17g, want 0", flavor_name(f),
          mm_value(f, 0, 0));
    CHECK(mm_value(f, 3, 3) == 0.0, "%s T(3,3) = %.17g, want 0", flavor_name(f),
          mm_value(f, 3, 3));
    /* eps(0) = 1 already: every T(0, d) is 0. */
    int nonzero = 0;
    for (unsigned d = 0; d < CPH_NQUAL; d++)
      nonzero += mm_value(f, 0, d) != 0.0;
    CHECK(nonzero == 0, "%s: %d entries T(0,d) are not 0", flavor_name(f),
          nonzero);
  }
}

static void test_mm_range_and_formula(void) {
  for (int f = 0; f < 3; f++) {
    int out_of_range = 0, off_formula = 0;
    double worst = 0.0;
    for (unsigned i = 0; i < CPH_NQUAL; i++) {
      for (unsigned d = 0; d < CPH_NQUAL; d++) {
        double v = mm_value(f, i, d);
        if (!(v >= 0.0 && v <= 1.0) && out_of_range++ < 3)
          CHECK(0, "%s T(%u,%u) = %.17g is outside [0,1]", flavor_name(f), i, d,
                v);
        if (i < 10 || d < 10)
          continue;
        double want =
            1.0 - (pow(10.0, -(double)i / 10.0) + pow(10.0, -(double)d / 10.0));
        double r = rel_diff(v, want);
        if (r > worst)
          worst = r;
        if (!(r <= 1e-3) && off_formula++ < 3)
          CHECK(0, "%s T(%u,%u) = %.17g, want %.17g within 1e-3 relative",
                flavor_name(f), i, d, v, want);
      }
    }
    CHECK(out_of_range == 0, "%s: %d entries outside [0,1]", flavor_name(f),
          out_of_range);
    CHECK(off_formula == 0, "%s: %d entries off 1-(e(I)+e(D)) (worst %.3g)",
          flavor_name(f), off_formula, worst);
  }
}

/* Float and double GKL tables come from the same Jacobian algorithm; they
 * differ only by float rounding of approxSum's inputs, of J and of the
 * sum s (each within a few float ulps), then of the stored value. */
static void test_mm_float_vs_double(void) {
  const cph_tables_f *tf = cph_tables_gkl_float();
  const cph_tables_d *tg = cph_tables_double(CPH_GKL_DOUBLE);
  int bad = 0, tight_bad = 0;
  double worst_tight = 0.0;
  for (unsigned hi = 0; hi < CPH_NQUAL; hi++) {
    for (unsigned lo = 0; lo <= hi; lo++) {
      size_t k = tri_index(hi, lo);
      double f = tf->mm[k], d = tg->mm[k];
      if (d <= 1e-3)
        continue;
      /* Error bound: s = log10(p) has an absolute error of at most
       * |hi|*0.1*2^-23 + 2^-24 * (|s| + 0.31) from the float arguments, J
       * and the float sum; so p = 1 - T changes by p*ln10*ds and T by
       * that much, plus the float store (2^-24 relative). */
      double p = 1.0 - d;
      double ds = 0.1 * hi * 0x1p-23 + 0x1p-23 * (fabs(log10(p)) + 0.31);
      double bound = p * log(10.0) * ds + d * 0x1p-23;
      if (!(fabs(f - d) <= bound) && bad++ < 3)
        CHECK(0, "T(%u,%u): float %.9g vs double %.17g, diff %.3g > %.3g", hi,
              lo, f, d, fabs(f - d), bound);
      /* Away from p ~ 1 the tables agree to float precision. */
      if (d > 0.5) {
        double r = rel_diff(f, d);
        if (r > worst_tight)
          worst_tight = r;
        if (!(r <= 1e-6))
          tight_bad++;
      }
    }
  }
  CHECK(bad == 0, "%d float/double table entries disagree beyond the bound",
        bad);
  CHECK(tight_bad == 0,
        "%d float/double entries with T > 0.5 differ by > 1e-6 relative "
        "(worst %.3g)",
        tight_bad, worst_tight);
}

/* GKL double uses INV_LN10 = 0.434294 instead of 1/ln(10): T_gkl =
 * 10^(L*c_g) and T_java = 10^(L*c_j) with the same L = log1p(-p), so
 * log10(T_gkl) = log10(T_java) * c_g / c_j. */
static void test_mm_java_vs_gkl(void) {
  const cph_tables_d *tg = cph_tables_double(CPH_GKL_DOUBLE);
  const cph_tables_d *tj = cph_tables_double(CPH_JAVA_DOUBLE);
  const double cj = 1.0 / log(10.0), cg = 0.434294;
  int bad = 0, bad_bound = 0, equal = 0;
  double worst = 0.0;
  for (unsigned i = 10; i <= 60; i++) {
    for (unsigned d = 10; d <= 60; d++) {
      size_t k = tri_index(i, d);
      double g = tg->mm[k], j = tj->mm[k];
      double want = pow(10.0, log10(j) * (cg / cj));
      double r = rel_diff(g, j);
      if (r > worst)
        worst = r;
      equal += g == j;
      if (!(rel_diff(g, want) <= 1e-13) && bad++ < 3)
        CHECK(0, "T(%u,%u): GKL %.17g, Java %.17g, want GKL %.17g", i, d, g, j,
              want);
      /* |log10 ratio| = |L| * (c_j - c_g) with |L| <= -ln(1 - 0.2): below
       * 3e-7 relative for I, D >= 10; far below 1e-9 for I, D >= 40. */
      double lim = (i >= 40 && d >= 40) ? 1e-9 : 3e-7;
      if (!(r < lim) && bad_bound++ < 3)
        CHECK(0, "T(%u,%u): GKL/Java relative difference %.3g >= %.3g", i, d, r,
              lim);
    }
  }
  CHECK(bad == 0, "%d GKL double entries do not follow INV_LN10 = 0.434294",
        bad);
  CHECK(bad_bound == 0, "%d GKL/Java entries beyond the bound (worst %.3g)",
        bad_bound, worst);
  /* The two tables must really be different (truncated constant in use). */
  CHECK(equal < 51 * 51, "GKL and Java double tables are identical");
}

/* ---- per-row parameters -------------------------------------------------- */

typedef struct qread {
  char *bases;
  uint8_t *q, *ins, *del, *gcp;
  clphmm_read read;
} qread;

static int qread_alloc(qread *r, size_t n) {
  r->bases = malloc(n ? n : 1);
  r->q = malloc(n ? n : 1);
  r->ins = malloc(n ? n : 1);
  r->del = malloc(n ? n : 1);
  r->gcp = malloc(n ? n : 1);
  r->read = (clphmm_read){r->bases, r->q, r->ins, r->del, r->gcp, n};
  if (!r->bases || !r->q || !r->ins || !r->del || !r->gcp) {
    CHECK(0, "out of memory");
    return 0;
  }
  return 1;
}

static void qread_free(qread *r) {
  free(r->bases);
  free(r->q);
  free(r->ins);
  free(r->del);
  free(r->gcp);
}

/* Every (I, D) pair in one read: position I*128 + D. mm(I,D) must equal
 * mm(D,I) and the table entry of spec 3.1, in all flavors. */
static void test_rows_symmetry(void) {
  const size_t n = (size_t)CPH_NQUAL * CPH_NQUAL;
  qread r;
  cph_row_f *rf = malloc(n * sizeof *rf);
  cph_row_d *rg = malloc(n * sizeof *rg), *rj = malloc(n * sizeof *rj);
  if (!qread_alloc(&r, n) || !rf || !rg || !rj) {
    CHECK(0, "out of memory");
    goto done;
  }
  for (size_t k = 0; k < n; k++) {
    r.bases[k] = "ACGTN"[k % 5];
    r.q[k] = (uint8_t)(k % 41);
    r.ins[k] = (uint8_t)(k / CPH_NQUAL);
    r.del[k] = (uint8_t)(k % CPH_NQUAL);
    r.gcp[k] = 10;
  }
  cph_rows_float(&r.read, rf);
  cph_rows_double(&r.read, CPH_GKL_DOUBLE, rg);
  cph_rows_double(&r.read, CPH_JAVA_DOUBLE, rj);
  int asym = 0, off_table = 0;
  for (unsigned i = 0; i < CPH_NQUAL; i++) {
    for (unsigned d = 0; d < CPH_NQUAL; d++) {
      size_t a = (size_t)i * CPH_NQUAL + d, b = (size_t)d * CPH_NQUAL + i;
      if ((rf[a].mm != rf[b].mm || rg[a].mm != rg[b].mm ||
           rj[a].mm != rj[b].mm) &&
          asym++ < 3)
        CHECK(0, "mm(%u,%u) != mm(%u,%u)", i, d, d, i);
      if ((rf[a].mm != (float)mm_value(0, i, d) ||
           rg[a].mm != mm_value(1, i, d) || rj[a].mm != mm_value(2, i, d)) &&
          off_table++ < 3)
        CHECK(0, "row mm(%u,%u) is not table entry %zu", i, d, tri_index(i, d));
    }
  }
  CHECK(asym == 0, "%d asymmetric mm entries", asym);
  CHECK(off_table == 0, "%d row mm values not from the table", off_table);
  /* The table is not trivially symmetric by construction of the read:
   * mm(10, 40) and mm(40, 10) use different positions and a nonzero value. */
  CHECK(rf[10 * CPH_NQUAL + 40].mm > 0.5f, "mm(10,40) = %g",
        (double)rf[10 * CPH_NQUAL + 40].mm);
done:
  qread_free(&r);
  free(rf);
  free(rg);
  free(rj);
}

/* Every field of every row from the ph2pr table (spec sections 3 and 4). */
static void test_rows_fields(void) {
  const size_t n = 300;
  qread r;
  cph_row_f *rf = malloc(n * sizeof *rf);
  cph_row_d *rd[2] = {malloc(n * sizeof(cph_row_d)),
                      malloc(n * sizeof(cph_row_d))};
  if (!qread_alloc(&r, n) || !rf || !rd[0] || !rd[1]) {
    CHECK(0, "out of memory");
    goto done;
  }
  test_rng rng;
  test_rng_init(&rng, 12345);
  for (size_t k = 0; k < n; k++) {
    r.bases[k] = "ACGTNacgtn"[test_rng_range(&rng, 0, 9)];
    r.q[k] = (uint8_t)test_rng_range(&rng, 0, 127);
    r.ins[k] = (uint8_t)test_rng_range(&rng, 0, 127);
    r.del[k] = (uint8_t)test_rng_range(&rng, 0, 127);
    r.gcp[k] = (uint8_t)test_rng_range(&rng, 0, 127);
  }
  /* Make sure the extremes appear. */
  r.q[0] = r.ins[0] = r.del[0] = r.gcp[0] = 0;
  r.q[1] = r.ins[1] = r.del[1] = r.gcp[1] = 127;
  cph_rows_float(&r.read, rf);
  const cph_tables_f *tf = cph_tables_gkl_float();
  int bad = 0;
  for (size_t k = 0; k < n; k++) {
    const cph_row_f *w = &rf[k];
    unsigned q = r.q[k], i = r.ins[k], d = r.del[k], c = r.gcp[k];
    int ok = w->mm == tf->mm[tri_index(i, d)] &&
             w->gapm == 1.0f - powf(10.f, -((float)c) / 10.f) &&
             w->xx == powf(10.f, -((float)c) / 10.f) && w->yy == w->xx &&
             w->mx == powf(10.f, -((float)i) / 10.f) &&
             w->my == powf(10.f, -((float)d) / 10.f) &&
             w->match == 1.0f - powf(10.f, -((float)q) / 10.f) &&
             w->mismatch == powf(10.f, -((float)q) / 10.f) / 3.0f;
    if (!ok && bad++ < 3)
      CHECK(0,
            "float row %zu (Q%u I%u D%u C%u): mm %g gapm %g mx %g xx %g my %g "
            "yy %g match %g mismatch %g",
            k, q, i, d, c, (double)w->mm, (double)w->gapm, (double)w->mx,
            (double)w->xx, (double)w->my, (double)w->yy, (double)w->match,
            (double)w->mismatch);
  }
  CHECK(bad == 0, "%d float rows wrong", bad);

  for (int f = 0; f < 2; f++) {
    cph_flavor fl = f ? CPH_JAVA_DOUBLE : CPH_GKL_DOUBLE;
    cph_rows_double(&r.read, fl, rd[f]);
    const cph_tables_d *t = cph_tables_double(fl);
    bad = 0;
    for (size_t k = 0; k < n; k++) {
      const cph_row_d *w = &rd[f][k];
      unsigned q = r.q[k], i = r.ins[k], d = r.del[k], c = r.gcp[k];
      double ec = pow(10.0, -(double)c / 10.0),
             eq = pow(10.0, -(double)q / 10.0);
      int ok = w->mm == t->mm[tri_index(i, d)] && w->gapm == 1.0 - ec &&
               w->xx == ec && w->yy == ec &&
               w->mx == pow(10.0, -(double)i / 10.0) &&
               w->my == pow(10.0, -(double)d / 10.0) && w->match == 1.0 - eq &&
               w->mismatch == eq / 3.0;
      if (!ok && bad++ < 3)
        CHECK(0, "%s row %zu (Q%u I%u D%u C%u) wrong", flavor_name(1 + f), k, q,
              i, d, c);
    }
    CHECK(bad == 0, "%d %s rows wrong", bad, flavor_name(1 + f));
  }
  /* A known row: Q=I=D=45 style values, C=10. */
  qread one;
  if (qread_alloc(&one, 1)) {
    one.bases[0] = 'A';
    one.q[0] = 20;
    one.ins[0] = 45;
    one.del[0] = 45;
    one.gcp[0] = 10;
    cph_row_d w;
    cph_rows_double(&one.read, CPH_JAVA_DOUBLE, &w);
    CHECK(fabs(w.match - 0.99) < 1e-15 && fabs(w.mismatch - 0.01 / 3) < 1e-15,
          "Q20: match %.17g mismatch %.17g", w.match, w.mismatch);
    CHECK(fabs(w.gapm - 0.9) < 1e-15 && fabs(w.xx - 0.1) < 1e-15,
          "C10: gapm %.17g xx %.17g", w.gapm, w.xx);
    CHECK(fabs(w.mm - (1.0 - 2 * pow(10.0, -4.5))) < 1e-9, "mm(45,45) = %.17g",
          w.mm);
  }
  qread_free(&one);
done:
  qread_free(&r);
  free(rf);
  free(rd[0]);
  free(rd[1]);
}

/* ---- bases --------------------------------------------------------------- */

static void test_base_codes(void) {
  int bad = 0, valid = 0;
  for (int b = 0; b < 256; b++) {
    unsigned want;
    switch (b) {
    case 'A':
    case 'a': want = 0; break;
    case 'C':
    case 'c': want = 1; break;
    case 'G':
    case 'g': want = 2; break;
    case 'T':
    case 't': want = 3; break;
    case 'N':
    case 'n': want = 4; break;
    default: want = CPH_BASE_INVALID; break;
    }
    unsigned got = cph_base_code((unsigned char)b);
    valid += got != CPH_BASE_INVALID;
    if (got != want && bad++ < 5)
      CHECK(0, "cph_base_code(0x%02x) = %u, want %u", b, got, want);
  }
  CHECK(bad == 0, "%d base codes wrong", bad);
  CHECK(valid == 10, "%d valid bytes, want 10 (ACGTNacgtn)", valid);
  CHECK(CPH_BASE_A == 0 && CPH_BASE_C == 1 && CPH_BASE_G == 2 &&
            CPH_BASE_T == 3 && CPH_BASE_N == 4,
        "base code constants changed");
  const char s[] = "ACGTNacgtn";
  uint8_t codes[10];
  cph_encode_bases(s, 10, codes);
  static const uint8_t want[10] = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4};
  CHECK(memcmp(codes, want, 10) == 0, "cph_encode_bases(\"%s\") wrong", s);
  /* Every byte, in runs long enough for the vectorized loop and with an
   * odd tail: the codes of cph_base_code, and the OR of them. */
  char all[3 * 256 + 7];
  uint8_t got[sizeof all];
  for (size_t i = 0; i < sizeof all; i++)
    all[i] = (char)(unsigned char)(i * 7 % 256);
  for (size_t len = 0; len <= sizeof all; len += len < 40 ? 1 : 61) {
    const uint8_t any = cph_encode_bases(all, len, got);
    uint8_t or_want = 0;
    int wrong = 0;
    for (size_t i = 0; i < len; i++) {
      const uint8_t w = cph_base_code((unsigned char)all[i]);
      or_want |= w;
      wrong += got[i] != w;
    }
    CHECK(wrong == 0 && any == or_want,
          "cph_encode_bases over %zu bytes: %d codes wrong, OR 0x%02x want "
          "0x%02x",
          len, wrong, any, or_want);
  }
}

/* ---- log10 and rescue ---------------------------------------------------- */

static void test_log10_and_rescue(void) {
  CHECK(cph_log10_float(ldexpf(1.0f, 120)) == 0.0,
        "cph_log10_float(2^120) = %.17g", cph_log10_float(ldexpf(1.0f, 120)));
  CHECK(cph_log10_double(ldexp(1.0, 1020)) == 0.0,
        "cph_log10_double(2^1020) = %.17g", cph_log10_double(ldexp(1.0, 1020)));
  double v = cph_log10_float(ldexpf(1.0f, 20));
  CHECK(fabs(v - (-100.0 * log10(2.0))) < 1e-4, "cph_log10_float(2^20) = %.9g",
        v);
  v = cph_log10_double(ldexp(1.0, 20));
  CHECK(fabs(v - (-1000.0 * log10(2.0))) < 1e-10,
        "cph_log10_double(2^20) = %.17g", v);
  v = cph_log10_double(0.0);
  CHECK(isinf(v) && v < 0, "cph_log10_double(0) = %g", v);
  v = cph_log10_float(0.0f);
  CHECK(isinf(v) && v < 0, "cph_log10_float(0) = %g", v);

  CHECK(CPH_MIN_ACCEPTED == 1e-28f, "MIN_ACCEPTED changed");
  CHECK(!cph_needs_rescue(1e-28f), "1e-28f itself needs rescue");
  float below = nextafterf(1e-28f, 0.0f);
  CHECK(below < 1e-28f && cph_needs_rescue(below),
        "%.9g (just below 1e-28f) needs no rescue", (double)below);
  CHECK(!cph_needs_rescue(nextafterf(1e-28f, 1.0f)), "just above needs rescue");
  CHECK(cph_needs_rescue(0.0f), "0 needs no rescue");
  CHECK(!cph_needs_rescue(1.0f) && !cph_needs_rescue(CPH_SCALE_FLOAT),
        "1 or 2^120 needs rescue");
  CHECK(cph_needs_rescue(NAN) && cph_needs_rescue(INFINITY) &&
            cph_needs_rescue(-INFINITY),
        "a sum that is not finite needs no rescue");
  CHECK(!cph_needs_rescue(0x1.fffffep127f), "FLT_MAX needs rescue");
}

/* The scaled form's weights (P_R, P_R-1 mx_R): one read at a time, four
 * at a time (reads of different lengths, 0 and 1 among them) and from
 * cph_rows_scaled, bit for bit against the product taken here row by row
 * from the tables, in both precisions. */
static void test_weights(void) {
  enum { N = 8, MAXLEN = 200 };
  static const size_t lens[N] = {150, 0, 1, 2, 149, 200, 151, 37};
  uint8_t ins[N][MAXLEN], del[N][MAXLEN];
  test_rng rng;
  test_rng_init(&rng, 20261126);
  for (size_t r = 0; r < N; r++)
    for (size_t k = 0; k < MAXLEN; k++) {
      ins[r][k] = (uint8_t)test_rng_range(&rng, 0, 127);
      del[r][k] = (uint8_t)test_rng_range(&rng, 0, 127);
    }
  const cph_tables_f *tf = cph_tables_gkl_float();
  const cph_tables_d *td = cph_tables_double(CPH_GKL_DOUBLE);
  for (int dbl = 0; dbl < 2; dbl++) {
    double want[2 * N], one[2 * N], four[2 * N];
    for (size_t r = 0; r < N; r++) {
      double p = 1.0;
      want[2 * r] = want[2 * r + 1] = one[2 * r] = one[2 * r + 1] = 1.0;
      four[2 * r] = four[2 * r + 1] = 1.0;
      for (size_t k = 0; k < lens[r]; k++) {
        const size_t mi = tri_index(ins[r][k], del[r][k]);
        const double mm = dbl ? td->mm[mi] : (double)tf->mm[mi];
        if (k + 1 == lens[r]) {
          want[2 * r] = p * mm;
          want[2 * r + 1] =
              p * (dbl ? td->ph2pr[ins[r][k]] : (double)tf->ph2pr[ins[r][k]]);
        }
        p *= mm;
      }
      cph_weights_scaled(ins[r], del[r], lens[r], dbl, &one[2 * r],
                         &one[2 * r + 1]);
    }
    for (size_t g = 0; g < N; g += 4) {
      const uint8_t *in[4], *de[4];
      for (int r = 0; r < 4; r++) {
        in[r] = ins[g + r];
        de[r] = del[g + r];
      }
      cph_weights_scaled4(in, de, &lens[g], dbl, &four[2 * g]);
    }
    CHECK(memcmp(want, one, sizeof want) == 0,
          "weights one read at a time (dbl %d) differ", dbl);
    CHECK(memcmp(want, four, sizeof want) == 0,
          "weights four reads at a time (dbl %d) differ", dbl);
    /* cph_rows_scaled's, for the non-empty reads. */
    qread q;
    if (!qread_alloc(&q, MAXLEN)) {
      CHECK(0, "out of memory");
      return;
    }
    void *rows = malloc(MAXLEN * sizeof(cph_row_ds));
    for (size_t r = 0; rows && r < N; r++) {
      if (!lens[r])
        continue;
      memcpy(q.ins, ins[r], lens[r]);
      memcpy(q.del, del[r], lens[r]);
      memset(q.q, 30, lens[r]);
      memset(q.gcp, 10, lens[r]);
      memset(q.bases, 'A', lens[r]);
      q.read.length = lens[r];
      double wm = 0, wx = 0;
      cph_rows_scaled(&q.read, dbl, rows, &wm, &wx);
      CHECK(wm == want[2 * r] && wx == want[2 * r + 1],
            "cph_rows_scaled's weights of read %zu (dbl %d) differ", r, dbl);
    }
    free(rows);
    qread_free(&q);
  }
}

/* The scaled form's constants (b, g, a of cph_rows_scaled, products by
 * reciprocals) against the quotients they stand for, taken here from the
 * same tables: within 4 double ulps in double rows, within a float
 * rounding in float rows; and the tables' reciprocal and float prior
 * sections (cph_prep_tables) as the host computes them. */
static void test_scaled_rows(void) {
  enum { LEN = 300 };
  qread q;
  if (!qread_alloc(&q, LEN)) {
    CHECK(0, "out of memory");
    return;
  }
  test_rng rng;
  test_rng_init(&rng, 20261127);
  for (size_t k = 0; k < LEN; k++) {
    q.q[k] = (uint8_t)test_rng_range(&rng, 0, 127);
    q.ins[k] = (uint8_t)test_rng_range(&rng, 1, 127); /* mm > 0 */
    q.del[k] = (uint8_t)test_rng_range(&rng, 1, 127);
    q.gcp[k] = (uint8_t)test_rng_range(&rng, 0, 127);
    q.bases[k] = 'C';
  }
  q.read.length = LEN;
  const cph_tables_f *tf = cph_tables_gkl_float();
  const cph_tables_d *td = cph_tables_double(CPH_GKL_DOUBLE);
  void *rows = malloc(LEN * sizeof(cph_row_ds));
  double *tab = malloc(cph_prep_tables(CPH_GKL_FLOAT, 1, NULL));
  for (int dbl = 0; rows && tab && dbl < 2; dbl++) {
    double wm, wx, worst = 0.0;
    cph_rows_scaled(&q.read, dbl, rows, &wm, &wx);
    double pmm = 1.0, pmx = 1.0, pmy = 1.0;
    for (size_t k = 0; k < LEN; k++) {
      const size_t mi = tri_index(q.ins[k], q.del[k]);
      const unsigned c = q.gcp[k];
      const double mm = dbl ? td->mm[mi] : (double)tf->mm[mi];
      const double mx = dbl ? td->ph2pr[q.ins[k]] : tf->ph2pr[q.ins[k]];
      const double my = dbl ? td->ph2pr[q.del[k]] : tf->ph2pr[q.del[k]];
      const double gg = dbl ? td->ph2pr[c] : tf->ph2pr[c];
      const double gapm = dbl ? 1.0 - td->ph2pr[c] : 1.0f - tf->ph2pr[c];
      const double want[3] = {gapm * pmx / (mm * pmm), gapm * pmy / mm,
                              gg * pmx / (mx * pmm)};
      double got[3];
      if (dbl) {
        const cph_row_ds *r = &((const cph_row_ds *)rows)[k];
        got[0] = r->b, got[1] = r->g, got[2] = r->a;
      } else {
        const cph_row_fs *r = &((const cph_row_fs *)rows)[k];
        got[0] = r->b, got[1] = r->g, got[2] = r->a;
      }
      for (int j = 0; j < 3; j++) {
        const double d = rel_diff(got[j], want[j]);
        worst = d > worst ? d : worst;
      }
      pmm = mm, pmx = mx, pmy = my;
    }
    const double level = dbl ? 4 * 0x1p-52 : 0x1p-23;
    CHECK(worst <= level,
          "scaled rows (dbl %d): a constant %.3g from its quotient (at most "
          "%.3g)",
          dbl, worst, level);
  }
  if (rows && tab) {
    cph_prep_tables(CPH_GKL_FLOAT, 1, tab);
    int bad = 0;
    for (size_t k = 0; k < CPH_MM_SIZE; k++)
      bad += tab[CPH_TAB_INV_MM + k] != 1.0 / (double)tf->mm[k];
    for (size_t k = 0; k < CPH_NQUAL; k++)
      bad += tab[CPH_TAB_INV_PH2PR + k] != 1.0 / (double)tf->ph2pr[k];
    CHECK(bad == 0, "%d reciprocals of the row tables differ", bad);
    /* Float mode's priors, two floats in each double slot. */
    bad = 0;
    for (size_t k = 0; k < CPH_NQUAL; k++) {
      float pri[2];
      memcpy(pri, &tab[CPH_TAB_PRIORS_F + k], sizeof pri);
      bad += pri[0] != 1.0f - tf->ph2pr[k] || pri[1] != tf->ph2pr[k] / 3.0f;
    }
    CHECK(bad == 0, "%d float priors of the row tables differ", bad);
  }
  CHECK(rows && tab, "out of memory");
  free(rows);
  free(tab);
  qread_free(&q);
}

int main(void) {
  test_ph2pr();
  test_mm_exact_zeros();
  test_mm_range_and_formula();
  test_mm_float_vs_double();
  test_mm_java_vs_gkl();
  test_rows_symmetry();
  test_rows_fields();
  test_base_codes();
  test_log10_and_rescue();
  test_weights();
  test_scaled_rows();
  return test_finish();
}
