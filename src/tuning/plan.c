#include "tuning/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "tuning/tuning.h"

/* A chunk of more cells than this keeps its bins whatever its pairs: at a
 * few TCUPS it takes over 100 us, where a launch per bin costs little. */
#define PLAN_SMALL_MAX_CELLS ((uint64_t)1 << 28)

/* By tile rows, the long-read variant last. */
static int by_rows(const void *a, const void *b) {
  const cph_variant *x = a, *y = b;
  if (x->seq != y->seq)
    return x->seq - y->seq;
  unsigned ra = cph_variant_rows(x), rb = cph_variant_rows(y);
  return (ra > rb) - (ra < rb);
}

/* Drop the long-read variant (double kernels derived from a float list
 * keep concurrent tiles, which the double rescue of a few pairs needs). */
static void drop_long(cph_variant_set *set) {
  size_t k = 0;
  for (size_t i = 0; i < set->n; i++)
    if (!set->v[i].seq)
      set->v[k++] = set->v[i];
  set->n = k;
}

/* Move the small-call variant, if any, behind the bins. */
static void set_small_apart(cph_variant_set *set) {
  size_t k = 0;
  cph_variant small = {0};
  set->has_small = 0;
  for (size_t i = 0; i < set->n; i++) {
    if (set->v[i].small) {
      small = set->v[i];
      set->has_small = 1;
    } else {
      set->v[k++] = set->v[i];
    }
  }
  set->n = k;
  if (set->has_small)
    set->v[k] = small;
}

#define DOUBLE_MAX_C 8

/* The most lanes of any variant: the variants with that many tile long
 * reads (cph_plan_bin). */
static unsigned max_lanes(const cph_variant_set *set) {
  unsigned gmax = 0;
  for (size_t i = 0; i < set->n; i++)
    if (!set->v[i].seq && !set->v[i].vec && set->v[i].g > gmax)
      gmax = set->v[i].g;
  return gmax;
}

/* The variant set of a choice in a precision, checked against the
 * device's limits and the kernel's vector width (4 floats or 2 doubles of
 * priors per load: rows per lane must be a multiple of it). */
static clphmm_status variants_of(const cph_device *dev,
                                 const cph_tuning_choice *c, int dbl,
                                 int scaled, cph_variant_set *set) {
  char why[160];
  const int own = dbl && c->entry.variants_double[0]; /* a double list */
  const char *list = own ? c->entry.variants_double : c->entry.variants;
  /* (Errors name where the list came from.) */
  const char *source = own ? c->source_double : c->source,
             *key = own ? c->key_double : c->key;
  if (!cph_variants_parse(list, set, why, sizeof why))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "variants '%s' (%s): %s",
                     list, key, why);
  if (dbl && !c->entry.variants_double[0])
    drop_long(set);
  set_small_apart(set);
  if (set->n == 0)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "variants '%s' (%s): a :small variant needs bins beside "
                     "it",
                     list, key);
  if (set->n == 1 && set->v[0].seq)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "variants '%s' (%s): a :long variant needs another "
                     "variant for the reads that fit one tile",
                     list, key);
  const unsigned vw = dbl ? 2 : 4;
  for (size_t i = 0; i < cph_plan_count(set); i++) {
    /* Derived double lists: vector variants keep the vector size in
     * bytes (half the pairs), lane groups at most 8 rows per lane. */
    if (dbl && !c->entry.variants_double[0] && set->v[i].vec && set->v[i].g > 1)
      set->v[i].g /= 2;
    else if (dbl && !c->entry.variants_double[0] && !set->v[i].vec &&
             set->v[i].c > DOUBLE_MAX_C)
      set->v[i].c = DOUBLE_MAX_C;
    if (!set->v[i].vec && set->v[i].c % vw)
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "variant %ux%u (%s, %s): rows per lane must be a "
                       "multiple of %u for %s kernels (priors are read %u at "
                       "a time)",
                       set->v[i].g, set->v[i].c, source, key, vw,
                       dbl ? "double" : "float", vw);
    /* The vector kernel exchanges nothing between work-items. */
    set->v[i].shuffle =
        set->v[i].vec ? CPH_SHUFFLE_LOCAL : (cph_shuffle)c->entry.shuffle;
    set->v[i].fma = c->entry.fma;
    set->v[i].scaled = scaled;
    /* GKL runs its float pass with FTZ set (PAIRHMM_SPEC 6.1): cells below
     * FLT_MIN become 0, which only touches paths far below the result
     * (below 1e-10 of it for any result the float pass keeps). CPUs pay
     * about a hundred cycles per denormal operand: on a 16-core Xeon
     * (PoCL 5.0) 10s.in ran at 6.3 GCUPS without flushing, 34.9 with.
     * GPUs keep IEEE denormals (free there; their results stay as
     * measured). Double programs never flush (Java's semantics). */
    set->v[i].ftz = !dbl && dev->info.type == CLPHMM_DEVICE_CPU;
    /* The first pass of float mode stops pairs certain to be rescued
     * (model/bound.h), double programs pairs whose rows underflowed to
     * zeros (cph_variant_exit); the vector kernel has no early exit. */
    set->v[i].early_exit = !set->v[i].vec;
    if (set->v[i].wg > dev->max_work_group_size)
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "variant %ux%u (%s, %s) needs work-groups of %u but "
                       "%s allows %zu",
                       set->v[i].g, set->v[i].c, source, key, set->v[i].wg,
                       dev->info.name, dev->max_work_group_size);
  }
  qsort(set->v, set->n, sizeof set->v[0], by_rows);
  return CLPHMM_SUCCESS;
}

