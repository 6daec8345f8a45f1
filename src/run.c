#include "run.h"

#include <stdlib.h>
#include <string.h>

/* Boundary-row scratch allowed per launch of the multi-tile bin. */
#define MAX_BOUND_BYTES ((uint64_t)256 << 20)

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

/* Refuse a buffer bigger than the device allows, with a message that says
 * what to do, rather than the bare CL_INVALID_BUFFER_SIZE (or a failure at
 * launch time) that clCreateBuffer would give. */
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
static clphmm_status upload(clphmm_context *ctx, const void *data,
                            size_t bytes, cl_mem *out, const char *what) {
  static const unsigned char zero[8];
  clphmm_status st = check_size(ctx, bytes, what);
  if (st)
    return st;
  cl_int err;
  *out = cph_cl.CreateBuffer(ctx->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             bytes ? bytes : sizeof zero,
                             (void *)(bytes ? data : zero), &err);
  if (err != CL_SUCCESS)
    return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clCreateBuffer", err, what);
  return CLPHMM_SUCCESS;
}

static clphmm_status upload_pack(clphmm_context *ctx, const cph_pack *p,
                                 dev_pack *d) {
  memset(d, 0, sizeof *d);
  clphmm_status st =
      upload(ctx, p->rows, p->n_rows * 8 * p->real_size, &d->rows,
             "uploading read rows");
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

/* One launch: jobs ord[0..n) of one bin, grouped PPW to a work-group. */
typedef struct launch {
  const cph_variant *v; /* as built for this precision */
  int bin;              /* index in ctx->stats.bins, -1: not counted */
  cl_kernel kernel;
  uint32_t *pairs;  /* 4 per pair slot */
  uint32_t *groups; /* 2 per work-group */
  size_t n_slots, n_groups;
  uint32_t bound_cols; /* 0 when no pair needs more than one tile */
} launch;

static clphmm_status plan_launch(const cph_job *jobs, const order *ord,
                                 size_t n, launch *L) {
  const unsigned ppw = L->v->wg / L->v->g;
  L->n_groups = (n + ppw - 1) / ppw;
  L->n_slots = L->n_groups * ppw;
  L->pairs = calloc(L->n_slots * 4, sizeof *L->pairs);
  L->groups = calloc(L->n_groups * 2, sizeof *L->groups);
  if (!L->pairs || !L->groups)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for %zu pairs",
                     n);
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
                              cl_uint bound_cols, cl_int per_column) {
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
    return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clCreateBuffer", err, what);
  return CLPHMM_SUCCESS;
}

/* Kernel time of one launch, in the totals and in its bin (bin < 0: the
 * double rescue of float mode, which has its own variant set). */
static void add_kernel_time(clphmm_context *ctx, int bin, cl_event ev) {
  cl_ulong t0 = 0, t1 = 0;
  double s = 0;
  if (cph_cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START,
                                   sizeof t0, &t0, NULL) == CL_SUCCESS &&
      cph_cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1,
                                   &t1, NULL) == CL_SUCCESS &&
      t1 > t0)
    s = (double)(t1 - t0) * 1e-9;
  ctx->stats.kernel_seconds += s;
  ctx->stats.launches++;
  if (bin >= 0) {
    ctx->stats.bins[bin].kernel_seconds += s;
    ctx->stats.bins[bin].launches++;
  }
}

