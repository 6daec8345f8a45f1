/* Finishing a collected chunk (engine/call.h): sums to log10 likelihoods
 * in the call's results, and the pairs to compute again (float mode's
 * double rescue, the exact pass, the CPU reference). */
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

clphmm_status cph_pair_list_add(pair_list *l, cph_pair pair) {
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
  return cph_pair_list_add(l, (cph_pair){jb->rd, jb->hp, jb->out});
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
clphmm_status cph_call_rescue_on_cpus(const call *c, const cph_pair *pairs,
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
clphmm_status cph_call_finish(call *c, const cph_slot *s, int pass) {
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
    st = cph_call_rescue_on_cpus(c, cpu, n_cpu);
    ctx->stats.cpu_pairs += n_cpu;
  }
  free(cpu);
  free(which);
  free(n_which);
  return st;
}
