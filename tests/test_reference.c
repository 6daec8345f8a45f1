/* The CPU reference against every fixture in tests/data, in both precision
 * modes, at the spec's acceptance levels: double within 1e-7 of double
 * expectations, float (with rescue) within 1e-5 of any expectation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

#define LEVEL_DOUBLE 1e-7
#define LEVEL_FLOAT 1e-5

/* Half a unit in the last printed digit of a "%e" (7 significant digits)
 * value, so that files printed that way are compared fairly. */
static double print_slack_e7(double v) {
  if (v == 0 || isinf(v))
    return 0;
  return 0.5e-6 * pow(10.0, floor(log10(fabs(v))));
}

static double *reference(const clphmm_dataset *ds, clphmm_precision p) {
  size_t n = clphmm_dataset_n_pairs(ds);
  double *out = malloc((n ? n : 1) * sizeof *out);
  CHECK(out != NULL, "out of memory");
  if (out)
    CHECK_STATUS(clphmm_reference(clphmm_dataset_batches(ds),
                                  clphmm_dataset_n_batches(ds), p, out),
                 CLPHMM_SUCCESS, NULL);
  return out;
}

static clphmm_dataset *load(const char *name) {
  clphmm_dataset *ds = NULL;
  CHECK_STATUS(clphmm_dataset_read_file(test_data_path(name), 0, &ds),
               CLPHMM_SUCCESS, NULL);
  return ds;
}

/* Compare against the 7th column of a one-pair-per-line fixture. */
static void check_pairs_file(const char *name, clphmm_precision p,
                             double level) {
  clphmm_dataset *ds = load(name);
  if (!ds)
    return;
  const double *want = clphmm_dataset_expected(ds);
  CHECK(want != NULL, "%s: no expected values", name);
  double *got = reference(ds, p);
  double worst = 0;
  size_t n = clphmm_dataset_n_pairs(ds), bad = 0;
  for (size_t i = 0; want && got && i < n; i++) {
    double d = test_abs_diff(got[i], want[i]);
    if (d > worst)
      worst = d;
    if (!(d <= level + print_slack_e7(want[i])) && bad++ < 5)
      CHECK(0, "%s pair %zu (%s): got %.10g want %.7g (diff %.3g)", name, i,
            p ? "double" : "float", got[i], want[i], d);
  }
  CHECK(bad == 0, "%s: %zu pairs beyond %g", name, bad, level);
  printf("%-32s %-6s %4zu pairs, max |diff| %.3g\n", name,
         p ? "double" : "float", n, worst);
  free(got);
  clphmm_dataset_destroy(ds);
}

/* Compare a batch file against a one-number-per-line expectation file. */
static void check_batch_file(const char *in, const char *expected,
                             clphmm_precision p, double level) {
  clphmm_dataset *ds = load(in);
  if (!ds)
    return;
  double *want = NULL;
  size_t nw = test_read_numbers(test_data_path(expected), &want);
  size_t n = clphmm_dataset_n_pairs(ds), bad = 0;
  CHECK(nw == n, "%s: %zu expectations for %zu pairs", expected, nw, n);
  double *got = reference(ds, p), worst = 0;
  for (size_t i = 0; got && i < n && i < nw; i++) {
    double d = test_abs_diff(got[i], want[i]);
    if (d > worst)
      worst = d;
    if (!(d <= level) && bad++ < 5)
      CHECK(0, "%s pair %zu: got %.12g want %.12g", in, i, got[i], want[i]);
  }
  CHECK(bad == 0, "%s vs %s: %zu pairs beyond %g", in, expected, bad, level);
  printf("%-32s %-6s %4zu pairs, max |diff| %.3g\n", expected,
         p ? "double" : "float", n, worst);
  free(got);
  free(want);
  clphmm_dataset_destroy(ds);
}

int main(void) {
  check_pairs_file("expected.Java.hmmresults.txt", CLPHMM_PRECISION_DOUBLE,
                   LEVEL_DOUBLE);
  check_pairs_file("expected.Java.hmmresults.txt", CLPHMM_PRECISION_FLOAT,
                   LEVEL_FLOAT);
  check_pairs_file("expected.AVX.hmmresults.txt", CLPHMM_PRECISION_FLOAT,
                   LEVEL_FLOAT);
  check_pairs_file("pairhmm-testdata.txt", CLPHMM_PRECISION_FLOAT, LEVEL_FLOAT);
  check_pairs_file("pairhmm-testdata.txt", CLPHMM_PRECISION_DOUBLE,
                   LEVEL_FLOAT);
  const char *sets[] = {"tiny", "10s"};
  for (int s = 0; s < 2; s++) {
    char in[64], ed[64], ef[64];
    snprintf(in, sizeof in, "%s.in", sets[s]);
    snprintf(ed, sizeof ed, "%s.expected-double.txt", sets[s]);
    snprintf(ef, sizeof ef, "%s.expected-float.txt", sets[s]);
    check_batch_file(in, ed, CLPHMM_PRECISION_DOUBLE, LEVEL_DOUBLE);
    check_batch_file(in, ef, CLPHMM_PRECISION_FLOAT, LEVEL_FLOAT);
    check_batch_file(in, ed, CLPHMM_PRECISION_FLOAT, LEVEL_FLOAT);
  }
  return test_finish();
}
