#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Lane-group sizes and rows per lane of the default bins: capacities 16,
 * 32, 64, 128, 256 rows; longer reads tile the last. */
static const unsigned default_gc[][2] = {
    {4, 4}, {8, 4}, {8, 8}, {16, 8}, {32, 8}};
#define DEFAULT_WG 64

static clphmm_status parse_variants(const char *spec, cph_shuffle sh,
                                    cph_variant_set *set) {
  set->n = 0;
  const char *p = spec;
  while (*p) {
    char *end;
    unsigned long g = strtoul(p, &end, 10), c = 0, wg = DEFAULT_WG;
    if (end == p || *end != 'x')
      goto bad;
    p = end + 1;
    c = strtoul(p, &end, 10);
    if (end == p)
      goto bad;
    p = end;
    if (*p == '/') {
      wg = strtoul(p + 1, &end, 10);
      if (end == p + 1)
        goto bad;
      p = end;
    }
    if (g < 1 || g > 64 || c < 1 || c > 64 || wg < g || wg % g || wg > 1024 ||
        set->n == CPH_MAX_VARIANTS)
      goto bad;
    set->v[set->n++] = (cph_variant){(unsigned)g, (unsigned)c, (unsigned)wg, sh};
    if (*p == ',')
      p++;
    else if (*p)
      goto bad;
  }
  if (set->n == 0)
    goto bad;
  return CLPHMM_SUCCESS;
bad:
  return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                   "CLPHMM_VARIANTS='%s' is not a list like 8x4,16x8/64 "
                   "(lanes x rows per lane [/ work-group size])",
                   spec);
}

static int by_rows(const void *a, const void *b) {
  unsigned ra = cph_variant_rows(a), rb = cph_variant_rows(b);
  return (ra > rb) - (ra < rb);
}

clphmm_status cph_plan_variants(const cph_device *dev, cph_variant_set *set) {
  cph_shuffle sh = CPH_SHUFFLE_LOCAL;
  const char *env = getenv("CLPHMM_SHUFFLE");
  if (env && *env) {
    int s = cph_shuffle_parse(env);
    if (s < 0)
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "CLPHMM_SHUFFLE='%s' is not one of local, khr, intel, "
                       "nvidia",
                       env);
    sh = (cph_shuffle)s;
  }
  const char *spec = getenv("CLPHMM_VARIANTS");
  if (spec && *spec) {
    clphmm_status st = parse_variants(spec, sh, set);
    if (st)
      return st;
  } else {
    set->n = 0;
    for (size_t i = 0; i < sizeof default_gc / sizeof *default_gc; i++)
      set->v[set->n++] = (cph_variant){default_gc[i][0], default_gc[i][1],
                                       DEFAULT_WG, sh};
  }
  for (size_t i = 0; i < set->n; i++)
    if (set->v[i].wg > dev->max_work_group_size)
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "variant %ux%u needs work-groups of %u but %s allows "
                       "%zu",
                       set->v[i].g, set->v[i].c, set->v[i].wg, dev->info.name,
                       dev->max_work_group_size);
  qsort(set->v, set->n, sizeof set->v[0], by_rows);
  return CLPHMM_SUCCESS;
}

size_t cph_plan_bin(const cph_variant_set *set, uint32_t rows) {
  for (size_t i = 0; i < set->n; i++)
    if (rows <= cph_variant_rows(&set->v[i]))
      return i;
  return set->n - 1;
}
