/* One compute call's state and the pipeline's parts (private to the
 * engine): compute.c cuts the call into chunks and runs the passes;
 * finish.c turns a collected chunk into results and the pairs to compute
 * again; rescue.c runs float mode's double rescue and the exact pass over
 * them; speculate.c runs a small float call's double pass beside its float
 * pass. */
#ifndef CLPHMM_ENGINE_CALL_H
#define CLPHMM_ENGINE_CALL_H

#include "engine/chunks.h"
#include "engine/context.h"
#include "engine/first.h"
#include "engine/launch.h"

/* Pairs to compute again, and how many went to the device so far. */
typedef struct pair_list {
  cph_pair *p;
  size_t n, cap, done;
} pair_list;

/* The passes of a call: its precision's own pass over all pairs, float
 * mode's double rescue of the pairs whose float sums fall below GKL's
 * threshold, the exact pass over the rescue pairs whose scaled sums do
 * not stand (rescue_sum_ok), and float mode's check: the float pass of
 * the double-first pairs whose double results do not prove GKL's rescue
 * (plan_double_first). */
enum { PASS_MAIN, PASS_RESCUE, PASS_EXACT, PASS_CHECK };

/* The per-call state of the pipeline. */
typedef struct call {
  cph_engine *ctx;
  const clphmm_batch *batches;
  size_t n_batches, n_pairs;
  double *results;
  pair_list rescue; /* float results recomputed in double */
  pair_list exact;  /* rescue results recomputed in GKL's exact order */
  /* Float mode's double-first pairs (in the rescue or the exact list
   * first; first_exact of them in the exact list), the reads of at least
   * skip_rows rows that the main pass leaves to them (0: none), and those
   * whose float pass still runs (check; check_kept of them then keep
   * their double results). */
  pair_list first, check;
  size_t first_exact, check_kept, skip_rows;
  cph_first_counts seen; /* long reads' pairs, rescued or not (first.h) */
  /* A speculative double pass (cph_call_speculate) is in the rescue slot; when
   * it is finished, `want` marks the results it gives (by out index). */
  int speculated;
  const unsigned char *want;
  cph_pieces pieces;
  const cph_batch_sum *sums; /* per batch (chunks.h), or NULL */
  cph_share *sh;             /* a call split between engines, else NULL */
  size_t me;                 /* this engine's place in the share */
} call;

/* What a chunk holds: pieces, or rescue pairs; `like`, if any, has staged
 * the same pieces already (for another pass). */
typedef struct chunk_src {
  const cph_piece *pieces;
  size_t n_pieces;
  const cph_pair *pairs;
  size_t n_pairs;
  const cph_stage *like;
  /* The schedule of `like`'s chunk on another set, to copy where it is
   * the same (cph_schedule_copy), else NULL. */
  const cph_sched *like_sched;
} chunk_src;

/* ---- compute.c: the pipeline ------------------------------------------ */

/* Submit the staged and scheduled chunk in slot s. */
clphmm_status cph_call_submit_chunk(cph_engine *ctx, cph_slot *s);
/* Stage, schedule and (unless `defer`: the caller submits) submit the
 * chunk of `src` into slot s, on the kernels of `set` (CPH_SET_*) and the
 * queue and buffers of `d`. */
clphmm_status cph_call_start_chunk(call *c, cph_slot *s, cph_devset *d, int set,
                                   const chunk_src *src, int defer);
/* Wait for the chunk in slot s and finish it as a chunk of `pass`. */
clphmm_status cph_call_end_chunk(call *c, cph_slot *s, int pass);
/* Collect the chunk in the other slot after a failure. */
void cph_call_drain(cph_engine *ctx);
/* Whether a failed chunk is retried smaller (then everything in flight is
 * waited for); cph_call_shrink then makes chunks smaller. */
int cph_call_can_retry(cph_engine *ctx, clphmm_status rc, size_t n_pieces,
                       const cph_piece *pieces);
void cph_call_shrink(cph_engine *ctx);

/* ---- finish.c --------------------------------------------------------- */

/* Results of a collected chunk of `pass`, and the pairs to compute again. */
clphmm_status cph_call_finish(call *c, const cph_slot *s, int pass);
/* Append a pair to a list. */
clphmm_status cph_pair_list_add(pair_list *l, cph_pair pair);
/* GKL's double computation of `n` pairs with the CPU reference. */
clphmm_status cph_call_rescue_on_cpus(const call *c, const cph_pair *pairs,
                                      size_t n);

/* ---- rescue.c --------------------------------------------------------- */

/* The pass of the chunk in the rescue slot. */
int cph_call_slot_pass(const cph_slot *s);
/* Between main chunks: a chunk of the gathered rescue pairs. */
clphmm_status cph_call_rescue_some(call *c, int flush);
/* At the end: every pair left in list `l`, on `set`. */
clphmm_status cph_call_rescue_final(call *c, pair_list *l, int set);
/* The rescue pass's end, then the exact pass. */
clphmm_status cph_call_rescue_pass(call *c);

/* ---- speculate.c ------------------------------------------------------ */

/* Whether a float call speculates (a small call of one whole chunk). */
int cph_call_speculates(const call *c, const cph_cursor *cur, uint64_t cells);
/* Stage and schedule the speculative pass in the rescue slot. */
void cph_call_speculate(call *c, size_t n_pieces, const cph_slot *float_slot);
/* Submit the float chunk in slot f and the speculative pass, if any. */
clphmm_status cph_call_submit_both(call *c, cph_slot *f);
/* After the float chunk's finish: the speculative pass's results, or,
 * where the call needs none, the pass left to the next call. */
clphmm_status cph_call_end_speculation(call *c);
/* Wait for and drop a speculative pass an earlier call left (before a
 * call submits anything). */
clphmm_status cph_call_settle(cph_engine *ctx);

#endif
