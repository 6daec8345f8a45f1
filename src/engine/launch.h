/* Running a staged and scheduled chunk on the device: the slot's in-order queue
 * takes the copies in, the row preparation, the launches and the copies
 * out, without waiting; the host waits for a chunk only when it needs its
 * results, so the next chunk is staged while this one computes. */
#ifndef CLPHMM_LAUNCH_H
#define CLPHMM_LAUNCH_H

#include "engine/context.h"

/* Enqueue everything of the chunk in `slot` (staged and scheduled). */
clphmm_status cph_submit(cph_engine *ctx, cph_slot *slot);

/* cph_submit in its parts, in this order, so that two chunks on
 * different queues can take turns (speculate.c: a small call's float pass
 * and its speculative double pass): the copies in and the row
 * preparation, the launches, the copies out. */
clphmm_status cph_submit_inputs(cph_engine *ctx, cph_slot *slot);
clphmm_status cph_submit_launches(cph_engine *ctx, cph_slot *slot);
clphmm_status cph_submit_outputs(cph_engine *ctx, cph_slot *slot);

/* Whether `slot`, a small call's speculative pass on its own queue whose
 * staging and schedule are copies of `from`'s (the float chunk's, not
 * submitted yet), reads `from`'s copies in instead of its own: where
 * every launch of it computes its rows and `from`'s inputs go through the
 * packs. Sets both slots for it; then `from`'s inputs must be submitted
 * first (the pass's first launch waits for their event on its own queue).
 * Saves the pass its copy in: about 4 us of a region's enqueueing, before
 * its launch. */
int cph_share_inputs(cph_engine *ctx, cph_slot *slot, cph_slot *from);

/* After a chunk's commands (cph_submit does it): the scaled form's weights
 * of a chunk whose kernels compute their rows, on the host while the device
 * computes (no row preparation computes them there). */
void cph_submit_weights(cph_engine *ctx, cph_slot *slot);

/* A slot marked weights_later (float mode's speculative pass): the weights
 * of the reads of its jobs that `want` marks (by out index), before its
 * results are finished; clears the mark. */
void cph_later_weights(cph_slot *slot, const unsigned char *want);

/* Wait for the chunk in `slot`, add its device times to the statistics and
 * release its events. The sums are then in slot->sums (2 reals per slot in
 * the scaled form, else 1) and the weights in slot->stage.weights (from
 * the device's row preparation, or computed by the host at submission for
 * chunks whose kernels compute their rows). */
clphmm_status cph_collect(cph_engine *ctx, cph_slot *slot);

/* Drop the events of a chunk that will not be collected (after a failure). */
void cph_slot_abandon(cph_slot *slot);

/* Count the slot's launches, their pairs and cells in the statistics (as
 * cph_collect does). */
void cph_count_launches(cph_engine *ctx, const cph_slot *slot);

/* Wait for the slot's chunk, whose results are not wanted, and drop its
 * events: no statistics. */
clphmm_status cph_drop(cph_engine *ctx, cph_slot *slot);

#endif
