/* Thread safety: clphmm_compute on one context from several threads at
 * once (the calls run one after the other) and on several contexts of one
 * device at once give the results of a single thread, bit for bit, in both
 * precisions; statistics stay those of a whole call. Exit 77 when no
 * OpenCL device exists (unless CLPHMM_TEST_REQUIRE_DEVICE). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define THREADS 4
#define ROUNDS 3

typedef struct job {
  clphmm_context *ctx;
  const clphmm_batch *batches;
  size_t n_batches, n_pairs;
  const double *want;
  int mismatches, failures, bad_stats;
} job;

static void *worker(void *arg) {
  job *j = arg;
  double *out = malloc(j->n_pairs * sizeof *out);
  for (int r = 0; r < ROUNDS && out; r++) {
    if (clphmm_compute(j->ctx, j->batches, j->n_batches, out) !=
        CLPHMM_SUCCESS) {
      j->failures++;
      continue;
    }
    j->mismatches += memcmp(out, j->want, j->n_pairs * sizeof *out) != 0;
    clphmm_stats st;
    clphmm_context_stats(j->ctx, &st);
    /* Another thread's call may have finished since: its pairs are the
     * same, so a whole call's statistics read the same count. */
    j->bad_stats += st.pairs != j->n_pairs;
  }
  free(out);
  return NULL;
}

static void run(clphmm_context **ctxs, int shared, const clphmm_dataset *ds,
                const double *want, const char *what) {
  job jobs[THREADS];
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (job){ctxs[shared ? 0 : i],
                    clphmm_dataset_batches(ds),
                    clphmm_dataset_n_batches(ds),
                    clphmm_dataset_n_pairs(ds),
                    want,
                    0,
                    0,
                    0};
    CHECK(pthread_create(&t[i], NULL, worker, &jobs[i]) == 0, "pthread_create");
  }
  int mism = 0, fail = 0, stats = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    mism += jobs[i].mismatches;
    fail += jobs[i].failures;
    stats += jobs[i].bad_stats;
  }
  CHECK(fail == 0, "%s: %d calls failed", what, fail);
  CHECK(mism == 0, "%s: %d of %d calls differ from one thread's results", what,
        mism, THREADS * ROUNDS);
  CHECK(stats == 0, "%s: %d statistics of a partial call", what, stats);
  printf("%s: %d threads x %d calls, bit-identical\n", what, THREADS, ROUNDS);
}

int main(void) {
  clphmm_dataset *ds = NULL;
  CHECK_STATUS(clphmm_dataset_read_file(test_data_path("tiny.in"), 0, &ds),
               CLPHMM_SUCCESS, NULL);
  if (!ds)
    return test_finish();
  const size_t n = clphmm_dataset_n_pairs(ds);
  for (int p = 0; p < 2; p++) {
    clphmm_options o;
    clphmm_options_init(&o);
    o.precision = p ? CLPHMM_PRECISION_DOUBLE : CLPHMM_PRECISION_FLOAT;
    clphmm_context *ctxs[THREADS] = {0};
    for (int i = 0; i < THREADS; i++) {
      clphmm_status st = clphmm_context_create(&o, &ctxs[i]);
      if (st == CLPHMM_ERROR_NO_OPENCL || st == CLPHMM_ERROR_NO_DEVICE) {
        printf("no OpenCL device: %s\n", clphmm_last_error(NULL));
        clphmm_dataset_destroy(ds);
        return getenv("CLPHMM_TEST_REQUIRE_DEVICE") ? 1 : 77;
      }
      CHECK_STATUS(st, CLPHMM_SUCCESS, NULL);
    }
    double *want = malloc(n * sizeof *want);
    CHECK_STATUS(clphmm_compute(ctxs[0], clphmm_dataset_batches(ds),
                                clphmm_dataset_n_batches(ds), want),
                 CLPHMM_SUCCESS, ctxs[0]);
    const char *mode = p ? "double" : "float";
    char what[64];
    snprintf(what, sizeof what, "%s, one context", mode);
    run(ctxs, 1, ds, want, what);
    snprintf(what, sizeof what, "%s, a context per thread", mode);
    run(ctxs, 0, ds, want, what);
    free(want);
    for (int i = 0; i < THREADS; i++)
      clphmm_context_destroy(ctxs[i]);
  }
  clphmm_dataset_destroy(ds);
  return test_finish();
}
