#include "engine/context.h"

#include "engine/launch.h"
#include "model/bound.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Cells per launch by default: large enough that a launch fills a big GPU
 * many times over (each launch ends with a partly idle last wave: 2^32
 * split 1e10 cells into three launches, and one launch made the H200's
 * float pass 4.5% faster at 512 bases and 13% at 1024), small enough to
 * keep one launch of a CPU device to about a minute. GPUs take 2^38: only
 * chunks of few, long pairs come near (chunks close on cells at 2^34 once
 * they hold 2^16 pairs), and a second launch of such a chunk starts after
 * the first one's longest pairs have finished alone (the long suite's 1e11
 * cells of 1,674 pairs ran as two launches). */
#define DEFAULT_MAX_CELLS ((uint64_t)1 << 36)
#define DEFAULT_MAX_CELLS_GPU ((uint64_t)1 << 38)

const char *clphmm_version(void) {
  return CLPHMM_VERSION_STRING;
}

void clphmm_options_init(clphmm_options *o) {
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->precision = CLPHMM_PRECISION_FLOAT;
}

static clphmm_status reset(cph_engine *ctx);
static clphmm_status not_usable(void);
static clphmm_status after_failure(cph_engine *ctx, clphmm_status st);

static clphmm_status open_queue(cph_engine *ctx) {
  cl_int err;
  ctx->cl = cph_cl.CreateContext(NULL, 1, &ctx->dev.id, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clCreateContext", err,
                       ctx->dev.info.name);
  ctx->d.queue = cph_cl.CreateCommandQueue(
      ctx->cl, ctx->dev.id, ctx->profile ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
  if (err != CL_SUCCESS)
    return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clCreateCommandQueue", err,
                       ctx->dev.info.name);
  ctx->bufs =
      (cph_bufctx){ctx->cl, ctx->d.queue, &ctx->dev, &ctx->alloc_failed};
  return CLPHMM_SUCCESS;
}

clphmm_status cph_engine_queue(cph_engine *ctx, cl_command_queue *q) {
  if (*q)
    return CLPHMM_SUCCESS;
  cl_int err;
  *q = cph_cl.CreateCommandQueue(
      ctx->cl, ctx->dev.id, ctx->profile ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
  if (err != CL_SUCCESS) {
    *q = NULL;
    return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clCreateCommandQueue", err,
                       "a second queue");
  }
  return CLPHMM_SUCCESS;
}

int cph_engine_optional_queue(cph_engine *ctx, cl_command_queue *q, int *on,
                              const char *what) {
  if (*on && cph_engine_queue(ctx, q)) {
    cph_diag_note(&ctx->diag, "no %s: %s", what, cph_error_message());
    *on = 0;
  }
  return *on;
}

static void open_cache(cph_engine *ctx, const char *dir) {
  cph_cache_open(&ctx->cache, dir, &ctx->dev);
  ctx->diag.cache_enabled = ctx->cache.readable;
  ctx->diag.cache_writable = ctx->cache.readable && ctx->cache.writable;
  snprintf(ctx->diag.cache_dir, sizeof ctx->diag.cache_dir, "%s",
           ctx->cache.readable ? ctx->cache.dir : "");
  if (ctx->cache.note[0])
    cph_diag_note(&ctx->diag, "%s", ctx->cache.note);
}

static void release_kernels(cph_engine *ctx) {
  for (int d = 0; d < CPH_SETS; d++)
    for (size_t v = 0; v < CPH_MAX_VARIANTS; v++)
      for (int f = 0; f < CPH_KFLAVORS; f++)
        cph_kernel_release(&ctx->kernels[f][d][v]);
}

/* The engine's queues: main, side and copy (NULL until made). */
#define ENGINE_QUEUES 3
static void engine_queues(cph_engine *ctx, cl_command_queue *q[ENGINE_QUEUES]) {
  q[0] = &ctx->d.queue;
  q[1] = &ctx->side.queue;
  q[2] = &ctx->copy_queue;
}

