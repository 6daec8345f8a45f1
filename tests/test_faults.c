/* Faults, each forced, and the on-disk kernel cache:
 *  - the cache: a cold start compiles and stores, a warm start compiles
 *    nothing (the OpenCL shim counts clCreateProgramWithSource calls);
 *    corrupt, truncated, foreign and unloadable entries are deleted and
 *    rebuilt; an uncreatable or read-only directory only turns caching off;
 *    two processes fill one directory at once;
 *  - a kernel variant that fails to build falls back to a simpler one, or
 *    the call fails with the build log;
 *  - device allocations fail (a tiny memory limit): the work is split, or
 *    the call fails cleanly;
 *  - an OpenCL call fails mid-run: the status names the call and the error,
 *    the context is recreated, or says it is not usable;
 *  - a speculative pass left to the next call: that call's wait for it
 *    fails, or its allocations do; one queue; two engines;
 *  - no OpenCL platform, no device: clear statuses.
 * Faults come from tests/clshim.c, loaded as the OpenCL library. Results
 * are always checked against the CPU reference. Exit 77 without a device
 * (unless CLPHMM_TEST_REQUIRE_DEVICE is set). */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/context.h"
#include "model/validate.h"
#include "opencl/cache.h"
#include "test_util.h"
#include "tuning/plan.h"
#include "workload.h"

#define SENTINEL 12345.0

static int (*shim_configure)(const char *);
static long (*shim_calls)(const char *);
static long (*shim_objects)(long *, char *, size_t);

static workload g_work;
static double *g_ref[2];   /* reference results by precision */
static char g_base[1024];  /* scratch directory of this run */
static char g_cache[1100]; /* kernel cache of the tests that are not about it */

/* ---- helpers ------------------------------------------------------------ */

static void shim(const char *rules) {
  if (shim_configure(rules) != 0) {
    fprintf(stderr, "bad shim rules '%s'\n", rules);
    exit(2);
  }
}

static int contains(const char *hay, const char *needle) {
  return hay && strstr(hay, needle) != NULL;
}

static void scratch_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/%s", g_base, name);
}

static void remove_tree(const char *path) {
  DIR *d = opendir(path);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
        continue;
      char sub[2048];
      snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
      remove_tree(sub);
    }
    closedir(d);
    chmod(path, 0755);
    rmdir(path);
  } else {
    unlink(path);
  }
}

/* Files in `dir` whose name contains `part`; names into out (may be NULL). */
static size_t list_files(const char *dir, const char *part, char out[][512],
                         size_t max) {
  DIR *d = opendir(dir);
  size_t n = 0;
  if (!d)
    return 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strstr(e->d_name, part)) {
      if (out && n < max)
        snprintf(out[n], 512, "%s/%s", dir, e->d_name);
      n++;
    }
  closedir(d);
  return n;
}

/* A context on `devices` (NULL: the default device). */
static clphmm_context *open_ctx_on(clphmm_precision p, const char *cache_dir,
                                   uint64_t max_device_bytes,
                                   const char *devices) {
  clphmm_options o;
  clphmm_options_init(&o);
  o.precision = p;
  o.cache_dir = cache_dir;
  o.max_device_bytes = max_device_bytes;
  o.device = devices;
  clphmm_context *ctx = NULL;
  CHECK_STATUS(clphmm_context_create(&o, &ctx), CLPHMM_SUCCESS, NULL);
  return ctx;
}

static clphmm_context *open_ctx(clphmm_precision p, const char *cache_dir,
                                uint64_t max_device_bytes) {
  return open_ctx_on(p, cache_dir, max_device_bytes, NULL);
}

static clphmm_diagnostics diag(const clphmm_context *ctx) {
  clphmm_diagnostics d;
  memset(&d, 0, sizeof d);
  CHECK_STATUS(clphmm_context_diagnostics(ctx, &d), CLPHMM_SUCCESS, ctx);
  return d;
}

/* Compute the workload and check it against the reference. Returns the
 * results (caller frees) or NULL when the call failed. */
static double *compute_ok(clphmm_context *ctx, const char *what) {
  if (!ctx)
    return NULL;
  double *out = workload_out(&g_work, SENTINEL);
  if (CHECK_STATUS(clphmm_compute(ctx, g_work.batches, g_work.n_batches, out),
                   CLPHMM_SUCCESS, ctx) != CLPHMM_SUCCESS) {
    CHECK(0, "%s: compute failed", what);
    free(out);
    return NULL;
  }
  double level = ctx->precision ? 1e-7 : 1e-5;
  double d = workload_diff(&g_work, out, g_ref[ctx->precision]);
  CHECK(d <= level, "%s: results differ from the reference by %g", what, d);
  return out;
}

static void compute_check(clphmm_context *ctx, const char *what) {
  free(compute_ok(ctx, what));
}

/* A compute call of n_batches batches (n_pairs pairs) that must fail with
 * `want`, leaving the output untouched and a message that contains every
 * string of `needles` (NULL-ended). */
static void batches_fail(clphmm_context *ctx, const clphmm_batch *batches,
                         size_t n_batches, size_t n_pairs, clphmm_status want,
                         const char *what, const char *const *needles) {
  double *out = malloc((n_pairs ? n_pairs : 1) * sizeof *out);
  if (!out)
    abort();
  for (size_t i = 0; i < n_pairs; i++)
    out[i] = SENTINEL;
  CHECK_STATUS(clphmm_compute(ctx, batches, n_batches, out), want, ctx);
  int untouched = 1;
  for (size_t i = 0; i < n_pairs; i++)
    untouched &= out[i] == SENTINEL;
  CHECK(untouched, "%s: output written by a failed call", what);
  for (const char *const *n = needles; *n; n++)
    CHECK(contains(clphmm_last_error(ctx), *n), "%s: message lacks '%s': %s",
          what, *n, clphmm_last_error(ctx));
  free(out);
}

/* The same on the workload. */
static void compute_fails(clphmm_context *ctx, clphmm_status want,
                          const char *what, const char *const *needles) {
  batches_fail(ctx, g_work.batches, g_work.n_batches, g_work.n_pairs, want,
               what, needles);
}

/* ---- the kernel cache ---------------------------------------------------- */

/* A cold start compiles and stores every kernel; a warm start (new
 * context, same directory) compiles nothing and gives the same bits. */
static void test_cold_warm(const char *dir) {
  shim("");
  clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_FLOAT, dir, 0);
  CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_SUCCESS, ctx);
  double *cold = compute_ok(ctx, "cold cache");
  clphmm_diagnostics d = diag(ctx);
  CHECK(d.cache_enabled && d.cache_writable, "cache off: %s", d.detail);
  CHECK(!strcmp(d.cache_dir, dir), "cache dir '%s', want '%s'", d.cache_dir,
        dir);
  CHECK(d.programs_compiled > 0 && d.programs_loaded == 0,
        "cold: %llu compiled, %llu loaded",
        (unsigned long long)d.programs_compiled,
        (unsigned long long)d.programs_loaded);
  CHECK(d.cache_writes == d.programs_compiled, "cold: %llu writes",
        (unsigned long long)d.cache_writes);
  CHECK(list_files(dir, ".clbin", NULL, 0) == d.cache_writes,
        "cold: %zu entries on disk", list_files(dir, ".clbin", NULL, 0));
  CHECK(shim_calls("clCreateProgramWithSource") == (long)d.programs_compiled,
        "cold: %ld source programs", shim_calls("clCreateProgramWithSource"));
  clphmm_context_destroy(ctx);

  shim("");
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, dir, 0);
  CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_SUCCESS, ctx);
  double *warm = compute_ok(ctx, "warm cache");
  d = diag(ctx);
  CHECK(d.programs_compiled == 0 && d.programs_loaded > 0 &&
            d.cache_writes == 0 && d.cache_rejected == 0,
        "warm: %llu compiled, %llu loaded, %llu written, %llu rejected",
        (unsigned long long)d.programs_compiled,
        (unsigned long long)d.programs_loaded,
        (unsigned long long)d.cache_writes,
        (unsigned long long)d.cache_rejected);
  CHECK(shim_calls("clCreateProgramWithSource") == 0,
        "warm start compiled %ld programs from source",
        shim_calls("clCreateProgramWithSource"));
  CHECK(cold && warm && !memcmp(cold, warm, g_work.n_pairs * sizeof *cold),
        "warm results differ from cold ones");
  free(cold);
  free(warm);
  clphmm_context_destroy(ctx);
}

