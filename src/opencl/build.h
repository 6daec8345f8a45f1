/* Building kernel variants: from a cached program binary when the kernel
 * cache has one (a warm start compiles nothing), else from source, storing
 * the binary; a variant that fails to build is replaced by a simpler one. */
#ifndef CLPHMM_BUILD_H
#define CLPHMM_BUILD_H

#include "base/error.h"
#include "opencl/cache.h"
#include "opencl/program.h"

/* Where and how to build, and where to count what happened. */
typedef struct cph_builder {
  cl_context cl;
  const cph_device *dev;
  cph_cache *cache;
  clphmm_diagnostics *diag;
} cph_builder;

/* Append a line to diag->detail (dropped when it does not fit). */
void cph_diag_note(clphmm_diagnostics *d, const char *fmt, ...)
    CPH_PRINTF(2, 3);

/* Build exactly `v`. On failure the error holds the options and the
 * compiler's log. */
clphmm_status cph_kernel_build(const cph_builder *b, const cph_variant *v,
                               int dbl, cph_kernel *out);

/* Build `v`, or when that fails a simpler variant: the same lanes x rows
 * with the local-memory shuffle backend, then the smallest generic variant
 * (out->variant tells which; each fallback is counted and noted). When all
 * fail, the error is the first failure's, with its build log. */
clphmm_status cph_kernel_obtain(const cph_builder *b, const cph_variant *v,
                                int dbl, cph_kernel *out);

/* Store a kernel built from source in the cache. Called after its first
 * launches: some drivers (PoCL) then include the code they generated for
 * the launch's work-group size in the binary, so that a warm start has
 * nothing left to compile. */
void cph_kernel_save(const cph_builder *b, cph_kernel *k);

/* Store a kernel built from source in the cache now, so that other
 * engines of the same kind of device load it instead of compiling it; it
 * is stored again after its first launches (cph_kernel_save). */
void cph_kernel_share(const cph_builder *b, const cph_kernel *k);

void cph_kernel_release(cph_kernel *k);

/* "16x8/64 local fma" */
void cph_variant_describe(const cph_variant *v, int dbl, char *buf, size_t n);

#endif
