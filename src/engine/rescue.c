/* Float mode's double rescue and the exact pass (engine/call.h): the
 * pairs the float pass collected, in chunks of single pairs through the
 * pipeline, between the main chunks and at the end. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "engine/call.h"
#include "model/bound.h"
#include "model/validate.h"
#include "reference/reference.h"

/* ---- the rescue ------------------------------------------------------ */

/* The double rescue of the collected pairs: on the device in chunks when
 * it has double precision, else with the CPU reference; pairs whose scaled
 * double sum does not stand then go to the exact pass (or, without an
 * exact set, to the CPU reference). */

/* The pass of the chunk in the rescue slot. */
int cph_call_slot_pass(const cph_slot *s) {
  return s->set == CPH_SET_EXACT   ? PASS_EXACT
         : s->set == CPH_SET_FLOAT ? PASS_CHECK
                                   : PASS_RESCUE;
}

/* Pairs of list `l` from l->done on, at most a rescue chunk's. */
static chunk_src rescue_src(const cph_engine *ctx, const pair_list *l) {
  const unsigned div = ctx->chunk_div ? ctx->chunk_div : 1;
  const size_t most = ctx->rescue_max / div ? ctx->rescue_max / div : 1;
  const size_t n = l->n - l->done;
  return (chunk_src){NULL, 0, l->p + l->done, n < most ? n : most, NULL, NULL};
}

/* In the main pass, between its chunks: once ctx->rescue_min pairs have
 * gathered in the rescue list (any, with `flush`), the rescue slot's
 * previous chunk is finished and one chunk of them submitted, so that the
 * host stages it while the device computes. Chunks of 16,384 pairs rather
 * than 4,096 (one main chunk's) fill the device: on the H200 the
 * HaplotypeCaller-like mix's kernels took 23.5 ms against 24.1. A failure
 * leaves the pairs for the end (cph_call_rescue_final). */
clphmm_status cph_call_rescue_some(call *c, int flush) {
  cph_engine *ctx = c->ctx;
  pair_list *l = &c->rescue;
  cph_slot *s = &ctx->slots[CPH_RESCUE_SLOT];
  const size_t want = flush ? 1 : ctx->rescue_min;
  if (l->n - l->done < want)
    return CLPHMM_SUCCESS;
  const double t0 = cph_now();
  clphmm_status rc = s->active ? cph_call_end_chunk(c, s, cph_call_slot_pass(s))
                               : CLPHMM_SUCCESS;
  const chunk_src src = rescue_src(ctx, l);
  if (!rc && cph_call_start_chunk(c, s, &ctx->d, CPH_SET_DOUBLE, &src, 0)) {
    /* Its queued commands (copies on the copy queue too) may still read
     * the slot's host buffers. */
    cph_engine_finish(ctx);
    cph_slot_abandon(s);
  } else if (!rc) {
    l->done += src.n_pairs;
  }
  ctx->stats.rescue_seconds += cph_now() - t0;
  return rc;
}

/* At the end: every pair left in list `l` (the rescue or the exact pass,
 * on `set`), in chunks that take turns between the rescue slot and main
 * slot 0 (idle now), so that the host stages the next while the device
 * computes the one before: the rescue chunk from the main pass ran 0.6-1.0
 * ms on the H200 while the host waited for it before staging the last
 * one. Allocation failures are answered by smaller chunks, once the chunk
 * in flight is finished. */
clphmm_status cph_call_rescue_final(call *c, pair_list *l, int set) {
  cph_engine *ctx = c->ctx;
  cph_slot *const r = &ctx->slots[CPH_RESCUE_SLOT], *const z = &ctx->slots[0];
  cph_slot *pend = r->active ? r : NULL; /* (in flight) */
  clphmm_status rc = CLPHMM_SUCCESS;
  while (!rc && l->done < l->n) {
    const double t0 = cph_now();
    cph_slot *s = pend == r ? z : r;
    const chunk_src src = rescue_src(ctx, l);
    const clphmm_status was = cph_call_start_chunk(c, s, &ctx->d, set, &src, 0);
    const int retry = was && cph_call_can_retry(ctx, was, src.n_pairs, NULL);
    if (was) {
      /* (Queued commands may still read the slot's host buffers.) */
      cph_engine_finish(ctx);
      cph_slot_abandon(s);
    } else {
      l->done += src.n_pairs;
    }
    rc = pend ? cph_call_end_chunk(c, pend, cph_call_slot_pass(pend))
              : CLPHMM_SUCCESS;
    pend = was ? NULL : s;
    ctx->stats.rescue_seconds += cph_now() - t0;
    if (!rc && was && !retry)
      return was;
    if (!rc && was)
      cph_call_shrink(ctx);
  }
  if (pend && !rc) {
    const double t0 = cph_now();
    rc = cph_call_end_chunk(c, pend, cph_call_slot_pass(pend));
    ctx->stats.rescue_seconds += cph_now() - t0;
  }
  return rc;
}

/* The rescue pass's end, then the exact pass over the pairs it left
 * (the exact pass finds none that fail: its sums are GKL's). */
clphmm_status cph_call_rescue_pass(call *c) {
  cph_engine *ctx = c->ctx;
  if (c->rescue.n == 0 && c->exact.n == 0)
    return CLPHMM_SUCCESS;
  /* (The exact pass may hold pairs sent straight there: finish.) */
  ctx->stats.rescued_pairs =
      c->rescue.n + ctx->stats.exact_direct + c->first_exact;
  if (!ctx->dev.info.has_fp64) {
    const double t0 = cph_now();
    clphmm_status rc = cph_call_rescue_on_cpus(c, c->rescue.p, c->rescue.n);
    ctx->stats.cpu_pairs += c->rescue.n;
    ctx->stats.rescue_seconds += cph_now() - t0;
    return rc;
  }
  clphmm_status rc = cph_call_rescue_final(c, &c->rescue, CPH_SET_DOUBLE);
  if (!rc && c->exact.n) {
    ctx->stats.exact_pairs = c->exact.n;
    rc = cph_call_rescue_final(c, &c->exact, CPH_SET_EXACT);
    if (rc == CLPHMM_ERROR_BUILD_FAILED) {
      /* Its kernels do not build here: the CPU reference, as before the
       * exact pass existed. */
      cph_call_drain(ctx);
      const size_t left = c->exact.n - c->exact.done;
      cph_diag_note(&ctx->diag,
                    "the exact pass's kernels did not build: %zu pairs on "
                    "the CPU reference",
                    left);
      rc = cph_call_rescue_on_cpus(c, c->exact.p + c->exact.done, left);
      ctx->stats.cpu_pairs += left;
      ctx->stats.exact_pairs -= left;
    }
  }
  return rc;
}
