#include "engine/context.h"

#include "base/clock.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "engine/run.h"
#include "model/validate.h"

/* Cells per launch by default: large enough that a launch fills a big GPU
 * many times over (each launch ends with a partly idle last wave: 2^32
 * split 1e10 cells into three launches, and one launch made the H200's
 * float pass 4.5% faster at 512 bases and 13% at 1024), small enough to
 * keep one launch of a CPU device to about a minute. */
#define DEFAULT_MAX_CELLS ((uint64_t)1 << 36)

const char *clphmm_version(void) {
  return CLPHMM_VERSION_STRING;
}

void clphmm_options_init(clphmm_options *o) {
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->precision = CLPHMM_PRECISION_FLOAT;
}

/* Copy the thread's last error into the context (API boundary). */
static clphmm_status ctx_fail(clphmm_context *ctx, clphmm_status st) {
  if (st && ctx)
    snprintf(ctx->error, sizeof ctx->error, "%s", cph_error_message());
  return st;
}

static clphmm_status reset(clphmm_context *ctx);
static clphmm_status not_usable(void);
static clphmm_status after_failure(clphmm_context *ctx, clphmm_status st);

static clphmm_status open_queue(clphmm_context *ctx) {
  cl_int err;
  ctx->cl = cph_cl.CreateContext(NULL, 1, &ctx->dev.id, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clCreateContext", err,
                       ctx->dev.info.name);
  ctx->queue = cph_cl.CreateCommandQueue(ctx->cl, ctx->dev.id,
                                         CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS)
    return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clCreateCommandQueue", err,
                       ctx->dev.info.name);
  return CLPHMM_SUCCESS;
}

static void open_cache(clphmm_context *ctx, const char *dir) {
  cph_cache_open(&ctx->cache, dir, &ctx->dev);
  ctx->diag.cache_enabled = ctx->cache.readable;
  ctx->diag.cache_writable = ctx->cache.readable && ctx->cache.writable;
  snprintf(ctx->diag.cache_dir, sizeof ctx->diag.cache_dir, "%s",
           ctx->cache.readable ? ctx->cache.dir : "");
  if (ctx->cache.note[0])
    cph_diag_note(&ctx->diag, "%s", ctx->cache.note);
}

static void release_kernels(clphmm_context *ctx) {
  for (int d = 0; d < 2; d++)
    for (size_t v = 0; v < CPH_MAX_VARIANTS; v++)
      cph_kernel_release(&ctx->kernels[d][v]);
}

static void release_cl(clphmm_context *ctx) {
  release_kernels(ctx);
  if (ctx->queue)
    cph_cl.ReleaseCommandQueue(ctx->queue);
  if (ctx->cl)
    cph_cl.ReleaseContext(ctx->cl);
  ctx->queue = NULL;
  ctx->cl = NULL;
}

/* $CLPHMM_CONCURRENT_TILES: the most tiles of one long read that run at
 * once, whatever the launch's size (1: one after the other; unset: chosen
 * per launch, see run.c). */
