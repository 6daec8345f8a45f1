/* Monotonic wall-clock time for the statistics, and a pause for spin
 * loops. */
#ifndef CLPHMM_CLOCK_H
#define CLPHMM_CLOCK_H

#include <time.h>

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static inline double cph_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A spin loop's pause: the core's hint that this thread is waiting. */
static inline void cph_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

#endif
