/* The context: one device, its queue, its variant set and compiled kernels. */
#ifndef CLPHMM_CONTEXT_H
#define CLPHMM_CONTEXT_H

#include "opencl/build.h"
#include "base/error.h"
#include "tuning/plan.h"

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
  clphmm_stats stats;
  char error[CPH_ERROR_MAX];
};

/* The kernel serving variant `v` in a precision, built on first use (its
 * `variant` field is what was built: see cph_kernel_obtain). */
clphmm_status cph_context_kernel(clphmm_context *ctx, size_t v, int dbl,
                                 const cph_kernel **kernel);

#endif
