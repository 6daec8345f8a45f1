/* Float mode's double first (compute.c plan_double_first): which reads'
 * pairs go to the double rescue before their float pass, from what the
 * engine saw of reads of their length in earlier calls. Going first pays
 * where almost every pair of a length is rescued (the long suite's 1-20
 * kb reads at 1% error), and costs a pass where few are (the peak suite's
 * 2 kb reads at 0.5%: 39%; long reads of high accuracy), so the engine
 * learns it by read length and starts with the float pass first. */
#ifndef CLPHMM_ENGINE_FIRST_H
#define CLPHMM_ENGINE_FIRST_H

#include <stddef.h>
#include <stdint.h>

/* Reads of at least this many rows are counted, in classes of a power of
 * 2 of rows each (the last takes every longer read). */
#define CPH_FIRST_MIN_ROWS 1024
#define CPH_FIRST_CLASSES 11
/* A class goes first once this many of its pairs were seen and at least
 * CPH_FIRST_RATE of them rescued: a pair costs about a double pass first
 * and a float pass first, so first pays from a rescued share of D / (D +
 * F), about 0.7 with the double kernels 2.5 times slower. */
#define CPH_FIRST_MIN_SEEN 32
#define CPH_FIRST_RATE 0.8
/* The counts are halved once a class has seen this many pairs, so that
 * newer calls weigh more. */
#define CPH_FIRST_MEMORY 4096

/* Pairs seen and rescued, per class: the engine's memory and one call's. */
typedef struct cph_first_counts {
  double seen[CPH_FIRST_CLASSES], rescued[CPH_FIRST_CLASSES];
} cph_first_counts;

/* The class of a read of `rows` rows, or -1 below CPH_FIRST_MIN_ROWS. */
int cph_first_class(size_t rows);

/* Count a pair of a read of `rows` rows, rescued or not (inline: the
 * float pass's finish calls it for every pair, almost all short). */
void cph_first_count_long(cph_first_counts *c, size_t rows, int rescued);
static inline void cph_first_count(cph_first_counts *c, size_t rows,
                                   int rescued) {
  if (rows >= CPH_FIRST_MIN_ROWS)
    cph_first_count_long(c, rows, rescued);
}

/* Add `call`'s counts to the engine's `memory`. */
void cph_first_learn(cph_first_counts *memory, const cph_first_counts *call);
void cph_first_add(cph_first_counts *to, const cph_first_counts *from);

/* The rows from which reads go first now (0: none): the shortest class
 * that qualifies with no longer class seen to fall short of the rate
 * (longer reads are rescued at least as often as shorter ones of the same
 * data; a class not seen enough counts neither way). */
size_t cph_first_rows(const cph_first_counts *memory);

#endif
