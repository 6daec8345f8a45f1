/* The compute pipeline: validate, then cut the batches into chunks; while
 * the device computes chunk k, the host stages and schedules chunk k+1 and
 * then finishes chunk k (sums to log10 likelihoods, the pairs that need the
 * double rescue collected). The rescue runs through the same pipeline as
 * chunks of single pairs, in GKL's double flavor. Results go to a buffer
 * of the context and reach `out` only when everything succeeded. */
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

/* Chunks: about an eighth of the call's cells each (so that staging and
 * finishing hide behind the device), but no fewer cells than fill a big
 * GPU several times over, nor more than about a second of one. */
#define CHUNK_MIN_CELLS ((uint64_t)1 << 32)
#define CHUNK_MAX_CELLS ((uint64_t)1 << 34)
#define CHUNK_MAX_PAIRS ((uint64_t)1 << 22)
#define CHUNK_PARTS 8
/* A chunk's launches must fill the device: a chunk closes on cells only
 * once it has this many pairs (on the H200, 1,192 pairs of 1024 bases, an
 * eighth of the peak workload, were one partly filled wave of the
 * long-read variant: 2.0 TCUPS against 3.0 in one launch). */
#define CHUNK_MIN_PAIRS ((uint64_t)1 << 16)

/* ---- the pipeline ---------------------------------------------------- */

/* The first invalid batch of the call, with cph_validate_batch's message
 * (pairs staged again after the main pass found input it had not checked:
 * float mode's double-first pairs). */
static clphmm_status first_invalid(const call *c, size_t n) {
  for (size_t b = 0; b < n; b++) {
    const clphmm_status st = cph_validate_batch(&c->batches[b], b);
    if (st)
      return st;
  }
  return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "invalid input");
}

/* Whether st copies `like`'s staging (stage()). */
static int stage_copies(const cph_stage *st, const chunk_src *src) {
  return src->like && !src->like->host_prep && !st->host_prep;
}

static clphmm_status stage(call *c, cph_stage *st, const chunk_src *src) {
  const cph_engine *ctx = c->ctx;
  if (stage_copies(st, src))
    return cph_stage_copy(&ctx->bufs, st, src->like);
  if (src->pieces)
    return cph_stage_pieces(&ctx->bufs, ctx->pool, st, c->batches, c->sums,
                            src->pieces, src->n_pieces, c->skip_rows,
                            c->results);
  const clphmm_status rc =
      cph_stage_pairs(&ctx->bufs, ctx->pool, st, src->pairs, src->n_pairs);
  /* (Double-first pairs are checked here, not before: name the batch.) */
  return rc == CLPHMM_ERROR_INVALID_ARGUMENT ? first_invalid(c, c->n_batches)
                                             : rc;
}

/* Submit the staged and scheduled chunk in slot s. */
clphmm_status cph_call_submit_chunk(cph_engine *ctx, cph_slot *s) {
  const double t2 = cph_now();
  clphmm_status rc = CLPHMM_SUCCESS;
  if (s->stage.n_jobs)
    rc = cph_submit(ctx, s);
  cph_trace_host(&ctx->trace, "submit", (int)(s - ctx->slots), t2);
  return rc;
}

/* Stage, schedule and (unless `defer`: the caller submits) submit the
 * chunk of `src` into slot s, on the kernels of `set` (CPH_SET_*) and the
 * queue and buffers of `d`. */
