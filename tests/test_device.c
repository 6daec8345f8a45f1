/* The OpenCL path against the CPU reference on fresh random inputs, for
 * every variant the context selects (each read-length bin, tile edges +-1,
 * multi-tile reads), both precisions, N and lowercase bases, qualities
 * 0..127, reads longer than haplotypes, pairs that need the double rescue,
 * chunked launches, determinism, concurrent tiles of long reads, a
 * long-read variant, rows prepared on the device and on the host, the
 * early exit of float mode's first pass, and a 20,000 x 30,000 pair.
 *
 * Exit 77 (skip) when no OpenCL device exists, unless
 * CLPHMM_TEST_REQUIRE_DEVICE is set (CI sets it: PoCL must be there). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"
#include "reference/reference.h"
#include "test_util.h"

#define LEVEL_DOUBLE 1e-7
#define LEVEL_FLOAT 1e-5

/* Owned storage for generated batches. */
typedef struct gen {
  clphmm_batch *batches;
  size_t n, cap;
  void **blocks; /* everything allocated, freed at the end */
  size_t nblocks, capblocks;
} gen;

static void *gen_alloc(gen *g, size_t bytes) {
  if (g->nblocks == g->capblocks) {
    g->capblocks = g->capblocks ? 2 * g->capblocks : 64;
    g->blocks = realloc(g->blocks, g->capblocks * sizeof *g->blocks);
    if (!g->blocks)
      abort();
  }
  void *p = calloc(1, bytes ? bytes : 1);
  if (!p)
    abort();
  return g->blocks[g->nblocks++] = p;
}

static void gen_free(gen *g) {
  for (size_t i = 0; i < g->nblocks; i++)
    free(g->blocks[i]);
  free(g->blocks);
  free(g->batches);
  memset(g, 0, sizeof *g);
}

static char random_base(test_rng *rng, int allow_odd) {
  static const char acgt[] = "ACGT";
  char b = acgt[test_rng_next(rng) & 3];
  unsigned r = test_rng_range(rng, 0, 99);
  if (allow_odd && r < 3)
    b = 'N';
  if (allow_odd && r >= 90)
    b = (char)(b - 'A' + 'a');
  return b;
}

static void random_bases(test_rng *rng, char *out, size_t n, int odd) {
  for (size_t i = 0; i < n; i++)
    out[i] = random_base(rng, odd);
}

/* A read copied from `hap` (when given) with ~5% substitutions, else random;
 * `wild` qualities are uniform 0..127 (1), otherwise GATK-like with
 * insertion and deletion qualities 6..45 (0) or 40..45 (QUAL_INDEL_HIGH). */
#define QUAL_INDEL_HIGH 2
static clphmm_read make_read(gen *g, test_rng *rng, size_t len, const char *hap,
                             size_t hap_len, int wild) {
  char *b = gen_alloc(g, len);
  uint8_t *q = gen_alloc(g, 4 * len);
  size_t start = hap && hap_len > len
                     ? test_rng_range(rng, 0, (unsigned)(hap_len - len))
                     : 0;
  for (size_t i = 0; i < len; i++) {
    int copy = hap && start + i < hap_len && test_rng_range(rng, 0, 99) >= 5;
    b[i] = copy ? hap[start + i] : random_base(rng, 1);
    if (wild == 1) {
      for (int k = 0; k < 4; k++)
        q[k * len + i] = (uint8_t)test_rng_range(rng, 0, 127);
    } else {
      const unsigned lo = wild == QUAL_INDEL_HIGH ? 40 : 6;
      q[i] = (uint8_t)test_rng_range(rng, 6, 60);
      q[len + i] = (uint8_t)test_rng_range(rng, lo, 45);
      q[2 * len + i] = (uint8_t)test_rng_range(rng, lo, 45);
      q[3 * len + i] = 10;
    }
  }
  return (clphmm_read){b, q, q + len, q + 2 * len, q + 3 * len, len};
}

static void push_batch(gen *g, clphmm_batch b) {
  if (g->n == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 16;
    g->batches = realloc(g->batches, g->cap * sizeof *g->batches);
    if (!g->batches)
      abort();
  }
  g->batches[g->n++] = b;
}

/* One batch: reads of the given lengths against `nh` haplotypes of random
 * lengths in [hmin, hmax]; reads are copied from the first haplotype when
 * `similar`, so likelihoods stay in float range. */
static void add_batch(gen *g, test_rng *rng, const size_t *read_lens, size_t nr,
                      size_t nh, unsigned hmin, unsigned hmax, int similar,
                      int wild) {
  clphmm_haplotype *haps = gen_alloc(g, nh * sizeof *haps);
  for (size_t h = 0; h < nh; h++) {
    size_t len = test_rng_range(rng, hmin, hmax);
    char *b = gen_alloc(g, len);
    random_bases(rng, b, len, 1);
    haps[h] = (clphmm_haplotype){b, len};
  }
  clphmm_read *reads = gen_alloc(g, nr * sizeof *reads);
  for (size_t r = 0; r < nr; r++)
    reads[r] = make_read(g, rng, read_lens[r], similar ? haps[0].bases : NULL,
                         haps[0].length, wild);
  push_batch(g, (clphmm_batch){reads, nr, haps, nh});
}

/* Read lengths that hit every bin of the variant set at its edges, plus
 * multi-tile lengths for the last bin. */
static size_t edge_lengths(const cph_variant_set *vs, size_t *out) {
  size_t n = 0;
  out[n++] = 1;
  for (size_t i = 0; i < vs->n; i++) {
    size_t cap = cph_variant_rows(&vs->v[i]);
    out[n++] = cap - 1 ? cap - 1 : 1;
    out[n++] = cap;
    out[n++] = cap + 1;
  }
  size_t last = cph_variant_rows(&vs->v[vs->n - 1]);
  out[n++] = 2 * last - 1;
  out[n++] = 2 * last + 1;
  out[n++] = 3 * last;
  return n;
}

/* `nb` batches of `nr` (at most 8) reads of random lengths in [rlo, rhi]
 * against 3 haplotypes in [hmin, hmax]; odd batches' reads copied from their
 * first haplotype, or every batch's with `all_similar` (add_batch). */
static void add_batches(gen *g, test_rng *rng, int nb, size_t nr, unsigned rlo,
                        unsigned rhi, unsigned hmin, unsigned hmax,
                        int all_similar) {
  size_t lens[8];
  if (nr > sizeof lens / sizeof lens[0])
    abort();
  for (int b = 0; b < nb; b++) {
    for (size_t r = 0; r < nr; r++)
      lens[r] = test_rng_range(rng, rlo, rhi);
    add_batch(g, rng, lens, nr, 3, hmin, hmax, all_similar || b % 2, 0);
  }
}

/* Device results, or NULL when the compute call failed (already counted
 * as a failure; nothing to compare then). */
static double *run_device(clphmm_context *ctx, const gen *g, size_t n) {
  double *out = malloc((n ? n : 1) * sizeof *out);
  if (!out)
    abort();
  if (CHECK_STATUS(clphmm_compute(ctx, g->batches, g->n, out), CLPHMM_SUCCESS,
                   ctx) != CLPHMM_SUCCESS) {
    free(out);
    return NULL;
  }
  return out;
}

static double *run_reference(const gen *g, size_t n, clphmm_precision p) {
  double *out = malloc((n ? n : 1) * sizeof *out);
  if (!out)
    abort();
  CHECK_STATUS(clphmm_reference(g->batches, g->n, p, out), CLPHMM_SUCCESS,
               NULL);
  return out;
}

/* GKL's double computation of every pair (what a rescue returns). */
static double *run_reference_gkl_double(const gen *g, size_t n) {
  double *out = malloc((n ? n : 1) * sizeof *out);
  if (!out)
    abort();
  size_t k = 0;
  for (size_t b = 0; b < g->n; b++) {
    const clphmm_batch *bt = &g->batches[b];
    for (size_t r = 0; r < bt->n_reads; r++)
      for (size_t h = 0; h < bt->n_haplotypes; h++, k++) {
        double s = 0;
        CHECK_STATUS(cph_reference_pair_double(
                         &bt->reads[r], &bt->haplotypes[h], CPH_GKL_DOUBLE, &s),
                     CLPHMM_SUCCESS, NULL);
        out[k] = cph_log10_double(s);
      }
  }
  return out;
}

/* Device vs reference on every pair of `g`; returns the max difference.
 * `rescued`: every pair is expected to come from the double rescue, so
 * the reference is GKL's double computation, at the double level. */
static double compare_as(clphmm_context *ctx, const gen *g, const char *what,
                         int rescued) {
  size_t n;
  CHECK_STATUS(clphmm_count_pairs(g->batches, g->n, &n), CLPHMM_SUCCESS, NULL);
  const double level = ctx->precision == CLPHMM_PRECISION_FLOAT && !rescued
                           ? LEVEL_FLOAT
                           : LEVEL_DOUBLE;
  double *dev = run_device(ctx, g, n);
  if (!dev)
    return INFINITY;
  double *ref = rescued ? run_reference_gkl_double(g, n)
                        : run_reference(g, n, ctx->precision);
  double worst = 0;
  size_t bad = 0, nonfinite = 0;
  for (size_t i = 0; i < n; i++) {
    double d = test_abs_diff(dev[i], ref[i]);
    if (d > worst)
      worst = d;
    if (isnan(dev[i]) || (isinf(dev[i]) && dev[i] > 0))
      nonfinite++;
    if (!(d <= level) && bad++ < 5)
      CHECK(0, "%s: pair %zu device %.12g reference %.12g", what, i, dev[i],
            ref[i]);
  }
  CHECK(bad == 0, "%s: %zu of %zu pairs beyond %g", what, bad, n, level);
  CHECK(nonfinite == 0, "%s: %zu NaN or +inf results", what, nonfinite);
  printf("%-9s %-34s %6zu pairs  max |device - reference| %.3g\n",
         ctx->precision ? "double" : "float", what, n, worst);
  free(dev);
  free(ref);
  return worst;
}

static double compare(clphmm_context *ctx, const gen *g, const char *what) {
  return compare_as(ctx, g, what, 0);
}

/* The variant set serving the context's precision. */
static const cph_variant_set *vset(const clphmm_context *ctx) {
  return &ctx->eng[0]->variants[ctx->precision == CLPHMM_PRECISION_DOUBLE];
}

static void test_bins(clphmm_context *ctx, test_rng *rng, int wild) {
  gen g = {0};
  const cph_variant_set *vs = vset(ctx);
  size_t lens[64];
  size_t nl = edge_lengths(vs, lens);
  int used[CPH_MAX_VARIANTS] = {0}, multi = 0;
  for (size_t i = 0; i < nl; i++) {
    size_t bin = cph_plan_bin(vs, (uint32_t)lens[i]);
    used[bin] = 1;
    multi |= lens[i] > cph_variant_rows(&vs->v[bin]);
    /* haplotypes shorter and longer than the read, and of length 1 */
    unsigned hmax = (unsigned)(lens[i] + 40);
    add_batch(&g, rng, &lens[i], 1, 3, 1, hmax, !wild, wild);
    add_batch(&g, rng, &lens[i], 1, 1, 1, 1, 0, wild);
  }
  for (size_t v = 0; v < vs->n; v++)
    CHECK(used[v], "variant %zu (%ux%u) not exercised", v, vs->v[v].g,
          vs->v[v].c);
  CHECK(multi, "no multi-tile read generated");
  compare(ctx, &g, wild ? "every bin, qualities 0..127" : "every bin");
  gen_free(&g);
}

/* Many reads per batch, mixed lengths: the realistic shape. */
static void test_mixed(clphmm_context *ctx, test_rng *rng) {
  gen g = {0};
  for (int b = 0; b < 6; b++) {
    size_t lens[24];
    for (size_t r = 0; r < 24; r++)
      lens[r] = test_rng_range(rng, 1, 300);
    add_batch(&g, rng, lens, 24, (size_t)test_rng_range(rng, 1, 6), 1, 320, 1,
              0);
  }
  compare(ctx, &g, "mixed batches");
  gen_free(&g);
}

/* Unrelated read and haplotype, high qualities: log10 L far below -64, so
 * float mode must rescue in double. */
static void test_rescue(clphmm_context *ctx, test_rng *rng) {
  gen g = {0};
  size_t lens[4] = {90, 120, 150, 40};
  add_batch(&g, rng, lens, 4, 3, 100, 200, 0, 0);
  compare(ctx, &g, "pairs needing the double rescue");
  clphmm_stats st;
  CHECK_STATUS(clphmm_context_stats(ctx, &st), CLPHMM_SUCCESS, ctx);
  if (ctx->precision == CLPHMM_PRECISION_FLOAT)
    CHECK(st.rescued_pairs > 0, "no pair was rescued");
  else
    CHECK(st.rescued_pairs == 0, "double mode rescued %llu pairs",
          (unsigned long long)st.rescued_pairs);
  gen_free(&g);
}

/* clphmm_options.profile: without it the statistics' device times stay 0
 * (no launch has an event, the queue no profiling) and the launches are
 * still counted; with it they are measured; the results are the same, bit
 * for bit. */
static void test_profile(clphmm_precision p) {
  test_rng own, *rng = &own; /* (the later tests' inputs stay as they were) */
  test_rng_init(rng, 20261126u + (unsigned)p);
  gen g = {0};
  size_t lens[] = {12, 40, 90, 150};
  add_batch(&g, rng, lens, 4, 3, 60, 200, 1, 0);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  double *out[2] = {NULL, NULL};
  for (int on = 0; on < 2; on++) {
    clphmm_options o;
    clphmm_options_init(&o);
    o.precision = p;
    o.profile = on;
    clphmm_context *ctx = NULL;
    if (CHECK_STATUS(clphmm_context_create(&o, &ctx), CLPHMM_SUCCESS, NULL))
      break;
    out[on] = run_device(ctx, &g, n);
    clphmm_stats st;
    clphmm_context_stats(ctx, &st);
    CHECK(st.launches >= 1, "profile %d: %llu launches counted", on,
          (unsigned long long)st.launches);
    CHECK(on ? st.kernel_seconds > 0 && st.rows_seconds >= 0
             : st.kernel_seconds == 0 && st.rows_seconds == 0 &&
                   st.download_seconds == 0,
          "profile %d: kernel %g s, rows %g s, download %g s", on,
          st.kernel_seconds, st.rows_seconds, st.download_seconds);
    clphmm_context_destroy(ctx);
  }
  CHECK(out[0] && out[1] && memcmp(out[0], out[1], n * sizeof *out[0]) == 0,
        "%s: results with and without profiling differ",
        p ? "double" : "float");
  free(out[0]);
  free(out[1]);
  gen_free(&g);
}

/* Small calls go through the packs (one upload and one download per
 * chunk, engine/pack.h): a call per region, regions growing so that the
 * packs' parts are carved again, some with pairs for the double rescue
 * (its chunk is packed too). Results bit-identical to the same calls
 * unpacked (CLPHMM_PACK_BYTES=0) and within the level of the reference.
 * A third round polls the chunks' last commands before blocking
 * (CLPHMM_WAIT_SPIN_US, GPUs' default, off on CPU devices): the same
 * results, and some waits ended by the polling.
 * (Its own random stream: the later tests' inputs stay as they were.) */