static clphmm_status env_max_coop(unsigned *max) {
  const char *v = getenv("CLPHMM_CONCURRENT_TILES");
  *max = 0;
  if (!v || !*v)
    return CLPHMM_SUCCESS;
  char *end;
  unsigned long n = strtoul(v, &end, 10);
  if (*end || n < 1 || n > 1024 || *v == '-' || *v == '+')
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "CLPHMM_CONCURRENT_TILES='%s' is not a number of tiles "
                     "from 1 to 1024",
                     v);
  *max = (unsigned)n;
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_context_create(const clphmm_options *options,
                                    clphmm_context **context) {
  if (!context)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "context is NULL");
  *context = NULL;
  clphmm_options o;
  clphmm_options_init(&o);
  if (options)
    o = *options;
  if (o.precision != CLPHMM_PRECISION_FLOAT &&
      o.precision != CLPHMM_PRECISION_DOUBLE)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "unknown precision %d",
                     (int)o.precision);
  clphmm_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for a context");
  ctx->precision = o.precision;
  ctx->max_cells =
      o.max_cells_per_launch ? o.max_cells_per_launch : DEFAULT_MAX_CELLS;
  clphmm_status st = env_max_coop(&ctx->max_coop);
  if (!st)
    st = cph_device_select(o.device, &ctx->dev);
  ctx->max_device_bytes = o.max_device_bytes
                              ? o.max_device_bytes
                              : ctx->dev.info.global_mem_bytes / 2;
  if (!st)
    open_cache(ctx, o.cache_dir);
  if (!st && o.precision == CLPHMM_PRECISION_DOUBLE && !ctx->dev.info.has_fp64)
    st = cph_error(CLPHMM_ERROR_NO_DEVICE,
                   "%s has no double precision (cl_khr_fp64); use float "
                   "precision or another device",
                   ctx->dev.info.name);
  if (!st)
    st = open_queue(ctx);
  if (!st)
    st = cph_plan_variants(&ctx->dev, 0, 1, &ctx->variants[0]);
  /* Float mode's double kernels only rescue: they use the scaled form. */
  if (!st)
    st = cph_plan_variants(&ctx->dev, 1, o.precision == CLPHMM_PRECISION_FLOAT,
                           &ctx->variants[1]);
  if (st) {
    clphmm_context_destroy(ctx);
    return st;
  }
  *context = ctx;
  return CLPHMM_SUCCESS;
}

/* Store the kernels built from source since the last call in the cache. */
static void save_kernels(clphmm_context *ctx) {
  cph_builder b = {ctx->cl, &ctx->dev, &ctx->cache, &ctx->diag};
  for (int d = 0; d < 2; d++)
    for (size_t v = 0; v < CPH_MAX_VARIANTS; v++)
      cph_kernel_save(&b, &ctx->kernels[d][v]);
  ctx->diag.cache_writable = ctx->cache.readable && ctx->cache.writable;
}

void clphmm_context_destroy(clphmm_context *ctx) {
  if (!ctx)
    return;
  if (!ctx->broken)
    save_kernels(ctx); /* built but never launched */
  release_cl(ctx);
  free(ctx);
}

clphmm_status cph_context_kernel(clphmm_context *ctx, size_t v, int dbl,
                                 const cph_kernel **kernel) {
  cph_kernel *k = &ctx->kernels[dbl][v];
  if (!k->kernel) {
    cph_builder b = {ctx->cl, &ctx->dev, &ctx->cache, &ctx->diag};
    clphmm_status st = cph_kernel_obtain(&b, &ctx->variants[dbl].v[v], dbl, k);
    ctx->diag.cache_writable = ctx->cache.readable && ctx->cache.writable;
    if (st)
      return st;
  }
  *kernel = k;
  return CLPHMM_SUCCESS;
}

static clphmm_status warmup(clphmm_context *ctx) {
  const int dbl = ctx->precision == CLPHMM_PRECISION_DOUBLE;
  const int rescue = !dbl && ctx->dev.info.has_fp64;
  for (int d = dbl; d <= (dbl || rescue); d++)
    for (size_t v = 0; v < ctx->variants[d].n; v++) {
      const cph_kernel *k;
      clphmm_status st = cph_context_kernel(ctx, v, d, &k);
      if (st)
        return st;
    }
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_context_warmup(clphmm_context *ctx) {
  if (!ctx)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "context is NULL");
  if (ctx->broken && reset(ctx) != CLPHMM_SUCCESS)
    return ctx_fail(ctx, not_usable());
  clphmm_status st = warmup(ctx);
  if (st == CLPHMM_ERROR_OPENCL)
    st = after_failure(ctx, st);
  return ctx_fail(ctx, st);
}

