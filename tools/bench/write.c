/* --write: workloads as input files in the batch format, and --results:
 * the computed log10 likelihoods, one per line.
 *
 * The batch file is the strict form that clphmm's reader and gpuPairHMM's
 * parser (the MauricioCarneiro/PairHMM format) both read: a header line
 * "NR NH" with one space, NR read lines of five tokens separated by single
 * spaces (bases, then base, insertion, deletion and gap-continuation
 * qualities as phred+33 characters), NH haplotype lines, '\n' line ends, no
 * comments, no blank lines. gpuPairHMM cuts lines at the first space and
 * takes whole lines as haplotypes, so nothing else may appear. Qualities
 * are written exactly as the workload holds them: a reader that raises
 * base qualities below 6 (clphmm without --raw-base-quals) computes
 * something else for such bases than gpuPairHMM, which raises nothing. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Highest quality with a printable phred+33 character ('~'). */
#define MAX_WRITABLE_QUAL 93

/* One read line into buf (5 * len + 5 bytes). Returns 0, or -1 when a
 * quality has no printable character. */
static int format_read(const clphmm_read *rd, char *buf) {
  const uint8_t *q[4] = {rd->base_quals, rd->ins_quals, rd->del_quals,
                         rd->gcp_quals};
  size_t n = rd->length, at = 0;
  memcpy(buf, rd->bases, n);
  at = n;
  for (int k = 0; k < 4; k++) {
    buf[at++] = ' ';
    for (size_t i = 0; i < n; i++) {
      if (q[k][i] > MAX_WRITABLE_QUAL)
        return -1;
      buf[at++] = (char)(q[k][i] + 33);
    }
  }
  buf[at] = '\n';
  return 0;
}

/* Grow the line buffer to hold `need` bytes. */
static int reserve(char **buf, size_t *cap, size_t need) {
  if (need <= *cap)
    return 0;
  char *n = realloc(*buf, need);
  if (!n)
    return -1;
  *buf = n;
  *cap = need;
  return 0;
}

static int write_batch(FILE *f, const clphmm_batch *bt, size_t index,
                       char **buf, size_t *cap, char *err, size_t err_n) {
  fprintf(f, "%zu %zu\n", bt->n_reads, bt->n_haplotypes);
  for (size_t r = 0; r < bt->n_reads; r++) {
    const clphmm_read *rd = &bt->reads[r];
    if (rd->length == 0) {
      snprintf(err, err_n,
               "batch %zu, read %zu: an empty read cannot be "
               "written",
               index, r);
      return -1;
    }
    if (reserve(buf, cap, 5 * rd->length + 5)) {
      snprintf(err, err_n, "out of memory");
      return -1;
    }
    if (format_read(rd, *buf)) {
      snprintf(err, err_n,
               "batch %zu, read %zu: a quality above %d cannot "
               "be written",
               index, r, MAX_WRITABLE_QUAL);
      return -1;
    }
    fwrite(*buf, 1, 5 * rd->length + 5, f);
  }
  for (size_t h = 0; h < bt->n_haplotypes; h++) {
    const clphmm_haplotype *hp = &bt->haplotypes[h];
    if (hp->length == 0) {
      snprintf(err, err_n,
               "batch %zu, haplotype %zu: an empty haplotype "
               "cannot be written",
               index, h);
      return -1;
    }
    fwrite(hp->bases, 1, hp->length, f);
    fputc('\n', f);
  }
  return 0;
}

int bench_write_workload(FILE *f, const bench_workload *w, char *err,
                         size_t err_n) {
  char *buf = NULL;
  size_t cap = 0;
  int rc = 0;
  for (size_t b = 0; b < w->n_batches && !rc; b++)
    rc = write_batch(f, &w->batches[b], b, &buf, &cap, err, err_n);
  free(buf);
  if (!rc && ferror(f)) {
    snprintf(err, err_n, "write error: %s", strerror(errno ? errno : EIO));
    rc = -1;
  }
  return rc;
}

int bench_write_results(FILE *f, const double *values, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int w = isinf(values[i]) && values[i] < 0
                ? fputs("-inf\n", f)
                : fprintf(f, "%.12g\n", values[i]);
    if (w < 0)
      return -1;
  }
  return 0;
}
