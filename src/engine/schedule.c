#include "engine/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "engine/context.h"

/* Boundary-row scratch allowed per launch of the multi-tile bin (also
 * bounded by the device's largest allocation). A launch cut short by it
 * runs after the one before has finished, the longest pairs of each alone
 * at its end: the double pass of the long suite (1,674 pairs of reads up
 * to 20 kb, slots of 22,000 double boundary columns: 1.2 GB) needs one. */
#define MAX_BOUND_BYTES ((uint64_t)1 << 32)

void cph_sched_release(const cph_bufctx *c, cph_sched *s) {
  cph_hostbuf_release(c, &s->pairs);
  cph_hostbuf_release(c, &s->groups);
  free(s->launches);
  free(s->keys);
  free(s->tmp);
  memset(s, 0, sizeof *s);
}

/* ---- order ----------------------------------------------------------- */

/* Sort key of a job: bin, tiles, the haplotype's words of steps (`q`:
 * cph_variant_steps / 4, which is all a work-group's pairs share; clamped
 * to their fields), then the job's index. (By haplotype length, the
 * HaplotypeCaller-like mix's 250-550 bases took two radix passes; its
 * words take one.) The direction of the tiles follows the
 * way the device hands out work-groups:
 * - GPUs start work-groups in order as compute units free up: the pairs of
 *   most tiles go first (`most_first`), so that the longest pairs do not
 *   finish last, alone on the device (on the H200 the double rescue of the
 *   long suite, reads of 1-20 kb, ran at 0.5 TCUPS where equal pairs of
 *   4 kb ran at 1.05).
 * - PoCL's CPU driver hands each thread a contiguous run of work-groups,
 *   a fixed share of those left (guided self-scheduling): the costliest
 *   must come last, in the small runs, or the first threads get the
 *   longest runs of the costliest work (most tiles first on the 16-core
 *   Xeon: 10s.in 2.4x slower in float, 2.7x in double). */
static uint64_t job_key(uint32_t bin, uint32_t tiles, uint32_t q, size_t j,
                        int most_first) {
  const uint64_t c = tiles < 0x3fff ? tiles : 0x3fff;
  const uint64_t t = most_first ? 0x3fff - c : c;
  const uint64_t h = q < 0x3fff ? q : 0x3fff;
  return (uint64_t)bin << 60 | t << 46 | h << 32 | (uint64_t)j;
}

/* A key's words of steps (job_key's q). */
static uint32_t key_words(uint64_t key) {
  return (uint32_t)(key >> 32 & 0x3fff);
}

/* Jobs are ordered on the pool in ranges of this many (by 16,384, a chunk
 * of the mix's 120,000 pairs was 8 ranges, and its sort no faster on 16
 * threads than on 4: 5.3 ms a call). */
#define ORDER_RANGE 4096

/* The pool's share of a stable radix sort of keys[0..n) by their upper 32
 * bits (the lower ones, job indices, are already in order), one byte per
 * pass, skipping bytes that no key changes: each range counts its digits,
 * the caller turns the counts into offsets, each range scatters. (One
 * single-threaded counting pass over a packed digit of bin, tiles and H,
 * 65,536 buckets, was tried in 73c13a5: in its one traced run on the
 * H100's host, a busy one, it took 0.95 ms per chunk of 58,000 keys, where
 * these passes took 0.36-0.6 ms in earlier runs; not kept.) */
typedef struct radix {
  uint64_t *src, *dst;
  size_t n, per, ranges;
  unsigned shift;
  size_t (*count)[256];
} radix;

static void radix_count(void *arg, size_t r) {
  radix *x = arg;
  const size_t lo = r * x->per, hi = lo + x->per < x->n ? lo + x->per : x->n;
  size_t *c = x->count[r];
  memset(c, 0, 256 * sizeof *c);
  for (size_t i = lo; i < hi; i++)
    c[(x->src[i] >> x->shift) & 0xff]++;
}

static void radix_scatter(void *arg, size_t r) {
  radix *x = arg;
  const size_t lo = r * x->per, hi = lo + x->per < x->n ? lo + x->per : x->n;
  size_t *at = x->count[r];
  for (size_t i = lo; i < hi; i++)
    x->dst[at[(x->src[i] >> x->shift) & 0xff]++] = x->src[i];
}

/* The sort of keys[0..n) whose bits `changed` differ between keys (the
 * others are the same in all): the sorted keys are in `keys` or `tmp`,
 * whichever is returned; NULL: no memory. */
static uint64_t *sort_changed(cph_pool *pool, uint64_t *keys, uint64_t *tmp,
                              size_t n, uint64_t changed) {
  radix x = {keys, tmp, n, ORDER_RANGE, (n + ORDER_RANGE - 1) / ORDER_RANGE,
             0,    NULL};
  x.count = malloc((x.ranges ? x.ranges : 1) * sizeof *x.count);
  if (!x.count)
    return NULL;
  for (x.shift = 32; x.shift < 64; x.shift += 8) {
    if (!((changed >> x.shift) & 0xff))
      continue;
    cph_pool_for(pool, x.ranges, radix_count, &x);
    size_t at = 0; /* digit by digit, range by range */
    for (unsigned d = 0; d < 256; d++)
      for (size_t r = 0; r < x.ranges; r++) {
        const size_t c = x.count[r][d];
        x.count[r][d] = at;
        at += c;
      }
    cph_pool_for(pool, x.ranges, radix_scatter, &x);
    uint64_t *t = x.src;
    x.src = x.dst;
    x.dst = t;
  }
  free(x.count);
  return x.src;
}

