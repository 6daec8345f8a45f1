/* --tune: for each read-length bin of a device, time every candidate
 * variant with the bin's capacity (lanes x rows per lane = capacity, each
 * allowed work-group size) on reads of that bin, check each against the CPU
 * reference, and record the fastest correct one per bin in the tuning file
 * the library reads (clphmm_tuning_file_update). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MAX_BINS CLPHMM_MAX_BINS
#define MAX_CAND 64

typedef struct variant {
  unsigned g, c, wg;
  int vec; /* "vPxC/WG": the vector kernel, C rows per tile */
} variant;

static unsigned rows_of(const variant *v) {
  return v->vec ? v->c : v->g * v->c;
}

/* "GxC/WG,..." or "vPxC/WG,..." (WG defaults to 64, or 1 for vector
 * variants, as in the library; suffixes are not read). */
static size_t parse_list(const char *s, variant *v, size_t max) {
  size_t n = 0;
  while (*s && n < max) {
    char *end;
    variant x = {0, 0, 64, *s == 'v'};
    if (x.vec) {
      x.wg = 1;
      s++;
    }
    x.g = (unsigned)strtoul(s, &end, 10);
    if (*end != 'x')
      return 0;
    x.c = (unsigned)strtoul(end + 1, &end, 10);
    if (*end == '/')
      x.wg = (unsigned)strtoul(end + 1, &end, 10);
    while (*end == ':') /* :long, :rN */
      end += 1 + strcspn(end + 1, ":,");
    if (!x.g || !x.c || (*end && *end != ','))
      return 0;
    v[n++] = x;
    s = *end ? end + 1 : end;
  }
  return n;
}

/* Comma-separated positive numbers. */
static size_t parse_numbers(const char *s, unsigned *v, size_t max) {
  size_t n = 0;
  while (*s && n < max) {
    char *end;
    unsigned long x = strtoul(s, &end, 10);
    if (end == s || x == 0 || x > 4096 || (*end && *end != ','))
      return 0;
    v[n++] = (unsigned)x;
    s = *end ? end + 1 : end;
  }
  return *s ? 0 : n;
}

static void name_of(const variant *v, char *buf, size_t n) {
  snprintf(buf, n, "%s%ux%u/%u", v->vec ? "v" : "", v->g, v->c, v->wg);
}

/* Candidates of capacity `rows`: every lanes x rows-per-lane split (lanes
 * from the list, rows per lane a multiple of 4 up to 64) with every
 * allowed work-group size; with `vec` (the device uses the vector kernel)
 * also vector variants of that many rows per tile, as many pairs per
 * work-item as each lane count of the list that a vector has (1, 2, 4, 8,
 * 16), one work-item per work-group. */
static size_t candidates(unsigned rows, const unsigned *lanes, size_t n_lanes,
                         const unsigned *wgs, size_t n_wg, int vec,
                         variant *out) {
  size_t n = 0;
  for (size_t l = 0; vec && rows <= 64 && l < n_lanes; l++)
    if (lanes[l] <= 16 && !(lanes[l] & (lanes[l] - 1)) && n < MAX_CAND)
      out[n++] = (variant){lanes[l], rows, 1, 1};
  for (size_t l = 0; l < n_lanes; l++)
    for (size_t k = 0; k < n_wg; k++) {
      unsigned g = lanes[l], c = rows / g, wg = wgs[k];
      /* Float kernels read priors four rows at a time: C % 4 == 0. */
      if (rows % g || c < 4 || c > 64 || c % 4 || wg < g || wg % g ||
          n == MAX_CAND)
        continue;
      out[n++] = (variant){g, c, wg, 0};
    }
  return n;
}

typedef struct timing {
  int ok;
  double seconds, gcups, err;
  char why[200];
} timing;

