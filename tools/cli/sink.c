/* clphmm: where results wait until everything succeeded (--output,
 * standard output). */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Permissions of a newly created file under the current umask. */
static mode_t default_file_mode(void) {
  mode_t mask = umask(0);
  umask(mask);
  return (mode_t)(0666 & ~mask);
}

/* The temporary file's name while it exists, for the signal handler. */
static char sink_tmp_name[4096];
static volatile sig_atomic_t sink_tmp_live;

/* Interrupted (SIGINT, SIGTERM, SIGHUP): remove the temporary file, then
 * die of the signal as without the handler. */
static void sink_on_signal(int sig) {
  if (sink_tmp_live)
    unlink(sink_tmp_name);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* (Signals the process ignores, as under nohup or in a script's
 * background job, stay ignored.) */
static void sink_catch_signals(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = sink_on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(sigs[i], &sa, NULL);
}

/* The directory part of path ("." for none), in buf. */
static const char *dir_of(const char *path, char *buf, size_t n) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    return ".";
  size_t len = slash == path ? 1 : (size_t)(slash - path);
  if (len >= n)
    len = n - 1;
  memcpy(buf, path, len);
  buf[len] = '\0';
  return buf;
}

/* The temporary file next to `final` with permissions `mode`. */
static int sink_open_tmp(sink *s, const char *path, const char *final,
                         mode_t mode) {
  static const char suffix[] = ".tmp-XXXXXX";
  size_t len = strlen(final);
  s->tmp = malloc(len + sizeof suffix);
  s->final = strdup(final);
  if (s->tmp == NULL || s->final == NULL ||
      len + sizeof suffix > sizeof sink_tmp_name) {
    cli_error(PROG ": %s: %s\n", path,
              s->final == NULL || s->tmp == NULL ? "out of memory"
                                                 : "file name too long");
    return EXIT_RUNTIME;
  }
  memcpy(s->tmp, final, len);
  memcpy(s->tmp + len, suffix, sizeof suffix);
  int fd = mkstemp(s->tmp);
  if (fd < 0) {
    char dir[4096];
    cli_error(PROG ": %s: cannot create a temporary file in %s (it is "
                   "written there, then renamed over %s): %s\n",
              path, dir_of(final, dir, sizeof dir), final, strerror(errno));
    free(s->tmp);
    s->tmp = NULL;
    return EXIT_RUNTIME;
  }
  memcpy(sink_tmp_name, s->tmp, len + sizeof suffix);
  atomic_signal_fence(memory_order_seq_cst); /* (the name before the flag) */
  sink_tmp_live = 1;
  const char *what = NULL;
  if (fchmod(fd, mode) != 0)
    what = "cannot set permissions of";
  else if ((s->f = fdopen(fd, "w")) == NULL)
    what = "cannot open";
  if (what != NULL) {
    cli_error(PROG ": %s: %s %s: %s\n", path, what, s->tmp, strerror(errno));
    close(fd);
    sink_tmp_live = 0;
    unlink(s->tmp);
    free(s->tmp);
    s->tmp = NULL;
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

/* Whether st is the file behind descriptor fd. */
static int same_file(const struct stat *st, int fd) {
  struct stat o;
  return fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

/* The target of symbolic link `path` (read into `target`, n bytes), next
 * to the link when relative; NULL when out of memory. */
static char *link_target(const char *path, const char *target, size_t n) {
  const char *slash = strrchr(path, '/');
  if (target[0] == '/' || slash == NULL)
    return strdup(target);
  const size_t dir = (size_t)(slash - path) + 1;
  char *joined = malloc(dir + n + 1);
  if (joined != NULL) {
    memcpy(joined, path, dir);
    memcpy(joined + dir, target, n + 1);
  }
  return joined;
}

/* Links followed to the file a dangling chain of them names (as the
 * kernel's limit on links in one path). */
#define MAX_LINK_HOPS 40

/* The file that writing to PATH, which does not exist, creates: PATH, or
 * the target at the end of the chain of dangling symbolic links that PATH
 * starts (each target next to its link when relative), as open(O_CREAT)
 * would. NULL when out of memory. */
static char *new_file_path(const char *path) {
  char *at = strdup(path);
  for (int hop = 0; at != NULL && hop < MAX_LINK_HOPS; hop++) {
    char target[4096];
    const ssize_t n = readlink(at, target, sizeof target - 1);
    if (n <= 0)
      break;
    target[n] = '\0';
    char *next = link_target(at, target, (size_t)n);
    free(at);
    at = next;
  }
  return at;
}

/* --output PATH, before anything is computed, so that a destination that
 * cannot be written fails at once: a directory is refused, a regular file
 * must be writable (it is replaced, with its permissions, when everything
 * succeeded), a symbolic link to one replaces that file, and a new file
 * (or a dangling link's target) is created only then. Standard output's
 * or standard error's own file (--output /dev/stdout when it is
 * redirected to a file) is written through that stream. A device or FIFO is
 * checked now and opened when the results are ready (an input error is
 * then reported without waiting for a FIFO's reader). */
int sink_prepare(sink *s, const char *path) {
  s->dest = stdout;
  if (path == NULL)
    return EXIT_OK;
  sink_catch_signals();
  struct stat st;
  char *final = NULL;
  mode_t mode = default_file_mode();
  if (stat(path, &st) != 0) {
    if (errno != ENOENT) {
      cli_error(PROG ": %s: %s\n", path, strerror(errno));
      return EXIT_RUNTIME;
    }
    final = new_file_path(path);
  } else if (S_ISDIR(st.st_mode)) {
    cli_error(PROG ": %s: is a directory\n", path);
    return EXIT_RUNTIME;
  } else if (S_ISREG(st.st_mode) && same_file(&st, STDOUT_FILENO)) {
    return EXIT_OK;
  } else if (S_ISREG(st.st_mode) && same_file(&st, STDERR_FILENO)) {
    s->dest = stderr;
    return EXIT_OK;
  } else if (access(path, W_OK) != 0) {
    cli_error(PROG ": %s: %s\n", path, strerror(errno));
    return EXIT_RUNTIME;
  } else if (!S_ISREG(st.st_mode)) {
    s->through = path;
    return EXIT_OK;
  } else {
    final = realpath(path, NULL);
    mode = st.st_mode & 0777; /* (not set-user-ID and the like) */
    if (final == NULL) {
      cli_error(PROG ": %s: %s\n", path, strerror(errno));
      return EXIT_RUNTIME;
    }
  }
  if (final == NULL) {
    cli_error(PROG ": out of memory\n");
    return EXIT_RUNTIME;
  }
  int rc = sink_open_tmp(s, path, final, mode);
  free(final);
  return rc;
}

/* The device or FIFO of --output, opened now that the results are ready
 * (without creating or truncating anything: should a regular file have
 * taken its place meanwhile, nothing is written to it). */
static int sink_open_through(sink *s) {
  int fd = open(s->through, O_WRONLY | O_NOCTTY);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    close(fd);
    cli_error(PROG ": %s: became a regular file while computing; nothing "
                   "written\n",
              s->through);
    return EXIT_RUNTIME;
  }
  if (fd < 0 || (s->dest = fdopen(fd, "w")) == NULL) {
    cli_error(PROG ": %s: %s\n", s->through, strerror(errno));
    if (fd >= 0)
      close(fd);
    s->dest = NULL;
    return EXIT_RUNTIME;
  }
  s->through = NULL;
  return EXIT_OK;
}

static int sink_open_spool(sink *s) {
  const char *dir = getenv("TMPDIR");
  if (dir == NULL || dir[0] == '\0')
    dir = "/tmp";
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/clphmm-XXXXXX", dir) >=
      sizeof path) {
    cli_error(PROG ": TMPDIR is too long\n");
    return EXIT_RUNTIME;
  }
  int fd = mkstemp(path);
  if (fd >= 0) {
    unlink(path); /* the data lives until the descriptor is closed */
    s->f = fdopen(fd, "w+");
    if (s->f == NULL)
      close(fd);
  }
  if (s->f == NULL) {
    cli_error(PROG ": cannot create a temporary file in %s for the results: "
                   "%s (set TMPDIR, or use --output with a regular file)\n",
              dir, strerror(errno));
    return EXIT_RUNTIME;
  }
  s->spooled = 1;
  return EXIT_OK;
}

/* Before the first results (the temporary file of --output is open
 * already); `last` says whether they are the only ones (the destination
 * then needs no spool). */
int sink_open(sink *s, int last) {
  if (s->f != NULL)
    return EXIT_OK;
  if (!last)
    return sink_open_spool(s);
  int rc = s->through != NULL ? sink_open_through(s) : EXIT_OK;
  s->f = s->dest;
  return rc;
}

/* A write error on the destination: --output or standard output. */
static void dest_error(const cli_args *args, int err) {
  if (args->output != NULL)
    cli_error(PROG ": %s: write error: %s\n", args->output, strerror(err));
  else
    cli_error(PROG ": write error on standard output: %s\n", strerror(err));
}

/* A write error where the results are being written. */
static void sink_error(const sink *s, const cli_args *args, int err) {
  if (s->tmp != NULL)
    cli_error(PROG ": %s: write error on %s: %s\n", args->output, s->tmp,
              strerror(err));
  else if (s->spooled)
    cli_error(PROG ": write error on a temporary file: %s\n", strerror(err));
  else
    dest_error(args, err);
}

int sink_write(sink *s, const cli_args *args, const double *values, size_t n) {
  errno = 0;
  if (cli_write_values(s->f, values, n) == 0)
    return EXIT_OK;
  sink_error(s, args, errno ? errno : EIO);
  return EXIT_RUNTIME;
}

/* Copy the spool to dest. Returns 0, or -1 with errno set. */
static int copy_spool(FILE *spool, FILE *dest) {
  char buf[1 << 16];
  size_t got;
  if (fflush(spool) != 0 || fseek(spool, 0, SEEK_SET) != 0)
    return -1;
  while ((got = fread(buf, 1, sizeof buf, spool)) > 0)
    if (fwrite(buf, 1, got, dest) != got)
      return -1;
  if (ferror(spool)) {
    if (errno == 0)
      errno = EIO;
    return -1;
  }
  return 0;
}

/* The temporary file renamed into place (ok) or removed. */
static int sink_close_tmp(sink *s, const cli_args *args, int ok) {
  int rc = ok ? EXIT_OK : EXIT_RUNTIME;
  errno = 0;
  int failed = ok && cli_flush_checked(s->f) != 0;
  int err = errno;
  if (fclose(s->f) != 0 && ok && !failed) {
    failed = 1;
    err = errno ? errno : EIO;
  }
  if (ok && !failed && rename(s->tmp, s->final) != 0) {
    cli_error(PROG ": %s: cannot rename into place %s: %s\n", args->output,
              s->tmp, strerror(errno));
    rc = EXIT_RUNTIME;
  } else if (failed) {
    sink_error(s, args, err);
    rc = EXIT_RUNTIME;
  }
  if (rc != EXIT_OK)
    unlink(s->tmp);
  sink_tmp_live = 0;
  return rc;
}

int sink_close(sink *s, const cli_args *args, int ok) {
  int rc = ok ? EXIT_OK : EXIT_RUNTIME;
  if (s->tmp != NULL && s->f != NULL)
    rc = sink_close_tmp(s, args, ok);
  else if (s->f != NULL) {
    /* (A device or FIFO is opened only now that everything succeeded.) */
    if (ok && s->through != NULL && sink_open_through(s) != EXIT_OK)
      rc = EXIT_RUNTIME;
    errno = 0;
    if (rc == EXIT_OK && ((s->spooled && copy_spool(s->f, s->dest) != 0) ||
                          cli_flush_checked(s->dest) != 0)) {
      dest_error(args, errno ? errno : EIO);
      rc = EXIT_RUNTIME;
    }
    if (s->spooled)
      fclose(s->f);
  }
  if (s->dest != NULL && s->dest != stdout && s->dest != stderr &&
      fclose(s->dest) != 0 && rc == EXIT_OK) {
    dest_error(args, errno ? errno : EIO);
    rc = EXIT_RUNTIME;
  }
  free(s->tmp);
  free(s->final);
  return rc;
}
