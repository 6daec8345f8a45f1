/* A small thread pool for the host stages of a compute call (validation,
 * staging, finishing): a parallel for over task indices. */
#ifndef CLPHMM_POOL_H
#define CLPHMM_POOL_H

#include <stddef.h>

typedef struct cph_pool cph_pool;

/* A pool of `threads` - 1 workers (the caller is the last thread); 0 means
 * the number of online processors, at most CPH_POOL_MAX. NULL when the
 * workers cannot be started: cph_pool_for then runs on the caller alone. */
#define CPH_POOL_MAX 64
cph_pool *cph_pool_create(unsigned threads);
void cph_pool_destroy(cph_pool *pool);

/* Threads of the pool, the caller included (1 for NULL). */
unsigned cph_pool_threads(const cph_pool *pool);

/* Run fn(arg, i) for every i in [0, n) on the pool's threads and the
 * caller, and return when all have finished. Tasks are taken in index
 * order. One call at a time per pool. */
void cph_pool_for(cph_pool *pool, size_t n, void (*fn)(void *arg, size_t i),
                  void *arg);

/* Below this much work (bytes or items, as the caller counts it) waking
 * the pool costs more than it saves: callers run such work on their own
 * thread (pass a NULL pool). Small calls (one region) stay in
 * microseconds. */
#define CPH_POOL_MIN_WORK ((size_t)1 << 16)
static inline cph_pool *cph_pool_for_work(cph_pool *pool, size_t work) {
  return work >= CPH_POOL_MIN_WORK ? pool : NULL;
}

#endif