static void test_packed(clphmm_context *ctx) {
  test_rng own, *rng = &own;
  test_rng_init(rng, 20261125u + (unsigned)ctx->precision);
  cph_engine *e = ctx->eng[0];
  const size_t keep = e->pack_bytes;
  gen g = {0};
  for (size_t b = 0; b < 6; b++) {
    size_t lens[12];
    const size_t nr = 2 + 2 * b;
    for (size_t r = 0; r < nr; r++)
      lens[r] = test_rng_range(rng, 1, 60 + 60 * (unsigned)b);
    /* Odd regions: unrelated reads of high quality (rescued in float). */
    add_batch(&g, rng, lens, nr, 1 + b, 20, 100 + 80 * (unsigned)b, !(b & 1),
              0);
  }
  size_t n_all = 0;
  for (size_t b = 0; b < g.n; b++)
    n_all += g.batches[b].n_reads * g.batches[b].n_haplotypes;
  double *packed = malloc(n_all * sizeof *packed);
  double *plain = malloc(n_all * sizeof *plain);
  double *spun = malloc(n_all * sizeof *spun);
  if (!packed || !plain || !spun)
    abort();
  uint64_t rescued = 0;
  const double keep_spin = e->wait_spin_s;
  const unsigned long spins = e->spin_waits;
  for (int pass = 0; pass < 3; pass++) {
    e->pack_bytes = pass == 1 ? 0 : keep ? keep : CPH_PACK_DEFAULT_BYTES;
    e->wait_spin_s = pass == 2 ? 1.0 : 0;
    double *out = pass == 0 ? packed : pass == 1 ? plain : spun;
    size_t at = 0;
    for (size_t b = 0; b < g.n; b++) {
      const clphmm_batch *bt = &g.batches[b];
      CHECK_STATUS(clphmm_compute(ctx, bt, 1, out + at), CLPHMM_SUCCESS, ctx);
      CHECK(e->slots[0].packed == (pass != 1),
            "region %zu: packed %d, asked %d", b, e->slots[0].packed,
            pass != 1);
      clphmm_stats st;
      clphmm_context_stats(ctx, &st);
      if (!pass)
        rescued += st.rescued_pairs;
      /* (Its rescue ran on the device through the rescue slot.) */
      if (st.rescued_pairs && st.cpu_pairs == 0)
        CHECK(e->slots[CPH_RESCUE_SLOT].packed == (pass != 1),
              "region %zu's rescue: packed %d, asked %d", b,
              e->slots[CPH_RESCUE_SLOT].packed, pass != 1);
      at += bt->n_reads * bt->n_haplotypes;
    }
  }
  e->pack_bytes = keep;
  e->wait_spin_s = keep_spin;
  CHECK(e->d.in.n == 5 && e->d.out.n == 2, "packs not carved: %zu, %zu parts",
        e->d.in.n, e->d.out.n);
  CHECK(memcmp(packed, plain, n_all * sizeof *packed) == 0,
        "packed and unpacked calls give different results");
  CHECK(memcmp(packed, spun, n_all * sizeof *packed) == 0,
        "calls whose waits poll give different results");
  CHECK(e->spin_waits > spins, "no wait was ended by polling (%lu)",
        e->spin_waits - spins);
  if (ctx->precision == CLPHMM_PRECISION_FLOAT)
    CHECK(rescued > 0, "no packed call rescued a pair");
  compare(ctx, &g, "regions, one call (packed)");
  free(packed);
  free(plain);
  free(spun);
  gen_free(&g);
}

/* The span of a pack's parts (what one copy of all of them moves). */
static size_t pack_span(const cph_pack *p) {
  return p->n ? p->off[p->n - 1] + p->cap[p->n - 1] : 0;
}

/* Packs carved for a large chunk are carved again, to size, for small
 * ones (engine/pack.h: the one copy moves the whole span up to the last
 * part, so a small region would otherwise copy the large one's shares),
 * and the small call's results are those of the same call unpacked.
 * (Its own random stream.) */
static void test_pack_shrink(clphmm_context *ctx) {
  test_rng own, *rng = &own;
  test_rng_init(rng, 20261127u + (unsigned)ctx->precision);
  cph_engine *e = ctx->eng[0];
  gen g = {0};
  size_t big[48], small[2] = {50, 70};
  for (size_t r = 0; r < 48; r++)
    big[r] = 600;
  add_batch(&g, rng, big, 48, 1, 620, 650, 1, 0);
  add_batch(&g, rng, small, 2, 2, 100, 120, 1, 0);
  double out_big[48], out_small[4], plain[4];
  /* (Packed whatever its rows cost: prepared on the host, 64 bytes each
   * in double.) */
  const size_t keep = e->pack_bytes, on = keep ? keep : CPH_PACK_DEFAULT_BYTES;
  e->pack_bytes = CPH_PACK_MAX_BYTES;
  CHECK_STATUS(clphmm_compute(ctx, &g.batches[0], 1, out_big), CLPHMM_SUCCESS,
               ctx);
  e->pack_bytes = on;
  CHECK(e->slots[0].packed, "the large region was not packed");
  const size_t large = pack_span(&e->d.in);
  /* (Carved again after several loose chunks in a row: pack.c.) */
  for (int i = 0; i < 12; i++) {
    double again[4];
    CHECK_STATUS(clphmm_compute(ctx, &g.batches[1], 1, i ? again : out_small),
                 CLPHMM_SUCCESS, ctx);
    CHECK(e->slots[0].packed, "the small region was not packed");
    CHECK(!i || memcmp(again, out_small, sizeof again) == 0,
          "the small region's call %d differs from its first", i);
  }
  const size_t span = pack_span(&e->d.in);
  CHECK(span * 4 < large, "packs not carved again: %zu bytes after %zu", span,
        large);
  e->pack_bytes = 0;
  CHECK_STATUS(clphmm_compute(ctx, &g.batches[1], 1, plain), CLPHMM_SUCCESS,
               ctx);
  CHECK(memcmp(out_small, plain, sizeof plain) == 0,
        "the small region after the large one: packed and unpacked differ");
  /* Grown again: the large region's results as before. */
  double regrown[48];
  e->pack_bytes = CPH_PACK_MAX_BYTES;
  CHECK_STATUS(clphmm_compute(ctx, &g.batches[0], 1, regrown), CLPHMM_SUCCESS,
               ctx);
  e->pack_bytes = keep;
  CHECK(e->slots[0].packed && pack_span(&e->d.in) > span,
        "the large region again: packed %d, %zu bytes after %zu",
        e->slots[0].packed, pack_span(&e->d.in), span);
  CHECK(memcmp(regrown, out_big, sizeof regrown) == 0,
        "the large region after the small ones differs from its first");
  compare(ctx, &g, "a small region after a large one (packed)");
  gen_free(&g);
}

/* A read whose insertion quality jumps from 3 to 127 (with a gap
 * continuation of 0) at rows 2-3: valid input with an ordinary likelihood,
 * but the scaled fast form's x values overflow there. Every such pair must
 * then be recomputed in double (a sum that is not finite is rescued) and
 * still match the reference; the other forms rescue none of them. */
static void test_overflow_guard(clphmm_context *ctx, test_rng *rng) {
  gen g = {0};
  size_t lens[64], n = 0;
  size_t nl = edge_lengths(vset(ctx), lens);
  for (size_t i = 0; i < nl; i++) {
    size_t len = lens[i];
    if (len < 3)
      continue;
    char *hb = gen_alloc(&g, len + 10);
    random_bases(rng, hb, len + 10, 0);
    clphmm_haplotype *hap = gen_alloc(&g, sizeof *hap);
    *hap = (clphmm_haplotype){hb, len + 10};
    uint8_t *q = gen_alloc(&g, 4 * len);
    for (size_t k = 0; k < len; k++) {
      q[k] = 30;
      q[len + k] = k == 1 ? 3 : k == 2 ? 127 : 45;
      q[2 * len + k] = 45;
      q[3 * len + k] = k == 2 ? 0 : 10;
    }
    clphmm_read *rd = gen_alloc(&g, sizeof *rd);
    *rd = (clphmm_read){hb + 5, q, q + len, q + 2 * len, q + 3 * len, len};
    push_batch(&g, (clphmm_batch){rd, 1, hap, 1});
    n++;
  }
  const int scaled = cph_variant_scaled(&vset(ctx)->v[0]);
  /* Rescued pairs are GKL's double results, which on the longest reads
   * differ from the float reference by more than the float level: compare
   * them with the double computation itself. */
  compare_as(ctx, &g, "insertion quality jump 3 -> 127", scaled);
  clphmm_stats st; /* of the last compute call */
  CHECK_STATUS(clphmm_context_stats(ctx, &st), CLPHMM_SUCCESS, ctx);
  const uint64_t want = scaled ? n : 0;
  const uint64_t got = st.rescued_pairs;
  CHECK(got == want, "%llu of %zu pairs rescued, expected %llu",
        (unsigned long long)got, n, (unsigned long long)want);
  gen_free(&g);
}

/* Tiny launches (many chunks) and repeated runs give bit-identical output. */
static void test_chunking_determinism(clphmm_context *ctx, test_rng *rng) {
  gen g = {0};
  size_t lens[8] = {5, 17, 33, 64, 65, 200, 257, 600};
  add_batch(&g, rng, lens, 8, 4, 1, 300, 1, 0);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  double *a = run_device(ctx, &g, n);
  double *b = run_device(ctx, &g, n);
  uint64_t saved = ctx->eng[0]->max_cells;
  ctx->eng[0]->max_cells = 2000;
  double *c = run_device(ctx, &g, n);
  clphmm_stats st;
  clphmm_context_stats(ctx, &st);
  ctx->eng[0]->max_cells = saved;
  CHECK(a && b && memcmp(a, b, n * sizeof *a) == 0, "two runs differ");
  CHECK(a && c && memcmp(a, c, n * sizeof *a) == 0, "chunked run differs");
  CHECK(st.launches >= 8, "chunking made only %llu launches",
        (unsigned long long)st.launches);
  free(a);
  free(b);
  free(c);
  gen_free(&g);
}

/* Long reads on the long-read variant, 2 to 2 x (lane groups) + 1 tiles,
 * under haplotypes of their length and of a few bases: tiles run
 * concurrently (every width the variant allows, with partly
 * filled last rounds) and one after the other (CLPHMM_CONCURRENT_TILES=1
 * does the same as max_coop = 1). The arithmetic is the same, so the
 * results must be bit-identical; the default choice per launch must match
 * the reference. */
static void test_concurrent_tiles(clphmm_context *ctx, test_rng *rng) {
  const cph_variant_set *vs = vset(ctx);
  const cph_variant *v = &vs->v[vs->n - 1];
  /* (A vector variant's work-item runs its pairs' tiles in turn.) */
  const unsigned rows = cph_variant_rows(v), lg = v->vec ? 1 : v->wg / v->g;
  const unsigned wmax = cph_variant_coop(v, UINT32_MAX, 0);
  char name[64];
  cph_variant_name(v, name, sizeof name);
  CHECK(wmax > 1 || lg == 1, "%s runs no tiles concurrently", name);
  gen g = {0};
  unsigned widths = 0; /* bit w: width w used */
  for (unsigned t = 2; t <= 2 * lg + 1 && t <= 17; t++) {
    size_t len = (size_t)rows * (t - 1) + test_rng_range(rng, 1, rows);
    widths |= 1u << cph_variant_coop(v, t, 0);
    add_batch(&g, rng, &len, 1, 2, (unsigned)len / 2, (unsigned)len + 40, 1, 0);
  }
  for (unsigned w = 2; w <= wmax && w <= 16; w *= 2)
    CHECK(widths & (1u << w), "no launch with %u concurrent tiles", w);
  /* Haplotypes of 1..6 bases under reads of several tiles: a tile has
   * fewer steps than the boundary row's loads ahead (PREFETCH in
   * cl/pairhmm.cl) and than the steps between concurrent tiles, so its
   * loads run past its columns. (Their own generator: the shared sequence
   * feeds later tests.) */
  test_rng short_rng;
  test_rng_init(&short_rng, 20261126);
  for (unsigned t = 2; t <= 2 * lg + 1 && t <= 17; t += 2) {
    size_t len = (size_t)rows * (t - 1) + test_rng_range(&short_rng, 1, rows);
    add_batch(&g, &short_rng, &len, 1, 2, 1, 6, 0, 0);
  }
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  const unsigned saved = ctx->eng[0]->max_coop;
  ctx->eng[0]->max_coop = 1024; /* concurrent, whatever the launch's size */
  double *conc = run_device(ctx, &g, n);
  ctx->eng[0]->max_coop = 1;
  double *seq = run_device(ctx, &g, n);
  ctx->eng[0]->max_coop = saved;
  CHECK(conc && seq && memcmp(conc, seq, n * sizeof *conc) == 0,
        "concurrent and sequential tiles differ");
  free(conc);
  free(seq);
  compare(ctx, &g, "concurrent tiles");
  gen_free(&g);
}

/* CLPHMM_TEST_SKIP_LONG set, and not to "0": skip the 20,000 x 30,000
 * pair (test_long). */
static int skip_long(void) {
  const char *v = getenv("CLPHMM_TEST_SKIP_LONG");
  return v && *v && strcmp(v, "0") != 0;
}

static int open_context(clphmm_precision p, clphmm_context **ctx) {
  clphmm_options o;
  clphmm_options_init(&o);
  o.precision = p;
  clphmm_status st = clphmm_context_create(&o, ctx);
  if (st == CLPHMM_ERROR_NO_OPENCL || st == CLPHMM_ERROR_NO_DEVICE) {
    printf("no OpenCL device: %s\n", clphmm_last_error(NULL));
    return getenv("CLPHMM_TEST_REQUIRE_DEVICE") ? -1 : 0;
  }
  CHECK_STATUS(st, CLPHMM_SUCCESS, NULL);
  return st == CLPHMM_SUCCESS ? 1 : -1;
}

/* Set names[i] to vals[i] for i < n (a NULL value leaves its variable
 * alone), keeping the old values in keep[] for env_restore. */
static void env_set(const char *const *names, const char *const *vals, int n,
                    char **keep) {
  for (int i = 0; i < n; i++) {
    keep[i] = NULL;
    if (!vals[i])
      continue;
    const char *v = getenv(names[i]);
    keep[i] = v ? strdup(v) : NULL;
    setenv(names[i], vals[i], 1);
  }
}

static void env_restore(const char *const *names, const char *const *vals,
                        int n, char **keep) {
  for (int i = 0; i < n; i++) {
    if (!vals[i])
      continue;
    if (keep[i])
      setenv(names[i], keep[i], 1);
    else
      unsetenv(names[i]);
    free(keep[i]);
  }
}

/* A context on CLPHMM_VARIANTS=list and, unless `double_list` is NULL,
 * CLPHMM_DOUBLE_VARIANTS=double_list (a device's table may name its own
 * double list); both restored after. 0 when no device. */
static int open_with_variants(clphmm_precision p, const char *list,
                              const char *double_list, clphmm_context **ctx) {
  static const char *const names[2] = {"CLPHMM_VARIANTS",
                                       "CLPHMM_DOUBLE_VARIANTS"};
  const char *const lists[2] = {list, double_list};
  char *keep[2];
  env_set(names, lists, 2, keep);
  const int ok = open_context(p, ctx);
  env_restore(names, lists, 2, keep);
  return ok;
}

/* open_with_variants with two more variables of the environment set to
 * vals (names[i] = vals[i]) while the context is made, restored after. */
static int open_with_env(clphmm_precision p, const char *list,
                         const char *double_list, const char *const names[2],
                         const char *const vals[2], clphmm_context **ctx) {
  char *keep[2];
  env_set(names, vals, 2, keep);
  const int ok = open_with_variants(p, list, double_list, ctx);
  env_restore(names, vals, 2, keep);
  return ok;
}

/* A long-read variant (":long", here with a register cap) given through
 * CLPHMM_VARIANTS: every read longer than the other variants' 64 rows runs
 * on it, tile after tile (on NVIDIA in float, with the boundary row in
 * local memory rings: 32 lanes, chunks of 32 steps, so haplotype lengths
 * around chunk edges and pairs of different lengths in one work-group). */