static void release_cl(cph_engine *ctx) {
  cph_engine_release(ctx);
  release_kernels(ctx);
  cl_command_queue *q[ENGINE_QUEUES];
  engine_queues(ctx, q);
  for (int i = 0; i < ENGINE_QUEUES; i++) {
    if (*q[i])
      cph_cl.ReleaseCommandQueue(*q[i]);
    *q[i] = NULL;
  }
  if (ctx->cl)
    cph_cl.ReleaseContext(ctx->cl);
  ctx->cl = NULL;
}

/* A number from the environment variable `name`, lo..hi, `dflt` when
 * unset (`what`, if any, names the unit in the error). Used for
 * $CLPHMM_CONCURRENT_TILES (the most tiles of one long read that run at
 * once, whatever the launch's size; 1: one after the other; unset: chosen
 * per launch, see schedule.c), $CLPHMM_HOST_THREADS (threads of the host
 * stages; unset: one per core), $CLPHMM_PACK_BYTES and
 * $CLPHMM_EARLY_FLUSH (context.h). */
static clphmm_status env_number(const char *name, uint64_t dflt, uint64_t lo,
                                uint64_t hi, const char *what, uint64_t *out) {
  const char *v = getenv(name);
  *out = dflt;
  if (!v || !*v)
    return CLPHMM_SUCCESS;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  /* (Digits only: strtoull skips leading blanks and takes a sign, so " -1"
   * was 2^64 - 1; and out of range is ERANGE, not its largest value.) */
  if (*end || !isdigit((unsigned char)*v) || errno == ERANGE || n < lo ||
      n > hi)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "%s='%s' is not a number%s%s from %llu to %llu", name, v,
                     what ? " of " : "", what ? what : "",
                     (unsigned long long)lo, (unsigned long long)hi);
  *out = n;
  return CLPHMM_SUCCESS;
}

/* env_number for a count that fits `unsigned`, 0 when unset. */
static clphmm_status env_count(const char *name, unsigned lo, unsigned hi,
                               const char *what, unsigned *out) {
  uint64_t n;
  clphmm_status st = env_number(name, 0, lo, hi, what, &n);
  *out = (unsigned)n;
  return st;
}

/* $CLPHMM_SPECULATE: 0, 1 or auto (the default). */
static clphmm_status env_speculate(int *mode) {
  const char *v = getenv("CLPHMM_SPECULATE");
  *mode = CPH_SPECULATE_AUTO;
  if (!v || !*v || !strcmp(v, "auto"))
    return CLPHMM_SUCCESS;
  if (strcmp(v, "0") && strcmp(v, "1"))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "CLPHMM_SPECULATE='%s': expected 0, 1 or auto", v);
  *mode = v[0] == '1' ? CPH_SPECULATE_ALWAYS : CPH_SPECULATE_NEVER;
  return CLPHMM_SUCCESS;
}

/* $CLPHMM_DOUBLE_FIRST: auto (the default: by what the engine saw), 0
 * (never) or a number of rows from which reads always go first. */
static clphmm_status env_first(int *automatic, uint64_t *rows) {
  const char *v = getenv("CLPHMM_DOUBLE_FIRST");
  *automatic = !v || !*v || !strcmp(v, "auto");
  *rows = 0;
  return *automatic ? CLPHMM_SUCCESS
                    : env_number("CLPHMM_DOUBLE_FIRST", 0, 0, UINT32_MAX,
                                 "rows (or auto)", rows);
}

static void engine_destroy(cph_engine *ctx);

/* The engine of device `dev`; its host stages run on a pool of `threads`
 * threads (0: one per core). On failure the thread's error says why. */
