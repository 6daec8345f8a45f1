#include "engine/launch.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* Work-items per read in the row preparation. */
#define PREP_WG 64

static clphmm_status add_event(cph_slot *s, cl_event ev, int kind, int bin) {
  if (s->n_events == s->cap_events) {
    size_t cap = s->cap_events ? 2 * s->cap_events : 32;
    cph_event *e = realloc(s->events, cap * sizeof *e);
    if (!e) {
      cph_cl.ReleaseEvent(ev);
      return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for events");
    }
    s->events = e;
    s->cap_events = cap;
  }
  s->events[s->n_events++] = (cph_event){ev, kind, bin};
  return CLPHMM_SUCCESS;
}

void cph_slot_abandon(cph_slot *s) {
  for (size_t i = 0; i < s->n_events; i++)
    cph_cl.ReleaseEvent(s->events[i].ev);
  s->n_events = 0;
  s->active = 0;
}

/* A non-blocking copy of `bytes` from host memory to `dst`. */
static clphmm_status write_buf(cph_engine *ctx, cph_slot *s, cl_mem dst,
                               const void *src, size_t bytes,
                               const char *what) {
  if (bytes == 0)
    return CLPHMM_SUCCESS;
  cl_event ev = NULL;
  cl_int err = cph_cl.EnqueueWriteBuffer(ctx->queue, dst, CL_FALSE, 0, bytes,
                                         src, 0, NULL, s->timed ? &ev : NULL);
  if (err != CL_SUCCESS)
    return cph_buf_fail(&ctx->bufs, "clEnqueueWriteBuffer", err, what);
  return s->timed ? add_event(s, ev, CPH_EV_UPLOAD, -1) : CLPHMM_SUCCESS;
}

static clphmm_status read_buf(cph_engine *ctx, cph_slot *s, cl_mem src,
                              void *dst, size_t bytes, const char *what) {
  if (bytes == 0)
    return CLPHMM_SUCCESS;
  cl_event ev = NULL;
  cl_int err = cph_cl.EnqueueReadBuffer(ctx->queue, src, CL_FALSE, 0, bytes,
                                        dst, 0, NULL, &ev);
  if (err != CL_SUCCESS)
    return cph_buf_fail(&ctx->bufs, "clEnqueueReadBuffer", err, what);
  return add_event(s, ev, CPH_EV_DOWNLOAD, -1);
}

static clphmm_status run_kernel(cph_engine *ctx, cph_slot *s, cl_kernel k,
                                size_t global, size_t local, int kind,
                                int bin) {
  cl_event ev = NULL;
  cl_int err = cph_cl.EnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global,
                                           &local, 0, NULL, &ev);
  if (err != CL_SUCCESS)
    return cph_buf_fail(&ctx->bufs, "clEnqueueNDRangeKernel", err,
                        "launching the kernel");
  return add_event(s, ev, kind, bin);
}

/* Set the arguments of k that differ from those in `cache` (values of at
 * most 8 bytes, n <= CPH_MAX_ARGS). */
static clphmm_status set_args(cl_kernel k, cph_args *cache, size_t n,
                              const size_t *sizes, const void *const *values) {
  const unsigned long gen = cph_devbuf_generation();
  if (cache->gen != gen) {
    cache->set = 0;
    cache->gen = gen;
  }
  for (size_t a = 0; a < n; a++) {
    uint64_t v = 0;
    memcpy(&v, values[a], sizes[a]);
    if ((cache->set >> a & 1) && cache->v[a] == v)
      continue;
    cl_int err = cph_cl.SetKernelArg(k, (cl_uint)a, sizes[a], values[a]);
    if (err != CL_SUCCESS) {
      cache->set = 0;
      return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clSetKernelArg", err,
                         "setting kernel arguments");
    }
    cache->v[a] = v;
    cache->set |= 1u << a;
  }
  return CLPHMM_SUCCESS;
}

/* The tables of cl/prep.cl for the stage's flavor, uploaded once per
 * context (a blocking copy: it happens once). */
