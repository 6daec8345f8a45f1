/* Scheduling a staged chunk: each pair goes to the read-length bin of its
 * read (cph_plan_bin; too few long reads for the long-read variant go to
 * cph_plan_bin_long), pairs are ordered by bin, tiles (most first on GPUs,
 * fewest first on CPU devices) and haplotype length so that the pairs of a
 * work-group have similar shapes (its loops run to the longest of them), and
 * each bin's pairs are cut into launches. All launches of a chunk share one
 * pair list and one work-group list, which go to the device in one copy. */
#ifndef CLPHMM_SCHEDULE_H
#define CLPHMM_SCHEDULE_H

#include "engine/stage.h"
#include "opencl/program.h"

typedef struct cph_engine cph_engine;

/* Split pairs (cl/pairhmm.cl, SPLIT_Q; schedule.c launch_split): the most
 * parts a launch takes by default and the most $CLPHMM_SPLIT may ask, and
 * the work-groups a compute unit is taken to run at once (the long-read
 * variants' registers allow two on the H100). */
#define CPH_SPLIT_DEFAULT_PARTS 8
#define CPH_SPLIT_MAX_PARTS 64
#define CPH_SPLIT_GROUPS_PER_UNIT 2
#define CPH_SPLIT_MIN_EXCESS 2
/* Split groups a launch may have (the kernel takes them in 24 bits). */
#define CPH_SPLIT_MAX_GROUPS ((size_t)1 << 24)

/* One launch of a chunk. */
typedef struct cph_launch {
  const cph_kernel *k;
  int bin;             /* index in the context's per-bin statistics, -1: none */
  unsigned coop;       /* tile slots (cph_variant_coop) */
  unsigned split;      /* work-groups per split group of pairs (1: none) */
  size_t split_groups; /* its first groups, which split (the largest) */
  uint32_t split_rounds; /* rounds of its groups' pairs, at most */
  size_t first_slot, n_slots, first_group, n_groups;
  uint32_t bound_cols; /* 0 when no pair needs more than one tile */
  size_t n_jobs;
  uint64_t cells;
} cph_launch;

typedef struct cph_sched {
  cph_launch *launches;
  size_t n_launches, cap_launches;
  cph_hostbuf pairs;  /* per pair slot: (row offset, R, hap word, H) */
  cph_hostbuf groups; /* per work-group: (tiles, steps) */
  size_t n_slots, n_groups;
  size_t bound_bytes; /* the largest launch's boundary rows */
  size_t sync_bytes;  /* the largest split launch's ticket and flags */
  uint32_t exit_bins; /* bit b: bin b holds a pair of the engine's
                         exit_cells (schedule.c launch_exit) */
  /* Sorting scratch. */
  uint64_t *keys, *tmp;
  size_t cap_keys;
} cph_sched;

void cph_sched_release(const cph_bufctx *c, cph_sched *s);

/* Sort a chunk's job keys (schedule.c job_key: bin, tiles, haplotype
 * words in the upper 32 bits, the job's index, already ascending, in the
 * lower) by their upper halves, stably; tmp holds n keys. 0: no memory. */
int cph_sort_keys(cph_pool *pool, uint64_t *keys, uint64_t *tmp, size_t n);

/* Plan the launches of the staged jobs on the context's variant set `set`
 * (CPH_SET_*, building the kernels of the bins they use), and set each
 * job's slot. */
clphmm_status cph_schedule(cph_engine *ctx, int set, cph_stage *stage,
                           cph_sched *sched);

/* The schedule of `from` (the same jobs, planned on another set, their
 * slots set) for set `set`, where it is the same: one launch on the
 * small-call variant, whose kernel in `set` has the same shape, with no
 * boundary row (tiles at once only through local memory, in both sets'
 * programs) or split pairs. 1: copied (the launch on set's kernel);
 * 0: not (the caller runs cph_schedule). */
int cph_schedule_copy(cph_engine *ctx, int set, const cph_sched *from,
                      cph_sched *sched);

#endif