clphmm_status clphmm_context_diagnostics(const clphmm_context *ctx,
                                         clphmm_diagnostics *d) {
  if (!ctx || !d)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "NULL argument");
  *d = ctx->diag;
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_context_device(const clphmm_context *ctx,
                                    clphmm_device_info *info) {
  if (!ctx || !info)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "NULL argument");
  *info = ctx->dev.info;
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_context_stats(const clphmm_context *ctx,
                                   clphmm_stats *stats) {
  if (!ctx || !stats)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "NULL argument");
  *stats = ctx->stats;
  return CLPHMM_SUCCESS;
}

const char *clphmm_last_error(const clphmm_context *ctx) {
  return ctx ? ctx->error : cph_error_message();
}

/* Pack every batch (each read and haplotype once) and list the pairs that
 * need computing; empty reads or haplotypes give -inf right away. */
static clphmm_status pack_batches(const clphmm_batch *batches, size_t n,
                                  cph_pack *pack, cph_job *jobs, size_t *n_jobs,
                                  double *results) {
  size_t k = 0, nj = 0;
  for (size_t b = 0; b < n; b++) {
    const clphmm_batch *bt = &batches[b];
    uint32_t hap0 = (uint32_t)(pack->n_hap / 4), off;
    for (size_t h = 0; h < bt->n_haplotypes; h++) {
      clphmm_status st = cph_pack_hap(pack, &bt->haplotypes[h], &off);
      if (st)
        return st;
    }
    for (size_t r = 0; r < bt->n_reads; r++) {
      const clphmm_read *rd = &bt->reads[r];
      uint32_t row_off;
      double wm, wx;
      clphmm_status st = cph_pack_read(pack, rd, &row_off, &wm, &wx);
      if (st)
        return st;
      uint32_t hap_off = hap0;
      for (size_t h = 0; h < bt->n_haplotypes; h++, k++) {
        const clphmm_haplotype *hp = &bt->haplotypes[h];
        if (rd->length == 0 || hp->length == 0)
          results[k] = -INFINITY;
        else
          jobs[nj++] = (cph_job){row_off, (uint32_t)rd->length,
                                 hap_off, (uint32_t)hp->length,
                                 wm,      wx,
                                 k,       rd,
                                 hp};
        hap_off += cph_hap_words(hp->length);
      }
    }
  }
  *n_jobs = nj;
  return CLPHMM_SUCCESS;
}

/* GKL's double computation of one pair with the CPU reference. */
static clphmm_status rescue_on_cpu(const cph_job *jb, double *results) {
  double s;
  clphmm_status st =
      cph_reference_pair_double(jb->read, jb->hap, CPH_GKL_DOUBLE, &s);
  if (!st)
    results[jb->out] = cph_log10_double(s);
  return st;
}

/* Whether a device's double rescue sum stands. The scaled form's is
 * GKL's double computation unless its scaled values overflowed (the sum is
 * then not finite: extreme quality jumps, insertion and deletion qualities
 * both 0) or its weights lost precision (below the normal range). */
static int rescue_sum_ok(const cph_pack *pack, const cph_job *jb, double sum) {
  return !pack->scaled ||
         (isfinite(sum) && jb->wm >= DBL_MIN && jb->wx >= DBL_MIN);
}

/* Recompute in double the float results that underflowed: on the device
 * when it has fp64, else with the CPU reference (PAIRHMM_SPEC 10). */