static clphmm_status prep_tables(cph_engine *ctx, const cph_stage *st,
                                 cl_mem *out) {
  cph_devbuf *b = &ctx->d.tables[st->flavor][st->scaled];
  if (!b->mem) {
    const size_t bytes = cph_prep_tables(st->flavor, st->scaled, NULL);
    void *host = malloc(bytes);
    if (!host)
      return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for tables");
    cph_prep_tables(st->flavor, st->scaled, host);
    clphmm_status rc =
        cph_devbuf_ensure(&ctx->bufs, b, bytes, "the row tables");
    cl_int err = CL_SUCCESS;
    if (!rc)
      err = cph_cl.EnqueueWriteBuffer(ctx->queue, b->mem, CL_TRUE, 0, bytes,
                                      host, 0, NULL, NULL);
    free(host);
    if (!rc && err != CL_SUCCESS) {
      cph_devbuf_release(b);
      rc = cph_buf_fail(&ctx->bufs, "clEnqueueWriteBuffer", err,
                        "uploading the row tables");
    }
    if (rc)
      return rc;
  }
  *out = b->mem;
  return CLPHMM_SUCCESS;
}

/* Device buffers for the chunk (grown as needed). */
static clphmm_status ensure_device(cph_engine *ctx, const cph_slot *s) {
  const cph_stage *st = &s->stage;
  const cph_sched *sc = &s->sched;
  const cph_bufctx *c = &ctx->bufs;
  cph_devset *d = &ctx->d;
  const size_t per_slot = st->scaled ? 2 : 1;
  clphmm_status rc = cph_devbuf_ensure(
      c, &d->raw, CPH_RAW_ROW_BYTES * st->n_rows, "uploading reads");
  if (!rc)
    rc = cph_devbuf_ensure(c, &d->rows, 8 * st->real_size * st->n_rows,
                           "uploading read rows");
  if (!rc)
    rc = cph_devbuf_ensure(c, &d->reads, 8 * st->n_reads, "uploading reads");
  if (!rc)
    rc = cph_devbuf_ensure(c, &d->weights, 16 * st->n_reads,
                           "allocating weights");
  if (!rc)
    rc = cph_devbuf_ensure(c, &d->hcodes, 4 * st->n_hwords,
                           "uploading haplotypes");
  if (!rc)
    rc = cph_devbuf_ensure(c, &d->pairs, 16 * sc->n_slots,
                           "uploading the pair list");
  if (!rc)
    rc = cph_devbuf_ensure(c, &d->groups, 8 * sc->n_groups,
                           "uploading the group list");
  if (!rc)
    rc = cph_devbuf_ensure(c, &d->sums, per_slot * st->real_size * sc->n_slots,
                           "allocating results");
  if (!rc)
    rc = cph_devbuf_ensure(c, &d->bound, sc->bound_bytes,
                           "allocating tile boundaries");
  return rc;
}

/* Uploads of chunks smaller than this go without events: on the H200 an
 * upload with a profiling event delayed the commands after it (one region
 * of 300 pairs: 381 us from the first command queued to the last one
 * ended with events on its ten uploads, 272 without), and a small chunk's
 * copies take a few microseconds. */
#define TIMED_UPLOAD_BYTES ((size_t)1 << 20)

/* One host-to-device copy of a chunk. */
typedef struct copy {
  cl_mem dst;
  const void *src;
  size_t bytes;
  const char *what;
} copy;

