/* The kernel cache's files (src/opencl/cache.c) without a device: writers
 * that race on one key, and entry paths that are not regular files. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opencl/cache.h"
#include "test_util.h"

static char dir[256];

/* A cache on `dir` as a context opens it (no device needed for an
 * explicit directory). */
static void open_cache(cph_cache *c) {
  cph_device dev;
  memset(&dev, 0, sizeof dev);
  cph_cache_open(c, dir, &dev);
}

enum { THREADS = 4, PUTS = 200 };

typedef struct writer {
  int failures;
  char why[CPH_CACHE_NOTE_MAX];
} writer;

/* PUTS stores of one key on a cache of this thread's own, as contexts on
 * several threads do. */
static void *write_key(void *arg) {
  writer *w = arg;
  cph_cache c;
  open_cache(&c);
  static const unsigned char payload[64] = {1, 2, 3};
  for (int i = 0; i < PUTS; i++)
    if (cph_cache_put(&c, "the same key", payload, sizeof payload, w->why,
                      sizeof w->why) != 0)
      w->failures++;
  return NULL;
}

/* Threads storing the same entry at once all succeed, and their
 * temporary files are gone: each writer's file has a name of its own (once
 * two threads numbered theirs alike, and the one that lost removed the
 * other's file: 262 of 400 writes failed, the cache read-only after). */
static void test_racing_writers(void) {
  pthread_t t[THREADS];
  writer w[THREADS];
  memset(w, 0, sizeof w);
  for (int i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, write_key, &w[i]);
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    CHECK(w[i].failures == 0, "writer %d: %d of %d stores failed: %s", i,
          w[i].failures, PUTS, w[i].why);
  }
  cph_cache c;
  open_cache(&c);
  unsigned char *data = NULL;
  size_t size = 0;
  char why[CPH_CACHE_NOTE_MAX];
  const cph_cache_result r =
      cph_cache_get(&c, "the same key", &data, &size, why, sizeof why);
  CHECK(r == CPH_CACHE_HIT && size == 64 && data && data[2] == 3,
        "the raced entry reads back: result %d, %zu bytes", (int)r, size);
  free(data);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "ls %s | grep -c tmp > /dev/null", dir);
  CHECK(system(cmd) != 0, "temporary files left in %s", dir);
}

/* An entry's path that holds a FIFO or a directory: a rejected entry,
 * at once (a FIFO had hung the context's creation), left as it is, and
 * the store that follows fails naming the entry. */
static void test_not_a_file(void) {
  cph_cache c;
  open_cache(&c);
  char path[CPH_CACHE_PATH_MAX + 32], why[CPH_CACHE_NOTE_MAX];
  const char *kinds[2] = {"fifo", "dir"};
  for (int k = 0; k < 2; k++) {
    char key[32];
    snprintf(key, sizeof key, "a %s key", kinds[k]);
    cph_cache_entry_path(&c, key, path, sizeof path);
    const int made = k == 0 ? mkfifo(path, 0600) : mkdir(path, 0700);
    CHECK(made == 0, "cannot make a %s at %s: %s", kinds[k], path,
          strerror(errno));
    unsigned char *data = NULL;
    size_t size = 0;
    const cph_cache_result r =
        cph_cache_get(&c, key, &data, &size, why, sizeof why);
    struct stat st;
    CHECK(r == CPH_CACHE_REJECTED && strstr(why, "not a regular file") &&
              stat(path, &st) == 0 &&
              (k == 0 ? S_ISFIFO(st.st_mode) : S_ISDIR(st.st_mode)),
          "a %s at the entry's path: result %d, '%s'", kinds[k], (int)r, why);
    free(data);
  }
  /* (The directory's entry cannot be stored: the note names it.) */
  static const unsigned char payload[8] = {7};
  CHECK(cph_cache_put(&c, "a dir key", payload, sizeof payload, why,
                      sizeof why) != 0 &&
            strstr(c.note, path) != NULL,
        "storing over a directory: note '%s' does not name %s", c.note, path);
}

/* A directory path longer than the cache keeps: caching off, said (it
 * was cut, and the entries went to the cut path's directory). */
static void test_long_path(void) {
  char longdir[CPH_CACHE_PATH_MAX + 100];
  int n = snprintf(longdir, sizeof longdir, "%s/", dir);
  memset(longdir + n, 'a', sizeof longdir - (size_t)n - 1);
  longdir[sizeof longdir - 1] = '\0';
  cph_cache c;
  cph_device dev;
  memset(&dev, 0, sizeof dev);
  cph_cache_open(&c, longdir, &dev);
  CHECK(!c.readable && !c.writable && strstr(c.note, "longer than"),
        "a %zu-byte cache directory: readable %d, note '%s'", strlen(longdir),
        c.readable, c.note);
}

int main(void) {
  snprintf(dir, sizeof dir, "%s/clphmm-cache-test.XXXXXX",
           getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir)) {
    CHECK(0, "cannot make a directory %s: %s", dir, strerror(errno));
    return test_finish();
  }
  test_racing_writers();
  test_not_a_file();
  test_long_path();
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
  return test_finish();
}
