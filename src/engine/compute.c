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
#include "engine/chunks.h"
#include "engine/context.h"
#include "engine/launch.h"
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
  /* A speculative double pass (speculate()) is in the rescue slot; when
   * it is finished, `want` marks the results it gives (by out index). */
  int speculated;
  const unsigned char *want;
  cph_pieces pieces;
  const cph_batch_sum *sums; /* per batch (chunks.h), or NULL */
  cph_share *sh;             /* a call split between engines, else NULL */
  size_t me;                 /* this engine's place in the share */
} call;

/* ---- finishing ------------------------------------------------------- */

/* A job's scaled final sum, widened to double; the scaled form's two
 * last-row sums combined with the read's weights, in double. */
static double job_sum(const cph_slot *s, const cph_job *jb) {
  const cph_stage *st = &s->stage;
  const double *w = (const double *)st->weights.ptr + 2 * jb->read;
  if (st->real_size == sizeof(double)) {
    const double *v = s->sums.ptr;
    return st->scaled ? w[0] * v[2 * (size_t)jb->slot] +
                            w[1] * v[2 * (size_t)jb->slot + 1]
                      : v[jb->slot];
  }
  const float *v = s->sums.ptr;
  return st->scaled ? w[0] * (double)v[2 * (size_t)jb->slot] +
                          w[1] * (double)v[2 * (size_t)jb->slot + 1]
                    : (double)v[jb->slot];
}

/* Whether the kernel stopped a job's float pass early (its mark: a
 * negative first sum; the weighted sum may be -0 when P_R underflows). */
static int job_stopped(const cph_slot *s, const cph_job *jb) {
  const cph_stage *st = &s->stage;
  return st->scaled && st->real_size == sizeof(float) &&
         ((const float *)s->sums.ptr)[2 * (size_t)jb->slot] < 0.0f;
}

/* Whether a double pass stopped a job when its rows underflowed to zeros
 * (its mark: a first sum of -0, which no computed sum is). */
static int job_underflowed(const cph_slot *s, const cph_job *jb) {
  const cph_stage *st = &s->stage;
  if (st->real_size != sizeof(double))
    return 0;
  const double v =
      ((const double *)s->sums.ptr)[(st->scaled ? 2 : 1) * (size_t)jb->slot];
  return v == 0.0 && signbit(v);
}

/* GKL's double computation of one pair with the CPU reference. */
static clphmm_status rescue_on_cpu(const cph_pair *p, double *results) {
  double s;
  clphmm_status st =
      cph_reference_pair_double(p->read, p->hap, CPH_GKL_DOUBLE, &s);
  if (!st)
    results[p->out] = cph_log10_double(s);
  return st;
}

/* Whether a device's double rescue sum stands. The scaled form's is
 * GKL's double computation unless its scaled values overflowed (the sum is
 * then not finite: extreme quality jumps, insertion and deletion qualities
 * both 0), its weights lost precision (below the normal range), or the sum
 * itself comes near double's subnormal range (a likelihood below about
 * 1e-600): GKL's own cells are subnormal there and keep only that range's
 * absolute precision, so its result depends on its operation order (a
 * test pair's sum was 2 units of the smallest subnormal in GKL's order, 1
 * in the scaled form's: -630.056 against -630.357 in log10). Those pairs
 * are computed again in GKL's order: the exact pass, or the CPU reference
 * where the engine has no exact set. From 2^-990 up, the cells that carry
 * the sum are at least 2^32 above the subnormal range. */
#define RESCUE_MIN_SUM 0x1p-990
static int rescue_sum_ok(const cph_slot *s, const cph_job *jb, double sum) {
  const double *w = (const double *)s->stage.weights.ptr + 2 * jb->read;
  return !s->stage.scaled || (isfinite(sum) && sum >= RESCUE_MIN_SUM &&
                              w[0] >= DBL_MIN && w[1] >= DBL_MIN);
}

/* Finishing runs on the pool in parts of this many jobs (by 8,192, a
 * chunk of the HaplotypeCaller-like mix was 15 parts for 16 threads). */
#define FINISH_PART 2048
/* A float pass's pair to rescue that goes straight to the exact pass
 * (see finish), marked in its job index. */
