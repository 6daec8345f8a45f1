/* Output: the comparison table on stdout and the JSON results file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "bench.h"
#include "json.h"

static double gcups(uint64_t cells, double seconds) {
  return seconds > 0 ? (double)cells / seconds * 1e-9 : NAN;
}

static const char *prec_name(clphmm_precision p) {
  return p == CLPHMM_PRECISION_DOUBLE ? "double" : "float";
}

/* Short device label for the table: "0 NVIDIA H200", "ref". */
static void label(const bench_run *r, char *buf, size_t n) {
  if (r->device_index < 0)
    snprintf(buf, n, "reference");
  else
    snprintf(buf, n, "%ld %.30s", r->device_index, r->device);
}

static void print_bins(FILE *f, const bench_run *r) {
  const clphmm_stats *s = &r->last;
  unsigned lo = 0;
  for (size_t b = 0; b < s->n_bins; b++) {
    const clphmm_bin_stats *bs = &s->bins[b];
    char range[32];
    const int last = b + 1 == s->n_bins ||
                     (b + 2 == s->n_bins && s->bins[b + 1].max_rows == 0);
    if (bs->max_rows == 0)
      snprintf(range, sizeof range, "small");
    else if (last)
      snprintf(range, sizeof range, "%u+", lo + 1);
    else
      snprintf(range, sizeof range, "%u-%u", lo + 1, bs->max_rows);
    lo = bs->max_rows;
    if (!bs->launches)
      continue;
    fprintf(f,
            "      bin %-10s %-10s pairs %-10llu cells %-10.3e launches "
            "%-4llu kernel %.4fs  %.2f GCUPS\n",
            range, bs->variant, (unsigned long long)bs->pairs,
            (double)bs->cells, (unsigned long long)bs->launches,
            bs->kernel_seconds, gcups(bs->cells, bs->kernel_seconds));
  }
}

/* Where the time of the median run (or call) went, in milliseconds. */
static void print_stages(FILE *f, const bench_run *r) {
  const bench_stages *st = &r->stages;
  fprintf(f,
          "      stages (median %s, ms): prepare %.3f upload %.3f kernel "
          "%.3f (rows %.3f) download %.3f rescue %.3f finish %.3f wall %.3f "
          "chunks %llu early-exits %llu cpu-pairs %llu exact-pairs %llu "
          "underflow-stops %llu split-pairs %llu exact-direct %llu "
          "double-first %llu (checked %llu)\n",
          r->calls ? "call" : "run", st->prepare * 1e3, st->upload * 1e3,
          st->kernel * 1e3, st->rows * 1e3, st->download * 1e3,
          st->rescue * 1e3, st->finish * 1e3, st->wall * 1e3,
          (unsigned long long)st->chunks, (unsigned long long)r->early_exits,
          (unsigned long long)r->cpu_pairs, (unsigned long long)r->exact_pairs,
          (unsigned long long)r->underflow_stops,
          (unsigned long long)r->split_pairs,
          (unsigned long long)r->exact_direct,
          (unsigned long long)r->double_first,
          (unsigned long long)r->double_first_checked);
}

/* A context of several devices: each device's part of the last run. */
static void print_devices(FILE *f, const bench_run *r) {
  const clphmm_stats *s = &r->last;
  for (size_t i = 0; s->n_devices > 1 && i < s->n_devices; i++) {
    const clphmm_device_stats *d = &s->devices[i];
    fprintf(f,
            "      device %zu (%zu %.30s): pairs %llu cells %.3e busy %.3f ms "
            "kernel %.3f ms chunks %llu%s\n",
            i, d->index, d->name, (unsigned long long)d->pairs,
            (double)d->cells, d->busy_seconds * 1e3, d->kernel_seconds * 1e3,
            (unsigned long long)d->chunks, d->dropped ? " DROPPED" : "");
  }
}

/* Per-call mode: microseconds per call. */
static void print_calls_header(FILE *f) {
  fprintf(f, "%-34s %-6s %8s %9s %-30s %-30s %9s %9s %9s\n", "device", "prec",
          "calls", "pairs/call", "wall us/call median [min..max]",
          "kernel us/call median [min..max]", "GCUPS(k)", "GCUPS(w)",
          "max|err|");
}

