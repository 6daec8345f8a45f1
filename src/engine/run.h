/* Running jobs on the device: binning by read length, work-group
 * formation, chunking, launches and result download. */
#ifndef CLPHMM_RUN_H
#define CLPHMM_RUN_H

#include "engine/context.h"
#include "engine/pack.h"

/* Compute the scaled final sum of every job (widened to double) on the
 * context's device, in the pack's flavor. */
clphmm_status cph_run_jobs(clphmm_context *ctx, const cph_pack *pack,
                           const cph_job *jobs, size_t n_jobs, double *sums);

#endif