static void test_long_variant(clphmm_precision p, test_rng *rng) {
  clphmm_context *ctx = NULL;
  const int ok =
      open_with_variants(p, "4x4/64,8x8/64,32x8/32:long:r128", NULL, &ctx);
  if (ok <= 0)
    return;
  const cph_variant_set *vs = vset(ctx);
  const int has_long = vs->v[vs->n - 1].seq;
  ctx->eng[0]->seq_fill = 0; /* the long-read variant, however few pairs */
  CHECK(has_long == (p == CLPHMM_PRECISION_FLOAT),
        "long-read variant in the %s set: %d", p ? "double" : "float",
        has_long);
  gen g = {0};
  static const size_t lens[] = {65, 255, 256, 257, 511, 700, 1000, 1500};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    size_t len = lens[i];
    add_batch(&g, rng, &len, 1, 3, 1, (unsigned)len + 70, 1, 0);
  }
  static const unsigned haps[] = {1, 31, 32, 33, 63, 64, 65, 97};
  for (size_t i = 0; i < sizeof haps / sizeof *haps; i++) {
    size_t len = 300;
    add_batch(&g, rng, &len, 1, 1, haps[i], haps[i], 1, 0);
  }
  compare(ctx, &g, "long-read variant");
  clphmm_stats st;
  CHECK_STATUS(clphmm_context_stats(ctx, &st), CLPHMM_SUCCESS, ctx);
  const clphmm_bin_stats *last = &st.bins[st.n_bins - 1];
  if (has_long)
    CHECK(last->max_rows == UINT32_MAX && strstr(last->variant, ":long") &&
              last->pairs == 8 * 3 + 8,
          "long-read bin: %s, max_rows %u, %llu pairs", last->variant,
          last->max_rows, (unsigned long long)last->pairs);
  /* Too few of them to fill the device: they all go to 8x8/64's
   * concurrent tiles (cph_plan_bin_long), still right. */
  ctx->eng[0]->seq_fill = UINT64_MAX;
  compare(ctx, &g, "long-read variant, too few pairs to fill the device");
  CHECK_STATUS(clphmm_context_stats(ctx, &st), CLPHMM_SUCCESS, ctx);
  if (has_long)
    CHECK(st.bins[st.n_bins - 1].pairs == 0 &&
              st.bins[st.n_bins - 2].pairs >= 8 * 3 + 8,
          "few long pairs: %llu on the long-read variant, %llu on %s",
          (unsigned long long)st.bins[st.n_bins - 1].pairs,
          (unsigned long long)st.bins[st.n_bins - 2].pairs,
          st.bins[st.n_bins - 2].variant);
  gen_free(&g);
  clphmm_context_destroy(ctx);
}

/* Float mode's speculative double pass (speculate.c) on a small
 * call whose float pass computed `want` and rescued `rescued` pairs
 * without it (the engine's last call rescued: `auto` speculates now):
 * always, never and auto give the same results, bit for bit, and rescue
 * as many pairs, on the side queue or the main one; always and auto
 * speculate, never does not. */
static void check_speculation(clphmm_context *ctx, const gen *g, size_t n,
                              const double *want, uint64_t rescued,
                              int one_tile) {
  static const char *const names[] = {"never", "always", "auto"};
  cph_engine *e = ctx->eng[0];
  const int keep = e->speculate, keep_side = e->side_queue;
  CHECK(rescued > 0, "the small call rescued no pair to speculate on");
  uint64_t onward = 0; /* pairs past the rescue without speculation */
  /* (Both sets' small-call variants have one shape here: where every read
   * fits one tile (`one_tile`), the speculative pass copies the float
   * chunk's schedule, unless told not to, and then on the side queue
   * reads the float chunk's copies in, unless told not to.) */
  for (int m = 0; m < 18; m++) {
    const int mode = m % 3;
    e->speculate = mode;
    e->side_queue = m % 6 < 3;
    e->copy_sched = m / 6 != 1;
    e->share_inputs = m / 6 != 2;
    const unsigned long before = e->spec_calls, side = e->side_chunks,
                        copies = e->sched_copies, shared = e->shared_inputs;
    double *got = run_device(ctx, g, n);
    clphmm_stats st;
    clphmm_context_stats(ctx, &st);
    CHECK(got && memcmp(got, want, n * sizeof *got) == 0,
          "speculation %s: results differ", names[mode]);
    CHECK(st.rescued_pairs == rescued,
          "speculation %s: %llu pairs rescued, %llu without it", names[mode],
          (unsigned long long)st.rescued_pairs, (unsigned long long)rescued);
    /* (The speculative pass's sums stand where the rescue's do: its
     * weights are computed for its rescue pairs, cph_later_weights; a
     * missing weight is NaN, which would send its pair on.) */
    const uint64_t on = st.exact_pairs + st.cpu_pairs;
    if (mode == CPH_SPECULATE_NEVER)
      onward = on;
    CHECK(on == onward,
          "speculation %s: %llu pairs went on to the exact pass or the CPU, "
          "%llu without it",
          names[mode], (unsigned long long)on, (unsigned long long)onward);
    CHECK((e->spec_calls > before) == (mode != CPH_SPECULATE_NEVER),
          "speculation %s: %lu speculative passes", names[mode],
          e->spec_calls - before);
    /* (It runs on the side queue, beside the float pass, unless told.) */
    CHECK((e->side_chunks > side) ==
              (mode != CPH_SPECULATE_NEVER && e->side_queue),
          "speculation %s, side queue %d: %lu chunks on it", names[mode],
          e->side_queue, e->side_chunks - side);
    CHECK((e->sched_copies > copies) ==
              (mode != CPH_SPECULATE_NEVER && e->copy_sched && one_tile),
          "speculation %s, schedule copy %d: %lu copied", names[mode],
          e->copy_sched, e->sched_copies - copies);
    CHECK((e->shared_inputs > shared) ==
              (mode != CPH_SPECULATE_NEVER && e->side_queue && e->copy_sched &&
               e->share_inputs && one_tile),
          "speculation %s, side queue %d, schedule copy %d, sharing %d: %lu "
          "passes read the float chunk's copies in",
          names[mode], e->side_queue, e->copy_sched, e->share_inputs,
          e->shared_inputs - shared);
    free(got);
  }
  e->speculate = keep;
  e->side_queue = keep_side;
  e->copy_sched = 1;
  e->share_inputs = 1;
}

/* `auto` speculation after a small call `g` (n pairs) that rescued:
 * CPH_SPEC_AFTER calls that rescue nothing speculate, the next does not,
 * and `g` again speculates. */
static void check_spec_after(clphmm_context *ctx, const gen *g, size_t n) {
  /* (Its own numbers: the shared sequence feeds later tests, whose data
   * must stay as it was.) */
  test_rng own, *rng = &own;
  test_rng_init(rng, 20261125);
  cph_engine *e = ctx->eng[0];
  const int keep = e->speculate;
  e->speculate = CPH_SPECULATE_AUTO;
  gen quiet = {0};
  size_t lens[] = {40, 60, 80};
  add_batch(&quiet, rng, lens, 3, 1, 100, 150, 1, 0); /* alike: no rescue */
  double *got = run_device(ctx, g, n);
  free(got);
  for (unsigned i = 0; i <= CPH_SPEC_AFTER; i++) {
    const unsigned long before = e->spec_calls;
    got = run_device(ctx, &quiet, 3);
    free(got);
    clphmm_stats st;
    clphmm_context_stats(ctx, &st);
    CHECK(st.rescued_pairs == 0, "the quiet call rescued %llu pairs",
          (unsigned long long)st.rescued_pairs);
    CHECK((e->spec_calls > before) == (i < CPH_SPEC_AFTER),
          "auto, call %u after one that rescued: %s", i + 1,
          e->spec_calls > before ? "speculated" : "did not speculate");
  }
  const unsigned long before = e->spec_calls;
  got = run_device(ctx, g, n);
  free(got);
  CHECK(e->spec_calls == before, "auto speculated after %u quiet calls",
        CPH_SPEC_AFTER + 1);
  got = run_device(ctx, g, n);
  free(got);
  CHECK(e->spec_calls == before + 1,
        "auto did not speculate after a call that rescued");
  gen_free(&quiet);
  e->speculate = keep;
}

/* A profiled context's small calls wait for their speculative passes
 * (nothing left for the next call), so that every launch of a call has
 * its event in that call's statistics. */
static void check_spec_leave_profiled(const gen *quiet, size_t n) {
  static const char *const names[2] = {"CLPHMM_PROFILE", "CLPHMM_SPECULATE"};
  static const char *const ones[2] = {"1", "1"};
  clphmm_context *ctx = NULL;
  if (open_with_env(CLPHMM_PRECISION_FLOAT, "4x4/64,8x8/64,16x4/64:small",
                    "4x4/64,8x8/64,16x4/64:small", names, ones, &ctx) <= 0) {
    clphmm_context_destroy(ctx);
    return;
  }
  const cph_engine *e = ctx->eng[0];
  for (int i = 0; i < 2; i++) {
    const unsigned long spec = e->spec_calls, left = e->spec_left_passes;
    free(run_device(ctx, quiet, n));
    clphmm_stats st;
    clphmm_context_stats(ctx, &st);
    CHECK(e->spec_calls > spec && e->spec_left_passes == left &&
              !e->slots[CPH_RESCUE_SLOT].left &&
              e->kernel_events >= st.launches,
          "profiled call %d: %lu speculative, %lu left, %lu kernel events "
          "for %llu launches",
          i, e->spec_calls - spec, e->spec_left_passes - left, e->kernel_events,
          (unsigned long long)st.launches);
  }
  clphmm_context_destroy(ctx);
}

/* A small call that rescues nothing returns without waiting for its
 * speculative pass (speculate.c: the pass is `left` in the rescue slot),
 * and the engine's next call waits for it and drops it, whether that call
 * is small or not: quiet calls in a row, `g` (n pairs, which rescues;
 * `want` its results), a quiet call, one that does not speculate and a
 * call of at least `fill` pairs (not small), each with the bits of calls
 * that wait for their passes and as many launches counted. The last quiet
 * call's pass stays left for the caller's next call or the context's
 * end. */
static void check_spec_leave(clphmm_context *ctx, const gen *g, size_t n,
                             const double *want, size_t fill) {
  /* (Its own numbers, as check_spec_after's.) */
  test_rng own, *rng = &own;
  test_rng_init(rng, 20261128);
  cph_engine *e = ctx->eng[0];
  const cph_slot *r = &e->slots[CPH_RESCUE_SLOT];
  const int keep = e->speculate, keep_leave = e->spec_leave;
  e->speculate = CPH_SPECULATE_ALWAYS;
  gen quiet = {0}, big = {0};
  /* (Reads of one tile: the speculative pass copies the float chunk's
   * schedule and, on the side queue, reads its copy in, which the next
   * call's copy overwrites: the case that needs the wait.) */
  size_t lens[] = {40, 60, 64}, n_big = 0;
  add_batch(&quiet, rng, lens, 3, 1, 100, 150, 1, 0); /* alike: no rescue */
  while (n_big < fill) { /* enough pairs to fill the device */
    size_t len = test_rng_range(rng, 20, 120);
    add_batch(&big, rng, &len, 1, 8, 50, 150, 1, 0);
    n_big += 8;
  }
  e->spec_leave = 0;
  unsigned long left = e->spec_left_passes;
  double *q = run_device(ctx, &quiet, 3), *qb = run_device(ctx, &big, n_big);
  double *qq = run_device(ctx, &quiet, 3);
  clphmm_stats st;
  clphmm_context_stats(ctx, &st);
  const uint64_t launches = st.launches;
  CHECK(st.rescued_pairs == 0 && e->spec_left_passes == left && !r->left,
        "a quiet call waiting for its pass: %llu rescued, %lu left",
        (unsigned long long)st.rescued_pairs, e->spec_left_passes - left);
  e->spec_leave = 1;
  /* Quiet calls, g, a quiet call, one that does not speculate, a quiet
   * call and a large one. */
  for (int i = 0; i < 7; i++) {
    const int rescues = i == 2, large = i == 6;
    const int speculates = i != 4 && !large;
    e->speculate = i == 4 ? CPH_SPECULATE_NEVER : CPH_SPECULATE_ALWAYS;
    const unsigned long spec = e->spec_calls, settled = e->spec_settled,
                        shared = e->shared_inputs;
    const int was_left = r->left;
    left = e->spec_left_passes;
    const gen *call = rescues ? g : large ? &big : &quiet;
    const size_t m = rescues ? n : large ? n_big : 3;
    double *got = run_device(ctx, call, m);
    clphmm_context_stats(ctx, &st);
    CHECK(got && q && qb &&
              memcmp(got,
                     rescues ? want
                     : large ? qb
                             : q,
                     m * sizeof *got) == 0,
          "call %d after a pass left: results differ", i);
    CHECK((e->spec_calls > spec) == speculates,
          "call %d: %lu speculative passes", i, e->spec_calls - spec);
    CHECK(rescues || !speculates || e->shared_inputs > shared,
          "call %d: the speculative pass did not read the float chunk's "
          "copy in",
          i);
    /* (Waited for before this call submitted anything.) */
    CHECK(e->spec_settled - settled == (unsigned long)was_left,
          "call %d: %lu passes left before waited for, %d left", i,
          e->spec_settled - settled, was_left);
    CHECK((e->spec_left_passes > left) == (speculates && !rescues) &&
              r->left == (speculates && !rescues),
          "call %d (%s): %lu passes left, the slot's %d", i,
          rescues ? "rescuing"
          : large ? "large"
                  : "quiet",
          e->spec_left_passes - left, r->left);
    CHECK(rescues || !speculates || st.launches == launches,
          "call %d: %llu launches counted, %llu waiting for the pass", i,
          (unsigned long long)st.launches, (unsigned long long)launches);
    free(got);
  }
  check_spec_leave_profiled(&quiet, 3);
  /* (A pass left now: the caller's next call or the context's end.) */
  free(run_device(ctx, &quiet, 3));
  CHECK(r->left, "the last quiet call left no pass");
  free(q);
  free(qb);
  free(qq);
  gen_free(&quiet);
  gen_free(&big);
  e->speculate = keep;
  e->spec_leave = keep_leave;
}

/* Large chunks' uploads on the copy queue (launch.c copies): a call cut
 * into several unpacked chunks on variants whose rows the device prepares
 * gives the same bits without the copy queue, with it, and with their row
 * preparation on it too (into each slot's own rows), equal to the
 * reference; its chunks went over the copy queue only with it, and their
 * row preparations only where asked. */
static void test_copy_queue(clphmm_precision p) {
  /* (Its own numbers, as check_spec_after's.) */
  test_rng own, *rng = &own;
  test_rng_init(rng, 20261126);
  clphmm_context *ctx = NULL;
  /* Profiled, for the kernel time's checks, and in the scaled form, whose
   * row preparation also writes the reads' weights (copied out). */
  static const char *const names[2] = {"CLPHMM_PROFILE", "CLPHMM_FMA"};
  static const char *const ones[2] = {"1", "1"};
  if (open_with_env(p, "4x4/64,8x8/64", "4x4/64,8x8/64", names, ones, &ctx) <=
      0) {
    clphmm_context_destroy(ctx);
    return;
  }
  cph_engine *e = ctx->eng[0];
  gen g = {0};
  add_batches(&g, rng, 12, 6, 10, 120, 20, 160, 0);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  e->pack_bytes = 0;     /* no packed chunks */
  e->chunk_cells = 4000; /* several chunks */
  /* Settings: no copy queue, copies on it, copies and row preparation;
   * and with every launch computing its rows, copies and a preparation of
   * the weights alone (in the scaled form: float mode here), which the
   * launches do not wait for. */
  double *got[4];
  unsigned long copied[4], preps[4], alone = 0;
  const int inl = e->inline_rows;
  for (int on = 0; on < 4; on++) {
    e->copy_uploads = on > 0;
    e->prep_on_copy = on >= 2;
    e->inline_rows = on == 3 ? 2 : inl;
    const unsigned long before = e->copied_chunks, p0 = e->copy_preps,
                        w0 = e->weight_preps;
    got[on] = run_device(ctx, &g, n);
    copied[on] = e->copied_chunks - before;
    preps[on] = e->copy_preps - p0;
    if (on == 3)
      alone = e->weight_preps - w0;
    /* The row preparations on the copy queue may run beside the kernels
     * of the chunk before: the call's kernel time is the union of this
     * call's kernel intervals (at most a launch and a preparation per
     * chunk), at most their sum and at least the preparations' own. */
    clphmm_stats st;
    clphmm_context_stats(ctx, &st);
    const double own_s = cph_spans_sum_seconds(&e->kernel_spans);
    CHECK(st.chunks > 2, "copy queue: %llu chunks",
          (unsigned long long)st.chunks);
    CHECK(e->kernel_spans.n > 0 && e->kernel_spans.n == e->kernel_events &&
              e->kernel_spans.n <= st.launches + st.chunks,
          "copy queue, setting %d: %zu kernel intervals for %llu launches "
          "in %llu chunks",
          on, e->kernel_spans.n, (unsigned long long)st.launches,
          (unsigned long long)st.chunks);
    CHECK(st.kernel_seconds > 0 && st.kernel_seconds <= own_s * 1.000001 &&
              st.kernel_seconds >= st.rows_seconds * 0.999999,
          "copy queue, setting %d: kernel time %g s, the kernels' own %g s, "
          "rows %g s",
          on, st.kernel_seconds, own_s, st.rows_seconds);
  }
  e->inline_rows = inl;
  CHECK(copied[1] > 0 && copied[2] > 0 && copied[3] > 0 && copied[0] == 0,
        "copy queue: %lu, %lu and %lu chunks copied with it, %lu without",
        copied[1], copied[2], copied[3], copied[0]);
  CHECK(preps[2] > 0 && preps[1] == 0 && preps[0] == 0,
        "copy queue: %lu, %lu, %lu row preparations on it (want 0, 0, >0)",
        preps[0], preps[1], preps[2]);
  /* (Double mode's unscaled chunks need no weights: no preparation.) */
  const int scaled = cph_variant_scaled(&vset(ctx)->v[0]);
  CHECK(scaled ? preps[3] > 0 && alone >= preps[3] : preps[3] == 0,
        "copy queue, rows in the kernels: %lu preparations on it, %lu of the "
        "weights alone (scaled form: %d)",
        preps[3], alone, scaled);
  for (int on = 1; on < 4; on++)
    CHECK(got[0] && got[on] && memcmp(got[0], got[on], n * sizeof **got) == 0,
          "copy queue: results of setting %d differ from those without it", on);
  compare(ctx, &g, "chunks over the copy queue");
  for (int on = 0; on < 4; on++)
    free(got[on]);
  gen_free(&g);
  clphmm_context_destroy(ctx);
}