#define TO_EXACT ((size_t)1 << (sizeof(size_t) * CHAR_BIT - 1))

typedef struct finish_task {
  call *c;
  const cph_slot *s;
  int pass;   /* PASS_* */
  int direct; /* float pass: stopped pairs go to the exact pass */
  /* Per part: rescue candidates found (float pass) or sums that do not
   * stand (rescue and exact passes), as job indices. */
  size_t *which, *n_which;
  size_t *n_exit;         /* per part: pairs the early exit stopped */
  size_t *n_under;        /* per part: pairs stopped on rows of zeros */
  cph_first_counts *seen; /* per part, float mode's first and check passes */
} finish_task;

static void finish_part(void *arg, size_t part) {
  finish_task *t = arg;
  const cph_stage *st = &t->s->stage;
  const size_t lo = part * FINISH_PART, hi = lo + FINISH_PART < st->n_jobs
                                                 ? lo + FINISH_PART
                                                 : st->n_jobs;
  const int dbl_mode = t->c->ctx->precision == CLPHMM_PRECISION_DOUBLE;
  size_t nw = 0, ne = 0, nu = 0;
  for (size_t i = lo; i < hi; i++) {
    const cph_job *jb = &st->jobs[i];
    if (t->c->want && !t->c->want[jb->out])
      continue; /* a speculative pass: the float result stands */
    const double sum = job_sum(t->s, jb);
    nu += job_underflowed(t->s, jb);
    if (t->pass == PASS_RESCUE || t->pass == PASS_EXACT) {
      if (rescue_sum_ok(t->s, jb, sum))
        t->c->results[jb->out] = cph_log10_double(sum);
      else
        t->which[lo + nw++] = i;
    } else if (dbl_mode) {
      t->c->results[jb->out] = cph_log10_double(sum);
    } else {
      /* Float: the main pass, or the check of double-first pairs, whose
       * double results stand where GKL would rescue them (listed; never
       * direct) and are replaced by their float results elsewhere. */
      const float f = (float)sum;
      const int stopped = job_stopped(t->s, jb);
      ne += stopped;
      const int direct = stopped && t->direct &&
                         (uint64_t)jb->R * jb->H >= t->c->ctx->exact_direct;
      cph_first_count(&t->seen[part], jb->R, cph_needs_rescue(f));
      if (cph_needs_rescue(f))
        t->which[lo + nw++] = i | (direct ? TO_EXACT : 0);
      else
        t->c->results[jb->out] = cph_log10_float(f);
    }
  }
  t->n_which[part] = nw;
  t->n_exit[part] = ne;
  t->n_under[part] = nu;
}

static clphmm_status list_add_pair(pair_list *l, cph_pair pair) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 256;
    cph_pair *p = realloc(l->p, cap * sizeof *p);
    if (!p)
      return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to rescue pairs");
    l->p = p;
    l->cap = cap;
  }
  l->p[l->n++] = pair;
  return CLPHMM_SUCCESS;
}

static clphmm_status list_add(pair_list *l, const cph_job *jb) {
  return list_add_pair(l, (cph_pair){jb->rd, jb->hp, jb->out});
}

typedef struct cpu_rescue_task {
  const call *c;
  const cph_pair *pairs;
  size_t n, part;
  clphmm_status *status;
} cpu_rescue_task;

static void cpu_rescue_part(void *arg, size_t p) {
  cpu_rescue_task *t = arg;
  const size_t lo = p * t->part, hi = lo + t->part < t->n ? lo + t->part : t->n;
  clphmm_status st = CLPHMM_SUCCESS;
  for (size_t i = lo; i < hi && !st; i++)
    st = rescue_on_cpu(&t->pairs[i], t->c->results);
  t->status[p] = st;
}

/* GKL's double computation of `n` pairs with the CPU reference, on the
 * pool (a pair or few per task: long pairs take milliseconds each). */
