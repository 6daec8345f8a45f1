/* Kernel variants: source assembly from the embedded .cl files, run-time
 * compilation with -D defines, and the compiled kernel handles. */
#ifndef CLPHMM_PROGRAM_H
#define CLPHMM_PROGRAM_H

#include "device.h"

/* Shuffle backends (see cl/shuffle.cl). */
typedef enum cph_shuffle {
  CPH_SHUFFLE_LOCAL = 0,
  CPH_SHUFFLE_KHR = 1,
  CPH_SHUFFLE_INTEL = 2,
  CPH_SHUFFLE_NVIDIA = 3
} cph_shuffle;

const char *cph_shuffle_name(cph_shuffle s);
/* Parse "local", "khr", "intel", "nvidia"; -1 if unknown. */
int cph_shuffle_parse(const char *name);

/* One compiled configuration of the lane-group kernel. */
typedef struct cph_variant {
  unsigned g;  /* lanes per pair */
  unsigned c;  /* read rows per lane */
  unsigned wg; /* work-group size, a multiple of g */
  cph_shuffle shuffle;
  int fma; /* fuse multiply-adds (see cl/pairhmm.cl) */
} cph_variant;

static inline unsigned cph_variant_rows(const cph_variant *v) {
  return v->g * v->c;
}

typedef struct cph_kernel {
  cl_program program;
  cl_kernel kernel;
} cph_kernel;

/* The canonical (sorted) build options of a variant in a precision. */
void cph_variant_options(const cph_variant *v, int dbl, char *buf, size_t n);

/* Build the variant for `dev` in `ctx`. On failure the error holds the
 * options and the compiler's log. */
clphmm_status cph_kernel_build(cl_context ctx, const cph_device *dev,
                               const cph_variant *v, int dbl,
                               cph_kernel *out);
void cph_kernel_release(cph_kernel *k);

#endif
