/* A background thread for one task at a time, with its own pool: the
 * compute pipeline stages chunk k+1 on it while the engine's thread
 * schedules, submits and finishes the chunks around it (compute.c). */
#ifndef CLPHMM_WORKER_H
#define CLPHMM_WORKER_H

#include "clphmm.h"
#include "engine/pool.h"

typedef struct cph_worker cph_worker;

/* A worker whose tasks run on a pool of `threads` threads (its own
 * thread included). NULL when the thread cannot be started: callers then
 * run the tasks themselves. */
cph_worker *cph_worker_create(unsigned threads);
/* Waits for a posted task first. */
void cph_worker_destroy(cph_worker *w);

/* The pool a task runs its parallel loops on. */
cph_pool *cph_worker_pool(cph_worker *w);

/* Run fn(arg) on the worker's thread. One task at a time: the task
 * posted before must have been waited for. */
void cph_worker_post(cph_worker *w, clphmm_status (*fn)(void *arg), void *arg);

/* Wait for the posted task (none: CLPHMM_SUCCESS at once); its status,
 * and on failure its error message as this thread's last error. */
clphmm_status cph_worker_wait(cph_worker *w);

/* cph_worker_wait without raising the task's error (failure paths,
 * whose own error stands). */
void cph_worker_drain(cph_worker *w);

/* Whether a posted task has not been waited for. */
int cph_worker_busy(const cph_worker *w);

#endif
