/* clphmm, the command: what its modules share.
 *
 *   main.c      the run: chunks read, computed and written in input order
 *   args.c      options and --help
 *   devices.c   --list-devices
 *   progress.c  progress lines, the summary and error messages
 *   compute.c   one chunk on the device or on the CPU reference
 *   format.c    results formatted on several threads
 *   sink.c      where results wait until everything succeeded (--output)
 *   pipeline.c  the reader thread, parsing ahead of the computation */
#ifndef CLPHMM_CLI_H
#define CLPHMM_CLI_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "clphmm.h"

#define PROG "clphmm"

/* Default bound on the pairs computed at a time (--chunk-pairs), and the
 * bound on the bytes of input data (bases, qualities) held at a time: a few
 * tens of MB of memory with the library's working arrays, and enough pairs
 * per call to keep a large GPU busy. */
#define DEFAULT_CHUNK_PAIRS ((size_t)1 << 18)
#define CHUNK_BYTES ((size_t)16 << 20)

/* Exit statuses. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

typedef enum cli_mode {
  MODE_RUN,
  MODE_LIST_DEVICES,
  MODE_HELP,
  MODE_VERSION
} cli_mode;

typedef struct cli_args {
  cli_mode mode;
  const char *device; /* NULL: library default (CLPHMM_DEVICE, gpu, cpu) */
  clphmm_precision precision;
  int reference;      /* CPU reference, no OpenCL at all */
  const char *output; /* NULL: stdout */
  unsigned read_flags;
  size_t chunk_pairs;
  int progress; /* --progress: progress lines even when stderr is no tty */
  int verbose;  /* --verbose: progress on a terminal, a summary line */
  const char *input;
} cli_args;

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* ---- args.c ---- */

/* Parse argv into *args. Returns EXIT_OK or EXIT_USAGE (already reported). */
int cli_parse_args(int argc, char **argv, cli_args *args);
void cli_print_help(void);

/* ---- devices.c ---- */

int cli_list_devices(void);
/* The hint after a failure to use OpenCL. */
extern const char cli_reference_hint[];

/* ---- progress.c ---- */

/* Progress of a run on stderr. On a terminal one line is rewritten in
 * place; elsewhere (--progress into a file or pipe) each update is a line
 * of its own. Updates come after whole chunks, at most PROGRESS_HZ times
 * a second (the first one at once). */
#define PROGRESS_HZ 4

typedef struct progress {
  int lines;   /* print progress lines */
  int summary; /* print the summary line at the end */
  int tty;     /* stderr is a terminal: rewrite one line */
  int pending; /* a terminal line without its newline is on screen */
  double start, last;
  uint64_t pairs, cells;
  uint64_t chunks;
  double kernel_seconds; /* device runs: from clphmm_context_stats */
  /* Per device of a context of several (the summary lists them). */
  size_t n_devices;
  clphmm_device_stats devices[CLPHMM_MAX_DEVICES];
} progress;

/* The run's progress (one run per process); errors end its line first. */
extern progress cli_progress;

double cli_now(void);
/* Print an error message (format and arguments as fprintf's) on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);
void progress_start(progress *p, const cli_args *args);
/* Count a computed chunk; print a line when one is due. */
void progress_chunk(progress *p, const clphmm_dataset *ds,
                    const clphmm_context *ctx);
/* The summary line of a successful run. */
void progress_finish(progress *p, int reference);
/* End a pending terminal line, so that the next message starts a line. */
void progress_break(progress *p);

/* ---- compute.c ---- */

/* Compute every pair of one chunk into a new array (*out, *n_out). The
 * device context is created on the first chunk and reused. */
int cli_compute_chunk(const cli_args *args, clphmm_context **ctx,
                      const clphmm_dataset *ds, double **out, size_t *n_out);

/* ---- format.c ---- */

/* Write the values, one per line. Returns 0, or -1 with errno set. */
int cli_write_values(FILE *f, const double *values, size_t n);
/* Flush and check a stream. Returns 0, or -1 with errno set. */
int cli_flush_checked(FILE *f);
/* Flush standard output (--help, --version, --list-devices): EXIT_OK, or
 * EXIT_RUNTIME after a message naming the write error. */
int cli_finish_stdout(void);

/* ---- sink.c ---- */

/* Where results go while the input is being computed. Nothing reaches the
 * destination before everything succeeded: --output FILE (a regular file,
 * or one that does not exist yet) is written to a temporary file next to
 * it and renamed into place, keeping an existing file's permissions and a
 * symbolic link (the file it points to is replaced); other destinations
 * (standard output, --output naming standard output's or standard
 * error's own file, as /dev/stdout does, and a device or a FIFO, opened only
 * when the results are ready) get an input of one chunk directly (nothing
 * is written before the computation ends), and the results of longer
 * inputs are spooled to an unlinked temporary file and copied there at
 * the end. */
typedef struct sink {
  FILE *f;
  FILE *dest;          /* stdout, or the opened device or FIFO */
  const char *through; /* --output: a device or FIFO, not opened yet */
  char *tmp;           /* --output: the temporary file's name */
  char *final;         /* --output: what the temporary file replaces */
  int spooled;         /* through an unlinked temporary file */
} sink;

/* Before anything is computed: --output PATH checked and prepared (NULL:
 * standard output). Returns EXIT_OK or EXIT_RUNTIME (reported). */
int sink_prepare(sink *s, const char *path);
/* Before the first results; `last`: they are the only ones. */
int sink_open(sink *s, int last);
int sink_write(sink *s, const cli_args *args, const double *values, size_t n);
/* Deliver the results (ok) or discard them. Returns the exit status. */
int sink_close(sink *s, const cli_args *args, int ok);

/* ---- pipeline.c ---- */

/* Parsing runs on its own thread, one chunk ahead of the computation: while
 * chunk k computes, chunk k+1 waits in `slot` and chunk k+2 is being
 * parsed, so at most three chunks are in memory. Chunks reach the main
 * thread in input order; a read error is delivered where it happened in
 * that order (after the chunks before it), so the run reports what the
 * serial loop reported. */
typedef struct pipeline {
  const cli_args *args;
  clphmm_reader *rd;
  pthread_t thread;
  int started;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  clphmm_dataset *slot; /* the next chunk, parsed (NULL: none yet) */
  int end;              /* the input has no more chunks */
  int failed;           /* reading failed, see error */
  int cancel;           /* the main thread stopped: read no further */
  char error[8192];     /* the reader's message ("FILE:LINE: ...") */
} pipeline;

int pipeline_start(pipeline *p, const cli_args *args);
/* The next chunk in input order (NULL at the end), or EXIT_RUNTIME after
 * reporting the read error. */
int pipeline_next(pipeline *p, clphmm_dataset **chunk);
/* Stop the reader (it finishes the chunk it is parsing) and free it all;
 * returns 0. After a failed run (`failed`) a reader that does not stop
 * within 0.2 s (blocked in a read from a pipe or a terminal) is left
 * running with its pipeline, which must then stay valid, and 1 is
 * returned: the process must end without exit(), whose flush of every
 * stream would wait for the reader's read to return. */
int pipeline_stop(pipeline *p, int failed);

#endif