clphmm_status cph_call_start_chunk(call *c, cph_slot *s, cph_devset *d, int set,
                                   const chunk_src *src, int defer) {
  cph_engine *ctx = c->ctx;
  cph_stage *st = &s->stage;
  s->d = d;
  const cph_variant *v0 = &ctx->variants[set].v[0];
  const int float_mode = ctx->precision == CLPHMM_PRECISION_FLOAT;
  st->flavor = set == CPH_SET_FLOAT ? CPH_GKL_FLOAT
               : float_mode         ? CPH_GKL_DOUBLE
                                    : CPH_JAVA_DOUBLE;
  st->scaled = st->flavor != CPH_JAVA_DOUBLE && cph_variant_scaled(v0);
  s->set = set;
  st->real_size = set != CPH_SET_FLOAT ? sizeof(double) : sizeof(float);
  ctx->alloc_failed = 0; /* set by this chunk's failures only */
  const double t0 = cph_now();
  clphmm_status rc;
  /* Rows are prepared here when the device lacks the kernel for it (no
   * double arithmetic for the scaled form; vector variants' programs have
   * none) or when told so. */
  const cph_kernel *k0;
  rc = cph_context_kernel(ctx, 0, set, &k0);
  st->host_prep = ctx->host_prep || (!rc && !k0->prep) ||
                  cph_variant_set_has_vec(&ctx->variants[set]);
  if (!rc)
    rc = stage(c, st, src);
  cph_trace_host(&ctx->trace, "stage", (int)(s - ctx->slots), t0);
  const double t1 = cph_now();
  /* A copied stage's jobs keep their slots: its schedule, where the same,
   * is copied too (a region's speculative pass: 6 us of the host's 30
   * before its launch on the H200). */
  const int same = !rc && src->like_sched && ctx->copy_sched &&
                   stage_copies(st, src) &&
                   cph_schedule_copy(ctx, set, src->like_sched, &s->sched);
  ctx->sched_copies += (unsigned long)same;
  s->sched_copied = same;
  if (!rc && !same)
    rc = cph_schedule(ctx, set, st, &s->sched);
  cph_trace_host(&ctx->trace, "schedule", (int)(s - ctx->slots), t1);
  ctx->stats.prepare_seconds += cph_now() - t0;
  if (!rc && !defer)
    rc = cph_call_submit_chunk(ctx, s);
  ctx->stats.chunks++;
  return rc;
}

clphmm_status cph_call_end_chunk(call *c, cph_slot *s, int pass) {
  if (s->left) /* (an earlier call's speculative pass: no results) */
    return cph_drop(c->ctx, s);
  c->ctx->alloc_failed = 0;
  const double tw = cph_now();
  clphmm_status rc = cph_collect(c->ctx, s);
  cph_trace_host(&c->ctx->trace, "wait", (int)(s - c->ctx->slots), tw);
  const double t0 = cph_now();
  if (!rc)
    rc = cph_call_finish(c, s, pass);
  c->ctx->stats.finish_seconds += cph_now() - t0;
  cph_trace_host(&c->ctx->trace, "finish", (int)(s - c->ctx->slots), t0);
  return rc;
}

/* The chunk bounds of a call of `cells` cells and `pairs` pairs (split
 * between `parts` engines, each of which gets about CHUNK_PARTS chunks).
 * A shared call of fewer than CHUNK_MIN_PAIRS pairs per engine gets one
 * chunk per engine instead, cut by cells: the long suite's 1,674 pairs
 * (1e11 cells) were one chunk, which left the second of two H100s idle,
 * and each chunk's float pass of long pairs lasts as long as its largest
 * pair, one after the other: on two H100s the long suite took 125.7 ms in
 * 12 chunks, 111.1 in 9 and 98.6 in 2 (cut by pairs), against 122.1 on
 * one (d9cd8c0, f29d264). Calls of many pairs keep CHUNK_MIN_PAIRS, and
 * with it chunks for the engines to balance. */
static void chunk_bounds(const cph_engine *ctx, uint64_t cells, uint64_t pairs,
                         unsigned parts, cph_cursor *cur) {
  uint64_t per = cells / CHUNK_PARTS / (parts ? parts : 1);
  per = per < CHUNK_MIN_CELLS   ? CHUNK_MIN_CELLS
        : per > CHUNK_MAX_CELLS ? CHUNK_MAX_CELLS
                                : per;
  uint64_t min_pairs = CHUNK_MIN_PAIRS;
  if (parts > 1 && pairs / parts < min_pairs) {
    /* One chunk per engine, cut by cells: a share and a 32nd of it, so
     * that the last chunk holds the rest (the long suite's halves by
     * pairs held 4.8e10 and 5.2e10 cells). */
    per = cells / parts + cells / (32 * (uint64_t)parts) + 1;
    min_pairs = 0;
  }
  if (ctx->chunk_cells) {
    per = ctx->chunk_cells;
    min_pairs = 0;
  }
  const unsigned div = ctx->chunk_div ? ctx->chunk_div : 1;
  cur->max_cells = per / div ? per / div : 1;
  cur->max_pairs = CHUNK_MAX_PAIRS / div ? CHUNK_MAX_PAIRS / div : 1;
  cur->min_pairs = min_pairs / div;
  cur->max_bytes = ctx->max_device_bytes / 2 / div;
}

