#include "opencl/build.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 4096

void cph_diag_note(clphmm_diagnostics *d, const char *fmt, ...) {
  size_t used = strlen(d->detail);
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (used + strlen(line) + 2 <= sizeof d->detail)
    snprintf(d->detail + used, sizeof d->detail - used, "%s\n", line);
}

void cph_variant_describe(const cph_variant *v, int dbl, char *buf, size_t n) {
  char name[64];
  cph_variant_name(v, name, sizeof name);
  snprintf(buf, n, "%s %s%s %s", name, cph_shuffle_name(v->shuffle),
           v->fma ? " fma" : "", dbl ? "double" : "float");
}

static clphmm_status build_failed(const cph_builder *b, cl_program prog,
                                  cl_int err, const char *opts) {
  char log[CPH_ERROR_MAX / 2];
  log[0] = '\0';
  cph_cl.GetProgramBuildInfo(prog, b->dev->id, CL_PROGRAM_BUILD_LOG,
                             sizeof log - 1, log, NULL);
  log[sizeof log - 1] = '\0';
  return cph_error(CLPHMM_ERROR_BUILD_FAILED,
                   "building the kernel for %s with options '%s' failed "
                   "with %s (%d); build log:\n%s",
                   b->dev->info.name, opts, cph_cl_error_name(err), (int)err,
                   log);
}

/* The program binary of a built program (malloc'd), or NULL. */
static unsigned char *program_binary(cl_program prog, size_t *size) {
  *size = 0;
  if (cph_cl.GetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof *size, size,
                            NULL) != CL_SUCCESS ||
      *size == 0)
    return NULL;
  unsigned char *bin = malloc(*size);
  if (bin && cph_cl.GetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin,
                                   NULL) != CL_SUCCESS) {
    free(bin);
    bin = NULL;
  }
  return bin;
}

/* Kernel development aid: with CLPHMM_BUILD_LOG=FILE, append each source
 * build's options and compiler log, failed ones included (register use with
 * -cl-nv-verbose) to FILE. */
static void append_build_log(const cph_builder *b, cl_program prog,
                             const char *opts) {
  const char *path = getenv("CLPHMM_BUILD_LOG");
  if (!path || !*path)
    return;
  char log[16384];
  log[0] = '\0';
  cph_cl.GetProgramBuildInfo(prog, b->dev->id, CL_PROGRAM_BUILD_LOG,
                             sizeof log - 1, log, NULL);
  log[sizeof log - 1] = '\0';
  FILE *f = fopen(path, "a");
  if (!f)
    return;
  fprintf(f, "== %s: %s\n%s\n", b->dev->info.name, opts, log);
  /* The program binary too: PTX text on NVIDIA, for counting instructions
   * in the inner loop. */
  size_t size;
  unsigned char *bin = program_binary(prog, &size);
  if (bin) {
    fprintf(f, "-- binary (%zu bytes)\n", size);
    fwrite(bin, 1, size, f);
    fputc('\n', f);
  }
  free(bin);
  fclose(f);
}

/* Build a program from a cached binary; any failure just means "rebuild
 * from source" (the caller deletes the entry). */
static int from_binary(const cph_builder *b, const unsigned char *bin,
                       size_t size, const char *opts, cl_program *out,
                       char *why, size_t why_n) {
  cl_int err, bin_status = CL_SUCCESS;
  cl_program prog = cph_cl.CreateProgramWithBinary(b->cl, 1, &b->dev->id, &size,
                                                   &bin, &bin_status, &err);
  if (err == CL_SUCCESS && bin_status != CL_SUCCESS)
    err = bin_status;
  if (err != CL_SUCCESS) {
    if (prog)
      cph_cl.ReleaseProgram(prog);
    snprintf(why, why_n, "clCreateProgramWithBinary failed with %s (%d)",
             cph_cl_error_name(err), (int)err);
    return -1;
  }
  err = cph_cl.BuildProgram(prog, 1, &b->dev->id, opts, NULL, NULL);
  if (err != CL_SUCCESS) {
    cph_cl.ReleaseProgram(prog);
    snprintf(why, why_n, "clBuildProgram of the binary failed with %s (%d)",
             cph_cl_error_name(err), (int)err);
    return -1;
  }
  *out = prog;
  return 0;
}

