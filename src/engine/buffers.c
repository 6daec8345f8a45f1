#include "engine/buffers.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* Growth: a buffer grows to 1.5 times what is asked, so that calls of
 * slowly growing sizes do not reallocate every time. */
static size_t grown(size_t bytes) {
  size_t g = bytes + bytes / 2;
  return g < bytes ? bytes : g;
}

int cph_is_alloc_error(const char *call, cl_int err) {
  /* Buffer creation may also report a shortage as CL_OUT_OF_RESOURCES or,
   * past the largest allocation, CL_INVALID_BUFFER_SIZE; drivers that
   * allocate lazily report it when the buffer is first used, as
   * CL_MEM_OBJECT_ALLOCATION_FAILURE. (A launch failing with
   * CL_OUT_OF_RESOURCES is not retried: on some drivers it means that an
   * earlier kernel crashed.) */
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE)
    return 1;
  return !strcmp(call, "clCreateBuffer") &&
         (err == CL_OUT_OF_RESOURCES || err == CL_INVALID_BUFFER_SIZE);
}

clphmm_status cph_buf_fail(const cph_bufctx *c, const char *call, cl_int err,
                           const char *what) {
  if (c->alloc_failed)
    *c->alloc_failed = cph_is_alloc_error(call, err);
  return cph_cl_fail(CLPHMM_ERROR_OPENCL, call, err, what);
}

/* Refuse a buffer bigger than the device allows, with a message that says
 * what to do, rather than the bare CL_INVALID_BUFFER_SIZE (or a failure at
 * launch time) that clCreateBuffer would give. Work is split beforehand so
 * that only a single piece too large for the device gets here. */
static clphmm_status check_size(const cph_bufctx *c, size_t bytes,
                                const char *what) {
  uint64_t max = c->dev->max_alloc_bytes;
  if (max == 0 || bytes <= max)
    return CLPHMM_SUCCESS;
  return cph_error(CLPHMM_ERROR_TOO_LARGE,
                   "%s needs a buffer of %zu bytes, more than the device's "
                   "largest (%llu bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE); split "
                   "the input into smaller calls",
                   what, bytes, (unsigned long long)max);
}

/* The size to allocate for `bytes`: grown, within the largest allocation,
 * at least 8 (OpenCL refuses empty buffers). */
static size_t alloc_size(const cph_bufctx *c, size_t bytes) {
  size_t n = grown(bytes < 8 ? 8 : bytes);
  uint64_t max = c->dev->max_alloc_bytes;
  if (max && n > max)
    n = bytes < 8 ? 8 : bytes;
  return n;
}

static atomic_ulong generation = 1;

unsigned long cph_devbuf_generation(void) {
  return atomic_load(&generation);
}

void cph_devbuf_touch(void) {
  atomic_fetch_add(&generation, 1);
}

clphmm_status cph_devbuf_ensure(const cph_bufctx *c, cph_devbuf *b,
                                size_t bytes, const char *what) {
  if (b->mem && b->cap >= bytes)
    return CLPHMM_SUCCESS;
  clphmm_status st = check_size(c, bytes, what);
  if (st)
    return st;
  cph_devbuf_release(b);
  size_t n = alloc_size(c, bytes);
  cl_int err;
  b->mem = cph_cl.CreateBuffer(c->cl, CL_MEM_READ_WRITE, n, NULL, &err);
  atomic_fetch_add(&generation, 1);
  if (err != CL_SUCCESS) {
    b->mem = NULL;
    return cph_buf_fail(c, "clCreateBuffer", err, what);
  }
  b->cap = n;
  return CLPHMM_SUCCESS;
}

void cph_devbuf_release(cph_devbuf *b) {
  if (b->mem) {
    cph_cl.ReleaseMemObject(b->mem);
    atomic_fetch_add(&generation, 1);
  }
  b->mem = NULL;
  b->cap = 0;
}

/* A mapped CL_MEM_ALLOC_HOST_PTR buffer of n bytes, or NULL. */
static void *pinned(const cph_bufctx *c, size_t n, cl_mem *mem) {
  cl_int err;
  *mem = cph_cl.CreateBuffer(c->cl, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE,
                             n, NULL, &err);
  if (err != CL_SUCCESS) {
    *mem = NULL;
    return NULL;
  }
  void *p = cph_cl.EnqueueMapBuffer(c->queue, *mem, CL_TRUE,
                                    CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, NULL,
                                    NULL, &err);
  if (err != CL_SUCCESS || !p) {
    cph_cl.ReleaseMemObject(*mem);
    *mem = NULL;
    return NULL;
  }
  return p;
}

clphmm_status cph_hostbuf_ensure(const cph_bufctx *c, cph_hostbuf *b,
                                 size_t bytes, const char *what) {
  if (b->ptr && b->cap >= bytes)
    return CLPHMM_SUCCESS;
  cph_hostbuf_release(c, b);
  size_t n = grown(bytes < 8 ? 8 : bytes);
  /* Pinned memory is a speed-up, not a requirement: a driver that cannot
   * give it gets ordinary memory. */
  b->ptr = pinned(c, n, &b->mem);
  if (!b->ptr)
    b->ptr = malloc(n);
  if (!b->ptr)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for %s (%zu bytes)",
                     what, n);
  b->cap = n;
  return CLPHMM_SUCCESS;
}

void cph_hostbuf_release(const cph_bufctx *c, cph_hostbuf *b) {
  if (b->mem) {
    cl_event ev = NULL;
    if (c->queue &&
        cph_cl.EnqueueUnmapMemObject(c->queue, b->mem, b->ptr, 0, NULL, &ev) ==
            CL_SUCCESS &&
        ev) {
      cph_cl.WaitForEvents(1, &ev);
      cph_cl.ReleaseEvent(ev);
    }
    cph_cl.ReleaseMemObject(b->mem);
  } else {
    free(b->ptr);
  }
  b->mem = NULL;
  b->ptr = NULL;
  b->cap = 0;
}
