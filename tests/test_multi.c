/* Several devices in one context, on whatever device the machine has (the
 * CPU through PoCL in CI), named twice: "0,0" drives two engines of the
 * same device, which must give the bits of a one-device context, in input
 * order, whatever the split:
 *  - selector lists: errors name the empty or unknown item; "all";
 *    statistics before a call and a warm-up of both devices;
 *  - float and double, a workload cut into many small chunks
 *    (CLPHMM_CHUNK_CELLS) that the two engines share: bit-identical to one
 *    device, within the levels of the CPU reference;
 *  - per-device statistics that sum to the totals; a small call on one
 *    device; invalid input in a late chunk gives one device's error and
 *    leaves the output untouched; the context stays usable;
 *  - a call of few long pairs: one chunk per engine, cut by cells.
 * Device failures are forced in test_faults (test_multi_device). Exit 77
 * without a device (unless CLPHMM_TEST_REQUIRE_DEVICE is set). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "workload.h"

#define SENTINEL 12345.0

static int contains(const char *hay, const char *needle) {
  return hay && strstr(hay, needle) != NULL;
}

static clphmm_context *open_ctx(const char *device, clphmm_precision p) {
  clphmm_options o;
  clphmm_options_init(&o);
  o.device = device;
  o.precision = p;
  clphmm_context *ctx = NULL;
  CHECK_STATUS(clphmm_context_create(&o, &ctx), CLPHMM_SUCCESS, NULL);
  return ctx;
}

/* A selector list that must fail with `want` and a message naming
 * `needle`. */
static void bad_list(const char *device, clphmm_status want,
                     const char *needle) {
  clphmm_options o;
  clphmm_options_init(&o);
  o.device = device;
  clphmm_context *ctx = (clphmm_context *)&o; /* must be reset to NULL */
  CHECK_STATUS(clphmm_context_create(&o, &ctx), want, NULL);
  CHECK(ctx == NULL, "'%s': context set on failure", device);
  CHECK(contains(clphmm_last_error(NULL), needle),
        "'%s': message lacks '%s': %s", device, needle,
        clphmm_last_error(NULL));
}

static void test_selectors(void) {
  bad_list("0,", CLPHMM_ERROR_INVALID_ARGUMENT, "item 2 is empty");
  bad_list(",0", CLPHMM_ERROR_INVALID_ARGUMENT, "item 1 is empty");
  bad_list("0,,0", CLPHMM_ERROR_INVALID_ARGUMENT, "item 2 is empty");
  bad_list("0,no-such-device-xyz", CLPHMM_ERROR_NO_DEVICE,
           "item 2, 'no-such-device-xyz'");
  bad_list("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", CLPHMM_ERROR_INVALID_ARGUMENT,
           "more than 16 devices");
  /* A single selector is trimmed as list items are: one of spaces alone is
   * empty (untrimmed, it had matched any name with two spaces in a row). */
  bad_list("  ", CLPHMM_ERROR_INVALID_ARGUMENT,
           "device selector '  ' is empty");
  bad_list(" \t ", CLPHMM_ERROR_INVALID_ARGUMENT, "is empty");

  size_t count = 0;
  CHECK_STATUS(clphmm_device_count(&count), CLPHMM_SUCCESS, NULL);
  clphmm_context *ctx = open_ctx("0, 0", CLPHMM_PRECISION_FLOAT);
  if (ctx) {
    CHECK(clphmm_context_device_count(ctx) == 2, "'0, 0': %zu devices",
          clphmm_context_device_count(ctx));
    clphmm_device_info a, b;
    CHECK_STATUS(clphmm_context_device_at(ctx, 0, &a), CLPHMM_SUCCESS, ctx);
    CHECK_STATUS(clphmm_context_device_at(ctx, 1, &b), CLPHMM_SUCCESS, ctx);
    CHECK(a.index == 0 && b.index == 0, "'0, 0': devices %zu and %zu", a.index,
          b.index);
    CHECK_STATUS(clphmm_context_device_at(ctx, 2, &a),
                 CLPHMM_ERROR_INVALID_ARGUMENT, NULL);
    clphmm_stats s;
    CHECK_STATUS(clphmm_context_stats(ctx, &s), CLPHMM_SUCCESS, ctx);
    CHECK(s.n_devices == 2 && s.devices[1].name[0] && s.pairs == 0,
          "'0, 0' before a call: %zu device stats", s.n_devices);
    CHECK_STATUS(clphmm_context_warmup(ctx), CLPHMM_SUCCESS, ctx);
    clphmm_diagnostics d;
    CHECK_STATUS(clphmm_context_diagnostics(ctx, &d), CLPHMM_SUCCESS, ctx);
    CHECK(d.programs_compiled + d.programs_loaded >= 2,
          "warm-up of two devices built %llu programs",
          (unsigned long long)(d.programs_compiled + d.programs_loaded));
    CHECK(d.devices == 2 && d.devices_dropped == 0,
          "diagnostics: %zu devices, %zu dropped", d.devices,
          d.devices_dropped);
    clphmm_context_destroy(ctx);
  }
  /* "all": every GPU, else every device. */
  size_t gpus = 0;
  for (size_t i = 0; i < count; i++) {
    clphmm_device_info info;
    if (clphmm_device_get_info(i, &info) == CLPHMM_SUCCESS)
      gpus += info.type == CLPHMM_DEVICE_GPU;
  }
  size_t want_all = gpus ? gpus : count;
  want_all = want_all > CLPHMM_MAX_DEVICES ? CLPHMM_MAX_DEVICES : want_all;
  /* "all" alone, with spaces around it (as a list item " all " is), in
   * any case. */
  static const char *const alls[] = {"all", " all ", "\tALL", "All "};
  for (size_t k = 0; k < sizeof alls / sizeof *alls; k++) {
    ctx = open_ctx(alls[k], CLPHMM_PRECISION_FLOAT);
    if (ctx) {
      CHECK(clphmm_context_device_count(ctx) == want_all,
            "'%s': %zu devices, not %zu", alls[k],
            clphmm_context_device_count(ctx), want_all);
      clphmm_context_destroy(ctx);
    }
  }
  /* One selector: one device, as before. */
  ctx = open_ctx("0", CLPHMM_PRECISION_FLOAT);
  if (ctx) {
    CHECK(clphmm_context_device_count(ctx) == 1, "'0': %zu devices",
          clphmm_context_device_count(ctx));
    clphmm_stats s;
    CHECK_STATUS(clphmm_context_stats(ctx, &s), CLPHMM_SUCCESS, ctx);
    CHECK(s.n_devices == 1, "one device: %zu device stats", s.n_devices);
    clphmm_context_destroy(ctx);
  }
}

