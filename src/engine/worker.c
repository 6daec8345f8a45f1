#include "engine/worker.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

struct cph_worker {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  pthread_t thread;
  cph_pool *pool;
  /* The task: posted (fn set) -> running -> done (fn cleared, status
   * and message kept) -> waited for (posted cleared). */
  clphmm_status (*fn)(void *);
  void *arg;
  int posted, done, stop;
  clphmm_status status;
  char message[CPH_ERROR_MAX];
};

static void *run(void *arg) {
  cph_worker *w = arg;
  pthread_mutex_lock(&w->lock);
  for (;;) {
    while (!w->stop && !w->fn)
      pthread_cond_wait(&w->cond, &w->lock);
    if (w->stop)
      break;
    clphmm_status (*fn)(void *) = w->fn;
    void *task = w->arg;
    pthread_mutex_unlock(&w->lock);
    const clphmm_status st = fn(task);
    pthread_mutex_lock(&w->lock);
    /* (The message is this thread's: the waiter raises it as its own.) */
    if (st)
      snprintf(w->message, sizeof w->message, "%s", cph_error_message());
    w->status = st;
    w->fn = NULL;
    w->done = 1;
    pthread_cond_broadcast(&w->cond);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

cph_worker *cph_worker_create(unsigned threads) {
  cph_worker *w = calloc(1, sizeof *w);
  if (!w)
    return NULL;
  if (pthread_mutex_init(&w->lock, NULL)) {
    free(w);
    return NULL;
  }
  pthread_cond_init(&w->cond, NULL);
  /* (The worker's thread is the pool's caller thread.) */
  w->pool = threads > 1 ? cph_pool_create(threads) : NULL;
  if (pthread_create(&w->thread, NULL, run, w)) {
    cph_pool_destroy(w->pool);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w);
    return NULL;
  }
  return w;
}

void cph_worker_destroy(cph_worker *w) {
  if (!w)
    return;
  cph_worker_drain(w);
  pthread_mutex_lock(&w->lock);
  w->stop = 1;
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  cph_pool_destroy(w->pool);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

cph_pool *cph_worker_pool(cph_worker *w) {
  return w->pool;
}

void cph_worker_post(cph_worker *w, clphmm_status (*fn)(void *arg), void *arg) {
  pthread_mutex_lock(&w->lock);
  w->fn = fn;
  w->arg = arg;
  w->posted = 1;
  w->done = 0;
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

static clphmm_status settle(cph_worker *w) {
  pthread_mutex_lock(&w->lock);
  if (!w->posted) {
    pthread_mutex_unlock(&w->lock);
    return CLPHMM_SUCCESS;
  }
  while (!w->done)
    pthread_cond_wait(&w->cond, &w->lock);
  w->posted = 0;
  const clphmm_status st = w->status;
  pthread_mutex_unlock(&w->lock);
  return st;
}

clphmm_status cph_worker_wait(cph_worker *w) {
  const clphmm_status st = settle(w);
  return st ? cph_error(st, "%s", w->message) : st;
}

void cph_worker_drain(cph_worker *w) {
  (void)settle(w);
}

int cph_worker_busy(const cph_worker *w) {
  return w->posted;
}
