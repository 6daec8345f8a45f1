/* Workloads: synthetic sets (equal lengths, a HaplotypeCaller-like mix,
 * long reads, one read-length bin for --tune), input files, and the
 * standard suites. Every synthetic workload is a pure function of its spec
 * and seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- Builder: sequences appended to growing arenas, pointers fixed at the
 * end (realloc moves the arenas). ------------------------------------- */

typedef struct rec_read {
  size_t base, qual, len;
} rec_read;
typedef struct rec_hap {
  size_t base, len;
} rec_hap;
typedef struct rec_batch {
  size_t r0, nr, h0, nh;
} rec_batch;

typedef struct builder {
  char *bases;
  uint8_t *quals;
  rec_read *reads;
  rec_hap *haps;
  rec_batch *batches;
  size_t nb, cb, nq, cq, nr, cr, nh, ch, nbt, cbt;
  int oom;
  uint64_t cells, pairs;
  double sum_read, sum_hap; /* over pairs */
} builder;

static void *grow(void *p, size_t *cap, size_t need, size_t size, int *oom) {
  if (need <= *cap)
    return p;
  size_t c = *cap ? *cap : 1024;
  while (c < need)
    c *= 2;
  void *n = realloc(p, c * size);
  if (!n) {
    *oom = 1;
    return p;
  }
  *cap = c;
  return n;
}

/* Reserve `len` bases (and 4 * len qualities when `quals`). */
static char *add_bases(builder *b, size_t len, size_t *off) {
  b->bases = grow(b->bases, &b->cb, b->nb + len + 1, 1, &b->oom);
  if (b->oom)
    return NULL;
  *off = b->nb;
  b->nb += len;
  return b->bases + *off;
}

static uint8_t *add_quals(builder *b, size_t len, size_t *off) {
  b->quals = grow(b->quals, &b->cq, b->nq + 4 * len + 1, 1, &b->oom);
  if (b->oom)
    return NULL;
  *off = b->nq;
  b->nq += 4 * len;
  return b->quals + *off;
}

static void add_read(builder *b, size_t base, size_t qual, size_t len) {
  b->reads = grow(b->reads, &b->cr, b->nr + 1, sizeof *b->reads, &b->oom);
  if (!b->oom)
    b->reads[b->nr++] = (rec_read){base, qual, len};
}

static void add_hap(builder *b, size_t base, size_t len) {
  b->haps = grow(b->haps, &b->ch, b->nh + 1, sizeof *b->haps, &b->oom);
  if (!b->oom)
    b->haps[b->nh++] = (rec_hap){base, len};
}

/* Close a batch made of the reads and haplotypes added since r0 / h0. */
static void add_batch(builder *b, size_t r0, size_t h0) {
  b->batches =
      grow(b->batches, &b->cbt, b->nbt + 1, sizeof *b->batches, &b->oom);
  if (b->oom)
    return;
  rec_batch bt = {r0, b->nr - r0, h0, b->nh - h0};
  b->batches[b->nbt++] = bt;
  uint64_t sr = 0, sh = 0;
  for (size_t r = r0; r < b->nr; r++)
    sr += b->reads[r].len;
  for (size_t h = h0; h < b->nh; h++)
    sh += b->haps[h].len;
  b->cells += sr * sh;
  b->pairs += bt.nr * bt.nh;
  b->sum_read += (double)sr * (double)bt.nh;
  b->sum_hap += (double)sh * (double)bt.nr;
}