static clphmm_status engine_create(const clphmm_options *o,
                                   const cph_device *dev, unsigned threads,
                                   int trace, cph_engine **out) {
  cph_engine *ctx = calloc(1, sizeof *ctx);
  *out = NULL;
  if (!ctx)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for a context");
  /* The host stages run on `threads` threads, or $CLPHMM_HOST_THREADS;
   * the pool is optional (without it they run on the calling thread). */
  unsigned host_threads = 0;
  clphmm_status st = env_count("CLPHMM_HOST_THREADS", 1, CPH_POOL_MAX,
                               "threads", &host_threads);
  ctx->pool = cph_pool_create(host_threads ? host_threads : threads);
  const char *hp = getenv("CLPHMM_HOST_PREP");
  ctx->host_prep = hp && *hp && strcmp(hp, "0") != 0;
  if (trace && !cph_trace_open(&ctx->trace))
    cph_diag_note(&ctx->diag, "CLPHMM_TRACE: cannot open '%s' for appending",
                  getenv("CLPHMM_TRACE"));
  ctx->precision = o->precision;
  ctx->max_cells = o->max_cells_per_launch ? o->max_cells_per_launch
                   : dev->info.type == CLPHMM_DEVICE_GPU ? DEFAULT_MAX_CELLS_GPU
                                                         : DEFAULT_MAX_CELLS;
  if (!st)
    st = env_count("CLPHMM_CONCURRENT_TILES", 1, 1024, "tiles", &ctx->max_coop);
  /* ($CLPHMM_CHUNK_CELLS: chunks of about this many cells, for tests and
   * tuning; at most 2^62, since twice a chunk's cells must not wrap.) */
  if (!st)
    st = env_number("CLPHMM_CHUNK_CELLS", 0, 1, 1ULL << 62, "cells",
                    &ctx->chunk_cells);
  if (!st)
    st = env_count("CLPHMM_SPLIT", 1, CPH_SPLIT_MAX_PARTS, "parts",
                   &ctx->split_parts);
  /* (0: per launch; only GPUs split: schedule.c launch_split.) */
  uint64_t pack = CPH_PACK_DEFAULT_BYTES, early_flush = 1;
  uint64_t spin_us = 0;
  if (!st)
    st = env_number("CLPHMM_PACK_BYTES", pack, 0, CPH_PACK_MAX_BYTES, "bytes",
                    &pack);
  if (!st)
    st =
        env_number("CLPHMM_EARLY_FLUSH", early_flush, 0, 1, NULL, &early_flush);
  if (!st)
    st = env_number("CLPHMM_WAIT_SPIN_US", spin_us, 0, 1000000, "microseconds",
                    &spin_us);
  /* Float mode: pairs stopped early of at least this many cells go
   * straight to the exact pass (finish.c); 0: none. */
  uint64_t exact_direct = CPH_EXACT_DIRECT_CELLS;
  if (!st)
    st = env_number("CLPHMM_EXACT_DIRECT", exact_direct, 0, UINT64_MAX, "cells",
                    &exact_direct);
  ctx->exact_direct = exact_direct;
  if (!st)
    st = env_first(&ctx->first_auto, &ctx->double_first);
  ctx->first_growth = cph_first_growth();
  /* Float mode's speculative pass on the side queue, beside the float
   * pass (speculate.c); 0: on the main queue, behind it. */
  uint64_t side = 1;
  if (!st)
    st = env_number("CLPHMM_SIDE_QUEUE", side, 0, 1, NULL, &side);
  ctx->side_queue = (int)side;
  /* A small call that rescues nothing leaves its speculative pass to the
   * next call's wait (speculate.c); 0: it waits for it. */
  uint64_t leave = 1;
  if (!st)
    st = env_number("CLPHMM_SPEC_LEAVE", leave, 0, 1, NULL, &leave);
  ctx->spec_leave = (int)leave;
  /* A large call's rescue chunks in its main pass (rescue.c). */
  uint64_t rescue_min = CPH_RESCUE_MIN_PAIRS;
  if (!st)
    st = env_number("CLPHMM_RESCUE_PAIRS", rescue_min, 1, UINT32_MAX, "pairs",
                    &rescue_min);
  ctx->rescue_min = rescue_min;
  ctx->rescue_max = CPH_RESCUE_MAX_PAIRS;
  uint64_t ramp = CPH_CHUNK_RAMP;
  if (!st)
    st = env_number("CLPHMM_CHUNK_RAMP", ramp, 1, 64, NULL, &ramp);
  ctx->chunk_ramp = (unsigned)ramp;
  /* Large chunks' uploads on the copy queue; 0: on the main queue. */
  uint64_t copy = 1;
  if (!st)
    st = env_number("CLPHMM_COPY_QUEUE", copy, 0, 1, NULL, &copy);
  ctx->copy_uploads = (int)copy;
  /* Their row preparation on the copy queue too; 0: on the main queue. */
  uint64_t prep_copy = 1;
  if (!st)
    st = env_number("CLPHMM_PREP_QUEUE", prep_copy, 0, 1, NULL, &prep_copy);
  ctx->prep_on_copy = (int)prep_copy;
  /* Float mode's early exit for launches of pairs this large. */
  uint64_t exit_cells = CPH_EXIT_CELLS;
  if (!st)
    st = env_number("CLPHMM_EXIT_CELLS", exit_cells, 0, UINT64_MAX, "cells",
                    &exit_cells);
  /* (Appended to each program's options, cph_variant_options, whose buffer
   * cut them silently past about 760 bytes.) */
  const char *opts = getenv("CLPHMM_BUILD_OPTIONS");
  if (!st && opts && strlen(opts) > CPH_MAX_EXTRA_OPTIONS)
    st = cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                   "CLPHMM_BUILD_OPTIONS of %zu bytes is too long (at most %d)",
                   strlen(opts), CPH_MAX_EXTRA_OPTIONS);
  ctx->exit_cells = exit_cells;
  ctx->copy_sched = 1;
  ctx->share_inputs = 1;
  /* Small calls' launches and wide pairs' compute their rows (0: a row
   * preparation in front of them; 2: every launch). */
  uint64_t inline_rows = 1, inline_cols = CPH_INLINE_COLS;
  if (!st)
    st =
        env_number("CLPHMM_INLINE_ROWS", inline_rows, 0, 2, NULL, &inline_rows);
  if (!st)
    st = env_number("CLPHMM_INLINE_COLS", inline_cols, 0, UINT32_MAX,
                    "cells per row", &inline_cols);
  ctx->inline_rows = (int)inline_rows;
  ctx->inline_cols = inline_cols;
  uint64_t small_bins = CPH_SMALL_BIN_GROUPS;
  if (!st)
    st = env_number("CLPHMM_SMALL_BINS", small_bins, 0, 64,
                    "work-groups per compute unit", &small_bins);
  ctx->small_bins = (unsigned)small_bins;
  uint64_t lanes = 0;
  if (!st)
    st = env_number("CLPHMM_PREP_LANES", lanes, 0, 64, NULL, &lanes);
  if (!st && lanes && (lanes < 8 || (lanes & (lanes - 1))))
    st = cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                   "CLPHMM_PREP_LANES='%s': expected 0 (from the reads), 8, "
                   "16, 32 or 64",
                   getenv("CLPHMM_PREP_LANES"));
  ctx->prep_lanes = (unsigned)lanes;
  ctx->pack_bytes = (size_t)pack;
  ctx->early_flush = (int)early_flush;
  ctx->wait_spin_s = 1e-6 * (double)spin_us;
  if (!st)
    st = env_speculate(&ctx->speculate);
  uint64_t profile = o->profile != 0;
  if (!st)
    st = env_number("CLPHMM_PROFILE", profile, 0, 1, NULL, &profile);
  ctx->profile = (int)profile;
  ctx->dev = *dev;
  ctx->seq_fill = (uint64_t)CPH_SEQ_MIN_PAIRS_PER_UNIT *
                  (dev->info.compute_units ? dev->info.compute_units : 1);
  ctx->max_device_bytes = o->max_device_bytes
                              ? o->max_device_bytes
                              : ctx->dev.info.global_mem_bytes / 2;
  if (!st)
    open_cache(ctx, o->cache_dir);
  if (!st && o->precision == CLPHMM_PRECISION_DOUBLE && !ctx->dev.info.has_fp64)
    st = cph_error(CLPHMM_ERROR_NO_DEVICE,
                   "%s has no double precision (cl_khr_fp64); use float "
                   "precision or another device",
                   ctx->dev.info.name);
  if (!st)
    st = open_queue(ctx);
  if (!st)
    st = cph_plan_variants(&ctx->dev, 0, 1, &ctx->variants[CPH_SET_FLOAT]);
  /* Float mode's double kernels only rescue: they use the scaled form. */
  if (!st)
    st = cph_plan_variants(&ctx->dev, 1, o->precision == CLPHMM_PRECISION_FLOAT,
                           &ctx->variants[CPH_SET_DOUBLE]);
  /* Rescue sums of the scaled form that do not stand are computed again
   * in GKL's exact order (compute.c). */
  if (!st && o->precision == CLPHMM_PRECISION_FLOAT && ctx->dev.info.has_fp64 &&
      cph_variant_scaled(&ctx->variants[CPH_SET_DOUBLE].v[0]))
    st = cph_plan_exact(&ctx->dev, &ctx->variants[CPH_SET_EXACT]);
  if (st) {
    engine_destroy(ctx);
    return st;
  }
  *out = ctx;
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
  cph_device *devs = malloc(CPH_MAX_ENGINES * sizeof *devs);
  clphmm_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx || !devs) {
    free(devs);
    free(ctx);
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for a context");
  }
  pthread_mutex_init(&ctx->lock, NULL);
  pthread_mutex_init(&ctx->build_lock, NULL);
  ctx->precision = o.precision;
  size_t n = 0;
  clphmm_status st =
      cph_device_select_list(o.device, devs, CPH_MAX_ENGINES, &n);
  /* Engines share the cores for their host stages; only the first one
   * traces (one timeline per file). */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned threads = 0;
  if (n > 1)
    threads = cores > (long)n ? (unsigned)((cores + (long)n - 1) / (long)n) : 1;
  for (size_t i = 0; i < n && !st; i++) {
    st = engine_create(&o, &devs[i], threads, i == 0, &ctx->eng[i]);
    if (st && n > 1)
      cph_error_prefix(st, "device %zu of the list (%s): ", i,
                       devs[i].info.name);
    if (!st) {
      ctx->n = i + 1;
      if (n > 1)
        ctx->eng[i]->build_lock = &ctx->build_lock;
    }
  }
  free(devs);
  if (st) {
    clphmm_context_destroy(ctx);
    return st;
  }
  *context = ctx;
  return CLPHMM_SUCCESS;
}