/* A program is stored under the key it was built with: kernel files of
 * $CLPHMM_KERNEL_DIR edited between a context's build and its first
 * compute (where programs are stored) once stored the old source's binary
 * under the new source's key, which the next context then loaded. */
static void test_edited_sources(void) {
  char kdir[1100], cdir[1100], cmd[2400];
  scratch_path(kdir, sizeof kdir, "kernels");
  scratch_path(cdir, sizeof cdir, "edited-cache");
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s'/*.cl '%s'/", kdir,
           CLPHMM_TEST_KERNELS, kdir);
  CHECK(system(cmd) == 0, "cannot copy the kernel sources: %s", cmd);
  setenv("CLPHMM_KERNEL_DIR", kdir, 1);
  /* (One program a context: double mode, one variant; PoCL compiles each
   * from source here, twice.) */
  char *vars = test_env_set("CLPHMM_DOUBLE_VARIANTS", "8x4/64");
  shim("");
  clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_DOUBLE, cdir, 0);
  CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_SUCCESS, ctx);
  snprintf(cmd, sizeof cmd, "echo '/* edited */' >> '%s/prelude.cl'", kdir);
  CHECK(system(cmd) == 0, "cannot edit %s/prelude.cl", kdir);
  free(compute_ok(ctx, "built before the edit"));
  CHECK(diag(ctx).cache_writes > 0, "nothing stored before the edit");
  clphmm_context_destroy(ctx);
  ctx = open_ctx(CLPHMM_PRECISION_DOUBLE, cdir, 0);
  CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_SUCCESS, ctx);
  const clphmm_diagnostics d = diag(ctx);
  CHECK(d.programs_loaded == 0 && d.programs_compiled > 0,
        "the edited sources: %llu programs loaded from the cache (another "
        "source's), %llu compiled",
        (unsigned long long)d.programs_loaded,
        (unsigned long long)d.programs_compiled);
  clphmm_context_destroy(ctx);
  unsetenv("CLPHMM_KERNEL_DIR");
  test_env_restore("CLPHMM_DOUBLE_VARIANTS", vars);
  remove_tree(kdir);
  remove_tree(cdir);
}

/* CLPHMM_CACHE_DIR="" or options.cache_dir = "" turn the cache off. */
static void test_disabled(void) {
  shim("");
  const char *saved = getenv("CLPHMM_CACHE_DIR");
  char keep[1024];
  snprintf(keep, sizeof keep, "%s", saved ? saved : "");
  setenv("CLPHMM_CACHE_DIR", "", 1);
  clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_FLOAT, NULL, 0);
  compute_check(ctx, "cache disabled by the environment");
  clphmm_diagnostics d = diag(ctx);
  CHECK(!d.cache_enabled && d.cache_writes == 0 && d.programs_loaded == 0 &&
            contains(d.detail, "disabled"),
        "CLPHMM_CACHE_DIR=\"\": enabled %d, detail '%s'", d.cache_enabled,
        d.detail);
  clphmm_context_destroy(ctx);
  if (saved)
    setenv("CLPHMM_CACHE_DIR", keep, 1);
  else
    unsetenv("CLPHMM_CACHE_DIR");
  /* PoCL cannot share binaries without its own cache (src/opencl/cache.c). */
  const char *pocl = getenv("POCL_KERNEL_CACHE");
  snprintf(keep, sizeof keep, "%s", pocl ? pocl : "");
  setenv("POCL_KERNEL_CACHE", "0", 1);
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, NULL, 0);
  d = diag(ctx);
  if (ctx &&
      contains(ctx->eng[0]->dev.info.platform, "Portable Computing Language"))
    CHECK(!d.cache_enabled && contains(d.detail, "POCL_KERNEL_CACHE=0"),
          "PoCL uncached: enabled %d, detail '%s'", d.cache_enabled, d.detail);
  clphmm_context_destroy(ctx);
  if (pocl)
    setenv("POCL_KERNEL_CACHE", keep, 1);
  else
    unsetenv("POCL_KERNEL_CACHE");
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, "", 0);
  d = diag(ctx);
  CHECK(!d.cache_enabled, "cache_dir = \"\" left the cache on");
  clphmm_context_destroy(ctx);
}

static int write_bytes(const char *path, const unsigned char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t w = fwrite(b, 1, n, f);
  return fclose(f) == 0 && w == n ? 0 : -1;
}

static unsigned char *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(size > 0 ? (size_t)size : 1);
  *n = b ? fread(b, 1, (size_t)size, f) : 0;
  fclose(f);
  return b;
}

/* Damage entry `path` in one of six ways. Returns what was done. */
static const char *damage(const char *path, const char *other, int how) {
  size_t n = 0;
  unsigned char *b = read_bytes(path, &n);
  const char *what = "?";
  if (!b || n < 64) {
    free(b);
    return "unreadable";
  }
  switch (how % 6) {
  case 0: /* one flipped bit at the end of the payload */
    b[n - 1] ^= 0x10;
    write_bytes(path, b, n);
    what = "flipped bit";
    break;
  case 1:
    write_bytes(path, b, n / 2);
    what = "truncated to half";
    break;
  case 2:
    write_bytes(path, b, 10);
    what = "truncated header";
    break;
  case 3:
    write_bytes(path, b, 0);
    what = "empty";
    break;
  case 4: { /* another entry's bytes under this name */
    size_t m = 0;
    unsigned char *o = read_bytes(other, &m);
    if (o)
      write_bytes(path, o, m);
    free(o);
    what = "foreign entry";
    break;
  }
  case 5: { /* a sound entry whose payload is not a program binary */
    uint32_t klen = (uint32_t)b[12] | (uint32_t)b[13] << 8 |
                    (uint32_t)b[14] << 16 | (uint32_t)b[15] << 24;
    char *key = calloc(1, klen + 1);
    memcpy(key, b + 32, klen);
    static const unsigned char junk[] = "not a program binary at all";
    size_t m;
    unsigned char *e = cph_cache_encode(key, junk, sizeof junk, &m);
    write_bytes(path, e, m);
    free(e);
    free(key);
    what = "unloadable binary";
    break;
  }
  }
  free(b);
  return what;
}

static void test_bad_entries(const char *dir) {
  char files[64][512];
  size_t n = list_files(dir, ".clbin", files, 64);
  CHECK(n >= 6, "only %zu cache entries to damage", n);
  if (n > 64)
    n = 64;
  for (size_t i = 0; i < n; i++)
    printf("damaged %s: %s\n", strrchr(files[i], '/') + 1,
           damage(files[i], files[(i + 1) % n], (int)i));
  shim("");
  clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_FLOAT, dir, 0);
  CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_SUCCESS, ctx);
  compute_check(ctx, "damaged cache");
  clphmm_diagnostics d = diag(ctx);
  CHECK(d.cache_rejected == n && d.programs_compiled == n &&
            d.cache_writes == n,
        "damaged: %zu entries, %llu rejected, %llu compiled, %llu written", n,
        (unsigned long long)d.cache_rejected,
        (unsigned long long)d.programs_compiled,
        (unsigned long long)d.cache_writes);
  CHECK(contains(d.detail, "checksum") && contains(d.detail, "truncated") &&
            contains(d.detail, "foreign") && contains(d.detail, "binary"),
        "damaged: detail '%s'", d.detail);
  clphmm_context_destroy(ctx);
  /* Everything was rewritten: the next start is warm again. */
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, dir, 0);
  CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_SUCCESS, ctx);
  d = diag(ctx);
  CHECK(d.programs_compiled == 0 && d.cache_rejected == 0,
        "after repair: %llu compiled, %llu rejected",
        (unsigned long long)d.programs_compiled,
        (unsigned long long)d.cache_rejected);
  clphmm_context_destroy(ctx);
}

