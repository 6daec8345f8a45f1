#include "engine/run.h"

#include "base/clock.h"

#include <stdlib.h>
#include <string.h>

/* Boundary-row scratch allowed per launch of the multi-tile bin (also
 * bounded by the device's largest allocation). */
#define MAX_BOUND_BYTES ((uint64_t)1 << 30)
/* Bytes per read row on the device: 8 reals plus the base code. */
#define ROW_BYTES(real) (8 * (uint64_t)(real) + 1)

/* A job's place in the launch order: sorted by bin, tiles, haplotype length
 * so that a work-group's pairs have similar shapes (its loops run to the
 * longest of them). */
typedef struct order {
  uint32_t bin, tiles, H;
  size_t job;
} order;

static int by_shape(const void *a, const void *b) {
  const order *x = a, *y = b;
  if (x->bin != y->bin)
    return x->bin < y->bin ? -1 : 1;
  if (x->tiles != y->tiles)
    return x->tiles < y->tiles ? -1 : 1;
  if (x->H != y->H)
    return x->H < y->H ? -1 : 1;
  return (x->job > y->job) - (x->job < y->job);
}

/* Device buffers holding a pack for the duration of one cph_run_jobs. */
typedef struct dev_pack {
  cl_mem rows, rcodes, hcodes;
} dev_pack;

static void release_mem(cl_mem *m) {
  if (*m)
    cph_cl.ReleaseMemObject(*m);
  *m = NULL;
}

/* Errors that mean "not enough device memory for this much work": the
 * caller halves the work and tries again. Buffer creation may also report
 * a shortage as CL_OUT_OF_RESOURCES or, past the largest allocation,
 * CL_INVALID_BUFFER_SIZE; drivers that allocate lazily report it when the
 * buffer is first used, as CL_MEM_OBJECT_ALLOCATION_FAILURE. (A launch
 * failing with CL_OUT_OF_RESOURCES is not retried: on some drivers it
 * means that an earlier kernel crashed.) */
static int is_alloc_error(const char *call, cl_int err) {
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE)
    return 1;
  return !strcmp(call, "clCreateBuffer") &&
         (err == CL_OUT_OF_RESOURCES || err == CL_INVALID_BUFFER_SIZE);
}

static clphmm_status cl_failed(clphmm_context *ctx, const char *call,
                               cl_int err, const char *what) {
  ctx->alloc_failed = is_alloc_error(call, err);
  return cph_cl_fail(CLPHMM_ERROR_OPENCL, call, err, what);
}

/* Refuse a buffer bigger than the device allows, with a message that says
 * what to do, rather than the bare CL_INVALID_BUFFER_SIZE (or a failure at
 * launch time) that clCreateBuffer would give. Work is split beforehand so
 * that only a single pair too large for the device gets here. */
static clphmm_status check_size(const clphmm_context *ctx, size_t bytes,
                                const char *what) {
  uint64_t max = ctx->dev.max_alloc_bytes;
  if (max == 0 || bytes <= max)
    return CLPHMM_SUCCESS;
  return cph_error(CLPHMM_ERROR_TOO_LARGE,
                   "%s needs a buffer of %zu bytes, more than the device's "
                   "largest (%llu bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE); split "
                   "the input into smaller calls",
                   what, bytes, (unsigned long long)max);
}

/* Create a read-only buffer initialised from host memory (at least one
 * byte: OpenCL rejects empty buffers). */
static clphmm_status upload(clphmm_context *ctx, const void *data, size_t bytes,
                            cl_mem *out, const char *what) {
  static const unsigned char zero[8];
  clphmm_status st = check_size(ctx, bytes, what);
  if (st)
    return st;
  cl_int err;
  *out = cph_cl.CreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             bytes ? bytes : sizeof zero,
                             (void *)(bytes ? data : zero), &err);
  if (err != CL_SUCCESS)
    return cl_failed(ctx, "clCreateBuffer", err, what);
  return CLPHMM_SUCCESS;
}

