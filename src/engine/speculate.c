/* Float mode's speculative double pass (engine/call.h): a small call's
 * double pass beside its float pass, whose results serve the pairs the
 * float pass finds to rescue. */
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

/* ---- speculation ----------------------------------------------------- */

/* Float mode's small calls (one chunk that cannot fill the device:
 * cph_plan_small) can send the double pass over all their pairs right
 * behind the float pass, before the float sums are back: the rescue then
 * costs no second round trip (on the H100 a region of 300 pairs waited
 * for its float sums, then staged, submitted and waited for its rescue:
 * about 100 us of a 230 us call), and an idle device computes the pairs
 * that need no rescue for nothing. Only the rescue pairs take its results,
 * which are the rescue's own computation (GKL's double flavor, the same
 * kernels). It is done while one of the engine's last CPH_SPEC_AFTER small
 * calls had pairs to rescue (CLPHMM_SPECULATE: auto), always or never (1,
 * 0): HaplotypeCaller-like regions in turn (30,000 pairs, 225 regions) took
 * 118.5 us per call on the H200 always speculating, 127.8 when only the
 * last call counted and 177.5 never; with the last 8 counting, 123.3
 * against 127.6 always in another run. tests/data/10s.in, whose calls
 * rescue nothing, stops speculating after CPH_SPEC_AFTER calls (276.8 us
 * per call against 442.1 always). It runs on the
 * side queue (CLPHMM_SIDE_QUEUE=1, the default), beside the float pass
 * rather than behind it in one in-order queue: a 300-pair region per call
 * took 128 us on the H200 (medians of 7 rounds of 1000 calls) against 154
 * on the main queue and 172 without speculating. (Submitted first, ahead
 * of the float pass, it gained nothing: 158 against 144 us; the two
 * passes' commands taking turns did: cph_call_submit_both.) */
int cph_call_speculates(const call *c, const cph_cursor *cur, uint64_t cells) {
  const cph_engine *ctx = c->ctx;
  const int whole = cur->batch == cur->end_batch && cur->read == cur->end_read;
  return !c->sh && whole && !c->first.n &&
         ctx->precision == CLPHMM_PRECISION_FLOAT && ctx->dev.info.has_fp64 &&
         ctx->variants[CPH_SET_DOUBLE].n &&
         cph_plan_small(&ctx->variants[CPH_SET_FLOAT], c->n_pairs, cells,
                        ctx->dev.info.compute_units);
}

/* Whether the engine speculates now (CLPHMM_SPECULATE, spec_left). */
static int spec_wanted(const cph_engine *ctx) {
  return ctx->speculate == CPH_SPECULATE_ALWAYS ||
         (ctx->speculate == CPH_SPECULATE_AUTO && ctx->spec_left);
}

/* Stage and schedule the speculative pass in the rescue slot (the float
 * chunk of the same pieces is staged and scheduled in `float_slot`, not
 * submitted yet); cph_call_submit_both then enqueues both. */
void cph_call_speculate(call *c, size_t n_pieces, const cph_slot *float_slot) {
  cph_engine *ctx = c->ctx;
  if (!spec_wanted(ctx))
    return;
  const double t0 = cph_now();
  cph_slot *s = &ctx->slots[CPH_RESCUE_SLOT];
  cph_devset *d = cph_engine_optional_queue(ctx, &ctx->side.queue,
                                            &ctx->side_queue, "second queue")
                      ? &ctx->side
                      : &ctx->d;
  const chunk_src src = {c->pieces.p, n_pieces,           NULL,
                         0,           &float_slot->stage, &float_slot->sched};
  if (!cph_call_start_chunk(c, s, d, CPH_SET_DOUBLE, &src, 1)) {
    c->speculated = 1; /* (counted in spec_calls once submitted) */
    s->weights_later = 1;
  }
  ctx->stats.rescue_seconds += cph_now() - t0;
}

/* Submit the float chunk in slot f and, if one is staged, the speculative
 * pass, their commands taking turns on their two queues: both copies in
 * and row preparations, then both launches, then both copies out, the
 * speculative pass's first (its double kernel is the longer: on the H200
 * a 300-pair region's ran 48 us, the float one 30, each behind a 10 us
 * row preparation and about 30 us of the host's enqueueing; one pass
 * after the other, the second's kernel started about 65 us into the
 * call). They take turns only on two queues with their own device
 * buffers. Where the speculative pass reads the float chunk's copy in
 * (cph_share_inputs), that copy goes first and the pass has none. If the
 * speculative pass fails, the float chunk is submitted alone and the
 * rescue pass runs as without it. */
