#include "opencl/program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textfile.h"
#include "opencl/cache.h"
#include "opencl/cl_sources.h"

/* Files concatenated, in order, into every program. */
static const char *const program_files[] = {"prelude.cl",     "shuffle.cl",
                                            "rows.cl",        "pairhmm.cl",
                                            "pairhmm_cpu.cl", "prep.cl"};
_Static_assert(sizeof program_files / sizeof *program_files ==
                   CPH_N_PROGRAM_FILES,
               "CPH_N_PROGRAM_FILES");

const char *cph_shuffle_name(cph_shuffle s) {
  switch (s) {
  case CPH_SHUFFLE_LOCAL: return "local";
  case CPH_SHUFFLE_KHR: return "khr";
  case CPH_SHUFFLE_INTEL: return "intel";
  case CPH_SHUFFLE_NVIDIA: return "nvidia";
  case CPH_SHUFFLE_AMD: return "amd";
  case CPH_SHUFFLE_KHR_ABS: return "khr-abs";
  }
  return "?";
}

int cph_shuffle_parse(const char *name) {
  for (int s = CPH_SHUFFLE_LOCAL; s <= CPH_SHUFFLE_LAST; s++)
    if (strcmp(name, cph_shuffle_name((cph_shuffle)s)) == 0)
      return s;
  return -1;
}

void cph_variant_options(const cph_variant *v, int dbl, char *buf, size_t n) {
  const char *extra = getenv("CLPHMM_BUILD_OPTIONS");
  snprintf(buf, n,
           "-DCPH_C=%u -DCPH_DOUBLE=%d -DCPH_FMA=%d -DCPH_G=%u -DCPH_MAXREG=%u "
           "-DCPH_SCALED=%d -DCPH_SEQ=%d -DCPH_SHUFFLE=%d -DCPH_VEC=%d "
           "-DCPH_WG=%u -DCPH_EXIT=%d -DCPH_SPLIT=%d -DCPH_INLINE=%d "
           "-DCPH_LRING=%d%s%s%s",
           v->c, dbl, v->fma, v->g, v->maxreg, cph_variant_scaled(v), v->seq,
           (int)v->shuffle, v->vec, v->wg, cph_variant_exit(v, dbl), v->split,
           v->inline_rows, v->lring,
           v->ftz && !dbl ? " -cl-denorms-are-zero" : "",
           extra && *extra ? " " : "", extra && *extra ? extra : "");
}

void cph_variant_name(const cph_variant *v, char *buf, size_t n) {
  char reg[16] = "";
  if (v->maxreg)
    snprintf(reg, sizeof reg, ":r%u", v->maxreg);
  snprintf(buf, n, "%s%ux%u/%u%s%s", v->vec ? "v" : "", v->g, v->c, v->wg,
           v->seq     ? ":long"
           : v->small ? ":small"
                      : "",
           reg);
}

/* Text of one kernel file: from $CLPHMM_KERNEL_DIR when set (kernel
 * development without rebuilding), else the embedded copy. */
static clphmm_status load_file(const char *name, char **text) {
  const char *dir = getenv("CLPHMM_KERNEL_DIR");
  if (dir && *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
      return cph_error(CLPHMM_ERROR_IO, "%s: cannot open kernel source", path);
    size_t size;
    int err = cph_read_stream(f, SIZE_MAX, text, &size);
    fclose(f);
    if (err)
      return cph_error(CLPHMM_ERROR_IO, "%s: cannot read kernel source", path);
    return CLPHMM_SUCCESS;
  }
  for (const cph_cl_source *s = cph_cl_sources; s->name; s++)
    if (strcmp(s->name, name) == 0) {
      *text = malloc(s->size + 1);
      if (!*text)
        return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "kernel source");
      memcpy(*text, s->text, s->size + 1);
      return CLPHMM_SUCCESS;
    }
  return cph_error(CLPHMM_ERROR_BUILD_FAILED,
                   "kernel source %s is not embedded in the library", name);
}

/* Identity of the kernel sources for the binary cache: the embedded
 * sources' SHA-256, or a hash of the files of $CLPHMM_KERNEL_DIR. */