static int finish(builder *b, bench_workload *w) {
  w->batches = calloc(b->nbt ? b->nbt : 1, sizeof *w->batches);
  w->reads = calloc(b->nr ? b->nr : 1, sizeof *w->reads);
  w->haps = calloc(b->nh ? b->nh : 1, sizeof *w->haps);
  if (b->oom || !w->batches || !w->reads || !w->haps)
    return 0;
  for (size_t i = 0; i < b->nr; i++) {
    const rec_read *r = &b->reads[i];
    const uint8_t *q = b->quals + r->qual;
    w->reads[i] =
        (clphmm_read){b->bases + r->base, q,     q + r->len, q + 2 * r->len,
                      q + 3 * r->len,     r->len};
  }
  for (size_t i = 0; i < b->nh; i++)
    w->haps[i] = (clphmm_haplotype){b->bases + b->haps[i].base, b->haps[i].len};
  for (size_t i = 0; i < b->nbt; i++) {
    const rec_batch *bt = &b->batches[i];
    w->batches[i] =
        (clphmm_batch){w->reads + bt->r0, bt->nr, w->haps + bt->h0, bt->nh};
  }
  w->n_batches = b->nbt;
  w->n_pairs = b->pairs;
  w->cells = b->cells;
  w->mean_read = b->pairs ? b->sum_read / (double)b->pairs : 0;
  w->mean_hap = b->pairs ? b->sum_hap / (double)b->pairs : 0;
  w->bases = b->bases;
  w->quals = b->quals;
  free(b->reads);
  free(b->haps);
  free(b->batches);
  return 1;
}

static void builder_free(builder *b) {
  free(b->bases);
  free(b->quals);
  free(b->reads);
  free(b->haps);
  free(b->batches);
}

/* ---- Sequence generators ------------------------------------------------ */

static char random_base(bench_rng *r) {
  return "ACGT"[bench_rnd(r, 4)];
}

/* A haplotype: a copy of `ref` (length rl) with SNPs at rate 1/snp and
 * small insertions and deletions at rate 1/indel. */
static size_t derive_hap(bench_rng *r, const char *ref, size_t rl, char *out,
                         size_t cap, unsigned snp, unsigned indel) {
  size_t n = 0;
  for (size_t i = 0; i < rl && n < cap; i++) {
    if (indel && bench_rnd(r, indel) == 0) {
      unsigned len = 1 + bench_rnd(r, 8);
      if (bench_rnd(r, 2)) { /* deletion */
        i += len - 1;
        continue;
      }
      for (unsigned k = 0; k < len && n < cap; k++)
        out[n++] = random_base(r);
    }
    if (n < cap)
      out[n++] = snp && bench_rnd(r, snp) == 0 ? random_base(r) : ref[i];
  }
  return n;
}

/* A read of `len` bases sampled from `hap` at `start` (bases past the
 * haplotype's ends are random: reads overhang the region), with errors at
 * 1/err and N at 1/nrate, and base qualities drawn by `qual_mode`. */
typedef enum { QUAL_UNIFORM, QUAL_BINNED } qual_mode;

static void make_read(bench_rng *r, const char *hap, size_t hl, long start,
                      char *b, uint8_t *q, size_t len, unsigned err,
                      unsigned nrate, qual_mode qm) {
  for (size_t i = 0; i < len; i++) {
    long p = start + (long)i;
    int in = p >= 0 && (size_t)p < hl;
    b[i] = in && bench_rnd(r, err) != 0 ? hap[p] : random_base(r);
    if (qm == QUAL_UNIFORM) {
      q[i] = (uint8_t)(bench_rnd(r, 10) == 0 ? 6 : 20 + bench_rnd(r, 21));
      q[len + i] = (uint8_t)(40 + bench_rnd(r, 6));
      q[2 * len + i] = (uint8_t)(40 + bench_rnd(r, 6));
    } else {
      /* Illumina binned qualities, lower towards the 3' end; GATK's
       * default insertion / deletion quality 45 (sometimes recalibrated). */
      unsigned u = bench_rnd(r, 100) + (unsigned)(20 * i / len);
      q[i] = (uint8_t)(u < 75 ? 37 : u < 100 ? 23 : u < 115 ? 12 : 2);
      q[len + i] = (uint8_t)(bench_rnd(r, 5) ? 45 : 35 + bench_rnd(r, 10));
      q[2 * len + i] = (uint8_t)(bench_rnd(r, 5) ? 45 : 35 + bench_rnd(r, 10));
    }
    q[3 * len + i] = 10;
    if (nrate && bench_rnd(r, nrate) == 0) {
      b[i] = 'N';
      q[i] = 2;
    }
  }
}