/* Store the kernels built from source since the last call in the cache. */
static void save_kernels(cph_engine *ctx) {
  cph_builder b = {ctx->cl, &ctx->dev, &ctx->cache, &ctx->diag};
  for (int d = 0; d < CPH_SETS; d++)
    for (size_t v = 0; v < CPH_MAX_VARIANTS; v++)
      for (int f = 0; f < CPH_KFLAVORS; f++)
        cph_kernel_save(&b, &ctx->kernels[f][d][v]);
  ctx->diag.cache_writable = ctx->cache.readable && ctx->cache.writable;
}

static void engine_destroy(cph_engine *ctx) {
  if (!ctx)
    return;
  if (!ctx->broken)
    save_kernels(ctx); /* built but never launched */
  release_cl(ctx);
  cph_pool_destroy(ctx->pool);
  cph_trace_close(&ctx->trace);
  for (int i = 0; i < CPH_SLOTS; i++)
    free(ctx->slots[i].events);
  /* (Not in cph_engine_release: an allocation retry releases the buffers
   * in the middle of a call, whose kernel intervals stay.) */
  cph_spans_release(&ctx->kernel_spans);
  free(ctx);
}

void clphmm_context_destroy(clphmm_context *ctx) {
  if (!ctx)
    return;
  for (size_t i = 0; i < ctx->n; i++)
    engine_destroy(ctx->eng[i]);
  pthread_mutex_destroy(&ctx->build_lock);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx);
}

