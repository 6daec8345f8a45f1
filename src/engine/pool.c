#include "engine/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/clock.h"

/* Threads wait this long for the next call (workers) or for the last
 * worker (the caller) before they sleep on a condition variable. A compute
 * call makes dozens of parallel fors a few hundred microseconds apart (a
 * radix sort alone makes eight); waking sleeping threads for each cost
 * more than the work on a 16-core VM: 2.3 ms per 123k-pair sort with 16
 * threads, against 0.9 ms with 4 (H100 host, hc workload). */
#define SPIN_SECONDS 200e-6

struct cph_pool {
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  pthread_t *threads;
  unsigned n_workers;
  /* The current parallel for: its n tasks; `busy` workers are inside it;
   * `generation` counts calls so that a worker joins each call once. */
  void (*fn)(void *, size_t);
  void *arg;
  size_t n;
  /* The next task to take: the call's generation (low 32 bits) above its
   * index. Threads take tasks with a compare-and-swap, not under the lock:
   * with 16 threads on many short tasks the lock's hand-overs cost more
   * than the tasks (the peak suite's 64-base call stages 38,000 batches of
   * 64 pairs, a task each: on the H100's host its wall fell from 35.1 to
   * 22.8 ms, the mix's stayed at 26.8). The generation keeps a thread that
   * joined an earlier call from taking the next call's tasks. */
  atomic_uint_fast64_t ticket;
  /* Changed under the lock; read without it while spinning. */
  atomic_uint busy;
  atomic_ulong generation;
  atomic_int stop;
};

/* Spin (without the lock) until done(p, v) or SPIN_SECONDS pass. */
static int spin_until(cph_pool *p, int (*done)(cph_pool *, unsigned long),
                      unsigned long v) {
  const double end = cph_now() + SPIN_SECONDS;
  for (unsigned i = 0;; i++) {
    if (done(p, v))
      return 1;
    if ((i & 63) == 63 && cph_now() > end)
      return 0;
    cph_cpu_relax();
  }
}

static int new_call(cph_pool *p, unsigned long seen) {
  return atomic_load(&p->stop) || atomic_load(&p->generation) != seen;
}

static int all_left(cph_pool *p, unsigned long unused) {
  (void)unused;
  return atomic_load(&p->busy) == 0;
}

/* Take and run tasks of the call of generation `gen` (fn, arg, n: read
 * under the lock when it was joined) until none is left. */
static void drain(cph_pool *p, unsigned long gen, void (*fn)(void *, size_t),
                  void *arg, size_t n) {
  const uint_fast64_t g = (uint_fast64_t)(uint32_t)gen << 32;
  uint_fast64_t t = atomic_load(&p->ticket);
  while ((t & ~(uint_fast64_t)UINT32_MAX) == g && (t & UINT32_MAX) < n) {
    if (atomic_compare_exchange_weak(&p->ticket, &t, t + 1)) {
      fn(arg, (size_t)(t & UINT32_MAX));
      t = atomic_load(&p->ticket);
    }
  }
}

static void *worker(void *arg) {
  cph_pool *p = arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    if (!new_call(p, seen)) {
      pthread_mutex_unlock(&p->lock);
      spin_until(p, new_call, seen);
      pthread_mutex_lock(&p->lock);
    }
    while (!new_call(p, seen))
      pthread_cond_wait(&p->work, &p->lock);
    if (p->stop)
      break;
    seen = p->generation;
    void (*fn)(void *, size_t) = p->fn;
    void *fn_arg = p->arg;
    const size_t n = p->n;
    p->busy++;
    pthread_mutex_unlock(&p->lock);
    drain(p, seen, fn, fn_arg, n);
    pthread_mutex_lock(&p->lock);
    if (--p->busy == 0)
      pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

static unsigned online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > CPH_POOL_MAX ? CPH_POOL_MAX : (unsigned)n;
}

cph_pool *cph_pool_create(unsigned threads) {
  if (threads == 0)
    threads = online_cpus();
  if (threads > CPH_POOL_MAX)
    threads = CPH_POOL_MAX;
  cph_pool *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->threads = calloc(threads, sizeof *p->threads);
  if (!p->threads || pthread_mutex_init(&p->lock, NULL)) {
    free(p->threads);
    free(p);
    return NULL;
  }
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->done, NULL);
  for (unsigned i = 0; i + 1 < threads; i++) {
    if (pthread_create(&p->threads[i], NULL, worker, p))
      break;
    p->n_workers++;
  }
  return p;
}

void cph_pool_destroy(cph_pool *p) {
  if (!p)
    return;
  pthread_mutex_lock(&p->lock);
  p->stop = 1;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  for (unsigned i = 0; i < p->n_workers; i++)
    pthread_join(p->threads[i], NULL);
  pthread_cond_destroy(&p->work);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->lock);
  free(p->threads);
  free(p);
}

unsigned cph_pool_threads(const cph_pool *p) {
  return p ? p->n_workers + 1 : 1;
}

void cph_pool_for(cph_pool *p, size_t n, void (*fn)(void *arg, size_t i),
                  void *arg) {
  if (!p || p->n_workers == 0 || n < 2 || n > UINT32_MAX) {
    for (size_t i = 0; i < n; i++)
      fn(arg, i);
    return;
  }
  pthread_mutex_lock(&p->lock);
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  const unsigned long gen = ++p->generation;
  atomic_store(&p->ticket, (uint_fast64_t)(uint32_t)gen << 32);
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->lock);
  drain(p, gen, fn, arg, n);
  /* Every task is taken; the workers that took some finish them. */
  if (atomic_load(&p->busy) > 0)
    spin_until(p, all_left, 0);
  pthread_mutex_lock(&p->lock);
  while (p->busy > 0)
    pthread_cond_wait(&p->done, &p->lock);
  pthread_mutex_unlock(&p->lock);
}