static clphmm_status upload(cph_engine *ctx, cph_slot *s) {
  const cph_stage *st = &s->stage;
  const cph_sched *sc = &s->sched;
  cph_devset *d = &ctx->d;
  /* With rows prepared here only the base codes of the raw bytes are
   * needed on the device, and the rows instead of the read table. */
  const copy rows = st->host_prep ? (copy){d->rows.mem, st->rows.ptr,
                                           8 * st->real_size * st->n_rows,
                                           "uploading read rows"}
                                  : (copy){d->reads.mem, st->reads.ptr,
                                           8 * st->n_reads, "uploading reads"};
  const copy copies[] = {
      {d->raw.mem, st->raw.ptr,
       (st->host_prep ? 1 : CPH_RAW_ROW_BYTES) * st->n_rows, "uploading reads"},
      rows,
      {d->hcodes.mem, st->hcodes.ptr, 4 * st->n_hwords, "uploading haplotypes"},
      {d->pairs.mem, sc->pairs.ptr, 16 * sc->n_slots,
       "uploading the pair list"},
      {d->groups.mem, sc->groups.ptr, 8 * sc->n_groups,
       "uploading the group list"},
  };
  const size_t n = sizeof copies / sizeof *copies;
  size_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += copies[i].bytes;
  s->timed = total >= TIMED_UPLOAD_BYTES;
  clphmm_status rc = CLPHMM_SUCCESS;
  for (size_t i = 0; i < n && !rc; i++)
    rc = write_buf(ctx, s, copies[i].dst, copies[i].src, copies[i].bytes,
                   copies[i].what);
  return rc;
}

/* The rows of every read from its raw bytes (cl/prep.cl), with the
 * program of the chunk's first launch (all kernels of a chunk share the
 * arithmetic form). */
static clphmm_status prepare_rows(cph_engine *ctx, cph_slot *s) {
  const cph_stage *st = &s->stage;
  if (st->host_prep || st->n_reads == 0 || s->sched.n_launches == 0)
    return CLPHMM_SUCCESS;
  /* Every program of a precision has the same row preparation; a
   * fallback program may lack it. */
  /* (The context's kernels: their argument caches change here.) */
  cph_kernel *pk = NULL;
  for (size_t i = 0; i < s->sched.n_launches && !pk; i++)
    if (s->sched.launches[i].k->prep)
      pk = (cph_kernel *)s->sched.launches[i].k;
  if (!pk)
    return cph_error(CLPHMM_ERROR_BUILD_FAILED,
                     "no kernel program of this chunk has the row "
                     "preparation (prep_rows); set CLPHMM_HOST_PREP=1");
  cl_mem tab;
  clphmm_status rc = prep_tables(ctx, st, &tab);
  if (rc)
    return rc;
  const cl_uint n_rows = (cl_uint)st->n_rows;
  cph_devset *d = &ctx->d;
  const size_t sizes[] = {sizeof(cl_mem), sizeof n_rows,  sizeof(cl_mem),
                          sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
  const void *const values[] = {&d->raw.mem, &n_rows,      &d->reads.mem,
                                &tab,        &d->rows.mem, &d->weights.mem};
  rc = set_args(pk->prep, &pk->prep_args, 6, sizes, values);
  if (!rc)
    rc = run_kernel(ctx, s, pk->prep, st->n_reads * PREP_WG, PREP_WG,
                    CPH_EV_PREP, -1);
  return rc;
}

static clphmm_status launch(cph_engine *ctx, cph_slot *s, const cph_launch *L) {
  cph_devset *d = &ctx->d;
  const cl_uint bound_cols = L->bound_cols, coop = L->coop;
  const cl_uint first_slot = (cl_uint)L->first_slot,
                first_group = (cl_uint)L->first_group;
  const cl_int per_column = s->stage.flavor == CPH_JAVA_DOUBLE;
  const size_t m = sizeof(cl_mem), u = sizeof(cl_uint);
  const size_t sizes[] = {m, m, m, m, m, m, m, u, sizeof per_column, u, u, u};
  const void *const values[] = {&d->rows.mem,  &d->raw.mem,    &d->hcodes.mem,
                                &d->pairs.mem, &d->groups.mem, &d->sums.mem,
                                &d->bound.mem, &bound_cols,    &per_column,
                                &coop,         &first_slot,    &first_group};
  cph_kernel *kn = (cph_kernel *)L->k; /* its argument cache changes */
  cl_kernel k = kn->kernel;
  clphmm_status rc = set_args(k, &kn->args, 12, sizes, values);
  if (!rc)
    rc = run_kernel(ctx, s, k, L->n_groups * L->k->variant.wg, L->k->variant.wg,
                    CPH_EV_KERNEL, L->bin);
  return rc;
}

clphmm_status cph_submit(cph_engine *ctx, cph_slot *s) {
  const cph_stage *st = &s->stage;
  const cph_sched *sc = &s->sched;
  const size_t per_slot = st->scaled ? 2 : 1;
  s->n_events = 0;
  s->active = 1;
  clphmm_status rc = cph_hostbuf_ensure(
      &ctx->bufs, &s->sums, per_slot * st->real_size * sc->n_slots, "results");
  if (!rc)
    rc = ensure_device(ctx, s);
  if (!rc)
    rc = upload(ctx, s);
  if (!rc)
    rc = prepare_rows(ctx, s);
  for (size_t i = 0; i < sc->n_launches && !rc; i++)
    rc = launch(ctx, s, &sc->launches[i]);
  if (!rc)
    rc = read_buf(ctx, s, ctx->d.sums.mem, s->sums.ptr,
                  per_slot * st->real_size * sc->n_slots,
                  "reading results (the kernel may have failed)");
  if (!rc && st->scaled && !st->host_prep)
    rc = read_buf(ctx, s, ctx->d.weights.mem, st->weights.ptr, 16 * st->n_reads,
                  "reading weights (the kernel may have failed)");
  if (!rc) {
    cl_int err = cph_cl.Flush(ctx->queue);
    if (err != CL_SUCCESS)
      rc = cph_buf_fail(&ctx->bufs, "clFlush", err, "starting the work");
  }
  return rc;
}

/* Seconds between an event's start and end (0 when not available). */
static double event_seconds(cl_event ev) {
  cl_ulong t0 = 0, t1 = 0;
  if (cph_cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0,
                                   &t0, NULL) == CL_SUCCESS &&
      cph_cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1,
                                   NULL) == CL_SUCCESS &&
      t1 > t0)
    return (double)(t1 - t0) * 1e-9;
  return 0;
}