/* A variant's register cap (":rN") on NVIDIA, whose OpenCL compiler
 * ignores -cl-nv-maxrregcount: the program binary is PTX text, so the cap
 * goes in as a ".maxnreg" directive after the entry's ".reqntid" line and
 * the program is rebuilt from that PTX (the binary cache then keeps the
 * capped PTX). The long-read kernel needs it: left alone, the compiler
 * gives it 193 registers, which leaves room for 9 warps per multiprocessor
 * instead of 12 at 168, and its float pass at 1024 bases runs at 2.88
 * instead of 3.15 TCUPS (bench/results).
 * A binary that is not PTX keeps its program; the diagnostics say so. */
static clphmm_status cap_registers(const cph_builder *b, const char *opts,
                                   unsigned maxreg, cl_program *prog) {
  if (!maxreg)
    return CLPHMM_SUCCESS;
  size_t size;
  unsigned char *bin = program_binary(*prog, &size);
  const char *at =
      bin && memchr(bin, '\0', size) ? strstr((char *)bin, ".reqntid") : NULL;
  const char *eol = at ? strchr(at, '\n') : NULL;
  if (!eol) {
    free(bin);
    cph_diag_note(b->diag,
                  "register cap :r%u not applied: the program "
                  "binary of %s is not PTX",
                  maxreg, b->dev->info.name);
    return CLPHMM_SUCCESS;
  }
  char dir[32];
  const int dl = snprintf(dir, sizeof dir, ".maxnreg %u\n", maxreg);
  const size_t cut = (size_t)(eol + 1 - (const char *)bin), n = size + dl;
  unsigned char *ptx = malloc(n);
  if (!ptx) {
    free(bin);
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for the PTX");
  }
  memcpy(ptx, bin, cut);
  memcpy(ptx + cut, dir, (size_t)dl);
  memcpy(ptx + cut + dl, bin + cut, size - cut);
  free(bin);
  cl_program capped = NULL;
  char why[256];
  const int bad = from_binary(b, ptx, n, opts, &capped, why, sizeof why);
  free(ptx);
  if (bad)
    return cph_error(CLPHMM_ERROR_BUILD_FAILED,
                     "building the kernel with register cap :r%u: %s", maxreg,
                     why);
  cph_cl.ReleaseProgram(*prog);
  *prog = capped;
  return CLPHMM_SUCCESS;
}

static clphmm_status from_source(const cph_builder *b, const char *opts,
                                 unsigned maxreg, cl_program *out) {
  cph_sources s;
  clphmm_status st = cph_program_sources(&s);
  if (st)
    return st;
  cl_int err;
  cl_program prog = cph_cl.CreateProgramWithSource(
      b->cl, CPH_N_PROGRAM_FILES, (const char **)s.text, s.size, &err);
  cph_sources_free(&s);
  if (err != CL_SUCCESS)
    return cph_cl_fail(CLPHMM_ERROR_OPENCL, "clCreateProgramWithSource", err,
                       "creating the kernel program");
  b->diag->programs_compiled++;
  err = cph_cl.BuildProgram(prog, 1, &b->dev->id, opts, NULL, NULL);
  append_build_log(b, prog, opts); /* failed builds too: their errors */
  if (err != CL_SUCCESS) {
    st = build_failed(b, prog, err, opts);
    cph_cl.ReleaseProgram(prog);
    return st;
  }
  *out = prog;
  st = cap_registers(b, opts, maxreg, out);
  if (st) {
    cph_cl.ReleaseProgram(*out);
    *out = NULL;
  }
  return st;
}