clphmm_status cph_call_submit_both(call *c, cph_slot *f) {
  cph_engine *ctx = c->ctx;
  cph_slot *d = &ctx->slots[CPH_RESCUE_SLOT];
  if (!c->speculated)
    return cph_call_submit_chunk(ctx, f);
  if (d->d == f->d) {
    /* One queue and one set of device buffers (no side queue): one pass
     * after the other. */
    const clphmm_status rc = cph_call_submit_chunk(ctx, f);
    if (rc || cph_call_submit_chunk(ctx, d)) {
      if (!rc) /* (queued commands may read the slot's host buffers) */
        cph_engine_finish(ctx);
      cph_slot_abandon(d);
      c->speculated = 0; /* (the rescue pass runs as without it) */
    }
    ctx->spec_calls += (unsigned long)c->speculated;
    return rc;
  }
  /* (What the abandoned attempt counted is not counted again.) */
  const unsigned long copied = ctx->copied_chunks, side = ctx->side_chunks,
                      inl = ctx->inline_chunks, shared = ctx->shared_inputs,
                      preps = ctx->copy_preps;
  const uint64_t split = ctx->stats.split_pairs;
  const double t0 = cph_now();
  int ok = f->stage.n_jobs && d->stage.n_jobs; /* (else nothing to pair) */
  /* (Reading the float chunk's copies in, the pass follows them.) */
  const int share = ok && cph_share_inputs(ctx, d, f);
  ok = ok && (share ? !cph_submit_inputs(ctx, f) && !cph_submit_inputs(ctx, d)
                    : !cph_submit_inputs(ctx, d) && !cph_submit_inputs(ctx, f));
  ok = ok && !cph_submit_launches(ctx, d) && !cph_submit_launches(ctx, f) &&
       !cph_submit_outputs(ctx, d) && !cph_submit_outputs(ctx, f);
  if (ok) { /* (both chunks' copies out queued first) */
    cph_submit_weights(ctx, f);
    cph_submit_weights(ctx, d);
  }
  cph_trace_host(&ctx->trace, "submit", (int)(f - ctx->slots), t0);
  if (ok) {
    ctx->spec_calls++;
    return CLPHMM_SUCCESS;
  }
  /* (Queued commands may still read the slots' host buffers.) */
  cph_engine_finish(ctx);
  cph_slot_abandon(d);
  cph_slot_abandon(f);
  c->speculated = 0;
  ctx->copied_chunks = copied;
  ctx->copy_preps = preps;
  ctx->side_chunks = side;
  ctx->inline_chunks = inl;
  ctx->shared_inputs = shared;
  ctx->stats.split_pairs = split;
  ctx->alloc_failed = 0; /* (the float chunk's own failures count) */
  return cph_call_submit_chunk(ctx, f);
}

/* After the float chunk's finish: the speculative pass's results for the
 * pairs it found to rescue (their sums that do not stand go on to the
 * exact pass, as in the rescue).
 *
 * A call that found no pair to rescue (and sends none to the exact pass)
 * needs none of them: it returns without waiting for the pass, which on
 * the H200 ran 48 us against the float pass's 30 (a region's double
 * kernel is the longer), and leaves it in the rescue slot (`left`, its
 * launches counted now). The
 * engine's next call waits for it before it submits anything
 * (cph_call_settle): its commands may overwrite the float chunk's copies
 * in, which the pass reads, and the slot's host buffers. A small call
 * waits there only after staging and scheduling its float chunk, so the
 * caller's work between calls and that share of the next call both
 * overlap the pass. Profiled or traced calls wait for it as before, so
 * that its device times and commands stay in their call's statistics and
 * timeline (a profiled queue's commands cost more than the wait saves).
 * 60 of 225 HaplotypeCaller-like regions (hc30k) rescue
 * nothing; in turn they took 76.9 us per call on an H200 against 80.6
 * waiting for every pass (6 rounds; 97.5 against 98.9 on a slower host).
 * $CLPHMM_SPEC_LEAVE=0: every call waits for its pass. */
clphmm_status cph_call_end_speculation(call *c) {
  cph_engine *ctx = c->ctx;
  if (ctx->spec_leave && !ctx->profile && !ctx->trace.f && !c->rescue.n &&
      !c->exact.n && !c->check.n) {
    cph_slot *s = &ctx->slots[CPH_RESCUE_SLOT];
    cph_count_launches(ctx, s);
    s->left = 1;
    ctx->spec_left_passes++;
    c->speculated = 0;
    return CLPHMM_SUCCESS;
  }
  const double t0 = cph_now();
  unsigned char *want = calloc(c->n_pairs ? c->n_pairs : 1, 1);
  if (!want)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to rescue pairs");
  for (size_t i = 0; i < c->rescue.n; i++)
    want[c->rescue.p[i].out] = 1;
  c->want = want;
  cph_later_weights(&ctx->slots[CPH_RESCUE_SLOT], want);
  clphmm_status rc =
      cph_call_end_chunk(c, &ctx->slots[CPH_RESCUE_SLOT], PASS_RESCUE);
  c->want = NULL;
  free(want);
  c->speculated = 0;
  if (!rc)
    c->rescue.done = c->rescue.n;
  ctx->stats.rescue_seconds += cph_now() - t0;
  return rc;
}

/* A pass an earlier call left (cph_call_end_speculation): wait for it and
 * drop it. */
clphmm_status cph_call_settle(cph_engine *ctx) {
  cph_slot *s = &ctx->slots[CPH_RESCUE_SLOT];
  if (!s->left)
    return CLPHMM_SUCCESS;
  const double t0 = cph_now();
  const clphmm_status rc = cph_drop(ctx, s);
  ctx->spec_settled++;
  cph_trace_host(&ctx->trace, "settle", CPH_RESCUE_SLOT, t0);
  return rc;
}
