/* Planning: which compiled variants a device uses, and which variant serves
 * each read length (the read-length bins). */
#ifndef CLPHMM_PLAN_H
#define CLPHMM_PLAN_H

#include "opencl/program.h"

#define CPH_MAX_VARIANTS CLPHMM_MAX_BINS

/* Launches of fewer pairs than this many per compute unit and lane group
 * run the tiles of long reads concurrently (unless told otherwise): on the
 * H200 (bb53fcd), the float pass of 2388 pairs of 2048 bases ran at 2.99
 * TCUPS with four concurrent tiles against 2.78 one after the other, that
 * of 9537 pairs of 1024 bases at 2.97 with two or four against 2.98:
 * concurrent tiles cost about LAG steps per tile slot and a barrier per
 * four steps, and gain nothing when the device is already full. Short
 * launches (the double rescue of a few pairs) gain latency: at 1024 bases
 * the rescue of three pairs took 0.13 ms with four concurrent 256-row
 * double tiles, 0.55 ms with 384-row tiles one after the other. */
#define CPH_FILL_PAIRS_PER_UNIT 8

/* The variants of a device: the read-length bins v[0..n), ordered by
 * increasing rows per tile, the long-read variant (":long"), if any, last;
 * then, when has_small, the small-call variant (":small") at v[n]. A chunk
 * of work too small to fill the device (cph_plan_small) runs all its pairs
 * on the small-call variant instead of one launch per bin: the launches of
 * a chunk run one after the other, and one launch of a variant with many
 * lanes and few rows per lane (short steps) finishes sooner than several
 * (on the H200, one HaplotypeCaller region of 300 pairs: 219 us of kernel
 * time on the bins, 73 us with 32x8/128 for the float pass and rescue). */
typedef struct cph_variant_set {
  cph_variant v[CPH_MAX_VARIANTS];
  size_t n;
  int has_small;
} cph_variant_set;

/* Bins plus the small-call variant: the variants a context may build. */
static inline size_t cph_plan_count(const cph_variant_set *set) {
  return set->n + (set->has_small ? 1 : 0);
}

/* Choose the shuffle backend and the variant set for a device and a
 * precision from the variant table (tuning.h: environment, tuning file,
 * built-in entries). Double kernels use the entry's double list, else its
 * list with at most 8 rows per lane (twice the registers per row) and
 * without its long-read variant.
 * `scaled` selects the scaled arithmetic form where the entry fuses
 * (cl/pairhmm.cl): float kernels and float mode's double rescue; double
 * mode keeps the fused form for its per-column sums. */
clphmm_status cph_plan_variants(const cph_device *dev, int dbl, int scaled,
                                cph_variant_set *set);

/* Float mode's exact double set: cph_plan_variants' double set in GKL's
 * operation order (neither the scaled form nor fused multiply-adds), for
 * the rescue pairs whose scaled-form sums do not stand (engine/finish.c:
 * near double's subnormal range GKL's result depends on its order). */
clphmm_status cph_plan_exact(const cph_device *dev, cph_variant_set *set);

/* Index of the variant serving a read of `rows` rows: the smallest that
 * holds it, else the long-read variant, else the widest variant that tiles
 * it at the least estimated cost (padded rows and per-step overhead, see
 * plan.c). */
size_t cph_plan_bin(const cph_variant_set *set, uint32_t rows);

/* The long-read variant runs one pair per lane group, its tiles one after
 * the other; with fewer long reads' pairs than this many per compute unit
 * they run on the other variants' concurrent tiles instead (H200, float
 * pass of 601 pairs of 4096 bases: 2.70 TCUPS on 32x16/128 with four
 * concurrent tiles, 1.91 on the long-read variant). */
#define CPH_SEQ_MIN_PAIRS_PER_UNIT 16

/* Where the reads of the long-read variant go in a chunk with too few of
 * them to fill the device with it (fewer than CPH_SEQ_MIN_PAIRS_PER_UNIT
 * pairs per compute unit): the variant with the most lanes and the fewest
 * rows per tile, all of them (one launch, the most concurrent tiles). */
size_t cph_plan_bin_long(const cph_variant_set *set);

/* Whether a chunk of `pairs` pairs and `cells` cells runs on the small-call
 * variant: the set has one, and the pairs are fewer than fill a device of
 * `compute_units` compute units with CPH_FILL_PAIRS_PER_UNIT pairs per lane
 * group (the rule under which launches run concurrent tiles), and the
 * cells are few (a chunk of a few very long pairs keeps its bins). */
int cph_plan_small(const cph_variant_set *set, size_t pairs, uint64_t cells,
                   unsigned compute_units);

/* Whether a chunk's `pairs` pairs of bin `bin`, of reads of at most
 * `longest` rows, run on the small-call variant instead of their bin's,
 * beside `moved` pairs of other bins already there: the set has one, one
 * of whose tiles holds each of the reads (never the reads that the last
 * bin or the long-read variant tile); the
 * bin's pairs are fewer work-groups than the device has compute units;
 * and all of them together fill at most `groups_per_unit` work-groups of
 * the small-call variant per compute unit. A launch that leaves the device part
 * idle lasts as long as its slowest pair's steps, which are long with many rows
 * per lane; the small-call variant's steps are short, but its tiles of 256 rows
 * (on the H200) compute several times the short reads' cells, which pays only
 * while that launch too leaves the device part idle. (H200, per chunk of a
 * HaplotypeCaller-like call: reads of 33-64 bases on 4x16/128 ran 55 us at
 * 340-750 GCUPS, those of 65-96 on 4x24/128 76-150 us at about 850, beside
 * 3,300 in the chunk's main bin. 20,000 such pairs: 0.586 ms of kernels instead
 * of 0.660 with every such bin on the small-call variant; 6e10 cells, 4,700
 * pairs a chunk moved so: 22.33 instead of 21.86 ms, 1.7 ms at 716 GCUPS on the
 * small-call variant, hence the limit: see CPH_SMALL_BIN_GROUPS.) */
int cph_plan_to_small(const cph_variant_set *set, size_t bin, uint64_t pairs,
                      uint32_t longest, uint64_t moved, unsigned compute_units,
                      unsigned groups_per_unit);

/* Whether the set has a vector variant (their programs have no row
 * preparation kernel: the host prepares the rows). */
static inline int cph_variant_set_has_vec(const cph_variant_set *set) {
  for (size_t i = 0; i < cph_plan_count(set); i++)
    if (set->v[i].vec)
      return 1;
  return 0;
}

/* "[v]GxC/WG[:long][:rN],...[,GxC/WG:small]" in set order. */
void cph_plan_format(const cph_variant_set *set, char *buf, size_t n);

#endif
