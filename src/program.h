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
  CPH_SHUFFLE_NVIDIA = 3,
  CPH_SHUFFLE_AMD = 4,
  CPH_SHUFFLE_KHR_ABS = 5
} cph_shuffle;
#define CPH_SHUFFLE_LAST CPH_SHUFFLE_KHR_ABS

const char *cph_shuffle_name(cph_shuffle s);
/* Parse a backend name ("local", "khr", "intel", "nvidia", "amd",
 * "khr-abs"); -1 if unknown. */
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

/* Local memory the kernel of `v` declares with work-groups of `wg` (the
 * emission table and, for the local backend, the exchange arrays). Mirrors
 * the layout in cl/pairhmm.cl and cl/shuffle.cl. */
size_t cph_variant_local_bytes(const cph_variant *v, unsigned wg, int dbl);

/* `v` with its work-group size halved (in whole lane groups) until its
 * local memory fits the device: double tables are twice as large. */
cph_variant cph_variant_fit(const cph_variant *v, int dbl,
                            const cph_device *dev);

typedef struct cph_kernel {
  cl_program program;
  cl_kernel kernel;
  cph_variant variant; /* as built (cph_variant_fit) */
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
