/* The process's first OpenCL calls made by several threads at once: each
 * child process starts THREADS threads that create a context on the
 * default device together, before anything else of the library ran (PoCL
 * starts its devices lazily: such threads crashed in its clGetDeviceInfo
 * about half the time, or found no device, before the library made the
 * first listing one thread's). Every thread of every child must get the
 * status one thread alone gets (checked last, in the parent), and a child
 * must not die of a signal. Exit 77 when OpenCL has no device (unless
 * CLPHMM_TEST_REQUIRE_DEVICE). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

#define THREADS 4
#define CHILDREN 6

static pthread_barrier_t start, done;

/* The threads never end: the child exits while they wait. (Under
 * AddressSanitizer a thread that compiled kernels with PoCL's LLVM, which
 * sets up its own signal stack, fails ASan's check when it ends.) */
static void *create(void *arg) {
  clphmm_status *st = arg;
  clphmm_context *ctx = NULL;
  pthread_barrier_wait(&start);
  *st = clphmm_context_create(NULL, &ctx);
  clphmm_context_destroy(ctx);
  pthread_barrier_wait(&done);
  for (;;)
    pause();
  return NULL;
}

/* A child: THREADS first contexts at once. Exit status: the bit mask of
 * the threads whose status differs from `want`. */
static int child(clphmm_status want) {
  pthread_t t[THREADS];
  clphmm_status st[THREADS];
  pthread_barrier_init(&start, NULL, THREADS);
  pthread_barrier_init(&done, NULL, THREADS + 1);
  for (int i = 0; i < THREADS; i++)
    if (pthread_create(&t[i], NULL, create, &st[i]) != 0)
      return 100;
  pthread_barrier_wait(&done);
  int bad = 0;
  for (int i = 0; i < THREADS; i++)
    bad |= (st[i] != want) << i;
  return bad;
}

int main(void) {
  /* What one thread alone gets: asked of a first child, so that this
   * process makes no OpenCL call before it forks. */
  pid_t pid = fork();
  if (pid == 0) {
    clphmm_context *ctx = NULL;
    clphmm_status st = clphmm_context_create(NULL, &ctx);
    clphmm_context_destroy(ctx);
    _exit((int)st & 0xff);
  }
  int ws = 0;
  if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws)) {
    CHECK(0, "the single-thread child failed (status 0x%x)", ws);
    return test_finish();
  }
  const clphmm_status want = (clphmm_status)(signed char)WEXITSTATUS(ws);
  if (want != CLPHMM_SUCCESS && !getenv("CLPHMM_TEST_REQUIRE_DEVICE")) {
    printf("skip: no OpenCL device (status %d)\n", (int)want);
    return 77;
  }
  for (int c = 0; c < CHILDREN; c++) {
    pid = fork();
    if (pid == 0)
      _exit(child(want));
    ws = 0;
    const int waited = pid > 0 && waitpid(pid, &ws, 0) == pid;
    CHECK(waited && WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
          "child %d: %s (status 0x%x): %d threads at once as the process's "
          "first OpenCL use",
          c,
          !waited                  ? "not waited for"
          : WIFSIGNALED(ws)        ? "killed by a signal"
          : WEXITSTATUS(ws) == 100 ? "no thread"
                                   : "a thread's status differs",
          ws, THREADS);
  }
  return test_finish();
}