/* Add one read sampled from haplotype `h` of the builder. */
static void sample_read(builder *b, bench_rng *r, size_t h, size_t len,
                        unsigned err, unsigned nrate, qual_mode qm) {
  size_t boff = 0, qoff = 0;
  char *bs = add_bases(b, len, &boff);
  uint8_t *q = add_quals(b, len, &qoff);
  if (!bs || !q)
    return;
  const rec_hap *hp = &b->haps[h];
  long span = (long)hp->len - (long)len * 2 / 3 + (long)len / 3;
  long start =
      -(long)len / 3 + (span > 0 ? (long)bench_rnd(r, (unsigned)span + 1) : 0);
  if (hp->len >= len && qm == QUAL_UNIFORM) /* equal-length: fully inside */
    start = (long)bench_rnd(r, (unsigned)(hp->len - len + 1));
  make_read(r, b->bases + hp->base, hp->len, start, bs, q, len, err, nrate, qm);
  add_read(b, boff, qoff, len);
}

/* Add `nh` haplotypes: a random reference of `len` bases, then variants. */
static void add_haps(builder *b, bench_rng *r, size_t nh, size_t len,
                     unsigned snp, unsigned indel) {
  size_t ref_off = 0;
  char *ref = add_bases(b, len, &ref_off);
  if (!ref)
    return;
  for (size_t i = 0; i < len; i++)
    ref[i] = random_base(r);
  add_hap(b, ref_off, len);
  for (size_t h = 1; h < nh && !b->oom; h++) {
    size_t cap = len + len / 8 + 16, off = 0;
    if (!add_bases(b, cap, &off))
      return;
    /* add_bases may have moved the arena: take the reference again. */
    const char *src = b->bases + ref_off;
    size_t n = derive_hap(r, src, len, b->bases + off, cap, snp, indel);
    b->nb = off + (n ? n : 1);
    if (!n)
      b->bases[off] = 'A';
    add_hap(b, off, n ? n : 1);
  }
}

/* ---- The workload kinds ------------------------------------------------- */

typedef struct spec {
  char mix[16];
  unsigned read, hap, reads, haps; /* equal lengths, batch shape */
  int has_reads, has_haps;         /* reads= / haps= given */
  unsigned read_lo, read_hi;       /* mix=long / bin read range */
  unsigned hap_lo, hap_hi;         /* mix=long haplotype range (0: none) */
  double pairs, cells;
  unsigned long long seed;
  int has_seed;
} spec;

/* Equal lengths, 8 reads x 8 haplotypes per batch (the peak suite): the
 * haplotypes variants of one random sequence (~0.1% substitutions, the
 * density of human heterozygous sites; at 1% a 2 kb read against another
 * haplotype falls below the float range and is rescued in double), the
 * reads copies of the first with ~0.5% errors. */
static void gen_equal(builder *b, bench_rng *r, const spec *s, double pairs) {
  while ((double)b->pairs < pairs && !b->oom) {
    size_t r0 = b->nr, h0 = b->nh;
    /* Fewer pairs than one batch (small scales): a smaller batch. */
    double left = pairs - (double)b->pairs;
    unsigned nh = s->haps, nr = s->reads;
    if (left < (double)nr * nh) {
      nh = (unsigned)fmin(nh, ceil(sqrt(left)));
      nr = (unsigned)ceil(left / nh);
    }
    add_haps(b, r, nh, s->hap, 1000, 0);
    for (unsigned k = 0; k < nr && !b->oom; k++)
      sample_read(b, r, h0, s->read, 200, 0, QUAL_UNIFORM);
    add_batch(b, r0, h0);
  }
}