/* The bounds of chunk k of one engine's call: `full`'s, except that
 * - the first chunks ramp up to them (ctx->chunk_ramp: the first holds
 *   1/chunk_ramp of the cells and pairs, each next one 1.5x more), so that
 *   the device starts on a small chunk while the host stages a larger one
 *   (the HaplotypeCaller-like mix's first chunk, an eighth of the call,
 *   took 2.5 ms of the H200's host before its first kernel);
 * - the last two chunks share what is left: a small last chunk left the
 *   device idle while the host finished the chunk before and staged the
 *   rescue of the call's other chunks (main_pass; 2.2 ms of the H200's
 *   idle time in that mix). */
static void chunk_k_bounds(const cph_engine *ctx, const cph_cursor *full,
                           unsigned k, cph_cursor *cur) {
  uint64_t num = 1, den = ctx->chunk_ramp && full->ramps ? ctx->chunk_ramp : 1;
  for (unsigned i = 0; i < k && num < den; i++) {
    num *= 3;
    den *= 2;
  }
  num = num < den ? num : den;
  cur->max_cells = full->max_cells / den * num;
  cur->max_cells = cur->max_cells ? cur->max_cells : 1;
  cur->min_pairs = full->min_pairs / den * num;
  if (cur->cells_left > cur->max_cells && cur->cells_left <= 2 * cur->max_cells)
    cur->max_cells = cur->cells_left / 2 + 1;
}

/* Collect the chunk in the other slot after a failure, so that nothing is
 * left in flight. */
void cph_call_drain(cph_engine *ctx) {
  cph_engine_finish(ctx);
  for (int i = 0; i < CPH_SLOTS; i++)
    cph_slot_abandon(&ctx->slots[i]);
}

/* Whether a failed chunk is retried smaller: an allocation failed, and the
 * chunk has more than one read (one read against its haplotypes, or one
 * rescue pair, is the smallest piece of work). Then everything in flight
 * is waited for and every buffer released. */
int cph_call_can_retry(cph_engine *ctx, clphmm_status rc, size_t n_pieces,
                       const cph_piece *pieces) {
  if (rc != CLPHMM_ERROR_OPENCL || !ctx->alloc_failed ||
      ctx->chunk_div >= (1u << 30))
    return 0;
  if (pieces && n_pieces == 1 && pieces[0].r1 - pieces[0].r0 <= 1)
    return 0;
  if (!pieces && n_pieces <= 1)
    return 0;
  return 1;
}

/* After cph_call_can_retry: release the buffers and make chunks smaller. */
void cph_call_shrink(cph_engine *ctx) {
  cph_engine_release(ctx);
  ctx->chunk_div = ctx->chunk_div ? 2 * ctx->chunk_div : 2;
  ctx->diag.alloc_retries++;
}

/* The pieces of the next chunk (none at the end) and, in `at`, where it
 * starts, within the range it was cut from. With one engine, from the
 * cursor; in a shared call, from the cursor's range while it lasts, then
 * from a range to redo, else as one chunk from the shared queue. */