/* A directory that cannot be created, or cannot be written. */
static void test_unusable_dirs(const char *populated) {
  char file[1100], below[1200], ro[1100];
  scratch_path(file, sizeof file, "a-file");
  write_bytes(file, (const unsigned char *)"x", 1);
  snprintf(below, sizeof below, "%s/cache", file);
  shim("");
  clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_FLOAT, below, 0);
  compute_check(ctx, "cache under a regular file");
  clphmm_diagnostics d = diag(ctx);
  CHECK(!d.cache_enabled && contains(d.detail, "cannot create"),
        "uncreatable dir: enabled %d, detail '%s'", d.cache_enabled, d.detail);
  clphmm_context_destroy(ctx);

  if (geteuid() == 0) {
    printf("skip: read-only directories (permissions do not bind root)\n");
    return;
  }
  scratch_path(ro, sizeof ro, "read-only");
  mkdir(ro, 0555);
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, ro, 0);
  compute_check(ctx, "read-only empty cache");
  d = diag(ctx);
  CHECK(d.cache_enabled && !d.cache_writable && d.cache_writes == 0 &&
            contains(d.detail, "read-only"),
        "read-only dir: writable %d, detail '%s'", d.cache_writable, d.detail);
  clphmm_context_destroy(ctx);
  /* A read-only but filled cache still serves its entries. */
  chmod(populated, 0555);
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, populated, 0);
  compute_check(ctx, "read-only filled cache");
  d = diag(ctx);
  CHECK(d.programs_compiled == 0 && d.programs_loaded > 0,
        "read-only filled cache: %llu compiled",
        (unsigned long long)d.programs_compiled);
  clphmm_context_destroy(ctx);
  chmod(populated, 0755);
}

/* Two processes fill one empty cache at the same moment (a pipe releases
 * both at once). Runs before this process touches OpenCL, so the children
 * fork from a process without OpenCL threads. */
static void test_concurrent_fill(const char *dir) {
  int go[2];
  if (pipe(go) != 0) {
    CHECK(0, "pipe: %s", strerror(errno));
    return;
  }
  pid_t kids[2];
  fflush(stdout);
  for (int k = 0; k < 2; k++) {
    kids[k] = fork();
    if (kids[k] == 0) {
      close(go[1]);
      char c;
      size_t nd = 0;
      if (clphmm_device_count(&nd) != CLPHMM_SUCCESS || nd == 0)
        _exit(77);
      clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_FLOAT, dir, 0);
      if (read(go[0], &c, 1) < 0)
        _exit(3);
      if (ctx)
        CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_SUCCESS, ctx);
      compute_check(ctx, "concurrent fill");
      clphmm_context_destroy(ctx);
      _exit(test_checks_failed == 0 && test_checks_passed > 0 ? 0 : 1);
    }
  }
  close(go[0]);
  close(go[1]); /* both children start now */
  for (int k = 0; k < 2; k++) {
    int status = 0;
    waitpid(kids[k], &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
      continue; /* no device: main() skips or fails */
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "concurrent fill: child %d failed (status %d)", k, status);
  }
  CHECK(list_files(dir, ".tmp.", NULL, 0) == 0,
        "concurrent fill left temporary files");
}

static void test_after_concurrent_fill(const char *dir) {
  shim("");
  clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_FLOAT, dir, 0);
  CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_SUCCESS, ctx);
  compute_check(ctx, "after the concurrent fill");
  clphmm_diagnostics d = diag(ctx);
  CHECK(d.programs_compiled == 0 && d.cache_rejected == 0,
        "after the concurrent fill: %llu compiled, %llu rejected (%s)",
        (unsigned long long)d.programs_compiled,
        (unsigned long long)d.cache_rejected, d.detail);
  clphmm_context_destroy(ctx);
}

/* ---- kernel build failures ------------------------------------------------
 */

static void test_build_fallback(void) {
  /* Every build of the 16-lane variants fails. */
  shim("clBuildProgram~-DCPH_G=16 ");
  clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_FLOAT, g_cache, 0);
  int has16 = 0;
  for (size_t v = 0; ctx && v < ctx->eng[0]->variants[0].n; v++)
    has16 |= ctx->eng[0]->variants[0].v[v].g == 16;
  CHECK(has16, "no 16-lane variant to break");
  compute_check(ctx, "16-lane variants replaced");
  clphmm_diagnostics d = diag(ctx);
  CHECK(d.variant_fallbacks > 0 && contains(d.detail, "16x") &&
            contains(d.detail, "failed to build") &&
            contains(d.detail, "using 4x4"),
        "fallback: %llu, detail '%s'", (unsigned long long)d.variant_fallbacks,
        d.detail);
  CHECK(contains(clphmm_last_error(ctx), "replaced"),
        "fallback not in the last-error detail: %s", clphmm_last_error(ctx));
  clphmm_context_destroy(ctx);

  /* A backend that cannot compile here: the local-memory one replaces it. */
  shim("");
  setenv("CLPHMM_SHUFFLE", "nvidia", 1);
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, g_cache, 0);
  unsetenv("CLPHMM_SHUFFLE");
  compute_check(ctx, "nvidia shuffles replaced");
  d = diag(ctx);
  if (ctx && !contains(ctx->eng[0]->dev.info.vendor, "NVIDIA"))
    CHECK(d.variant_fallbacks > 0 && contains(d.detail, "nvidia") &&
              contains(d.detail, "local"),
          "nvidia backend off NVIDIA: %llu fallbacks, detail '%s'",
          (unsigned long long)d.variant_fallbacks, d.detail);
  clphmm_context_destroy(ctx);

  /* Nothing builds: a clean failure with the build log; the context
   * recovers once building works again. */
  shim("clBuildProgram");
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, g_cache, 0);
  static const char *const build[] = {"build log", "CL_BUILD_PROGRAM_FAILURE",
                                      "-DCPH_G=", NULL};
  if (ctx)
    compute_fails(ctx, CLPHMM_ERROR_BUILD_FAILED, "no variant builds", build);
  shim("");
  compute_check(ctx, "after build failures");
  clphmm_context_destroy(ctx);
}

/* ---- device memory --------------------------------------------------------
 */

