/* Determinism: the same input on the same device and variants gives
 * bit-identical output run after run, in both precisions, whatever the
 * chunking: repeated calls, new contexts, tiny launches
 * (max_cells_per_launch), small device-memory chunks (max_device_bytes),
 * and work halved after allocation failures all give the same bytes.
 *
 *   test_determinism              the checks above
 *   test_determinism --dump FILE  write both precisions' results to FILE
 *                                 (test_determinism.sh compares dumps made
 *                                 with different OpenCL thread counts)
 *
 * Exit 77 without a device (unless CLPHMM_TEST_REQUIRE_DEVICE is set). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "workload.h"

typedef struct setting {
  const char *what;
  uint64_t max_cells, max_device_bytes;
} setting;

static const setting settings[] = {
    {"default", 0, 0},
    {"repeated", 0, 0},
    {"2,000 cells per launch", 2000, 0},
    {"100,000 cells per launch", 100000, 0},
    {"64 KiB device chunks", 0, 64 << 10},
    {"16 KiB device chunks, 5,000 cells", 5000, 16 << 10},
};
#define N_SETTINGS (sizeof settings / sizeof *settings)

/* Results of the workload with one setting (NULL when the call failed). */
static double *run(const workload *w, clphmm_precision p, const setting *s,
                   unsigned *compute_units) {
  clphmm_options o;
  clphmm_options_init(&o);
  o.precision = p;
  o.max_cells_per_launch = s->max_cells;
  o.max_device_bytes = s->max_device_bytes;
  clphmm_context *ctx = NULL;
  if (CHECK_STATUS(clphmm_context_create(&o, &ctx), CLPHMM_SUCCESS, NULL))
    return NULL;
  clphmm_device_info info;
  clphmm_context_device(ctx, &info);
  if (compute_units)
    *compute_units = info.compute_units;
  double *out = workload_out(w, 0);
  /* Twice on the same context: the second run must match the first. */
  double *again = workload_out(w, 0);
  clphmm_status st = CHECK_STATUS(
      clphmm_compute(ctx, w->batches, w->n_batches, out), CLPHMM_SUCCESS, ctx);
  if (!st)
    st = CHECK_STATUS(clphmm_compute(ctx, w->batches, w->n_batches, again),
                      CLPHMM_SUCCESS, ctx);
  if (!st)
    CHECK(!memcmp(out, again, w->n_pairs * sizeof *out),
          "%s: two calls on one context differ", s->what);
  free(again);
  clphmm_context_destroy(ctx);
  if (st) {
    free(out);
    return NULL;
  }
  return out;
}

static void check_precision(const workload *w, clphmm_precision p) {
  const char *name = p ? "double" : "float";
  double *ref = workload_out(w, 0);
  CHECK_STATUS(clphmm_reference(w->batches, w->n_batches, p, ref),
               CLPHMM_SUCCESS, NULL);
  double *first = NULL;
  for (size_t i = 0; i < N_SETTINGS; i++) {
    double *out = run(w, p, &settings[i], NULL);
    if (!out)
      continue;
    double d = workload_diff(w, out, ref);
    CHECK(d <= (p ? 1e-7 : 1e-5), "%s, %s: %g from the reference", name,
          settings[i].what, d);
    if (!first) {
      first = out;
      continue;
    }
    size_t differ = 0;
    for (size_t k = 0; k < w->n_pairs; k++)
      differ += memcmp(&out[k], &first[k], sizeof *out) != 0;
    CHECK(differ == 0, "%s, %s: %zu of %zu results differ in their bits", name,
          settings[i].what, differ, w->n_pairs);
    printf("%-6s %-36s %zu pairs bit-identical\n", name, settings[i].what,
           w->n_pairs - differ);
    free(out);
  }
  free(first);
  free(ref);
}

static int dump(const workload *w, const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    return 1;
  }
  unsigned cu = 0;
  for (int p = 0; p < 2; p++) {
    double *out = run(w, (clphmm_precision)p, &settings[0], &cu);
    if (!out || fwrite(out, sizeof *out, w->n_pairs, f) != w->n_pairs)
      CHECK(0, "no results to dump");
    free(out);
  }
  fclose(f);
  printf("compute units %u\n", cu);
  return test_finish();
}

int main(int argc, char **argv) {
  size_t n_dev = 0;
  if (clphmm_device_count(&n_dev) != CLPHMM_SUCCESS || n_dev == 0) {
    printf("no OpenCL device: %s\n", clphmm_last_error(NULL));
    return getenv("CLPHMM_TEST_REQUIRE_DEVICE") ? 1 : 77;
  }
  test_rng rng;
  test_rng_init(&rng, 20261123);
  workload w;
  workload_make(&w, &rng, 8, 20, 300);
  int rc;
  if (argc == 3 && !strcmp(argv[1], "--dump")) {
    rc = dump(&w, argv[2]);
  } else {
    check_precision(&w, CLPHMM_PRECISION_FLOAT);
    check_precision(&w, CLPHMM_PRECISION_DOUBLE);
    rc = test_finish();
  }
  workload_free(&w);
  return rc;
}
