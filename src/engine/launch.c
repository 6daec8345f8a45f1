#include "engine/launch.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"

/* The row preparation's work-group size, and the fewest work-items it
 * gives a read (cl/prep.cl PREP_WG, PREP_MIN_LANES). */
#define PREP_WG 64
#define PREP_MIN_LANES 8

/* A part of a chunk's submission in the CLPHMM_TRACE timeline (where a
 * small call's enqueueing time goes), timed from *t, which moves on. */
static void trace_part(cph_engine *ctx, const cph_slot *s, const char *what,
                       double *t) {
  if (!ctx->trace.f)
    return;
  cph_trace_host(&ctx->trace, what, (int)(s - ctx->slots), *t);
  *t = cph_now();
}

/* Keep a command's event: its kind, statistics bin (-1: none) and, for the
 * trace, a copy's bytes or a launch's cells (else 0). */
static clphmm_status add_event(cph_slot *s, cl_event ev, int kind, int bin,
                               uint64_t amount) {
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
  s->events[s->n_events++] = (cph_event){ev, kind, bin, amount};
  return CLPHMM_SUCCESS;
}

void cph_slot_abandon(cph_slot *s) {
  for (size_t i = 0; i < s->n_events; i++)
    cph_cl.ReleaseEvent(s->events[i].ev);
  s->n_events = 0;
  s->active = 0;
  s->in_ev = s->weights_ev = NULL; /* (events of the slot's) */
  s->lends = 0;
  s->inputs_of = NULL;
  s->lent_ev = NULL;
  s->weights_later = 0;
  s->left = 0;
}

/* A non-blocking copy of `bytes` from host memory to `dst`: on the slot's
 * queue, or for a copied chunk on the copy queue, where every copy has an
 * event (in the slot's events, which own it) and the last one is in_ev. */
static clphmm_status write_buf(cph_engine *ctx, cph_slot *s, cl_mem dst,
                               const void *src, size_t bytes,
                               const char *what) {
  if (bytes == 0)
    return CLPHMM_SUCCESS;
  cl_event ev = NULL;
  const int want = (s->timed && ctx->profile) || s->copied || s->lends;
  cl_command_queue q = s->copied ? ctx->copy_queue : s->d->queue;
  cl_int err = cph_cl.EnqueueWriteBuffer(q, dst, CL_FALSE, 0, bytes, src, 0,
                                         NULL, want ? &ev : NULL);
  if (err != CL_SUCCESS)
    return cph_buf_fail(&ctx->bufs, "clEnqueueWriteBuffer", err, what);
  s->d->unflushed |= !s->copied;
  clphmm_status rc =
      want ? add_event(s, ev, CPH_EV_UPLOAD, -1, bytes) : CLPHMM_SUCCESS;
  if (!rc && s->copied)
    s->in_ev = ev;
  if (!rc && s->lends)
    s->lent_ev = ev;
  return rc;
}

/* The wait list of the chunk's next command on its queue, taken: the
 * copies' last event, for the first command after them (the slot's events
 * still own it). */
static cl_uint take_waits(cph_slot *s, cl_event *ev) {
  *ev = s->in_ev;
  s->in_ev = NULL;
  return *ev ? 1 : 0;
}

static clphmm_status read_buf(cph_engine *ctx, cph_slot *s, cl_mem src,
                              void *dst, size_t bytes, const char *what) {
  if (bytes == 0)
    return CLPHMM_SUCCESS;
  cl_event ev = NULL, w;
  const cl_uint n_w = take_waits(s, &w);
  cl_int err = cph_cl.EnqueueReadBuffer(s->d->queue, src, CL_FALSE, 0, bytes,
                                        dst, n_w, n_w ? &w : NULL, &ev);
  if (err != CL_SUCCESS)
    return cph_buf_fail(&ctx->bufs, "clEnqueueReadBuffer", err, what);
  s->d->unflushed = 1;
  return add_event(s, ev, CPH_EV_DOWNLOAD, -1, bytes);
}

/* Enqueue k on the slot's queue (an event when profiling, of `kind`,
 * `bin` and the launch's `cells`, 0 for the row preparation). */
static clphmm_status run_kernel(cph_engine *ctx, cph_slot *s, cl_kernel k,
                                size_t global, size_t local, int kind, int bin,
                                uint64_t cells) {
  cl_event ev = NULL, w;
  const cl_uint n_w = take_waits(s, &w);
  cl_int err =
      cph_cl.EnqueueNDRangeKernel(s->d->queue, k, 1, NULL, &global, &local, n_w,
                                  n_w ? &w : NULL, ctx->profile ? &ev : NULL);
  if (err != CL_SUCCESS)
    return cph_buf_fail(&ctx->bufs, "clEnqueueNDRangeKernel", err,
                        "launching the kernel");
  s->d->unflushed = 1;
  return ctx->profile ? add_event(s, ev, kind, bin, cells) : CLPHMM_SUCCESS;
}