static void test_memory(void) {
  shim("");
  clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_FLOAT, g_cache, 0);
  double *whole = compute_ok(ctx, "default memory");
  clphmm_stats st0, st1;
  clphmm_context_stats(ctx, &st0);
  clphmm_context_destroy(ctx);

  /* A planning bound: more, smaller chunks, the same bits. */
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, g_cache, 64 << 10);
  double *small = compute_ok(ctx, "max_device_bytes 64 KiB");
  clphmm_context_stats(ctx, &st1);
  CHECK(st1.launches > st0.launches, "64 KiB: %llu launches, default %llu",
        (unsigned long long)st1.launches, (unsigned long long)st0.launches);
  CHECK(whole && small && !memcmp(whole, small, g_work.n_pairs * 8),
        "64 KiB chunks change the results");
  free(small);
  clphmm_context_destroy(ctx);

  /* A device of 384 KiB that the planner does not know about: allocations
   * fail and the work is halved until it fits. (Not 256 KiB: the row
   * tables alone, which are not halved, take 135 KiB since they hold the
   * reciprocals of the scaled form.) */
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, g_cache, 0);
  shim("mem=393216");
  double *split = compute_ok(ctx, "384 KiB device");
  clphmm_diagnostics d = diag(ctx);
  CHECK(d.alloc_retries > 0, "384 KiB device: no retry");
  CHECK(whole && split && !memcmp(whole, split, g_work.n_pairs * 8),
        "halved work changes the results");
  free(split);

  /* A driver that allocates on first use: the launch reports it. */
  shim("clEnqueueNDRangeKernel@1:-4");
  uint64_t retries = diag(ctx).alloc_retries;
  split = compute_ok(ctx, "allocation failure at launch");
  CHECK(diag(ctx).alloc_retries > retries, "launch allocation: no retry");
  CHECK(whole && split && !memcmp(whole, split, g_work.n_pairs * 8),
        "halved work changes the results");
  free(split);

  /* The same in a profiled context of small chunks, the failure after
   * some chunks were collected: their kernels' intervals stay in the
   * call's kernel time (the retry releases the buffers, not them): one
   * per kernel event collected. */
  shim("");
  setenv("CLPHMM_PROFILE", "1", 1);
  clphmm_context *pctx = open_ctx(CLPHMM_PRECISION_FLOAT, g_cache, 64 << 10);
  unsetenv("CLPHMM_PROFILE");
  if (pctx) {
    shim("clEnqueueNDRangeKernel@8:-4");
    retries = diag(pctx).alloc_retries;
    split = compute_ok(pctx, "allocation failure at a later launch");
    clphmm_stats ps;
    clphmm_context_stats(pctx, &ps);
    const cph_engine *e = pctx->eng[0];
    CHECK(diag(pctx).alloc_retries > retries && ps.launches > 8 &&
              e->kernel_spans.n == e->kernel_events &&
              e->kernel_events >= ps.launches && ps.kernel_seconds > 0,
          "later launch allocation: %zu kernel intervals for %lu kernel "
          "events, %llu launches",
          e->kernel_spans.n, e->kernel_events, (unsigned long long)ps.launches);
    free(split);
    shim("");
  }
  clphmm_context_destroy(pctx);

  /* A device too small for a single pair: a clean failure. (A new
   * context: the buffers a context keeps from its earlier calls would
   * serve the call without a new allocation.) */
  shim("");
  clphmm_context_destroy(ctx);
  ctx = open_ctx(CLPHMM_PRECISION_FLOAT, g_cache, 0);
  shim("mem=64");
  static const char *const oom[] = {"clCreateBuffer",
                                    "CL_MEM_OBJECT_ALLOCATION_FAILURE",
                                    "stays usable", NULL};
  if (ctx)
    compute_fails(ctx, CLPHMM_ERROR_OPENCL, "64-byte device", oom);
  shim("");
  compute_check(ctx, "after running out of device memory");
  free(whole);
  clphmm_context_destroy(ctx);
}

/* ---- OpenCL failures mid-run -------------------------------------------- */

static void test_mid_run(void) {
  shim("");
  clphmm_context *ctx = open_ctx(CLPHMM_PRECISION_FLOAT, g_cache, 0);
  if (!ctx)
    return;
  static const char *const launch[] = {
      "clEnqueueNDRangeKernel", "CL_OUT_OF_RESOURCES", "stays usable", NULL};
  shim("clEnqueueNDRangeKernel@2");
  compute_fails(ctx, CLPHMM_ERROR_OPENCL, "second launch fails", launch);
  CHECK(diag(ctx).resets == 1, "no reset after a failed launch");
  shim("");
  compute_check(ctx, "after a failed launch");

  static const char *const read[] = {"clEnqueueReadBuffer", "CL_INVALID_VALUE",
                                     NULL};
  shim("clEnqueueReadBuffer@1:-30");
  compute_fails(ctx, CLPHMM_ERROR_OPENCL, "result download fails", read);
  shim("");
  compute_check(ctx, "after a failed download");

  /* The reset fails too: the context says it is not usable, and stays so
   * while OpenCL keeps failing, then recovers. */
  static const char *const dead[] = {"clEnqueueNDRangeKernel", "not usable",
                                     "clCreateContext", NULL};
  shim("clEnqueueNDRangeKernel@1,clCreateContext");
  compute_fails(ctx, CLPHMM_ERROR_OPENCL, "launch and reset fail", dead);
  static const char *const still[] = {"not usable", NULL};
  compute_fails(ctx, CLPHMM_ERROR_OPENCL, "unusable context", still);
  CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_ERROR_OPENCL, ctx);
  shim("");
  compute_check(ctx, "after OpenCL came back");
  clphmm_context_destroy(ctx);
}

/* Reads of one tile of the small-call variant (16x4: 64 rows), unrelated
 * to their haplotypes: all rescued, and the speculative pass reads the
 * float chunk's copy in (cph_share_inputs). That copy in failing, the
 * float chunk is submitted alone, and the call gives the same bits. */
static void shared_inputs_fault(clphmm_context *ctx) {
  enum { NR = 2, NH = 2, LEN = 60 };
  static char bases[NR][LEN], hb[NH][200];
  static uint8_t q[NR][4][LEN];
  unsigned x = 12345;
  clphmm_read rd[NR];
  clphmm_haplotype hp[NH];
  for (int r = 0; r < NR; r++) {
    for (int i = 0; i < LEN; i++) {
      x = x * 1103515245u + 12345u;
      bases[r][i] = "ACGT"[x >> 30];
      q[r][0][i] = (uint8_t)(40 + (x >> 8) % 20);
      q[r][1][i] = q[r][2][i] = 45;
      q[r][3][i] = 10;
    }
    rd[r] = (clphmm_read){bases[r], q[r][0], q[r][1],
                          q[r][2],  q[r][3], (size_t)(LEN - 10 * r)};
  }
  for (int h = 0; h < NH; h++) {
    for (int i = 0; i < 200; i++) {
      x = x * 1103515245u + 12345u;
      hb[h][i] = "ACGT"[x >> 30];
    }
    hp[h] = (clphmm_haplotype){hb[h], (size_t)(150 + 50 * h)};
  }
  const clphmm_batch b = {rd, NR, hp, NH};
  cph_engine *e = ctx->eng[0];
  double clean[NR * NH], got[NR * NH];
  unsigned long spec = e->spec_calls, shared = e->shared_inputs;
  CHECK_STATUS(clphmm_compute(ctx, &b, 1, clean), CLPHMM_SUCCESS, ctx);
  CHECK(e->spec_calls == spec + 1 && e->shared_inputs == shared + 1,
        "one-tile reads: %lu speculative passes, %lu read the float chunk's "
        "copy in",
        e->spec_calls - spec, e->shared_inputs - shared);
  spec = e->spec_calls;
  shared = e->shared_inputs;
  shim("clEnqueueWriteBuffer@1"); /* the float chunk's copy in */
  CHECK_STATUS(clphmm_compute(ctx, &b, 1, got), CLPHMM_SUCCESS, ctx);
  shim("");
  CHECK(e->spec_calls == spec && e->shared_inputs == shared,
        "the shared copy in failing: %lu speculations and %lu shared inputs "
        "counted",
        e->spec_calls - spec, e->shared_inputs - shared);
  CHECK(memcmp(got, clean, sizeof got) == 0,
        "the shared copy in failing: results differ");
}

/* A float context of `devices` (NULL: the default) on lane-group variants
 * with a small-call variant (the CPU table has none), always speculating;
 * the environment (which ctest sets for this test) is restored after. */
static clphmm_context *open_speculating(const char *devices) {
  static const char *const names[] = {
      "CLPHMM_VARIANTS", "CLPHMM_DOUBLE_VARIANTS", "CLPHMM_SPECULATE"};
  static const char *const values[] = {"4x4/64,8x8/64,16x4/64:small",
                                       "4x4/64,8x8/64,16x4/64:small", "1"};
  char keep[3][1024];
  int had[3];
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(names[i]);
    had[i] = v != NULL;
    snprintf(keep[i], sizeof keep[i], "%s", v ? v : "");
    setenv(names[i], values[i], 1);
  }
  clphmm_context *ctx =
      open_ctx_on(CLPHMM_PRECISION_FLOAT, g_cache, 0, devices);
  for (int i = 0; i < 3; i++) {
    if (had[i])
      setenv(names[i], keep[i], 1);
    else
      unsetenv(names[i]);
  }
  return ctx;
}

