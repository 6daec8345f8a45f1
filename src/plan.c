#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Built-in variant tables: lanes x rows per lane, work-group size. Reads
 * longer than the last entry's rows tile it. */
typedef struct table_entry {
  unsigned g, c, wg;
} table_entry;

/* Generic (and PoCL CPU): capacities 16 .. 256 rows. */
static const table_entry generic_table[] = {
    {4, 4, 64}, {8, 4, 64}, {8, 8, 64}, {16, 8, 64}, {32, 8, 64}};
/* NVIDIA (warp shuffles), float: capacities 32 .. 512 rows. Measured on
 * the H200 (bench/sweep.sh): more rows per lane amortise the per-step work
 * until registers spill (C = 32), and fewer lanes waste fewer ramp steps. */
static const table_entry nvidia_table[] = {
    {4, 8, 128},   {4, 16, 128},  {8, 16, 128}, {8, 24, 128},
    {16, 16, 128}, {16, 24, 128}, {32, 16, 128}};
/* NVIDIA, double: half the rows per lane (twice the registers per row). */
static const table_entry nvidia_double_table[] = {
    {4, 8, 128}, {8, 8, 128}, {16, 8, 64}, {32, 8, 128}};
#define DEFAULT_WG 64

static int is_nvidia(const cph_device *dev) {
  return strstr(dev->info.vendor, "NVIDIA") != NULL &&
         dev->info.type == CLPHMM_DEVICE_GPU;
}

/* Whether the space-separated extension list names `ext` exactly. */
static int has_ext(const cph_device *dev, const char *ext) {
  const size_t n = strlen(ext);
  for (const char *p = dev->extensions; (p = strstr(p, ext)) != NULL; p += n)
    if ((p == dev->extensions || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
      return 1;
  return 0;
}

/* The shuffle backend for a device: the vendor's own on NVIDIA and AMD
 * GPUs, else the portable subgroup extensions on GPUs, else local memory.
 * CPUs (PoCL) use local memory: their subgroups need not keep a lane group
 * together, and the lane-group kernel is not their fast path anyway. */
static cph_shuffle choose_shuffle(const cph_device *dev) {
  if (dev->info.type != CLPHMM_DEVICE_GPU)
    return CPH_SHUFFLE_LOCAL;
  if (is_nvidia(dev))
    return CPH_SHUFFLE_NVIDIA;
  if (strstr(dev->info.vendor, "Advanced Micro Devices") ||
      strstr(dev->info.vendor, "AMD"))
    return CPH_SHUFFLE_AMD;
  if (has_ext(dev, "cl_khr_subgroup_shuffle_relative"))
    return CPH_SHUFFLE_KHR;
  if (has_ext(dev, "cl_intel_subgroups"))
    return CPH_SHUFFLE_INTEL;
  if (has_ext(dev, "cl_khr_subgroup_shuffle"))
    return CPH_SHUFFLE_KHR_ABS;
  return CPH_SHUFFLE_LOCAL;
}

static clphmm_status parse_variants(const char *spec, cph_shuffle sh,
                                    int dbl, cph_variant_set *set) {
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
    if (c % (dbl ? 2 : 4))
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "CLPHMM_VARIANTS='%s': rows per lane must be a "
                       "multiple of 4 (float kernels read 4 priors at a "
                       "time; double kernels 2)",
                       spec);
    set->v[set->n++] =
        (cph_variant){(unsigned)g, (unsigned)c, (unsigned)wg, sh, 0};
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

clphmm_status cph_plan_variants(const cph_device *dev, int dbl,
                                cph_variant_set *set) {
  const int nv = is_nvidia(dev);
  cph_shuffle sh = choose_shuffle(dev);
  /* GPUs fuse multiply-adds; CPUs keep the exact operation order. */
  int fma = dev->info.type == CLPHMM_DEVICE_GPU;
  const char *fenv = getenv("CLPHMM_FMA");
  if (fenv && *fenv)
    fma = strcmp(fenv, "0") != 0;
  const char *env = getenv("CLPHMM_SHUFFLE");
  if (env && *env) {
    int s = cph_shuffle_parse(env);
    if (s < 0)
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "CLPHMM_SHUFFLE='%s' is not one of local, khr, "
                       "khr-abs, intel, nvidia, amd",
                       env);
    sh = (cph_shuffle)s;
  }
  const char *spec = getenv("CLPHMM_VARIANTS");
  if (spec && *spec) {
    clphmm_status st = parse_variants(spec, sh, dbl, set);
    if (st)
      return st;
  } else {
    const table_entry *t = generic_table;
    size_t n = sizeof generic_table / sizeof *generic_table;
    if (nv && dbl) {
      t = nvidia_double_table;
      n = sizeof nvidia_double_table / sizeof *nvidia_double_table;
    } else if (nv) {
      t = nvidia_table;
      n = sizeof nvidia_table / sizeof *nvidia_table;
    }
    set->n = 0;
    for (size_t i = 0; i < n; i++)
      set->v[set->n++] = (cph_variant){t[i].g, t[i].c, t[i].wg, sh, 0};
  }
  for (size_t i = 0; i < set->n; i++)
    set->v[i].fma = fma;
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
