/* clphmm: results formatted on several threads and written in order. */
#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Values are formatted on several threads, in parts of FORMAT_PART, and
 * written in order: printf's "%.12g" costs about 0.25 us a value, 0.25 s
 * on one core of a 2-core VM for a HaplotypeCaller-sized input's million
 * results, a sixth of the whole process on the H100 machine before.
 * FORMAT_MAX bytes hold any one line. */
#define FORMAT_PART ((size_t)1 << 15)
#define FORMAT_MAX 32
#define FORMAT_THREADS 16
#define FORMAT_WINDOW 64 /* parts formatted before they are written */

typedef struct format_part {
  const double *values;
  size_t n;
  char *text;
  size_t len;
} format_part;

typedef struct format_work {
  format_part *parts;
  size_t n_parts, stride, first;
} format_work;

static void format_values(format_part *p) {
  size_t len = 0;
  for (size_t i = 0; i < p->n; i++) {
    if (isinf(p->values[i]) && p->values[i] < 0) {
      memcpy(p->text + len, "-inf\n", 5);
      len += 5;
    } else {
      len +=
          (size_t)snprintf(p->text + len, FORMAT_MAX, "%.12g\n", p->values[i]);
    }
  }
  p->len = len;
}

static void *format_thread(void *arg) {
  const format_work *w = arg;
  for (size_t k = w->first; k < w->n_parts; k += w->stride)
    format_values(&w->parts[k]);
  return NULL;
}

/* Format and write values[0, n), at most FORMAT_WINDOW parts. */
static int write_window(FILE *f, const double *values, size_t n,
                        format_part *parts, char *text) {
  const size_t n_parts = (n + FORMAT_PART - 1) / FORMAT_PART;
  for (size_t k = 0; k < n_parts; k++) {
    const size_t lo = k * FORMAT_PART;
    parts[k] =
        (format_part){values + lo, n - lo < FORMAT_PART ? n - lo : FORMAT_PART,
                      text + lo * FORMAT_MAX, 0};
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t threads = cpus < 1 ? 1 : (size_t)cpus;
  threads = threads > FORMAT_THREADS ? FORMAT_THREADS : threads;
  threads = threads > n_parts ? n_parts : threads;
  pthread_t tid[FORMAT_THREADS];
  format_work work[FORMAT_THREADS];
  size_t started = 0; /* threads 1..started run */
  for (size_t t = 1; t < threads; t++) {
    work[t] = (format_work){parts, n_parts, threads, t};
    if (pthread_create(&tid[t], NULL, format_thread, &work[t]) != 0)
      break;
    started = t;
  }
  /* This thread takes share 0, and the shares of threads not started. */
  for (size_t t = 0; t < threads; t++)
    if (t == 0 || t > started) {
      work[t] = (format_work){parts, n_parts, threads, t};
      format_thread(&work[t]);
    }
  for (size_t t = 1; t <= started; t++)
    pthread_join(tid[t], NULL);
  for (size_t k = 0; k < n_parts; k++)
    if (fwrite(parts[k].text, 1, parts[k].len, f) != parts[k].len)
      return -1;
  return 0;
}

/* Write the values, one per line, a window of parts at a time (the text
 * of a window is FORMAT_MAX bytes per value: a chunk of millions of tiny
 * pairs would otherwise need gigabytes). Returns 0, or -1 with errno set. */
int cli_write_values(FILE *f, const double *values, size_t n) {
  if (n == 0)
    return 0;
  const size_t window =
      n < FORMAT_WINDOW * FORMAT_PART ? n : FORMAT_WINDOW * FORMAT_PART;
  format_part *parts = calloc(FORMAT_WINDOW, sizeof *parts);
  char *text = malloc(window * FORMAT_MAX);
  int rc = 0;
  if (!parts || !text) {
    errno = ENOMEM;
    rc = -1;
  }
  for (size_t at = 0; at < n && rc == 0; at += window)
    rc = write_window(f, values + at, n - at < window ? n - at : window, parts,
                      text);
  free(parts);
  free(text);
  return rc;
}

int cli_flush_checked(FILE *f) {
  if (fflush(f) != 0 || ferror(f)) {
    if (errno == 0)
      errno = EIO;
    return -1;
  }
  return 0;
}

int cli_finish_stdout(void) {
  errno = 0;
  if (cli_flush_checked(stdout) == 0)
    return EXIT_OK;
  cli_error(PROG ": write error on standard output: %s\n", strerror(errno));
  return EXIT_RUNTIME;
}
