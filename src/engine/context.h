/* The context: one device, its queue, its variant set and compiled kernels,
 * and the engine's state kept across compute calls (thread pool, staging
 * and device buffers, device tables). */
#ifndef CLPHMM_CONTEXT_H
#define CLPHMM_CONTEXT_H

#include <pthread.h>

#include "base/error.h"
#include "engine/buffers.h"
#include "engine/pool.h"
#include "engine/schedule.h"
#include "engine/stage.h"
#include "engine/trace.h"
#include "opencl/build.h"
#include "tuning/plan.h"

/* Device buffers shared by the chunks of a call (one in-order queue runs
 * the chunks one after the other, so one set serves them all). */
typedef struct cph_devset {
  cph_devbuf raw, reads, hcodes, rows, weights, pairs, groups, sums, bound;
  cph_devbuf tables[3][2]; /* [flavor][scaled]: cl/prep.cl's tables */
} cph_devset;

/* A chunk in flight: its staging, schedule, downloaded sums and the events
 * of its commands (for profiling and for waiting). */
typedef struct cph_event {
  cl_event ev;
  int kind; /* CPH_EV_* */
  int bin;  /* a kernel's statistics bin, -1: none */
} cph_event;
enum { CPH_EV_UPLOAD, CPH_EV_PREP, CPH_EV_KERNEL, CPH_EV_DOWNLOAD };

/* Two slots for the chunks of the float or double pass, one for the
 * double rescue between them. */
#define CPH_SLOTS 3
#define CPH_RESCUE_SLOT 2
typedef struct cph_slot {
  cph_stage stage;
  cph_sched sched;
  cph_hostbuf sums;
  cph_event *events;
  size_t n_events, cap_events;
  int dbl;    /* the chunk runs double kernels */
  int timed;  /* its uploads have events (are counted in upload_seconds) */
  int active; /* submitted, not yet collected */
} cph_slot;

struct clphmm_context {
  cph_device dev;
  cl_context cl;
  cl_command_queue queue;
  clphmm_precision precision;
  uint64_t max_cells;
  unsigned max_coop; /* most tiles of a read run at once (0: per launch) */
  uint64_t max_device_bytes;   /* planning bound for one chunk and launch */
  cph_variant_set variants[2]; /* [double] */
  cph_kernel kernels[2][CPH_MAX_VARIANTS]; /* [double][variant], lazily */
  cph_cache cache;
  clphmm_diagnostics diag;
  int alloc_failed; /* the last OpenCL failure was a device allocation */
  int broken;       /* an OpenCL failure left no usable OpenCL context */
  int host_prep;    /* rows prepared on the host (CLPHMM_HOST_PREP) */
  clphmm_stats stats;
  char error[CPH_ERROR_MAX];
  /* The engine's state (src/engine/compute.c). */
  pthread_mutex_t lock; /* one compute call at a time */
  cph_pool *pool;
  cph_bufctx bufs;
  cph_devset d;
  cph_slot slots[CPH_SLOTS];
  unsigned chunk_div; /* chunks are divided by this after allocation
                         failures (reset per call) */
  cph_trace trace;    /* CLPHMM_TRACE */
};

/* The kernel serving variant `v` in a precision, built on first use (its
 * `variant` field is what was built: see cph_kernel_obtain). */
clphmm_status cph_context_kernel(clphmm_context *ctx, size_t v, int dbl,
                                 const cph_kernel **kernel);

/* Release every buffer the engine keeps (device and pinned host memory). */
void cph_engine_release(clphmm_context *ctx);

/* clphmm_compute's work, on a usable context (compute.c). */
clphmm_status cph_engine_compute(clphmm_context *ctx,
                                 const clphmm_batch *batches, size_t n_batches,
                                 double *out);

#endif
