#include "opencl/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Entry layout (integers little-endian):
 *   0  magic "CLPHMMC\0"       8 bytes
 *   8  format version          u32
 *  12  key length              u32
 *  16  payload size            u64
 *  24  payload checksum        u64 (FNV-1a)
 *  32  key text, then payload */
#define MAGIC "CLPHMMC"
#define FORMAT 1u
#define HEADER 32u
/* Program binaries are a few MB at most; anything larger is not ours. */
#define MAX_ENTRY ((uint64_t)1 << 30)

uint64_t cph_hash64(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static void put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void set_note(cph_cache *c, const char *what, const char *path,
                     int err) {
  snprintf(c->note, sizeof c->note, "%s %s: %s", what, path, strerror(err));
}

/* mkdir -p; returns 0 or an errno value. */
static int make_dirs(const char *dir) {
  char path[CPH_CACHE_PATH_MAX];
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0')
      continue;
    char saved = *p;
    *p = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
      return errno;
    *p = saved;
    if (!saved)
      break;
  }
  struct stat sb;
  if (stat(dir, &sb) != 0)
    return errno;
  return S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
}

/* The configured directory, or "" for none; *off when explicitly empty.
 * Returns 0, or -1 when the path does not fit `dir` (it was cut, and the
 * entries went to the cut path's directory). */