static void print_calls_row(FILE *f, const bench_run *r) {
  char dev[64], ws[64], ks[64];
  label(r, dev, sizeof dev);
  if (!r->ok) {
    fprintf(f, "%-34s FAILED: %s\n", dev, r->error);
    return;
  }
  snprintf(ws, sizeof ws, "%.1f [%.1f..%.1f]", r->wall.median * 1e6,
           r->wall.min * 1e6, r->wall.max * 1e6);
  snprintf(ks, sizeof ks, "%.1f [%.1f..%.1f]", r->kernel.median * 1e6,
           r->kernel.min * 1e6, r->kernel.max * 1e6);
  fprintf(f, "%-34s %-6s %8lu %9.1f %-30s %-30s %9.2f %9.2f %9.2e\n", dev,
          prec_name(r->precision), r->calls, r->call_pairs_mean, ws, ks,
          gcups(r->call_cells, r->call_kernel_sum),
          gcups(r->call_cells, r->call_wall_sum), r->max_err);
}

static void print_header(FILE *f) {
  fprintf(f, "%-34s %-6s %10s %10s %-28s %-10s %9s %9s %8s %9s %9s %s\n",
          "device", "prec", "pairs", "cells", "kernel s median [min..max]",
          "wall s", "GCUPS(k)", "GCUPS(w)", "rescued", "max|err|", "mean|err|",
          "vs first (k/w)");
}

static void print_row(FILE *f, const bench_run *r, const bench_run *first) {
  char dev[64], ks[64], ratio[32] = "";
  label(r, dev, sizeof dev);
  if (!r->ok) {
    fprintf(f, "%-34s FAILED: %s\n", dev, r->error);
    return;
  }
  snprintf(ks, sizeof ks, "%.4g [%.4g..%.4g]", r->kernel.median, r->kernel.min,
           r->kernel.max);
  double gk = gcups(r->w.cells, r->kernel.median);
  double gw = gcups(r->w.cells, r->wall.median);
  if (first && first->ok)
    snprintf(ratio, sizeof ratio, "%.2f/%.2f",
             gk / gcups(first->w.cells, first->kernel.median),
             gw / gcups(first->w.cells, first->wall.median));
  fprintf(f,
          "%-34s %-6s %10zu %10.3e %-28s %-10.4g %9.2f %9.2f %8llu %9.2e "
          "%9.2e %s\n",
          dev, prec_name(r->precision), r->w.n_pairs, (double)r->w.cells, ks,
          r->wall.median, gk, gw, (unsigned long long)r->rescued, r->max_err,
          r->mean_err, ratio);
}

void bench_print_table(FILE *f, const bench_run *runs, size_t n,
                       size_t n_devices, int verbose) {
  /* Runs are workload-major: n_devices consecutive runs per workload. */
  for (size_t i = 0; i < n; i += n_devices) {
    const bench_workload *w = &runs[i].w;
    fprintf(f,
            "\n== %s: %zu pairs, %.3e cells, mean read %.0f, mean "
            "haplotype %.0f\n",
            w->name, w->n_pairs, (double)w->cells, w->mean_read, w->mean_hap);
    if (runs[i].calls)
      print_calls_header(f);
    else
      print_header(f);
    for (size_t d = 0; d < n_devices && i + d < n; d++) {
      const bench_run *r = &runs[i + d];
      if (r->calls)
        print_calls_row(f, r);
      else
        print_row(f, r, d ? &runs[i] : NULL);
      if (verbose && r->ok) {
        print_bins(f, r);
        print_stages(f, r);
        print_devices(f, r);
      }
    }
  }
  int any = 0;
  for (size_t d = 0; d < n_devices && d < n; d++)
    any |= runs[d].create_cold >= 0;
  if (!any)
    return;
  fprintf(f, "\n== context creation + first result (s)\n%-34s %8s %8s\n",
          "device", "cold", "warm");
  for (size_t d = 0; d < n_devices && d < n; d++) {
    char dev[64];
    label(&runs[d], dev, sizeof dev);
    if (runs[d].create_cold >= 0)
      fprintf(f, "%-34s %8.3f %8.3f\n", dev, runs[d].create_cold,
              runs[d].create_warm);
  }
}