/* Float mode's rescue in chunks (rescue.c): a call cut into several
 * chunks gives the same bits whether its rescue pairs go in one chunk per
 * main chunk, gather until the last main chunk, or wait for the end and go
 * in chunks of 2 or 3 pairs that take turns between the rescue slot and
 * main slot 0; equal to the reference. */
static void test_rescue_chunks(void) {
  test_rng own, *rng = &own;
  test_rng_init(rng, 20261127);
  clphmm_context *ctx = NULL;
  if (open_with_variants(CLPHMM_PRECISION_FLOAT, "4x4/64,8x8/64",
                         "4x4/64,8x8/64", &ctx) <= 0 ||
      !ctx->eng[0]->dev.info.has_fp64) {
    clphmm_context_destroy(ctx);
    return;
  }
  cph_engine *e = ctx->eng[0];
  gen g = {0};
  /* (Even batches: unrelated reads of high quality, rescued.) */
  add_batches(&g, rng, 10, 5, 60, 150, 120, 200, 0);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  e->chunk_cells = 200000; /* several chunks */
  static const struct {
    uint64_t min;
    size_t max;
  } cfg[] = {{CPH_RESCUE_MIN_PAIRS, CPH_RESCUE_MAX_PAIRS},
             {1, CPH_RESCUE_MAX_PAIRS},
             {1, 2},
             {UINT32_MAX, 3}};
  const size_t n_cfg = sizeof cfg / sizeof cfg[0];
  double *got[4] = {NULL};
  clphmm_stats st[4];
  for (size_t i = 0; i < n_cfg; i++) {
    e->rescue_min = cfg[i].min;
    e->rescue_max = cfg[i].max;
    e->slots[0].set = CPH_SET_FLOAT;
    got[i] = run_device(ctx, &g, n);
    clphmm_context_stats(ctx, &st[i]);
    CHECK(got[i] && got[0] && memcmp(got[i], got[0], n * sizeof *got[0]) == 0,
          "rescue chunks of %llu..%zu pairs: results differ",
          (unsigned long long)cfg[i].min, cfg[i].max);
    if (i == n_cfg - 1) /* (its last rescue chunks took turns) */
      CHECK(e->slots[0].set != CPH_SET_FLOAT,
            "the end's rescue chunks did not use main slot 0");
  }
  CHECK(st[0].rescued_pairs >= 8 && st[0].chunks > 2,
        "rescue chunks: %llu pairs rescued in %llu chunks",
        (unsigned long long)st[0].rescued_pairs,
        (unsigned long long)st[0].chunks);
  CHECK(st[3].chunks >= (st[0].rescued_pairs + 2) / 3 + 2 &&
            st[3].chunks > st[0].chunks,
        "rescue chunks of 3 pairs: %llu chunks for %llu pairs",
        (unsigned long long)st[3].chunks,
        (unsigned long long)st[0].rescued_pairs);
  e->rescue_min = CPH_RESCUE_MIN_PAIRS;
  e->rescue_max = CPH_RESCUE_MAX_PAIRS;
  compare(ctx, &g, "rescue in chunks");
  for (size_t i = 0; i < n_cfg; i++)
    free(got[i]);
  gen_free(&g);
  clphmm_context_destroy(ctx);
}

/* A call's first chunks ramp up to the usual size (compute.c
 * chunk_k_bounds, cph_engine.chunk_ramp): with chunks of a fixed number of
 * cells, a first chunk of a half or a quarter of them makes more chunks,
 * and the results are the same bits, equal to the reference (double mode:
 * no rescue chunks among them). */
static void test_chunk_ramp(void) {
  test_rng own, *rng = &own;
  test_rng_init(rng, 20261128);
  clphmm_context *ctx = NULL;
  if (open_with_variants(CLPHMM_PRECISION_DOUBLE, "4x4/64,8x8/64",
                         "4x8/64,8x8/64", &ctx) <= 0) {
    clphmm_context_destroy(ctx);
    return;
  }
  cph_engine *e = ctx->eng[0];
  gen g = {0};
  add_batches(&g, rng, 12, 4, 20, 100, 40, 140, 1);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  e->chunk_cells = 60000;
  static const unsigned ramps[] = {1, 2, 4};
  double *got[3] = {NULL};
  unsigned long long chunks[3] = {0};
  for (int i = 0; i < 3; i++) {
    e->chunk_ramp = ramps[i];
    got[i] = run_device(ctx, &g, n);
    clphmm_stats st;
    clphmm_context_stats(ctx, &st);
    chunks[i] = st.chunks;
    CHECK(got[i] && got[0] && memcmp(got[i], got[0], n * sizeof *got[0]) == 0,
          "first chunk 1/%u: results differ", ramps[i]);
  }
  CHECK(chunks[0] > 2 && chunks[1] > chunks[0] && chunks[2] > chunks[1],
        "ramps 1, 2, 4: %llu, %llu, %llu chunks", chunks[0], chunks[1],
        chunks[2]);
  e->chunk_ramp = CPH_CHUNK_RAMP;
  compare(ctx, &g, "chunks ramping up");
  for (int i = 0; i < 3; i++)
    free(got[i]);
  gen_free(&g);
  clphmm_context_destroy(ctx);
}

/* A fresh context's first call whose pairs all have an empty read or
 * haplotype: a chunk of no jobs (its sort scratch not yet allocated)
 * succeeds with -inf for every pair. */
static void test_only_empty_pairs(clphmm_precision p) {
  clphmm_context *ctx = NULL;
  if (open_context(p, &ctx) <= 0) {
    clphmm_context_destroy(ctx);
    return;
  }
  static const uint8_t q[1] = {30};
  const clphmm_read reads[2] = {{"A", q, q, q, q, 0}, {"C", q, q, q, q, 0}};
  const clphmm_haplotype haps[2] = {{"ACGT", 4}, {"", 0}};
  const clphmm_batch b = {reads, 2, haps, 2};
  double out[4] = {0, 0, 0, 0};
  CHECK_STATUS(clphmm_compute(ctx, &b, 1, out), CLPHMM_SUCCESS, ctx);
  for (int i = 0; i < 4; i++)
    CHECK(isinf(out[i]) && out[i] < 0, "empty pair %d: %g, want -inf", i,
          out[i]);
  clphmm_context_destroy(ctx);
}

/* Call `g` (n pairs) on a small-call variant's context with *setting =
 * value (an engine field that keeps its kernels from computing their rows)
 * for the call: the bits of `want`, and no chunk computed its rows. */
static void check_rows_elsewhere(clphmm_context *ctx, const gen *g, size_t n,
                                 const double *want, int *setting, int value,
                                 const char *how) {
  cph_engine *e = ctx->eng[0];
  const int keep = *setting;
  const unsigned long before = e->inline_chunks;
  *setting = value;
  double *got = run_device(ctx, g, n);
  *setting = keep;
  CHECK(got && want && memcmp(want, got, n * sizeof *got) == 0 &&
            e->inline_chunks == before,
        "%s: the small-call variant %s differs (%lu chunks computed their "
        "rows)",
        ctx->precision ? "double" : "float", how, e->inline_chunks - before);
  free(got);
}

/* Tiles at once through local memory (cl/pairhmm.cl LRING): a small call
 * whose reads all need 2..4 tiles of the small-call variant's 64 rows
 * (16x4/64:small, four lane groups) runs them as concurrent tiles, in one
 * round where its launch has the slots (two tiles with NVIDIA's warps, up
 * to four elsewhere; CPUs order pairs fewest tiles first, so there only
 * groups of two tiles): through the variant's rings, the same bits as
 * tiles one after the other through the boundary row in global memory
 * (max_coop = 1), and the reference's. Its program has the rings
 * (variant.lring: the local memory has room). */
static void test_small_ring(clphmm_precision p, test_rng *rng) {
  clphmm_context *ctx = NULL;
  if (open_with_variants(p, "4x4/64,8x8/64,16x4/64:small",
                         "4x4/64,8x8/64,16x4/64:small", &ctx) <= 0)
    return;
  const int set = p == CLPHMM_PRECISION_DOUBLE ? CPH_SET_DOUBLE : CPH_SET_FLOAT;
  cph_engine *e = ctx->eng[0];
  const cph_kernel *k = NULL;
  CHECK(cph_context_kernel(e, e->variants[set].n, set, &k) == CLPHMM_SUCCESS &&
            k->variant.small && k->variant.lring,
        "%s: the small-call variant's program has no rings",
        p ? "double" : "float");
  gen g = {0};
  size_t lens[] = {65, 100, 128, 129, 180, 192, 193, 256};
  add_batch(&g, rng, lens, 8, 3, 1, 300, 1, 1);
  size_t short_len[] = {70, 250};
  add_batch(&g, rng, short_len, 2, 2, 1, 6, 0, 0); /* loads past H */
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  const unsigned saved = e->max_coop;
  double *ring = run_device(ctx, &g, n);
  e->max_coop = 1;
  double *seq = run_device(ctx, &g, n);
  e->max_coop = saved;
  CHECK(ring && seq && memcmp(ring, seq, n * sizeof *ring) == 0,
        "%s: tiles at once through local memory and one after the other "
        "differ",
        p ? "double" : "float");
  compare(ctx, &g, "tiles at once through local memory");
  free(ring);
  free(seq);
  gen_free(&g);
  clphmm_context_destroy(ctx);
}

/* The small-call variant (":small"): a call with fewer pairs than fill the
 * device runs all of them on it in one launch (reads longer than its tile
 * as concurrent tiles, rescued pairs on the double set's small variant),
 * with the results of the bins, bit for bit; a call with more pairs keeps
 * the bins. */
static void test_small_variant(clphmm_precision p, test_rng *rng) {
  clphmm_context *small = NULL, *bins = NULL;
  int ok = open_with_variants(p, "4x4/64,8x8/64,16x4/64:small",
                              "4x4/64,8x8/64,16x4/64:small", &small);
  if (ok > 0)
    ok = open_with_variants(p, "4x4/64,8x8/64", "4x4/64,8x8/64", &bins);
  if (ok <= 0) {
    clphmm_context_destroy(small);
    return;
  }
  const cph_variant_set *vs = vset(small);
  CHECK(vs->has_small && vs->n == 2 && vs->v[2].small,
        "small-call variant not set apart: %zu bins, has_small %d", vs->n,
        vs->has_small);
  const cph_variant *sv = &vs->v[vs->n];
  const size_t fill = (size_t)CPH_FILL_PAIRS_PER_UNIT *
                      small->eng[0]->dev.info.compute_units * (sv->wg / sv->g);
  for (int big = 0; big < 2; big++) {
    gen g = {0};
    size_t lens[] = {1, 15, 16, 17, 63, 64, 65, 130, 200, 260};
    add_batch(&g, rng, lens, 10, 3, 1, 300, 1, 1);
    size_t rl[3] = {90, 120, 40};
    add_batch(&g, rng, rl, 3, 2, 100, 200, 0, 0); /* rescued in float mode */
    size_t n;
    clphmm_count_pairs(g.batches, g.n, &n);
    while (big && n < fill) { /* enough pairs to fill the device */
      size_t len = test_rng_range(rng, 20, 120);
      add_batch(&g, rng, &len, 1, 8, 50, 150, 1, 0);
      n += 8;
    }
    cph_engine *e = small->eng[0];
    const unsigned long inl = e->inline_chunks;
    /* (No launch of the bins computes its rows for its wide pairs here:
     * only the small-call variant's are counted.) */
    const uint64_t cols = e->inline_cols;
    const unsigned small_bins = e->small_bins;
    e->inline_cols = UINT64_MAX;
    e->small_bins = 0; /* (its bins' few pairs stay there: test_small_bins) */
    double *a = run_device(small, &g, n);
    e->inline_cols = cols;
    e->small_bins = small_bins;
    const unsigned long inl_chunks = e->inline_chunks - inl;
    double *b = run_device(bins, &g, n);
    CHECK(a && b && memcmp(a, b, n * sizeof *a) == 0,
          "%s, %zu pairs: the small-call variant and the bins differ",
          p ? "double" : "float", n);
    /* Its launches compute their rows (no row preparation in front of
     * them), the bins' do not (in float mode a few rescued pairs still go
     * to the double set's small-call variant); prepared rows give the
     * same bits. */
    CHECK(big ? p == CLPHMM_PRECISION_FLOAT || inl_chunks == 0 : inl_chunks > 0,
          "%s, %zu pairs: %lu chunks computed their rows in the kernel",
          p ? "double" : "float", n, inl_chunks);
    if (!big) {
      check_rows_elsewhere(small, &g, n, a, &e->inline_rows, 0,
                           "on prepared rows");
      check_rows_elsewhere(small, &g, n, a, &e->host_prep, 1,
                           "on rows prepared on the host");
    }
    clphmm_stats st;
    CHECK_STATUS(clphmm_context_stats(small, &st), CLPHMM_SUCCESS, small);
    const clphmm_bin_stats *sb = &st.bins[st.n_bins - 1];
    CHECK(st.n_bins == 3 && sb->max_rows == 0 && strstr(sb->variant, ":small"),
          "small-call bin: %zu bins, last %s max_rows %u", st.n_bins,
          sb->variant, sb->max_rows);
    CHECK(sb->pairs == (big ? 0 : n) && st.launches >= 1,
          "%zu pairs (fill %zu): %llu on the small-call variant", n, fill,
          (unsigned long long)sb->pairs);
    if (!big)
      compare(small, &g, "small-call variant");
    if (!big && p == CLPHMM_PRECISION_FLOAT) {
      check_speculation(small, &g, n, a, st.rescued_pairs, 0);
      check_spec_leave(small, &g, n, a, fill);
      check_spec_after(small, &g, n);
    }
    free(a);
    free(b);
    gen_free(&g);
  }
  if (p == CLPHMM_PRECISION_FLOAT) {
    /* Reads of one tile (the small-call variant's 64 rows) only. */
    gen g = {0};
    size_t lens[] = {1, 15, 33, 64, 50};
    add_batch(&g, rng, lens, 5, 3, 1, 300, 1, 1);
    size_t rl[3] = {60, 64, 40};
    add_batch(&g, rng, rl, 3, 2, 100, 200, 0, 0); /* rescued in float mode */
    size_t n;
    clphmm_count_pairs(g.batches, g.n, &n);
    small->eng[0]->speculate = CPH_SPECULATE_NEVER;
    double *a = run_device(small, &g, n);
    small->eng[0]->speculate = CPH_SPECULATE_AUTO;
    clphmm_stats st;
    CHECK_STATUS(clphmm_context_stats(small, &st), CLPHMM_SUCCESS, small);
    if (a)
      check_speculation(small, &g, n, a, st.rescued_pairs, 1);
    free(a);
    gen_free(&g);
  }
  clphmm_context_destroy(small);
  clphmm_context_destroy(bins);
}

