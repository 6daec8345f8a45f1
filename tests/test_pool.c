/* The host stages' thread pool (engine/pool.h cph_pool_for): every task
 * of a call runs exactly once and has finished when the call returns,
 * over thousands of calls of 0 to 1,000 tasks on more threads than the
 * machine has cores, with pauses longer than the workers' spinning (so
 * that they sleep and are woken) and without (so that a worker still
 * leaving one call meets the next: a task of the next call must not run
 * with the previous call's argument). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/pool.h"
#include "test_util.h"

#define MAX_TASKS 1000

typedef struct task_set {
  atomic_int runs[MAX_TASKS];
} task_set;

static task_set sets[2];

/* Task i of the call whose argument is `arg`: a little work, then its
 * count in that call's set (at the end, so that a count shows a finished
 * task). */
static void task(void *arg, size_t i) {
  task_set *s = arg;
  volatile unsigned x = 0;
  for (unsigned k = 0; k < (unsigned)(i % 7) * 50; k++)
    x += k;
  atomic_fetch_add(&s->runs[i], 1);
}

static void pause_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

static void run_calls(cph_pool *pool, unsigned calls, const char *what) {
  static const size_t sizes[] = {0, 1, 2, 3, 7, 16, 64, 333, MAX_TASKS};
  const size_t n_sizes = sizeof sizes / sizeof *sizes;
  unsigned bad_calls = 0, first_bad = 0;
  for (unsigned c = 0; c < calls; c++) {
    /* Two task sets in turn: one call's argument differs from the call
     * before's, so a task run with the wrong call's argument counts in the
     * wrong set. */
    task_set *s = &sets[c % 2];
    const size_t n = sizes[(c * 7 + c / n_sizes) % n_sizes];
    for (size_t i = 0; i < MAX_TASKS; i++)
      atomic_store(&s->runs[i], 0);
    cph_pool_for(pool, n, task, s);
    int ok = 1;
    for (size_t i = 0; i < MAX_TASKS; i++)
      ok &= atomic_load(&s->runs[i]) == (i < n ? 1 : 0);
    if (!ok && bad_calls++ == 0)
      first_bad = c;
    if (c % 97 == 96)
      pause_us(2000); /* the workers sleep (they spin 200 us) */
  }
  CHECK(bad_calls == 0,
        "%s: %u of %u calls ran a task other than once (first: call %u)", what,
        bad_calls, calls, first_bad);
}

int main(void) {
  run_calls(NULL, 200, "no pool");
  cph_pool *one = cph_pool_create(1);
  CHECK(cph_pool_threads(one) == 1, "a pool of 1: %u threads",
        cph_pool_threads(one));
  run_calls(one, 200, "a pool of 1");
  cph_pool_destroy(one);
  cph_pool *pool = cph_pool_create(8);
  CHECK(pool && cph_pool_threads(pool) == 8, "a pool of 8: %u threads",
        cph_pool_threads(pool));
  run_calls(pool, 5000, "a pool of 8");
  cph_pool_destroy(pool);
  return test_finish();
}
