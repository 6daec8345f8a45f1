#ifndef CPH_ENGINE_SPANS_H
#define CPH_ENGINE_SPANS_H

#include <stddef.h>
#include <stdint.h>

/* The device time of a call's kernels: their OpenCL profiling intervals
 * (launch.c, as the events are collected) and the length of their union,
 * the time the device was running any of them. A call's kernels can run
 * at once (a small call's float and speculative passes on two queues, a
 * chunk's row preparation on the copy queue beside the kernels of the
 * chunk before), and the sum of their intervals counts that time twice. */
typedef struct cph_span {
  uint64_t start, end; /* device clock, nanoseconds */
} cph_span;

typedef struct cph_spans {
  cph_span *v;
  size_t n, cap;
  uint64_t lost_ns; /* intervals that found no memory, summed */
} cph_spans;

/* Add [start, end) (nothing when end <= start). */
void cph_spans_add(cph_spans *s, uint64_t start, uint64_t end);
/* Seconds covered by at least one interval (sorts them), plus the lost
 * ones' sum. */
double cph_spans_union_seconds(cph_spans *s);
/* Seconds of all intervals, each counted (overlaps counted twice). */
double cph_spans_sum_seconds(const cph_spans *s);
void cph_spans_clear(cph_spans *s);
void cph_spans_release(cph_spans *s);

#endif
