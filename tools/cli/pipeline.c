/* clphmm: the reader thread, parsing one chunk ahead of the computation. */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Hand a chunk (or the end, chunk NULL, or the error of `st`) to the main
 * thread; waits while the slot is full. Returns 0 to go on, -1 to stop. */
static int reader_put(pipeline *p, clphmm_status st, clphmm_dataset *chunk) {
  pthread_mutex_lock(&p->lock);
  while (p->slot != NULL && chunk != NULL && !p->cancel)
    pthread_cond_wait(&p->changed, &p->lock);
  if (p->cancel) {
    clphmm_dataset_destroy(chunk);
  } else if (st != CLPHMM_SUCCESS) {
    /* The message is per thread: copy it on the thread that failed. */
    snprintf(p->error, sizeof p->error, "%s", clphmm_last_error(NULL));
    p->failed = 1;
  } else if (chunk == NULL) {
    p->end = 1;
  } else {
    p->slot = chunk;
  }
  int stop = p->cancel || p->failed || p->end;
  pthread_cond_broadcast(&p->changed);
  pthread_mutex_unlock(&p->lock);
  return stop ? -1 : 0;
}

static void *reader_main(void *arg) {
  pipeline *p = arg;
  for (;;) {
    clphmm_dataset *chunk = NULL;
    clphmm_status st =
        clphmm_reader_next(p->rd, p->args->chunk_pairs, CHUNK_BYTES, &chunk);
    if (reader_put(p, st, chunk) != 0)
      return NULL;
  }
}

int pipeline_start(pipeline *p, const cli_args *args) {
  memset(p, 0, sizeof *p);
  p->args = args;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->changed, NULL);
  if (clphmm_reader_open(args->input, args->read_flags, &p->rd) !=
      CLPHMM_SUCCESS) {
    cli_error(PROG ": %s\n", clphmm_last_error(NULL));
    return EXIT_RUNTIME;
  }
  int err = pthread_create(&p->thread, NULL, reader_main, p);
  if (err != 0) {
    cli_error(PROG ": cannot start the reader thread: %s\n", strerror(err));
    return EXIT_RUNTIME;
  }
  p->started = 1;
  return EXIT_OK;
}

int pipeline_next(pipeline *p, clphmm_dataset **chunk) {
  pthread_mutex_lock(&p->lock);
  while (p->slot == NULL && !p->end && !p->failed)
    pthread_cond_wait(&p->changed, &p->lock);
  *chunk = p->slot;
  p->slot = NULL;
  pthread_cond_broadcast(&p->changed);
  int failed = *chunk == NULL && p->failed;
  pthread_mutex_unlock(&p->lock);
  if (failed) {
    cli_error(PROG ": %s\n", p->error);
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

/* How long a failed run waits for the reader to stop. */
#define STOP_WAIT_NS 200000000L

/* Whether the reader thread ended: joined at once, or on a failed run
 * within STOP_WAIT_NS (it stops once the chunk it parses is complete,
 * which on a pipe can wait for input for as long as the writer takes). */
static int reader_joined(pipeline *p, int failed) {
#ifdef __GLIBC__
  if (failed) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += STOP_WAIT_NS;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    return pthread_timedjoin_np(p->thread, NULL, &until) == 0;
  }
#else
  (void)failed;
#endif
  return pthread_join(p->thread, NULL) == 0;
}

int pipeline_stop(pipeline *p, int failed) {
  if (p->args == NULL) /* (never started) */
    return 0;
  if (p->started) {
    pthread_mutex_lock(&p->lock);
    p->cancel = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    if (!reader_joined(p, failed))
      return 1; /* (left running: the process ends with this run) */
  }
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->changed);
  clphmm_dataset_destroy(p->slot);
  clphmm_reader_close(p->rd);
  p->args = NULL;
  return 0;
}
