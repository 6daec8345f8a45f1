/* Contexts of several devices: one engine per device (context.h), each
 * with its own queue, buffers, kernels and pipeline. A call large enough
 * to be worth splitting is cut into chunks in input order that the
 * engines take from one shared queue as they finish theirs (a slower or
 * busier device takes fewer), each engine on its own thread (the caller's
 * for the first), writing its results into the call's result array and
 * rescuing its own float results in double, so that every result is what
 * one device of its kind gives. An engine whose device fails (an OpenCL
 * error, no kernel that builds) is dropped: the ranges it took in its
 * pass go back to the queue, to be redone first by the others. Smaller
 * calls run on the first device that is not dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "engine/context.h"
#include "model/validate.h"

/* Calls of fewer cells run on one device: two chunks of the smallest
 * size compute.c cuts (2^32 cells), a few milliseconds of a big GPU. */
#define SPLIT_MIN_CELLS ((uint64_t)1 << 33)

static int grow_ranges(cph_range **a, size_t *cap, size_t n) {
  if (n < *cap)
    return 1;
  size_t c = *cap ? 2 * *cap : 16;
  cph_range *p = realloc(*a, c * sizeof *p);
  if (!p)
    return 0;
  *a = p;
  *cap = c;
  return 1;
}

int cph_share_record(cph_share *sh, size_t me, const cph_range *r) {
  if (!grow_ranges(&sh->taken[me], &sh->cap_taken[me], sh->n_taken[me]))
    return 0;
  sh->taken[me][sh->n_taken[me]++] = *r;
  return 1;
}

/* Failures that belong to a device rather than to the input or the host:
 * the device is dropped and its work redone on the others. */
static int device_failure(clphmm_status st) {
  return st == CLPHMM_ERROR_OPENCL || st == CLPHMM_ERROR_BUILD_FAILED ||
         st == CLPHMM_ERROR_NO_DEVICE;
}

/* Failures of the input, whose message must be the one a single device
 * gives: that of the first invalid batch. */
static int input_failure(clphmm_status st) {
  return st == CLPHMM_ERROR_INVALID_BASE ||
         st == CLPHMM_ERROR_INVALID_QUALITY ||
         st == CLPHMM_ERROR_INVALID_ARGUMENT;
}

static void drop(clphmm_context *ctx, size_t i, clphmm_status st,
                 const char *why) {
  cph_engine *e = ctx->eng[i];
  e->dropped = 1;
  snprintf(e->why, sizeof e->why, "%s: %s", clphmm_status_string(st), why);
  cph_diag_note(&ctx->diag,
                "device %zu of the context (%s, device index %zu) dropped: "
                "%s",
                i, e->dev.info.name, e->dev.info.index, e->why);
}

/* Pairs and cells of a range of the input. */
static void count_range(const clphmm_batch *batches, const cph_range *r,
                        uint64_t *pairs, uint64_t *cells) {
  for (size_t b = r->batch; b <= r->end_batch; b++) {
    if (b == r->end_batch && r->end_read == 0)
      break;
    const clphmm_batch *bt = &batches[b];
    const size_t r0 = b == r->batch ? r->read : 0;
    const size_t r1 = b == r->end_batch ? r->end_read : bt->n_reads;
    uint64_t hap = 0, rows = 0;
    for (size_t h = 0; h < bt->n_haplotypes; h++)
      hap += bt->haplotypes[h].length;
    for (size_t k = r0; k < r1; k++)
      rows += bt->reads[k].length;
    *pairs += (uint64_t)(r1 - r0) * bt->n_haplotypes;
    *cells += rows * hap;
  }
}

/* Add an engine's statistics of one pass to the call's. Bins are merged
 * by variant name (devices of one kind have the same bins). */