static clphmm_status upload_pack(clphmm_context *ctx, const cph_pack *p,
                                 dev_pack *d) {
  memset(d, 0, sizeof *d);
  clphmm_status st = upload(ctx, p->rows, p->n_rows * 8 * p->real_size,
                            &d->rows, "uploading read rows");
  if (!st)
    st = upload(ctx, p->rcodes, p->n_rows, &d->rcodes, "uploading reads");
  if (!st)
    st = upload(ctx, p->hcodes, p->n_hap, &d->hcodes, "uploading haplotypes");
  return st;
}

static void release_pack(dev_pack *d) {
  release_mem(&d->rows);
  release_mem(&d->rcodes);
  release_mem(&d->hcodes);
}

/* One launch: jobs ord[0..n) of one bin, grouped ppw to a work-group. */
typedef struct launch {
  const cph_variant *v; /* the variant of `k` */
  const cph_kernel *k;
  int bin;         /* index in ctx->stats.bins, -1: not counted */
  unsigned coop;   /* tile slots (cph_variant_coop); ppw = lane groups / coop */
  uint32_t *pairs; /* 4 per pair slot */
  uint32_t *groups; /* 2 per work-group */
  size_t n_slots, n_groups;
  uint32_t bound_cols; /* 0 when no pair needs more than one tile */
} launch;

static clphmm_status plan_launch(const cph_job *jobs, const order *ord,
                                 size_t n, launch *L) {
  const unsigned ppw = L->v->wg / L->v->g / L->coop;
  L->n_groups = (n + ppw - 1) / ppw;
  L->n_slots = L->n_groups * ppw;
  L->pairs = calloc(L->n_slots * 4, sizeof *L->pairs);
  L->groups = calloc(L->n_groups * 2, sizeof *L->groups);
  if (!L->pairs || !L->groups)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for %zu pairs", n);
  uint32_t max_steps = 0, max_tiles = 1;
  for (size_t i = 0; i < n; i++) {
    const cph_job *jb = &jobs[ord[i].job];
    uint32_t *pr = &L->pairs[4 * i], *gr = &L->groups[2 * (i / ppw)];
    pr[0] = jb->row_off;
    pr[1] = jb->R;
    pr[2] = jb->hap_off;
    pr[3] = jb->H;
    if (ord[i].tiles > gr[0])
      gr[0] = ord[i].tiles;
    /* Steps: every column through every lane, in whole words of four. */
    const uint32_t steps = (jb->H + L->v->g - 1 + 3) / 4 * 4;
    if (steps > gr[1])
      gr[1] = steps;
    if (steps > max_steps)
      max_steps = steps;
    if (ord[i].tiles > max_tiles)
      max_tiles = ord[i].tiles;
  }
  for (size_t g = 0; g < L->n_groups; g++)
    if (L->groups[2 * g] == 0)
      L->groups[2 * g] = 1;
  /* Lane 0 reads the boundary at columns 1..steps (stored from 0). */
  L->bound_cols = max_tiles > 1 ? max_steps : 0;
  return CLPHMM_SUCCESS;
}

static void free_launch(launch *L) {
  free(L->pairs);
  free(L->groups);
}

static clphmm_status set_args(cl_kernel k, const dev_pack *d, cl_mem pairs,
                              cl_mem groups, cl_mem sums, cl_mem bound,
                              cl_uint bound_cols, cl_int per_column,
                              cl_uint coop) {
  cl_int err = CL_SUCCESS;
  cl_uint a = 0;
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_mem), &d->rows);
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_mem), &d->rcodes);
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_mem), &d->hcodes);
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_mem), &pairs);
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_mem), &groups);
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_mem), &sums);
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_mem), &bound);
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_uint), &bound_cols);
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_int), &per_column);
  err |= cph_cl.SetKernelArg(k, a++, sizeof(cl_uint), &coop);
  if (err != CL_SUCCESS)
    return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clSetKernelArg", err,
                       "setting kernel arguments");
  return CLPHMM_SUCCESS;
}

static clphmm_status device_buffer(clphmm_context *ctx, size_t bytes,
                                   cl_mem *out, const char *what) {
  clphmm_status st = check_size(ctx, bytes, what);
  if (st)
    return st;
  cl_int err;
  *out = cph_cl.CreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes ? bytes : 8,
                             NULL, &err);
  if (err != CL_SUCCESS)
    return cl_failed(ctx, "clCreateBuffer", err, what);
  return CLPHMM_SUCCESS;
}