static void account(cph_engine *ctx, const cph_event *e) {
  const double t = event_seconds(e->ev);
  clphmm_stats *st = &ctx->stats;
  switch (e->kind) {
  case CPH_EV_UPLOAD: st->upload_seconds += t; break;
  case CPH_EV_DOWNLOAD: st->download_seconds += t; break;
  default:
    /* Kernel time includes the row preparation. */
    st->kernel_seconds += t;
    st->launches += e->kind == CPH_EV_KERNEL;
    if (e->kind == CPH_EV_PREP)
      st->rows_seconds += t;
    if (e->bin >= 0) {
      st->bins[e->bin].kernel_seconds += t;
      st->bins[e->bin].launches++;
    }
  }
}

clphmm_status cph_collect(cph_engine *ctx, cph_slot *s) {
  if (!s->active)
    return CLPHMM_SUCCESS;
  clphmm_status rc = CLPHMM_SUCCESS;
  if (s->n_events) {
    cl_int err = cph_cl.WaitForEvents(1, &s->events[s->n_events - 1].ev);
    if (err != CL_SUCCESS)
      rc = cph_buf_fail(&ctx->bufs, "clWaitForEvents", err,
                        "reading results (the kernel may have failed)");
  }
  static const char *const kinds[] = {"upload", "prep", "kernel", "download"};
  for (size_t i = 0; i < s->n_events && !rc; i++) {
    account(ctx, &s->events[i]);
    cph_trace_event(&ctx->trace, (int)(s - ctx->slots),
                    kinds[s->events[i].kind], s->events[i].bin,
                    s->events[i].ev);
  }
  for (size_t i = 0; !rc && i < s->sched.n_launches; i++) {
    const cph_launch *L = &s->sched.launches[i];
    if (L->bin >= 0) {
      ctx->stats.bins[L->bin].pairs += L->n_jobs;
      ctx->stats.bins[L->bin].cells += L->cells;
    }
  }
  cph_slot_abandon(s);
  return rc;
}