static void release_devset(cph_devset *d) {
  cph_devbuf *all[] = {&d->raw,     &d->reads, &d->hcodes, &d->rows,
                       &d->weights, &d->pairs, &d->groups, &d->sums,
                       &d->bound,   &d->sync};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    cph_devbuf_release(all[i]);
  for (int f = 0; f < 3; f++)
    for (int sc = 0; sc < 2; sc++)
      cph_devbuf_release(&d->tables[f][sc]);
  cph_pack_release(&d->in);
  cph_pack_release(&d->out);
}

void cph_engine_finish(cph_engine *ctx) {
  cl_command_queue *q[ENGINE_QUEUES];
  engine_queues(ctx, q);
  for (int i = 0; i < ENGINE_QUEUES; i++)
    if (*q[i])
      cph_cl.Finish(*q[i]);
}

void cph_engine_release(cph_engine *ctx) {
  /* Commands still queued may read host buffers released below (malloc'ed
   * ones where pinned memory was refused). */
  cph_engine_finish(ctx);
  release_devset(&ctx->d);
  release_devset(&ctx->side);
  for (int i = 0; i < CPH_SLOTS; i++) {
    cph_slot *s = &ctx->slots[i];
    cph_slot_abandon(s);
    cph_stage_release(&ctx->bufs, &s->stage);
    cph_sched_release(&ctx->bufs, &s->sched);
    cph_hostbuf_release(&ctx->bufs, &s->sums);
    cph_hostbuf_release(&ctx->bufs, &s->pack_in);
    cph_hostbuf_release(&ctx->bufs, &s->pack_out);
    for (size_t b = 0; b < sizeof s->in / sizeof *s->in; b++)
      cph_devbuf_release(&s->in[b]);
    cph_devbuf_release(&s->rows);
    cph_devbuf_release(&s->weights);
  }
}