static clphmm_status rescue(clphmm_context *ctx, const cph_job *jobs,
                            const size_t *which, size_t n, double *results) {
  if (n == 0)
    return CLPHMM_SUCCESS;
  const double t0 = cph_now();
  ctx->stats.rescued_pairs += n;
  if (!ctx->dev.info.has_fp64) {
    for (size_t i = 0; i < n; i++) {
      clphmm_status st = rescue_on_cpu(&jobs[which[i]], results);
      if (st)
        return st;
    }
    return CLPHMM_SUCCESS;
  }
  cph_pack pack;
  cph_pack_init(&pack, CPH_GKL_DOUBLE,
                cph_variant_scaled(&ctx->variants[1].v[0]));
  cph_job *rj = malloc(n * sizeof *rj);
  double *sums = malloc(n * sizeof *sums);
  clphmm_status st = rj && sums ? CLPHMM_SUCCESS
                                : cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                                            "no memory to rescue %zu pairs", n);
  for (size_t i = 0; i < n && !st; i++) {
    rj[i] = jobs[which[i]];
    st = cph_pack_read(&pack, rj[i].read, &rj[i].row_off, &rj[i].wm, &rj[i].wx);
    if (!st)
      st = cph_pack_hap(&pack, rj[i].hap, &rj[i].hap_off);
  }
  if (!st)
    st = cph_run_jobs(ctx, &pack, rj, n, sums);
  for (size_t i = 0; i < n && !st; i++) {
    if (rescue_sum_ok(&pack, &rj[i], sums[i]))
      results[rj[i].out] = cph_log10_double(sums[i]);
    else
      st = rescue_on_cpu(&rj[i], results);
  }
  cph_pack_free(&pack);
  free(rj);
  free(sums);
  ctx->stats.rescue_seconds += cph_now() - t0;
  return st;
}

/* Turn scaled sums into log10 likelihoods; collect the pairs to rescue. */
static clphmm_status finish(clphmm_context *ctx, const cph_job *jobs, size_t n,
                            const double *sums, double *results) {
  if (ctx->precision == CLPHMM_PRECISION_DOUBLE) {
    for (size_t i = 0; i < n; i++)
      results[jobs[i].out] = cph_log10_double(sums[i]);
    return CLPHMM_SUCCESS;
  }
  size_t *which = malloc((n ? n : 1) * sizeof *which), nr = 0;
  if (!which)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for results");
  for (size_t i = 0; i < n; i++) {
    float f = (float)sums[i];
    if (cph_needs_rescue(f))
      which[nr++] = i;
    else
      results[jobs[i].out] = cph_log10_float(f);
  }
  clphmm_status st = rescue(ctx, jobs, which, nr, results);
  free(which);
  return st;
}

/* After an OpenCL call failed mid-run, the queue (on some drivers the whole
 * OpenCL context) may be unusable: start over with a fresh context and
 * queue; kernels are rebuilt on demand (from the kernel cache). */
static clphmm_status reset(clphmm_context *ctx) {
  release_cl(ctx);
  ctx->diag.resets++;
  clphmm_status st = open_queue(ctx);
  ctx->broken = st != CLPHMM_SUCCESS;
  if (st) {
    release_cl(ctx);
    cph_diag_note(&ctx->diag, "reset failed: %s", cph_error_message());
  }
  return st;
}

static clphmm_status not_usable(void) {
  char why[CPH_ERROR_MAX / 2];
  snprintf(why, sizeof why, "%s", cph_error_message());
  return cph_error(CLPHMM_ERROR_OPENCL,
                   "the context is not usable: an earlier OpenCL failure "
                   "left it without an OpenCL context, and recreating one "
                   "failed: %s",
                   why);
}

/* An OpenCL failure: say in the message whether the context survives. */
static clphmm_status after_failure(clphmm_context *ctx, clphmm_status st) {
  char msg[CPH_ERROR_MAX];
  snprintf(msg, sizeof msg, "%s", cph_error_message());
  if (reset(ctx) == CLPHMM_SUCCESS)
    return cph_error(st,
                     "%s (the OpenCL context was recreated; this "
                     "clphmm context stays usable)",
                     msg);
  char why[CPH_ERROR_MAX / 2];
  snprintf(why, sizeof why, "%s", cph_error_message());
  return cph_error(st,
                   "%s (recreating the OpenCL context failed, so this "
                   "clphmm context is not usable now: %s)",
                   msg, why);
}

