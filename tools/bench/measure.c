/* Timing one workload on one device: context creation cold and warm, one
 * warm-up, then repetitions with kernel time (OpenCL profiling events,
 * through clphmm_context_stats) and wall time (clphmm_compute, host memory
 * to host memory); accuracy against the reference sample. */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

bench_stat bench_stats_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return (bench_stat){med, v[0], v[n - 1]};
}

static int progress_shown;

void bench_progress(const bench_options *o, double start, const char *fmt,
                    ...) {
  if (!o->progress || bench_now() - start < 2.0)
    return;
  char line[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\r\033[Kclphmm-bench: %s (%.0f s)", line,
          bench_now() - start);
  fflush(stderr);
  progress_shown = 1;
}

void bench_progress_done(const bench_options *o) {
  if (o->progress && progress_shown)
    fprintf(stderr, "\r\033[K");
  progress_shown = 0;
}

/* ---- Context creation cold / warm --------------------------------------- */

/* One pair per read length 2^k up to 1024: builds every variant a workload
 * can use (bins and the tiled path), so creation + this call is the time
 * to a first result. */
typedef struct probe {
  char bases[2048];
  uint8_t quals[4 * 1024];
  clphmm_read reads[11];
  clphmm_haplotype hap;
  clphmm_batch batch;
  double out[11];
} probe;

static void make_probe(probe *p) {
  for (size_t i = 0; i < sizeof p->bases; i++)
    p->bases[i] = "ACGT"[(i * 7 + i / 5) % 4];
  memset(p->quals, 30, sizeof p->quals);
  const uint8_t *q = p->quals;
  for (int k = 0; k < 11; k++) {
    size_t len = (size_t)1 << k;
    p->reads[k] =
        (clphmm_read){p->bases + 5, q, q + len, q + 2 * len, q + 3 * len, len};
  }
  /* Reads are substrings of the haplotype: likely enough that no pair
   * needs the double rescue, whose kernels are built only when needed. */
  p->hap = (clphmm_haplotype){p->bases, 1200};
  p->batch = (clphmm_batch){p->reads, 11, &p->hap, 1};
}

/* Seconds for create + first compute of the probe, or -1. */
static double time_first_result(const clphmm_options *opt, char *err,
                                size_t err_n) {
  probe p;
  make_probe(&p);
  double t0 = bench_now();
  clphmm_context *ctx = NULL;
  if (clphmm_context_create(opt, &ctx)) {
    snprintf(err, err_n, "%s", clphmm_last_error(NULL));
    return -1;
  }
  int bad = clphmm_compute(ctx, &p.batch, 1, p.out) != CLPHMM_SUCCESS;
  double t = bench_now() - t0;
  if (bad)
    snprintf(err, err_n, "%s", clphmm_last_error(ctx));
  clphmm_context_destroy(ctx);
  return bad ? -1 : t;
}

static void remove_tree(const char *dir);

/* Cold: CLPHMM_CACHE_DIR is a new empty directory; warm: the same again. */
static int measure_startup(const clphmm_options *opt, bench_device *d,
                           char *err, size_t err_n) {
  char dir[] = "/tmp/clphmm-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) {
    snprintf(err, err_n, "cannot create a temporary cache directory");
    return 1;
  }
  const char *old = getenv("CLPHMM_CACHE_DIR");
  char *saved = old ? strdup(old) : NULL;
  setenv("CLPHMM_CACHE_DIR", dir, 1);
  d->create_cold = time_first_result(opt, err, err_n);
  d->create_warm = d->create_cold < 0 ? -1 : time_first_result(opt, err, err_n);
  if (saved)
    setenv("CLPHMM_CACHE_DIR", saved, 1);
  else
    unsetenv("CLPHMM_CACHE_DIR");
  free(saved);
  remove_tree(dir);
  return d->create_warm < 0;
}

/* Remove a directory tree (the temporary cache; nothing else). */
static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
      remove_tree(path);
    else
      unlink(path);
  }
  if (d)
    closedir(d);
  rmdir(dir);
}