/* Float mode's speculative double pass (speculate.c) whose
 * submission fails (its copy in, the first of the call: cph_call_submit_both
 * enqueues it ahead of the float chunk's), or whose float chunk's copy in
 * fails while the two take turns (the float chunk is then submitted
 * alone): the call still succeeds, the rescue runs as without it, bit for
 * bit, and the speculation is not counted. On one queue, the float
 * chunk's own failures (see below).
 * On lane-group variants with a small-call variant (the CPU table has
 * none), on the workload's rescue batch (4 pairs, all rescued). */
static void test_speculation_fault(void) {
  shim("");
  clphmm_context *ctx = open_speculating(NULL);
  if (!ctx)
    return;
  const clphmm_batch *rb = &g_work.batches[g_work.n_batches - 1];
  const size_t n = rb->n_reads * rb->n_haplotypes;
  double ref[16], clean[16], got[16];
  if (n > 16) {
    CHECK(0, "the rescue batch has %zu pairs", n);
    clphmm_context_destroy(ctx);
    return;
  }
  CHECK_STATUS(clphmm_reference(rb, 1, CLPHMM_PRECISION_FLOAT, ref),
               CLPHMM_SUCCESS, NULL);
  cph_engine *e = ctx->eng[0];
  /* (The first call also uploads the row tables: blocking copies.) */
  unsigned long spec0 = e->spec_calls;
  CHECK_STATUS(clphmm_compute(ctx, rb, 1, clean), CLPHMM_SUCCESS, ctx);
  CHECK(e->spec_calls == spec0 + 1, "the small call did not speculate");
  /* The call's first copy in is the speculative chunk's, the second the
   * float chunk's (both packed; the pass plans its own schedule, so it
   * has its own copy in: with a copy of the float chunk's, which its
   * reads of two tiles through local memory allow, it would read the
   * float chunk's). */
  e->copy_sched = 0;
  for (int nth = 1; nth <= 2; nth++) {
    char rule[64];
    snprintf(rule, sizeof rule, "clEnqueueWriteBuffer@%d", nth);
    shim(rule);
    CHECK_STATUS(clphmm_compute(ctx, rb, 1, got), CLPHMM_SUCCESS, ctx);
    shim("");
    clphmm_stats st;
    clphmm_context_stats(ctx, &st);
    CHECK(e->spec_calls == spec0 + 1, "%s: a failed speculation was counted",
          rule);
    CHECK(st.rescued_pairs == n, "%s: %llu of %zu pairs rescued", rule,
          (unsigned long long)st.rescued_pairs, n);
    CHECK(memcmp(got, clean, n * sizeof *got) == 0,
          "%s: results after a failed speculation differ", rule);
    double d = 0;
    for (size_t i = 0; i < n; i++)
      d = fmax(d, fabs(got[i] - ref[i]));
    CHECK(d <= 1e-5, "speculation fault (%s): %g from the reference", rule, d);
    compute_check(ctx, "after a failed speculation");
  }
  e->copy_sched = 1;
  shared_inputs_fault(ctx);
  spec0 = e->spec_calls - 1; /* (its clean call speculated) */
  /* On one queue the float chunk goes first: its copy in failing on an
   * allocation retries the chunk smaller, without the speculation (whose
   * slot the retry released); failing otherwise fails the call cleanly. */
  e->side_queue = 0;
  shim("clEnqueueWriteBuffer@1:-4");
  CHECK_STATUS(clphmm_compute(ctx, rb, 1, got), CLPHMM_SUCCESS, ctx);
  shim("");
  CHECK(e->spec_calls == spec0 + 1,
        "one queue: a speculation whose float chunk failed was counted");
  CHECK(memcmp(got, clean, n * sizeof *got) == 0,
        "one queue: results after the float chunk's retry differ");
  shim("clEnqueueWriteBuffer@1");
  const clphmm_status st = clphmm_compute(ctx, rb, 1, got);
  shim("");
  CHECK(st == CLPHMM_ERROR_OPENCL &&
            strstr(clphmm_last_error(ctx), "clEnqueueWriteBuffer"),
        "one queue, the float chunk's copy in failing: %s (%s)",
        clphmm_status_string(st), clphmm_last_error(ctx));
  CHECK(e->spec_calls == spec0 + 1,
        "one queue: a speculation that never ran was counted");
  compute_check(ctx, "after the float chunk's failure on one queue");
  clphmm_context_destroy(ctx);
}

/* ---- several devices ----------------------------------------------------- */

/* The first device twice, the workload cut into small chunks that the two
 * engines share: a launch that fails on one of them drops it, and the
 * other redoes its work; every device failing fails the call. */
static void test_multi_device(void) {
  shim("");
  setenv("CLPHMM_CHUNK_CELLS", "400000", 1);
  clphmm_options o;
  clphmm_options_init(&o);
  o.device = "0,0";
  o.cache_dir = g_cache;
  clphmm_context *ctx = NULL;
  CHECK_STATUS(clphmm_context_create(&o, &ctx), CLPHMM_SUCCESS, NULL);
  if (!ctx) {
    unsetenv("CLPHMM_CHUNK_CELLS");
    return;
  }
  double *before = compute_ok(ctx, "two devices");
  clphmm_stats s;
  CHECK_STATUS(clphmm_context_stats(ctx, &s), CLPHMM_SUCCESS, ctx);
  CHECK(s.chunks > 4, "two devices: %llu chunks, not split",
        (unsigned long long)s.chunks);

  /* The third launch fails, on whichever device makes it. */
  shim("clEnqueueNDRangeKernel@3");
  double *after = compute_ok(ctx, "one device fails mid-run");
  CHECK(before && after &&
            memcmp(before, after, g_work.n_pairs * sizeof *after) == 0,
        "one device fails mid-run: results differ from both devices'");
  const clphmm_diagnostics d = diag(ctx);
  CHECK(d.devices == 2 && d.devices_dropped == 1, "%zu of %zu devices dropped",
        d.devices_dropped, d.devices);
  CHECK(contains(d.detail, "dropped") &&
            contains(d.detail, "clEnqueueNDRangeKernel") &&
            contains(d.detail, ctx->eng[0]->dev.info.name),
        "diagnostics do not say which device was dropped and why: %s",
        d.detail);
  CHECK(contains(clphmm_last_error(ctx), "not an error") &&
            contains(clphmm_last_error(ctx), "dropped"),
        "last error after a drop: %s", clphmm_last_error(ctx));
  CHECK_STATUS(clphmm_context_stats(ctx, &s), CLPHMM_SUCCESS, ctx);
  uint64_t pairs = 0;
  int dropped = 0;
  for (size_t i = 0; i < s.n_devices; i++) {
    pairs += s.devices[i].pairs;
    dropped += s.devices[i].dropped;
  }
  CHECK(s.n_devices == 2 && dropped == 1 && pairs == g_work.n_pairs &&
            s.pairs == g_work.n_pairs,
        "stats after a drop: %zu devices, %d dropped, %llu of %zu pairs",
        s.n_devices, dropped, (unsigned long long)pairs, g_work.n_pairs);
  /* The dropped device stays out; the other one carries on. */
  shim("");
  free(compute_ok(ctx, "after a drop"));
  CHECK(diag(ctx).devices_dropped == 1, "dropped device came back");

  /* Every launch fails: the call fails, naming every device, and the
   * output is untouched; the next call tries every device again. */
  clphmm_context_destroy(ctx);
  ctx = NULL;
  CHECK_STATUS(clphmm_context_create(&o, &ctx), CLPHMM_SUCCESS, NULL);
  if (ctx) {
    static const char *const all[] = {"every device", "device 0", "device 1",
                                      "clEnqueueNDRangeKernel", NULL};
    shim("clEnqueueNDRangeKernel");
    compute_fails(ctx, CLPHMM_ERROR_OPENCL, "every device fails", all);
    CHECK(diag(ctx).devices_dropped == 2, "not every device dropped");
    shim("");
    double *again = compute_ok(ctx, "after every device failed");
    CHECK(before && again &&
              memcmp(before, again, g_work.n_pairs * sizeof *again) == 0,
          "after every device failed: results differ");
    CHECK(diag(ctx).devices_dropped == 0, "devices still dropped");
    free(again);
  }
  shim("");
  clphmm_context_destroy(ctx);
  free(before);
  free(after);

  /* Kernels are compiled once per kind of device: with empty caches, two
   * engines of one device compile what one engine compiles (the second
   * loads them from the cache), and give the same bits. */
  char one_dir[1100], two_dir[1100];
  scratch_path(one_dir, sizeof one_dir, "multi-one");
  scratch_path(two_dir, sizeof two_dir, "multi-two");
  clphmm_context *one = open_ctx(CLPHMM_PRECISION_FLOAT, one_dir, 0);
  o.cache_dir = two_dir;
  ctx = NULL;
  CHECK_STATUS(clphmm_context_create(&o, &ctx), CLPHMM_SUCCESS, NULL);
  double *a = compute_ok(one, "one device, cold cache");
  double *b = compute_ok(ctx, "two devices, cold cache");
  CHECK(a && b && memcmp(a, b, g_work.n_pairs * sizeof *a) == 0,
        "cold caches: two devices differ from one");
  if (one && ctx) {
    const clphmm_diagnostics d1 = diag(one), d2 = diag(ctx);
    CHECK(d2.programs_compiled <= d1.programs_compiled &&
              d2.programs_loaded > 0,
          "two engines compiled %llu programs and loaded %llu, one engine "
          "compiled %llu",
          (unsigned long long)d2.programs_compiled,
          (unsigned long long)d2.programs_loaded,
          (unsigned long long)d1.programs_compiled);
  }
  free(a);
  free(b);
  clphmm_context_destroy(one);
  clphmm_context_destroy(ctx);
  unsetenv("CLPHMM_CHUNK_CELLS");
}