/* Call `g` (n pairs, one chunk) with CLPHMM_SMALL_BINS' setting off and on:
 * bin `bin` holds three pairs, which with it on run on the small-call
 * variant where `moves`, else stay; the same bits either way, and the
 * reference's. */
static void check_small_bin(clphmm_context *ctx, const gen *g, size_t n,
                            size_t bin, int moves, const char *what) {
  cph_engine *e = ctx->eng[0];
  const char *prec = ctx->precision ? "double" : "float";
  double *out[2] = {NULL, NULL};
  for (int on = 0; on < 2; on++) {
    const unsigned keep = e->small_bins;
    e->small_bins = (unsigned)on; /* (one work-group per unit: 3 fit) */
    out[on] = run_device(ctx, g, n);
    e->small_bins = keep;
    clphmm_stats st;
    CHECK_STATUS(clphmm_context_stats(ctx, &st), CLPHMM_SUCCESS, ctx);
    const clphmm_bin_stats *sb = &st.bins[st.n_bins - 1];
    CHECK(st.n_bins == 3 && sb->max_rows == 0 && st.chunks == 1,
          "%s, %s: %zu bins, %llu chunks, %llu rescued (want 3 bins, one "
          "chunk)",
          prec, what, st.n_bins, (unsigned long long)st.chunks,
          (unsigned long long)st.rescued_pairs);
    const int moved = on && moves;
    CHECK(sb->pairs == (moved ? 3u : 0u) &&
              st.bins[bin].pairs == (moved ? 0u : 3u),
          "%s, %s, small bins %s, %zu pairs: %llu on the small-call variant, "
          "%llu in bin %zu (want %d and %d)",
          prec, what, on ? "on" : "off", n, (unsigned long long)sb->pairs,
          (unsigned long long)st.bins[bin].pairs, bin, moved ? 3 : 0,
          moved ? 0 : 3);
  }
  CHECK(out[0] && out[1] && memcmp(out[0], out[1], n * sizeof *out[0]) == 0,
        "%s, %s: the small bins' setting changed results", prec, what);
  compare(ctx, g, what);
  free(out[0]);
  free(out[1]);
}

/* `g` gets pairs of reads of lo..hi rows, each against the haplotype it
 * was copied from (no rescue), until the call is no small call and their
 * bin (of `per_group` pairs per work-group) fills the device. */
static size_t fill_bin(gen *g, test_rng *rng, size_t n, unsigned lo,
                       unsigned hi, size_t fill, size_t per_group,
                       unsigned cu) {
  for (size_t in_bin = 0; n < fill + 8 || in_bin < per_group * cu;
       in_bin++, n++) {
    size_t len = test_rng_range(rng, lo, hi);
    add_batch(g, rng, &len, 1, 1, 130, 200, 1, 0);
  }
  return n;
}

/* A large chunk's bin too small to fill the device (fewer work-groups than
 * compute units: schedule.c to_small, cph_plan_to_small) runs on the
 * small-call variant (16x4/64:small, 64 rows) where its reads fit one of
 * its tiles: three pairs of reads of at most 16 rows (bin 0, 4x4/64) among
 * pairs of 17-64 rows (bin 1, 8x8/64) that fill the device move; three of
 * bin 1, the last, one of whose reads its tiles (100 rows), among pairs of
 * bin 0 that fill it, stay. (Its own generator: how many pairs it draws
 * depends on the device's compute units, and the later tests' pairs must
 * not; with them drawn after these, the double-first test's lacked a long
 * read after a short one on the H200's local-shuffle run. A device of one
 * compute unit has no bin of fewer work-groups: skipped.) */
static void test_small_bins(clphmm_precision p) {
  test_rng own, *rng = &own;
  test_rng_init(rng, 20261127);
  clphmm_context *ctx = NULL;
  if (open_with_variants(p, "4x4/64,8x8/64,16x4/64:small",
                         "4x4/64,8x8/64,16x4/64:small", &ctx) <= 0)
    return;
  const cph_variant_set *vs = vset(ctx);
  const cph_variant *sv = &vs->v[vs->n];
  const unsigned cu = ctx->eng[0]->dev.info.compute_units;
  if (cu < 2) {
    printf("%s small bins: one compute unit, skipped\n",
           p ? "double" : "float ");
    clphmm_context_destroy(ctx);
    return;
  }
  const size_t fill = (size_t)CPH_FILL_PAIRS_PER_UNIT * cu * (sv->wg / sv->g);
  gen g = {0};
  size_t tiny[] = {3, 9, 16};
  add_batch(&g, rng, tiny, 3, 1, 20, 200, 1, 0);
  size_t n = fill_bin(&g, rng, 3, 17, 64, fill, 8, cu);
  check_small_bin(ctx, &g, n, 0, 1, "a small bin 0");
  gen_free(&g);
  memset(&g, 0, sizeof g);
  size_t tiled[] = {30, 100, 64};
  add_batch(&g, rng, tiled, 3, 1, 130, 200, 1, 0);
  n = fill_bin(&g, rng, 3, 1, 16, fill, 16, cu);
  check_small_bin(ctx, &g, n, 1, 0, "a small last bin with a read it tiles");
  gen_free(&g);
  clphmm_context_destroy(ctx);
}

/* Vector variants (the CPU kernel, cl/pairhmm_cpu.cl) on this device,
 * whatever its table says: one pair per work-item (scalar code), 4 and 16
 * pairs per work-item (2 and 8 in double), work-groups
 * of 3 and 2 work-items (pair slots past the last pair), tiles of 4, 8 and
 * 16 rows (most reads run in several tiles), every bin edge, haplotypes of
 * 1 to 4 words, rescued pairs: against the reference, and bit for bit
 * against the lane-group kernel in the same arithmetic form (both follow
 * the same operations cell by cell). */
static void test_vector_variants(clphmm_precision p, test_rng *rng) {
  clphmm_context *vec = NULL, *lane = NULL;
  int ok = open_with_variants(p, "v1x4/3,v4x8/2,v16x16/1",
                              "v1x4/3,v2x8/2,v8x16/1", &vec);
  if (ok > 0)
    ok = open_with_variants(p, "4x4/64,8x4/64", "4x4/64,8x4/64", &lane);
  if (ok <= 0) {
    clphmm_context_destroy(vec);
    return;
  }
  const cph_variant_set *vs = vset(vec);
  CHECK(vs->n == 3 && vs->v[0].vec && vs->v[2].vec &&
            vs->v[2].g == (p == CLPHMM_PRECISION_FLOAT ? 16u : 8u) &&
            vs->v[0].shuffle == CPH_SHUFFLE_LOCAL,
        "vector variant set: %zu variants, last %ux%u", vs->n, vs->v[2].g,
        vs->v[2].c);
  gen g = {0};
  size_t lens[64];
  const size_t nl = edge_lengths(vs, lens);
  for (size_t i = 0; i < nl; i++)
    add_batch(&g, rng, &lens[i], 1, 5, 1, (unsigned)lens[i] + 40, 1, 0);
  static const unsigned haps[] = {1, 2, 3, 4, 5, 8, 9, 13, 16, 17};
  for (size_t i = 0; i < sizeof haps / sizeof *haps; i++) {
    size_t rl[3] = {3, 9, 30};
    add_batch(&g, rng, rl, 3, 2, haps[i], haps[i], 1, 0);
  }
  size_t mixed[20];
  for (size_t r = 0; r < 20; r++)
    mixed[r] = test_rng_range(rng, 1, 60);
  add_batch(&g, rng, mixed, 20, 3, 1, 90, 1, 1); /* qualities 0..127 */
  size_t rl[4] = {90, 120, 150, 40};
  add_batch(&g, rng, rl, 4, 3, 100, 200, 0, 0); /* rescued in float mode */
  compare(vec, &g, "vector variants");
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  double *a = run_device(vec, &g, n), *b = run_device(lane, &g, n);
  size_t differ = 0;
  for (size_t i = 0; a && b && i < n; i++)
    differ += memcmp(&a[i], &b[i], sizeof *a) != 0;
  CHECK(a && b && differ == 0,
        "%s: vector and lane-group kernels differ on %zu of %zu pairs",
        p ? "double" : "float", differ, n);
  for (int d = 0; d < 2; d++)
    for (size_t v = 0; v < CPH_MAX_VARIANTS; v++)
      CHECK(!vec->eng[0]->kernels[0][d][v].kernel ||
                !vec->eng[0]->kernels[0][d][v].prep,
            "a vector variant's program has the row preparation");
  CHECK(vec->eng[0]->kernels[0][0][2].kernel ||
            vec->eng[0]->kernels[0][1][2].kernel,
        "the 16-row vector variant was not built");
  printf("%-9s vector kernel = lane-group kernel, bit for bit: %zu pairs\n",
         p ? "double" : "float", n);
  free(a);
  free(b);
  gen_free(&g);
  clphmm_context_destroy(vec);
  clphmm_context_destroy(lane);
}

/* Results of `g` (n pairs) on `dev`, whose rows the device prepares, bit
 * for bit those of `host` (rows prepared on the host) with the same
 * rescued pairs and early exits: with the device's rows as the engine
 * chooses, prepared for every launch (with the preparation's work-items
 * per read as chosen, 8 and 64: blocks of 32 and 256 rows), and computed
 * by every launch's kernel (the preparation then gives the scaled form's
 * weights alone: `weights_alone`, at least once). */
static void compare_row_sources(clphmm_context *dev, clphmm_context *host,
                                const gen *g, size_t n, int weights_alone,
                                const char *what) {
  const char *mode = dev->precision ? "double" : "float";
  double *b = run_device(host, g, n);
  clphmm_stats sb;
  clphmm_context_stats(host, &sb);
  /* The device engine's inline_rows and prep_lanes. */
  static const int settings[5][2] = {{1, 0}, {0, 0}, {0, 8}, {0, 64}, {2, 0}};
  static const char *const names[5] = {
      "as chosen", "prepared", "prepared, 8 lanes a read",
      "prepared, 64 lanes a read", "in kernels"};
  cph_engine *e = dev->eng[0];
  const int keep = e->inline_rows;
  const unsigned keep_lanes = e->prep_lanes;
  for (int k = 0; k < 5; k++) {
    e->inline_rows = settings[k][0];
    e->prep_lanes = (unsigned)settings[k][1];
    const unsigned long inl = e->inline_chunks, wp = e->weight_preps;
    double *a = run_device(dev, g, n);
    clphmm_stats sa;
    clphmm_context_stats(dev, &sa);
    CHECK(a && b && memcmp(a, b, n * sizeof *a) == 0,
          "%s, %s: rows on the device (%s) and on the host give different "
          "results",
          mode, what, names[k]);
    CHECK(sa.rescued_pairs == sb.rescued_pairs &&
              sa.early_exits == sb.early_exits,
          "%s, %s: rescued pairs differ (%s): %llu on the device, %llu on the "
          "host (early exits %llu, %llu)",
          mode, what, names[k], (unsigned long long)sa.rescued_pairs,
          (unsigned long long)sb.rescued_pairs,
          (unsigned long long)sa.early_exits,
          (unsigned long long)sb.early_exits);
    /* Some chunks compute their rows with inline_rows 2 (not those whose
     * launches stop early: the exit reads the prepared rows' bound), none
     * with 0. */
    const unsigned long chunks = e->inline_chunks - inl,
                        alone = e->weight_preps - wp;
    CHECK(!(settings[k][0] == 0 && (chunks || alone)) &&
              !(settings[k][0] == 2 && !chunks) &&
              !(settings[k][0] == 2 && weights_alone && !alone),
          "%s, %s (%s): %lu chunks computed their rows, %lu preparations gave "
          "the weights alone",
          mode, what, names[k], chunks, alone);
    printf("%-9s rows on the device (%s, %s) = on the host: %zu pairs, %llu "
           "rescued, %llu stopped early, %lu chunks computed their rows, %lu "
           "weights alone\n",
           mode, what, names[k], n, (unsigned long long)sa.rescued_pairs,
           (unsigned long long)sa.early_exits, chunks, alone);
    free(a);
  }
  e->inline_rows = keep;
  e->prep_lanes = keep_lanes;
  free(b);
}

/* Rows prepared on the device (cl/prep.cl) and on the host
 * (CLPHMM_HOST_PREP) give bit-identical results: the device's arithmetic
 * is the host's, operation by operation (compare_row_sources). Every bin,
 * qualities 0..127 (extreme transitions, rescued and overflowing pairs
 * included), in the context's precision and, in float mode, its double
 * rescue; on the default variants, and in the scaled form (CLPHMM_FMA=1)
 * on variants without the small-call one, whose chunks then have the
 * device compute the weights alone when their kernels compute their rows
 * (the default variants' small calls take the host's weights). */
static void test_host_prep(clphmm_precision p, test_rng *rng) {
  clphmm_context *dev = NULL, *host = NULL;
  /* (The suite may run with CLPHMM_HOST_PREP set: restore it after.) */
  const char *was = getenv("CLPHMM_HOST_PREP");
  char saved[16] = "";
  if (was)
    snprintf(saved, sizeof saved, "%s", was);
  unsetenv("CLPHMM_HOST_PREP");
  int ok = open_context(p, &dev);
  /* Vector variants (CPUs) always prepare rows on the host: compare the
   * device's row preparation of lane-group variants with the host's. */
  const int vec = ok > 0 && cph_variant_set_has_vec(vset(dev));
  if (vec) {
    clphmm_context_destroy(dev);
    dev = NULL;
    ok = open_with_variants(p, "4x4/64,8x8/64", "4x4/64,8x8/64", &dev);
  }
  setenv("CLPHMM_HOST_PREP", "1", 1);
  if (ok > 0)
    ok = vec ? open_with_variants(p, "4x4/64,8x8/64", "4x4/64,8x8/64", &host)
             : open_context(p, &host);
  if (was)
    setenv("CLPHMM_HOST_PREP", saved, 1);
  else
    unsetenv("CLPHMM_HOST_PREP");
  if (ok <= 0 && dev) {
    clphmm_context_destroy(dev);
    return;
  }
  if (ok <= 0)
    return;
  CHECK(host->eng[0]->host_prep && !dev->eng[0]->host_prep,
        "CLPHMM_HOST_PREP not honoured");
  gen g = {0};
  size_t lens[64];
  const size_t nl = edge_lengths(vset(dev), lens);
  for (size_t i = 0; i < nl; i++)
    add_batch(&g, rng, &lens[i], 1, 3, 1, (unsigned)lens[i] + 40, 0, 1);
  size_t rl[4] = {90, 120, 150, 40};
  add_batch(&g, rng, rl, 4, 3, 100, 200, 0, 0); /* rescued in float mode */
  /* Reads long enough for the early-exit bound (its slots of the rows),
   * some of them stopped. */
  size_t ll[2] = {520, 700};
  add_batch(&g, rng, ll, 2, 2, 700, 760, 1, QUAL_INDEL_HIGH);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  compare_row_sources(dev, host, &g, n, 0, "default variants");
  clphmm_context_destroy(dev);
  clphmm_context_destroy(host);
  /* The scaled form without the small-call variant. */
  static const char *const names[2] = {"CLPHMM_FMA", "CLPHMM_HOST_PREP"};
  static const char *const on_dev[2] = {"1", "0"}, *const on_host[2] = {"1",
                                                                        "1"};
  dev = host = NULL;
  ok = open_with_env(p, "4x4/64,8x8/64", "4x4/64,8x8/64", names, on_dev, &dev);
  if (ok > 0)
    ok = open_with_env(p, "4x4/64,8x8/64", "4x4/64,8x8/64", names, on_host,
                       &host);
  if (ok > 0) {
    const int scaled = cph_variant_scaled(&vset(dev)->v[0]);
    compare_row_sources(dev, host, &g, n, scaled, "scaled form, no small");
  }
  gen_free(&g);
  clphmm_context_destroy(dev);
  clphmm_context_destroy(host);
}

