/* The context: one device, its queue, its variant set and compiled kernels. */
#ifndef CLPHMM_CONTEXT_H
#define CLPHMM_CONTEXT_H

#include "error.h"
#include "plan.h"

struct clphmm_context {
  cph_device dev;
  cl_context cl;
  cl_command_queue queue;
  clphmm_precision precision;
  uint64_t max_cells;
  cph_variant_set variants[2]; /* [double] */
  cph_kernel kernels[2][CPH_MAX_VARIANTS]; /* [double][variant], lazily */
  clphmm_stats stats;
  char error[CPH_ERROR_MAX];
};

/* The kernel of variant `v` in a precision, built on first use. */
clphmm_status cph_context_kernel(clphmm_context *ctx, size_t v, int dbl,
                                 const cph_kernel **kernel);

#endif