/* Kernel time of one launch, in the totals and in its bin (bin < 0: the
 * double rescue of float mode, which has its own variant set). */
static void add_kernel_time(clphmm_context *ctx, int bin, cl_event ev) {
  cl_ulong t0 = 0, t1 = 0;
  double s = 0;
  if (cph_cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0,
                                   &t0, NULL) == CL_SUCCESS &&
      cph_cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1,
                                   NULL) == CL_SUCCESS &&
      t1 > t0)
    s = (double)(t1 - t0) * 1e-9;
  ctx->stats.kernel_seconds += s;
  ctx->stats.launches++;
  if (bin >= 0) {
    ctx->stats.bins[bin].kernel_seconds += s;
    ctx->stats.bins[bin].launches++;
  }
}

/* A launch's downloaded sums, widened, at sums[ord[i].job]; the scaled
 * form's two last-row sums combined with the job's weights, in double. */
static double widen(const void *host, int dbl, size_t k) {
  return dbl ? ((const double *)host)[k] : (double)((const float *)host)[k];
}

static void store_sums(const void *host, int dbl, size_t per_slot,
                       const cph_job *jobs, const order *ord, size_t n,
                       double *sums) {
  for (size_t i = 0; i < n; i++) {
    const cph_job *jb = &jobs[ord[i].job];
    const size_t k = per_slot * i;
    const double m = widen(host, dbl, k);
    sums[ord[i].job] =
        per_slot == 2 ? jb->wm * m + jb->wx * widen(host, dbl, k + 1) : m;
  }
}

/* Run one launch and store its sums (widened) at sums[ord[i].job]. */
static clphmm_status run_launch(clphmm_context *ctx, const cph_pack *p,
                                const dev_pack *d, const launch *L,
                                const cph_job *jobs, const order *ord, size_t n,
                                double *sums) {
  cl_kernel k = L->k->kernel;
  const int dbl = p->real_size == sizeof(double);
  /* The scaled form reads scaled rows and returns two sums per slot. */
  if (cph_variant_scaled(L->v) != p->scaled)
    return cph_error(CLPHMM_ERROR_BUILD_FAILED,
                     "kernel %ux%u and packed rows differ in arithmetic form",
                     L->v->g, L->v->c);
  const size_t per_slot = p->scaled ? 2 : 1;
  const size_t sums_bytes = L->n_slots * per_slot * p->real_size;
  clphmm_status st;
  cl_mem pairs = NULL, groups = NULL, dsums = NULL, bound = NULL;
  /* One boundary row per pair slot, four reals (M, X, T, 0) a column. */
  size_t bound_bytes = (size_t)L->n_slots * 4 * L->bound_cols * p->real_size;
  void *host = malloc(sums_bytes);
  if (!host)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for results");
  st = upload(ctx, L->pairs, L->n_slots * 4 * sizeof(uint32_t), &pairs,
              "uploading the pair list");
  if (!st)
    st = upload(ctx, L->groups, L->n_groups * 2 * sizeof(uint32_t), &groups,
                "uploading the group list");
  if (!st)
    st = device_buffer(ctx, sums_bytes, &dsums, "allocating results");
  if (!st)
    st = device_buffer(ctx, bound_bytes, &bound, "allocating tile boundaries");
  if (!st)
    st = set_args(k, d, pairs, groups, dsums, bound, L->bound_cols,
                  p->flavor == CPH_JAVA_DOUBLE, L->coop);
  cl_event ev = NULL;
  if (!st) {
    size_t global = L->n_groups * L->v->wg, local = L->v->wg;
    cl_int err = cph_cl.EnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global,
                                             &local, 0, NULL, &ev);
    if (err != CL_SUCCESS)
      st =
          cl_failed(ctx, "clEnqueueNDRangeKernel", err, "launching the kernel");
  }
  if (!st) {
    cl_int err = cph_cl.EnqueueReadBuffer(ctx->queue, dsums, CL_TRUE, 0,
                                          sums_bytes, host, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      st = cl_failed(ctx, "clEnqueueReadBuffer", err,
                     "reading results (the kernel may have failed)");
  }
  if (!st) {
    add_kernel_time(ctx, L->bin, ev);
    store_sums(host, dbl, per_slot, jobs, ord, n, sums);
  }
  if (ev)
    cph_cl.ReleaseEvent(ev);
  release_mem(&pairs);
  release_mem(&groups);
  release_mem(&dsums);
  release_mem(&bound);
  free(host);
  return st;
}