/* ---- a speculative pass left to the next call --------------------------- */

/* Quiet reads: one batch of three reads of one tile of the small-call
 * variant (16x4/64: at most 64 rows), each a stretch of the one haplotype
 * with one substitution, so that the float pass rescues none of the pairs
 * and a small call leaves its speculative pass to the engine's next call
 * (speculate.c), which waits for it and drops it (cph_call_settle). */
enum { QUIET_READS = 3, QUIET_LEN = 64, QUIET_HAP = 120 };
static struct {
  char hap[QUIET_HAP], bases[QUIET_READS][QUIET_LEN];
  uint8_t q[QUIET_READS][4][QUIET_LEN];
  clphmm_read reads[QUIET_READS];
  clphmm_haplotype hp;
  clphmm_batch b;
} g_quiet;

static void quiet_make(void) {
  static const size_t lens[QUIET_READS] = {40, 60, QUIET_LEN};
  unsigned x = 20261201u;
  for (int i = 0; i < QUIET_HAP; i++) {
    x = x * 1103515245u + 12345u;
    g_quiet.hap[i] = "ACGT"[x >> 30];
  }
  for (int r = 0; r < QUIET_READS; r++) {
    const size_t len = lens[r];
    char *b = g_quiet.bases[r];
    memcpy(b, g_quiet.hap + 20 * r, len);
    b[len / 2] = b[len / 2] == 'A' ? 'C' : 'A';
    memset(g_quiet.q[r][0], 30, len);
    memset(g_quiet.q[r][1], 45, len);
    memset(g_quiet.q[r][2], 45, len);
    memset(g_quiet.q[r][3], 10, len);
    g_quiet.reads[r] = (clphmm_read){
        b,  g_quiet.q[r][0], g_quiet.q[r][1], g_quiet.q[r][2], g_quiet.q[r][3],
        len};
  }
  g_quiet.hp = (clphmm_haplotype){g_quiet.hap, QUIET_HAP};
  g_quiet.b = (clphmm_batch){g_quiet.reads, QUIET_READS, &g_quiet.hp, 1};
}

static void set_leave(clphmm_context *ctx, int leave) {
  for (size_t i = 0; i < ctx->n; i++)
    ctx->eng[i]->spec_leave = leave;
}

/* A quiet call that must succeed, rescue nothing and, unless `want` is
 * NULL, give its bits. Returns whether it succeeded. */
static int quiet_ok(clphmm_context *ctx, const double *want, double *out,
                    const char *what) {
  if (CHECK_STATUS(clphmm_compute(ctx, &g_quiet.b, 1, out), CLPHMM_SUCCESS,
                   ctx) != CLPHMM_SUCCESS)
    return 0;
  clphmm_stats st;
  clphmm_context_stats(ctx, &st);
  CHECK(st.rescued_pairs == 0, "%s: the quiet call rescued %llu pairs", what,
        (unsigned long long)st.rescued_pairs);
  CHECK(!want || memcmp(out, want, QUIET_READS * sizeof *out) == 0,
        "%s: the quiet call's results differ from a call that waits for "
        "its pass",
        what);
  return 1;
}

/* The workload in `ctx`, which must give `want`'s bits. */
static void work_same(clphmm_context *ctx, const double *want,
                      const char *what) {
  double *got = compute_ok(ctx, what);
  CHECK(got && want && memcmp(got, want, g_work.n_pairs * sizeof *got) == 0,
        "%s: the workload's results differ from calls that wait for their "
        "passes",
        what);
  free(got);
}

/* A quiet call on `ctx` that must leave its pass on engine e: what the
 * faults below start from. */
static void leave_one(clphmm_context *ctx, const cph_engine *e,
                      const double *quiet, const char *what) {
  const unsigned long left = e->spec_left_passes;
  double out[QUIET_READS];
  if (quiet_ok(ctx, quiet, out, what))
    CHECK(e->spec_left_passes == left + 1 && e->slots[CPH_RESCUE_SLOT].left,
          "%s: the quiet call left no pass (%lu left, the slot's %d)", what,
          e->spec_left_passes - left, e->slots[CPH_RESCUE_SLOT].left);
}

/* Whether the workload is a small call on ctx's first engine
 * (cph_plan_small: too few pairs to fill the device), whose pass settles
 * after its staging, not first: the cases of a large call below need a
 * large one. On PoCL's CPU device it is large; a GPU's compute units make
 * it small, and those cases are skipped there (said on stdout). */
static int work_is_small(clphmm_context *ctx, const char *what) {
  const cph_engine *e = ctx->eng[0];
  size_t pairs = 0;
  uint64_t cells = 0;
  CHECK_STATUS(
      cph_count_batches(g_work.batches, g_work.n_batches, &pairs, &cells),
      CLPHMM_SUCCESS, NULL);
  const int small = cph_plan_small(&e->variants[CPH_SET_FLOAT], g_work.n_pairs,
                                   cells, e->dev.info.compute_units);
  if (small)
    printf("skip: %s: the workload is a small call on %u compute units\n", what,
           e->dev.info.compute_units);
  return small;
}

/* The next call's wait for a pass left failing (cph_call_settle: the
 * clWaitForEvents of cph_drop, the call's first wait where its staging
 * grows no host buffer), in a small call (which waits after staging its
 * float chunk) and a large one (which waits first): the call fails with
 * CLPHMM_ERROR_OPENCL, a message that names clWaitForEvents and the pass,
 * and an untouched output, and the OpenCL context is recreated. The pass
 * is gone, not left for ever: the next call waits for none and gives the
 * bits of before. */
static void left_wait_fails(clphmm_context *ctx, const double *quiet,
                            const double *work) {
  static const char *const why[] = {"clWaitForEvents", "speculative pass",
                                    "stays usable", NULL};
  cph_engine *e = ctx->eng[0];
  const cph_slot *r = &e->slots[CPH_RESCUE_SLOT];
  for (int large = 0; large < 2; large++) {
    const char *what = large ? "a large call's wait for a pass left fails"
                             : "a small call's wait for a pass left fails";
    if (large && work_is_small(ctx, what))
      continue;
    leave_one(ctx, e, quiet, what);
    const uint64_t resets = diag(ctx).resets;
    shim("clWaitForEvents@1");
    if (large)
      compute_fails(ctx, CLPHMM_ERROR_OPENCL, what, why);
    else
      batches_fail(ctx, &g_quiet.b, 1, QUIET_READS, CLPHMM_ERROR_OPENCL, what,
                   why);
    shim("");
    CHECK(!r->left && diag(ctx).resets == resets + 1,
          "%s: the slot's left %d, %llu resets", what, r->left,
          (unsigned long long)(diag(ctx).resets - resets));
    const unsigned long settled = e->spec_settled, left = e->spec_left_passes;
    double out[QUIET_READS];
    if (large)
      work_same(ctx, work, what);
    else
      quiet_ok(ctx, quiet, out, what);
    CHECK(e->spec_settled == settled, "%s: the next call waited for %lu passes",
          what, e->spec_settled - settled);
    CHECK(r->left == !large &&
              e->spec_left_passes == left + (unsigned long)!large,
          "%s: the next call left %lu passes, the slot's %d", what,
          e->spec_left_passes - left, r->left);
  }
}