/* HaplotypeCaller-like regions: tens of reads x a few haplotypes. */
static size_t hc_read_length(bench_rng *r) {
  unsigned u = bench_rnd(r, 100);
  return u < 70   ? 150
         : u < 85 ? 100 + bench_rnd(r, 50)
         : u < 95 ? 250
                  : 50 + bench_rnd(r, 50);
}

static size_t hc_haplotypes(bench_rng *r) {
  unsigned u = bench_rnd(r, 100);
  return u < 40   ? 2
         : u < 75 ? 3 + bench_rnd(r, 2)
         : u < 95 ? 5 + bench_rnd(r, 4)
                  : 9 + bench_rnd(r, 8);
}

/* Regions of 10..60 reads x hc_haplotypes(), or of exactly reads=R x
 * haps=H when the spec sets them (a region of a chosen size, e.g. one of
 * about 300 pairs for per-call timing). */
static void gen_hc(builder *b, bench_rng *r, const spec *s, double pairs,
                   double cells) {
  while ((double)b->pairs < pairs && (double)b->cells < cells && !b->oom) {
    size_t r0 = b->nr, h0 = b->nh;
    size_t nh = hc_haplotypes(r), nr = 10 + bench_rnd(r, 51);
    if (s->has_haps)
      nh = s->haps;
    if (s->has_reads)
      nr = s->reads;
    add_haps(b, r, nh, 250 + bench_rnd(r, 300), 150, 400);
    for (size_t k = 0; k < nr && !b->oom; k++)
      sample_read(b, r, h0 + bench_rnd(r, (unsigned)nh), hc_read_length(r), 300,
                  1000, QUAL_BINNED);
    add_batch(b, r0, h0);
  }
}

/* Long reads against haplotypes of a given range (hap=MIN-MAX): per
 * region one random haplotype length in the range (two haplotypes, the
 * second a variant of the first) and 1..3 reads of read_lo..read_hi bases
 * (log-uniform) sampled from them. */
static void gen_long_haps(builder *b, bench_rng *r, const spec *s, double pairs,
                          double cells) {
  const double lo = s->read_lo, hi = s->read_hi;
  while ((double)b->pairs < pairs && (double)b->cells < cells && !b->oom) {
    size_t r0 = b->nr, h0 = b->nh, nr = 1 + bench_rnd(r, 3);
    size_t hl = s->hap_lo + bench_rnd(r, s->hap_hi - s->hap_lo + 1);
    add_haps(b, r, 2, hl, 1000, 2000);
    for (size_t k = 0; k < nr && !b->oom; k++) {
      size_t len = (size_t)(lo * pow(hi / lo, bench_unif(r)));
      sample_read(b, r, h0 + k % 2, len, 100, 2000, QUAL_BINNED);
    }
    add_batch(b, r0, h0);
  }
}

/* Long reads: 1..3 reads of lo..hi bases (log-uniform) x 2 haplotypes a
 * little longer. The last region shrinks (never below lo) to fit the cell
 * budget, so that small scales stay small. */
static void gen_long(builder *b, bench_rng *r, const spec *s, double pairs,
                     double cells) {
  const double lo = s->read_lo, hi = s->read_hi;
  if (s->hap_lo) {
    gen_long_haps(b, r, s, pairs, cells);
    return;
  }
  while ((double)b->pairs < pairs && (double)b->cells < cells && !b->oom) {
    size_t r0 = b->nr, h0 = b->nh, nr = 1 + bench_rnd(r, 3);
    double t = lo * pow(hi / lo, bench_unif(r));
    double left = cells - (double)b->cells;
    if (left < nr * 2 * 1.1 * t * t) {
      nr = 1;
      t = fmax(lo, fmin(t, sqrt(left / 2.2)));
    }
    size_t hl = (size_t)(t * 1.1);
    add_haps(b, r, 2, hl, 1000, 2000);
    for (size_t k = 0; k < nr && !b->oom; k++) {
      size_t len = (size_t)(t * (0.7 + 0.3 * bench_unif(r)));
      sample_read(b, r, h0 + k % 2, len < lo ? (size_t)lo : len, 100, 2000,
                  QUAL_BINNED);
    }
    add_batch(b, r0, h0);
  }
}

