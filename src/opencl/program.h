/* Kernel variants: their -D build options and the assembly of the kernel
 * source from the embedded .cl files (building is in build.c). */
#ifndef CLPHMM_PROGRAM_H
#define CLPHMM_PROGRAM_H

#include "opencl/device.h"

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

/* One compiled configuration of a kernel: the lane-group kernel
 * (cl/pairhmm.cl, "GxC/WG") or, with `vec`, the vector kernel for CPUs
 * (cl/pairhmm_cpu.cl, "vPxC/WG"). */
typedef struct cph_variant {
  unsigned g;  /* lanes per pair; vec: pairs per work-item (vector width) */
  unsigned c;  /* read rows per lane; vec: read rows per tile */
  unsigned wg; /* work-group size, a multiple of g (vec: any) */
  cph_shuffle shuffle;
  int fma;         /* fuse multiply-adds (see cl/pairhmm.cl) */
  int scaled;      /* with fma: the scaled form (float; double in float mode's
                      rescue), else the fused form */
  int seq;         /* long-read variant (":long"): only for reads longer than
                      every other variant's tile, tiles one after the other */
  unsigned maxreg; /* register cap (":rN", NVIDIA's PTX .maxnreg), 0: none */
  int small;       /* small-call variant (":small"): serves every pair of a
                      chunk too small to fill the device (see plan.h) */
  int vec;         /* the vector kernel: one pair per vector lane */
  int lring;       /* concurrent tiles of one round pass their rows through
                      local memory (CPH_LRING, cl/pairhmm.cl LRING): small
                      variants, where the local memory has room for it
                      (cph_variant_fit sets it) */
  int ftz;         /* float programs flush denormals (-cl-denorms-are-zero):
                      CPUs, where GKL's float pass flushes too (FTZ) and a
                      denormal costs a hundred cycles (see plan.c) */
  int early_exit;  /* the program stops pairs early (cph_variant_exit) */
  int inline_rows; /* the kernel computes its rows from the raw bytes
                      (CPH_INLINE, cl/pairhmm.cl ROW_AT; no float early
                      exit): small calls' launches (engine/schedule.c) */
  int split;       /* the program runs split pairs (CPH_SPLIT, cl/pairhmm.cl:
                      a launch's pairs on several work-groups); only the
                      launches that split get such a program (engine/
                      schedule.c), for the code costs every launch */
} cph_variant;

/* Tile slots of a launch whose pairs need `tiles` tiles on `v`: the
 * smallest power of two that covers them, within the work-group's lane
 * groups (it must divide them) and `max` (0: no limit). Each slot takes
 * whole warps or wavefronts for the backends whose kernels idle slots
 * with branches around the shuffles (NVIDIA, AMD). 1 runs the tiles one
 * after the other, as long-read variants always do. */
unsigned cph_variant_coop(const cph_variant *v, uint32_t tiles, unsigned max);

/* Whether the kernel of `v` uses the scaled arithmetic form, which returns
 * two last-row sums per pair (cl/pairhmm.cl): the fast form in single
 * precision and in the double rescue of float mode. */
static inline int cph_variant_scaled(const cph_variant *v) {
  return v->fma && v->scaled;
}

/* The early exit a program of `v` compiles in (CPH_EXIT in cl/pairhmm.cl):
 * 1, float programs of the scaled form stop pairs whose float sum is
 * certain to need the double rescue (model/bound.h); 2, double programs
 * stop pairs whose rows have underflowed to zeros (their sum is 0); 0,
 * none (the vector kernel, turned off, or a float program that computes
 * its rows itself: the bound lives in the prepared rows). */
static inline int cph_variant_exit(const cph_variant *v, int dbl) {
  if (!v->early_exit || v->vec)
    return 0;
  return dbl ? 2 : cph_variant_scaled(v) && !v->inline_rows ? 1 : 0;
}

/* Read rows per tile. */
static inline unsigned cph_variant_rows(const cph_variant *v) {
  return v->vec ? v->c : v->g * v->c;
}

/* Pair slots per work-group when tiles run one after the other (the
 * lane-group kernel divides them by its tile slots). */