/* The program's kernels: the lane-group kernel, and the row preparation
 * where the program has it (cl/prep.cl: not on devices whose scaled form
 * lacks double arithmetic; the host prepares rows then). */
static int make_kernel(cl_program prog, cph_kernel *out, cl_int *err) {
  out->kernel = cph_cl.CreateKernel(prog, "pairhmm", err);
  if (*err != CL_SUCCESS)
    return -1;
  cl_int perr;
  out->prep = cph_cl.CreateKernel(prog, "prep_rows", &perr);
  if (perr != CL_SUCCESS)
    out->prep = NULL;
  return 0;
}

/* Try the cache: 0 and *out set on a hit that builds, -1 otherwise (bad
 * entries are deleted, counted and noted). */
static int try_cache(const cph_builder *b, const char *key, const char *opts,
                     cph_kernel *out) {
  /* Build logs are only produced by source builds. */
  const char *log = getenv("CLPHMM_BUILD_LOG");
  if (log && *log)
    return -1;
  unsigned char *bin = NULL;
  size_t size = 0;
  char why[CPH_CACHE_PATH_MAX + 512], refused[256];
  cph_cache_result r =
      cph_cache_get(b->cache, key, &bin, &size, why, sizeof why);
  if (r == CPH_CACHE_HIT) {
    cl_program prog = NULL;
    cl_int err;
    int bad = from_binary(b, bin, size, opts, &prog, refused, sizeof refused);
    free(bin);
    if (!bad && make_kernel(prog, out, &err)) {
      cph_cl.ReleaseProgram(prog);
      snprintf(refused, sizeof refused, "clCreateKernel failed with %s (%d)",
               cph_cl_error_name(err), (int)err);
      bad = 1;
    }
    if (!bad) {
      out->program = prog;
      b->diag->programs_loaded++;
      return 0;
    }
    char path[CPH_CACHE_PATH_MAX + 32];
    cph_cache_entry_path(b->cache, key, path, sizeof path);
    snprintf(why, sizeof why, "%s: the driver refused the binary: %s", path,
             refused);
    cph_cache_remove(b->cache, key);
    r = CPH_CACHE_REJECTED;
  }
  if (r == CPH_CACHE_REJECTED) {
    b->diag->cache_rejected++;
    cph_diag_note(b->diag, "kernel cache: rejected an entry (%s)", why);
  }
  return -1;
}

static void store(const cph_builder *b, const char *key, cl_program prog) {
  if (!b->cache->writable)
    return;
  size_t size;
  unsigned char *bin = program_binary(prog, &size);
  if (!bin)
    return;
  char why[CPH_CACHE_NOTE_MAX + 64];
  if (cph_cache_put(b->cache, key, bin, size, why, sizeof why) == 0)
    b->diag->cache_writes++;
  else
    cph_diag_note(b->diag, "%s", why);
  free(bin);
}

clphmm_status cph_kernel_build(const cph_builder *b, const cph_variant *asked,
                               int dbl, cph_kernel *out) {
  char opts[CPH_OPTIONS_MAX], id[128], key[KEY_MAX];
  /* Work-groups shrink until the local memory fits (double tables are
   * twice as large); the launch uses the variant as built. */
  const cph_variant fit = cph_variant_fit(asked, dbl, b->dev);
  const cph_variant *v = &fit;
  cph_variant_options(v, dbl, opts, sizeof opts);
  memset(out, 0, sizeof *out);
  out->variant = *v;
  out->dbl = dbl;
  clphmm_status st = CLPHMM_SUCCESS;
  if (b->cache->readable) {
    st = cph_program_source_id(id, sizeof id);
    if (st)
      return st;
    cph_cache_key(b->dev, id, opts, key, sizeof key);
    if (try_cache(b, key, opts, out) == 0)
      return CLPHMM_SUCCESS;
    snprintf(out->source_id, sizeof out->source_id, "%s", id);
    snprintf(out->options, sizeof out->options, "%s", opts);
  }
  cl_program prog = NULL;
  st = from_source(b, opts, v->maxreg, &prog);
  if (st)
    return st;
  cl_int err;
  if (make_kernel(prog, out, &err)) {
    cph_cl.ReleaseProgram(prog);
    return cph_cl_fail(CLPHMM_ERROR_BUILD_FAILED, "clCreateKernel", err,
                       "creating kernel 'pairhmm'");
  }
  out->program = prog;
  out->unsaved = b->cache->readable && b->cache->writable;
  return CLPHMM_SUCCESS;
}