/* End of the launch that starts at ord[start] with `coop` tile slots: as
 * many jobs as fit the cells per launch, the boundary scratch and the
 * device-memory budget (exact bytes of the launch's buffers, work-group
 * padding included), and, with concurrent tiles, have as many tiles. */
static size_t launch_end(const clphmm_context *ctx, const cph_pack *p,
                         const cph_job *jobs, const order *ord, size_t n,
                         size_t start, const cph_variant *v, unsigned coop,
                         uint64_t budget) {
  const uint64_t ppw = v->wg / v->g / coop, real = p->real_size;
  uint64_t bound_cap = MAX_BOUND_BYTES;
  if (ctx->dev.max_alloc_bytes && ctx->dev.max_alloc_bytes < bound_cap)
    bound_cap = ctx->dev.max_alloc_bytes;
  uint64_t cells = 0;
  uint32_t max_h = 0, max_tiles = 1;
  size_t end = start;
  for (; end < n; end++) {
    const cph_job *jb = &jobs[ord[end].job];
    uint64_t c = (uint64_t)jb->R * jb->H;
    uint32_t mh = jb->H > max_h ? jb->H : max_h;
    uint32_t mt = ord[end].tiles > max_tiles ? ord[end].tiles : max_tiles;
    uint64_t slots = (end - start + 1 + ppw - 1) / ppw * ppw;
    uint64_t bound = mt > 1 ? slots * 4 * (mh + v->g + 5ull) * real : 0;
    uint64_t bytes = slots * (16 + 2 * real) + slots / ppw * 8 + bound;
    if (end > start &&
        (cells + c > ctx->max_cells || bound > bound_cap || bytes > budget ||
         (coop > 1 && ord[end].tiles != ord[start].tiles)))
      break;
    cells += c;
    max_h = mh;
    max_tiles = mt;
  }
  return end;
}

/* Launches of fewer pairs than this many per compute unit and lane group
 * run the tiles of long reads concurrently (unless told otherwise): on the
 * H200 (bb53fcd), the float pass of 2388 pairs of 2048 bases ran at 2.99
 * TCUPS with four concurrent tiles against 2.78 one after the other, that
 * of 9537 pairs of 1024 bases at 2.97 with two or four against 2.98:
 * concurrent tiles cost about LAG steps per tile slot and a barrier per
 * four steps, and gain nothing when the device is already full. Short
 * launches (the double rescue of a few pairs) gain latency: at 1024 bases
 * the rescue of three pairs took 0.13 ms with four concurrent 256-row
 * double tiles, 0.55 ms with 384-row tiles one after the other. */
#define COOP_PAIRS_PER_UNIT 8

/* Tile slots for the launch of jobs ord[start..n) of a bin on `v`. */
static unsigned launch_coop(const clphmm_context *ctx, const order *ord,
                            size_t start, size_t n, const cph_variant *v) {
  if (ctx->max_coop) /* CLPHMM_CONCURRENT_TILES */
    return cph_variant_coop(v, ord[start].tiles, ctx->max_coop);
  const uint64_t full =
      (uint64_t)COOP_PAIRS_PER_UNIT *
      (ctx->dev.info.compute_units ? ctx->dev.info.compute_units : 1) *
      (v->wg / v->g);
  size_t same = 0; /* pairs with this tile count: the launch at most */
  while (start + same < n && ord[start + same].tiles == ord[start].tiles)
    same++;
  return same < full ? cph_variant_coop(v, ord[start].tiles, 0) : 1;
}