static clphmm_status take_chunk(call *c, cph_cursor *cur, cph_cursor *at,
                                size_t *n) {
  *at = *cur;
  clphmm_status rc = cph_next_chunk(cur, c->sums, &c->pieces, n);
  cph_share *sh = c->sh;
  if (rc || *n || !sh)
    return rc;
  pthread_mutex_lock(&sh->lock);
  cph_range r;
  if (sh->stop) {
    pthread_mutex_unlock(&sh->lock);
    return CLPHMM_SUCCESS;
  }
  if (sh->n_redo) {
    r = sh->redo[--sh->n_redo];
  } else {
    /* One chunk's worth of the queue under this engine's bounds. */
    cph_cursor q = *cur;
    q.batch = sh->next.batch;
    q.read = sh->next.read;
    q.out = sh->next.out;
    q.end_batch = sh->next.end_batch;
    q.end_read = sh->next.end_read;
    rc = cph_next_chunk(&q, c->sums, &c->pieces, n);
    r = sh->next;
    r.end_batch = q.batch;
    r.end_read = q.read;
    if (!rc) {
      sh->next.batch = q.batch;
      sh->next.read = q.read;
      sh->next.out = q.out;
    }
  }
  const int empty = r.batch == r.end_batch && r.read == r.end_read;
  if (!rc && !empty && !cph_share_record(sh, c->me, &r))
    rc = cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for chunks");
  pthread_mutex_unlock(&sh->lock);
  if (rc || empty) {
    *n = 0;
    return rc;
  }
  cur->batch = r.batch;
  cur->read = r.read;
  cur->out = r.out;
  cur->end_batch = r.end_batch;
  cur->end_read = r.end_read;
  *at = *cur;
  return cph_next_chunk(cur, c->sums, &c->pieces, n);
}

/* The float or double pass over all batches (with one engine) or over the
 * chunks this engine takes (a shared call). */
static clphmm_status main_pass(call *c, uint64_t cells, unsigned parts) {
  cph_engine *ctx = c->ctx;
  const int dbl = ctx->precision == CLPHMM_PRECISION_DOUBLE;
  const int set = dbl ? CPH_SET_DOUBLE : CPH_SET_FLOAT;
  const uint64_t pairs = c->sh ? c->sh->pairs : c->n_pairs;
  /* In a shared call the cursor's range starts empty: everything comes
   * from the share. */
  cph_cursor cur = {.batches = c->batches,
                    .n_batches = c->n_batches,
                    .real_size = dbl ? sizeof(double) : sizeof(float),
                    .end_batch = c->sh ? 0 : c->n_batches};
  chunk_bounds(ctx, cells, pairs, parts, &cur);
  cur.cells_left = c->sh ? 0 : cells;
  /* Only one engine's call of several full chunks ramps: a smaller one
   * would leave a second chunk too small to fill the device (peak
   * L = 512's 38,000 pairs were one chunk). */
  cur.ramps =
      !c->sh && pairs >= 2 * cur.min_pairs && cells >= 2 * cur.max_cells;
  cph_cursor full = cur; /* (the bounds that chunk_k_bounds() changes) */
  cph_slot *prev = NULL;
  clphmm_status rc = CLPHMM_SUCCESS;
  int small = 0; /* a small float call (speculates) */
  for (unsigned k = 0; !rc; k++) {
    cph_slot *s = &ctx->slots[k % 2];
    cph_cursor at;
    size_t n = 0;
    chunk_k_bounds(ctx, &full, k, &cur);
    const double tn = cph_now();
    rc = take_chunk(c, &cur, &at, &n);
    cph_trace_host(&ctx->trace, "next", -1, tn);
    if (rc || n == 0)
      break;
    /* A small float call's speculative pass is staged and scheduled
     * before either pass is submitted (cph_call_submit_both). */
    const int small_call = k == 0 && cph_call_speculates(c, &cur, cells);
    /* (An earlier call's speculative pass ends before this call submits
     * anything: a small call waits for it only after its float chunk's
     * staging and schedule.) */
    if (k == 0 && !small_call)
      rc = cph_call_settle(ctx);
    if (!rc)
      rc = cph_call_start_chunk(
          c, s, &ctx->d, set, &(chunk_src){c->pieces.p, n, NULL, 0, NULL, NULL},
          small_call);
    if (!rc && small_call) {
      small = 1;
      rc = cph_call_settle(ctx);
      if (!rc) {
        cph_call_speculate(c, n, s);
        rc = cph_call_submit_both(c, s);
      }
    }
    if (rc && cph_call_can_retry(ctx, rc, n, c->pieces.p)) {
      /* Finish what is in flight, then retry smaller. */
      cph_slot_abandon(s);
      rc = prev ? cph_call_end_chunk(c, prev, PASS_MAIN) : CLPHMM_SUCCESS;
      cph_slot *rs = &ctx->slots[CPH_RESCUE_SLOT];
      if (!rc && rs->active)
        rc = cph_call_end_chunk(c, rs, cph_call_slot_pass(rs));
      if (rc)
        break;
      prev = NULL;
      cph_call_shrink(ctx);
      cur = at;
      chunk_bounds(ctx, cells, pairs, parts, &cur);
      full = cur;
      continue;
    }
    if (!rc && prev)
      rc = cph_call_end_chunk(c, prev, PASS_MAIN);
    /* (Before the last chunk, the rescue pairs of all others go: only its
     * own are left for the end, when the device waits for them.) */
    const double tr = cph_now();
    if (!rc && ctx->dev.info.has_fp64 && !dbl)
      rc = cph_call_rescue_some(c, !c->sh && cph_cursor_at_end(&cur));
    cph_trace_host(&ctx->trace, "rescue-some", -1, tr);
    prev = rc ? NULL : s;
  }
  if (!rc && prev)
    rc = cph_call_end_chunk(c, prev, PASS_MAIN);
  if (!rc && small)
    ctx->spec_left = c->rescue.n          ? CPH_SPEC_AFTER
                     : ctx->spec_left > 0 ? ctx->spec_left - 1
                                          : 0;
  if (!rc && c->speculated)
    rc = cph_call_end_speculation(c);
  return rc;
}