/* Set the arguments of k that differ from those in `cache` (values of at
 * most 16 bytes, n <= CPH_MAX_ARGS). */
static clphmm_status set_args(cl_kernel k, cph_args *cache, size_t n,
                              const size_t *sizes, const void *const *values) {
  const unsigned long gen = cph_devbuf_generation();
  if (cache->gen != gen) {
    cache->set = 0;
    cache->gen = gen;
  }
  for (size_t a = 0; a < n; a++) {
    uint64_t v[2] = {0, 0};
    memcpy(v, values[a], sizes[a]);
    if ((cache->set >> a & 1) && cache->v[a][0] == v[0] &&
        cache->v[a][1] == v[1])
      continue;
    cl_int err = cph_cl.SetKernelArg(k, (cl_uint)a, sizes[a], values[a]);
    if (err != CL_SUCCESS) {
      cache->set = 0;
      return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clSetKernelArg", err,
                         "setting kernel arguments");
    }
    cache->v[a][0] = v[0];
    cache->v[a][1] = v[1];
    cache->set |= 1u << a;
  }
  return CLPHMM_SUCCESS;
}

/* The tables of cl/prep.cl for the stage's flavor, uploaded once per
 * queue's buffers (a blocking copy: it happens once). */
static clphmm_status prep_tables(cph_engine *ctx, const cph_slot *s,
                                 cl_mem *out) {
  const cph_stage *st = &s->stage;
  cph_devbuf *b = &s->d->tables[st->flavor][st->scaled];
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
      err = cph_cl.EnqueueWriteBuffer(s->d->queue, b->mem, CL_TRUE, 0, bytes,
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

/* The buffers a chunk's commands use: the engine's own, or for a packed
 * chunk the parts of its packs. */
typedef struct chunk_mems {
  cl_mem raw, reads, rows, hcodes, pairs, groups, sums, weights, bound;
} chunk_mems;

/* One host-to-device copy of a chunk. */
typedef struct copy {
  const void *src;
  size_t bytes;
  const char *what;
} copy;

/* Whether every launch of the chunk computes its rows (CPH_KF_INLINE): it
 * then needs no rows on the device (a property of its schedule, read where
 * it matters). */
static int all_inline(const cph_slot *s) {
  size_t i = 0;
  while (i < s->sched.n_launches && s->sched.launches[i].k->variant.inline_rows)
    i++;
  return !s->stage.host_prep && s->sched.n_launches && i == s->sched.n_launches;
}

/* Whether the host computes the scaled form's weights at submission: a
 * small call's chunk (its launches are the small-call variant's) whose
 * launches compute their rows, so that no row preparation runs in front
 * of them. Larger chunks whose kernels compute their rows have the device
 * compute the weights (the row preparation without the rows): the host's
 * pool was the slower stage of a large call. */
static int host_weights(const cph_slot *s) {
  return all_inline(s) && s->sched.launches[0].k->variant.small;
}

/* Whether the chunk runs the row preparation: rows not prepared on the
 * host, and some launch reading prepared rows or, in the scaled form, the
 * weights wanted from the device (the preparation then gives them alone).
 * It takes the reads' table and the weights' buffer. */
static int needs_prep(const cph_slot *s) {
  const cph_stage *st = &s->stage;
  return !st->host_prep && st->n_reads && s->sched.n_launches &&
         (!all_inline(s) || (st->scaled && !host_weights(s)));
}

/* A chunk's inputs, in the order of its input pack's parts. With rows
 * prepared here only the base codes of the raw bytes are needed on the
 * device, and the rows instead of the read table; kernels that compute
 * their rows need no read table (only the row preparation reads it). */
enum { IN_RAW, IN_ROWS, IN_HCODES, IN_PAIRS, IN_GROUPS, N_IN };
static void inputs(const cph_slot *s, copy c[N_IN]) {
  const cph_stage *st = &s->stage;
  const cph_sched *sc = &s->sched;
  c[IN_RAW] =
      (copy){st->raw.ptr, (st->host_prep ? 1 : CPH_RAW_ROW_BYTES) * st->n_rows,
             "uploading reads"};
  c[IN_ROWS] = st->host_prep
                   ? (copy){st->rows.ptr, 8 * st->real_size * st->n_rows,
                            "uploading read rows"}
                   : (copy){st->reads.ptr, needs_prep(s) ? 8 * st->n_reads : 0,
                            "uploading reads"};
  c[IN_HCODES] =
      (copy){st->hcodes.ptr, 4 * st->n_hwords, "uploading haplotypes"};
  c[IN_PAIRS] =
      (copy){sc->pairs.ptr, 16 * sc->n_slots, "uploading the pair list"};
  c[IN_GROUPS] =
      (copy){sc->groups.ptr, 8 * sc->n_groups, "uploading the group list"};
}

/* A chunk's outputs: the kernels' sums and, in the scaled form with rows
 * prepared on the device, the reads' weights. */
enum { OUT_SUMS, OUT_WEIGHTS, N_OUT };
static size_t outputs(const cph_slot *s, size_t bytes[N_OUT]) {
  const cph_stage *st = &s->stage;
  bytes[OUT_SUMS] = (st->scaled ? 2 : 1) * st->real_size * s->sched.n_slots;
  bytes[OUT_WEIGHTS] = st->scaled && needs_prep(s) ? 16 * st->n_reads : 0;
  return bytes[OUT_WEIGHTS] ? 2 : 1;
}

/* The split pairs' ticket counter and flags (cl/pairhmm.cl, SPLIT_Q), of
 * at least `bytes`: a new buffer starts as zeros (flags of epoch 0, which
 * no launch uses, and the counter at 0). The flags carry their launch's
 * epoch, so launches need not clear them. */
static clphmm_status ensure_sync(cph_engine *ctx, cph_devset *d, size_t bytes) {
  cph_devbuf *b = &d->sync;
  if (b->mem && b->cap >= bytes)
    return CLPHMM_SUCCESS;
  clphmm_status rc =
      cph_devbuf_ensure(&ctx->bufs, b, bytes, "allocating split-pair flags");
  void *zeros = rc ? NULL : calloc(1, b->cap);
  if (!rc && !zeros)
    rc = cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for split flags");
  if (!rc) {
    /* Blocking, so that `zeros` may go: it waits for the queue's earlier
     * commands, but only when the buffer grows. */
    cl_int err = cph_cl.EnqueueWriteBuffer(d->queue, b->mem, CL_TRUE, 0, b->cap,
                                           zeros, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      rc = cph_buf_fail(&ctx->bufs, "clEnqueueWriteBuffer", err,
                        "clearing split-pair flags");
  }
  free(zeros);
  d->split_ticket = 0;
  if (rc)
    cph_devbuf_release(b);
  return rc;
}

/* The engine's device buffers for the chunk (grown as needed): all of
 * them, or for a packed chunk those outside the packs. */
static clphmm_status ensure_device(cph_engine *ctx, cph_slot *s) {
  const cph_stage *st = &s->stage;
  const cph_bufctx *c = &ctx->bufs;
  cph_devset *d = s->d;
  clphmm_status rc = CLPHMM_SUCCESS;
  /* (Rows the host prepared are an input; kernels that compute their
   * rows need none.) */
  if (!st->host_prep && !all_inline(s))
    rc = cph_devbuf_ensure(c, s->own_rows ? &s->rows : &d->rows,
                           8 * st->real_size * st->n_rows,
                           "uploading read rows");
  if (!rc && !s->packed) {
    copy in[N_IN];
    size_t out[N_OUT];
    inputs(s, in);
    outputs(s, out);
    cph_devbuf *dst[N_IN] = {&d->raw, st->host_prep ? &d->rows : &d->reads,
                             &d->hcodes, &d->pairs, &d->groups};
    if (s->copied)
      for (size_t i = 0; i < N_IN; i++)
        dst[i] = &s->in[i];
    for (size_t i = 0; i < N_IN && !rc; i++)
      rc = cph_devbuf_ensure(c, dst[i], in[i].bytes, in[i].what);
    /* (The row preparation takes the weights' buffer in every form.) */
    if (!rc && needs_prep(s))
      rc = cph_devbuf_ensure(c, s->own_rows ? &s->weights : &d->weights,
                             16 * st->n_reads, "allocating weights");
    if (!rc)
      rc = cph_devbuf_ensure(c, &d->sums, out[OUT_SUMS], "allocating results");
  }
  if (!rc)
    rc = cph_devbuf_ensure(c, &d->bound, s->sched.bound_bytes,
                           "allocating tile boundaries");
  if (!rc && s->sched.sync_bytes)
    rc = ensure_sync(ctx, d, s->sched.sync_bytes);
  return rc;
}

/* The sizes of a packed chunk's parts: its inputs and outputs. (An empty
 * part is still carved, at least one alignment unit: the kernels take
 * every buffer, written or not.) */
static size_t pack_sizes(const cph_slot *s, size_t in[N_IN],
                         size_t out[N_OUT]) {
  copy c[N_IN];
  size_t total = 0;
  inputs(s, c);
  for (size_t i = 0; i < N_IN; i++)
    total += in[i] = c[i].bytes;
  outputs(s, out);
  return total + out[OUT_SUMS] + out[OUT_WEIGHTS];
}

/* The packs' parts for a packed chunk, and its host staging. */
static clphmm_status ensure_packs(cph_engine *ctx, cph_slot *s) {
  size_t in[N_IN], out[N_OUT];
  pack_sizes(s, in, out);
  cph_devset *d = s->d;
  /* (A borrower's inputs are its lender's: no input pack.) */
  clphmm_status rc = s->inputs_of
                         ? CLPHMM_SUCCESS
                         : cph_pack_ensure(&ctx->bufs, &d->in, N_IN, in,
                                           "uploading a small chunk");
  if (!rc)
    rc = cph_pack_ensure(&ctx->bufs, &d->out, N_OUT, out,
                         "allocating a small chunk's results");
  const size_t cap_was = s->pack_in.cap;
  if (!rc && !s->inputs_of)
    rc = cph_hostbuf_ensure(&ctx->bufs, &s->pack_in,
                            cph_pack_extent(&d->in, N_IN, in),
                            "a small chunk's staging");
  /* The one copy also moves the padding between parts: defined bytes. */
  if (!rc && s->pack_in.cap != cap_was)
    memset(s->pack_in.ptr, 0, s->pack_in.cap);
  if (!rc)
    rc = cph_hostbuf_ensure(&ctx->bufs, &s->pack_out,
                            cph_pack_extent(&d->out, N_OUT, out),
                            "a small chunk's results");
  return rc;
}

static chunk_mems mems_of(const cph_slot *s) {
  const cph_devset *d = s->d;
  chunk_mems m = {d->raw.mem,    d->reads.mem,   d->rows.mem,
                  d->hcodes.mem, d->pairs.mem,   d->groups.mem,
                  d->sums.mem,   d->weights.mem, d->bound.mem};
  if (s->copied) {
    m.raw = s->in[IN_RAW].mem;
    m.reads = s->in[IN_ROWS].mem;
    m.hcodes = s->in[IN_HCODES].mem;
    m.pairs = s->in[IN_PAIRS].mem;
    m.groups = s->in[IN_GROUPS].mem;
  }
  if (s->own_rows) {
    m.rows = s->rows.mem;
    m.weights = s->weights.mem;
  }
  if (s->packed) {
    /* (A borrower reads its lender's inputs.) */
    const cph_pack *in = s->inputs_of ? &s->inputs_of->d->in : &d->in;
    m.raw = in->part[IN_RAW];
    if (s->stage.host_prep)
      m.rows = in->part[IN_ROWS];
    else
      m.reads = in->part[IN_ROWS];
    m.hcodes = in->part[IN_HCODES];
    m.pairs = in->part[IN_PAIRS];
    m.groups = in->part[IN_GROUPS];
    m.sums = d->out.part[OUT_SUMS];
    m.weights = d->out.part[OUT_WEIGHTS];
  }
  return m;
}

/* Uploads of chunks smaller than this go without events: on the H200 an
 * upload with a profiling event delayed the commands after it (one region
 * of 300 pairs: 381 us from the first command queued to the last one
 * ended with events on its ten uploads, 272 without), and a small chunk's
 * copies take a few microseconds. */
#define TIMED_UPLOAD_BYTES ((size_t)1 << 20)

static clphmm_status upload(cph_engine *ctx, cph_slot *s, const chunk_mems *m) {
  if (s->inputs_of) /* (its lender's copy in is its own) */
    return CLPHMM_SUCCESS;
  copy in[N_IN];
  inputs(s, in);
  size_t total = 0;
  for (size_t i = 0; i < N_IN; i++)
    total += in[i].bytes;
  s->timed = total >= TIMED_UPLOAD_BYTES;
  if (s->packed) {
    /* One copy: the inputs gathered at their parts' offsets. */
    double t = ctx->trace.f ? cph_now() : 0;
    size_t bytes[N_IN];
    for (size_t i = 0; i < N_IN; i++) {
      bytes[i] = in[i].bytes;
      if (bytes[i])
        memcpy((char *)s->pack_in.ptr + s->d->in.off[i], in[i].src, bytes[i]);
    }
    trace_part(ctx, s, "sub-gather", &t); /* (part of sub-copyin) */
    return write_buf(ctx, s, s->d->in.whole.mem, s->pack_in.ptr,
                     cph_pack_extent(&s->d->in, N_IN, bytes),
                     "uploading a small chunk");
  }
  const cl_mem dst[N_IN] = {m->raw, s->stage.host_prep ? m->rows : m->reads,
                            m->hcodes, m->pairs, m->groups};
  clphmm_status rc = CLPHMM_SUCCESS;
  for (size_t i = 0; i < N_IN && !rc; i++)
    rc = write_buf(ctx, s, dst[i], in[i].src, in[i].bytes, in[i].what);
  return rc;
}

static clphmm_status download(cph_engine *ctx, cph_slot *s,
                              const chunk_mems *m) {
  const cph_stage *st = &s->stage;
  size_t out[N_OUT];
  const size_t n = outputs(s, out);
  if (s->packed) {
    /* One copy; cph_collect puts the parts where finishing reads them. */
    const cph_pack *po = &s->d->out;
    s->out_off[OUT_SUMS] = po->off[OUT_SUMS];
    s->out_off[OUT_WEIGHTS] = po->off[OUT_WEIGHTS];
    return read_buf(ctx, s, po->whole.mem, s->pack_out.ptr,
                    cph_pack_extent(po, n, out),
                    "reading results (the kernel may have failed)");
  }
  clphmm_status rc = read_buf(ctx, s, m->sums, s->sums.ptr, out[OUT_SUMS],
                              "reading results (the kernel may have failed)");
  /* (After the weights-alone preparation on the copy queue.) */
  if (!rc && s->weights_ev) {
    s->in_ev = s->weights_ev;
    s->weights_ev = NULL;
  }
  if (!rc)
    rc = read_buf(ctx, s, m->weights, st->weights.ptr, out[OUT_WEIGHTS],
                  "reading weights (the kernel may have failed)");
  return rc;
}

/* A packed chunk's downloaded outputs where finishing reads them. */
static void unpack_outputs(cph_slot *s) {
  size_t out[N_OUT];
  const size_t n = outputs(s, out);
  memcpy(s->sums.ptr, (char *)s->pack_out.ptr + s->out_off[OUT_SUMS],
         out[OUT_SUMS]);
  if (n > OUT_WEIGHTS)
    memcpy(s->stage.weights.ptr,
           (char *)s->pack_out.ptr + s->out_off[OUT_WEIGHTS], out[OUT_WEIGHTS]);
}

/* Work-items per read of the chunk's row preparation: a power of 2 of
 * at least a quarter of its reads' mean length (PREP_MIN_LANES to
 * PREP_WG), or the engine's prep_lanes. */
static cl_uint prep_lanes(const cph_engine *ctx, const cph_stage *st) {
  if (ctx->prep_lanes)
    return ctx->prep_lanes;
  const size_t mean = st->n_reads ? st->n_rows / st->n_reads : 0;
  cl_uint lanes = PREP_MIN_LANES;
  while (lanes < PREP_WG && 4 * (size_t)lanes < mean)
    lanes *= 2;
  return lanes;
}

/* The row preparation's global size: PREP_WG work-items per PREP_WG /
 * lanes reads. */
static size_t prep_global(const cph_engine *ctx, const cph_stage *st) {
  const size_t per = PREP_WG / prep_lanes(ctx, st);
  return (st->n_reads + per - 1) / per * PREP_WG;
}

/* The row preparation of a copied chunk with its own rows, on the copy
 * queue behind its copies: it then overlaps the kernels of the chunk
 * before on the main queue instead of waiting for them, and the chunk's
 * first launch waits for its event instead of the last copy's; or, when
 * it gives the weights alone (its launches compute their rows), the
 * first launch keeps waiting for the copies only and the weights'
 * download waits for it (it would run late, behind the kernels before,
 * and hold back the chunk's kernels). */
static clphmm_status prepare_on_copy_queue(cph_engine *ctx, cph_slot *s,
                                           cl_kernel prep) {
  const size_t global = prep_global(ctx, &s->stage), local = PREP_WG;
  cl_event ev = NULL;
  cl_int err = cph_cl.EnqueueNDRangeKernel(ctx->copy_queue, prep, 1, NULL,
                                           &global, &local, 0, NULL, &ev);
  if (err != CL_SUCCESS)
    return cph_buf_fail(&ctx->bufs, "clEnqueueNDRangeKernel", err,
                        "launching the row preparation");
  clphmm_status rc = add_event(s, ev, CPH_EV_PREP, -1, 0);
  if (rc)
    return rc;
  if (all_inline(s))
    s->weights_ev = ev;
  else
    s->in_ev = ev;
  ctx->copy_preps++;
  err = cph_cl.Flush(ctx->copy_queue);
  return err == CL_SUCCESS ? CLPHMM_SUCCESS
                           : cph_buf_fail(&ctx->bufs, "clFlush", err,
                                          "starting the row preparation");
}

/* The rows of every read from its raw bytes (cl/prep.cl), with the
 * program of the chunk's first launch that has the row preparation (all
 * kernels of a chunk share the arithmetic form). */
static clphmm_status prepare_rows(cph_engine *ctx, cph_slot *s,
                                  const chunk_mems *m) {
  const cph_stage *st = &s->stage;
  if (!needs_prep(s))
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
  clphmm_status rc = prep_tables(ctx, s, &tab);
  if (rc)
    return rc;
  const cl_uint n_rows = (cl_uint)st->n_rows, store_rows = !all_inline(s),
                n_reads = (cl_uint)st->n_reads, lanes = prep_lanes(ctx, st);
  const size_t m_ = sizeof(cl_mem), u = sizeof(cl_uint);
  const size_t sizes[] = {m_, u, m_, m_, m_, m_, u, u, u};
  const void *const values[] = {&m->raw,     &n_rows,  &m->reads,
                                &tab,        &m->rows, &m->weights,
                                &store_rows, &n_reads, &lanes};
  rc = set_args(pk->prep, &pk->prep_args, 9, sizes, values);
  if (rc)
    return rc;
  ctx->weight_preps += !store_rows;
  if (s->own_rows)
    return prepare_on_copy_queue(ctx, s, pk->prep);
  return run_kernel(ctx, s, pk->prep, prep_global(ctx, st), PREP_WG,
                    CPH_EV_PREP, -1, 0);
}

static clphmm_status launch(cph_engine *ctx, cph_slot *s, const cph_launch *L,
                            const chunk_mems *m) {
  const cl_uint bound_cols = L->bound_cols, coop = L->coop;
  const cl_uint first_slot = (cl_uint)L->first_slot,
                first_group = (cl_uint)L->first_group;
  const cl_int per_column = s->stage.flavor == CPH_JAVA_DOUBLE;
  /* Split pairs: parts and split groups, rounds, a new epoch, the first
   * ticket. The split groups' parts, then a work-group per other group. */
  const size_t wgs = L->split_groups * L->split + L->n_groups - L->split_groups;
  cl_uint4 split = {{1, 0, 0, 0}};
  cl_mem sync = NULL;
  if (L->split > 1) {
    if (++ctx->split_epoch == 0) /* epoch 0 is the cleared flags' */
      ctx->split_epoch = 1;
    split = (cl_uint4){{L->split | (cl_uint)L->split_groups << 8,
                        L->split_rounds, ctx->split_epoch, s->d->split_ticket}};
    sync = s->d->sync.mem;
  }
  /* A kernel that computes its rows takes the row tables in the rows'
   * place, and the raw bytes' rows last. */
  const int inl = L->k->variant.inline_rows;
  cl_mem rows = m->rows;
  const cl_uint raw_rows = (cl_uint)s->stage.n_rows;
  clphmm_status rc = inl ? prep_tables(ctx, s, &rows) : CLPHMM_SUCCESS;
  const size_t sz = sizeof(cl_mem), u = sizeof(cl_uint);
  const size_t sizes[] = {
      sz, sz, sz, sz, sz,           sz, sz, u, sizeof per_column,
      u,  u,  u,  sz, sizeof split, u};
  const void *const values[] = {
      &rows,       &m->raw,      &m->hcodes,  &m->pairs,   &m->groups,
      &m->sums,    &m->bound,    &bound_cols, &per_column, &coop,
      &first_slot, &first_group, &sync,       &split,      &raw_rows};
  cph_kernel *kn = (cph_kernel *)L->k; /* its argument cache changes */
  cl_kernel k = kn->kernel;
  double t = ctx->trace.f ? cph_now() : 0;
  if (!rc)
    rc = set_args(k, &kn->args, inl ? 15 : 14, sizes, values);
  trace_part(ctx, s, "sub-args", &t); /* (part of sub-launch) */
  if (!rc)
    rc = run_kernel(ctx, s, k, wgs * L->k->variant.wg, L->k->variant.wg,
                    CPH_EV_KERNEL, L->bin, L->cells);
  /* Every work-group of the launch draws one ticket. */
  if (!rc && L->split > 1) {
    s->d->split_ticket += (uint32_t)wgs;
    const size_t ppw = cph_variant_pairs(&L->k->variant) / L->coop,
                 in_split = L->split_groups * ppw;
    ctx->stats.split_pairs += in_split < L->n_jobs ? in_split : L->n_jobs;
  }
  return rc;
}

/* Hand the commands enqueued so far to the device (none: nothing to do; a
 * small call's speculative pass, which shares the float pass's copy in,
 * has none after its inputs, and an empty flush cost NVIDIA's driver 2-3
 * us of the host). */
static clphmm_status flush(cph_engine *ctx, const cph_slot *s) {
  if (!s->d->unflushed)
    return CLPHMM_SUCCESS;
  s->d->unflushed = 0;
  cl_int err = cph_cl.Flush(s->d->queue);
  return err == CL_SUCCESS
             ? CLPHMM_SUCCESS
             : cph_buf_fail(&ctx->bufs, "clFlush", err, "starting the work");
}

/* Whether a chunk's copies go through the packs: small enough, and their
 * parts fit in the device's largest buffer. */
static int packable(const cph_engine *ctx, const cph_slot *s) {
  size_t in[N_IN], out[N_OUT];
  const size_t total = pack_sizes(s, in, out);
  return ctx->pack_bytes && total <= ctx->pack_bytes &&
         cph_pack_fits(&ctx->bufs, &s->d->in, N_IN, in) &&
         cph_pack_fits(&ctx->bufs, &s->d->out, N_OUT, out);
}

/* Whether a chunk's inputs go over the copy queue, into the slot's own
 * buffers, so that they overlap the kernels of the chunk before on the
 * main queue (one queue ran them one after the other: on the H200 the
 * HaplotypeCaller-like mix's 17 chunks spent 4.7 ms of a 33.1 ms call in
 * uploads between kernels). Not for packed chunks (small calls: one
 * more command and an event between queues), rows prepared here (an
 * input in the main queue's buffers) or the side queue's. */
static int copies(cph_engine *ctx, const cph_slot *s) {
  if (s->packed || s->stage.host_prep || s->d != &ctx->d)
    return 0;
  return cph_engine_optional_queue(ctx, &ctx->copy_queue, &ctx->copy_uploads,
                                   "copy queue");
}

clphmm_status cph_submit_inputs(cph_engine *ctx, cph_slot *s) {
  double t = ctx->trace.f ? cph_now() : 0;
  s->n_events = 0;
  s->weights_ev = NULL;
  s->active = 1;
  ctx->inline_chunks += (unsigned long)all_inline(s);
  s->packed = s->inputs_of || packable(ctx, s);
  s->copied = copies(ctx, s);
  s->own_rows = s->copied && ctx->prep_on_copy && needs_prep(s);
  if (s->inputs_of) {
    /* Its first launch waits for the lender's copy in. */
    if (!s->inputs_of->lent_ev)
      return cph_error(CLPHMM_ERROR_OPENCL,
                       "the float pass's copy in has no event to wait for");
    s->in_ev = s->inputs_of->lent_ev;
    ctx->shared_inputs++;
  }
  ctx->copied_chunks += (unsigned long)s->copied;
  ctx->side_chunks += s->d == &ctx->side;
  size_t out[N_OUT];
  outputs(s, out);
  clphmm_status rc =
      cph_hostbuf_ensure(&ctx->bufs, &s->sums, out[OUT_SUMS], "results");
  if (!rc && s->packed)
    rc = ensure_packs(ctx, s);
  if (!rc)
    rc = ensure_device(ctx, s);
  const chunk_mems m = mems_of(s);
  trace_part(ctx, s, "sub-buffers", &t);
  if (!rc)
    rc = upload(ctx, s, &m);
  trace_part(ctx, s, "sub-copyin", &t);
  /* (The copy queue's commands are handed over at once: the chunk's queue
   * waits for them.) */
  cl_int err = CL_SUCCESS;
  if (!rc && s->copied && (err = cph_cl.Flush(ctx->copy_queue)) != CL_SUCCESS)
    rc = cph_buf_fail(&ctx->bufs, "clFlush", err, "starting the copies");
  if (!rc && ctx->early_flush)
    rc = flush(ctx, s);
  trace_part(ctx, s, "sub-flush", &t);
  if (!rc)
    rc = prepare_rows(ctx, s, &m);
  trace_part(ctx, s, "sub-prep", &t);
  return rc;
}

int cph_share_inputs(cph_engine *ctx, cph_slot *s, cph_slot *from) {
  s->inputs_of = NULL;
  from->lends = 0;
  if (!ctx->share_inputs || s->d == from->d || !s->sched_copied ||
      !host_weights(s))
    return 0;
  size_t in[N_IN], out[N_OUT];
  pack_sizes(s, in, out);
  if (!packable(ctx, from) ||
      !cph_pack_fits(&ctx->bufs, &s->d->out, N_OUT, out))
    return 0;
  s->inputs_of = from;
  from->lends = 1;
  return 1;
}

clphmm_status cph_submit_launches(cph_engine *ctx, cph_slot *s) {
  double t = ctx->trace.f ? cph_now() : 0;
  const cph_sched *sc = &s->sched;
  const chunk_mems m = mems_of(s);
  const int early = ctx->early_flush;
  clphmm_status rc = CLPHMM_SUCCESS;
  /* (Before the first launch only when the row preparation came after
   * the uploads' flush on this queue: on the copy queue it flushed that.) */
  for (size_t i = 0; i < sc->n_launches && !rc; i++) {
    if (early && (i > 0 || (needs_prep(s) && !s->own_rows)))
      rc = flush(ctx, s);
    trace_part(ctx, s, "sub-flush", &t);
    if (!rc)
      rc = launch(ctx, s, &sc->launches[i], &m);
    trace_part(ctx, s, "sub-launch", &t);
  }
  return rc;
}

clphmm_status cph_submit_outputs(cph_engine *ctx, cph_slot *s) {
  double t = ctx->trace.f ? cph_now() : 0;
  const chunk_mems m = mems_of(s);
  clphmm_status rc = download(ctx, s, &m);
  trace_part(ctx, s, "sub-copyout", &t);
  if (!rc)
    rc = flush(ctx, s);
  trace_part(ctx, s, "sub-flush", &t);
  return rc;
}

void cph_submit_weights(cph_engine *ctx, cph_slot *s) {
  if (!s->active || s->weights_later || !host_weights(s) || !s->stage.scaled)
    return;
  double t = ctx->trace.f ? cph_now() : 0;
  cph_stage_weights(&s->stage, ctx->pool);
  trace_part(ctx, s, "sub-weights", &t);
}

void cph_later_weights(cph_slot *s, const unsigned char *want) {
  if (s->weights_later && host_weights(s) && s->stage.scaled)
    cph_stage_weights_of(&s->stage, want);
  s->weights_later = 0;
}

clphmm_status cph_submit(cph_engine *ctx, cph_slot *s) {
  clphmm_status rc = cph_submit_inputs(ctx, s);
  if (!rc)
    rc = cph_submit_launches(ctx, s);
  if (!rc)
    rc = cph_submit_outputs(ctx, s);
  if (!rc)
    cph_submit_weights(ctx, s);
  return rc;
}

/* An event's start and end on the device's clock (0, 0 when not
 * available). */
static void event_span(cl_event ev, cl_ulong *t0, cl_ulong *t1) {
  if (cph_cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof *t0,
                                   t0, NULL) != CL_SUCCESS ||
      cph_cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof *t1, t1,
                                   NULL) != CL_SUCCESS ||
      *t1 < *t0)
    *t0 = *t1 = 0;
}

static void account(cph_engine *ctx, const cph_event *e) {
  cl_ulong t0 = 0, t1 = 0;
  event_span(e->ev, &t0, &t1);
  const double t = (double)(t1 - t0) * 1e-9;
  clphmm_stats *st = &ctx->stats;
  switch (e->kind) {
  case CPH_EV_UPLOAD: st->upload_seconds += t; break;
  case CPH_EV_DOWNLOAD: st->download_seconds += t; break;
  default:
    /* Kernel time, the row preparation included, is the union of the
     * intervals (the call's end sums it): kernels may run at once. */
    cph_spans_add(&ctx->kernel_spans, t0, t1);
    ctx->kernel_events++;
    if (e->kind == CPH_EV_PREP)
      st->rows_seconds += t;
    if (e->bin >= 0)
      st->bins[e->bin].kernel_seconds += t;
  }
}

/* Poll `ev` for up to ctx->wait_spin_s, then block on it (the blocking
 * wait also reports a failed command). */
static cl_int wait_event(cph_engine *ctx, cl_event ev) {
  if (ctx->wait_spin_s > 0) {
    const double end = cph_now() + ctx->wait_spin_s;
    for (unsigned i = 1;; i++) {
      cl_int status = CL_QUEUED;
      if (cph_cl.GetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                              sizeof status, &status, NULL) != CL_SUCCESS)
        break;
      if (status == CL_COMPLETE) {
        ctx->spin_waits++;
        break;
      }
      if (status < 0 || ((i & 15) == 0 && cph_now() > end))
        break;
      cph_cpu_relax();
    }
  }
  return cph_cl.WaitForEvents(1, &ev);
}