static void add_stats(clphmm_stats *t, const clphmm_stats *e) {
  t->rescued_pairs += e->rescued_pairs;
  t->early_exits += e->early_exits;
  t->underflow_stops += e->underflow_stops;
  t->split_pairs += e->split_pairs;
  t->cpu_pairs += e->cpu_pairs;
  t->exact_pairs += e->exact_pairs;
  t->exact_direct += e->exact_direct;
  t->double_first += e->double_first;
  t->double_first_checked += e->double_first_checked;
  t->launches += e->launches;
  t->kernel_seconds += e->kernel_seconds;
  t->prepare_seconds += e->prepare_seconds;
  t->upload_seconds += e->upload_seconds;
  t->rows_seconds += e->rows_seconds;
  t->download_seconds += e->download_seconds;
  t->rescue_seconds += e->rescue_seconds;
  t->finish_seconds += e->finish_seconds;
  t->chunks += e->chunks;
  for (size_t i = 0; i < e->n_bins; i++) {
    const clphmm_bin_stats *b = &e->bins[i];
    size_t j = 0;
    while (j < t->n_bins && (t->bins[j].max_rows != b->max_rows ||
                             strcmp(t->bins[j].variant, b->variant)))
      j++;
    if (j == t->n_bins) {
      if (j == CLPHMM_MAX_BINS)
        continue;
      t->bins[t->n_bins++] = *b;
      continue;
    }
    t->bins[j].pairs += b->pairs;
    t->bins[j].cells += b->cells;
    t->bins[j].launches += b->launches;
    t->bins[j].kernel_seconds += b->kernel_seconds;
  }
}

/* The state of one split call. */
typedef struct multi_call {
  clphmm_context *ctx;
  cph_share sh;
  size_t busy;       /* engines in a pass (under sh.lock) */
  clphmm_status err; /* the call's error (input, host), first one */
  char err_msg[CPH_ERROR_MAX];
  clphmm_stats stats;      /* totals (under sh.lock) */
  size_t dropped_now;      /* engines dropped in this call */
  clphmm_status last_drop; /* the status of the last drop */
} multi_call;

typedef struct worker {
  multi_call *mc;
  size_t me;
  pthread_t thread;
  int started;
} worker;

static int work_left(const cph_share *sh) {
  return sh->n_redo > 0 || sh->next.batch < sh->next.end_batch;
}

/* One engine's part of the call: passes while there is work, and while
 * other engines that might fail and leave work are in a pass. */
static void *work(void *arg) {
  worker *w = arg;
  multi_call *mc = w->mc;
  cph_share *sh = &mc->sh;
  const size_t me = w->me;
  cph_engine *e = mc->ctx->eng[me];
  clphmm_device_stats *ds = &mc->stats.devices[me];
  char *msg = malloc(CPH_ERROR_MAX);
  pthread_mutex_lock(&sh->lock);
  while (!sh->stop) {
    if (!work_left(sh)) {
      if (mc->busy == 0)
        break;
      pthread_cond_wait(&sh->cond, &sh->lock);
      continue;
    }
    mc->busy++;
    pthread_mutex_unlock(&sh->lock);
    const double t0 = cph_now();
    clphmm_status st = CLPHMM_SUCCESS;
    if (e->broken && cph_engine_reset(e) != CLPHMM_SUCCESS)
      st = cph_error(CLPHMM_ERROR_OPENCL,
                     "recreating its OpenCL context "
                     "failed: %s",
                     cph_error_message());
    if (!st)
      st = cph_engine_compute_shared(e, sh, me);
    if (!st)
      cph_engine_save_kernels(e);
    if (st && msg)
      snprintf(msg, CPH_ERROR_MAX, "%s", cph_error_message());
    /* A device that failed starts over with a new OpenCL context (for a
     * later call that tries it again). */
    if (st == CLPHMM_ERROR_OPENCL && !e->broken)
      cph_engine_reset(e);
    const double busy = cph_now() - t0;
    pthread_mutex_lock(&sh->lock);
    mc->busy--;
    ds->busy_seconds += busy;
    if (!st) {
      for (size_t i = 0; i < sh->n_taken[me]; i++)
        count_range(sh->batches, &sh->taken[me][i], &ds->pairs, &ds->cells);
      sh->n_taken[me] = 0;
      ds->rescued_pairs += e->stats.rescued_pairs;
      ds->chunks += e->stats.chunks;
      ds->kernel_seconds += e->stats.kernel_seconds;
      add_stats(&mc->stats, &e->stats);
    } else if (device_failure(st)) {
      /* Its ranges go back to be redone, before the rest of the queue. */
      int ok = 1;
      for (size_t i = 0; i < sh->n_taken[me] && ok; i++) {
        ok = grow_ranges(&sh->redo, &sh->cap_redo, sh->n_redo);
        if (ok)
          sh->redo[sh->n_redo++] = sh->taken[me][i];
      }
      sh->n_taken[me] = 0;
      drop(mc->ctx, me, st, msg ? msg : "(no memory for the message)");
      ds->dropped = 1;
      mc->dropped_now++;
      mc->last_drop = st;
      if (!ok && !mc->err) {
        mc->err = cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                            "no memory to redo the work of a failed device");
        snprintf(mc->err_msg, sizeof mc->err_msg, "%s", cph_error_message());
        sh->stop = 1;
      }
      pthread_cond_broadcast(&sh->cond);
      break;
    } else {
      if (!mc->err) {
        mc->err = st;
        snprintf(mc->err_msg, sizeof mc->err_msg, "%s",
                 msg ? msg : "(no memory for the message)");
      }
      sh->stop = 1;
      pthread_cond_broadcast(&sh->cond);
      break;
    }
    pthread_cond_broadcast(&sh->cond);
  }
  pthread_mutex_unlock(&sh->lock);
  free(msg);
  return NULL;
}