/* ---- double first ---------------------------------------------------- */

/* Float mode may compute long reads' pairs in double first, then run the
 * float pass only for those whose double results do not prove that GKL
 * would rescue them (model/bound.h, cph_first_limit): where almost all of
 * a read length's pairs fall below GKL's threshold, their float pass is
 * work thrown away (the long suite rescued 92% of its pairs). Results are
 * those of float first: a pair whose double result proves the rescue
 * gets it, as GKL's rescue would give it; any other pair gets its float
 * result, or its double one where the float sum falls below the
 * threshold. Which reads go first: engine/first.h (by what the engine saw
 * of their lengths), or reads of at least ctx->double_first rows; only in
 * calls of one engine. Pairs of at least ctx->exact_direct cells go
 * straight to the exact pass, as the float pass's stopped pairs
 * (finish). */

/* Batch b's pairs of reads of at least `rows` rows to the double-first,
 * rescue and exact lists (empty haplotypes: -inf); `out` is its first
 * result. */
static clphmm_status first_pairs(call *c, size_t b, size_t rows, size_t out) {
  const cph_engine *ctx = c->ctx;
  const clphmm_batch *bt = &c->batches[b];
  const int exact = ctx->exact_direct && ctx->variants[CPH_SET_EXACT].n;
  clphmm_status st = CLPHMM_SUCCESS;
  for (size_t r = 0; r < bt->n_reads && !st; r++) {
    const clphmm_read *rd = &bt->reads[r];
    if (rd->length < rows)
      continue;
    for (size_t h = 0; h < bt->n_haplotypes && !st; h++) {
      const clphmm_haplotype *hp = &bt->haplotypes[h];
      const cph_pair pair = {rd, hp, out + r * bt->n_haplotypes + h};
      if (hp->length == 0) {
        c->results[pair.out] = -INFINITY;
        continue;
      }
      const int to_exact =
          exact && (uint64_t)rd->length * hp->length >= ctx->exact_direct;
      st = cph_pair_list_add(&c->first, pair);
      if (!st)
        st = cph_pair_list_add(to_exact ? &c->exact : &c->rescue, pair);
      c->first_exact += (size_t)(to_exact && !st);
    }
  }
  return st;
}

/* Before the main pass of a call whose longest read has `longest` rows:
 * the double-first pairs (their bases and qualities are checked when they
 * are staged: cph_stage_pairs). */
static clphmm_status plan_double_first(call *c, size_t longest) {
  cph_engine *ctx = c->ctx;
  const size_t rows = ctx->first_auto ? cph_first_rows(&ctx->first_seen)
                                      : (size_t)ctx->double_first;
  if (!rows || longest < rows || c->sh ||
      ctx->precision != CLPHMM_PRECISION_FLOAT || !ctx->dev.info.has_fp64 ||
      !ctx->variants[CPH_SET_DOUBLE].n)
    return CLPHMM_SUCCESS;
  size_t out = 0;
  clphmm_status st = CLPHMM_SUCCESS;
  for (size_t b = 0; b < c->n_batches && !st; b++) {
    const clphmm_batch *bt = &c->batches[b];
    st = first_pairs(c, b, rows, out);
    out += bt->n_reads * bt->n_haplotypes;
  }
  c->skip_rows = rows;
  ctx->stats.double_first = c->first.n;
  return st;
}

