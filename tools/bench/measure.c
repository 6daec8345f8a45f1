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
  opt.profile = 1; /* the kernel column ($CLPHMM_PROFILE=0: without it) */
  if (o->startup && measure_startup(&opt, d, err, err_n))
    return 1;
  if (clphmm_context_create(&opt, &d->ctx)) {
    snprintf(err, err_n, "%s", clphmm_last_error(NULL));
    return 1;
  }
  clphmm_context_device(d->ctx, &d->info);
  d->index = (long)d->info.index;
  /* Several devices: "2 x NAME", or the first's name "+ N more". */
  const size_t n = clphmm_context_device_count(d->ctx);
  if (n > 1) {
    int same = 1;
    for (size_t i = 1; i < n; i++) {
      clphmm_device_info other;
      clphmm_context_device_at(d->ctx, i, &other);
      same &= strcmp(other.name, d->info.name) == 0;
    }
    char first[sizeof d->info.name];
    snprintf(first, sizeof first, "%s", d->info.name);
    if (same)
      snprintf(d->info.name, sizeof d->info.name, "%zu x %.200s", n, first);
    else
      snprintf(d->info.name, sizeof d->info.name, "%.200s + %zu more", first,
               n - 1);
  }
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

/* Cells of batches [b0, b1). */
static uint64_t range_cells(const bench_workload *w, size_t b0, size_t b1) {
  uint64_t cells = 0;
  for (size_t b = b0; b < b1; b++) {
    const clphmm_batch *bt = &w->batches[b];
    uint64_t sr = 0, sh = 0;
    for (size_t i = 0; i < bt->n_reads; i++)
      sr += bt->reads[i].length;
    for (size_t i = 0; i < bt->n_haplotypes; i++)
      sh += bt->haplotypes[i].length;
    cells += sr * sh;
  }
  return cells;
}

/* One clphmm_compute of batches [b0, b1) into `out` (their results), timed;
 * the CPU reference on all cores when the device has no context. */
static int one_call(bench_device *d, const bench_workload *w,
                    const size_t *offsets, size_t b0, size_t b1,
                    const bench_options *o, double *out, double *wall,
                    clphmm_stats *st, char *err, size_t err_n) {
  double t0 = bench_now();
  if (!d->ctx) {
    int rc = bench_reference(w, offsets, b0, b1, o->precision, o->threads, out,
                             err, err_n);
    *wall = bench_now() - t0;
    memset(st, 0, sizeof *st);
    st->pairs = offsets[b1] - offsets[b0];
    st->cells = range_cells(w, b0, b1);
    st->kernel_seconds = st->wall_seconds = *wall; /* all of it is compute */
    return rc;
  }
  if (clphmm_compute(d->ctx, w->batches + b0, b1 - b0, out)) {
    snprintf(err, err_n, "%s", clphmm_last_error(d->ctx));
    return 1;
  }
  *wall = bench_now() - t0;
  clphmm_context_stats(d->ctx, st);
  return 0;
}

static bench_stages stages_of(const clphmm_stats *st) {
  return (bench_stages){
      st->wall_seconds,   st->prepare_seconds, st->upload_seconds,
      st->kernel_seconds, st->rows_seconds,    st->download_seconds,
      st->rescue_seconds, st->finish_seconds,  st->chunks};
}