/* An allocation failing (CL_MEM_OBJECT_ALLOCATION_FAILURE, as a driver
 * that allocates on first use reports it) in the call right after a pass
 * was left: the call has waited for the pass (counted by cph_call_settle;
 * the retry's own wait, cph_call_end_chunk, counts none) before it
 * submitted anything, so before the retry releases every buffer, and the
 * retry in smaller chunks gives the bits of before, without speculating
 * (nor leaving a pass). A small call's copies in fail twice: the
 * speculative pass's and its float chunk's together, then the float
 * chunk's alone (cph_call_submit_both; of two equal rules, the first
 * takes the first call, the second counts from the second). The wait for
 * the pass may report its allocation too: the call then retries as well. */
static void left_alloc_fails(clphmm_context *ctx, const double *quiet,
                             const double *work) {
  static const struct {
    const char *rule, *what;
    int large;
  } cases[] = {
      {"clEnqueueWriteBuffer@1:-4,clEnqueueWriteBuffer@1:-4",
       "a small call's copies in fail to allocate after a pass left", 0},
      {"clEnqueueWriteBuffer@1:-4",
       "a large call's copy in fails to allocate after a pass left", 1},
      {"clWaitForEvents@1:-4",
       "the wait for a pass left reports an allocation failure", 0},
  };
  cph_engine *e = ctx->eng[0];
  const cph_slot *r = &e->slots[CPH_RESCUE_SLOT];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *what = cases[i].what;
    if (cases[i].large && work_is_small(ctx, what))
      continue;
    leave_one(ctx, e, quiet, what);
    const unsigned long settled = e->spec_settled, spec = e->spec_calls;
    const uint64_t retries = diag(ctx).alloc_retries;
    shim(cases[i].rule);
    double out[QUIET_READS];
    if (cases[i].large)
      work_same(ctx, work, what);
    else
      quiet_ok(ctx, quiet, out, what);
    shim("");
    CHECK(diag(ctx).alloc_retries == retries + 1, "%s: %llu retries", what,
          (unsigned long long)(diag(ctx).alloc_retries - retries));
    CHECK(e->spec_settled == settled + 1,
          "%s: %lu passes waited for before the retry", what,
          e->spec_settled - settled);
    CHECK(e->spec_calls == spec && !r->left,
          "%s: %lu speculative passes counted, the slot's left %d", what,
          e->spec_calls - spec, r->left);
  }
}

/* One queue (CLPHMM_SIDE_QUEUE=0): the speculative pass runs behind the
 * float chunk on the main queue, in its device buffers, and reads no copy
 * of the float chunk's (cph_call_submit_both); a quiet call still leaves
 * it (cph_call_end_speculation asks nothing of the queue: the slot's host
 * buffers are still the pass's), and the next call, small or large,
 * waits for it. Bits as with leaving off. */
static void left_one_queue(clphmm_context *ctx, const double *quiet,
                           const double *work) {
  cph_engine *e = ctx->eng[0];
  const cph_slot *r = &e->slots[CPH_RESCUE_SLOT];
  double out[QUIET_READS];
  e->side_queue = 0;
  set_leave(ctx, 0);
  quiet_ok(ctx, quiet, out, "one queue, waiting for the pass");
  CHECK(!r->left, "one queue, leaving off: a pass left");
  set_leave(ctx, 1);
  for (int i = 0; i < 3; i++) {
    const int was_left = r->left;
    const unsigned long spec = e->spec_calls, left = e->spec_left_passes,
                        settled = e->spec_settled, shared = e->shared_inputs;
    quiet_ok(ctx, quiet, out, "one queue, a pass left");
    CHECK(e->spec_calls == spec + 1 && e->spec_left_passes == left + 1 &&
              r->left && r->d == &e->d && e->shared_inputs == shared,
          "one queue, quiet call %d: %lu speculative passes, %lu left (the "
          "slot's %d), on the %s queue, %lu shared copies in",
          i, e->spec_calls - spec, e->spec_left_passes - left, r->left,
          r->d == &e->d ? "main" : "side", e->shared_inputs - shared);
    CHECK(e->spec_settled - settled == (unsigned long)was_left,
          "one queue, quiet call %d: %lu passes waited for, %d left", i,
          e->spec_settled - settled, was_left);
  }
  const unsigned long settled = e->spec_settled;
  work_same(ctx, work, "one queue, a large call after a pass left");
  CHECK(e->spec_settled == settled + 1 && !r->left,
        "one queue, a large call after a pass left: %lu waited for, the "
        "slot's left %d",
        e->spec_settled - settled, r->left);
  e->side_queue = 1;
}

/* Two engines (the first device twice, as in test_multi_device): a small
 * call runs whole on the first live engine, which leaves its pass; a call
 * the engines share waits for it before the first engine's first chunk
 * (a shared call does not speculate). That engine's wait failing in a
 * small call drops it and the other engine computes the call, leaving a
 * pass of its own, which the context's end waits for. Bits as with
 * leaving off. */
static void left_two_engines(void) {
  setenv("CLPHMM_CHUNK_CELLS", "400000", 1); /* (the workload is shared) */
  clphmm_context *ctx = open_speculating("0,0");
  unsetenv("CLPHMM_CHUNK_CELLS");
  if (!ctx)
    return;
  cph_engine *e0 = ctx->eng[0], *e1 = ctx->eng[1];
  const cph_slot *r0 = &e0->slots[CPH_RESCUE_SLOT],
                 *r1 = &e1->slots[CPH_RESCUE_SLOT];
  double quiet[QUIET_READS] = {0}, out[QUIET_READS];
  set_leave(ctx, 0);
  quiet_ok(ctx, NULL, quiet, "two engines, waiting for the pass");
  double *work = compute_ok(ctx, "two engines, waiting for passes");
  set_leave(ctx, 1);
  leave_one(ctx, e0, quiet, "two engines");
  const unsigned long settled = e0->spec_settled;
  work_same(ctx, work, "two engines, a shared call after a pass left");
  clphmm_stats st;
  clphmm_context_stats(ctx, &st);
  CHECK(st.devices[1].chunks > 0, "two engines: the workload not shared");
  /* (The first engine takes its first chunk after the second engine's
   * thread starts: should that one have taken every chunk, the pass is
   * still left, for the next call.) */
  const int took = st.devices[0].chunks > 0;
  CHECK(took ? e0->spec_settled == settled + 1 && !r0->left
             : e0->spec_settled == settled && r0->left,
        "two engines, a shared call after a pass left (%llu chunks on the "
        "first engine): %lu waited for, the slot's left %d",
        (unsigned long long)st.devices[0].chunks, e0->spec_settled - settled,
        r0->left);
  leave_one(ctx, e0, quiet, "two engines, before the wait fails");
  shim("clWaitForEvents@1");
  quiet_ok(ctx, quiet, out, "two engines, the first one's wait fails");
  shim("");
  const clphmm_diagnostics d = diag(ctx);
  CHECK(d.devices_dropped == 1 && e0->dropped &&
            contains(d.detail, "clWaitForEvents") &&
            contains(clphmm_last_error(ctx), "dropped") && !r0->left &&
            r1->left,
        "two engines, the first one's wait fails: %zu dropped (the first "
        "%d), its slot's left %d, the other's %d: %s",
        d.devices_dropped, e0->dropped, r0->left, r1->left, d.detail);
  free(work);
  clphmm_context_destroy(ctx); /* (with the second engine's pass left) */
}