/* One --tune bin: reads uniform in (lo, hi], haplotypes 1.5x, 4 x 4. */
static void gen_bin(builder *b, bench_rng *r, const spec *s, double cells) {
  while ((double)b->cells < cells && !b->oom) {
    size_t r0 = b->nr, h0 = b->nh;
    size_t len = s->read_lo + 1 + bench_rnd(r, s->read_hi - s->read_lo);
    add_haps(b, r, 4, len + len / 2, 100, 0);
    for (int k = 0; k < 4 && !b->oom; k++) {
      size_t l = s->read_lo + 1 + bench_rnd(r, s->read_hi - s->read_lo);
      sample_read(b, r, h0 + (size_t)k, l, 200, 0, QUAL_UNIFORM);
    }
    add_batch(b, r0, h0);
  }
}

/* ---- Specs -------------------------------------------------------------- */

static int parse_range(const char *v, unsigned *lo, unsigned *hi) {
  char *end;
  unsigned long a = strtoul(v, &end, 10), c = a;
  if (end == v)
    return 0;
  if (*end == '-') {
    const char *p = end + 1;
    c = strtoul(p, &end, 10);
    if (end == p)
      return 0;
  }
  if (*end || a < 1 || c < a || c > 1000000)
    return 0;
  *lo = (unsigned)a;
  *hi = (unsigned)c;
  return 1;
}

static int parse_number(const char *v, double *out) {
  char *end;
  *out = strtod(v, &end);
  return end != v && !*end && *out > 0 && *out < 1e18;
}

static int set_key(spec *s, const char *k, const char *v, char *err, size_t n) {
  unsigned lo, hi;
  double d;
  if (!strcmp(k, "mix") && (!strcmp(v, "hc") || !strcmp(v, "long")))
    snprintf(s->mix, sizeof s->mix, "%s", v);
  else if (!strcmp(k, "read") && parse_range(v, &lo, &hi)) {
    s->read = hi;
    s->read_lo = lo;
    s->read_hi = hi;
  } else if (!strcmp(k, "hap") && parse_range(v, &lo, &hi)) {
    s->hap = hi;
    s->hap_lo = lo;
    s->hap_hi = hi;
  } else if (!strcmp(k, "reads") && parse_range(v, &lo, &hi) && lo == hi &&
             lo <= 1000) {
    s->reads = lo;
    s->has_reads = 1;
  } else if (!strcmp(k, "haps") && parse_range(v, &lo, &hi) && lo == hi &&
             lo <= 1000) {
    s->haps = lo;
    s->has_haps = 1;
  } else if (!strcmp(k, "pairs") && parse_number(v, &d))
    s->pairs = d;
  else if (!strcmp(k, "cells") && parse_number(v, &d))
    s->cells = d;
  else if (!strcmp(k, "seed") && parse_number(v, &d)) {
    s->seed = strtoull(v, NULL, 10);
    s->has_seed = 1;
  } else {
    snprintf(err, n, "bad --synthetic field '%s=%s'", k, v);
    return 0;
  }
  return 1;
}