int bench_device_open(const char *spec, const bench_options *o, bench_device *d,
                      char *err, size_t err_n) {
  memset(d, 0, sizeof *d);
  snprintf(d->spec, sizeof d->spec, "%s", spec);
  d->create_cold = d->create_warm = -1;
  if (!strcmp(spec, "reference")) {
    d->index = -1;
    snprintf(d->info.name, sizeof d->info.name, "CPU reference");
    snprintf(d->info.driver, sizeof d->info.driver, "clphmm %s",
             clphmm_version());
    snprintf(d->info.platform, sizeof d->info.platform, "none");
    return 0;
  }
  clphmm_options opt;
  clphmm_options_init(&opt);
  opt.device = spec;
  opt.precision = o->precision;
  if (o->startup && measure_startup(&opt, d, err, err_n))
    return 1;
  if (clphmm_context_create(&opt, &d->ctx)) {
    snprintf(err, err_n, "%s", clphmm_last_error(NULL));
    return 1;
  }
  clphmm_context_device(d->ctx, &d->info);
  d->index = (long)d->info.index;
  if (clphmm_device_get_plan(d->info.index, &d->plan)) {
    snprintf(err, err_n, "%s", clphmm_last_error(NULL));
    bench_device_close(d);
    return 1;
  }
  return 0;
}

void bench_device_close(bench_device *d) {
  clphmm_context_destroy(d->ctx);
  d->ctx = NULL;
}

/* ---- Repetitions -------------------------------------------------------- */

static int one_call(bench_device *d, const bench_workload *w,
                    const bench_options *o, double *out, double *wall,
                    clphmm_stats *st, char *err, size_t err_n) {
  double t0 = bench_now();
  if (!d->ctx) {
    size_t *off = bench_offsets(w);
    int rc = !off || bench_reference(w, off, 0, w->n_batches, o->precision,
                                     o->threads, out, err, err_n);
    free(off);
    *wall = bench_now() - t0;
    memset(st, 0, sizeof *st);
    st->pairs = w->n_pairs;
    st->cells = w->cells;
    st->kernel_seconds = *wall; /* all of it is compute */
    return rc;
  }
  if (clphmm_compute(d->ctx, w->batches, w->n_batches, out)) {
    snprintf(err, err_n, "%s", clphmm_last_error(d->ctx));
    return 1;
  }
  *wall = bench_now() - t0;
  clphmm_context_stats(d->ctx, st);
  return 0;
}

static void fill_identity(const bench_device *d, const bench_workload *w,
                          const bench_options *o, bench_run *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->device, sizeof r->device, "%s", d->info.name);
  snprintf(r->driver, sizeof r->driver, "%s", d->info.driver);
  snprintf(r->platform, sizeof r->platform, "%s", d->info.platform);
  snprintf(r->variants, sizeof r->variants, "%s", d->plan.variants);
  snprintf(r->shuffle, sizeof r->shuffle, "%s", d->plan.shuffle);
  r->device_index = d->index;
  r->w = *w;
  r->w.batches = NULL;
  r->w.reads = NULL;
  r->w.haps = NULL;
  r->w.bases = NULL;
  r->w.quals = NULL;
  r->w.dataset = NULL;
  r->precision = o->precision;
  r->create_cold = d->create_cold;
  r->create_warm = d->create_warm;
  r->max_err = r->mean_err = NAN;
}

void bench_measure(bench_device *d, const bench_workload *w,
                   const size_t *offsets, const bench_sample *s,
                   const bench_options *o, bench_run *r) {
  fill_identity(d, w, o, r);
  double *out = malloc((w->n_pairs ? w->n_pairs : 1) * sizeof *out);
  double *kern = calloc((size_t)o->reps, sizeof *kern);
  double *wall = calloc((size_t)o->reps, sizeof *wall);
  if (!out || !kern || !wall) {
    snprintf(r->error, sizeof r->error, "out of memory for %zu results",
             w->n_pairs);
    goto done;
  }
  double start = bench_now();
  for (int k = -1; k < o->reps; k++) {
    bench_progress(o, start, "%s: %s, run %d of %d", r->device, w->name, k + 2,
                   o->reps + 1);
    double t;
    if (one_call(d, w, o, out, &t, &r->last, r->error, sizeof r->error))
      goto done;
    if (k >= 0) {
      kern[k] = r->last.kernel_seconds;
      wall[k] = t;
    }
  }
  bench_progress_done(o);
  r->reps = o->reps;
  r->kernel = bench_stats_of(kern, o->reps);
  r->wall = bench_stats_of(wall, o->reps);
  r->rescued = r->last.rescued_pairs;
  r->launches = r->last.launches;
  bench_sample_compare(s, w, offsets, out, &r->max_err, &r->mean_err);
  r->checked_pairs = s->n_pairs;
  r->ok = 1;
done:
  bench_progress_done(o);
  free(out);
  free(kern);
  free(wall);
}