/* A context on `list` (float mode) with the early exit on or off
 * (CLPHMM_EARLY_EXIT) and the scaled form (CLPHMM_FMA=1), which the exit
 * needs; both restored after. */
static int open_exit_in(clphmm_precision p, const char *list,
                        const char *double_list, int on, clphmm_context **ctx) {
  static const char *const names[2] = {"CLPHMM_EARLY_EXIT", "CLPHMM_FMA"};
  const char *const vals[2] = {on ? "1" : "0", "1"};
  const int ok = open_with_env(p, list, double_list, names, vals, ctx);
  /* (Every launch gets the exit: the test pairs are small.) */
  if (ok > 0)
    (*ctx)->eng[0]->exit_cells = 0;
  return ok;
}

static int open_exit(const char *list, int on, clphmm_context **ctx) {
  return open_exit_in(CLPHMM_PRECISION_FLOAT, list, NULL, on, ctx);
}

/* The early exit of float mode's first pass (src/model/bound.h): reads of
 * 100..700 rows with GATK-like indel qualities (the bound grows with every
 * drop in deletion quality: it stops few reads whose deletion qualities
 * jump about), 5% off their haplotypes or random against them (float sums
 * on both sides of GKL's threshold), and two copies of their haplotypes
 * with low indel qualities (add_copy_batch), on the long-read variant (tiles
 * one after the other), on concurrent tiles (one pair per work-group) and on
 * two concurrent tiles (several pairs per work-group, which stop only
 * together). The results must be bit-identical with the exit off (a pair
 * stopped that GKL would keep in float would get its double result instead) and
 * match the reference; some pairs must stop. */
/* A read that is an exact copy of a random haplotype, with base qualities
 * 30, insertion and deletion qualities `indel` and gap continuation 10. At
 * low indel qualities the early exit's per-row weights fall below FLT_MIN
 * after a few hundred rows while the pair stays well above GKL's
 * threshold: a device that flushes denormals (CPUs' float programs) must
 * not read them as zero. */
static void add_copy_batch(gen *g, test_rng *rng, size_t len, uint8_t indel) {
  char *b = gen_alloc(g, len);
  uint8_t *q = gen_alloc(g, 4 * len);
  random_bases(rng, b, len, 0);
  for (size_t i = 0; i < len; i++) {
    q[i] = 30;
    q[len + i] = q[2 * len + i] = indel;
    q[3 * len + i] = 10;
  }
  clphmm_haplotype *h = gen_alloc(g, sizeof *h);
  *h = (clphmm_haplotype){b, len};
  clphmm_read *r = gen_alloc(g, sizeof *r);
  *r = (clphmm_read){b, q, q + len, q + 2 * len, q + 3 * len, len};
  push_batch(g, (clphmm_batch){r, 1, h, 1});
}

/* `count` reads of lo..hi bases with GATK-like indel qualities, 5% off
 * two haplotypes 0..100 bases longer or random against them (float sums
 * on both sides of GKL's threshold). */
static void add_exit_batches(gen *g, test_rng *rng, int count, unsigned lo,
                             unsigned hi) {
  for (int k = 0; k < count; k++) {
    size_t len = test_rng_range(rng, lo, hi);
    add_batch(g, rng, &len, 1, 2, (unsigned)len, (unsigned)len + 100, 1,
              QUAL_INDEL_HIGH);
  }
}

static void test_early_exit(void) {
  static const struct {
    const char *list, *what;
    unsigned coop;
  } cfg[] = {{"4x4/64,8x8/64,32x8/32:long", "long-read variant", 0},
             {"4x4/64,8x8/64", "concurrent tiles", 0},
             {"4x4/64,8x8/64", "two concurrent tiles", 2}};
  /* (Its own generator: from the shared sequence, its data changed with
   * the tests before it, and with test_long's run, stopped no pair.) */
  test_rng own, *rng = &own;
  test_rng_init(rng, 20261128);
  gen g = {0};
  add_exit_batches(&g, rng, 24, 100, 700);
  add_copy_batch(&g, rng, 600, 10);
  add_copy_batch(&g, rng, 1000, 12);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
    clphmm_context *on = NULL, *off = NULL;
    if (open_exit(cfg[c].list, 1, &on) <= 0)
      break;
    if (open_exit(cfg[c].list, 0, &off) <= 0) {
      clphmm_context_destroy(on);
      break;
    }
    CHECK(vset(on)->v[0].early_exit && !vset(off)->v[0].early_exit,
          "CLPHMM_EARLY_EXIT not honoured");
    on->eng[0]->max_coop = off->eng[0]->max_coop = cfg[c].coop;
    on->eng[0]->seq_fill = off->eng[0]->seq_fill = 0;
    /* (Stopped pairs to the rescue: test_exact_direct.) */
    on->eng[0]->exact_direct = 0;
    compare(on, &g, cfg[c].what);
    double *a = run_device(on, &g, n), *b = run_device(off, &g, n);
    clphmm_stats sa, sb;
    clphmm_context_stats(on, &sa);
    clphmm_context_stats(off, &sb);
    CHECK(a && b && memcmp(a, b, n * sizeof *a) == 0,
          "%s: results differ with the early exit on and off", cfg[c].what);
    CHECK(sa.early_exits > 0 && sb.early_exits == 0,
          "%s: %llu early exits on, %llu off", cfg[c].what,
          (unsigned long long)sa.early_exits,
          (unsigned long long)sb.early_exits);
    CHECK(sa.rescued_pairs == sb.rescued_pairs &&
              sa.early_exits <= sa.rescued_pairs,
          "%s: rescued %llu on, %llu off, early exits %llu", cfg[c].what,
          (unsigned long long)sa.rescued_pairs,
          (unsigned long long)sb.rescued_pairs,
          (unsigned long long)sa.early_exits);
    printf("float     early exit (%s): %zu pairs, %llu rescued, %llu "
           "stopped early, as without it\n",
           cfg[c].what, n, (unsigned long long)sa.rescued_pairs,
           (unsigned long long)sa.early_exits);
    free(a);
    free(b);
    clphmm_context_destroy(on);
    clphmm_context_destroy(off);
  }
  gen_free(&g);
}

/* The early exit only for launches of large pairs (engine exit_cells,
 * schedule.c launch_exit): with the bound above every pair no launch
 * stops a pair, with the bound at the largest pair some do, and the
 * results are the same bits either way. */
static void test_exit_cells(void) {
  test_rng own;
  test_rng_init(&own, 20261127);
  gen g = {0};
  add_exit_batches(&g, &own, 24, 100, 700);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  uint64_t most = 0;
  for (size_t b = 0; b < g.n; b++)
    for (size_t r = 0; r < g.batches[b].n_reads; r++)
      for (size_t h = 0; h < g.batches[b].n_haplotypes; h++) {
        const uint64_t c = (uint64_t)g.batches[b].reads[r].length *
                           g.batches[b].haplotypes[h].length;
        most = c > most ? c : most;
      }
  clphmm_context *ctx = NULL;
  if (open_exit("4x4/64,8x8/64", 1, &ctx) <= 0) {
    gen_free(&g);
    return;
  }
  cph_engine *e = ctx->eng[0];
  const uint64_t bounds[3] = {0, most + 1, most};
  uint64_t exits[3];
  double *got[3];
  for (int i = 0; i < 3; i++) {
    e->exit_cells = bounds[i];
    got[i] = run_device(ctx, &g, n);
    clphmm_stats st;
    clphmm_context_stats(ctx, &st);
    exits[i] = st.early_exits;
  }
  CHECK(exits[0] > 0 && exits[1] == 0 && exits[2] > 0,
        "exit from 0 cells: %llu stops; above the largest pair: %llu; at it: "
        "%llu",
        (unsigned long long)exits[0], (unsigned long long)exits[1],
        (unsigned long long)exits[2]);
  for (int i = 1; i < 3; i++)
    CHECK(got[0] && got[i] && memcmp(got[0], got[i], n * sizeof **got) == 0,
          "exit from %llu cells: results differ",
          (unsigned long long)bounds[i]);
  printf("float     early exit from the largest pair's %llu cells: %llu, "
         "%llu and %llu stops, the same bits\n",
         (unsigned long long)most, (unsigned long long)exits[0],
         (unsigned long long)exits[1], (unsigned long long)exits[2]);
  for (int i = 0; i < 3; i++)
    free(got[i]);
  clphmm_context_destroy(ctx);
  gen_free(&g);
}

/* Float mode's pairs that the early exit stopped go straight to the exact
 * pass (finish.c) where the device has one: on the early exit's
 * test pairs, on lane-group variants with the scaled double rescue (which
 * has an exact pass), every result is that of the same context with
 * CLPHMM_EXACT_DIRECT=0 or, where it differs, the reference's GKL double
 * computation to the bit; every stopped pair went there and the same
 * pairs were rescued. */
static void add_stopping_pairs(gen *g, test_rng *rng, int alternate,
                               size_t max_len);

static void test_exact_direct(test_rng *rng) {
  gen g = {0};
  add_exit_batches(&g, rng, 16, 300, 900);
  add_stopping_pairs(&g, rng, 1, 400);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  const char *list = "4x4/64,8x8/64";
  clphmm_context *a = NULL, *b = NULL;
  if (open_exit_in(CLPHMM_PRECISION_FLOAT, list, list, 1, &a) <= 0 ||
      open_exit_in(CLPHMM_PRECISION_FLOAT, list, list, 1, &b) <= 0) {
    clphmm_context_destroy(a);
    gen_free(&g);
    return;
  }
  a->eng[0]->exact_direct = 1; /* every stopped pair */
  b->eng[0]->exact_direct = 0;
  const int exact =
      a->eng[0]->dev.info.has_fp64 && a->eng[0]->variants[CPH_SET_EXACT].n > 0;
  compare(a, &g, "stopped pairs to the exact pass");
  double *ra = run_device(a, &g, n), *rb = run_device(b, &g, n),
         *ref = run_reference(&g, n, 0);
  clphmm_stats sa, sb;
  clphmm_context_stats(a, &sa);
  clphmm_context_stats(b, &sb);
  size_t changed = 0;
  for (size_t i = 0; ra && rb && i < n; i++) {
    changed += ra[i] != rb[i];
    CHECK(ra[i] == rb[i] || ra[i] == ref[i],
          "pair %zu: %.17g straight to the exact pass, %.17g through the "
          "rescue, reference %.17g",
          i, ra[i], rb[i], ref[i]);
  }
  CHECK(ra && rb && sa.early_exits > 0 && sb.early_exits == sa.early_exits &&
            sa.exact_direct == (exact ? sa.early_exits : 0) &&
            sb.exact_direct == 0 && sa.rescued_pairs == sb.rescued_pairs &&
            sa.exact_pairs >= sa.exact_direct,
        "exact pass: %llu early exits (%llu with it off), %llu straight to "
        "the exact pass, rescued %llu and %llu, exact pass %llu "
        "(has one: %d)",
        (unsigned long long)sa.early_exits, (unsigned long long)sb.early_exits,
        (unsigned long long)sa.exact_direct,
        (unsigned long long)sa.rescued_pairs,
        (unsigned long long)sb.rescued_pairs,
        (unsigned long long)sa.exact_pairs, exact);
  printf("float     stopped pairs straight to the exact pass: %llu of %zu "
         "pairs (%zu results other than through the rescue, each GKL's to "
         "the bit)\n",
         (unsigned long long)sa.exact_direct, n, changed);
  free(ra);
  free(rb);
  free(ref);
  clphmm_context_destroy(a);
  clphmm_context_destroy(b);
  gen_free(&g);
}

static void same_as(clphmm_context *a, clphmm_context *b, const gen *g,
                    const char *what, const char *differ, clphmm_stats *sa,
                    clphmm_stats *sb);

/* Pairs of g's reads of at least `rows` rows and nonempty haplotypes:
 * what its double-first statistics must count. */
static uint64_t long_pairs(const gen *g, size_t rows) {
  uint64_t n = 0;
  for (size_t b = 0; b < g->n; b++)
    for (size_t r = 0; r < g->batches[b].n_reads; r++)
      for (size_t h = 0; h < g->batches[b].n_haplotypes; h++)
        n += g->batches[b].reads[r].length >= rows &&
             g->batches[b].haplotypes[h].length > 0;
  return n;
}

/* Reads the double-first plan validates (compute.c): an invalid base in a
 * long read of batch `bad` fails the call naming that batch, or, with an
 * invalid short read in an earlier batch too, naming that one. */
static void check_first_errors(clphmm_context *a, gen *g, size_t n,
                               size_t rows) {
  /* The first batch with a short read, and the first after it with a
   * long one (whatever the generator drew before them). */
  size_t bad = g->n, early = g->n;
  for (size_t b = 0; b < g->n; b++)
    for (size_t r = 0; r < g->batches[b].n_reads; r++) {
      const size_t len = g->batches[b].reads[r].length;
      if (len >= rows && bad == g->n && early < b)
        bad = b;
      if (len > 0 && len < rows && early == g->n)
        early = b;
    }
  if (bad == g->n) {
    CHECK(0, "double first: the test pairs lack a long read after a short one");
    return;
  }
  double *out = malloc(n * sizeof *out);
  const clphmm_batch *bt = &g->batches[bad];
  size_t r = 0;
  while (bt->reads[r].length < rows)
    r++;
  char *base = (char *)&bt->reads[r].bases[bt->reads[r].length / 2];
  const char keep = *base;
  *base = 'X';
  char want[64];
  snprintf(want, sizeof want, "batch %zu, read %zu", bad, r);
  clphmm_status st = clphmm_compute(a, g->batches, g->n, out);
  CHECK(st == CLPHMM_ERROR_INVALID_BASE && strstr(clphmm_last_error(a), want),
        "double first: an invalid long read gave status %d, '%s' (want '%s')",
        (int)st, clphmm_last_error(a), want);
  const clphmm_batch *eb = &g->batches[early];
  size_t er = 0;
  while (eb->reads[er].length == 0 || eb->reads[er].length >= rows)
    er++;
  char *ebase = (char *)&eb->reads[er].bases[0];
  const char ekeep = *ebase;
  *ebase = 'X';
  snprintf(want, sizeof want, "batch %zu, read %zu", early, er);
  st = clphmm_compute(a, g->batches, g->n, out);
  CHECK(st == CLPHMM_ERROR_INVALID_BASE && strstr(clphmm_last_error(a), want),
        "double first: an earlier invalid short read gave status %d, '%s' "
        "(want '%s')",
        (int)st, clphmm_last_error(a), want);
  *ebase = ekeep;
  *base = keep;
  free(out);
  /* A long read whose haplotypes are all empty has no pair to go first:
   * it is validated all the same (it once gave -inf and success). */
  enum { LEN = 400 };
  char bases[LEN];
  uint8_t q[LEN];
  memset(bases, 'A', LEN);
  memset(q, 30, LEN);
  bases[LEN / 2] = 'X';
  const clphmm_read rd = {bases, q, q, q, q, LEN};
  const clphmm_haplotype empty = {"", 0};
  const clphmm_batch lone = {&rd, 1, &empty, 1};
  double o = 1.0;
  st = clphmm_compute(a, &lone, 1, &o);
  CHECK(st == CLPHMM_ERROR_INVALID_BASE &&
            strstr(clphmm_last_error(a), "batch 0, read 0") && o == 1.0,
        "double first: an invalid long read against an empty haplotype gave "
        "status %d, '%s', out %g",
        (int)st, clphmm_last_error(a), o);
}

/* Float mode's double first (compute.c plan_double_first): reads of at
 * least 300 rows among shorter ones (in one batch too), their pairs 5%
 * off their haplotypes or random against them (double results on both
 * sides of GKL's threshold), and a long read against an empty haplotype.
 * Bit-identical to the float pass first (exact_direct 0 in both: their
 * rescues take one route), the same pairs rescued, some pairs proven and
 * some checked; with every pair double first and straight to the exact
 * pass, each result the float pass first's or GKL's double to the bit; and
 * invalid long reads refused like others. */