/* ---- JSON --------------------------------------------------------------- */

static void json_bins(json *j, const clphmm_stats *s) {
  json_array(j, "bins");
  for (size_t b = 0; b < s->n_bins; b++) {
    const clphmm_bin_stats *bs = &s->bins[b];
    json_object(j, NULL);
    json_uint(j, "max_rows", bs->max_rows);
    json_string(j, "variant", bs->variant);
    json_uint(j, "pairs", bs->pairs);
    json_uint(j, "cells", bs->cells);
    json_uint(j, "launches", bs->launches);
    json_number(j, "kernel_seconds", bs->kernel_seconds);
    json_end_object(j);
  }
  json_end_array(j);
}

/* Per device of the context (one entry for a context of one device, none
 * for the reference), of the last repetition. */
static void json_devices(json *j, const clphmm_stats *s) {
  json_array(j, "devices");
  for (size_t i = 0; i < s->n_devices && i < CLPHMM_MAX_DEVICES; i++) {
    const clphmm_device_stats *d = &s->devices[i];
    json_object(j, NULL);
    json_uint(j, "index", d->index);
    json_string(j, "name", d->name);
    json_uint(j, "pairs", d->pairs);
    json_uint(j, "cells", d->cells);
    json_uint(j, "rescued_pairs", d->rescued_pairs);
    json_uint(j, "chunks", d->chunks);
    json_number(j, "kernel_seconds", d->kernel_seconds);
    json_number(j, "busy_seconds", d->busy_seconds);
    json_uint(j, "dropped", (uint64_t)d->dropped);
    json_end_object(j);
  }
  json_end_array(j);
}

static void json_stages(json *j, const bench_stages *st) {
  json_object(j, "stages");
  json_number(j, "wall_seconds", st->wall);
  json_number(j, "prepare_seconds", st->prepare);
  json_number(j, "upload_seconds", st->upload);
  json_number(j, "kernel_seconds", st->kernel);
  json_number(j, "rows_seconds", st->rows);
  json_number(j, "download_seconds", st->download);
  json_number(j, "rescue_seconds", st->rescue);
  json_number(j, "finish_seconds", st->finish);
  json_uint(j, "chunks", st->chunks);
  json_end_object(j);
}

/* Per-call mode's fields (null in whole-workload runs). */
static void json_calls(json *j, const bench_run *r) {
  int on = r->ok && r->calls;
  json_string(j, "mode", r->calls ? "per-call" : "whole");
  json_uint(j, "calls", r->calls);
  json_uint(j, "call_batches", r->call_batches);
  json_number(j, "call_pairs_mean", on ? r->call_pairs_mean : NAN);
  json_number(j, "call_wall_us", on ? r->wall.median * 1e6 : NAN);
  json_number(j, "call_wall_us_min", on ? r->wall.min * 1e6 : NAN);
  json_number(j, "call_wall_us_max", on ? r->wall.max * 1e6 : NAN);
  json_number(j, "call_kernel_us", on ? r->kernel.median * 1e6 : NAN);
  json_number(j, "call_kernel_us_min", on ? r->kernel.min * 1e6 : NAN);
  json_number(j, "call_kernel_us_max", on ? r->kernel.max * 1e6 : NAN);
}

/* GCUPS of a run: per-call mode counts the cells of the timed calls. */
static double run_gcups(const bench_run *r, int kernel) {
  if (!r->ok)
    return NAN;
  if (r->calls)
    return gcups(r->call_cells, kernel ? r->call_kernel_sum : r->call_wall_sum);
  return gcups(r->w.cells, kernel ? r->kernel.median : r->wall.median);
}