static void save_now(const cph_builder *b, const cph_kernel *k) {
  char key[KEY_MAX];
  if (!k->source_id[0])
    return;
  cph_cache_key(b->dev, k->source_id, k->options, key, sizeof key);
  store(b, key, k->program);
}

void cph_kernel_save(const cph_builder *b, cph_kernel *k) {
  if (!k->unsaved || !k->program)
    return;
  k->unsaved = 0;
  save_now(b, k);
}

void cph_kernel_share(const cph_builder *b, const cph_kernel *k) {
  if (k->unsaved && k->program)
    save_now(b, k);
}

/* The smallest generic variant, within the device's work-group limit. */
static cph_variant simplest(const cph_builder *b, const cph_variant *v) {
  cph_variant s = {.g = 4,
                   .c = 4,
                   .wg = 64,
                   .shuffle = CPH_SHUFFLE_LOCAL,
                   .fma = v->fma,
                   .scaled = v->scaled};
  while (s.wg > s.g && s.wg > b->dev->max_work_group_size)
    s.wg /= 2;
  return s;
}

static int same_variant(const cph_variant *a, const cph_variant *b) {
  return a->g == b->g && a->c == b->c && a->wg == b->wg && a->vec == b->vec &&
         a->shuffle == b->shuffle && a->fma == b->fma &&
         a->scaled == b->scaled && a->seq == b->seq && a->maxreg == b->maxreg;
}

clphmm_status cph_kernel_obtain(const cph_builder *b, const cph_variant *v,
                                int dbl, cph_kernel *out) {
  clphmm_status first = cph_kernel_build(b, v, dbl, out);
  if (!first)
    return CLPHMM_SUCCESS;
  char saved[CPH_ERROR_MAX];
  snprintf(saved, sizeof saved, "%s", cph_error_message());
  cph_variant tries[2] = {*v, simplest(b, v)};
  tries[0].shuffle = CPH_SHUFFLE_LOCAL;
  for (int i = 0; i < 2; i++) {
    if (same_variant(&tries[i], v) || (i && same_variant(&tries[1], &tries[0])))
      continue;
    if (cph_kernel_build(b, &tries[i], dbl, out) == CLPHMM_SUCCESS) {
      char want[96], got[96];
      cph_variant_describe(v, dbl, want, sizeof want);
      cph_variant_describe(&tries[i], dbl, got, sizeof got);
      b->diag->variant_fallbacks++;
      /* First line of the failure only: the log can be long. */
      size_t cut = strcspn(saved, "\n");
      cph_diag_note(b->diag, "variant %s failed to build (%.*s); using %s",
                    want, (int)(cut < 600 ? cut : 600), saved, got);
      cph_error(CLPHMM_SUCCESS, "%s", saved);
      return CLPHMM_SUCCESS;
    }
  }
  return cph_error(first, "%s", saved);
}

void cph_kernel_release(cph_kernel *k) {
  if (k->kernel)
    cph_cl.ReleaseKernel(k->kernel);
  if (k->prep)
    cph_cl.ReleaseKernel(k->prep);
  k->prep = NULL;
  if (k->program)
    cph_cl.ReleaseProgram(k->program);
  k->kernel = NULL;
  k->program = NULL;
  k->args.set = k->prep_args.set = 0;
}