/* Jobs of one bin, cut into launches. */
static clphmm_status run_bin(clphmm_context *ctx, const cph_pack *p,
                             const dev_pack *d, const cph_job *jobs,
                             const order *ord, size_t n, const cph_kernel *k,
                             uint64_t budget, double *sums) {
  /* Per-bin statistics describe the context's own precision. */
  const int counted = (p->real_size == sizeof(double)) ==
                      (ctx->precision == CLPHMM_PRECISION_DOUBLE);
  for (size_t start = 0; start < n;) {
    const unsigned coop = launch_coop(ctx, ord, start, n, &k->variant);
    size_t end =
        launch_end(ctx, p, jobs, ord, n, start, &k->variant, coop, budget);
    launch L = {.v = &k->variant,
                .k = k,
                .bin = counted ? (int)ord[0].bin : -1,
                .coop = coop};
    clphmm_status st = plan_launch(jobs, ord + start, end - start, &L);
    if (!st)
      st = run_launch(ctx, p, d, &L, jobs, ord + start, end - start, sums);
    free_launch(&L);
    if (st)
      return st;
    if (L.bin >= 0) {
      uint64_t cells = 0;
      for (size_t i = start; i < end; i++)
        cells += (uint64_t)jobs[ord[i].job].R * jobs[ord[i].job].H;
      ctx->stats.bins[L.bin].pairs += end - start;
      ctx->stats.bins[L.bin].cells += cells;
    }
    start = end;
  }
  return CLPHMM_SUCCESS;
}

/* Device bytes of a pack. */
static uint64_t pack_bytes(const cph_pack *p) {
  return p->n_rows * ROW_BYTES(p->real_size) + p->n_hap;
}

/* Build the kernels of the bins the jobs use (a kernel may turn out to be
 * a simpler fallback variant), then order the jobs by bin and shape with
 * tiles counted for the kernel that will run them. */
static clphmm_status order_jobs(clphmm_context *ctx, int dbl,
                                const cph_job *jobs, size_t n, order *ord,
                                const cph_kernel **kernels) {
  for (size_t i = 0; i < n; i++) {
    size_t bin = cph_plan_bin(&ctx->variants[dbl], jobs[i].R);
    if (!kernels[bin]) {
      clphmm_status st = cph_context_kernel(ctx, bin, dbl, &kernels[bin]);
      if (st)
        return st;
    }
    uint32_t rows = cph_variant_rows(&kernels[bin]->variant);
    ord[i] =
        (order){(uint32_t)bin, (jobs[i].R + rows - 1) / rows, jobs[i].H, i};
  }
  qsort(ord, n, sizeof *ord, by_shape);
  return CLPHMM_SUCCESS;
}

/* Run jobs whose data are all in `pack` (one upload). */
static clphmm_status run_chunk(clphmm_context *ctx, const cph_pack *pack,
                               const cph_job *jobs, size_t n_jobs,
                               double *sums) {
  order *ord = malloc(n_jobs * sizeof *ord);
  if (!ord)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to plan %zu pairs",
                     n_jobs);
  const cph_kernel *kernels[CPH_MAX_VARIANTS] = {0};
  clphmm_status st = order_jobs(ctx, pack->real_size == sizeof(double), jobs,
                                n_jobs, ord, kernels);
  /* Launches get what the pack leaves of the budget, at least half. */
  uint64_t budget = ctx->max_device_bytes - pack_bytes(pack);
  if (pack_bytes(pack) > ctx->max_device_bytes / 2)
    budget = ctx->max_device_bytes / 2;
  dev_pack d = {0};
  const double t0 = cph_now();
  if (!st)
    st = upload_pack(ctx, pack, &d);
  ctx->stats.upload_seconds += cph_now() - t0;
  for (size_t start = 0; !st && start < n_jobs;) {
    size_t end = start;
    while (end < n_jobs && ord[end].bin == ord[start].bin)
      end++;
    st = run_bin(ctx, pack, &d, jobs, ord + start, end - start,
                 kernels[ord[start].bin], budget, sums);
    start = end;
  }
  release_pack(&d);
  free(ord);
  return st;
}

/* The part of `pack` that jobs[0..n) use, as a view (no copy), and the
 * jobs with offsets relative to it. Jobs of consecutive pairs use
 * contiguous parts of the pack, as packing goes in pair order. */