int cph_sort_keys(cph_pool *pool, uint64_t *keys, uint64_t *tmp, size_t n) {
  if (n < 2)
    return 1;
  uint64_t all_and = ~(uint64_t)0, all_or = 0;
  for (size_t i = 0; i < n; i++) {
    all_and &= keys[i];
    all_or |= keys[i];
  }
  const uint64_t *sorted = sort_changed(pool, keys, tmp, n, all_and ^ all_or);
  if (sorted && sorted != keys)
    memcpy(keys, sorted, n * sizeof *keys);
  return sorted != NULL;
}

static size_t key_job(uint64_t key) {
  return (size_t)(key & 0xffffffffu);
}

static uint32_t key_bin(uint64_t key) {
  return (uint32_t)(key >> 60);
}

/* Keys are made on the pool in two steps: each job's bin (kept in its slot
 * field until the launches are planned), then, with the kernels of the
 * bins built, the keys with tiles counted for the kernel that will run
 * them (it may be a simpler fallback variant). */
typedef struct key_task {
  const cph_variant_set *vs;
  cph_job *jobs;
  uint64_t *keys;
  size_t n;
  uint32_t *used;                        /* per range: bit b = bin b used */
  uint64_t (*count)[CPH_MAX_VARIANTS];   /* per range: jobs per bin */
  uint32_t (*longest)[CPH_MAX_VARIANTS]; /* per range: longest read */
  int small_bin; /* every job's bin (the small-call variant), -1: none */
  uint8_t to[CPH_MAX_VARIANTS]; /* key_range moves bin b's jobs to to[b] */
  uint64_t *n_long; /* per range: jobs binned on the long-read variant */
  uint32_t seq_bin; /* the long-read variant's index (else none) */
  uint64_t fill;    /* jobs on it that fill the device (engine seq_fill) */
  int most_first;   /* job_key's order of tiles */
  uint32_t rows[CPH_MAX_VARIANTS];
  const cph_variant *v[CPH_MAX_VARIANTS]; /* the bins' kernels' variants */
  uint64_t big_cells;                     /* (engine exit_cells) */
  uint32_t *big;    /* per range: bit b = bin b holds a pair that large */
  uint64_t *and_or; /* per range: the AND and the OR of its keys */
} key_task;

static void bin_range(void *arg, size_t r) {
  key_task *t = arg;
  const size_t lo = r * ORDER_RANGE,
               hi = lo + ORDER_RANGE < t->n ? lo + ORDER_RANGE : t->n;
  uint32_t last_R = 0, bin = 0, used = 0;
  uint64_t n_long = 0, *count = t->count[r];
  uint32_t *longest = t->longest[r];
  for (size_t i = lo; i < hi; i++) {
    if (i == lo || t->jobs[i].R != last_R) { /* a read's pairs come together */
      last_R = t->jobs[i].R;
      bin = t->small_bin >= 0 ? (uint32_t)t->small_bin
                              : (uint32_t)cph_plan_bin(t->vs, last_R);
    }
    t->jobs[i].slot = bin;
    used |= 1u << bin;
    count[bin]++;
    if (last_R > longest[bin])
      longest[bin] = last_R;
    n_long += bin == t->seq_bin;
  }
  t->used[r] = used;
  t->n_long[r] = n_long;
}

static void key_range(void *arg, size_t r) {
  key_task *t = arg;
  const size_t lo = r * ORDER_RANGE,
               hi = lo + ORDER_RANGE < t->n ? lo + ORDER_RANGE : t->n;
  uint32_t big = 0;
  uint64_t all_and = ~(uint64_t)0, all_or = 0;
  for (size_t i = lo; i < hi; i++) {
    cph_job *jb = &t->jobs[i];
    jb->slot = t->to[jb->slot];
    const uint32_t rows = t->rows[jb->slot];
    const uint64_t key =
        job_key(jb->slot, (jb->R + rows - 1) / rows,
                cph_variant_steps(t->v[jb->slot], jb->H) / 4, i, t->most_first);
    t->keys[i] = key;
    all_and &= key;
    all_or |= key;
    if ((uint64_t)jb->R * jb->H >= t->big_cells)
      big |= 1u << jb->slot;
  }
  t->big[r] = big;
  t->and_or[2 * r] = all_and;
  t->and_or[2 * r + 1] = all_or;
}

/* The small-call variant's index when the chunk runs on it, else -1. */
static int small_bin(const cph_engine *ctx, const cph_variant_set *vs,
                     const cph_stage *stage) {
  const unsigned cu = ctx->dev.info.compute_units;
  if (!cph_plan_small(vs, stage->n_jobs, 0, cu))
    return -1;
  uint64_t cells = 0;
  for (size_t i = 0; i < stage->n_jobs; i++)
    cells += (uint64_t)stage->jobs[i].R * stage->jobs[i].H;
  return cph_plan_small(vs, stage->n_jobs, cells, cu) ? (int)vs->n : -1;
}

/* The jobs binned on the long-read variant `seq` go to bin `to` (too few
 * to fill the device with it: cph_plan_bin_long), moved by key_range;
 * returns the bins used then. */
static uint32_t rebin_long(key_task *t, uint32_t seq, uint32_t to,
                           uint32_t used) {
  t->to[seq] = (uint8_t)to;
  return (used & ~(1u << seq)) | 1u << to;
}

