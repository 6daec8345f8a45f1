/* Minimal test harness: CHECK macros that count failures and keep going,
 * a seeded random generator, fixture paths. Each test program ends with
 * `return test_finish();`, which prints "N passed, M failed". */
#ifndef CLPHMM_TEST_UTIL_H
#define CLPHMM_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "clphmm.h"

extern int test_checks_passed;
extern int test_checks_failed;

void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (cond)                                                                  \
      test_checks_passed++;                                                    \
    else                                                                       \
      test_fail(__FILE__, __LINE__, __VA_ARGS__);                              \
  } while (0)

/* Checks that `expr` returns `want`; on mismatch prints both statuses and
 * clphmm_last_error(ctx). Evaluates to the status. */
#define CHECK_STATUS(expr, want, ctx)                                          \
  test_check_status((expr), (want), (ctx), #expr, __FILE__, __LINE__)
clphmm_status test_check_status(clphmm_status got, clphmm_status want,
                                const clphmm_context *ctx, const char *expr,
                                const char *file, int line);

/* Prints the summary line and returns the process exit status. */
int test_finish(void);

/* Set environment variable `name` to `value` (NULL: unset it); returns
 * its value before (a copy, or NULL), for test_env_restore. */
char *test_env_set(const char *name, const char *value);
/* Put back what test_env_set returned, and free it. */
void test_env_restore(const char *name, char *saved);

/* Path of a fixture in tests/data (static buffer). */
const char *test_data_path(const char *name);

/* Read a file of one number per line ("-inf" allowed). Returns count, fills
 * *values (malloc'd). Aborts the test on I/O failure. */
size_t test_read_numbers(const char *path, double **values);

/* xorshift64* generator; seed from CLPHMM_TEST_SEED or the given default. */
typedef struct test_rng {
  uint64_t s;
} test_rng;
void test_rng_init(test_rng *rng, uint64_t default_seed);
uint64_t test_rng_next(test_rng *rng);
/* Uniform in [lo, hi]. */
unsigned test_rng_range(test_rng *rng, unsigned lo, unsigned hi);

/* Compare two log10 likelihoods; -inf equals -inf. */
double test_abs_diff(double a, double b);

#endif