/* Build (or load) kernel k of variant `v` once. */
static clphmm_status obtain(cph_engine *ctx, const cph_variant *v, int set,
                            cph_kernel *k) {
  if (k->kernel)
    return CLPHMM_SUCCESS;
  cph_builder b = {ctx->cl, &ctx->dev, &ctx->cache, &ctx->diag};
  /* Engines of one context build one at a time, and store what they
   * compiled at once: engines of the same kind of device then load it
   * from the kernel cache instead of compiling it again. */
  if (ctx->build_lock)
    pthread_mutex_lock(ctx->build_lock);
  clphmm_status st = cph_kernel_obtain(&b, v, set != CPH_SET_FLOAT, k);
  if (!st && ctx->build_lock)
    cph_kernel_share(&b, k);
  if (ctx->build_lock)
    pthread_mutex_unlock(ctx->build_lock);
  ctx->diag.cache_writable = ctx->cache.readable && ctx->cache.writable;
  return st;
}

/* Variant `v` in `flavor`: the base program has neither split pairs nor
 * float mode's early exit (double programs keep their underflow exit) and
 * reads prepared rows. */
static cph_variant flavored(const cph_engine *ctx, cph_variant v, size_t i,
                            int set, int flavor) {
  v.split = (flavor & CPH_KF_SPLIT) != 0;
  v.inline_rows = (flavor & CPH_KF_INLINE) != 0;
  if (set == CPH_SET_FLOAT)
    v.early_exit =
        (flavor & CPH_KF_EXIT) ? ctx->variants[set].v[i].early_exit : 0;
  return v;
}

clphmm_status cph_context_kernel(cph_engine *ctx, size_t v, int set,
                                 const cph_kernel **kernel) {
  cph_kernel *k = &ctx->kernels[0][set][v];
  const cph_variant fv = flavored(ctx, ctx->variants[set].v[v], v, set, 0);
  clphmm_status st = obtain(ctx, &fv, set, k);
  if (!st)
    *kernel = k;
  return st;
}

clphmm_status cph_context_kernel_as(cph_engine *ctx, size_t v, int set,
                                    const cph_kernel *base, int flavor,
                                    const cph_kernel **kernel) {
  cph_kernel *k = &ctx->kernels[flavor][set][v];
  unsigned char *failed = &ctx->flavor_failed[flavor][set][v];
  if (*failed)
    return CLPHMM_ERROR_BUILD_FAILED;
  /* (From what the base built: maybe a fallback.) */
  const cph_variant fv = flavored(ctx, base->variant, v, set, flavor);
  clphmm_status st = obtain(ctx, &fv, set, k);
  if (st) {
    *failed = 1;
    cph_diag_note(&ctx->diag,
                  "variant %zu's program with%s%s%s did not build (launches "
                  "run without): %s",
                  v, flavor & CPH_KF_SPLIT ? " split pairs" : "",
                  flavor & CPH_KF_EXIT ? " the early exit" : "",
                  flavor & CPH_KF_INLINE ? " rows computed in the kernel" : "",
                  cph_error_message());
  } else {
    *kernel = k;
  }
  return st;
}

int cph_engine_inline_rows(const cph_engine *ctx, const cph_kernel *k,
                           int wide) {
  return ctx->inline_rows && !ctx->host_prep &&
         (k->variant.small || wide || ctx->inline_rows > 1) &&
         !k->variant.vec && k->prep;
}

/* Every kernel the engine may need: its precision's set, float mode's
 * rescue set (with fp64) and exact set (where planned). */