/* The bins whose jobs key_range moves to the small-call variant (in t->to:
 * cph_plan_to_small, for a chunk that is not all on it already); returns
 * the bins used then. */
static uint32_t to_small(const cph_engine *ctx, const cph_variant_set *vs,
                         key_task *t, const uint64_t *count,
                         const uint32_t *longest, uint32_t used) {
  if (t->small_bin >= 0 || !ctx->small_bins)
    return used;
  const unsigned cu = ctx->dev.info.compute_units;
  uint64_t moved = 0;
  for (size_t b = 0; b < vs->n; b++)
    if ((used >> b & 1) && cph_plan_to_small(vs, b, count[b], longest[b], moved,
                                             cu, ctx->small_bins)) {
      for (size_t c = 0; c < CPH_MAX_VARIANTS; c++)
        if (t->to[c] == b) /* (bin b's own jobs and any rebinned to it) */
          t->to[c] = (uint8_t)vs->n;
      moved += count[b];
      used = (used & ~(1u << b)) | 1u << vs->n;
    }
  return used;
}

/* Build the kernels of the bins the jobs use, then sort the jobs. */
static clphmm_status order_jobs(cph_engine *ctx, int set,
                                const cph_stage *stage, cph_sched *s,
                                const cph_kernel **kernels) {
  const size_t n = stage->n_jobs, ranges = (n + ORDER_RANGE - 1) / ORDER_RANGE;
  if (n > s->cap_keys) {
    free(s->keys);
    free(s->tmp);
    s->keys = malloc(n * sizeof *s->keys);
    s->tmp = malloc(n * sizeof *s->tmp);
    s->cap_keys = s->keys && s->tmp ? n : 0;
  }
  key_task t = {.vs = &ctx->variants[set],
                .jobs = stage->jobs,
                .keys = s->keys,
                .n = n,
                .small_bin = small_bin(ctx, &ctx->variants[set], stage),
                .seq_bin = UINT32_MAX,
                .fill = ctx->seq_fill,
                .most_first = ctx->dev.info.type != CLPHMM_DEVICE_CPU,
                .big_cells = ctx->exit_cells};
  const cph_variant_set *vs = &ctx->variants[set];
  if (vs->n && vs->v[vs->n - 1].seq)
    t.seq_bin = (uint32_t)(vs->n - 1);
  t.used = calloc(ranges ? ranges : 1, sizeof *t.used);
  t.n_long = calloc(ranges ? ranges : 1, sizeof *t.n_long);
  t.count = calloc(ranges ? ranges : 1, sizeof *t.count);
  t.longest = calloc(ranges ? ranges : 1, sizeof *t.longest);
  if (!t.used || !t.n_long || !t.count || !t.longest || (n && !s->cap_keys)) {
    free(t.used);
    free(t.n_long);
    free(t.count);
    free(t.longest);
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to order %zu pairs",
                     n);
  }
  cph_pool_for(ctx->pool, ranges, bin_range, &t);
  uint32_t used = 0;
  uint64_t n_long = 0, count[CPH_MAX_VARIANTS] = {0};
  uint32_t longest[CPH_MAX_VARIANTS] = {0};
  for (size_t r = 0; r < ranges; r++) {
    used |= t.used[r];
    n_long += t.n_long[r];
    for (size_t b = 0; b < CPH_MAX_VARIANTS; b++) {
      count[b] += t.count[r][b];
      if (t.longest[r][b] > longest[b])
        longest[b] = t.longest[r][b];
    }
  }
  free(t.used);
  free(t.n_long);
  free(t.count);
  free(t.longest);
  for (size_t b = 0; b < CPH_MAX_VARIANTS; b++)
    t.to[b] = (uint8_t)b;
  if (n_long && n_long < t.fill) {
    const uint32_t to = (uint32_t)cph_plan_bin_long(vs);
    used = rebin_long(&t, t.seq_bin, to, used);
    count[to] += count[t.seq_bin];
    count[t.seq_bin] = 0;
    if (longest[t.seq_bin] > longest[to])
      longest[to] = longest[t.seq_bin];
  }
  used = to_small(ctx, vs, &t, count, longest, used);
  for (size_t b = 0; b < CPH_MAX_VARIANTS; b++) {
    if (!(used >> b & 1))
      continue;
    clphmm_status st = cph_context_kernel(ctx, b, set, &kernels[b]);
    if (st)
      return st;
    t.rows[b] = cph_variant_rows(&kernels[b]->variant);
    t.v[b] = &kernels[b]->variant;
  }
  t.big = calloc(ranges ? ranges : 1, sizeof *t.big);
  t.and_or = malloc((ranges ? ranges : 1) * 2 * sizeof *t.and_or);
  if (!t.big || !t.and_or) {
    free(t.big);
    free(t.and_or);
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to order %zu pairs",
                     n);
  }
  cph_pool_for(ctx->pool, ranges, key_range, &t);
  s->exit_bins = 0;
  uint64_t all_and = ~(uint64_t)0, all_or = 0;
  for (size_t r = 0; r < ranges; r++) {
    s->exit_bins |= t.big[r];
    all_and &= t.and_or[2 * r];
    all_or |= t.and_or[2 * r + 1];
  }
  free(t.big);
  free(t.and_or);
  if (n < 2) /* (in order; with none, keys may be NULL) */
    return CLPHMM_SUCCESS;
  const double t0 = cph_now();
  /* (The sorted keys stay where the last pass put them.) */
  uint64_t *sorted =
      sort_changed(ctx->pool, s->keys, s->tmp, n, all_and ^ all_or);
  cph_trace_host(&ctx->trace, "sort", -1, t0);
  if (!sorted)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to order %zu pairs",
                     n);
  if (sorted != s->keys) {
    s->tmp = s->keys;
    s->keys = sorted;
  }
  return CLPHMM_SUCCESS;
}