/* Run one launch and store its sums (widened) at sums[ord[i].job]. */
static clphmm_status run_launch(clphmm_context *ctx, const cph_pack *p,
                                const dev_pack *d, const launch *L,
                                const order *ord, size_t n, double *sums) {
  cl_kernel k = L->kernel;
  const int dbl = p->real_size == sizeof(double);
  clphmm_status st = CLPHMM_SUCCESS;
  cl_mem pairs = NULL, groups = NULL, dsums = NULL, bound = NULL;
  /* Two boundary rows per pair slot, four reals (M, X, T, 0) a column. */
  size_t bound_bytes = (size_t)L->n_slots * 8 * L->bound_cols * p->real_size;
  void *host = malloc(L->n_slots * p->real_size);
  if (!host)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for results");
  st = upload(ctx, L->pairs, L->n_slots * 4 * sizeof(uint32_t), &pairs,
              "uploading the pair list");
  if (!st)
    st = upload(ctx, L->groups, L->n_groups * 2 * sizeof(uint32_t), &groups,
                "uploading the group list");
  if (!st)
    st = device_buffer(ctx, L->n_slots * p->real_size, &dsums,
                       "allocating results");
  if (!st)
    st = device_buffer(ctx, bound_bytes, &bound,
                       "allocating tile boundaries");
  if (!st)
    st = set_args(k, d, pairs, groups, dsums, bound, L->bound_cols,
                  p->flavor == CPH_JAVA_DOUBLE);
  cl_event ev = NULL;
  if (!st) {
    size_t global = L->n_groups * L->v->wg, local = L->v->wg;
    cl_int err = cph_cl.EnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &global,
                                             &local, 0, NULL, &ev);
    if (err != CL_SUCCESS)
      st = cph_cl_fail(CLPHMM_ERROR_OPENCL, "clEnqueueNDRangeKernel", err,
                       "launching the kernel");
  }
  if (!st) {
    cl_int err = cph_cl.EnqueueReadBuffer(ctx->queue, dsums, CL_TRUE, 0,
                                          L->n_slots * p->real_size, host, 0,
                                          NULL, NULL);
    if (err != CL_SUCCESS)
      st = cph_cl_fail(CLPHMM_ERROR_OPENCL, "clEnqueueReadBuffer", err,
                       "reading results (the kernel may have failed)");
  }
  if (!st) {
    add_kernel_time(ctx, L->bin, ev);
    for (size_t i = 0; i < n; i++)
      sums[ord[i].job] = dbl ? ((const double *)host)[i]
                             : (double)((const float *)host)[i];
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

/* Jobs of one bin, cut into launches by cells and boundary memory. */
static clphmm_status run_bin(clphmm_context *ctx, const cph_pack *p,
                             const dev_pack *d, const cph_job *jobs,
                             const order *ord, size_t n, double *sums) {
  const cph_kernel *kern;
  clphmm_status kst = cph_context_kernel(
      ctx, ord[0].bin, p->real_size == sizeof(double), &kern);
  if (kst)
    return kst;
  size_t start = 0;
  while (start < n) {
    uint64_t cells = 0, bound = 0;
    size_t end = start;
    while (end < n) {
      const cph_job *jb = &jobs[ord[end].job];
      uint64_t c = (uint64_t)jb->R * jb->H;
      uint64_t b = ord[end].tiles > 1
                       ? 8ull * (jb->H + kern->variant.g + 5) * p->real_size
                       : 0;
      if (end > start && (cells + c > ctx->max_cells ||
                          bound + b > MAX_BOUND_BYTES))
        break;
      cells += c;
      bound += b;
      end++;
    }
    /* Per-bin statistics describe the context's own precision. */
    const int counted = (p->real_size == sizeof(double)) ==
                        (ctx->precision == CLPHMM_PRECISION_DOUBLE);
    launch L = {.v = &kern->variant,
                .kernel = kern->kernel,
                .bin = counted ? (int)ord[0].bin : -1};
    clphmm_status st = plan_launch(jobs, ord + start, end - start, &L);
    if (!st)
      st = run_launch(ctx, p, d, &L, ord + start, end - start, sums);
    free_launch(&L);
    if (st)
      return st;
    if (L.bin >= 0) {
      ctx->stats.bins[L.bin].pairs += end - start;
      ctx->stats.bins[L.bin].cells += cells;
    }
    start = end;
  }
  return CLPHMM_SUCCESS;
}

clphmm_status cph_run_jobs(clphmm_context *ctx, const cph_pack *pack,
                           const cph_job *jobs, size_t n_jobs, double *sums) {
  if (n_jobs == 0)
    return CLPHMM_SUCCESS;
  order *ord = malloc(n_jobs * sizeof *ord);
  if (!ord)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to plan %zu pairs",
                     n_jobs);
  const cph_variant_set *vs =
      &ctx->variants[pack->real_size == sizeof(double)];
  for (size_t i = 0; i < n_jobs; i++) {
    size_t bin = cph_plan_bin(vs, jobs[i].R);
    uint32_t rows = cph_variant_rows(&vs->v[bin]);
    ord[i] = (order){(uint32_t)bin, (jobs[i].R + rows - 1) / rows, jobs[i].H,
                     i};
  }
  qsort(ord, n_jobs, sizeof *ord, by_shape);
  dev_pack d;
  clphmm_status st = upload_pack(ctx, pack, &d);
  for (size_t start = 0; !st && start < n_jobs;) {
    size_t end = start;
    while (end < n_jobs && ord[end].bin == ord[start].bin)
      end++;
    st = run_bin(ctx, pack, &d, jobs, ord + start, end - start, sums);
    start = end;
  }
  release_pack(&d);
  free(ord);
  return st;
}