static void begin_stats(clphmm_context *ctx, clphmm_stats *s) {
  memset(s, 0, sizeof *s);
  s->n_devices = ctx->n;
  for (size_t i = 0; i < ctx->n; i++)
    cph_device_stats_fill(ctx->eng[i], &s->devices[i]);
}

/* "device 0 (NAME): why; device 1 ..." of the dropped devices. */
static void dropped_list(const clphmm_context *ctx, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < ctx->n && used < n; i++) {
    const cph_engine *e = ctx->eng[i];
    if (!e->dropped)
      continue;
    int w = snprintf(buf + used, n - used, "%sdevice %zu (%s): %s",
                     used ? "; " : "", i, e->dev.info.name, e->why);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

static clphmm_status all_failed(clphmm_context *ctx, clphmm_status st) {
  char *list = malloc(CPH_ERROR_MAX);
  if (list)
    dropped_list(ctx, list, CPH_ERROR_MAX);
  st = cph_error(st,
                 "every device of the context failed (the context tries "
                 "them again on the next call): %s",
                 list ? list : "");
  free(list);
  return st;
}

/* The devices not dropped; when every one is, all of them again. */
static size_t live_engines(clphmm_context *ctx, size_t *live) {
  size_t n = 0;
  for (size_t i = 0; i < ctx->n; i++)
    if (!ctx->eng[i]->dropped)
      live[n++] = i;
  if (n)
    return n;
  for (size_t i = 0; i < ctx->n; i++) {
    ctx->eng[i]->dropped = 0;
    live[n++] = i;
  }
  cph_diag_note(&ctx->diag, "every device had been dropped: trying them all "
                            "again");
  return n;
}

/* "not an error" after a successful call that dropped devices or
 * replaced kernel variants. */
static void success_note(clphmm_context *ctx, size_t dropped_now,
                         int fallbacks) {
  if (dropped_now) {
    char *list = malloc(CPH_ERROR_MAX);
    if (list)
      dropped_list(ctx, list, CPH_ERROR_MAX);
    snprintf(ctx->error, sizeof ctx->error,
             "not an error: %zu device%s failed and %s dropped, and the "
             "others redid %s work: %s",
             dropped_now, dropped_now == 1 ? "" : "s",
             dropped_now == 1 ? "was" : "were",
             dropped_now == 1 ? "its" : "their", list ? list : "");
    free(list);
  } else if (fallbacks) {
    snprintf(ctx->error, sizeof ctx->error,
             "not an error: kernel variants were replaced after a build "
             "failure; see clphmm_context_diagnostics");
  }
}

static uint64_t fallbacks_of(const clphmm_context *ctx) {
  uint64_t n = 0;
  for (size_t i = 0; i < ctx->n; i++)
    n += ctx->eng[i]->diag.variant_fallbacks;
  return n;
}

/* A call on one device: the first live one, then the next when it fails. */
static clphmm_status run_whole(clphmm_context *ctx, const size_t *live,
                               size_t n_live, const clphmm_batch *batches,
                               size_t n_batches, double *out) {
  size_t dropped_now = 0;
  clphmm_status st = CLPHMM_SUCCESS;
  const uint64_t fallbacks = fallbacks_of(ctx);
  for (size_t k = 0; k < n_live; k++) {
    cph_engine *e = ctx->eng[live[k]];
    st = cph_engine_run(e, batches, n_batches, out);
    if (!st) {
      ctx->stats = e->stats;
      ctx->stats.n_devices = ctx->n;
      for (size_t i = 0; i < ctx->n; i++)
        cph_device_stats_fill(ctx->eng[i], &ctx->stats.devices[i]);
      cph_device_stats_counted(e, &ctx->stats.devices[live[k]]);
      success_note(ctx, dropped_now, fallbacks_of(ctx) > fallbacks);
      return CLPHMM_SUCCESS;
    }
    if (!device_failure(st))
      return st;
    char *why = malloc(CPH_ERROR_MAX);
    if (why)
      snprintf(why, CPH_ERROR_MAX, "%s", cph_error_message());
    if (st == CLPHMM_ERROR_OPENCL && !e->broken)
      cph_engine_reset(e);
    drop(ctx, live[k], st, why ? why : "");
    free(why);
    dropped_now++;
  }
  return all_failed(ctx, st);
}

static clphmm_status split(clphmm_context *ctx, const size_t *live,
                           size_t n_live, const clphmm_batch *batches,
                           size_t n_batches, size_t n_pairs, uint64_t cells,
                           double *out, double t0) {
  multi_call *mc = calloc(1, sizeof *mc);
  worker *w = calloc(n_live, sizeof *w);
  double *results = malloc((n_pairs ? n_pairs : 1) * sizeof *results);
  if (!mc || !w || !results) {
    free(mc);
    free(w);
    free(results);
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for %zu results",
                     n_pairs);
  }
  const uint64_t fallbacks = fallbacks_of(ctx);
  mc->ctx = ctx;
  cph_share *sh = &mc->sh;
  sh->batches = batches;
  sh->n_batches = n_batches;
  sh->cells = cells;
  sh->pairs = n_pairs;
  sh->parts = (unsigned)n_live;
  sh->results = results;
  sh->next = (cph_range){0, 0, 0, n_batches, 0};
  pthread_mutex_init(&sh->lock, NULL);
  pthread_cond_init(&sh->cond, NULL);
  begin_stats(ctx, &mc->stats);
  for (size_t k = 0; k < n_live; k++) {
    w[k].mc = mc;
    w[k].me = live[k];
  }
  /* The caller is the first device's thread. */
  for (size_t k = 1; k < n_live; k++)
    w[k].started = pthread_create(&w[k].thread, NULL, work, &w[k]) == 0;
  work(&w[0]);
  for (size_t k = 1; k < n_live; k++)
    if (w[k].started)
      pthread_join(w[k].thread, NULL);
  clphmm_status st = CLPHMM_SUCCESS;
  if (mc->err) {
    st = mc->err;
    /* The message a single device gives: the first invalid batch's. */
    int found = 0;
    for (size_t b = 0; b < n_batches && input_failure(st) && !found; b++) {
      clphmm_status bad = cph_validate_batch(&batches[b], b);
      if (bad) {
        st = bad;
        found = 1;
      }
    }
    if (!found)
      cph_error(st, "%s", mc->err_msg);
  } else if (work_left(sh)) {
    st = all_failed(ctx, mc->last_drop ? mc->last_drop : CLPHMM_ERROR_OPENCL);
  } else {
    if (n_pairs)
      memcpy(out, results, n_pairs * sizeof *out);
    mc->stats.pairs = n_pairs;
    mc->stats.cells = cells;
    mc->stats.wall_seconds = cph_now() - t0;
    ctx->stats = mc->stats;
    success_note(ctx, mc->dropped_now, fallbacks_of(ctx) > fallbacks);
  }
  for (size_t i = 0; i < CPH_MAX_ENGINES; i++)
    free(sh->taken[i]);
  free(sh->redo);
  pthread_cond_destroy(&sh->cond);
  pthread_mutex_destroy(&sh->lock);
  free(results);
  free(w);
  free(mc);
  return st;
}

