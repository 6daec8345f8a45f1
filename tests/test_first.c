/* Which reads float mode sends to the double rescue first (engine/first.h):
 * classes by powers of 2 of rows from CPH_FIRST_MIN_ROWS; a class goes
 * first once seen enough and rescued often enough, unless a longer class
 * was seen rescued too rarely; counts are halved past CPH_FIRST_MEMORY. */
#include <string.h>

#include "engine/first.h"
#include "test_util.h"

static void test_classes(void) {
  CHECK(cph_first_class(0) == -1 &&
            cph_first_class(CPH_FIRST_MIN_ROWS - 1) == -1,
        "short reads counted");
  CHECK(cph_first_class(CPH_FIRST_MIN_ROWS) == 0 &&
            cph_first_class(2 * CPH_FIRST_MIN_ROWS - 1) == 0 &&
            cph_first_class(2 * CPH_FIRST_MIN_ROWS) == 1 &&
            cph_first_class((size_t)CPH_FIRST_MIN_ROWS << 30) ==
                CPH_FIRST_CLASSES - 1,
        "classes %d %d %d %d", cph_first_class(CPH_FIRST_MIN_ROWS),
        cph_first_class(2 * CPH_FIRST_MIN_ROWS - 1),
        cph_first_class(2 * CPH_FIRST_MIN_ROWS),
        cph_first_class((size_t)CPH_FIRST_MIN_ROWS << 30));
}

/* n pairs of reads of `rows` rows, `rescued` of them rescued. */
static void seen(cph_first_counts *m, size_t rows, int n, int rescued) {
  cph_first_counts call;
  memset(&call, 0, sizeof call);
  for (int i = 0; i < n; i++)
    cph_first_count(&call, rows, i < rescued);
  cph_first_learn(m, &call);
}

static void test_rows(void) {
  const size_t k1 = CPH_FIRST_MIN_ROWS, k2 = 2 * k1, k4 = 4 * k1;
  cph_first_counts m;
  memset(&m, 0, sizeof m);
  CHECK(cph_first_rows(&m) == 0, "first with nothing seen");
  seen(&m, 500, 100, 100);
  CHECK(cph_first_rows(&m) == 0, "short reads sent first");
  seen(&m, k2 + 5, CPH_FIRST_MIN_SEEN - 1, CPH_FIRST_MIN_SEEN - 1);
  CHECK(cph_first_rows(&m) == 0, "first after too few pairs");
  seen(&m, k2 + 5, 1, 1);
  CHECK(cph_first_rows(&m) == k2, "rows %zu, want %zu", cph_first_rows(&m), k2);
  /* A shorter class rescued too rarely stays behind; one rescued often
   * enough joins. */
  seen(&m, k1 + 3, 40, 20);
  CHECK(cph_first_rows(&m) == k2, "rows %zu, want %zu", cph_first_rows(&m), k2);
  seen(&m, k1 + 3, 400, 400);
  CHECK(cph_first_rows(&m) == k1, "rows %zu, want %zu", cph_first_rows(&m), k1);
  /* A longer class seen rescued too rarely stops every shorter one. */
  seen(&m, k4 + 1, 40, 31);
  CHECK(cph_first_rows(&m) == 0, "rows %zu with a longer class at 77%%",
        cph_first_rows(&m));
  /* Memory: past CPH_FIRST_MEMORY pairs a class's counts are halved, so
   * that it follows newer calls. */
  seen(&m, k4 + 1, 3 * CPH_FIRST_MEMORY, 3 * CPH_FIRST_MEMORY);
  const int c4 = cph_first_class(k4 + 1);
  CHECK(m.seen[c4] <= CPH_FIRST_MEMORY && cph_first_rows(&m) == k1,
        "class of %zu rows: seen %.0f, rows %zu", k4 + 1, m.seen[c4],
        cph_first_rows(&m));
}

int main(void) {
  test_classes();
  test_rows();
  return test_finish();
}