static int choose_dir(const char *option, char *dir, size_t n, int *off) {
  const char *env = getenv("CLPHMM_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  *off = 0;
  dir[0] = '\0';
  int w = 0;
  if (option || env) {
    const char *d = option ? option : env;
    *off = *d == '\0';
    w = snprintf(dir, n, "%s", d);
  } else if (xdg && xdg[0] == '/') { /* relative values are ignored (XDG) */
    w = snprintf(dir, n, "%s/clphmm", xdg);
  } else if (home && *home) {
    w = snprintf(dir, n, "%s/.cache/clphmm", home);
  }
  return w >= 0 && (size_t)w < n ? 0 : -1;
}

/* PoCL with its own kernel cache off (POCL_KERNEL_CACHE=0) names a
 * per-program scratch directory inside the program binary and deletes it
 * when the program is released; two processes that load one binary then
 * share that directory, and the first to finish pulls it away from the
 * other (PoCL 3.1 aborts). So binaries are not shared in that mode. */
static int pocl_uncached(const cph_device *dev) {
  const char *env = getenv("POCL_KERNEL_CACHE");
  return env && strcmp(env, "0") == 0 &&
         strstr(dev->info.platform, "Portable Computing Language") != NULL;
}

void cph_cache_open(cph_cache *c, const char *option, const cph_device *dev) {
  memset(c, 0, sizeof *c);
  int off;
  if (choose_dir(option, c->dir, sizeof c->dir, &off) != 0) {
    snprintf(c->note, sizeof c->note,
             "kernel cache off: its directory's path is longer than %d bytes",
             CPH_CACHE_PATH_MAX - 1);
    c->dir[0] = '\0';
    return;
  }
  if (off) {
    snprintf(c->note, sizeof c->note, "kernel cache disabled");
    return;
  }
  if (pocl_uncached(dev)) {
    snprintf(c->note, sizeof c->note,
             "kernel cache off: PoCL with POCL_KERNEL_CACHE=0 cannot share "
             "program binaries between processes");
    c->dir[0] = '\0';
    return;
  }
  if (!c->dir[0]) {
    snprintf(c->note, sizeof c->note,
             "kernel cache off: no CLPHMM_CACHE_DIR, XDG_CACHE_HOME or HOME");
    return;
  }
  int err = make_dirs(c->dir);
  if (err) {
    set_note(c, "kernel cache off: cannot create", c->dir, err);
    c->dir[0] = '\0';
    return;
  }
  c->readable = 1;
  c->writable = access(c->dir, W_OK | X_OK) == 0;
  if (!c->writable)
    set_note(c, "kernel cache read-only: cannot write to", c->dir, errno);
}

void cph_cache_key(const cph_device *dev, const char *source_id,
                   const char *options, char *key, size_t n) {
  char pver[256] = "?";
  if (cph_cl.GetPlatformInfo(dev->platform, CL_PLATFORM_VERSION,
                             sizeof pver - 1, pver, NULL) != CL_SUCCESS)
    snprintf(pver, sizeof pver, "?");
  pver[sizeof pver - 1] = '\0';
  snprintf(key, n,
           "clphmm %s\nsource %s\noptions %s\ndevice %s\nvendor %s\n"
           "device-version %s\ndriver %s\nplatform %s\nplatform-version %s\n",
           CLPHMM_VERSION_STRING, source_id, options, dev->info.name,
           dev->info.vendor, dev->info.version, dev->info.driver,
           dev->info.platform, pver);
}

void cph_cache_entry_path(const cph_cache *c, const char *key, char *path,
                          size_t n) {
  snprintf(path, n, "%s/%016llx.clbin", c->dir,
           (unsigned long long)cph_hash64(CPH_HASH64_INIT, key, strlen(key)));
}

unsigned char *cph_cache_encode(const char *key, const unsigned char *data,
                                size_t size, size_t *n) {
  size_t klen = strlen(key);
  if (size > SIZE_MAX - HEADER - klen)
    return NULL;
  *n = HEADER + klen + size;
  unsigned char *buf = malloc(*n);
  if (!buf)
    return NULL;
  memcpy(buf, MAGIC, 8);
  put_le(buf + 8, FORMAT, 4);
  put_le(buf + 12, klen, 4);
  put_le(buf + 16, size, 8);
  put_le(buf + 24, cph_hash64(CPH_HASH64_INIT, data, size), 8);
  memcpy(buf + HEADER, key, klen);
  if (size)
    memcpy(buf + HEADER + klen, data, size);
  return buf;
}

/* Read a whole file (at most MAX_ENTRY bytes). 0, or an errno value. */
static int read_file(const char *path, unsigned char **data, size_t *size) {
  /* (Not blocking: a FIFO at an entry's path hung the context's creation;
   * anything but a regular file is a bad entry.) */
  const int fd = open(path, O_RDONLY | O_NONBLOCK);
  FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (!f) {
    const int err = errno;
    if (fd >= 0)
      close(fd);
    return err;
  }
  struct stat sb;
  int err = 0;
  if (fstat(fileno(f), &sb) != 0)
    err = errno;
  else if (!S_ISREG(sb.st_mode))
    err = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
  else if (sb.st_size < 0 || (uint64_t)sb.st_size > MAX_ENTRY)
    err = EFBIG;
  unsigned char *buf = err ? NULL : malloc((size_t)sb.st_size + 1);
  if (!err && !buf)
    err = ENOMEM;
  if (!err && fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size)
    err = EIO;
  fclose(f);
  if (err) {
    free(buf);
    return err;
  }
  *data = buf;
  *size = (size_t)sb.st_size;
  return 0;
}

/* What is wrong with an entry, or NULL if it is sound and holds `key`. */
static const char *check_entry(const unsigned char *e, size_t n,
                               const char *key) {
  size_t klen = strlen(key);
  if (n < HEADER || memcmp(e, MAGIC, 8) != 0)
    return n < HEADER ? "truncated header" : "bad magic";
  if (get_le(e + 8, 4) != FORMAT)
    return "other format version";
  uint64_t elen = get_le(e + 12, 4), size = get_le(e + 16, 8);
  if (elen > n - HEADER || size != n - HEADER - elen)
    return "truncated or oversized payload";
  if (elen != klen || memcmp(e + HEADER, key, klen) != 0)
    return "foreign entry (another key)";
  if (cph_hash64(CPH_HASH64_INIT, e + HEADER + elen, size) != get_le(e + 24, 8))
    return "payload checksum mismatch";
  return NULL;
}

cph_cache_result cph_cache_get(const cph_cache *c, const char *key,
                               unsigned char **data, size_t *size, char *why,
                               size_t why_n) {
  if (!c->readable)
    return CPH_CACHE_MISS;
  char path[CPH_CACHE_PATH_MAX + 32];
  cph_cache_entry_path(c, key, path, sizeof path);
  unsigned char *e = NULL;
  size_t n = 0;
  int err = read_file(path, &e, &n);
  if (err == ENOENT)
    return CPH_CACHE_MISS;
  if (err == EISDIR || err == EINVAL) { /* (not a file: not ours to remove) */
    snprintf(why, why_n, "%s: not a regular file (left as it is)", path);
    return CPH_CACHE_REJECTED;
  }
  const char *bad = err ? strerror(err) : check_entry(e, n, key);
  if (bad) {
    free(e);
    snprintf(why, why_n, "%s: %s; deleted", path, bad);
    unlink(path);
    return CPH_CACHE_REJECTED;
  }
  size_t off = HEADER + strlen(key);
  memmove(e, e + off, n - off);
  *data = e;
  *size = n - off;
  return CPH_CACHE_HIT;
}

/* Write all of buf to a new file named from the template `tmp` (its
 * XXXXXX replaced: mkstemp, so that no other thread or process, whatever
 * its pid, ever opens the same name); 0 or an errno value, *made set when
 * the file was created (then this writer's to remove). */
static int write_new(char *tmp, const unsigned char *buf, size_t n, int *made) {
  int fd = mkstemp(tmp);
  *made = fd >= 0;
  if (fd < 0)
    return errno;
  int err = fchmod(fd, 0644) != 0 ? errno : 0;
  for (size_t done = 0; done < n && !err;) {
    ssize_t w = write(fd, buf + done, n - done);
    if (w < 0 && errno != EINTR)
      err = errno;
    else if (w > 0)
      done += (size_t)w;
  }
  if (close(fd) != 0 && !err)
    err = errno;
  return err;
}

int cph_cache_put(cph_cache *c, const char *key, const unsigned char *data,
                  size_t size, char *why, size_t why_n) {
  if (!c->readable || !c->writable)
    return -1;
  size_t n;
  unsigned char *buf = cph_cache_encode(key, data, size, &n);
  if (!buf) {
    snprintf(why, why_n, "no memory for a cache entry");
    return -1;
  }
  char path[CPH_CACHE_PATH_MAX + 32], tmp[CPH_CACHE_PATH_MAX + 96];
  cph_cache_entry_path(c, key, path, sizeof path);
  /* (Once, two threads of a process numbered their files alike, and the
   * one that lost the race removed the other's file.) */
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
  int made = 0;
  int err = write_new(tmp, buf, n, &made);
  free(buf);
  const int renamed = !err && rename(tmp, path) == 0;
  if (!err && !renamed)
    err = errno;
  if (!err)
    return 0;
  if (made)
    unlink(tmp);
  c->writable = 0;
  /* (A failed rename names the entry: something else may hold its name.) */
  set_note(c, "kernel cache read-only: cannot write to", made ? path : c->dir,
           err);
  snprintf(why, why_n, "%s", c->note);
  return -1;
}

void cph_cache_remove(const cph_cache *c, const char *key) {
  if (!c->readable)
    return;
  char path[CPH_CACHE_PATH_MAX + 32];
  cph_cache_entry_path(c, key, path, sizeof path);
  unlink(path);
}