clphmm_status cph_multi_compute(clphmm_context *ctx,
                                const clphmm_batch *batches, size_t n_batches,
                                double *out) {
  const double t0 = cph_now();
  size_t n_pairs;
  uint64_t cells;
  clphmm_status st = cph_validate_shapes(batches, n_batches, &n_pairs, &cells);
  if (!st && n_pairs > 0 && !out)
    st = cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "out is NULL");
  if (st) {
    snprintf(ctx->error, sizeof ctx->error, "%s", cph_error_message());
    return st;
  }
  size_t live[CPH_MAX_ENGINES];
  const size_t n_live = live_engines(ctx, live);
  const uint64_t chunk = ctx->eng[live[0]]->chunk_cells;
  const uint64_t least = chunk ? 2 * chunk : SPLIT_MIN_CELLS;
  if (n_live > 1 && cells >= least)
    st = split(ctx, live, n_live, batches, n_batches, n_pairs, cells, out, t0);
  else
    st = run_whole(ctx, live, n_live, batches, n_batches, out);
  if (st)
    snprintf(ctx->error, sizeof ctx->error, "%s", cph_error_message());
  return st;
}

clphmm_status cph_multi_warmup(clphmm_context *ctx) {
  size_t live[CPH_MAX_ENGINES];
  const size_t n_live = live_engines(ctx, live);
  clphmm_status st = CLPHMM_SUCCESS;
  size_t ok = 0;
  for (size_t k = 0; k < n_live; k++) {
    cph_engine *e = ctx->eng[live[k]];
    clphmm_status one = cph_engine_warmup(e);
    if (!one) {
      ok++;
      continue;
    }
    if (!device_failure(one))
      return one;
    st = one;
    drop(ctx, live[k], one, cph_error_message());
  }
  return ok ? CLPHMM_SUCCESS : all_failed(ctx, st);
}

void cph_multi_diagnostics(const clphmm_context *ctx, clphmm_diagnostics *d) {
  *d = ctx->diag;
  const clphmm_diagnostics *first = &ctx->eng[0]->diag;
  d->cache_enabled = first->cache_enabled;
  d->cache_writable = first->cache_writable;
  memcpy(d->cache_dir, first->cache_dir, sizeof d->cache_dir);
  d->devices = ctx->n;
  d->devices_dropped = 0;
  for (size_t i = 0; i < ctx->n; i++) {
    const cph_engine *e = ctx->eng[i];
    const clphmm_diagnostics *x = &e->diag;
    d->programs_compiled += x->programs_compiled;
    d->programs_loaded += x->programs_loaded;
    d->cache_writes += x->cache_writes;
    d->cache_rejected += x->cache_rejected;
    d->variant_fallbacks += x->variant_fallbacks;
    d->alloc_retries += x->alloc_retries;
    d->resets += x->resets;
    d->devices_dropped += e->dropped != 0;
    if (x->detail[0]) {
      cph_diag_note(d, "device %zu of the context (%s):", i, e->dev.info.name);
      size_t used = strlen(d->detail);
      snprintf(d->detail + used, sizeof d->detail - used, "%s", x->detail);
    }
  }
}