/* A speculative pass left by a quiet call (speculate.c) and what the
 * engine's next call may meet: its wait failing, an allocation failing,
 * one queue, two engines. */
static void test_left_pass_faults(void) {
  shim("");
  quiet_make();
  double ref[QUIET_READS], quiet[QUIET_READS] = {0};
  CHECK_STATUS(clphmm_reference(&g_quiet.b, 1, CLPHMM_PRECISION_FLOAT, ref),
               CLPHMM_SUCCESS, NULL);
  clphmm_context *ctx = open_speculating(NULL);
  if (!ctx)
    return;
  cph_engine *e = ctx->eng[0];
  set_leave(ctx, 0);
  const unsigned long spec = e->spec_calls;
  if (quiet_ok(ctx, NULL, quiet, "waiting for the pass")) {
    double d = 0;
    for (size_t i = 0; i < QUIET_READS; i++)
      d = fmax(d, fabs(quiet[i] - ref[i]));
    CHECK(d <= 1e-5 && e->spec_calls == spec + 1,
          "the quiet call: %g from the reference, %lu speculative passes", d,
          e->spec_calls - spec);
  }
  double *work = compute_ok(ctx, "waiting for passes");
  set_leave(ctx, 1);
  left_wait_fails(ctx, quiet, work);
  left_alloc_fails(ctx, quiet, work);
  left_one_queue(ctx, quiet, work);
  free(work);
  clphmm_context_destroy(ctx);
  left_two_engines();
}

/* ---- no platform, no device ---------------------------------------------- */

static void test_no_platform(void) {
  size_t count = 99;
  clphmm_context *ctx = NULL;
  shim("clGetPlatformIDs");
  CHECK_STATUS(clphmm_device_count(&count), CLPHMM_ERROR_NO_OPENCL, NULL);
  CHECK(contains(clphmm_last_error(NULL), "no OpenCL platform"),
        "no platform: %s", clphmm_last_error(NULL));
  CHECK_STATUS(clphmm_context_create(NULL, &ctx), CLPHMM_ERROR_NO_OPENCL, NULL);
  CHECK(ctx == NULL, "context set on failure");

  shim("clGetPlatformIDs:-6");
  CHECK_STATUS(clphmm_device_count(&count), CLPHMM_ERROR_NO_OPENCL, NULL);
  CHECK(contains(clphmm_last_error(NULL), "clGetPlatformIDs") &&
            contains(clphmm_last_error(NULL), "CL_OUT_OF_HOST_MEMORY"),
        "platform error: %s", clphmm_last_error(NULL));

  shim("clGetDeviceIDs");
  CHECK_STATUS(clphmm_device_count(&count), CLPHMM_SUCCESS, NULL);
  CHECK(count == 0, "%zu devices without devices", count);
  CHECK_STATUS(clphmm_context_create(NULL, &ctx), CLPHMM_ERROR_NO_DEVICE, NULL);
  CHECK(contains(clphmm_last_error(NULL), "no device"), "no device: %s",
        clphmm_last_error(NULL));

  shim("clCreateContext");
  CHECK_STATUS(clphmm_context_create(NULL, &ctx), CLPHMM_ERROR_OPENCL, NULL);
  CHECK(contains(clphmm_last_error(NULL), "clCreateContext") &&
            contains(clphmm_last_error(NULL), "CL_DEVICE_NOT_AVAILABLE"),
        "context creation: %s", clphmm_last_error(NULL));
  shim("");
}

/* Every OpenCL object the library created in this process (contexts,
 * queues, programs, kernels, buffers, events), through every fault above
 * and every context reset, dropped engine and retry, was released exactly
 * once: the shim keeps them by handle and refuses a release of one that
 * is not live (which a driver may only notice later, in another object's
 * count). */
static void test_objects(void) {
  long over = 0;
  char first[96];
  const long live = shim_objects(&over, first, sizeof first);
  CHECK(over == 0,
        "%ld releases of OpenCL objects that were not live, the "
        "first %s",
        over, first);
  CHECK(live == 0, "%ld OpenCL objects were never released", live);
  printf("OpenCL objects: %ld not released, %ld released twice\n", live, over);
}

/* ---- driver ---------------------------------------------------------------
 */

static int setup(void) {
  setenv("CLPHMM_OPENCL_LIBRARY", CLPHMM_TEST_SHIM, 1);
  void *h = dlopen(CLPHMM_TEST_SHIM, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "cannot load the shim: %s\n", dlerror());
    return -1;
  }
  *(void **)&shim_configure = dlsym(h, "cph_shim_configure");
  *(void **)&shim_calls = dlsym(h, "cph_shim_calls");
  *(void **)&shim_objects = dlsym(h, "cph_shim_objects");
  const char *parent = getenv("CLPHMM_CACHE_DIR");
  snprintf(g_base, sizeof g_base, "%s/faults-XXXXXX",
           parent && *parent ? parent : ".");
  if (parent && *parent)
    mkdir(parent, 0755);
  if (!shim_configure || !shim_calls || !shim_objects || !mkdtemp(g_base)) {
    fprintf(stderr, "setup failed\n");
    return -1;
  }
  test_rng rng;
  test_rng_init(&rng, 20261122);
  workload_make(&g_work, &rng, 6, 24, 200);
  for (int p = 0; p < 2; p++) {
    g_ref[p] = workload_out(&g_work, 0);
    CHECK_STATUS(clphmm_reference(g_work.batches, g_work.n_batches,
                                  (clphmm_precision)p, g_ref[p]),
                 CLPHMM_SUCCESS, NULL);
  }
  return 0;
}

static int have_device(void) {
  size_t n = 0;
  clphmm_status st = clphmm_device_count(&n);
  if (st == CLPHMM_SUCCESS && n > 0)
    return 1;
  printf("no OpenCL device: %s\n", clphmm_last_error(NULL));
  return 0;
}

static void stamp(const char *what) {
  static struct timespec t0;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  if (t0.tv_sec)
    printf("[%6.1f s] %s\n",
           (double)(t.tv_sec - t0.tv_sec) +
               1e-9 * (double)(t.tv_nsec - t0.tv_nsec),
           what);
  else
    t0 = t;
}

int main(void) {
  stamp("");
  if (setup() != 0)
    return 1;
  char concurrent[1100], cache[1100];
  scratch_path(concurrent, sizeof concurrent, "concurrent");
  scratch_path(cache, sizeof cache, "cache");
  /* Filled by the cache tests, which run first. */
  snprintf(g_cache, sizeof g_cache, "%s", cache);
  /* Forks first, before this process loads OpenCL; the children find out
   * themselves whether a device exists. */
  test_concurrent_fill(concurrent);
  test_concurrent_fill(concurrent); /* and two warm starts at once */
  stamp("test_concurrent_fill");
  if (!have_device()) {
    remove_tree(g_base);
    return getenv("CLPHMM_TEST_REQUIRE_DEVICE") ? 1 : 77;
  }
  test_after_concurrent_fill(concurrent);
  stamp("test_after_concurrent_fill");
  test_cold_warm(cache);
  stamp("test_cold_warm");
  test_disabled();
  stamp("test_disabled");
  test_edited_sources();
  stamp("test_edited_sources");
  test_unusable_dirs(cache);
  stamp("test_unusable_dirs");
  test_bad_entries(cache);
  stamp("test_bad_entries");
  test_build_fallback();
  stamp("test_build_fallback");
  test_memory();
  stamp("test_memory");
  test_mid_run();
  test_speculation_fault();
  stamp("test_mid_run");
  test_multi_device();
  stamp("test_multi_device");
  test_left_pass_faults();
  stamp("test_left_pass_faults");
  test_no_platform();
  stamp("test_no_platform");
  test_objects();
  remove_tree(g_base);
  workload_free(&g_work);
  free(g_ref[0]);
  free(g_ref[1]);
  return test_finish();
}