static clphmm_status warmup(cph_engine *ctx) {
  const int dbl = ctx->precision == CLPHMM_PRECISION_DOUBLE;
  const int rescue = !dbl && ctx->dev.info.has_fp64;
  for (int d = dbl ? CPH_SET_DOUBLE : CPH_SET_FLOAT; d < CPH_SETS; d++) {
    if (d == CPH_SET_DOUBLE && !dbl && !rescue)
      continue;
    for (size_t v = 0; v < cph_plan_count(&ctx->variants[d]); v++) {
      const cph_kernel *k, *kx;
      clphmm_status st = cph_context_kernel(ctx, v, d, &k);
      if (st)
        return st;
      /* (The float pass's exit flavour too, where it builds; split
       * programs come with the first launch that splits.) */
      if (d == CPH_SET_FLOAT &&
          cph_variant_exit(&ctx->variants[d].v[v], 0) == 1)
        (void)cph_context_kernel_as(ctx, v, d, k, CPH_KF_EXIT, &kx);
      /* (And the one that computes its rows.) */
      if (cph_engine_inline_rows(ctx, k, 1))
        (void)cph_context_kernel_as(ctx, v, d, k, CPH_KF_INLINE, &kx);
    }
  }
  return CLPHMM_SUCCESS;
}

/* After an OpenCL call failed mid-run, the queue (on some drivers the whole
 * OpenCL context) may be unusable: start over with a fresh context and
 * queue; kernels are rebuilt on demand (from the kernel cache). */
static clphmm_status reset(cph_engine *ctx) {
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
static clphmm_status after_failure(cph_engine *ctx, clphmm_status st) {
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

clphmm_status cph_engine_reset(cph_engine *ctx) {
  return reset(ctx);
}

/* Copy the thread's last error into the context (API boundary). */
static clphmm_status ctx_fail(clphmm_context *ctx, clphmm_status st) {
  if (st && ctx)
    snprintf(ctx->error, sizeof ctx->error, "%s", cph_error_message());
  return st;
}

/* One compute call at a time on a context; readers of what a call writes
 * wait for the call in progress (the lock is the context's, which the const API
 * cannot show). */
static void lock(const clphmm_context *ctx) {
  pthread_mutex_lock((pthread_mutex_t *)&ctx->lock);
}

static void unlock(const clphmm_context *ctx) {
  pthread_mutex_unlock((pthread_mutex_t *)&ctx->lock);
}

/* Warm up one engine (a broken one gets one more try). */
clphmm_status cph_engine_warmup(cph_engine *e) {
  if (e->broken && reset(e) != CLPHMM_SUCCESS)
    return not_usable();
  clphmm_status st = warmup(e);
  if (st == CLPHMM_ERROR_OPENCL)
    st = after_failure(e, st);
  return st;
}

clphmm_status clphmm_context_warmup(clphmm_context *ctx) {
  if (!ctx)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "context is NULL");
  lock(ctx);
  clphmm_status st =
      ctx->n == 1 ? cph_engine_warmup(ctx->eng[0]) : cph_multi_warmup(ctx);
  st = ctx_fail(ctx, st);
  unlock(ctx);
  return st;
}

clphmm_status clphmm_context_diagnostics(const clphmm_context *ctx,
                                         clphmm_diagnostics *d) {
  if (!ctx || !d)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "NULL argument");
  lock(ctx);
  if (ctx->n == 1) {
    *d = ctx->eng[0]->diag;
    d->devices = 1;
  } else {
    cph_multi_diagnostics(ctx, d);
  }
  unlock(ctx);
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_context_device(const clphmm_context *ctx,
                                    clphmm_device_info *info) {
  if (!ctx || !info)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "NULL argument");
  *info = ctx->eng[0]->dev.info;
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_context_device_at(const clphmm_context *ctx, size_t i,
                                       clphmm_device_info *info) {
  if (!ctx || !info)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "NULL argument");
  if (i >= ctx->n)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "device %zu of a context of %zu device%s", i, ctx->n,
                     ctx->n == 1 ? "" : "s");
  *info = ctx->eng[i]->dev.info;
  return CLPHMM_SUCCESS;
}