static void test_double_first(test_rng *rng) {
  gen g = {0};
  add_exit_batches(&g, rng, 12, 100, 700);
  add_batches(&g, rng, 4, 4, 150, 450, 300, 500, 0);
  size_t len = 400;
  add_batch(&g, rng, &len, 1, 2, 400, 450, 1, QUAL_INDEL_HIGH);
  ((clphmm_haplotype *)g.batches[g.n - 1].haplotypes)[1].length = 0;
  add_exit_batches(&g, rng, 12, 100, 700);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  clphmm_context *a = NULL, *b = NULL;
  if (open_context(CLPHMM_PRECISION_FLOAT, &a) <= 0 ||
      open_context(CLPHMM_PRECISION_FLOAT, &b) <= 0) {
    clphmm_context_destroy(a);
    gen_free(&g);
    return;
  }
  if (!a->eng[0]->dev.info.has_fp64) { /* (no double rescue to go first) */
    printf("float     double first: no fp64, skipped\n");
    clphmm_context_destroy(a);
    clphmm_context_destroy(b);
    gen_free(&g);
    return;
  }
  a->eng[0]->first_auto = b->eng[0]->first_auto = 0;
  a->eng[0]->double_first = 300;
  b->eng[0]->double_first = 0;
  a->eng[0]->exact_direct = b->eng[0]->exact_direct = 0;
  clphmm_stats sa, sb;
  same_as(a, b, &g, "double first", "from the float pass first", &sa, &sb);
  const uint64_t want = long_pairs(&g, 300);
  CHECK(sa.double_first == want && sa.double_first_checked > 0 &&
            sa.double_first_checked < want && sb.double_first == 0 &&
            sa.rescued_pairs == sb.rescued_pairs,
        "double first: %llu pairs (want %llu), %llu checked, rescued %llu "
        "against %llu",
        (unsigned long long)sa.double_first, (unsigned long long)want,
        (unsigned long long)sa.double_first_checked,
        (unsigned long long)sa.rescued_pairs,
        (unsigned long long)sb.rescued_pairs);
  printf("float     double first: %llu of %zu pairs, %llu of them checked in "
         "float, %llu rescued\n",
         (unsigned long long)sa.double_first, n,
         (unsigned long long)sa.double_first_checked,
         (unsigned long long)sa.rescued_pairs);
  /* Every pair double first, straight to the exact pass. */
  a->eng[0]->double_first = 1;
  a->eng[0]->exact_direct = 1;
  double *ra = run_device(a, &g, n), *rb = run_device(b, &g, n),
         *ref = run_reference_gkl_double(&g, n);
  clphmm_context_stats(a, &sa);
  for (size_t i = 0; ra && rb && i < n; i++)
    CHECK(ra[i] == rb[i] || ra[i] == ref[i],
          "double first, exact pass: pair %zu: %.17g, float first %.17g, "
          "GKL's double %.17g",
          i, ra[i], rb[i], ref[i]);
  CHECK(sa.double_first == long_pairs(&g, 1),
        "double first of every pair: %llu pairs",
        (unsigned long long)sa.double_first);
  free(ra);
  free(rb);
  free(ref);
  a->eng[0]->double_first = 300;
  check_first_errors(a, &g, n, 300);
  clphmm_context_destroy(a);
  clphmm_context_destroy(b);
  gen_free(&g);
}

/* A read of 'A' against a haplotype of 'C': every base a mismatch at base
 * quality 60, gap opening qualities 45 and gap continuation `gcp`. With 45
 * every row costs at least 10^-4.5 and its rows underflow to zeros within
 * a few hundred rows (its likelihood is far below double's range: -inf);
 * with 10 one long insertion carries the likelihood. */
static void add_mismatch_batch(gen *g, size_t len, size_t hlen, uint8_t gcp) {
  char *b = gen_alloc(g, len), *hb = gen_alloc(g, hlen);
  uint8_t *q = gen_alloc(g, 4 * len);
  memset(b, 'A', len);
  memset(hb, 'C', hlen);
  for (size_t i = 0; i < len; i++) {
    q[i] = 60;
    q[len + i] = q[2 * len + i] = 45;
    q[3 * len + i] = gcp;
  }
  clphmm_haplotype *h = gen_alloc(g, sizeof *h);
  *h = (clphmm_haplotype){hb, hlen};
  clphmm_read *r = gen_alloc(g, sizeof *r);
  *r = (clphmm_read){b, q, q + len, q + 2 * len, q + 3 * len, len};
  push_batch(g, (clphmm_batch){r, 1, h, 1});
}

/* Pairs that stop: ten reads of 'A' against haplotypes of 'C'
 * (add_mismatch_batch; gap continuation 45, whose rows underflow, or, with
 * `alternate`, every other one 10, carried by insertions), longer than the
 * others and enough of them for work-groups of their own (a work-group
 * stops when all its pairs may), and six random reads of 100..max_len. */
static void add_stopping_pairs(gen *g, test_rng *rng, int alternate,
                               size_t max_len) {
  for (size_t k = 0; k < 10; k++)
    add_mismatch_batch(g, 560 + 40 * k, 200 + 20 * k,
                       alternate && k % 2 == 0 ? 10 : 45);
  for (int k = 0; k < 6; k++) {
    size_t len = test_rng_range(rng, 100, max_len);
    add_batch(g, rng, &len, 1, 2, (unsigned)len, (unsigned)len + 100, 1, 0);
  }
}

/* Two contexts of precision p on the test's lane-group variants, with the
 * early exits on (a) and on or off (b), max_coop `coop` for both. 0 (none
 * open) when the device has none. */
static int open_two(clphmm_precision p, int b_exits, unsigned coop,
                    clphmm_context **a, clphmm_context **b) {
  const char *list = "4x4/64,8x8/64";
  *a = *b = NULL;
  if (open_exit_in(p, list, list, 1, a) <= 0)
    return 0;
  if (open_exit_in(p, list, list, b_exits, b) <= 0) {
    clphmm_context_destroy(*a);
    *a = NULL;
    return 0;
  }
  (*a)->eng[0]->max_coop = (*b)->eng[0]->max_coop = coop;
  /* (Float mode: stopped pairs to the rescue, as with the exits off:
   * test_exact_direct tests the other way.) */
  (*a)->eng[0]->exact_direct = (*b)->eng[0]->exact_direct = 0;
  return 1;
}

/* a against the reference, then a and b on the same pairs: bit-identical
 * (else `differ`), with their statistics. */
/* One call on a context learning double first (engine/first.h) and on
 * one without it: bit-identical; its double-first and checked pairs. */
static void learn_call(clphmm_context *a, clphmm_context *b, const gen *g,
                       const char *what, uint64_t want_first,
                       uint64_t want_checked) {
  size_t n;
  clphmm_count_pairs(g->batches, g->n, &n);
  double *ra = run_device(a, g, n), *rb = run_device(b, g, n);
  clphmm_stats sa, sb;
  clphmm_context_stats(a, &sa);
  clphmm_context_stats(b, &sb);
  CHECK(ra && rb && memcmp(ra, rb, n * sizeof *ra) == 0,
        "%s: results differ from the float pass first", what);
  CHECK(sa.double_first == want_first &&
            sa.double_first_checked == want_checked &&
            sa.rescued_pairs == sb.rescued_pairs,
        "%s: %llu double first (want %llu), %llu checked (want %llu), "
        "rescued %llu against %llu",
        what, (unsigned long long)sa.double_first,
        (unsigned long long)want_first,
        (unsigned long long)sa.double_first_checked,
        (unsigned long long)want_checked, (unsigned long long)sa.rescued_pairs,
        (unsigned long long)sb.rescued_pairs);
  free(ra);
  free(rb);
}

/* Double first as the engine learns it (the default): 40 pairs of reads
 * of 1,100..1,300 rows random against their haplotypes (all rescued) go
 * float first in the first call and double first (all proven) in the
 * second; 36 pairs of 2,100-row reads copied from their haplotypes (kept
 * in float) then go double first, as longer reads not seen yet, are all
 * checked, and their length stops double first for every read. */
static void test_double_first_auto(test_rng *rng) {
  gen ga = {0}, gb = {0};
  for (int k = 0; k < 10; k++) {
    size_t lens[2] = {test_rng_range(rng, 1100, 1300),
                      test_rng_range(rng, 1100, 1300)};
    add_batch(&ga, rng, lens, 2, 2, 1200, 1300, 0, QUAL_INDEL_HIGH);
  }
  for (int k = 0; k < 36; k++)
    add_copy_batch(&gb, rng, 2100, 45);
  clphmm_context *a = NULL, *b = NULL;
  if (open_context(CLPHMM_PRECISION_FLOAT, &a) <= 0 ||
      open_context(CLPHMM_PRECISION_FLOAT, &b) <= 0) {
    clphmm_context_destroy(a);
    gen_free(&ga);
    gen_free(&gb);
    return;
  }
  if (a->eng[0]->dev.info.has_fp64) {
    CHECK(a->eng[0]->first_auto, "double first does not learn by default");
    b->eng[0]->first_auto = 0;
    b->eng[0]->double_first = 0;
    compare(b, &ga, "double first, learning");
    learn_call(a, b, &ga, "double first, first call", 0, 0);
    learn_call(a, b, &ga, "double first, learnt", 40, 0);
    learn_call(a, b, &gb, "double first, longer reads", 36, 36);
    learn_call(a, b, &gb, "double first, longer reads again", 0, 0);
    learn_call(a, b, &ga, "double first, after longer reads", 0, 0);
    printf("float     double first learnt: 40 pairs after one call, stopped "
           "by 36 longer pairs kept in float\n");
  }
  clphmm_context_destroy(a);
  clphmm_context_destroy(b);
  gen_free(&ga);
  gen_free(&gb);
}

static void same_as(clphmm_context *a, clphmm_context *b, const gen *g,
                    const char *what, const char *differ, clphmm_stats *sa,
                    clphmm_stats *sb) {
  size_t n;
  clphmm_count_pairs(g->batches, g->n, &n);
  compare(a, g, what);
  double *ra = run_device(a, g, n), *rb = run_device(b, g, n);
  clphmm_context_stats(a, sa);
  clphmm_context_stats(b, sb);
  CHECK(ra && rb && memcmp(ra, rb, n * sizeof *ra) == 0,
        "%s: results differ %s", what, differ);
  free(ra);
  free(rb);
}

/* The underflow exit of double programs (CPH_EXIT 2 in cl/pairhmm.cl):
 * pairs whose rows underflow to zeros (add_mismatch_batch) among pairs
 * that do not, in double mode and in float mode's rescue and exact pass,
 * with tiles one after the other and concurrent: results bit-identical
 * with the exit off and equal to the reference, and the stops counted. */
static void test_underflow_stops(test_rng *rng) {
  /* (Tile slots 0: as the library chooses, which may run a pair's tiles
   * all at once, leaving no round to skip.) */
  static const unsigned coops[] = {1, 2, 0};
  gen g = {0};
  add_stopping_pairs(&g, rng, 0, 400);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  for (int m = 0; m < 2; m++) {
    const clphmm_precision p =
        m ? CLPHMM_PRECISION_FLOAT : CLPHMM_PRECISION_DOUBLE;
    for (size_t c = 0; c < sizeof coops / sizeof *coops; c++) {
      clphmm_context *on, *off;
      if (!open_two(p, 0, coops[c], &on, &off))
        break;
      char what[64];
      snprintf(what, sizeof what, "underflow exit, tile slots %u", coops[c]);
      clphmm_stats sa, sb;
      same_as(on, off, &g, what, "with the underflow exit on and off", &sa,
              &sb);
      CHECK((sa.underflow_stops > 0 || coops[c] == 0) &&
                sb.underflow_stops == 0,
            "%s: %llu underflow stops on, %llu off", what,
            (unsigned long long)sa.underflow_stops,
            (unsigned long long)sb.underflow_stops);
      printf("%-9s %s: %zu pairs, %llu stopped on rows of zeros, as "
             "without it\n",
             m ? "float" : "double", what, n,
             (unsigned long long)sa.underflow_stops);
      clphmm_context_destroy(on);
      clphmm_context_destroy(off);
    }
  }
  gen_free(&g);
}

/* The default (schedule.c launch_split): a launch splits where its largest
 * pair holds far more than its share of the work-groups the device runs at
 * once (one 2,000 x 2,000 pair among three small ones), not where its
 * pairs are alike (pairs of 600 x 400, twice as many as the device runs at
 * once), and only the pairs above a share where the others are below one
 * (one pair of about 4 x 2 x 150 x 200 cells per compute unit among 40 of
 * 150 x 200: its work-group splits, the other five do not; the launch
 * mixes split and whole groups). Results equal the reference. GPUs only,
 * as test_split_pairs. */
static void test_split_policy(void) {
  gen g[3] = {{0}};
  add_mismatch_batch(&g[0], 2000, 2000, 10);
  for (size_t k = 0; k < 3; k++)
    add_mismatch_batch(&g[0], 300, 200, 10);
  static const char *const what[3] = {"one large pair", "pairs alike",
                                      "one large pair among many"};
  const char *list = "4x4/64,8x8/64";
  for (int w = 0; w < 3; w++) {
    clphmm_context *ctx = NULL;
    if (open_exit_in(CLPHMM_PRECISION_DOUBLE, list, list, 1, &ctx) <= 0)
      break;
    const unsigned units = ctx->eng[0]->dev.info.compute_units;
    for (size_t k = 0; w == 1 && k < 2 * CPH_SPLIT_GROUPS_PER_UNIT * units; k++)
      add_mismatch_batch(&g[1], 600, 400, 10);
    if (w == 2 && units <= 1024) {
      const size_t side =
          (size_t)ceil(sqrt(4.0 * CPH_SPLIT_GROUPS_PER_UNIT * units * 30000));
      add_mismatch_batch(&g[2], side, side, 10);
      for (size_t k = 0; k < 40; k++)
        add_mismatch_batch(&g[2], 200, 150, 10);
    }
    if (ctx->eng[0]->dev.info.type == CLPHMM_DEVICE_GPU && units >= 2 &&
        units <= 1024) {
      ctx->eng[0]->max_coop = 2;
      ctx->eng[0]->split_parts = 0; /* the GPUs' default */
      char title[64];
      snprintf(title, sizeof title, "split by default, %s", what[w]);
      compare(ctx, &g[w], title);
      clphmm_stats st;
      clphmm_context_stats(ctx, &st);
      size_t n = 0;
      clphmm_count_pairs(g[w].batches, g[w].n, &n);
      CHECK(w == 1   ? st.split_pairs == 0
            : w == 0 ? st.split_pairs > 0
                     : st.split_pairs > 0 && st.split_pairs < n,
            "split by default, %s: %llu of %zu pairs split", what[w],
            (unsigned long long)st.split_pairs, n);
    } else
      printf("split by default: skipped (GPUs only)\n");
    clphmm_context_destroy(ctx);
  }
  for (int w = 0; w < 3; w++)
    gen_free(&g[w]);
}

/* Split pairs (cl/pairhmm.cl, SPLIT_Q): a pair's rounds of tiles on two
 * work-groups at once, which pass boundary rows and progress flags through
 * global memory. The underflow test's pairs (some stop on rows of zeros,
 * in a round whose successor is already running) and pairs carried by
 * insertions, in double mode and in float mode (its first pass with the
 * bound's exit, the rescue and the exact pass), on 2 and 4 tile slots:
 * bit-identical to the same launches unsplit, equal to the reference, and
 * the split pairs counted. GPUs only (the library splits only there:
 * schedule.c launch_split); CI's PoCL skips it, bench/gpu-check.sh runs
 * it. */