static int parse_spec(const char *text, spec *s, char *err, size_t n) {
  memset(s, 0, sizeof *s);
  s->reads = s->haps = 8;
  char buf[256];
  if (strlen(text) >= sizeof buf) {
    snprintf(err, n, "--synthetic spec too long");
    return 0;
  }
  snprintf(buf, sizeof buf, "%s", text);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq) {
      snprintf(err, n, "bad --synthetic field '%s' (expected key=value)", tok);
      return 0;
    }
    *eq = '\0';
    if (!set_key(s, tok, eq + 1, err, n))
      return 0;
  }
  if (!s->pairs && !s->cells) {
    snprintf(err, n, "--synthetic '%s' needs pairs=N or cells=N", text);
    return 0;
  }
  if (!s->mix[0] && (!s->read || !s->hap || s->read_lo != s->read_hi ||
                     s->hap_lo != s->hap_hi)) {
    snprintf(err, n,
             "--synthetic '%s' needs read=L,hap=L (or mix=hc / mix=long)",
             text);
    return 0;
  }
  if (!strcmp(s->mix, "long") && !s->read_lo) {
    s->read_lo = 1000;
    s->read_hi = 20000;
  }
  if (s->hap_lo && strcmp(s->mix, "long") && s->hap_lo != s->hap_hi) {
    snprintf(err, n, "--synthetic '%s': a haplotype range needs mix=long",
             text);
    return 0;
  }
  return 1;
}

/* Sizes after --scale and --max-cells; at least one batch. */
static void sized(const spec *s, const bench_options *o, double *pairs,
                  double *cells) {
  *pairs = s->pairs ? s->pairs * o->scale : INFINITY;
  *cells = s->cells ? s->cells * o->scale : INFINITY;
  if (o->max_cells > 0 && !(*cells <= o->max_cells))
    *cells = o->max_cells;
  if (*pairs < 1)
    *pairs = 1;
  if (*cells < 1)
    *cells = 1;
}

int bench_spec_check(const char *text, char *err, size_t err_n) {
  spec s;
  return parse_spec(text, &s, err, err_n) ? 0 : 1;
}

int bench_synthetic(const char *text, const bench_options *o, bench_workload *w,
                    char *err, size_t err_n) {
  spec s;
  memset(w, 0, sizeof *w);
  if (!parse_spec(text, &s, err, err_n))
    return 1;
  double pairs, cells;
  sized(&s, o, &pairs, &cells);
  bench_rng r = {(s.has_seed ? s.seed : o->seed) * 2654435761ull + 1};
  builder b;
  memset(&b, 0, sizeof b);
  if (!strcmp(s.mix, "hc")) {
    gen_hc(&b, &r, &s, pairs, cells);
    snprintf(w->kind, sizeof w->kind, "hc");
  } else if (!strcmp(s.mix, "long")) {
    gen_long(&b, &r, &s, pairs, cells);
    snprintf(w->kind, sizeof w->kind, "long");
  } else {
    /* Equal lengths: pairs from cells, whole batches. */
    double per = (double)s.read * s.hap;
    double p = fmin(pairs, ceil(cells / per));
    gen_equal(&b, &r, &s, p);
    snprintf(w->kind, sizeof w->kind, "equal");
    w->read_len = s.read;
    w->hap_len = s.hap;
  }
  if (!finish(&b, w)) {
    builder_free(&b);
    bench_workload_free(w);
    snprintf(err, err_n, "out of memory building '%s'", text);
    return 1;
  }
  snprintf(w->name, sizeof w->name, "%s", text);
  return 0;
}

int bench_bin_workload(unsigned lo, unsigned hi, double cells,
                       unsigned long long seed, bench_workload *w) {
  spec s;
  memset(&s, 0, sizeof s);
  memset(w, 0, sizeof *w);
  s.read_lo = lo;
  s.read_hi = hi;
  bench_rng r = {seed * 2654435761ull + 7};
  builder b;
  memset(&b, 0, sizeof b);
  gen_bin(&b, &r, &s, cells);
  if (!finish(&b, w)) {
    builder_free(&b);
    bench_workload_free(w);
    return 1;
  }
  snprintf(w->kind, sizeof w->kind, "bin");
  snprintf(w->name, sizeof w->name, "bin read=%u-%u", lo + 1, hi);
  return 0;
}