/* Zero the statistics and name the bins (one per variant). */
static void reset_stats(clphmm_context *ctx) {
  const cph_variant_set *vs =
      &ctx->variants[ctx->precision == CLPHMM_PRECISION_DOUBLE];
  memset(&ctx->stats, 0, sizeof ctx->stats);
  ctx->stats.n_bins = vs->n;
  for (size_t i = 0; i < vs->n; i++) {
    const cph_variant *v = &vs->v[i];
    clphmm_bin_stats *b = &ctx->stats.bins[i];
    b->max_rows = v->seq ? UINT32_MAX : cph_variant_rows(v);
    snprintf(b->variant, sizeof b->variant, "%ux%u/%u%s", v->g, v->c, v->wg,
             v->seq ? ":long" : "");
  }
}

static clphmm_status compute(clphmm_context *ctx, const clphmm_batch *batches,
                             size_t n_batches, double *out) {
  size_t n_pairs;
  uint64_t cells;
  const double t0 = cph_now();
  clphmm_status st = cph_validate_batches(batches, n_batches, &n_pairs, &cells);
  if (st)
    return st;
  if (n_pairs > 0 && !out)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "out is NULL");
  double *results = malloc((n_pairs ? n_pairs : 1) * sizeof *results);
  cph_job *jobs = malloc((n_pairs ? n_pairs : 1) * sizeof *jobs);
  double *sums = malloc((n_pairs ? n_pairs : 1) * sizeof *sums);
  cph_pack pack;
  /* Every kernel of a variant set has the same arithmetic form. */
  const int dbl = ctx->precision == CLPHMM_PRECISION_DOUBLE;
  cph_pack_init(&pack, dbl ? CPH_JAVA_DOUBLE : CPH_GKL_FLOAT,
                cph_variant_scaled(&ctx->variants[dbl].v[0]));
  size_t n_jobs = 0;
  clphmm_stats before = ctx->stats;
  reset_stats(ctx);
  if (!results || !jobs || !sums)
    st = cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for %zu pairs",
                   n_pairs);
  if (!st)
    st = pack_batches(batches, n_batches, &pack, jobs, &n_jobs, results);
  const double t1 = cph_now();
  if (!st)
    st = cph_run_jobs(ctx, &pack, jobs, n_jobs, sums);
  const double t2 = cph_now();
  if (!st)
    st = finish(ctx, jobs, n_jobs, sums, results);
  if (!st) {
    if (n_pairs)
      memcpy(out, results, n_pairs * sizeof *out);
    ctx->stats.prepare_seconds = t1 - t0;
    ctx->stats.finish_seconds = cph_now() - t2 - ctx->stats.rescue_seconds;
    ctx->stats.wall_seconds = cph_now() - t0;
    ctx->stats.pairs = n_pairs;
    ctx->stats.cells = cells;
  } else {
    ctx->stats = before;
  }
  cph_pack_free(&pack);
  free(results);
  free(jobs);
  free(sums);
  return st;
}

clphmm_status clphmm_compute(clphmm_context *ctx, const clphmm_batch *batches,
                             size_t n_batches, double *out) {
  if (!ctx)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "context is NULL");
  /* A context left broken by an earlier failure gets one more try. */
  if (ctx->broken && reset(ctx) != CLPHMM_SUCCESS)
    return ctx_fail(ctx, not_usable());
  uint64_t fallbacks = ctx->diag.variant_fallbacks;
  clphmm_status st = compute(ctx, batches, n_batches, out);
  if (!st)
    save_kernels(ctx);
  if (st == CLPHMM_ERROR_OPENCL)
    st = after_failure(ctx, st);
  if (!st && ctx->diag.variant_fallbacks > fallbacks)
    snprintf(ctx->error, sizeof ctx->error,
             "not an error: kernel variants were replaced after a build "
             "failure; see clphmm_context_diagnostics:\n%s",
             ctx->diag.detail);
  return ctx_fail(ctx, st);
}
