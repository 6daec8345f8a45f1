#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_sources.h"
#include "error.h"

/* Files concatenated, in order, into every program. */
static const char *const program_files[] = {"prelude.cl", "shuffle.cl",
                                            "pairhmm.cl"};
#define N_PROGRAM_FILES (sizeof program_files / sizeof *program_files)

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
  snprintf(buf, n, "-DCPH_C=%u -DCPH_DOUBLE=%d -DCPH_FMA=%d -DCPH_G=%u "
           "-DCPH_SHUFFLE=%d -DCPH_WG=%u%s%s",
           v->c, dbl, v->fma, v->g, (int)v->shuffle, v->wg,
           extra && *extra ? " " : "", extra && *extra ? extra : "");
}

size_t cph_variant_local_bytes(const cph_variant *v, unsigned wg, int dbl) {
  const size_t real = dbl ? 8 : 4, vw = 16 / real;
  const size_t nq = (v->c + vw - 1) / vw;
  const size_t sym_stride = (nq * v->g + 7) / 8 * 8;
  const size_t slot = 6 * sym_stride + (v->g < 8 ? v->g : 0);
  size_t bytes = (size_t)(wg / v->g) * slot * 16;
  if (v->shuffle == CPH_SHUFFLE_LOCAL)
    bytes += (size_t)wg * (3 * real + 4);
  return bytes;
}

cph_variant cph_variant_fit(const cph_variant *v, int dbl,
                            const cph_device *dev) {
  cph_variant f = *v;
  const uint64_t have = dev->info.local_mem_bytes;
  while (have && f.wg >= 2 * f.g && (f.wg / f.g) % 2 == 0 &&
         cph_variant_local_bytes(&f, f.wg, dbl) > have)
    f.wg /= 2;
  return f;
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
      return cph_error(CLPHMM_ERROR_IO, "%s: cannot open kernel source",
                       path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    size_t got = *text ? fread(*text, 1, (size_t)size, f) : 0;
    fclose(f);
    if (!*text || got != (size_t)size) {
      free(*text);
      return cph_error(CLPHMM_ERROR_IO, "%s: cannot read kernel source", path);
    }
    (*text)[size] = '\0';
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

static clphmm_status build_failed(cl_program prog, const cph_device *dev,
                                  cl_int err, const char *opts) {
  char log[CPH_ERROR_MAX / 2];
  log[0] = '\0';
  size_t len = 0;
  cph_cl.GetProgramBuildInfo(prog, dev->id, CL_PROGRAM_BUILD_LOG,
                             sizeof log - 1, log, &len);
  log[sizeof log - 1] = '\0';
  return cph_error(CLPHMM_ERROR_BUILD_FAILED,
                   "building the kernel for %s with options '%s' failed "
                   "with %s (%d); build log:\n%s",
                   dev->info.name, opts, cph_cl_error_name(err), (int)err,
                   log);
}

/* Kernel development aid: with CLPHMM_BUILD_LOG=FILE, append each build's
 * options and compiler log (register use with -cl-nv-verbose) to FILE. */
static void append_build_log(cl_program prog, const cph_device *dev,
                             const char *opts) {
  const char *path = getenv("CLPHMM_BUILD_LOG");
  if (!path || !*path)
    return;
  char log[16384];
  log[0] = '\0';
  cph_cl.GetProgramBuildInfo(prog, dev->id, CL_PROGRAM_BUILD_LOG,
                             sizeof log - 1, log, NULL);
  log[sizeof log - 1] = '\0';
  FILE *f = fopen(path, "a");
  if (!f)
    return;
  fprintf(f, "== %s: %s\n%s\n", dev->info.name, opts, log);
  /* The program binary too: PTX text on NVIDIA, for counting instructions
   * in the inner loop. */
  size_t size = 0;
  if (cph_cl.GetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size,
                            NULL) == CL_SUCCESS &&
      size > 0) {
    unsigned char *bin = malloc(size);
    if (bin && cph_cl.GetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin,
                                     &bin, NULL) == CL_SUCCESS) {
      fprintf(f, "-- binary (%zu bytes)\n", size);
      fwrite(bin, 1, size, f);
      fputc('\n', f);
    }
    free(bin);
  }
  fclose(f);
}

clphmm_status cph_kernel_build(cl_context ctx, const cph_device *dev,
                               const cph_variant *v, int dbl,
                               cph_kernel *out) {
  char *texts[N_PROGRAM_FILES] = {0};
  size_t sizes[N_PROGRAM_FILES];
  clphmm_status st = CLPHMM_SUCCESS;
  for (size_t i = 0; i < N_PROGRAM_FILES && !st; i++)
    if (!(st = load_file(program_files[i], &texts[i])))
      sizes[i] = strlen(texts[i]);
  cl_program prog = NULL;
  cl_int err = CL_SUCCESS;
  char opts[1024];
  const cph_variant fit = cph_variant_fit(v, dbl, dev);
  cph_variant_options(&fit, dbl, opts, sizeof opts);
  if (!st) {
    prog = cph_cl.CreateProgramWithSource(ctx, N_PROGRAM_FILES,
                                          (const char **)texts, sizes, &err);
    if (err != CL_SUCCESS)
      st = cph_cl_fail(CLPHMM_ERROR_OPENCL, "clCreateProgramWithSource", err,
                       "creating the kernel program");
  }
  for (size_t i = 0; i < N_PROGRAM_FILES; i++)
    free(texts[i]);
  if (!st && (err = cph_cl.BuildProgram(prog, 1, &dev->id, opts, NULL,
                                        NULL)) != CL_SUCCESS)
    st = build_failed(prog, dev, err, opts);
  if (!st)
    append_build_log(prog, dev, opts);
  cl_kernel k = NULL;
  if (!st) {
    k = cph_cl.CreateKernel(prog, "pairhmm", &err);
    if (err != CL_SUCCESS)
      st = cph_cl_fail(CLPHMM_ERROR_BUILD_FAILED, "clCreateKernel", err,
                       "creating kernel 'pairhmm'");
  }
  if (st) {
    if (prog)
      cph_cl.ReleaseProgram(prog);
    return st;
  }
  out->program = prog;
  out->kernel = k;
  out->variant = fit;
  return CLPHMM_SUCCESS;
}

void cph_kernel_release(cph_kernel *k) {
  if (k->kernel)
    cph_cl.ReleaseKernel(k->kernel);
  if (k->program)
    cph_cl.ReleaseProgram(k->program);
  k->kernel = NULL;
  k->program = NULL;
}
