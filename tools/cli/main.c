/*
 * clphmm: command-line front end of libclphmm.
 *
 *   clphmm [--device SPEC] [--precision float|double] [--reference]
 *          [--output FILE] [--raw-base-quals] [--chunk-pairs N]
 *          [--progress] [--verbose] INPUT
 *   clphmm --list-devices
 *   clphmm --help | --version
 *
 * The input is read, computed and written chunk by chunk (a bounded number of
 * pairs and bytes at a time), so memory stays bounded for inputs of any size;
 * a reader thread parses the next chunks while the current one computes.
 * Still, an error never leaves partial output: stdout stays empty and
 * --output FILE is not created (sink.c).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli.h"

/* Compute and write the input chunk by chunk as the reader thread delivers
 * it, so that memory stays bounded whatever its size. The next chunk is
 * taken before the results of the current one are written, which tells
 * whether they are the last. */
static int run(const cli_args *args, int *reader_left) {
  /* (Static: a reader thread blocked in a read when the run fails is left
   * behind with it, see pipeline_stop.) */
  static pipeline pl;
  progress_start(&cli_progress, args);
  clphmm_context *ctx = NULL;
  clphmm_dataset *chunk = NULL, *next = NULL;
  sink out = {0};
  /* (The destination first: a bad --output fails before the reader starts
   * waiting on a pipe.) */
  int rc = sink_prepare(&out, args->output);
  if (rc == EXIT_OK)
    rc = pipeline_start(&pl, args);
  if (rc == EXIT_OK)
    rc = pipeline_next(&pl, &chunk);
  while (rc == EXIT_OK && chunk != NULL) {
    double *values = NULL;
    size_t n = 0;
    rc = cli_compute_chunk(args, &ctx, chunk, &values, &n);
    if (rc == EXIT_OK)
      progress_chunk(&cli_progress, chunk, args->reference ? NULL : ctx);
    if (rc == EXIT_OK)
      rc = pipeline_next(&pl, &next);
    if (rc == EXIT_OK && out.f == NULL)
      rc = sink_open(&out, next == NULL);
    if (rc == EXIT_OK)
      rc = sink_write(&out, args, values, n);
    free(values);
    clphmm_dataset_destroy(chunk);
    chunk = next;
    next = NULL;
  }
  clphmm_dataset_destroy(chunk);
  *reader_left = pipeline_stop(&pl, rc != EXIT_OK);
  clphmm_context_destroy(ctx);
  rc = sink_close(&out, args, rc == EXIT_OK);
  if (rc == EXIT_OK)
    progress_finish(&cli_progress, args->reference);
  progress_break(&cli_progress);
  return rc;
}

/* Chunks of input (tens of megabytes each) are allocated and freed over
 * and over. glibc gives blocks that large back to the kernel when they are
 * freed, and the kernel zeroes every page of the next chunk again: keep
 * them in the process instead (reading a 206 MB file: 0.26 -> 0.18 s on a
 * 2-core VM). Memory stays bounded: at most three chunks are alive. */
static void keep_freed_memory(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

/* Descriptors 0, 1 and 2 that the caller closed are opened on /dev/null,
 * read-only: no file this process opens (the results' temporary file)
 * takes their number and receives what is meant for standard output or
 * error, and writing to a closed standard output still fails (EBADF),
 * which is reported, instead of losing the results quietly. */
static void open_standard_fds(void) {
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int got = open("/dev/null", O_RDONLY);
      if (got >= 0 && got != fd)
        close(got);
    }
}

int main(int argc, char **argv) {
  open_standard_fds();
  keep_freed_memory();
  cli_args args;
  int rc = cli_parse_args(argc, argv, &args);
  if (rc != EXIT_OK)
    return rc;
  switch (args.mode) {
  case MODE_HELP: cli_print_help(); return cli_finish_stdout();
  case MODE_VERSION:
    printf(PROG " %s\n", clphmm_version());
    return cli_finish_stdout();
  case MODE_LIST_DEVICES: return cli_list_devices();
  case MODE_RUN: break;
  }
  int reader_left = 0;
  rc = run(&args, &reader_left);
  if (reader_left) { /* (see pipeline_stop) */
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
  }
  return rc;
}