/* ---- launches -------------------------------------------------------- */

static uint32_t tiles_of(const cph_job *jb, const cph_variant *v) {
  const uint32_t rows = cph_variant_rows(v);
  return (jb->R + rows - 1) / rows;
}

/* Tile slots of a job on `v` when its launch runs concurrent tiles. */
static unsigned job_coop(const cph_engine *ctx, const cph_job *jb,
                         const cph_variant *v) {
  return cph_variant_coop(v, tiles_of(jb, v), ctx->max_coop);
}

/* Tile slots for the launch of keys[start..n) of a bin on `v`. Jobs are
 * sorted by tiles (job_key), so the jobs that would run with as many
 * slots as the first follow it; they share one launch, whatever their tile
 * counts (a work-group runs the rounds of its own pair: on the H200 the double
 * rescue of the long suite's 1,535 pairs took 68 launches of about 25 pairs
 * each, one per tile count, and ran at 0.06 TCUPS). */
static unsigned launch_coop(const cph_engine *ctx, const cph_stage *stage,
                            const uint64_t *keys, size_t start, size_t n,
                            const cph_variant *v) {
  const cph_job *first = &stage->jobs[key_job(keys[start])];
  const unsigned coop = job_coop(ctx, first, v);
  if (ctx->max_coop) /* CLPHMM_CONCURRENT_TILES */
    return coop;
  if (tiles_of(first, v) == 1)
    return 1;
  const uint64_t full =
      (uint64_t)CPH_FILL_PAIRS_PER_UNIT *
      (ctx->dev.info.compute_units ? ctx->dev.info.compute_units : 1) *
      cph_variant_pairs(v);
  size_t same = 0; /* pairs of this launch, at most */
  while (start + same < n && same < full &&
         job_coop(ctx, &stage->jobs[key_job(keys[start + same])], v) == coop)
    same++;
  return same < full ? coop : 1;
}

/* Work-groups per split group of pairs for the launch of keys[start..n)
 * with `coop` tile slots, and in *big the jobs from `start` on that split
 * (the largest: GPUs order jobs by tiles, most first). Only launches of
 * concurrent tiles (few long pairs) split: there a pair's rounds run one
 * after the other on one compute unit, and a launch lasts at least as
 * long as its largest pair. On the H100 the long suite's rescue, exact
 * pass and whole double pass each took 90 ms, waiting on the same 4.2e8
 * cells pair. A pair alone runs about 4 times as fast on 8 parts (2.6 on
 * 4, 1.3 on 2: the flags, the fences and the first slot's volatile reads
 * cost), while pairs that fill the device gain little (132 pairs of 8 kb x
 * 10 kb, one per compute unit: 1.13x on 4 parts) and many pairs lose (the
 * long suite with every pair split in 4: 81-102 ms per pass;
 * bench/results, exact-direct-experiments). So by default (split_parts 0)
 * only the pairs that hold more than a share of the launch's cells (its
 * cells per work-group the device runs at once, estimated as
 * CPH_SPLIT_GROUPS_PER_UNIT per compute unit) split, when the largest
 * holds at least CPH_SPLIT_MIN_EXCESS shares: on twice as many parts as
 * it holds shares, at most CPH_SPLIT_DEFAULT_PARTS and at most its rounds
 * of tiles (a launch whose pairs run one round never splits), fewer when the
 * split pairs' parts would exceed twice the work-groups the device runs
 * at once (at most 4 parts, or no limit on the parts of all split pairs,
 * measured the same within 1% on the long suite and its half). Nor does
 * a launch with float mode's early exit (bound_exit: launch_exit) split by
 * default: its long pairs mostly stop after their first rounds, which
 * parts cannot speed up (half the long suite: its float pass took 15.8 ms
 * split, 9.1 whole).
 * $CLPHMM_SPLIT forces its parts on every pair. A split pair needs its
 * parts on the device at once, so the device must hold more
 * work-groups than a pair has parts (cl/pairhmm.cl, SPLIT_Q), and only
 * GPUs split: PoCL may run a small launch's work-groups one after the
 * other on one thread, and a part then waits for a part that never starts
 * (CI hung so). */