/* Double-first pairs whose double results prove GKL's rescue, on the
 * pool in parts of this many pairs (a read's growth takes a pass over its
 * qualities: 7 million rows of the long suite took 15 ms on one thread). */
#define PROOF_PART 16

typedef struct proof_task {
  const call *c;
  unsigned char *proven; /* per double-first pair */
} proof_task;

static void proof_part(void *arg, size_t part) {
  const proof_task *t = arg;
  const pair_list *l = &t->c->first;
  const size_t lo = part * PROOF_PART,
               hi = lo + PROOF_PART < l->n ? lo + PROOF_PART : l->n;
  double growth = 0;
  for (size_t i = lo; i < hi; i++) {
    const cph_pair *p = &l->p[i];
    if (i == lo || p->read != p[-1].read) /* (a read's pairs are in a row) */
      growth = t->c->ctx->first_growth * cph_first_outgoing(p->read);
    t->proven[i] = t->c->results[p->out] <
                   cph_first_limit(p->read->length, p->hap->length, growth);
  }
}

/* After the rescue: the float pass of the double-first pairs whose double
 * results do not prove GKL's rescue. */
static clphmm_status check_pass(call *c) {
  cph_engine *ctx = c->ctx;
  if (!c->first.n)
    return CLPHMM_SUCCESS;
  unsigned char *proven = malloc(c->first.n);
  if (!proven)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to check pairs");
  proof_task t = {c, proven};
  cph_pool_for(ctx->pool, (c->first.n + PROOF_PART - 1) / PROOF_PART,
               proof_part, &t);
  clphmm_status rc = CLPHMM_SUCCESS;
  for (size_t i = 0; i < c->first.n && !rc; i++) {
    if (proven[i])
      cph_first_count(&c->seen, c->first.p[i].read->length, 1);
    else
      rc = cph_pair_list_add(&c->check, c->first.p[i]);
  }
  free(proven);
  ctx->stats.double_first_checked = c->check.n;
  if (!rc)
    rc = cph_call_rescue_final(c, &c->check, CPH_SET_FLOAT);
  /* (Checked pairs whose float results stand were not rescued.) */
  if (!rc)
    ctx->stats.rescued_pairs -= c->check.n - c->check_kept;
  return rc;
}

/* ---- validation ------------------------------------------------------ */

/* Zero the statistics and name the bins (one per variant). */
static void reset_stats(cph_engine *ctx) {
  const cph_variant_set *vs =
      &ctx->variants[ctx->precision == CLPHMM_PRECISION_DOUBLE];
  const size_t n = cph_plan_count(vs);
  memset(&ctx->stats, 0, sizeof ctx->stats);
  cph_spans_clear(&ctx->kernel_spans);
  ctx->kernel_events = 0;
  ctx->stats.n_bins = n;
  if (ctx->n_bin_named != n ||
      memcmp(ctx->bin_named, vs->v, n * sizeof *vs->v)) {
    for (size_t i = 0; i < n; i++)
      cph_variant_name(&vs->v[i], ctx->bin_names[i], sizeof ctx->bin_names[i]);
    memcpy(ctx->bin_named, vs->v, n * sizeof *vs->v);
    ctx->n_bin_named = n;
  }
  for (size_t i = 0; i < n; i++) {
    const cph_variant *v = &vs->v[i];
    clphmm_bin_stats *b = &ctx->stats.bins[i];
    b->max_rows = v->seq ? UINT32_MAX : v->small ? 0 : cph_variant_rows(v);
    memcpy(b->variant, ctx->bin_names[i], sizeof b->variant);
  }
}