static clphmm_status rescue_on_cpus(const call *c, const cph_pair *pairs,
                                    size_t n) {
  const size_t part = n >= 64 ? 16 : 1, parts = (n + part - 1) / part;
  clphmm_status *status = calloc(parts ? parts : 1, sizeof *status);
  if (!status)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to rescue");
  cpu_rescue_task t = {c, pairs, n, part, status};
  cph_pool_for(c->ctx->pool, parts, cpu_rescue_part, &t);
  clphmm_status st = CLPHMM_SUCCESS;
  for (size_t p = 0; p < parts && !st; p++)
    st = status[p];
  free(status);
  /* (A failure's message was set on a pool thread: the CPU reference
   * fails only on absurd sizes, which validation already refused.) */
  return st ? cph_error(st, "the double rescue on the CPU failed") : st;
}

/* Results of a collected chunk; in job order, the pairs to rescue (float
 * pass) or whose sums do not stand (rescue pass: to the exact pass where
 * the engine has one, else to the CPU reference; exact pass: a guard, as
 * its unscaled sums always stand, to the CPU reference). */
static clphmm_status finish(call *c, const cph_slot *s, int pass) {
  const size_t n = s->stage.n_jobs, parts = (n + FINISH_PART - 1) / FINISH_PART;
  if (n == 0)
    return CLPHMM_SUCCESS;
  size_t *which = malloc(n * sizeof *which);
  size_t *n_which = calloc(3 * parts, sizeof *n_which);
  cph_first_counts *seen = calloc(parts, sizeof *seen);
  clphmm_status st =
      which && n_which && seen
          ? CLPHMM_SUCCESS
          : cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for results");
  cph_engine *ctx = c->ctx;
  /* Pairs whose float pass the bound stopped go straight to the exact
   * pass, skipping the rescue's scaled form: both are GKL's double
   * computation, the exact pass to the bit. Only long pairs stop (after a
   * round of tiles, their likelihood proven below 1e-64 already), and
   * launches of long pairs last as long as their largest pair, whose
   * steps cost about as much in either form: on the H100 the long suite's
   * rescue, exact pass and whole double pass took 90.4, 90.3 and 90.7 ms,
   * each waiting on the same 4e8-cell pair, which underflows and needs
   * the exact pass anyway. Without the stopped pairs the rescue took 4 ms
   * and the exact pass 99 (bench/results, env-ab). Only pairs of at least
   * CPH_EXACT_DIRECT_CELLS (16.7M: 4 kb x 4 kb) go so: smaller ones mostly
   * stand in the rescue's faster form, and the exact pass's form of all
   * of them cost the peak suite at L = 2048 (pairs of 4.2M cells) 9% on
   * the H200 (8.8 against 8.0 ms); the long suite in float took 116.0 ms
   * with the bound, 114.6 with every stopped pair, 126 from 2^26 cells on
   * and 184 with none. (Not where a speculative pass already holds the
   * rescue's sums.) */
  const int direct = pass == PASS_MAIN && ctx->exact_direct && !c->speculated &&
                     ctx->dev.info.has_fp64 && ctx->variants[CPH_SET_EXACT].n;
  finish_task t = {c,
                   s,
                   pass,
                   direct,
                   which,
                   n_which,
                   n_which + parts,
                   n_which + 2 * parts,
                   seen};
  if (!st)
    cph_pool_for(ctx->pool, parts, finish_part, &t);
  for (size_t p = 0; p < parts && !st; p++) {
    ctx->stats.early_exits += t.n_exit[p];
    ctx->stats.underflow_stops += t.n_under[p];
    cph_first_add(&c->seen, &seen[p]);
  }
  free(seen);
  const int to_cpu = pass == PASS_EXACT ||
                     (pass == PASS_RESCUE && !ctx->variants[CPH_SET_EXACT].n);
  size_t n_cpu = 0;
  cph_pair *cpu = NULL;
  if (!st && to_cpu) {
    for (size_t p = 0; p < parts; p++)
      n_cpu += n_which[p];
    cpu = n_cpu ? malloc(n_cpu * sizeof *cpu) : NULL;
    if (n_cpu && !cpu)
      st = cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to rescue pairs");
    n_cpu = 0;
  }
  for (size_t p = 0; p < parts && !st; p++) {
    if (pass == PASS_CHECK) { /* (their double results stand) */
      c->check_kept += n_which[p];
      continue;
    }
    for (size_t i = 0; i < n_which[p] && !st; i++) {
      const size_t w = which[p * FINISH_PART + i];
      const cph_job *jb = &s->stage.jobs[w & ~TO_EXACT];
      ctx->stats.exact_direct += (w & TO_EXACT) != 0;
      if (to_cpu)
        cpu[n_cpu++] = (cph_pair){jb->rd, jb->hp, jb->out};
      else
        st = list_add(
            pass == PASS_MAIN && !(w & TO_EXACT) ? &c->rescue : &c->exact, jb);
    }
  }
  if (!st && n_cpu) {
    st = rescue_on_cpus(c, cpu, n_cpu);
    ctx->stats.cpu_pairs += n_cpu;
  }
  free(cpu);
  free(which);
  free(n_which);
  return st;
}