clphmm_status cph_program_source_id(char *buf, size_t n) {
  const char *dir = getenv("CLPHMM_KERNEL_DIR");
  if (!dir || !*dir) {
    snprintf(buf, n, "embedded %s", cph_cl_sources_hash);
    return CLPHMM_SUCCESS;
  }
  cph_sources s;
  clphmm_status st = cph_program_sources(&s);
  if (st)
    return st;
  uint64_t h = CPH_HASH64_INIT;
  for (size_t i = 0; i < CPH_N_PROGRAM_FILES; i++) {
    h = cph_hash64(h, program_files[i], strlen(program_files[i]) + 1);
    h = cph_hash64(h, s.text[i], s.size[i]);
  }
  cph_sources_free(&s);
  snprintf(buf, n, "dir %016llx", (unsigned long long)h);
  return CLPHMM_SUCCESS;
}

clphmm_status cph_program_sources(cph_sources *s) {
  memset(s, 0, sizeof *s);
  for (size_t i = 0; i < CPH_N_PROGRAM_FILES; i++) {
    clphmm_status st = load_file(program_files[i], &s->text[i]);
    if (st) {
      cph_sources_free(s);
      return st;
    }
    s->size[i] = strlen(s->text[i]);
  }
  return CLPHMM_SUCCESS;
}

void cph_sources_free(cph_sources *s) {
  for (size_t i = 0; i < CPH_N_PROGRAM_FILES; i++)
    free(s->text[i]);
  memset(s, 0, sizeof *s);
}

size_t cph_variant_local_bytes(const cph_variant *v, unsigned wg, int dbl) {
  if (v->vec) /* no local memory */
    return 0;
  const size_t real = dbl ? 8 : 4, vw = 16 / real;
  const size_t nq = (v->c + vw - 1) / vw;
  const size_t sym_stride = (nq * v->g + 7) / 8 * 8;
  const size_t slot = 6 * sym_stride + (v->g < 8 ? v->g : 0);
  size_t bytes = (size_t)(wg / v->g) * slot * 16;
  if (cph_variant_ring(v, dbl)) /* 2 RCH + 1 in, RCH out, RCH = 32 */
    bytes += (size_t)(wg / v->g) * (3 * 32 + 1) * 4 * real;
  if (v->lring) /* LRING_N = 16 entries of 4 reals per lane group */
    bytes += (size_t)(wg / v->g) * 16 * 4 * real;
  if (v->shuffle == CPH_SHUFFLE_LOCAL) /* cl/shuffle.cl: 3 reals, 2 words */
    bytes += (size_t)wg * (3 * real + 8);
  return bytes;
}

unsigned cph_variant_coop(const cph_variant *v, uint32_t tiles, unsigned max) {
  const unsigned lg = v->wg / v->g;
  const unsigned warp = v->shuffle == CPH_SHUFFLE_NVIDIA ? 32
                        : v->shuffle == CPH_SHUFFLE_AMD  ? 64
                                                         : 1;
  unsigned w = 1;
  while (!v->seq && !v->vec && w < tiles && lg % (2 * w) == 0 &&
         (v->wg / (2 * w)) % warp == 0 && (!max || 2 * w <= max))
    w *= 2;
  return w;
}

cph_variant cph_variant_fit(const cph_variant *v, int dbl,
                            const cph_device *dev) {
  cph_variant f = *v;
  f.lring = 0;
  const uint64_t have = dev->info.local_mem_bytes;
  while (have && f.wg >= 2 * f.g && (f.wg / f.g) % 2 == 0 &&
         cph_variant_local_bytes(&f, f.wg, dbl) > have)
    f.wg /= 2;
  /* A small call's variant runs a read of a few tiles with its tiles at
   * once: their rows go through local memory where it has room beside the
   * work-group as fitted (not at the cost of a smaller work-group: the
   * H200's double 32x8/128 fills its 48 KB). */
  cph_variant r = f;
  r.lring = 1;
  if (v->small && !v->seq && !v->vec &&
      (!have || cph_variant_local_bytes(&r, r.wg, dbl) <= have))
    f = r;
  return f;
}
