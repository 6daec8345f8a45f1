/* The union of a call's kernel intervals (engine/spans.h), which is its
 * kernel time, and their sum: disjoint intervals add up, overlapping and
 * nested ones count once in the union, touching ones join, empty and reversed
 * ones count nothing, order does not matter, and a cleared set starts again
 * from zero. Checked against a direct count over a nanosecond grid on random
 * sets. */
#include <stdlib.h>
#include <string.h>

#include "engine/spans.h"
#include "test_util.h"

static double seconds(uint64_t ns) {
  return (double)ns * 1e-9;
}

static void check(const cph_span *v, size_t n, uint64_t want_ns,
                  const char *what) {
  cph_spans s;
  memset(&s, 0, sizeof s);
  for (size_t i = 0; i < n; i++)
    cph_spans_add(&s, v[i].start, v[i].end);
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += v[i].end > v[i].start ? v[i].end - v[i].start : 0;
  CHECK(cph_spans_sum_seconds(&s) == seconds(sum), "%s: sum %.9f, want %.9f",
        what, cph_spans_sum_seconds(&s), seconds(sum));
  const double got = cph_spans_union_seconds(&s);
  CHECK(got == seconds(want_ns), "%s: %.9f s, want %.9f", what, got,
        seconds(want_ns));
  cph_spans_release(&s);
}

/* Random intervals on [0, 200) against a count of the covered points. */
static void check_random(test_rng *rng) {
  for (int round = 0; round < 200; round++) {
    cph_span v[12];
    unsigned char covered[200] = {0};
    const size_t n = test_rng_range(rng, 0, 12);
    for (size_t i = 0; i < n; i++) {
      uint64_t a = test_rng_range(rng, 0, 199), b = test_rng_range(rng, 0, 199);
      v[i] = (cph_span){a, b}; /* b < a: reversed, counts nothing */
      for (uint64_t t = a; t < b; t++)
        covered[t] = 1;
    }
    uint64_t want = 0;
    for (size_t t = 0; t < sizeof covered; t++)
      want += covered[t];
    check(v, n, want, "random intervals");
  }
}

int main(void) {
  test_rng rng;
  test_rng_init(&rng, 20261126);
  check(NULL, 0, 0, "no intervals");
  const cph_span disjoint[] = {{10, 20}, {30, 45}, {100, 101}};
  check(disjoint, 3, 26, "disjoint");
  const cph_span overlap[] = {{30, 60}, {10, 40}, {50, 55}, {58, 70}};
  check(overlap, 4, 60, "overlapping, nested, out of order");
  const cph_span touch[] = {{0, 5}, {5, 9}, {9, 9}, {12, 11}};
  check(touch, 4, 9, "touching, empty, reversed");
  const cph_span big[] = {{1000000000ull, 3500000000ull},
                          {2000000000ull, 2500000000ull}};
  check(big, 2, 2500000000ull, "seconds apart");
  /* Many intervals (the array grows), then cleared. */
  cph_spans s;
  memset(&s, 0, sizeof s);
  for (uint64_t i = 0; i < 1000; i++)
    cph_spans_add(&s, 10 * i, 10 * i + 5);
  CHECK(cph_spans_union_seconds(&s) == seconds(5000), "1000 intervals: %.9f",
        cph_spans_union_seconds(&s));
  cph_spans_clear(&s);
  cph_spans_add(&s, 7, 9);
  CHECK(cph_spans_union_seconds(&s) == seconds(2), "after clearing: %.9f",
        cph_spans_union_seconds(&s));
  cph_spans_release(&s);
  check_random(&rng);
  return test_finish();
}