static void test_split_pairs(test_rng *rng) {
  gen g = {0};
  add_stopping_pairs(&g, rng, 1, 700);
  size_t n;
  clphmm_count_pairs(g.batches, g.n, &n);
  for (int m = 0; m < 2; m++) {
    const clphmm_precision p =
        m ? CLPHMM_PRECISION_FLOAT : CLPHMM_PRECISION_DOUBLE;
    for (unsigned coop = 2; coop <= 4; coop *= 2) {
      clphmm_context *on, *off;
      if (!open_two(p, 1, coop, &on, &off))
        break;
      if (on->eng[0]->dev.info.type != CLPHMM_DEVICE_GPU ||
          on->eng[0]->dev.info.compute_units < 2) {
        printf("split pairs: skipped (GPUs only; bench/gpu-check.sh)\n");
        clphmm_context_destroy(on);
        clphmm_context_destroy(off);
        break;
      }
      on->eng[0]->split_parts = 2;
      off->eng[0]->split_parts = 1;
      char what[64];
      snprintf(what, sizeof what, "split pairs, %u tile slots", coop);
      clphmm_stats sa, sb;
      same_as(on, off, &g, what, "split and unsplit", &sa, &sb);
      CHECK(sa.split_pairs > 0 && sb.split_pairs == 0,
            "%s: %llu pairs split, %llu unsplit", what,
            (unsigned long long)sa.split_pairs,
            (unsigned long long)sb.split_pairs);
      /* Launches that split run programs with split pairs, the others
       * without (the last chunks' schedules). */
      for (int i = 0; i < CPH_SLOTS; i++) {
        const cph_sched *sc = &on->eng[0]->slots[i].sched;
        for (size_t l = 0; l < sc->n_launches; l++)
          CHECK((sc->launches[l].split > 1) ==
                    (sc->launches[l].k->variant.split != 0),
                "%s: a launch of %u parts on a program %s split pairs", what,
                sc->launches[l].split,
                sc->launches[l].k->variant.split ? "with" : "without");
      }
      printf("%-9s %s: %zu pairs, %llu split, %llu stopped, as unsplit\n",
             m ? "float" : "double", what, n,
             (unsigned long long)sa.split_pairs,
             (unsigned long long)(sa.underflow_stops + sa.early_exits));
      clphmm_context_destroy(on);
      clphmm_context_destroy(off);
    }
  }
  gen_free(&g);
  test_split_policy();
}

/* Zero blocks (cl/pairhmm.cl, ZSKIP; per column in cl/pairhmm_cpu.cl):
 * cells whose inputs are all 0 skip their arithmetic. Long reads on the
 * exact form (CLPHMM_FMA=0): in double mode on lane variants (32-row
 * tiles on the local-memory backend, one vote per lane group; 128-row
 * tiles of 32 lanes on the device's own backend: a warp's or subgroup's
 * vote),
 * and in float mode on vector variants (double ones for its rescue); some
 * reads copied from their haplotype (a band of cells that are not 0,
 * zeros beside it far down) and some unrelated to theirs (every cell 0 a
 * few hundred rows down: -inf). The results equal, bit for bit, the
 * reference's (the exact form is its arithmetic) and those of the same
 * context built with -DCPH_ZSKIP=0; built with -DCPH_ZSKIP_DEBUG=1 (a
 * skipped block adds 1 to the sums) they differ, so blocks were skipped
 * (required wherever the backend votes: all but Intel's and AMD's). The
 * pairs run whole (CLPHMM_SPLIT=1): split rounds do not skip. */
typedef struct zero_case {
  clphmm_precision p;
  const char *list, *double_list, *shuffle;
} zero_case;

/* The case's results built with `options` (NULL: none); NULL if no
 * device or the call failed. `votes`: whether its variant's backend has
 * the vote that zero blocks need (cl/shuffle.cl CPH_HAS_ALL: all but
 * Intel's and AMD's). */
static double *zero_blocks_run(const zero_case *zc, const gen *g, size_t n,
                               const char *options, int *votes) {
  static const char *const names[2] = {"CLPHMM_FMA", "CLPHMM_SHUFFLE"};
  /* Whole pairs (CLPHMM_SPLIT=1): GPUs would split these few long pairs
   * over work-groups, and split rounds do not skip (cl/pairhmm.cl). */
  static const char *const opt[2] = {"CLPHMM_BUILD_OPTIONS", "CLPHMM_SPLIT"};
  const char *const vals[2] = {"0", zc->shuffle};
  const char *const ov[2] = {options, "1"};
  char *keep[2];
  env_set(opt, ov, 2, keep); /* (kept while flavours build on demand) */
  clphmm_context *ctx = NULL;
  double *out = NULL;
  if (open_with_env(zc->p, zc->list, zc->double_list, names, vals, &ctx) > 0) {
    const cph_variant *v = &vset(ctx)->v[0];
    CHECK(!v->fma && v->vec == (zc->list[0] == 'v'),
          "zero blocks (%s): variant %ux%u, fma %d", zc->list, v->g, v->c,
          (int)v->fma);
    *votes = v->vec ||
             (v->shuffle != CPH_SHUFFLE_INTEL && v->shuffle != CPH_SHUFFLE_AMD);
    out = run_device(ctx, g, n);
    clphmm_context_destroy(ctx);
  }
  env_restore(opt, ov, 2, keep);
  return out;
}

static void zero_blocks_case(test_rng *rng, const zero_case *zc) {
  gen g = {0};
  size_t lens[2] = {900, 1300};
  add_batch(&g, rng, lens, 2, 2, 1100, 1500, 1, 0);
  add_batch(&g, rng, lens, 2, 2, 300, 700, 0, 0);
  size_t n;
  CHECK_STATUS(clphmm_count_pairs(g.batches, g.n, &n), CLPHMM_SUCCESS, NULL);
  int votes = 0;
  double *got = zero_blocks_run(zc, &g, n, NULL, &votes);
  double *off =
      got ? zero_blocks_run(zc, &g, n, "-DCPH_ZSKIP=0", &votes) : NULL;
  double *dbg =
      off ? zero_blocks_run(zc, &g, n, "-DCPH_ZSKIP_DEBUG=1", &votes) : NULL;
  if (got && off && dbg) {
    double *ref = run_reference(&g, n, zc->p);
    size_t zeros = 0, bad = 0, moved = 0;
    for (size_t i = 0; i < n; i++) {
      zeros += isinf(ref[i]) && ref[i] < 0;
      moved += memcmp(&dbg[i], &got[i], sizeof *got) != 0;
      if (memcmp(&got[i], &ref[i], sizeof *ref) != 0 && bad++ < 5)
        CHECK(0, "zero blocks (%s): pair %zu: %.17g, reference %.17g", zc->list,
              i, got[i], ref[i]);
    }
    CHECK(bad == 0,
          "zero blocks (%s): %zu of %zu pairs differ from the reference",
          zc->list, bad, n);
    CHECK(memcmp(got, off, n * sizeof *got) == 0,
          "zero blocks (%s): results differ with the skip off", zc->list);
    CHECK(zeros > 0 && zeros < n,
          "zero blocks (%s): %zu of %zu pairs -inf (want some, not all)",
          zc->list, zeros, n);
    CHECK(moved > 0 || !votes,
          "zero blocks (%s): no block skipped (CPH_ZSKIP_DEBUG moved nothing)",
          zc->list);
    printf("%-9s zero blocks on %s (%s): %zu pairs (%zu -inf) as without the "
           "skip and as the reference; %zu moved by skipped blocks\n",
           zc->p ? "double" : "float", zc->list,
           zc->shuffle ? zc->shuffle : "own backend", n, zeros, moved);
    free(ref);
  }
  free(got);
  free(off);
  free(dbg);
  gen_free(&g);
}

static void test_zero_blocks(test_rng *rng) {
  static const zero_case cases[] = {
      {CLPHMM_PRECISION_DOUBLE, "8x4/32", "8x4/32", "local"},
      {CLPHMM_PRECISION_DOUBLE, "32x4/128", "32x2/64", NULL},
      {CLPHMM_PRECISION_FLOAT, "v8x16/1", "v4x16/1", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    zero_blocks_case(rng, &cases[i]);
}

/* Concurrent tiles where a pair's first real tile starts a later slot of
 * a round: its padding (the rows that make it as long as its work-group's
 * longest pair) is a whole number of tiles, not a multiple of the slots.
 * Its row above is then a tile of padding, whose column 0 holds Y = init;
 * the generic loop (TILE_STEPS) once read zeros there and lost up to 0.4%
 * of such a result. Reads of 2..7 tiles of 64 rows with one of 8 tiles,
 * insertions carrying their likelihood, in both precisions, on 2 and 4
 * slots, against the reference. */
static void test_padded_tiles(void) {
  gen g = {0};
  add_mismatch_batch(&g, 512, 400, 10);
  for (size_t k = 2; k < 8; k++)
    add_mismatch_batch(&g, 64 * k, 52 * k, 10);
  for (int m = 0; m < 2; m++) {
    const clphmm_precision p =
        m ? CLPHMM_PRECISION_FLOAT : CLPHMM_PRECISION_DOUBLE;
    for (unsigned coop = 2; coop <= 4; coop *= 2) {
      const char *list = "4x4/64,8x8/64";
      clphmm_context *ctx = NULL;
      if (open_exit_in(p, list, list, 1, &ctx) <= 0)
        break;
      ctx->eng[0]->max_coop = coop;
      char what[64];
      snprintf(what, sizeof what, "padding of whole tiles, %u slots", coop);
      compare(ctx, &g, what);
      clphmm_context_destroy(ctx);
    }
  }
  gen_free(&g);
}

/* Pairs whose GKL double sum falls in double's subnormal range (a
 * likelihood near 1e-620): GKL's cells keep only that range's absolute
 * precision there, so its result depends on its operation order, and the
 * library computes such pairs again in GKL's order (compute.c,
 * RESCUE_MIN_SUM, the exact pass): equal to the reference bit for bit (the
 * other pairs within the double level). Reads
 * of 'A' against haplotypes of 'C' (every base a mismatch) whose lengths
 * and gap continuation penalties sweep the sums through the range. */
static void subnormal_rescue_on(clphmm_context *ctx, const gen *g,
                                const char *what);

static void test_subnormal_rescue(void) {
  gen g = {0};
  for (unsigned k = 0; k < 14 * 15; k++) {
    const size_t len = 104 + 2 * (k / 15), hlen = 120;
    const unsigned gcp = 44 + k % 15;
    char *b = gen_alloc(&g, len), *hb = gen_alloc(&g, hlen);
    uint8_t *q = gen_alloc(&g, 4 * len);
    memset(b, 'A', len);
    memset(hb, 'C', hlen);
    for (size_t i = 0; i < len; i++) {
      q[i] = 60;
      q[len + i] = q[2 * len + i] = 45;
      q[3 * len + i] = (uint8_t)gcp;
    }
    clphmm_haplotype *h = gen_alloc(&g, sizeof *h);
    *h = (clphmm_haplotype){hb, hlen};
    clphmm_read *r = gen_alloc(&g, sizeof *r);
    *r = (clphmm_read){b, q, q + len, q + 2 * len, q + 3 * len, len};
    push_batch(&g, (clphmm_batch){r, 1, h, 1});
  }
  /* The device's default float context (CPUs: the exact form, which
   * is GKL's order), and lane-group variants in the scaled form. */
  clphmm_context *ctx = NULL;
  if (open_context(CLPHMM_PRECISION_FLOAT, &ctx) > 0)
    subnormal_rescue_on(ctx, &g, "default variants");
  clphmm_context_destroy(ctx);
  ctx = NULL;
  if (open_exit("4x4/64,8x8/64", 1, &ctx) > 0)
    subnormal_rescue_on(ctx, &g, "scaled form");
  clphmm_context_destroy(ctx);
  gen_free(&g);
}

static void subnormal_rescue_on(clphmm_context *ctx, const gen *g,
                                const char *what) {
  const size_t n = g->n;
  size_t deep = 0;
  double *dev = run_device(ctx, g, n), *ref = run_reference(g, n, 0);
  clphmm_stats st;
  clphmm_context_stats(ctx, &st);
  for (size_t i = 0; i < n; i++) {
    double s = 0;
    cph_reference_pair_double(g->batches[i].reads, g->batches[i].haplotypes,
                              CPH_GKL_DOUBLE, &s);
    const int sub = s > 0 && s < 0x1p-990;
    deep += sub;
    /* (Other sums: the scaled form's rounding, within the level.) */
    CHECK(dev && (sub ? dev[i] == ref[i]
                      : test_abs_diff(dev[i], ref[i]) <= LEVEL_DOUBLE),
          "%s, pair %zu: device %.12g, reference %.12g", what, i,
          dev ? dev[i] : NAN, ref[i]);
  }
  /* Only the scaled form's sums are computed again, in GKL's exact order
   * on the device (the CPU reference on a device without fp64). */
  const int scaled =
      cph_variant_scaled(&ctx->eng[0]->variants[CPH_SET_DOUBLE].v[0]);
  const int fp64 = ctx->eng[0]->dev.info.has_fp64;
  const uint64_t again = fp64 ? st.exact_pairs : st.cpu_pairs;
  /* (Without fp64 the CPU reference rescues every pair: only count.) */
  CHECK(deep >= 3 && (scaled ? again >= deep : !fp64 || again == 0) &&
            (!fp64 || st.cpu_pairs == 0),
        "%s: %zu pairs with subnormal-range sums, %llu computed again in "
        "GKL's order on the device, %llu on the CPU (scaled form %d)",
        what, deep, (unsigned long long)st.exact_pairs,
        (unsigned long long)st.cpu_pairs, scaled);
  printf("float     subnormal-range rescue sums (%s): %zu of %zu pairs, %llu "
         "again in GKL's order, %llu on the CPU, equal to the reference\n",
         what, deep, n, (unsigned long long)st.exact_pairs,
         (unsigned long long)st.cpu_pairs);
  free(dev);
  free(ref);
}

/* A 20,000-base read against a 30,000-base haplotype (read taken from the
 * haplotype with substitutions so the likelihood is meaningful). */
static void test_long(clphmm_context *ctx, test_rng *rng) {
  gen g = {0};
  size_t len = 20000;
  add_batch(&g, rng, &len, 1, 1, 30000, 30000, 1, 0);
  compare(ctx, &g, "20,000 x 30,000");
  gen_free(&g);
}

int main(void) {
  test_rng rng;
  test_rng_init(&rng, 20261121);
  printf("seed %llu (set CLPHMM_TEST_SEED to reproduce another)\n",
         (unsigned long long)rng.s);
  const clphmm_precision modes[] = {CLPHMM_PRECISION_FLOAT,
                                    CLPHMM_PRECISION_DOUBLE};
  for (int m = 0; m < 2; m++) {
    clphmm_context *ctx = NULL;
    int ok = open_context(modes[m], &ctx);
    if (ok == 0)
      return 77;
    if (ok < 0)
      return test_finish() ? 1 : 1;
    clphmm_device_info info;
    clphmm_context_device(ctx, &info);
    printf("device: %s (%s), %zu variants, shuffle %s\n", info.name,
           info.platform, vset(ctx)->n,
           cph_shuffle_name(vset(ctx)->v[0].shuffle));
    test_bins(ctx, &rng, 0);
    test_bins(ctx, &rng, 1);
    test_mixed(ctx, &rng);
    test_rescue(ctx, &rng);
    test_packed(ctx);
    test_pack_shrink(ctx);
    test_overflow_guard(ctx, &rng);
    test_chunking_determinism(ctx, &rng);
    test_concurrent_tiles(ctx, &rng);
    if (!skip_long())
      test_long(ctx, &rng);
    clphmm_context_destroy(ctx);
    test_long_variant(modes[m], &rng);
    test_small_variant(modes[m], &rng);
    test_small_ring(modes[m], &rng);
    test_small_bins(modes[m]);
    test_copy_queue(modes[m]);
    if (modes[m] == CLPHMM_PRECISION_FLOAT)
      test_rescue_chunks();
    else
      test_chunk_ramp();
    test_only_empty_pairs(modes[m]);
    test_vector_variants(modes[m], &rng);
    test_host_prep(modes[m], &rng);
    test_profile(modes[m]);
  }
  /* (It sets its own variants and arithmetic form: once per suite run, in
   * the run without CLPHMM_VARIANTS and CLPHMM_FMA.) */
  if (!getenv("CLPHMM_VARIANTS") && !getenv("CLPHMM_FMA")) {
    test_early_exit();
    test_exit_cells();
    test_exact_direct(&rng);
    test_underflow_stops(&rng);
    test_double_first(&rng);
    test_double_first_auto(&rng);
    test_split_pairs(&rng);
    test_padded_tiles();
    test_zero_blocks(&rng);
  }
  test_subnormal_rescue();
  return test_finish();
}