static void pack_view(const cph_pack *pack, const cph_job *jobs, size_t n,
                      cph_pack *view, cph_job *vjobs) {
  uint64_t rlo = UINT64_MAX, rhi = 0, hlo = UINT64_MAX, hhi = 0;
  for (size_t i = 0; i < n; i++) {
    rlo = jobs[i].row_off < rlo ? jobs[i].row_off : rlo;
    hlo = jobs[i].hap_off < hlo ? jobs[i].hap_off : hlo;
    uint64_t r = (uint64_t)jobs[i].row_off + jobs[i].R;
    uint64_t h = (uint64_t)jobs[i].hap_off + cph_hap_words(jobs[i].H);
    rhi = r > rhi ? r : rhi;
    hhi = h > hhi ? h : hhi;
  }
  *view = *pack;
  view->rows = pack->rows + rlo * 8 * pack->real_size;
  view->rcodes = pack->rcodes + rlo;
  view->hcodes = pack->hcodes + 4 * hlo; /* haplotype offsets are words */
  view->n_rows = (size_t)(rhi - rlo);
  view->n_hap = (size_t)(4 * (hhi - hlo));
  for (size_t i = 0; i < n; i++) {
    vjobs[i] = jobs[i];
    vjobs[i].row_off -= (uint32_t)rlo;
    vjobs[i].hap_off -= (uint32_t)hlo;
  }
}

/* Run a chunk; when the device runs out of memory for it, halve it and
 * try again, down to a single pair. */
static clphmm_status run_split(clphmm_context *ctx, const cph_pack *pack,
                               const cph_job *jobs, size_t n, double *sums,
                               cph_job *scratch) {
  cph_pack view;
  pack_view(pack, jobs, n, &view, scratch);
  ctx->alloc_failed = 0;
  clphmm_status st = run_chunk(ctx, &view, scratch, n, sums);
  if (st != CLPHMM_ERROR_OPENCL || !ctx->alloc_failed || n < 2)
    return st;
  ctx->diag.alloc_retries++;
  st = run_split(ctx, pack, jobs, n / 2, sums, scratch);
  if (!st)
    st = run_split(ctx, pack, jobs + n / 2, n - n / 2, sums + n / 2, scratch);
  return st;
}

/* Length of the chunk starting at jobs[0]: as many jobs as keep the part
 * of the pack they use within half the budget and each buffer within the
 * device's largest allocation. */
static size_t chunk_length(const clphmm_context *ctx, const cph_pack *pack,
                           const cph_job *jobs, size_t n) {
  const uint64_t row_bytes = ROW_BYTES(pack->real_size);
  uint64_t limit = ctx->max_device_bytes / 2,
           max_alloc = ctx->dev.max_alloc_bytes;
  uint64_t rlo = jobs[0].row_off, rhi = 0, hlo = jobs[0].hap_off, hhi = 0;
  size_t k = 0;
  for (; k < n; k++) {
    uint64_t r = (uint64_t)jobs[k].row_off + jobs[k].R;
    uint64_t h = (uint64_t)jobs[k].hap_off + cph_hap_words(jobs[k].H);
    uint64_t lo = jobs[k].row_off < rlo ? jobs[k].row_off : rlo;
    uint64_t hl = jobs[k].hap_off < hlo ? jobs[k].hap_off : hlo;
    uint64_t nr = (r > rhi ? r : rhi) - lo,
             nh = 4 * ((h > hhi ? h : hhi) - hl); /* bytes */
    if (k > 0 &&
        (nr * row_bytes + nh > limit ||
         (max_alloc && (nr * (row_bytes - 1) > max_alloc || nh > max_alloc))))
      break;
    rlo = lo;
    hlo = hl;
    rhi = r > rhi ? r : rhi;
    hhi = h > hhi ? h : hhi;
  }
  return k;
}

clphmm_status cph_run_jobs(clphmm_context *ctx, const cph_pack *pack,
                           const cph_job *jobs, size_t n_jobs, double *sums) {
  if (n_jobs == 0)
    return CLPHMM_SUCCESS;
  cph_job *scratch = malloc(n_jobs * sizeof *scratch);
  if (!scratch)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to plan %zu pairs",
                     n_jobs);
  clphmm_status st = CLPHMM_SUCCESS;
  for (size_t start = 0; !st && start < n_jobs;) {
    size_t n = chunk_length(ctx, pack, jobs + start, n_jobs - start);
    ctx->stats.chunks++;
    st = run_split(ctx, pack, jobs + start, n, sums + start, scratch);
    start += n;
  }
  free(scratch);
  return st;
}