static unsigned launch_split(const cph_engine *ctx, const cph_stage *stage,
                             const uint64_t *keys, size_t start, size_t n,
                             const cph_variant *v, unsigned coop,
                             int bound_exit, size_t *big) {
  const unsigned units = ctx->dev.info.compute_units;
  *big = n - start;
  if (coop < 2 || ctx->split_parts == 1 || units < 2 ||
      ctx->dev.info.type != CLPHMM_DEVICE_GPU)
    return 1;
  if (ctx->split_parts) /* $CLPHMM_SPLIT */
    return ctx->split_parts <= units ? ctx->split_parts : 1;
  if (bound_exit)
    return 1;
  uint64_t total = 0, most = 0;
  uint32_t tiles = 0;
  for (size_t i = start; i < n; i++) {
    const cph_job *jb = &stage->jobs[key_job(keys[i])];
    const uint64_t c = (uint64_t)jb->R * jb->H;
    const uint32_t t = tiles_of(jb, v);
    total += c;
    most = c > most ? c : most;
    tiles = t > tiles ? t : tiles;
  }
  /* A pair's parts run its rounds (coop tiles each): parts beyond the
   * rounds of the launch's longest read would idle, and pairs of one
   * round gain nothing from the split program's flags and fences (a
   * small call's double pass of 300 pairs of 150 x 512 on 32x4/128, two
   * tiles a pair: 148.8 us split in 8, 66.8 whole, on the H200). */
  const uint32_t rounds = (tiles + coop - 1) / coop;
  const uint64_t slots = (uint64_t)units * CPH_SPLIT_GROUPS_PER_UNIT,
                 share = total / slots;
  if (rounds < 2 || share == 0 || most < CPH_SPLIT_MIN_EXCESS * share)
    return 1;
  /* The jobs up to the last one above a share. */
  *big = 0;
  for (size_t i = start; i < n; i++) {
    const cph_job *jb = &stage->jobs[key_job(keys[i])];
    if ((uint64_t)jb->R * jb->H > share)
      *big = i - start + 1;
  }
  uint64_t parts = 2 * ((most + share - 1) / share);
  if (parts > CPH_SPLIT_DEFAULT_PARTS)
    parts = CPH_SPLIT_DEFAULT_PARTS;
  if (parts > rounds)
    parts = rounds;
  while (parts > 2 && *big * parts > 2 * slots)
    parts--;
  if (parts > units)
    parts = units;
  return parts > 1 ? (unsigned)parts : 1;
}

/* Whether a launch of float mode's first pass in bin `bin` gets the early
 * exit: where the bin's variant has it and the bin holds a pair of at
 * least ctx->exit_cells cells (sched->exit_bins, found while the keys are
 * made). The exit pays on long pairs only: a round's vote and the bound's
 * reads cost launches of concurrent tiles about 8% at L = 512 and 2048 on
 * the H200 (3.51 against 3.24 ms, 7.11 against 6.73 ms), where no pair or
 * 71 of 2,388 stopped. */
static int launch_exit(const cph_engine *ctx, int set, uint32_t bin,
                       const cph_sched *s) {
  return set == CPH_SET_FLOAT && (s->exit_bins >> bin & 1) &&
         cph_variant_exit(&ctx->variants[set].v[bin], 0) == 1;
}

/* Whether two variants have one shape: lanes, rows per lane, work-group,
 * the vector kernel, the long-read kernel (the same pair and group lists
 * serve both). */
static int same_shape(const cph_variant *a, const cph_variant *b) {
  return a->g == b->g && a->c == b->c && a->wg == b->wg && a->vec == b->vec &&
         a->seq == b->seq;
}

/* A launch's per-bin statistics index: bin `bin` in the context's own
 * precision's set, else none (-1). */
static int stats_bin(const cph_engine *ctx, int set, uint32_t bin) {
  const int own = ctx->precision == CLPHMM_PRECISION_DOUBLE ? CPH_SET_DOUBLE
                                                            : CPH_SET_FLOAT;
  return set == own ? (int)bin : -1;
}

/* Whether the launch of jobs keys[start .. end - 1] has at least the
 * engine's inline_cols cells per read row: its pairs' haplotypes are long
 * enough for the kernel to compute their rows (cph_engine_inline_rows).
 * From at most WIDE_SAMPLE of its jobs, evenly spaced: the choice changes
 * speed, not results, and reading every job (in key order, scattered in
 * memory) added milliseconds to the host's share of a large call. */
#define WIDE_SAMPLE 64
static int launch_wide(const cph_engine *ctx, const cph_stage *stage,
                       const uint64_t *keys, size_t start, size_t end) {
  if (end <= start)
    return 0;
  uint64_t rows = 0, cells = 0;
  const size_t step = (end - start + WIDE_SAMPLE - 1) / WIDE_SAMPLE;
  for (size_t i = start; i < end; i += step) {
    const cph_job *jb = &stage->jobs[key_job(keys[i])];
    rows += jb->R;
    cells += (uint64_t)jb->R * jb->H;
  }
  return rows && cells / rows >= ctx->inline_cols;
}

/* The program of a launch of base kernel k: with the exit (`exit`), with
 * split pairs (*split > 1), computing its rows (the small-call variant's
 * launches and `wide` ones, without the exit, when the device prepares the
 * chunk's rows: not `host_prep`). Where that flavour does not build, or built a
 * fallback of another shape or without split pairs, the launch runs on
 * the base program, unsplit (the exit and the rows only save time). */
static const cph_kernel *launch_kernel(cph_engine *ctx, int set, uint32_t bin,
                                       const cph_kernel *k, int exit,
                                       int host_prep, int wide,
                                       unsigned *split) {
  const int inl = !exit && !host_prep && cph_engine_inline_rows(ctx, k, wide);
  int flavor = (exit ? CPH_KF_EXIT : 0) | (*split > 1 ? CPH_KF_SPLIT : 0) |
               (inl ? CPH_KF_INLINE : 0);
  const cph_kernel *lk = k;
  if (!flavor)
    return k;
  /* (Without its own rows, where that program does not build: the split
   * pairs may.) */
  int failed = cph_context_kernel_as(ctx, bin, set, k, flavor, &lk) != 0;
  if (failed && inl && (flavor &= ~CPH_KF_INLINE))
    failed = cph_context_kernel_as(ctx, bin, set, k, flavor, &lk) != 0;
  if (failed || !flavor) {
    *split = 1;
    return k;
  }
  if (!same_shape(&lk->variant, &k->variant) ||
      (*split > 1 && !lk->variant.split)) {
    *split = 1;
    return k;
  }
  return lk;
}