static double *compute(clphmm_context *ctx, const workload *w) {
  double *out = workload_out(w, SENTINEL);
  if (CHECK_STATUS(clphmm_compute(ctx, w->batches, w->n_batches, out),
                   CLPHMM_SUCCESS, ctx) != CLPHMM_SUCCESS) {
    free(out);
    return NULL;
  }
  return out;
}

static uint64_t workload_cells(const workload *w) {
  uint64_t cells = 0;
  for (size_t b = 0; b < w->n_batches; b++) {
    uint64_t hap = 0;
    for (size_t h = 0; h < w->batches[b].n_haplotypes; h++)
      hap += w->batches[b].haplotypes[h].length;
    for (size_t r = 0; r < w->batches[b].n_reads; r++)
      cells += w->batches[b].reads[r].length * hap;
  }
  return cells;
}

/* Per-device statistics sum to the totals. */
static void check_stats(clphmm_context *ctx, const workload *w,
                        const char *what, size_t *busy_devices) {
  clphmm_stats s;
  CHECK_STATUS(clphmm_context_stats(ctx, &s), CLPHMM_SUCCESS, ctx);
  CHECK(s.n_devices == 2, "%s: %zu device entries", what, s.n_devices);
  uint64_t pairs = 0, cells = 0, rescued = 0, chunks = 0;
  *busy_devices = 0;
  for (size_t i = 0; i < s.n_devices && i < CLPHMM_MAX_DEVICES; i++) {
    const clphmm_device_stats *d = &s.devices[i];
    pairs += d->pairs;
    cells += d->cells;
    rescued += d->rescued_pairs;
    chunks += d->chunks;
    *busy_devices += d->pairs > 0;
    CHECK(!d->dropped, "%s: device %zu dropped", what, i);
    CHECK(d->name[0] != '\0', "%s: device %zu has no name", what, i);
    printf("%s: device %zu (%s): %llu pairs, %llu cells, %llu chunks, "
           "busy %.3f s\n",
           what, i, d->name, (unsigned long long)d->pairs,
           (unsigned long long)d->cells, (unsigned long long)d->chunks,
           d->busy_seconds);
  }
  CHECK(s.pairs == w->n_pairs, "%s: %llu pairs, not %zu", what,
        (unsigned long long)s.pairs, w->n_pairs);
  CHECK(pairs == s.pairs, "%s: devices' pairs %llu, total %llu", what,
        (unsigned long long)pairs, (unsigned long long)s.pairs);
  CHECK(cells == s.cells && cells == workload_cells(w),
        "%s: devices' cells %llu, total %llu", what, (unsigned long long)cells,
        (unsigned long long)s.cells);
  CHECK(rescued == s.rescued_pairs,
        "%s: devices' rescued pairs %llu, "
        "total %llu",
        what, (unsigned long long)rescued, (unsigned long long)s.rescued_pairs);
  CHECK(chunks == s.chunks, "%s: devices' chunks %llu, total %llu", what,
        (unsigned long long)chunks, (unsigned long long)s.chunks);
}

