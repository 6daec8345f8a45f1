/* The CPU reference on all cores, and the accuracy sample: reference
 * results for a spread of batches, computed once per workload and compared
 * with every device. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

typedef struct ref_job {
  const bench_workload *w;
  const size_t *offsets;
  const size_t *list; /* batch indices, or NULL for b0..b1 */
  size_t n;           /* batches to do */
  size_t b0;
  const size_t *out_off; /* where each listed batch's results go */
  clphmm_precision p;
  double *out;
  pthread_mutex_t lock;
  size_t next;
  clphmm_status status;
  char err[512];
} ref_job;

/* Batches are handed out one at a time: regions differ a lot in size. */
static void *ref_worker(void *arg) {
  ref_job *j = arg;
  for (;;) {
    pthread_mutex_lock(&j->lock);
    size_t k = j->next++;
    int stop = k >= j->n || j->status;
    pthread_mutex_unlock(&j->lock);
    if (stop)
      return NULL;
    size_t b = j->list ? j->list[k] : j->b0 + k;
    size_t at = j->list ? j->out_off[k] : j->offsets[b] - j->offsets[j->b0];
    clphmm_status st =
        clphmm_reference(&j->w->batches[b], 1, j->p, j->out + at);
    if (st) {
      pthread_mutex_lock(&j->lock);
      if (!j->status) {
        j->status = st;
        snprintf(j->err, sizeof j->err, "reference, batch %zu: %s", b,
                 clphmm_last_error(NULL));
      }
      pthread_mutex_unlock(&j->lock);
    }
  }
}

static unsigned n_threads(unsigned want) {
  if (want)
    return want;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

static int run_job(ref_job *j, unsigned threads, char *err, size_t err_n) {
  pthread_t t[256];
  unsigned nt = n_threads(threads), started = 0;
  if (nt > 256)
    nt = 256;
  if (nt > j->n)
    nt = j->n ? (unsigned)j->n : 1;
  pthread_mutex_init(&j->lock, NULL);
  for (unsigned i = 1; i < nt; i++)
    if (pthread_create(&t[i], NULL, ref_worker, j) == 0)
      started = i;
    else
      break;
  ref_worker(j);
  for (unsigned i = 1; i <= started; i++)
    pthread_join(t[i], NULL);
  pthread_mutex_destroy(&j->lock);
  if (j->status)
    snprintf(err, err_n, "%s", j->err);
  return j->status ? 1 : 0;
}

int bench_reference(const bench_workload *w, const size_t *offsets, size_t b0,
                    size_t b1, clphmm_precision p, unsigned threads,
                    double *out, char *err, size_t err_n) {
  ref_job j;
  memset(&j, 0, sizeof j);
  j.w = w;
  j.offsets = offsets;
  j.b0 = b0;
  j.n = b1 - b0;
  j.p = p;
  j.out = out;
  return run_job(&j, threads, err, err_n);
}

static uint64_t batch_cells(const clphmm_batch *b) {
  uint64_t r = 0, h = 0;
  for (size_t i = 0; i < b->n_reads; i++)
    r += b->reads[i].length;
  for (size_t i = 0; i < b->n_haplotypes; i++)
    h += b->haplotypes[i].length;
  return r * h;
}

/* Batches spread evenly over the workload, up to the sample's pair and
 * cell budgets (at least one batch). */
static size_t pick(const bench_workload *w, const size_t *offsets,
                   const bench_options *o, size_t *list) {
  size_t nb = w->n_batches, n = 0, pairs = 0;
  if (o->check_all) {
    for (size_t b = 0; b < nb; b++)
      list[n++] = b;
    return n;
  }
  double cells = 0;
  size_t avg = w->n_pairs / (nb ? nb : 1);
  size_t want = o->sample_pairs / (avg ? avg : 1) + 1;
  size_t step = nb / (want ? want : 1);
  for (size_t b = 0; b < nb; b += step ? step : 1) {
    double c = (double)batch_cells(&w->batches[b]);
    if (n && (pairs >= o->sample_pairs || cells + c > o->sample_cells))
      break;
    list[n++] = b;
    pairs += offsets[b + 1] - offsets[b];
    cells += c;
  }
  return n;
}

int bench_sample_make(const bench_workload *w, const size_t *offsets,
                      const bench_options *o, bench_sample *s, char *err,
                      size_t err_n) {
  memset(s, 0, sizeof *s);
  if (w->n_batches == 0)
    return 0;
  s->batch = malloc(w->n_batches * sizeof *s->batch);
  size_t *at = malloc(w->n_batches * sizeof *at);
  if (!s->batch || !at) {
    free(at);
    snprintf(err, err_n, "out of memory for the accuracy sample");
    return 1;
  }
  s->n = pick(w, offsets, o, s->batch);
  for (size_t k = 0; k < s->n; k++) {
    at[k] = s->n_pairs;
    s->n_pairs += offsets[s->batch[k] + 1] - offsets[s->batch[k]];
  }
  s->ref = malloc((s->n_pairs ? s->n_pairs : 1) * sizeof *s->ref);
  ref_job j;
  memset(&j, 0, sizeof j);
  j.w = w;
  j.offsets = offsets;
  j.list = s->batch;
  j.out_off = at;
  j.n = s->n;
  j.p = o->precision;
  j.out = s->ref;
  int rc = s->ref ? run_job(&j, o->threads, err, err_n) : 1;
  if (!s->ref)
    snprintf(err, err_n, "out of memory for the accuracy sample");
  free(at);
  return rc;
}

void bench_sample_free(bench_sample *s) {
  free(s->batch);
  free(s->ref);
  memset(s, 0, sizeof *s);
}

void bench_sample_compare(const bench_sample *s, const bench_workload *w,
                          const size_t *offsets, const double *out,
                          double *max_err, double *mean_err) {
  (void)w;
  double worst = 0, sum = 0;
  size_t n = 0, k = 0;
  for (size_t i = 0; i < s->n; i++) {
    size_t b = s->batch[i];
    for (size_t p = offsets[b]; p < offsets[b + 1]; p++, k++) {
      double x = out[p], y = s->ref[k];
      double d = x == y ? 0.0 : fabs(x - y); /* -inf == -inf */
      if (!(d <= worst))                     /* NaN counts as the worst */
        worst = d;
      sum += d;
      n++;
    }
  }
  *max_err = worst;
  *mean_err = n ? sum / (double)n : 0;
}