clphmm_status cph_collect(cph_engine *ctx, cph_slot *s) {
  if (!s->active)
    return CLPHMM_SUCCESS;
  clphmm_status rc = CLPHMM_SUCCESS;
  if (s->n_events) {
    cl_int err = wait_event(ctx, s->events[s->n_events - 1].ev);
    if (err != CL_SUCCESS)
      rc = cph_buf_fail(&ctx->bufs, "clWaitForEvents", err,
                        "reading results (the kernel may have failed)");
  }
  static const char *const kinds[] = {"upload", "prep", "kernel", "download"};
  for (size_t i = 0; i < s->n_events && !rc; i++) {
    const cph_event *e = &s->events[i];
    const int launch = e->kind == CPH_EV_KERNEL;
    account(ctx, e);
    cph_trace_event(&ctx->trace, (int)(s - ctx->slots), kinds[e->kind], e->bin,
                    e->ev, launch ? 0 : e->amount, launch ? e->amount : 0);
  }
  if (!rc && s->packed)
    unpack_outputs(s);
  if (!rc)
    cph_count_launches(ctx, s);
  cph_slot_abandon(s);
  return rc;
}

/* (Launches are counted from the schedule, not by their events: without
 * profiling they have none.) */
void cph_count_launches(cph_engine *ctx, const cph_slot *s) {
  for (size_t i = 0; i < s->sched.n_launches; i++) {
    const cph_launch *L = &s->sched.launches[i];
    ctx->stats.launches++;
    if (L->bin >= 0) {
      ctx->stats.bins[L->bin].pairs += L->n_jobs;
      ctx->stats.bins[L->bin].cells += L->cells;
      ctx->stats.bins[L->bin].launches++;
    }
  }
}

clphmm_status cph_drop(cph_engine *ctx, cph_slot *s) {
  clphmm_status rc = CLPHMM_SUCCESS;
  if (s->active && s->n_events) {
    cl_int err = wait_event(ctx, s->events[s->n_events - 1].ev);
    if (err != CL_SUCCESS)
      rc = cph_buf_fail(&ctx->bufs, "clWaitForEvents", err,
                        "waiting for an earlier call's speculative pass "
                        "(its kernel may have failed)");
  }
  cph_slot_abandon(s);
  return rc;
}