/* The batches' shapes checked and their pairs and cells counted on the
 * pool, in ranges of batches (a HaplotypeCaller-sized call has a million
 * read and haplotype entries: 1.8 ms on one thread of the H100's host,
 * before any work reached the device). Any failure, or a total that
 * overflows, is found again on the caller's thread, in batch order, for
 * the first error's message. */
#define SHAPE_RANGE 512
typedef struct shape_task {
  const clphmm_batch *batches;
  size_t n;
  uint64_t *pairs, *cells, *longest;
  int *bad;
  cph_batch_sum *sums; /* per batch, or NULL */
} shape_task;

/* The longest read of n batches whose shapes are valid, and their sums
 * into `sums` unless it is NULL. */
static size_t longest_read(const clphmm_batch *batches, size_t n,
                           cph_batch_sum *sums) {
  size_t most = 0;
  for (size_t b = 0; b < n; b++) {
    if (sums)
      cph_batch_sum_of(&batches[b], &sums[b]);
    for (size_t r = 0; r < batches[b].n_reads; r++)
      most =
          batches[b].reads[r].length > most ? batches[b].reads[r].length : most;
  }
  return most;
}

/* (A failing range's message names its batch from the range's start:
 * validate_shapes checks the whole call again for the real one.) */
static void shape_range(void *arg, size_t r) {
  shape_task *t = arg;
  const size_t lo = r * SHAPE_RANGE,
               hi = lo + SHAPE_RANGE < t->n ? lo + SHAPE_RANGE : t->n;
  size_t pairs = 0;
  t->bad[r] = cph_validate_shapes(t->batches + lo, hi - lo, &pairs,
                                  &t->cells[r]) != CLPHMM_SUCCESS;
  t->pairs[r] = pairs;
  t->longest[r] = t->bad[r] ? 0
                            : longest_read(t->batches + lo, hi - lo,
                                           t->sums ? t->sums + lo : NULL);
}

static clphmm_status validate_shapes(cph_pool *pool,
                                     const clphmm_batch *batches, size_t n,
                                     size_t *n_pairs, uint64_t *cells,
                                     size_t *longest, cph_batch_sum *sums) {
  const size_t ranges = n / SHAPE_RANGE + (n % SHAPE_RANGE != 0);
  uint64_t *counts =
      ranges > 1 && batches ? malloc(3 * ranges * sizeof *counts) : NULL;
  int *bad = counts ? malloc(ranges * sizeof *bad) : NULL;
  int ok = bad != NULL;
  uint64_t pairs = 0, total = 0, most = 0;
  if (ok) {
    shape_task t = {batches, n,   counts, counts + ranges, counts + 2 * ranges,
                    bad,     sums};
    cph_pool_for(pool, ranges, shape_range, &t);
    for (size_t r = 0; r < ranges && ok; r++) {
      ok = !bad[r] && pairs + counts[r] >= pairs &&
           total + counts[ranges + r] >= total;
      pairs += counts[r];
      total += counts[ranges + r];
      most = counts[2 * ranges + r] > most ? counts[2 * ranges + r] : most;
    }
    ok = ok && pairs <= SIZE_MAX / sizeof(double);
  }
  free(counts);
  free(bad);
  if (!ok) { /* one range, or an error: the caller's thread, in order */
    const clphmm_status st = cph_validate_shapes(batches, n, n_pairs, cells);
    *longest = st ? 0 : longest_read(batches, n, sums);
    return st;
  }
  *n_pairs = (size_t)pairs;
  *cells = total;
  *longest = (size_t)most;
  return CLPHMM_SUCCESS;
}

/* The results of a call to `out`, on the pool in parts of 1 MiB (a
 * HaplotypeCaller-sized call's 8 MB took 1.3 ms on one thread of the
 * H100's host, after the device had finished). */
#define COPY_PART ((size_t)1 << 17) /* results */
typedef struct copy_task {
  double *dst;
  const double *src;
  size_t n;
} copy_task;

static void copy_part(void *arg, size_t p) {
  copy_task *t = arg;
  const size_t lo = p * COPY_PART,
               hi = lo + COPY_PART < t->n ? lo + COPY_PART : t->n;
  memcpy(t->dst + lo, t->src + lo, (hi - lo) * sizeof *t->dst);
}