int cph_plan_small(const cph_variant_set *set, size_t pairs, uint64_t cells,
                   unsigned compute_units) {
  if (!set->has_small)
    return 0;
  const cph_variant *v = &set->v[set->n];
  const uint64_t fill = (uint64_t)CPH_FILL_PAIRS_PER_UNIT *
                        (compute_units ? compute_units : 1) * (v->wg / v->g);
  return pairs < fill && cells < PLAN_SMALL_MAX_CELLS;
}

int cph_plan_to_small(const cph_variant_set *set, size_t bin, uint64_t pairs,
                      uint32_t longest, uint64_t moved, unsigned compute_units,
                      unsigned groups_per_unit) {
  if (!set->has_small || bin >= set->n || !pairs)
    return 0;
  const cph_variant *v = &set->v[bin], *s = &set->v[set->n];
  if (v->seq || v->vec || longest > cph_variant_rows(s))
    return 0;
  const uint64_t per_group = cph_variant_pairs(v);
  return (pairs + per_group - 1) / per_group < compute_units &&
         moved + pairs <=
             (uint64_t)groups_per_unit * compute_units * cph_variant_pairs(s);
}

/* CLPHMM_EARLY_EXIT=0 turns the early exit off (for measurements and
 * tests: results are the same either way). */
static clphmm_status early_exit_env(int *on) {
  const char *e = getenv("CLPHMM_EARLY_EXIT");
  *on = 1;
  if (!e || !*e)
    return CLPHMM_SUCCESS;
  if (strcmp(e, "0") && strcmp(e, "1"))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "CLPHMM_EARLY_EXIT='%s': expected 0 or 1", e);
  *on = e[0] == '1';
  return CLPHMM_SUCCESS;
}

clphmm_status cph_plan_variants(const cph_device *dev, int dbl, int scaled,
                                cph_variant_set *set) {
  cph_tuning_choice c;
  int on;
  clphmm_status st = early_exit_env(&on);
  if (!st)
    st = cph_tuning_for_device(dev, &c);
  if (!st)
    st = variants_of(dev, &c, dbl, scaled, set);
  for (size_t i = 0; !st && !on && i < cph_plan_count(set); i++)
    set->v[i].early_exit = 0;
  return st;
}

clphmm_status cph_plan_exact(const cph_device *dev, cph_variant_set *set) {
  clphmm_status st = cph_plan_variants(dev, 1, 0, set);
  for (size_t i = 0; !st && i < cph_plan_count(set); i++)
    set->v[i].fma = 0;
  return st;
}

/* Per-step overhead of the lane-group kernel, in read rows (fitted to the
 * H200's float C = 16 / 20 / 24 and double C = 8 / 12 timings). */
#define PLAN_STEP_ROWS 6
/* The same for the vector kernel (cl/pairhmm_cpu.cl), whose steps load and
 * store the boundary row and sum: about one row's work. Every vector
 * variant tiles long reads. */
#define PLAN_VEC_STEP_ROWS 1