/* The index of the lower median of v[0..n) (v is not changed). */
static size_t median_index(const double *v, size_t n) {
  double *s = malloc(n * sizeof *s);
  if (!s)
    return 0;
  memcpy(s, v, n * sizeof *s);
  bench_stats_of(s, (int)n); /* sorts s */
  double m = s[(n - 1) / 2];
  free(s);
  for (size_t i = 0; i < n; i++)
    if (v[i] == m)
      return i;
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

/* Timings of n timed calls. */
typedef struct timings {
  double *kernel, *wall;
  bench_stages *stages;
  size_t n;
} timings;

static int timings_alloc(timings *t, size_t n) {
  t->n = n;
  t->kernel = calloc(n, sizeof *t->kernel);
  t->wall = calloc(n, sizeof *t->wall);
  t->stages = calloc(n, sizeof *t->stages);
  return t->kernel && t->wall && t->stages ? 0 : -1;
}

static void timings_free(timings *t) {
  free(t->kernel);
  free(t->wall);
  free(t->stages);
}

static void timings_record(timings *t, size_t k, double wall,
                           const clphmm_stats *st) {
  t->kernel[k] = st->kernel_seconds;
  t->wall[k] = wall;
  t->stages[k] = stages_of(st);
}

/* Medians, extremes and the median call's stages into r (sorts copies). */
static void timings_summarise(timings *t, bench_run *r) {
  r->stages = t->stages[median_index(t->wall, t->n)];
  for (size_t k = 0; k < t->n; k++) {
    r->call_wall_sum += t->wall[k];
    r->call_kernel_sum += t->kernel[k];
  }
  r->kernel = bench_stats_of(t->kernel, (int)t->n);
  r->wall = bench_stats_of(t->wall, (int)t->n);
}

/* Whole-workload runs: one warm-up call, then o->reps timed calls. */
static int measure_whole(bench_device *d, const bench_workload *w,
                         const size_t *offsets, const bench_options *o,
                         double *out, timings *t, bench_run *r) {
  double start = bench_now();
  for (int k = -1; k < o->reps; k++) {
    bench_progress(o, start, "%s: %s, run %d of %d", r->device, w->name, k + 2,
                   o->reps + 1);
    double wall;
    if (one_call(d, w, offsets, 0, w->n_batches, o, out, &wall, &r->last,
                 r->error, sizeof r->error))
      return 1;
    if (k >= 0)
      timings_record(t, (size_t)k, wall, &r->last);
  }
  r->reps = o->reps;
  return 0;
}

/* Per-call mode: one untimed call of the whole workload (kernels built,
 * every result filled for the accuracy check), then o->calls timed calls
 * of o->call_batches consecutive batches each (0: all), cycling through
 * the workload; each writes its results where the whole call put them. */
static int measure_calls(bench_device *d, const bench_workload *w,
                         const size_t *offsets, const bench_options *o,
                         double *out, timings *t, bench_run *r) {
  size_t nb = w->n_batches, per = o->call_batches;
  if (per == 0 || per > nb)
    per = nb;
  double wall, start = bench_now();
  if (one_call(d, w, offsets, 0, nb, o, out, &wall, &r->last, r->error,
               sizeof r->error))
    return 1;
  uint64_t pairs = 0;
  for (size_t k = 0, b0 = 0; k < o->calls; k++) {
    if ((k & 63) == 0)
      bench_progress(o, start, "%s: %s, call %zu of %lu", r->device, w->name,
                     k + 1, o->calls);
    size_t b1 = b0 + per < nb ? b0 + per : nb;
    if (one_call(d, w, offsets, b0, b1, o, out + offsets[b0], &wall, &r->last,
                 r->error, sizeof r->error))
      return 1;
    timings_record(t, k, wall, &r->last);
    pairs += offsets[b1] - offsets[b0];
    r->call_cells += r->last.cells;
    b0 = b1 == nb ? 0 : b1;
  }
  r->reps = (int)o->calls;
  r->calls = o->calls;
  r->call_batches = per;
  r->call_pairs_mean = (double)pairs / (double)o->calls;
  return 0;
}

void bench_measure(bench_device *d, const bench_workload *w,
                   const size_t *offsets, const bench_sample *s,
                   const bench_options *o, bench_run *r) {
  fill_identity(d, w, o, r);
  double *out = malloc((w->n_pairs ? w->n_pairs : 1) * sizeof *out);
  timings t;
  int bad = timings_alloc(&t, o->calls ? o->calls : (size_t)o->reps);
  if (!out || bad) {
    snprintf(r->error, sizeof r->error, "out of memory for %zu results",
             w->n_pairs);
    goto done;
  }
  if (o->calls ? measure_calls(d, w, offsets, o, out, &t, r)
               : measure_whole(d, w, offsets, o, out, &t, r))
    goto done;
  bench_progress_done(o);
  timings_summarise(&t, r);
  r->rescued = r->last.rescued_pairs;
  r->early_exits = r->last.early_exits;
  r->cpu_pairs = r->last.cpu_pairs;
  r->exact_pairs = r->last.exact_pairs;
  r->underflow_stops = r->last.underflow_stops;
  r->split_pairs = r->last.split_pairs;
  r->exact_direct = r->last.exact_direct;
  r->double_first = r->last.double_first;
  r->double_first_checked = r->last.double_first_checked;
  r->launches = r->last.launches;
  bench_sample_compare(s, w, offsets, out, &r->max_err, &r->mean_err);
  r->checked_pairs = s->n_pairs;
  r->ok = 1;
  if (o->results_file) /* write errors are caught when it is closed */
    bench_write_results(o->results_file, out, w->n_pairs);
done:
  bench_progress_done(o);
  free(out);
  timings_free(&t);
}
