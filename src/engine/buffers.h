/* Buffers that live in the context and are reused across compute calls:
 * device buffers and pinned host staging, grown geometrically, released
 * when an allocation fails so that the work can be retried smaller. */
#ifndef CLPHMM_BUFFERS_H
#define CLPHMM_BUFFERS_H

#include <stddef.h>

#include "opencl/device.h"

/* A device buffer of at least `bytes`. */
typedef struct cph_devbuf {
  cl_mem mem;
  size_t cap;
} cph_devbuf;

/* Host memory the device copies from or to: pinned (a CL_MEM_ALLOC_HOST_PTR
 * buffer, mapped) where the driver gives it, else malloc'ed. */
typedef struct cph_hostbuf {
  cl_mem mem; /* NULL when `ptr` is plain host memory */
  void *ptr;
  size_t cap;
} cph_hostbuf;

/* What buffers are made in and how failures are reported. */
typedef struct cph_bufctx {
  cl_context cl;
  cl_command_queue queue;
  const cph_device *dev;
  int *alloc_failed; /* set when a failure means "out of device memory" */
} cph_bufctx;

/* Make `b` hold at least `bytes` (its contents are not kept). `what` names
 * the buffer in errors: a size beyond the device's largest allocation is
 * CLPHMM_ERROR_TOO_LARGE, "WHAT needs a buffer of N bytes, more than ...". */
clphmm_status cph_devbuf_ensure(const cph_bufctx *c, cph_devbuf *b,
                                size_t bytes, const char *what);
void cph_devbuf_release(cph_devbuf *b);

/* Counts device buffers made and released in the process (see cph_args:
 * kernel arguments set before a change are set again). */
unsigned long cph_devbuf_generation(void);
/* A new generation without a buffer of cph_devbuf_ensure (sub-buffers). */
void cph_devbuf_touch(void);

clphmm_status cph_hostbuf_ensure(const cph_bufctx *c, cph_hostbuf *b,
                                 size_t bytes, const char *what);
void cph_hostbuf_release(const cph_bufctx *c, cph_hostbuf *b);

/* Whether an OpenCL failure of `call` means "not enough device memory for
 * this much work" (the caller halves the work and tries again). */
int cph_is_alloc_error(const char *call, cl_int err);

/* Record an OpenCL failure (and whether it was an allocation). */
clphmm_status cph_buf_fail(const cph_bufctx *c, const char *call, cl_int err,
                           const char *what);

#endif