static void json_run(json *j, const bench_run *r) {
  const bench_workload *w = &r->w;
  json_break(j);
  json_object(j, NULL);
  json_string(j, "device", r->device);
  json_int(j, "device_index", r->device_index);
  json_string(j, "driver", r->driver);
  json_string(j, "platform", r->platform);
  json_string(j, "workload", w->name);
  json_string(j, "kind", w->kind);
  json_uint(j, "read_length", w->read_len);
  json_uint(j, "hap_length", w->hap_len);
  json_number(j, "mean_read_length", w->mean_read);
  json_number(j, "mean_hap_length", w->mean_hap);
  json_string(j, "precision", prec_name(r->precision));
  json_uint(j, "pairs", w->n_pairs);
  json_uint(j, "cells", w->cells);
  json_bool(j, "ok", r->ok);
  if (!r->ok)
    json_string(j, "error", r->error);
  json_int(j, "reps", r->reps);
  json_number(j, "kernel_seconds", r->ok ? r->kernel.median : NAN);
  json_number(j, "kernel_seconds_min", r->ok ? r->kernel.min : NAN);
  json_number(j, "kernel_seconds_max", r->ok ? r->kernel.max : NAN);
  json_number(j, "wall_seconds", r->ok ? r->wall.median : NAN);
  json_number(j, "wall_seconds_min", r->ok ? r->wall.min : NAN);
  json_number(j, "wall_seconds_max", r->ok ? r->wall.max : NAN);
  json_number(j, "gcups_kernel", run_gcups(r, 1));
  json_number(j, "gcups_wall", run_gcups(r, 0));
  json_calls(j, r);
  json_uint(j, "rescued_pairs", r->rescued);
  json_uint(j, "early_exits", r->early_exits);
  json_uint(j, "cpu_pairs", r->cpu_pairs);
  json_uint(j, "exact_pairs", r->exact_pairs);
  json_uint(j, "underflow_stops", r->underflow_stops);
  json_uint(j, "split_pairs", r->split_pairs);
  json_uint(j, "exact_direct", r->exact_direct);
  json_uint(j, "double_first", r->double_first);
  json_uint(j, "double_first_checked", r->double_first_checked);
  json_uint(j, "launches", r->launches);
  json_number(j, "max_abs_error", r->max_err);
  json_number(j, "mean_abs_error", r->mean_err);
  json_uint(j, "checked_pairs", r->checked_pairs);
  json_number(j, "create_cold_seconds",
              r->create_cold >= 0 ? r->create_cold : NAN);
  json_number(j, "create_warm_seconds",
              r->create_warm >= 0 ? r->create_warm : NAN);
  json_string(j, "variants", r->variants);
  json_string(j, "shuffle", r->shuffle);
  json_bins(j, &r->last);
  /* After the bins: bench/json-field.sh reads the run's own keys from the
   * text before "bins", and the stages repeat some of their names. */
  json_stages(j, &r->stages);
  json_devices(j, &r->last);
  json_end_object(j);
}

int bench_write_json(const char *path, const bench_run *runs, size_t n,
                     const bench_options *o, char *err, size_t err_n) {
  FILE *f = fopen(path, "w");
  if (!f) {
    snprintf(err, err_n, "%s: cannot create", path);
    return 1;
  }
  char date[64];
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  struct utsname u;
  const char *host = uname(&u) == 0 ? u.nodename : "unknown";
  const char *commit = o->commit ? o->commit : getenv("CLPHMM_COMMIT");
  json j;
  json_init(&j, f);
  json_object(&j, NULL);
  json_break(&j);
  json_string(&j, "clphmm_version", clphmm_version());
  json_string(&j, "commit", commit && *commit ? commit : "unknown");
  json_string(&j, "date", date);
  json_string(&j, "host", host);
  json_number(&j, "scale", o->scale);
  json_int(&j, "seed", (long long)o->seed);
  json_break(&j);
  json_array(&j, "runs");
  for (size_t i = 0; i < n; i++)
    json_run(&j, &runs[i]);
  json_break(&j);
  json_end_array(&j);
  json_break(&j);
  json_end_object(&j);
  int bad = ferror(f);
  bad |= fclose(f) != 0;
  if (bad)
    snprintf(err, err_n, "%s: write failed", path);
  return bad;
}
