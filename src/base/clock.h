/* Monotonic wall-clock time for the statistics. */
#ifndef CLPHMM_CLOCK_H
#define CLPHMM_CLOCK_H

#include <time.h>

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static inline double cph_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