/* ---- the pipeline ---------------------------------------------------- */

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
static clphmm_status submit_chunk(cph_engine *ctx, cph_slot *s) {
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
static clphmm_status start_chunk(call *c, cph_slot *s, cph_devset *d, int set,
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
    rc = submit_chunk(ctx, s);
  ctx->stats.chunks++;
  return rc;
}

static clphmm_status end_chunk(call *c, cph_slot *s, int pass) {
  c->ctx->alloc_failed = 0;
  const double tw = cph_now();
  clphmm_status rc = cph_collect(c->ctx, s);
  cph_trace_host(&c->ctx->trace, "wait", (int)(s - c->ctx->slots), tw);
  const double t0 = cph_now();
  if (!rc)
    rc = finish(c, s, pass);
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
static void drain(cph_engine *ctx) {
  cph_engine_finish(ctx);
  for (int i = 0; i < CPH_SLOTS; i++)
    cph_slot_abandon(&ctx->slots[i]);
}

/* Whether a failed chunk is retried smaller: an allocation failed, and the
 * chunk has more than one read (one read against its haplotypes, or one
 * rescue pair, is the smallest piece of work). Then everything in flight
 * is waited for and every buffer released. */
static int can_retry(cph_engine *ctx, clphmm_status rc, size_t n_pieces,
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

/* After can_retry: release the buffers and make chunks smaller. */
static void shrink(cph_engine *ctx) {
  cph_engine_release(ctx);
  ctx->chunk_div = ctx->chunk_div ? 2 * ctx->chunk_div : 2;
  ctx->diag.alloc_retries++;
}

static clphmm_status rescue_some(call *c, int flush);
static int slot_pass(const cph_slot *s);

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
 * passes' commands taking turns did: submit_both.) */
static int speculates(const call *c, const cph_cursor *cur, uint64_t cells) {
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
 * submitted yet); submit_both then enqueues both. */
static void speculate(call *c, size_t n_pieces, const cph_slot *float_slot) {
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
  if (!start_chunk(c, s, d, CPH_SET_DOUBLE, &src, 1)) {
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
static clphmm_status submit_both(call *c, cph_slot *f) {
  cph_engine *ctx = c->ctx;
  cph_slot *d = &ctx->slots[CPH_RESCUE_SLOT];
  if (!c->speculated)
    return submit_chunk(ctx, f);
  if (d->d == f->d) {
    /* One queue and one set of device buffers (no side queue): one pass
     * after the other. */
    const clphmm_status rc = submit_chunk(ctx, f);
    if (rc || submit_chunk(ctx, d)) {
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
  return submit_chunk(ctx, f);
}

/* After the float chunk's finish: the speculative pass's results for the
 * pairs it found to rescue (their sums that do not stand go on to the
 * exact pass, as in the rescue). */
static clphmm_status end_speculation(call *c) {
  cph_engine *ctx = c->ctx;
  const double t0 = cph_now();
  unsigned char *want = calloc(c->n_pairs ? c->n_pairs : 1, 1);
  if (!want)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to rescue pairs");
  for (size_t i = 0; i < c->rescue.n; i++)
    want[c->rescue.p[i].out] = 1;
  c->want = want;
  cph_later_weights(&ctx->slots[CPH_RESCUE_SLOT], want);
  clphmm_status rc = end_chunk(c, &ctx->slots[CPH_RESCUE_SLOT], PASS_RESCUE);
  c->want = NULL;
  free(want);
  c->speculated = 0;
  if (!rc)
    c->rescue.done = c->rescue.n;
  ctx->stats.rescue_seconds += cph_now() - t0;
  return rc;
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
     * before either pass is submitted (submit_both). */
    const int small_call = k == 0 && speculates(c, &cur, cells);
    rc = start_chunk(c, s, &ctx->d, set,
                     &(chunk_src){c->pieces.p, n, NULL, 0, NULL, NULL},
                     small_call);
    if (!rc && small_call) {
      small = 1;
      speculate(c, n, s);
      rc = submit_both(c, s);
    }
    if (rc && can_retry(ctx, rc, n, c->pieces.p)) {
      /* Finish what is in flight, then retry smaller. */
      cph_slot_abandon(s);
      rc = prev ? end_chunk(c, prev, PASS_MAIN) : CLPHMM_SUCCESS;
      cph_slot *rs = &ctx->slots[CPH_RESCUE_SLOT];
      if (!rc && rs->active)
        rc = end_chunk(c, rs, slot_pass(rs));
      if (rc)
        break;
      prev = NULL;
      shrink(ctx);
      cur = at;
      chunk_bounds(ctx, cells, pairs, parts, &cur);
      full = cur;
      continue;
    }
    if (!rc && prev)
      rc = end_chunk(c, prev, PASS_MAIN);
    /* (Before the last chunk, the rescue pairs of all others go: only its
     * own are left for the end, when the device waits for them.) */
    const double tr = cph_now();
    if (!rc && ctx->dev.info.has_fp64 && !dbl)
      rc = rescue_some(c, !c->sh && cph_cursor_at_end(&cur));
    cph_trace_host(&ctx->trace, "rescue-some", -1, tr);
    prev = rc ? NULL : s;
  }
  if (!rc && prev)
    rc = end_chunk(c, prev, PASS_MAIN);
  if (!rc && small)
    ctx->spec_left = c->rescue.n          ? CPH_SPEC_AFTER
                     : ctx->spec_left > 0 ? ctx->spec_left - 1
                                          : 0;
  if (!rc && c->speculated)
    rc = end_speculation(c);
  return rc;
}

/* ---- the rescue ------------------------------------------------------ */

/* The double rescue of the collected pairs: on the device in chunks when
 * it has double precision, else with the CPU reference; pairs whose scaled
 * double sum does not stand then go to the exact pass (or, without an
 * exact set, to the CPU reference). */

/* The pass of the chunk in the rescue slot. */
static int slot_pass(const cph_slot *s) {
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
 * leaves the pairs for the end (rescue_final). */
static clphmm_status rescue_some(call *c, int flush) {
  cph_engine *ctx = c->ctx;
  pair_list *l = &c->rescue;
  cph_slot *s = &ctx->slots[CPH_RESCUE_SLOT];
  const size_t want = flush ? 1 : ctx->rescue_min;
  if (l->n - l->done < want)
    return CLPHMM_SUCCESS;
  const double t0 = cph_now();
  clphmm_status rc = s->active ? end_chunk(c, s, slot_pass(s)) : CLPHMM_SUCCESS;
  const chunk_src src = rescue_src(ctx, l);
  if (!rc && start_chunk(c, s, &ctx->d, CPH_SET_DOUBLE, &src, 0)) {
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
static clphmm_status rescue_final(call *c, pair_list *l, int set) {
  cph_engine *ctx = c->ctx;
  cph_slot *const r = &ctx->slots[CPH_RESCUE_SLOT], *const z = &ctx->slots[0];
  cph_slot *pend = r->active ? r : NULL; /* (in flight) */
  clphmm_status rc = CLPHMM_SUCCESS;
  while (!rc && l->done < l->n) {
    const double t0 = cph_now();
    cph_slot *s = pend == r ? z : r;
    const chunk_src src = rescue_src(ctx, l);
    const clphmm_status was = start_chunk(c, s, &ctx->d, set, &src, 0);
    const int retry = was && can_retry(ctx, was, src.n_pairs, NULL);
    if (was) {
      /* (Queued commands may still read the slot's host buffers.) */
      cph_engine_finish(ctx);
      cph_slot_abandon(s);
    } else {
      l->done += src.n_pairs;
    }
    rc = pend ? end_chunk(c, pend, slot_pass(pend)) : CLPHMM_SUCCESS;
    pend = was ? NULL : s;
    ctx->stats.rescue_seconds += cph_now() - t0;
    if (!rc && was && !retry)
      return was;
    if (!rc && was)
      shrink(ctx);
  }
  if (pend && !rc) {
    const double t0 = cph_now();
    rc = end_chunk(c, pend, slot_pass(pend));
    ctx->stats.rescue_seconds += cph_now() - t0;
  }
  return rc;
}

/* The rescue pass's end, then the exact pass over the pairs it left
 * (the exact pass finds none that fail: its sums are GKL's). */
static clphmm_status rescue_pass(call *c) {
  cph_engine *ctx = c->ctx;
  if (c->rescue.n == 0 && c->exact.n == 0)
    return CLPHMM_SUCCESS;
  /* (The exact pass may hold pairs sent straight there: finish.) */
  ctx->stats.rescued_pairs =
      c->rescue.n + ctx->stats.exact_direct + c->first_exact;
  if (!ctx->dev.info.has_fp64) {
    const double t0 = cph_now();
    clphmm_status rc = rescue_on_cpus(c, c->rescue.p, c->rescue.n);
    ctx->stats.cpu_pairs += c->rescue.n;
    ctx->stats.rescue_seconds += cph_now() - t0;
    return rc;
  }
  clphmm_status rc = rescue_final(c, &c->rescue, CPH_SET_DOUBLE);
  if (!rc && c->exact.n) {
    ctx->stats.exact_pairs = c->exact.n;
    rc = rescue_final(c, &c->exact, CPH_SET_EXACT);
    if (rc == CLPHMM_ERROR_BUILD_FAILED) {
      /* Its kernels do not build here: the CPU reference, as before the
       * exact pass existed. */
      drain(ctx);
      const size_t left = c->exact.n - c->exact.done;
      cph_diag_note(&ctx->diag,
                    "the exact pass's kernels did not build: %zu pairs on "
                    "the CPU reference",
                    left);
      rc = rescue_on_cpus(c, c->exact.p + c->exact.done, left);
      ctx->stats.cpu_pairs += left;
      ctx->stats.exact_pairs -= left;
    }
  }
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
      st = list_add_pair(&c->first, pair);
      if (!st)
        st = list_add_pair(to_exact ? &c->exact : &c->rescue, pair);
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
      rc = list_add_pair(&c->check, c->first.p[i]);
  }
  free(proven);
  ctx->stats.double_first_checked = c->check.n;
  if (!rc)
    rc = rescue_final(c, &c->check, CPH_SET_FLOAT);
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
  memset(&ctx->stats, 0, sizeof ctx->stats);
  cph_spans_clear(&ctx->kernel_spans);
  ctx->kernel_events = 0;
  ctx->stats.n_bins = cph_plan_count(vs);
  for (size_t i = 0; i < cph_plan_count(vs); i++) {
    const cph_variant *v = &vs->v[i];
    clphmm_bin_stats *b = &ctx->stats.bins[i];
    b->max_rows = v->seq ? UINT32_MAX : v->small ? 0 : cph_variant_rows(v);
    cph_variant_name(v, b->variant, sizeof b->variant);
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
  const size_t ranges = (n + SHAPE_RANGE - 1) / SHAPE_RANGE;
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
  /* (Without memory for the batches' sums, chunks are cut read by read;
   * calloc checks the size's overflow, which 32-bit builds could reach.) */
  cph_batch_sum *sums =
      n_batches && batches ? calloc(n_batches, sizeof *sums) : NULL;
  clphmm_status rc = validate_shapes(ctx->pool, batches, n_batches, &n_pairs,
                                     &cells, &longest, sums);
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
    rc = rescue_pass(&c);
  if (!rc)
    rc = check_pass(&c);
  if (rc)
    drain(ctx);
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
    rc = rescue_pass(&c);
  if (rc)
    drain(ctx);
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