/* Time one variant on the bin's workload (CLPHMM_VARIANTS forces it). */
static timing time_variant(const variant *v, const char *device,
                           const bench_workload *w, const size_t *off,
                           const bench_sample *s, const bench_options *o) {
  timing t = {0, INFINITY, 0, NAN, ""};
  char spec[32];
  name_of(v, spec, sizeof spec);
  setenv("CLPHMM_VARIANTS", spec, 1);
  bench_options q = *o;
  q.startup = 0;
  bench_device d;
  if (bench_device_open(device, &q, &d, t.why, sizeof t.why))
    return t;
  bench_run r;
  bench_measure(&d, w, off, s, &q, &r);
  bench_device_close(&d);
  if (!r.ok) {
    snprintf(t.why, sizeof t.why, "%.190s", r.error);
    return t;
  }
  double level = o->precision == CLPHMM_PRECISION_DOUBLE ? 1e-7 : 1e-5;
  t.err = r.max_err;
  t.seconds = r.kernel.median;
  t.gcups = (double)w->cells / t.seconds * 1e-9;
  t.ok = r.max_err <= level;
  if (!t.ok)
    snprintf(t.why, sizeof t.why, "wrong results (max error %.2e)", r.max_err);
  return t;
}

/* The variant an ordered list gives reads of `rows` bases (the library's
 * bin rule: the smallest capacity that holds them, else the last). */
static const variant *serving(const variant *v, size_t n, unsigned rows) {
  for (size_t i = 0; i < n; i++)
    if (rows <= rows_of(&v[i]))
      return &v[i];
  return &v[n - 1];
}

typedef struct bin_result {
  unsigned lo, hi;
  variant old, best;
  timing t_old, t_best;
} bin_result;

typedef struct tune_space {
  unsigned lanes[8], wgs[8];
  size_t n_lanes, n_wg;
} tune_space;

static int tune_bin(const char *device, bin_result *b, const tune_space *sp,
                    const bench_options *o) {
  bench_workload w;
  char err[512];
  if (bench_bin_workload(b->lo, b->hi, o->tune_cells * o->scale, o->seed, &w)) {
    fprintf(stderr, "clphmm-bench: out of memory for the bin workload\n");
    return 1;
  }
  size_t *off = bench_offsets(&w);
  bench_sample s;
  if (!off || bench_sample_make(&w, off, o, &s, err, sizeof err)) {
    fprintf(stderr, "clphmm-bench: %s\n", off ? err : "out of memory");
    free(off);
    bench_workload_free(&w);
    return 1;
  }
  variant cand[MAX_CAND + 1];
  size_t n = candidates(b->hi, sp->lanes, sp->n_lanes, sp->wgs, sp->n_wg,
                        b->old.vec, cand),
         old_at = n;
  for (size_t i = 0; i < n; i++)
    if (!memcmp(&cand[i], &b->old, sizeof b->old))
      old_at = i;
  if (old_at == n) /* the old choice has another capacity: time it too */
    cand[n++] = b->old;
  printf("bin %u-%u: %zu pairs, %.3e cells\n", b->lo + 1, b->hi, w.n_pairs,
         (double)w.cells);
  b->t_best.seconds = INFINITY;
  for (size_t i = 0; i < n; i++) {
    char name[32];
    name_of(&cand[i], name, sizeof name);
    timing t = time_variant(&cand[i], device, &w, off, &s, o);
    if (t.ok)
      printf("  %-10s kernel %.5fs  %8.2f GCUPS  max|err| %.1e%s\n", name,
             t.seconds, t.gcups, t.err, i == old_at ? "  (old)" : "");
    else
      printf("  %-10s skipped: %s\n", name, t.why);
    if (i == old_at)
      b->t_old = t;
    if (t.ok && t.seconds < b->t_best.seconds) {
      b->t_best = t;
      b->best = cand[i];
    }
  }
  bench_sample_free(&s);
  free(off);
  bench_workload_free(&w);
  if (!b->t_best.ok) {
    fprintf(stderr, "clphmm-bench: no candidate ran correctly for bin %u-%u\n",
            b->lo + 1, b->hi);
    return 1;
  }
  return 0;
}

static void print_summary(const bin_result *b, size_t n, const char *list) {
  printf("\n%-12s %-12s %10s %-12s %10s %8s\n", "bin", "old", "GCUPS", "new",
         "GCUPS", "speedup");
  for (size_t i = 0; i < n; i++) {
    char range[32], o[32], nw[32];
    snprintf(range, sizeof range, "%u-%u", b[i].lo + 1, b[i].hi);
    name_of(&b[i].old, o, sizeof o);
    name_of(&b[i].best, nw, sizeof nw);
    double so = b[i].t_old.ok ? b[i].t_old.gcups : NAN;
    printf("%-12s %-12s %10.2f %-12s %10.2f %8.2f\n", range, o, so, nw,
           b[i].t_best.gcups, b[i].t_best.gcups / so);
  }
  printf("new variant list: %s\n", list);
}

