#include "engine/spans.h"

#include <stdlib.h>

void cph_spans_add(cph_spans *s, uint64_t start, uint64_t end) {
  if (end <= start)
    return;
  if (s->n == s->cap) {
    const size_t cap = s->cap ? 2 * s->cap : 64;
    cph_span *v = realloc(s->v, cap * sizeof *v);
    if (!v) { /* (the time still counts, if twice where it overlaps) */
      s->lost_ns += end - start;
      return;
    }
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = (cph_span){start, end};
}

static int by_start(const void *a, const void *b) {
  const uint64_t x = ((const cph_span *)a)->start,
                 y = ((const cph_span *)b)->start;
  return (x > y) - (x < y);
}

double cph_spans_union_seconds(cph_spans *s) {
  if (s->n)
    qsort(s->v, s->n, sizeof *s->v, by_start);
  uint64_t total = s->lost_ns, lo = 0, hi = 0;
  for (size_t i = 0; i < s->n; i++) {
    const cph_span *p = &s->v[i];
    if (i == 0 || p->start > hi) { /* a new run of overlapping intervals */
      total += hi - lo;
      lo = p->start;
      hi = p->end;
    } else if (p->end > hi) {
      hi = p->end;
    }
  }
  total += hi - lo;
  return (double)total * 1e-9;
}

double cph_spans_sum_seconds(const cph_spans *s) {
  uint64_t total = s->lost_ns;
  for (size_t i = 0; i < s->n; i++)
    total += s->v[i].end - s->v[i].start;
  return (double)total * 1e-9;
}

void cph_spans_clear(cph_spans *s) {
  s->n = 0;
  s->lost_ns = 0;
}

void cph_spans_release(cph_spans *s) {
  free(s->v);
  s->v = NULL;
  s->n = s->cap = 0;
  s->lost_ns = 0;
}
