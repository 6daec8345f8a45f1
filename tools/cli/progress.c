/* clphmm: progress lines on stderr, the summary and error messages. */
#define _GNU_SOURCE

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

progress cli_progress;

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void progress_break(progress *p) {
  if (p->pending)
    fputc('\n', stderr);
  p->pending = 0;
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  progress_break(&cli_progress);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

void progress_start(progress *p, const cli_args *args) {
  memset(p, 0, sizeof *p);
  p->tty = isatty(STDERR_FILENO);
  p->lines = args->progress || (args->verbose && p->tty);
  p->summary = args->progress || args->verbose;
  p->start = cli_now();
}

static double gcups(uint64_t cells, double seconds) {
  return seconds > 0 ? (double)cells / seconds * 1e-9 : 0;
}

/* Cells (read length x haplotype length) of a chunk. */
static uint64_t chunk_cells(const clphmm_dataset *ds) {
  const clphmm_batch *b = clphmm_dataset_batches(ds);
  uint64_t cells = 0;
  for (size_t i = 0; i < clphmm_dataset_n_batches(ds); i++) {
    uint64_t r = 0, h = 0;
    for (size_t k = 0; k < b[i].n_reads; k++)
      r += b[i].reads[k].length;
    for (size_t k = 0; k < b[i].n_haplotypes; k++)
      h += b[i].haplotypes[k].length;
    cells += r * h;
  }
  return cells;
}

void progress_chunk(progress *p, const clphmm_dataset *ds,
                    const clphmm_context *ctx) {
  p->pairs += clphmm_dataset_n_pairs(ds);
  p->cells += chunk_cells(ds);
  p->chunks++;
  clphmm_stats st;
  if (ctx != NULL && clphmm_context_stats(ctx, &st) == CLPHMM_SUCCESS) {
    p->kernel_seconds += st.kernel_seconds;
    p->n_devices = st.n_devices;
    for (size_t i = 0; i < st.n_devices && i < CLPHMM_MAX_DEVICES; i++) {
      clphmm_device_stats *d = &p->devices[i], *c = &st.devices[i];
      snprintf(d->name, sizeof d->name, "%s", c->name);
      d->index = c->index;
      d->pairs += c->pairs;
      d->cells += c->cells;
      d->busy_seconds += c->busy_seconds;
      d->kernel_seconds += c->kernel_seconds;
      d->dropped = c->dropped;
    }
  }
  double t = cli_now();
  if (!p->lines || (p->chunks > 1 && t - p->last < 1.0 / PROGRESS_HZ))
    return;
  p->last = t;
  double elapsed = t - p->start;
  fprintf(stderr, "%s" PROG ": %llu pairs, %.3g cells, %.2f GCUPS, %.1f s%s",
          p->tty ? "\r\033[K" : "", (unsigned long long)p->pairs,
          (double)p->cells, gcups(p->cells, elapsed), elapsed,
          p->tty ? "" : "\n");
  fflush(stderr);
  p->pending = p->tty;
}

void progress_finish(progress *p, int reference) {
  if (p->pending)
    fputs("\r\033[K", stderr);
  p->pending = 0;
  if (!p->summary)
    return;
  double elapsed = cli_now() - p->start;
  fprintf(stderr,
          PROG ": done: %llu pairs, %.3g cells, %llu chunks in %.2f s, "
               "%.2f GCUPS",
          (unsigned long long)p->pairs, (double)p->cells,
          (unsigned long long)p->chunks, elapsed, gcups(p->cells, elapsed));
  if (!reference)
    fprintf(stderr, " (kernel %.3f s, %.2f GCUPS)", p->kernel_seconds,
            gcups(p->cells, p->kernel_seconds));
  fputc('\n', stderr);
  for (size_t i = 0; p->n_devices > 1 && i < p->n_devices; i++) {
    const clphmm_device_stats *d = &p->devices[i];
    fprintf(stderr,
            PROG ": device %zu (%zu: %s): %llu pairs, %.3g cells, busy "
                 "%.3f s, kernel %.3f s%s\n",
            i, d->index, d->name, (unsigned long long)d->pairs,
            (double)d->cells, d->busy_seconds, d->kernel_seconds,
            d->dropped ? ", dropped after a failure" : "");
  }
}