static int tune_device(const char *spec, const bench_options *o) {
  bench_options q = *o;
  q.startup = 0;
  bench_device d;
  char err[512];
  if (bench_device_open(spec, &q, &d, err, sizeof err)) {
    fprintf(stderr, "clphmm-bench: %s\n", err);
    return 1;
  }
  bench_device_close(&d);
  if (d.index < 0) {
    fprintf(stderr, "clphmm-bench: --tune needs an OpenCL device, not the "
                    "reference\n");
    return 2;
  }
  variant old[MAX_BINS];
  unsigned bins[MAX_BINS];
  tune_space sp;
  size_t n_old = parse_list(d.plan.variants, old, MAX_BINS), n_bins = 0;
  sp.n_wg = parse_numbers(o->tune_wg, sp.wgs, 8);
  sp.n_lanes = parse_numbers(o->tune_lanes, sp.lanes, 8);
  if (o->tune_bins)
    n_bins = parse_numbers(o->tune_bins, bins, MAX_BINS);
  else
    for (size_t i = 0; i < n_old; i++)
      bins[n_bins++] = rows_of(&old[i]);
  for (size_t i = 1; i < n_bins; i++)
    if (bins[i] <= bins[i - 1])
      n_bins = 0;
  if (!n_old || !n_bins || !sp.n_wg || !sp.n_lanes) {
    fprintf(stderr, "clphmm-bench: --tune-bins must be increasing numbers "
                    "(1..4096), --tune-wg and --tune-lanes lists of at most "
                    "8 numbers\n");
    return 2;
  }
  printf("tuning %s (device %ld): %s variants %s (%s, %s)\n", d.info.name,
         d.index, o->precision ? "double" : "float", d.plan.variants,
         d.plan.source, d.plan.key);
  char index[32];
  snprintf(index, sizeof index, "%ld", d.index);
  bin_result res[MAX_BINS];
  memset(res, 0, sizeof res);
  char list[512] = "";
  int rc = 0;
  for (size_t i = 0; i < n_bins && !rc; i++) {
    res[i].lo = i ? bins[i - 1] : 0;
    res[i].hi = bins[i];
    res[i].old = *serving(old, n_old, bins[i]);
    rc = tune_bin(index, &res[i], &sp, o);
    char name[32];
    name_of(&res[i].best, name, sizeof name);
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
             i ? "," : "", name);
  }
  if (rc)
    return rc;
  print_summary(res, n_bins, list);
  const char *path = o->tuning_file ? o->tuning_file : d.plan.tuning_file;
  if (clphmm_tuning_file_update(path, d.info.name, list)) {
    fprintf(stderr, "clphmm-bench: %s\n", clphmm_last_error(NULL));
    return 1;
  }
  printf("written to %s (entry name=\"%s\")\n", path, d.info.name);
  return 0;
}

int bench_tune(const bench_options *o) {
  const char *saved_env = getenv("CLPHMM_VARIANTS");
  char *saved = saved_env ? strdup(saved_env) : NULL;
  /* The old choice comes from the file being rewritten. */
  if (o->tuning_file)
    setenv("CLPHMM_TUNING_FILE", o->tuning_file, 1);
  int rc = 0;
  size_t n = o->n_devices ? o->n_devices : 1;
  for (size_t i = 0; i < n && !rc; i++) {
    const char *spec = o->n_devices ? o->devices[i] : "";
    if (!strcmp(spec, "all") || !strcmp(spec, "each")) {
      size_t count = 0;
      if (clphmm_device_count(&count) || !count) {
        fprintf(stderr, "clphmm-bench: --device %s: no OpenCL devices\n", spec);
        rc = 1;
      }
      for (size_t d = 0; d < count && !rc; d++) {
        char idx[24];
        snprintf(idx, sizeof idx, "%zu", d);
        rc = tune_device(idx, o);
      }
    } else
      rc = tune_device(spec, o);
    if (saved)
      setenv("CLPHMM_VARIANTS", saved, 1);
    else
      unsetenv("CLPHMM_VARIANTS");
  }
  free(saved);
  return rc;
}
