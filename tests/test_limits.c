/* Resource limits on the device path: an input whose buffers exceed the
 * device's largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE) is refused with
 * CLPHMM_ERROR_TOO_LARGE and a message that says which buffer, out[] stays
 * untouched, and the context keeps working. The limit is lowered on a real
 * context (the internal struct) so that a small input crosses it. Exits 77
 * when there is no OpenCL device (unless CLPHMM_TEST_REQUIRE_DEVICE). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clphmm.h"
#include "engine/context.h"
#include "test_util.h"

#define N_READS 4
#define LEN 40

static char bases[N_READS + 1][LEN + 1];
static uint8_t quals[N_READS][LEN];
static clphmm_read reads[N_READS];
static clphmm_haplotype hap;

static void make_input(clphmm_batch *b) {
  static const char acgt[] = "ACGT";
  for (int r = 0; r <= N_READS; r++)
    for (int i = 0; i < LEN; i++)
      bases[r][i] = acgt[(r * 7 + i * 3 + i / 5) % 4];
  for (int r = 0; r < N_READS; r++) {
    for (int i = 0; i < LEN; i++)
      quals[r][i] = (uint8_t)(20 + (r + i) % 20);
    reads[r] =
        (clphmm_read){bases[r], quals[r], quals[r], quals[r], quals[r], LEN};
  }
  hap = (clphmm_haplotype){bases[N_READS], LEN};
  *b = (clphmm_batch){reads, N_READS, &hap, 1};
}

static void test_max_alloc(clphmm_context *ctx) {
  clphmm_batch b;
  make_input(&b);
  double want[N_READS], got[N_READS + 1];
  CHECK_STATUS(clphmm_reference(&b, 1, CLPHMM_PRECISION_FLOAT, want),
               CLPHMM_SUCCESS, NULL);
  uint64_t real = ctx->eng[0]->dev.max_alloc_bytes;
  CHECK(real >= 1024, "the device reports a largest buffer of %llu bytes",
        (unsigned long long)real);

  /* The read rows take 32 bytes per base in float: 160 rows x 32 bytes
   * do not fit in 1000 bytes; the pair list (16 bytes per pair slot) and
   * the other buffers would. */
  ctx->eng[0]->dev.max_alloc_bytes = 1000;
  for (int i = 0; i <= N_READS; i++)
    got[i] = 12345.0;
  CHECK_STATUS(clphmm_compute(ctx, &b, 1, got), CLPHMM_ERROR_TOO_LARGE, ctx);
  int untouched = 1;
  for (int i = 0; i <= N_READS; i++)
    untouched &= got[i] == 12345.0;
  CHECK(untouched, "out[] written by a refused call");
  const char *msg = clphmm_last_error(ctx);
  CHECK(strstr(msg, "uploading read rows needs a buffer of") &&
            strstr(msg, "CL_DEVICE_MAX_MEM_ALLOC_SIZE") &&
            strstr(msg, "(1000 bytes"),
        "message: %s", msg);

  /* Back to the real limit: the same context computes the same input. */
  ctx->eng[0]->dev.max_alloc_bytes = real;
  CHECK_STATUS(clphmm_compute(ctx, &b, 1, got), CLPHMM_SUCCESS, ctx);
  for (int i = 0; i < N_READS; i++)
    CHECK(fabs(got[i] - want[i]) < 1e-5, "pair %d: %g vs reference %g", i,
          got[i], want[i]);
}

int main(void) {
  clphmm_context *ctx = NULL;
  clphmm_status st = clphmm_context_create(NULL, &ctx);
  if (st == CLPHMM_ERROR_NO_OPENCL || st == CLPHMM_ERROR_NO_DEVICE) {
    printf("no OpenCL device: %s\n", clphmm_last_error(NULL));
    return getenv("CLPHMM_TEST_REQUIRE_DEVICE") ? 1 : 77;
  }
  CHECK_STATUS(st, CLPHMM_SUCCESS, NULL);
  if (ctx)
    test_max_alloc(ctx);
  clphmm_context_destroy(ctx);
  return test_finish();
}