/* End of the launch that starts at keys[start] with `coop` tile slots: as
 * many jobs as fit the cells per launch and the boundary scratch, and,
 * with concurrent tiles, would run with as many slots; a small call's
 * launch takes its pairs of fewer tiles too (they run in slots of the
 * first's, some idle), as one launch costs the host less than two (a
 * launch's enqueueing is about 7-14 us on the H200). */
static size_t launch_end(const cph_engine *ctx, const cph_stage *stage,
                         const uint64_t *keys, size_t n, size_t start,
                         const cph_variant *v, unsigned coop, unsigned split) {
  const uint64_t ppw = cph_variant_pairs(v) / coop, real = stage->real_size;
  uint64_t bound_cap = MAX_BOUND_BYTES;
  if (ctx->dev.max_alloc_bytes && ctx->dev.max_alloc_bytes < bound_cap)
    bound_cap = ctx->dev.max_alloc_bytes;
  const cph_job *first = &stage->jobs[key_job(keys[start])];
  const uint32_t tiles0 = tiles_of(first, v);
  /* Single-tile pairs sorted by haplotype words: when the bin's last
   * pair's words (4 bases each, at least its length) times their count
   * fit the cells per launch, they all go in one launch without a look at
   * each (the common case). */
  const uint32_t q_last = key_words(keys[n - 1]);
  if (tiles0 == 1 && tiles_of(&stage->jobs[key_job(keys[n - 1])], v) == 1 &&
      q_last < 0x3fff &&
      (uint64_t)(n - start) * cph_variant_rows(v) * 4 * q_last <=
          ctx->max_cells)
    return n;
  uint64_t cells = 0;
  uint32_t max_h = 0, max_tiles = 1;
  size_t end = start;
  for (; end < n; end++) {
    const cph_job *jb = &stage->jobs[key_job(keys[end])];
    const uint32_t t = tiles_of(jb, v);
    uint64_t c = (uint64_t)jb->R * jb->H;
    uint32_t mh = jb->H > max_h ? jb->H : max_h;
    uint32_t mt = t > max_tiles ? t : max_tiles;
    uint64_t slots = (end - start + 1 + ppw - 1) / ppw * ppw;
    uint64_t bound = mt > 1 ? slots * split * 4 * (mh + v->g + 5ull) * real : 0;
    if (end > start &&
        (cells + c > ctx->max_cells || bound > bound_cap ||
         (coop > 1 && !v->small && job_coop(ctx, jb, v) != coop)))
      break;
    cells += c;
    max_h = mh;
    max_tiles = mt;
  }
  return end;
}

/* A block of work-groups of one launch, filled on the pool: its pair and
 * work-group entries, and what the launch needs to know of them. Blocks
 * hold about FILL_JOBS jobs (whole work-groups), so that the threads share
 * even a small chunk's launches evenly (blocks of 256 work-groups held
 * 4,096 jobs of the 8x20 variant, and a launch of 8,000 two blocks). */
#define FILL_JOBS 512
/* A job's fill counts this much of the pool's work (cph_pool_for_work):
 * chunks of fewer than CPH_POOL_MIN_WORK / FILL_JOB_WORK = 4,096 jobs are
 * filled on the calling thread. A job costs about 20 ns there (on the
 * H200's host, chunks of 62,000 jobs, counted as one unit each, stayed
 * below CPH_POOL_MIN_WORK and took 1.2 ms, chunks of 123,000 on the pool
 * 0.3), a round on the pool some microseconds. */
#define FILL_JOB_WORK 16
typedef struct fill_block {
  const cph_launch *L;
  size_t key_at, n; /* jobs keys[key_at .. key_at + n) */
  size_t slot, group;
  uint64_t cells;
  uint32_t max_steps, max_tiles;
} fill_block;

typedef struct fill_task {
  cph_stage *stage;
  cph_sched *s;
  fill_block *blocks;
} fill_task;

/* Work-groups per block of launch L. */
static size_t block_groups(const cph_launch *L) {
  const unsigned ppw = cph_variant_pairs(&L->k->variant) / L->coop;
  return FILL_JOBS / ppw ? FILL_JOBS / ppw : 1;
}

/* The entries of a block's work-groups, each written once (the lists are
 * staging memory the device reads: pinned, and maybe uncached to reads). */