size_t cph_plan_bin(const cph_variant_set *set, uint32_t rows) {
  for (size_t i = 0; i < set->n && !set->v[i].seq; i++)
    if (rows <= cph_variant_rows(&set->v[i]))
      return i;
  if (set->v[set->n - 1].seq) /* the long-read variant (sorted last) */
    return set->n - 1;
  /* Longer than every tile: among the variants with the most lanes (the
   * long-read shapes), the one with the least estimated cost, then the one
   * with fewer tiles. A tile's step costs its C rows plus an overhead of
   * about PLAN_STEP_ROWS rows (shuffles, prior loads, sums), so the cost
   * is padded rows x (C + PLAN_STEP_ROWS) / C: a 1024-row read takes two
   * 512-row float tiles (C = 16) rather than two of 768 (C = 24), and
   * three 384-row double tiles (C = 12) rather than four of 256 (C = 8),
   * as measured on the H200 with tiles run one after the other
   * (bench/results). (Concurrent tiles favour more of them: the H200's
   * double table has no C = 12 variant since.) */
  const unsigned gmax = max_lanes(set);
  size_t best = set->n - 1;
  uint64_t best_cost = UINT64_MAX;
  for (size_t i = 0; i < set->n; i++) {
    const cph_variant *v = &set->v[i];
    const uint64_t t = cph_variant_rows(v);
    /* (No long-read variant here: it would have been returned.) */
    const uint64_t padded = (rows + t - 1) / t * t;
    const uint64_t cost =
        padded * (v->c + (v->vec ? PLAN_VEC_STEP_ROWS : PLAN_STEP_ROWS)) *
        1024 / v->c;
    if ((v->vec || v->g == gmax) &&
        (cost < best_cost ||
         (cost == best_cost && t > cph_variant_rows(&set->v[best])))) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

/* The variant with the most lanes and the fewest rows per tile, for every
 * read longer than all tiles, so that they share one launch of the most
 * concurrent tiles (on the H200 the long suite's float pass, split by cost
 * over 32x16, 32x20 and 32x24, took 154 ms with its rescue, 141 on 32x16
 * alone). */
size_t cph_plan_bin_long(const cph_variant_set *set) {
  const unsigned gmax = max_lanes(set);
  size_t best = 0;
  uint32_t best_rows = UINT32_MAX;
  for (size_t i = 0; i < set->n; i++) {
    const cph_variant *v = &set->v[i];
    if (!v->seq && !v->vec && v->g == gmax && cph_variant_rows(v) < best_rows) {
      best = i;
      best_rows = cph_variant_rows(v);
    }
  }
  return best;
}

void cph_plan_format(const cph_variant_set *set, char *buf, size_t n) {
  size_t u = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < cph_plan_count(set); i++) {
    char name[64];
    cph_variant_name(&set->v[i], name, sizeof name);
    int w = snprintf(buf + u, n - u, "%s%s", i ? "," : "", name);
    if (w < 0 || (size_t)w >= n - u)
      return;
    u += (size_t)w;
  }
}

/* The device's extensions that name subgroups, space-separated. */
static void subgroup_extensions(const char *ext, char *buf, size_t n) {
  size_t u = 0;
  buf[0] = '\0';
  while (*ext) {
    size_t len = strcspn(ext, " ");
    char tok[128];
    if (len && len < sizeof tok) {
      memcpy(tok, ext, len);
      tok[len] = '\0';
      if ((strstr(tok, "subgroup") || strstr(tok, "sub_group")) &&
          u + len + 2 < n)
        u += (size_t)snprintf(buf + u, n - u, "%s%s", u ? " " : "", tok);
    }
    ext += len;
    ext += strspn(ext, " ");
  }
}

clphmm_status clphmm_device_get_plan(size_t index, clphmm_device_plan *plan) {
  if (!plan)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "plan is NULL");
  cph_device dev;
  clphmm_status st = cph_device_open(index, &dev);
  cph_tuning_choice c;
  cph_variant_set set;
  if (!st)
    st = cph_tuning_for_device(&dev, &c);
  if (!st)
    st = variants_of(&dev, &c, 0, 1, &set);
  if (st)
    return st;
  memset(plan, 0, sizeof *plan);
  cph_plan_format(&set, plan->variants, sizeof plan->variants);
  snprintf(plan->shuffle, sizeof plan->shuffle, "%s",
           cph_shuffle_name((cph_shuffle)c.entry.shuffle));
  plan->fma = c.entry.fma;
  snprintf(plan->source, sizeof plan->source, "%s", c.source);
  snprintf(plan->key, sizeof plan->key, "%s", c.key);
  snprintf(plan->tuning_file, sizeof plan->tuning_file, "%s", c.file);
  snprintf(plan->arch, sizeof plan->arch, "%s", dev.arch);
  subgroup_extensions(dev.extensions, plan->subgroup_extensions,
                      sizeof plan->subgroup_extensions);
  return CLPHMM_SUCCESS;
}