clphmm_status cph_engine_compute(cph_engine *ctx, const clphmm_batch *batches,
                                 size_t n_batches, double *out) {
  const double t0 = cph_now();
  size_t n_pairs, longest;
  uint64_t cells;
  /* (The count first: the sums below and the validation's ranges are
   * sized by it.) */
  clphmm_status rc = cph_validate_batch_count(batches, n_batches);
  if (rc)
    return rc;
  /* (Without memory for the batches' sums, chunks are cut read by read;
   * calloc checks the size's overflow, which 32-bit builds could reach.) */
  cph_batch_sum *sums =
      n_batches && batches ? calloc(n_batches, sizeof *sums) : NULL;
  rc = validate_shapes(ctx->pool, batches, n_batches, &n_pairs, &cells,
                       &longest, sums);
  if (!rc && n_pairs > 0 && !out)
    rc = cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "out is NULL");
  if (rc) {
    free(sums);
    return rc;
  }
  clphmm_stats before = ctx->stats;
  cph_trace_call(&ctx->trace, t0, n_pairs, (unsigned long long)cells);
  reset_stats(ctx);
  ctx->stats.prepare_seconds = cph_now() - t0;
  call c = {.ctx = ctx,
            .batches = batches,
            .n_batches = n_batches,
            .n_pairs = n_pairs,
            .sums = sums};
  c.results = malloc((n_pairs ? n_pairs : 1) * sizeof *c.results);
  if (!c.results)
    rc = cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for %zu results",
                   n_pairs);
  ctx->chunk_div = 1;
  if (!rc)
    rc = plan_double_first(&c, longest);
  if (!rc)
    rc = main_pass(&c, cells, 1);
  if (!rc)
    rc = cph_call_rescue_pass(&c);
  if (!rc)
    rc = check_pass(&c);
  if (rc)
    cph_call_drain(ctx);
  if (!rc) {
    if (ctx->first_auto)
      cph_first_learn(&ctx->first_seen, &c.seen);
    const double t1 = cph_now();
    copy_task ct = {out, c.results, n_pairs};
    cph_pool_for(ctx->pool, (n_pairs + COPY_PART - 1) / COPY_PART, copy_part,
                 &ct);
    ctx->stats.pairs = n_pairs;
    ctx->stats.cells = cells;
    ctx->stats.finish_seconds += cph_now() - t1;
    ctx->stats.kernel_seconds = cph_spans_union_seconds(&ctx->kernel_spans);
    ctx->stats.wall_seconds = cph_now() - t0;
    cph_trace_host(&ctx->trace, "call", -1, t0);
  } else {
    ctx->stats = before;
  }
  free(c.results);
  free(c.rescue.p);
  free(c.exact.p);
  free(c.first.p);
  free(c.check.p);
  free(c.pieces.p);
  free(sums);
  return rc;
}

clphmm_status cph_engine_compute_shared(cph_engine *ctx, cph_share *sh,
                                        size_t me) {
  const double t0 = cph_now();
  clphmm_stats before = ctx->stats;
  /* The timeline's call is this engine's pass (its part of the cells is
   * not known yet: the call's are given). */
  cph_trace_call(&ctx->trace, t0, 0, (unsigned long long)sh->cells);
  reset_stats(ctx);
  call c = {.ctx = ctx,
            .batches = sh->batches,
            .n_batches = sh->n_batches,
            .results = sh->results,
            .sh = sh,
            .me = me};
  ctx->chunk_div = 1;
  clphmm_status rc = main_pass(&c, sh->cells, sh->parts);
  pthread_mutex_lock(&sh->lock);
  const int stop = sh->stop;
  pthread_mutex_unlock(&sh->lock);
  if (!rc && !stop)
    rc = cph_call_rescue_pass(&c);
  if (rc)
    cph_call_drain(ctx);
  if (!rc) {
    ctx->stats.kernel_seconds = cph_spans_union_seconds(&ctx->kernel_spans);
    ctx->stats.wall_seconds = cph_now() - t0;
  } else {
    ctx->stats = before;
  }
  free(c.rescue.p);
  free(c.exact.p);
  free(c.first.p);
  free(c.check.p);
  free(c.pieces.p);
  return rc;
}