static void fill_block_run(void *arg, size_t i) {
  fill_task *t = arg;
  fill_block *fb = &t->blocks[i];
  const cph_variant *v = &fb->L->k->variant;
  const unsigned ppw = cph_variant_pairs(v) / fb->L->coop;
  const size_t n_groups = (fb->n + ppw - 1) / ppw;
  uint32_t *pairs = (uint32_t *)t->s->pairs.ptr + 4 * fb->slot;
  uint32_t *groups = (uint32_t *)t->s->groups.ptr + 2 * fb->group;
  const uint64_t *keys = t->s->keys + fb->key_at;
  uint64_t cells = 0;
  uint32_t max_steps = 0, max_tiles = 1;
  for (size_t g = 0; g < n_groups; g++) {
    const size_t j0 = g * ppw, j1 = j0 + ppw < fb->n ? j0 + ppw : fb->n;
    uint32_t tiles_g = 1, steps_g = 0;
    for (size_t j = j0; j < j1; j++) {
      cph_job *jb = &t->stage->jobs[key_job(keys[j])];
      const uint32_t tiles = tiles_of(jb, v);
      /* Steps: every column through every lane, in whole words of four. */
      const uint32_t steps = cph_variant_steps(v, jb->H);
      jb->slot = (uint32_t)(fb->slot + j);
      const uint32_t e[4] = {jb->row_off, jb->R, jb->hap_off, jb->H};
      memcpy(&pairs[4 * j], e, sizeof e);
      cells += (uint64_t)jb->R * jb->H;
      tiles_g = tiles > tiles_g ? tiles : tiles_g;
      steps_g = steps > steps_g ? steps : steps_g;
    }
    /* (A work-group's empty places: zero rows and columns.) */
    if (j1 < j0 + ppw)
      memset(&pairs[4 * j1], 0, (j0 + ppw - j1) * 4 * sizeof *pairs);
    groups[2 * g] = tiles_g;
    groups[2 * g + 1] = steps_g;
    max_tiles = tiles_g > max_tiles ? tiles_g : max_tiles;
    max_steps = steps_g > max_steps ? steps_g : max_steps;
  }
  fb->cells = cells;
  fb->max_steps = max_steps;
  fb->max_tiles = max_tiles;
}

/* Fill every launch's entries: blocks of about FILL_JOBS jobs on the
 * pool, then each launch's cells and boundary columns. */
static clphmm_status fill_launches(cph_engine *ctx, cph_stage *stage,
                                   cph_sched *s) {
  size_t nb = 0;
  for (size_t i = 0; i < s->n_launches; i++) {
    const size_t bg = block_groups(&s->launches[i]);
    nb += (s->launches[i].n_groups + bg - 1) / bg;
  }
  fill_block *blocks = malloc((nb ? nb : 1) * sizeof *blocks);
  if (!blocks)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for launches");
  size_t k = 0, at = 0;
  for (size_t i = 0; i < s->n_launches; i++) {
    const cph_launch *L = &s->launches[i];
    const unsigned ppw = cph_variant_pairs(&L->k->variant) / L->coop;
    const size_t bg = block_groups(L);
    for (size_t g = 0; g < L->n_groups; g += bg) {
      const size_t j0 = g * ppw;
      const size_t j1 = (g + bg) * ppw < L->n_jobs ? (g + bg) * ppw : L->n_jobs;
      blocks[k++] = (fill_block){
          L, at + j0, j1 - j0, L->first_slot + j0, L->first_group + g, 0, 0, 1};
    }
    at += L->n_jobs;
  }
  fill_task t = {stage, s, blocks};
  cph_pool_for(cph_pool_for_work(ctx->pool, s->n_slots * FILL_JOB_WORK), nb,
               fill_block_run, &t);
  for (size_t b = 0; b < nb;) {
    cph_launch *L = (cph_launch *)blocks[b].L;
    uint32_t max_steps = 0, max_tiles = 1;
    for (; b < nb && blocks[b].L == L; b++) {
      L->cells += blocks[b].cells;
      max_steps =
          blocks[b].max_steps > max_steps ? blocks[b].max_steps : max_steps;
      max_tiles =
          blocks[b].max_tiles > max_tiles ? blocks[b].max_tiles : max_tiles;
    }
    /* Lane 0 reads the boundary at columns 1..steps (stored from 0);
     * none where every pair's tiles run at once through local memory
     * (cl/pairhmm.cl LRING: one round, not split). */
    const int lring =
        L->k->variant.lring && max_tiles <= L->coop && L->split == 1;
    L->bound_cols = max_tiles > 1 && !lring ? max_steps : 0;
    L->split_rounds = (max_tiles + L->coop - 1) / L->coop;
    const size_t bound =
        (size_t)L->n_slots * L->split * 4 * L->bound_cols * stage->real_size;
    if (bound > s->bound_bytes)
      s->bound_bytes = bound;
    /* The ticket counter (and a word of padding), then the flags. */
    const size_t sync = 8 + 8 * (size_t)L->n_groups * L->split_rounds;
    if (L->split > 1 && sync > s->sync_bytes)
      s->sync_bytes = sync;
  }
  free(blocks);
  return CLPHMM_SUCCESS;
}

static cph_launch *add_launch(cph_sched *s) {
  if (s->n_launches == s->cap_launches) {
    size_t cap = s->cap_launches ? 2 * s->cap_launches : 16;
    cph_launch *l = realloc(s->launches, cap * sizeof *l);
    if (!l)
      return NULL;
    s->launches = l;
    s->cap_launches = cap;
  }
  cph_launch *L = &s->launches[s->n_launches++];
  memset(L, 0, sizeof *L);
  return L;
}

/* The end of bin `bin`'s keys from keys[start] on (keys are sorted by
 * bin: a binary search, where a scan of the mix's million keys took
 * about 0.9 ms a call on one thread). */