size_t clphmm_context_device_count(const clphmm_context *ctx) {
  return ctx ? ctx->n : 0;
}

/* A device's entry of the statistics. */
void cph_device_stats_fill(const cph_engine *e, clphmm_device_stats *d) {
  memset(d, 0, sizeof *d);
  d->index = e->dev.info.index;
  snprintf(d->name, sizeof d->name, "%s", e->dev.info.name);
  d->dropped = e->dropped;
}

void cph_device_stats_counted(const cph_engine *e, clphmm_device_stats *d) {
  cph_device_stats_fill(e, d);
  d->pairs = e->stats.pairs;
  d->cells = e->stats.cells;
  d->rescued_pairs = e->stats.rescued_pairs;
  d->chunks = e->stats.chunks;
  d->kernel_seconds = e->stats.kernel_seconds;
  d->busy_seconds = e->stats.wall_seconds;
}

clphmm_status clphmm_context_stats(const clphmm_context *ctx,
                                   clphmm_stats *stats) {
  if (!ctx || !stats)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "NULL argument");
  lock(ctx);
  if (ctx->n == 1) {
    /* One device: its totals are the device's entry. */
    const cph_engine *e = ctx->eng[0];
    *stats = e->stats;
    stats->n_devices = 1;
    cph_device_stats_counted(e, &stats->devices[0]);
  } else {
    /* The last call's counts; names and dropped flags as they are now. */
    *stats = ctx->stats;
    stats->n_devices = ctx->n;
    for (size_t i = 0; i < ctx->n; i++) {
      clphmm_device_stats *d = &stats->devices[i];
      d->index = ctx->eng[i]->dev.info.index;
      snprintf(d->name, sizeof d->name, "%s", ctx->eng[i]->dev.info.name);
      d->dropped = ctx->eng[i]->dropped;
    }
  }
  unlock(ctx);
  return CLPHMM_SUCCESS;
}

/* The context's message is copied for the caller under the context's lock:
 * another thread's failing call on it may be writing it. */
const char *clphmm_last_error(const clphmm_context *ctx) {
  static _Thread_local char copy[CPH_ERROR_MAX];
  if (!ctx)
    return cph_error_message();
  lock(ctx);
  memcpy(copy, ctx->error, sizeof copy);
  unlock(ctx);
  return copy;
}

/* A compute call on one engine: a broken engine gets one more try, and
 * kernels built from source are stored after their first launches. */
clphmm_status cph_engine_run(cph_engine *e, const clphmm_batch *batches,
                             size_t n_batches, double *out) {
  if (e->broken && reset(e) != CLPHMM_SUCCESS)
    return not_usable();
  clphmm_status st = cph_engine_compute(e, batches, n_batches, out);
  if (!st)
    save_kernels(e);
  return st;
}

/* The same on a context's only engine: an OpenCL failure recreates its
 * OpenCL context, and the message says whether that worked. */
static clphmm_status compute_one(cph_engine *e, const clphmm_batch *batches,
                                 size_t n_batches, double *out) {
  const int was_broken = e->broken;
  clphmm_status st = cph_engine_run(e, batches, n_batches, out);
  if (st == CLPHMM_ERROR_OPENCL && !(was_broken && e->broken))
    st = after_failure(e, st);
  return st;
}

void cph_engine_save_kernels(cph_engine *e) {
  save_kernels(e);
}

/* Calls on one context from several threads run one after the other. */
clphmm_status clphmm_compute(clphmm_context *ctx, const clphmm_batch *batches,
                             size_t n_batches, double *out) {
  if (!ctx)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "context is NULL");
  lock(ctx);
  clphmm_status st;
  if (ctx->n == 1) {
    cph_engine *e = ctx->eng[0];
    const uint64_t fallbacks = e->diag.variant_fallbacks;
    st = ctx_fail(ctx, compute_one(e, batches, n_batches, out));
    if (!st && e->diag.variant_fallbacks > fallbacks)
      snprintf(ctx->error, sizeof ctx->error,
               "not an error: kernel variants were replaced after a build "
               "failure; see clphmm_context_diagnostics:\n%s",
               e->diag.detail);
  } else {
    st = cph_multi_compute(ctx, batches, n_batches, out);
  }
  unlock(ctx);
  return st;
}
