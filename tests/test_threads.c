/* Thread safety: clphmm_compute on one context from several threads at
 * once (the calls run one after the other) and on several contexts of one
 * device at once give the results of a single thread, bit for bit, in both
 * precisions; statistics stay those of a whole call. Threads whose calls
 * on one context fail (each its own invalid base) while others compute
 * there read clphmm_last_error(context) whole: always one of the failures'
 * messages. scripts/tsan.sh runs it under ThreadSanitizer. Exit 77 when no
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

/* An input that fails validation: one pair whose read has an invalid base
 * at position `bad` (so that each thread's message differs). */
#define BAD_LENGTH 8

typedef struct bad_input {
  char bases[BAD_LENGTH];
  uint8_t quals[BAD_LENGTH];
  clphmm_read read;
  clphmm_haplotype hap;
  clphmm_batch batch;
} bad_input;

static void bad_input_init(bad_input *b, int bad) {
  memcpy(b->bases, "ACGTACGT", BAD_LENGTH);
  b->bases[bad] = 'B';
  memset(b->quals, 30, sizeof b->quals);
  b->read = (clphmm_read){b->bases, b->quals, b->quals,
                          b->quals, b->quals, BAD_LENGTH};
  b->hap = (clphmm_haplotype){"ACGTACGTAC", 10};
  b->batch = (clphmm_batch){&b->read, 1, &b->hap, 1};
}

typedef struct error_job {
  job good; /* the valid calls, as in worker() */
  const bad_input *bad;
  char *const *messages; /* each thread's failure's message, one thread alone */
  int wrong_status, torn;
} error_job;

/* One context, every thread in turn: a valid call, a failing call, the
 * context's last error (any thread's failure, but whole). */
static void *error_worker(void *arg) {
  error_job *j = arg;
  double *out = malloc(j->good.n_pairs * sizeof *out);
  for (int r = 0; r < ROUNDS && out; r++) {
    if (clphmm_compute(j->good.ctx, j->good.batches, j->good.n_batches, out) !=
        CLPHMM_SUCCESS)
      j->good.failures++;
    else
      j->good.mismatches +=
          memcmp(out, j->good.want, j->good.n_pairs * sizeof *out) != 0;
    double one;
    j->wrong_status += clphmm_compute(j->good.ctx, &j->bad->batch, 1, &one) !=
                       CLPHMM_ERROR_INVALID_BASE;
    const char *msg = clphmm_last_error(j->good.ctx);
    int known = 0;
    for (int i = 0; i < THREADS; i++)
      known |= strcmp(msg, j->messages[i]) == 0;
    j->torn += !known;
  }
  free(out);
  return NULL;
}

static void run_errors(clphmm_context *ctx, const clphmm_dataset *ds,
                       const double *want, const char *what) {
  bad_input bad[THREADS];
  char *messages[THREADS];
  for (int i = 0; i < THREADS; i++) {
    bad_input_init(&bad[i], i);
    double one;
    CHECK_STATUS(clphmm_compute(ctx, &bad[i].batch, 1, &one),
                 CLPHMM_ERROR_INVALID_BASE, ctx);
    messages[i] = strdup(clphmm_last_error(ctx));
    CHECK(messages[i] && (i == 0 || strcmp(messages[i], messages[0]) != 0),
          "%s: thread %d's message: %s", what, i, clphmm_last_error(ctx));
    if (!messages[i])
      return;
  }
  error_job jobs[THREADS];
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (error_job){{ctx, clphmm_dataset_batches(ds),
                           clphmm_dataset_n_batches(ds),
                           clphmm_dataset_n_pairs(ds), want, 0, 0, 0},
                          &bad[i],
                          messages,
                          0,
                          0};
    CHECK(pthread_create(&t[i], NULL, error_worker, &jobs[i]) == 0,
          "pthread_create");
  }
  int mism = 0, fail = 0, wrong = 0, torn = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    mism += jobs[i].good.mismatches;
    fail += jobs[i].good.failures;
    wrong += jobs[i].wrong_status;
    torn += jobs[i].torn;
  }
  CHECK(fail == 0, "%s: %d valid calls failed", what, fail);
  CHECK(mism == 0, "%s: %d valid calls differ from one thread's results", what,
        mism);
  CHECK(wrong == 0, "%s: %d invalid calls without INVALID_BASE", what, wrong);
  CHECK(torn == 0, "%s: %d last errors that are no thread's message", what,
        torn);
  for (int i = 0; i < THREADS; i++)
    free(messages[i]);
  printf("%s: %d threads x %d valid and failing calls, last errors whole\n",
         what, THREADS, ROUNDS);
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
    snprintf(what, sizeof what, "%s, failing calls on one context", mode);
    run_errors(ctxs[0], ds, want, what);
    free(want);
    for (int i = 0; i < THREADS; i++)
      clphmm_context_destroy(ctxs[i]);
  }
  clphmm_dataset_destroy(ds);
  return test_finish();
}