static size_t bin_upper(const uint64_t *keys, size_t start, size_t n,
                        uint32_t bin) {
  size_t lo = start, hi = n; /* keys[lo - 1] is in the bin, keys[hi] not */
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (key_bin(keys[mid]) <= bin)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Cut the sorted jobs into launches (sizes only). */
static clphmm_status cut_launches(cph_engine *ctx, int set,
                                  const cph_stage *stage, cph_sched *s,
                                  const cph_kernel **kernels) {
  const size_t n = stage->n_jobs;
  for (size_t start = 0; start < n;) {
    const uint32_t bin = key_bin(s->keys[start]);
    const size_t bin_end = bin_upper(s->keys, start, n, bin);
    const cph_kernel *k = kernels[bin];
    const unsigned coop =
        launch_coop(ctx, stage, s->keys, start, bin_end, &k->variant);
    size_t big = 0;
    const int bound_exit = launch_exit(ctx, set, bin, s);
    unsigned split = launch_split(ctx, stage, s->keys, start, bin_end,
                                  &k->variant, coop, bound_exit, &big);
    const size_t end = launch_end(ctx, stage, s->keys, bin_end, start,
                                  &k->variant, coop, split);
    cph_launch *L = add_launch(s);
    if (!L)
      return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for launches");
    const unsigned ppw = cph_variant_pairs(&k->variant) / coop;
    L->bin = stats_bin(ctx, set, bin);
    L->coop = coop;
    L->split = split;
    L->n_jobs = end - start;
    L->n_groups = (L->n_jobs + ppw - 1) / ppw;
    /* The groups holding the big jobs (counted from `start`). */
    const size_t big_groups = (big + ppw - 1) / ppw;
    L->split_groups = split < 2                  ? 0
                      : big_groups < L->n_groups ? big_groups
                                                 : L->n_groups;
    if (L->split_groups >= CPH_SPLIT_MAX_GROUPS) { /* (the kernel's field) */
      L->split = 1;
      L->split_groups = 0;
    }
    L->k =
        launch_kernel(ctx, set, bin, k, bound_exit, stage->host_prep,
                      launch_wide(ctx, stage, s->keys, start, end), &L->split);
    if (L->split < 2)
      L->split_groups = 0;
    L->n_slots = L->n_groups * ppw;
    L->first_slot = s->n_slots;
    L->first_group = s->n_groups;
    s->n_slots += L->n_slots;
    s->n_groups += L->n_groups;
    start = end;
  }
  return CLPHMM_SUCCESS;
}

clphmm_status cph_schedule(cph_engine *ctx, int set, cph_stage *stage,
                           cph_sched *s) {
  s->n_launches = s->n_slots = s->n_groups = s->bound_bytes = 0;
  s->sync_bytes = 0;
  const cph_kernel *kernels[CPH_MAX_VARIANTS] = {0};
  /* Its parts show in CLPHMM_TRACE (slot -1: they run inside "schedule"). */
  double t = cph_now();
  clphmm_status st = order_jobs(ctx, set, stage, s, kernels);
  cph_trace_host(&ctx->trace, "order", -1, t);
  t = cph_now();
  if (!st)
    st = cut_launches(ctx, set, stage, s, kernels);
  cph_trace_host(&ctx->trace, "cut", -1, t);
  t = cph_now();
  const cph_bufctx *c = &ctx->bufs;
  if (!st)
    st = cph_hostbuf_ensure(c, &s->pairs, 16 * s->n_slots,
                            "staging the pair list");
  if (!st)
    st = cph_hostbuf_ensure(c, &s->groups, 8 * s->n_groups,
                            "staging the group list");
  cph_trace_host(&ctx->trace, "lists", -1, t);
  t = cph_now();
  if (!st)
    st = fill_launches(ctx, stage, s);
  cph_trace_host(&ctx->trace, "fill", -1, t);
  return st;
}

int cph_schedule_copy(cph_engine *ctx, int set, const cph_sched *from,
                      cph_sched *s) {
  if (from->n_launches != 1 || from->bound_bytes || from->sync_bytes)
    return 0;
  const cph_launch *L = &from->launches[0];
  const cph_variant *v = &L->k->variant;
  const cph_variant_set *vs = &ctx->variants[set];
  if (!v->small || L->split != 1 || L->bound_cols || !vs->has_small)
    return 0;
  const cph_kernel *k;
  if (cph_context_kernel(ctx, vs->n, set, &k))
    return 0;
  if (!k->variant.small || !same_shape(&k->variant, v))
    return 0;
  /* (The stages of copied schedules are the device's to prepare.) */
  unsigned one = 1;
  k = launch_kernel(ctx, set, (uint32_t)vs->n, k, 0, 0, 0, &one);
  /* (Tiles at once without a boundary row: through local memory, in tile
   * slots of the same lanes: a program built with another shuffle, such
   * as the local fallback, slots its tiles otherwise.) */
  if (L->coop > 1 && (!k->variant.lring || k->variant.shuffle != v->shuffle))
    return 0;
  const cph_bufctx *c = &ctx->bufs;
  if (cph_hostbuf_ensure(c, &s->pairs, 16 * from->n_slots,
                         "staging the pair list") ||
      cph_hostbuf_ensure(c, &s->groups, 8 * from->n_groups,
                         "staging the group list"))
    return 0;
  s->n_launches = 0;
  cph_launch *to = add_launch(s);
  if (!to)
    return 0;
  *to = *L;
  to->k = k;
  to->bin = stats_bin(ctx, set, (uint32_t)vs->n);
  memcpy(s->pairs.ptr, from->pairs.ptr, 16 * from->n_slots);
  memcpy(s->groups.ptr, from->groups.ptr, 8 * from->n_groups);
  s->n_slots = from->n_slots;
  s->n_groups = from->n_groups;
  s->bound_bytes = s->sync_bytes = 0;
  s->exit_bins = 0;
  return 1;
}