static void test_split(const workload *w, clphmm_precision p,
                       const double *ref) {
  const char *what = p ? "double" : "float";
  clphmm_context *one = open_ctx("0", p);
  clphmm_context *two = open_ctx("0,0", p);
  if (!one || !two) {
    clphmm_context_destroy(one);
    clphmm_context_destroy(two);
    return;
  }
  double *a = compute(one, w);
  size_t busy = 0, most = 0;
  for (int round = 0; round < 3 && a; round++) {
    double *b = compute(two, w);
    if (!b)
      break;
    CHECK(memcmp(a, b, w->n_pairs * sizeof *a) == 0,
          "%s: two devices differ from one (round %d)", what, round);
    const double d = workload_diff(w, b, ref);
    CHECK(d <= (p ? 1e-7 : 1e-5), "%s: %g from the reference", what, d);
    check_stats(two, w, what, &busy);
    most = busy > most ? busy : most;
    free(b);
  }
  /* The engines share the chunks; on a loaded machine one of them may
   * take them all in a round, so this is only reported. */
  printf("%s: at most %zu device%s took chunks in one call\n", what, most,
         most == 1 ? "" : "s");
  clphmm_stats s;
  clphmm_context_stats(two, &s);
  CHECK(s.chunks > 4, "%s: %llu chunks: the workload was not split", what,
        (unsigned long long)s.chunks);
  free(a);

  /* A call below the split size runs on the first device alone. */
  clphmm_batch small = w->batches[1];
  small.n_reads = 2;
  small.n_haplotypes = 1;
  double x[4 * 64], y[4 * 64];
  if (small.n_reads * small.n_haplotypes <= 4 * 64 &&
      CHECK_STATUS(clphmm_compute(one, &small, 1, x), CLPHMM_SUCCESS, one) ==
          CLPHMM_SUCCESS &&
      CHECK_STATUS(clphmm_compute(two, &small, 1, y), CLPHMM_SUCCESS, two) ==
          CLPHMM_SUCCESS) {
    CHECK(memcmp(x, y, small.n_reads * small.n_haplotypes * sizeof *x) == 0,
          "%s: small call differs", what);
    clphmm_context_stats(two, &s);
    CHECK(s.n_devices == 2 && s.devices[0].pairs == s.pairs &&
              s.devices[1].pairs == 0,
          "%s: small call split: %llu + %llu pairs", what,
          (unsigned long long)s.devices[0].pairs,
          (unsigned long long)s.devices[1].pairs);
  }
  clphmm_context_destroy(one);
  clphmm_context_destroy(two);
}

/* A call of few long pairs (600 reads of 1,000 to 5,000 bases, longer
 * and longer, copies of a 6,000-base haplotype's start: 1.1e10 cells,
 * above the split size, and fewer pairs than a chunk holds) is cut into
 * one chunk per engine by cells (compute.c, chunk_bounds: each chunk's
 * float pass of long pairs waits on its largest pair): two chunks,
 * bit-identical to one device, and when both engines took one, their
 * cells within 5% of each other (cut by pairs: 1 to 2). Without
 * CLPHMM_CHUNK_CELLS. */