size_t bench_suite(const char *name, const char **specs, const char **suites,
                   size_t max) {
  static const char *const peak[] = {
      "read=64,hap=64,cells=1e10",     "read=128,hap=128,cells=1e10",
      "read=256,hap=256,cells=1e10",   "read=512,hap=512,cells=1e10",
      "read=1024,hap=1024,cells=1e10", "read=2048,hap=2048,cells=1e10"};
  static const char *const realistic[] = {
      "mix=hc,cells=1e8", "mix=hc,cells=1e10", "mix=hc,cells=1e11"};
  static const char *const lng[] = {"mix=long,cells=1e11"};
  size_t n = 0;
  int all = !strcmp(name, "all");
#define ADD(list, label)                                                       \
  for (size_t i = 0; i < sizeof list / sizeof *list && n < max; i++) {         \
    suites[n] = label;                                                         \
    specs[n++] = list[i];                                                      \
  }
  if (all || !strcmp(name, "peak"))
    ADD(peak, "peak")
  if (all || !strcmp(name, "realistic"))
    ADD(realistic, "realistic")
  if (all || !strcmp(name, "long"))
    ADD(lng, "long")
#undef ADD
  return n;
}

int bench_file(const char *path, unsigned repeat, unsigned flags,
               bench_workload *w, char *err, size_t err_n) {
  memset(w, 0, sizeof *w);
  if (clphmm_dataset_read_file(path, flags, &w->dataset)) {
    snprintf(err, err_n, "%s", clphmm_last_error(NULL));
    return 1;
  }
  const clphmm_batch *src = clphmm_dataset_batches(w->dataset);
  size_t nb = clphmm_dataset_n_batches(w->dataset);
  if (repeat < 1)
    repeat = 1;
  w->batches = calloc(nb > 0 ? nb * repeat : 1, sizeof *w->batches);
  if (!w->batches) {
    bench_workload_free(w);
    snprintf(err, err_n, "out of memory repeating %s", path);
    return 1;
  }
  double sr = 0, sh = 0;
  for (size_t k = 0; k < repeat; k++)
    for (size_t b = 0; b < nb; b++) {
      const clphmm_batch *bt = &src[b];
      w->batches[k * nb + b] = *bt;
      for (size_t r = 0; r < bt->n_reads; r++)
        for (size_t h = 0; h < bt->n_haplotypes; h++) {
          w->cells += (uint64_t)bt->reads[r].length * bt->haplotypes[h].length;
          sr += (double)bt->reads[r].length;
          sh += (double)bt->haplotypes[h].length;
        }
    }
  w->n_batches = nb * repeat;
  w->n_pairs = clphmm_dataset_n_pairs(w->dataset) * repeat;
  w->mean_read = w->n_pairs ? sr / (double)w->n_pairs : 0;
  w->mean_hap = w->n_pairs ? sh / (double)w->n_pairs : 0;
  const char *base = strrchr(path, '/');
  snprintf(w->kind, sizeof w->kind, "file");
  snprintf(w->name, sizeof w->name, "file %.80s x%u", base ? base + 1 : path,
           repeat);
  return 0;
}

void bench_workload_free(bench_workload *w) {
  free(w->batches);
  free(w->reads);
  free(w->haps);
  free(w->bases);
  free(w->quals);
  clphmm_dataset_destroy(w->dataset);
  memset(w, 0, sizeof *w);
}

size_t *bench_offsets(const bench_workload *w) {
  size_t *off = malloc((w->n_batches + 1) * sizeof *off);
  if (!off)
    return NULL;
  off[0] = 0;
  for (size_t b = 0; b < w->n_batches; b++)
    off[b + 1] = off[b] + w->batches[b].n_reads * w->batches[b].n_haplotypes;
  return off;
}