static inline unsigned cph_variant_pairs(const cph_variant *v) {
  return v->vec ? v->wg * v->g : v->wg / v->g;
}

/* Steps of a tile over a haplotype of H bases, in whole words of four:
 * every column through every lane of a lane group; one per column in the
 * vector kernel. */
static inline uint32_t cph_variant_steps(const cph_variant *v, uint32_t H) {
  return (H + (v->vec ? 0 : v->g - 1) + 3) / 4 * 4;
}

/* Whether the kernel of `v` passes the boundary row of long reads through
 * local memory rings (cl/pairhmm.cl, RING). */
static inline int cph_variant_ring(const cph_variant *v, int dbl) {
  return v->seq && v->shuffle == CPH_SHUFFLE_NVIDIA && v->g == 32 && !dbl;
}

/* Local memory the kernel of `v` declares with work-groups of `wg` (the
 * emission table, the rings and, for the local backend, the exchange
 * arrays). Mirrors the layout in cl/pairhmm.cl and cl/shuffle.cl. */
size_t cph_variant_local_bytes(const cph_variant *v, unsigned wg, int dbl);

/* `v` with its work-group size halved (in whole lane groups) until its
 * local memory fits the device: double tables are twice as large. */
cph_variant cph_variant_fit(const cph_variant *v, int dbl,
                            const cph_device *dev);

/* A built variant. `variant` is the one actually built: it differs from the
 * one asked for when that failed to build and a simpler one replaced it. */
/* The arguments last set on a kernel object, so that a launch sets only
 * those that changed (each clSetKernelArg costs about a microsecond on
 * NVIDIA's driver, and a small call launches kernels of 14 or 15
 * arguments). Valid while `gen` equals cph_devbuf_generation(): a buffer
 * made or released since may reuse an old handle's value. */
#define CPH_MAX_ARGS 15
typedef struct cph_args {
  uint64_t v[CPH_MAX_ARGS][2]; /* values of up to 16 bytes */
  unsigned set;                /* bit a: v[a] is argument a's value */
  unsigned long gen;
} cph_args;

/* Extra build options ($CLPHMM_BUILD_OPTIONS) at most, and a program's
 * whole option text (cph_variant_options). */
#define CPH_MAX_EXTRA_OPTIONS 640
#define CPH_OPTIONS_MAX 1024

typedef struct cph_kernel {
  cl_program program;
  cl_kernel kernel;
  cl_kernel prep; /* row preparation (cl/prep.cl), NULL where absent */
  cph_args args, prep_args;
  cph_variant variant;
  int dbl;     /* built for double precision */
  int unsaved; /* built from source, not yet in the kernel cache */
  /* The kernel sources' identity (cph_program_source_id) and the build
   * options when it was built: the key it is saved under, not the files'
   * and the environment's at the save (with $CLPHMM_KERNEL_DIR's files
   * edited between, the old source's binary was stored under the new
   * source's key). "" when it is not to be saved. */
  char source_id[128];
  char options[CPH_OPTIONS_MAX];
} cph_kernel;

/* "GxC/WG[:long][:rN]" or "vPxC/WG" into buf. */
void cph_variant_name(const cph_variant *v, char *buf, size_t n);

/* The canonical (sorted) build options of a variant in a precision, then
 * $CLPHMM_BUILD_OPTIONS (at most CPH_MAX_EXTRA_OPTIONS bytes, checked when
 * a context is created), into buf (CPH_OPTIONS_MAX bytes hold both). */
void cph_variant_options(const cph_variant *v, int dbl, char *buf, size_t n);

/* The kernel source files, concatenated in order into every program. */
#define CPH_N_PROGRAM_FILES 6
typedef struct cph_sources {
  char *text[CPH_N_PROGRAM_FILES];
  size_t size[CPH_N_PROGRAM_FILES];
} cph_sources;

/* Load the sources: the embedded copies, or $CLPHMM_KERNEL_DIR's files. */
clphmm_status cph_program_sources(cph_sources *s);
void cph_sources_free(cph_sources *s);

/* A string identifying the source text (part of the binary-cache key). */
clphmm_status cph_program_source_id(char *buf, size_t n);

#endif