static void test_few_long_pairs(test_rng *rng) {
  enum { READS = 600, LEN = 5000, HLEN = 6000 };
  char *hb = malloc(HLEN);
  uint8_t *q = malloc(4 * LEN);
  clphmm_read *r = malloc(READS * sizeof *r);
  if (!hb || !q || !r) {
    CHECK(0, "no memory for the long pairs");
    free(hb);
    free(q);
    free(r);
    return;
  }
  for (size_t i = 0; i < HLEN; i++)
    hb[i] = "ACGT"[test_rng_next(rng) % 4];
  for (size_t i = 0; i < LEN; i++) {
    q[i] = 30;
    q[LEN + i] = q[2 * LEN + i] = 45;
    q[3 * LEN + i] = 10;
  }
  for (size_t k = 0; k < READS; k++)
    r[k] = (clphmm_read){hb,          q,           q + LEN,
                         q + 2 * LEN, q + 3 * LEN, 1000 + k * 4000 / READS};
  clphmm_haplotype h = {hb, HLEN};
  clphmm_batch b = {r, READS, &h, 1};
  char *keep = getenv("CLPHMM_CHUNK_CELLS");
  keep = keep ? strdup(keep) : NULL;
  unsetenv("CLPHMM_CHUNK_CELLS");
  clphmm_context *one = open_ctx("0", CLPHMM_PRECISION_FLOAT);
  clphmm_context *two = open_ctx("0,0", CLPHMM_PRECISION_FLOAT);
  if (keep)
    setenv("CLPHMM_CHUNK_CELLS", keep, 1);
  free(keep);
  double *x = calloc(READS, sizeof *x), *y = calloc(READS, sizeof *y);
  clphmm_stats s;
  if (one && two && x && y &&
      CHECK_STATUS(clphmm_compute(one, &b, 1, x), CLPHMM_SUCCESS, one) ==
          CLPHMM_SUCCESS &&
      CHECK_STATUS(clphmm_compute(two, &b, 1, y), CLPHMM_SUCCESS, two) ==
          CLPHMM_SUCCESS &&
      CHECK_STATUS(clphmm_context_stats(two, &s), CLPHMM_SUCCESS, two) ==
          CLPHMM_SUCCESS) {
    CHECK(memcmp(x, y, READS * sizeof *x) == 0,
          "few long pairs: two devices differ from one");
    const uint64_t c0 = s.devices[0].cells, c1 = s.devices[1].cells;
    CHECK(s.chunks == 2 && s.rescued_pairs == 0 && c0 + c1 == s.cells,
          "few long pairs: %llu chunks (2 expected), %llu rescued, cells "
          "%llu + %llu of %llu",
          (unsigned long long)s.chunks, (unsigned long long)s.rescued_pairs,
          (unsigned long long)c0, (unsigned long long)c1,
          (unsigned long long)s.cells);
    const uint64_t d = c0 > c1 ? c0 - c1 : c1 - c0;
    CHECK(!c0 || !c1 || d <= s.cells / 20,
          "few long pairs: cells %llu and %llu, not within 5%%",
          (unsigned long long)c0, (unsigned long long)c1);
    printf("few long pairs: 2 chunks, device cells %llu and %llu\n",
           (unsigned long long)c0, (unsigned long long)c1);
  }
  free(x);
  free(y);
  clphmm_context_destroy(one);
  clphmm_context_destroy(two);
  free(hb);
  free(q);
  free(r);
}

/* An invalid base late in the input: the same status and message as one
 * device, the output untouched, the context usable. */
static void test_invalid(workload *w) {
  clphmm_context *one = open_ctx("0", CLPHMM_PRECISION_FLOAT);
  clphmm_context *two = open_ctx("0,0", CLPHMM_PRECISION_FLOAT);
  if (!one || !two) {
    clphmm_context_destroy(one);
    clphmm_context_destroy(two);
    return;
  }
  const size_t b = w->n_batches - 3;
  char *bases = (char *)w->batches[b].reads[1].bases;
  const char keep = bases[0];
  bases[0] = 'X';
  double *a = workload_out(w, SENTINEL), *c = workload_out(w, SENTINEL);
  CHECK_STATUS(clphmm_compute(one, w->batches, w->n_batches, a),
               CLPHMM_ERROR_INVALID_BASE, one);
  CHECK_STATUS(clphmm_compute(two, w->batches, w->n_batches, c),
               CLPHMM_ERROR_INVALID_BASE, two);
  CHECK(strcmp(clphmm_last_error(one), clphmm_last_error(two)) == 0,
        "invalid base: one device says '%s', two say '%s'",
        clphmm_last_error(one), clphmm_last_error(two));
  int untouched = 1;
  for (size_t i = 0; i < w->n_pairs; i++)
    untouched &= c[i] == SENTINEL;
  CHECK(untouched, "invalid base: output written");
  bases[0] = keep;
  free(a);
  free(c);
  double *x = compute(one, w), *y = compute(two, w);
  CHECK(x && y && memcmp(x, y, w->n_pairs * sizeof *x) == 0,
        "after an invalid input: results differ");
  free(x);
  free(y);
  clphmm_context_destroy(one);
  clphmm_context_destroy(two);
}

int main(void) {
  size_t count = 0;
  if (clphmm_device_count(&count) != CLPHMM_SUCCESS || count == 0) {
    printf("no OpenCL device: %s\n", clphmm_last_error(NULL));
    return getenv("CLPHMM_TEST_REQUIRE_DEVICE") ? 1 : 77;
  }
  /* Small chunks, so that this workload is split into many. */
  setenv("CLPHMM_CHUNK_CELLS", "200000", 1);
  test_selectors();
  test_rng rng;
  test_rng_init(&rng, 20261125);
  workload w;
  workload_make(&w, &rng, 40, 24, 160);
  printf("%zu pairs, %llu cells\n", w.n_pairs,
         (unsigned long long)workload_cells(&w));
  for (int p = 0; p < 2; p++) {
    double *ref = workload_out(&w, 0);
    CHECK_STATUS(
        clphmm_reference(w.batches, w.n_batches, (clphmm_precision)p, ref),
        CLPHMM_SUCCESS, NULL);
    test_split(&w, (clphmm_precision)p, ref);
    free(ref);
  }
  test_invalid(&w);
  test_few_long_pairs(&rng);
  workload_free(&w);
  return test_finish();
}
