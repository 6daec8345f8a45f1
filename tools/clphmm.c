/*
 * clphmm: command-line front end of libclphmm.
 *
 *   clphmm [--device SPEC] [--precision float|double] [--reference]
 *          [--output FILE] [--raw-base-quals] INPUT
 *   clphmm --list-devices
 *   clphmm --help | --version
 *
 * The input is read, computed and written chunk by chunk (a bounded number of
 * pairs and bytes at a time), so memory stays bounded for inputs of any size.
 * Still, an error never leaves partial output: stdout stays empty and
 * --output FILE is not created (see `sink` below).
 */
#define _GNU_SOURCE /* getopt_long */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
  const char *input;
} cli_args;

/* Long-only options. */
enum { OPT_LIST_DEVICES = 256, OPT_RAW_BASE_QUALS, OPT_CHUNK_PAIRS };

static const struct option long_options[] = {
    {"device", required_argument, NULL, 'd'},
    {"precision", required_argument, NULL, 'p'},
    {"reference", no_argument, NULL, 'r'},
    {"output", required_argument, NULL, 'o'},
    {"raw-base-quals", no_argument, NULL, OPT_RAW_BASE_QUALS},
    {"chunk-pairs", required_argument, NULL, OPT_CHUNK_PAIRS},
    {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

static const char reference_hint[] =
    PROG ": use --reference to compute on the CPU without OpenCL\n";

static void print_help(void) {
  fputs("Usage: " PROG " [OPTION]... INPUT\n"
        "       " PROG " --list-devices\n"
        "       " PROG " --help | --version\n"
        "\n"
        "Compute GATK HaplotypeCaller's PairHMM forward likelihood of every\n"
        "read/haplotype pair of INPUT on an OpenCL device (or on the CPU\n"
        "with --reference) and print one log10 likelihood per line.\n"
        "\n"
        "Options:\n"
        "  -d, --device SPEC     OpenCL device: a decimal index into the\n"
        "                        --list-devices list, 'gpu', 'cpu', or a\n"
        "                        case-insensitive substring of the device\n"
        "                        name (default: $CLPHMM_DEVICE, else the\n"
        "                        first GPU, else the first CPU device)\n"
        "  -p, --precision MODE  'float' (default): Intel GKL semantics,\n"
        "                        float arithmetic, results below 1e-28\n"
        "                        recomputed in double;\n"
        "                        'double': GATK Java LoglessPairHMM\n"
        "                        semantics, double arithmetic throughout\n"
        "  -r, --reference       compute with the scalar CPU reference:\n"
        "                        needs no OpenCL runtime or device\n"
        "                        (--device is ignored)\n"
        "  -o, --output FILE     write the results to FILE instead of\n"
        "                        stdout; FILE is created or replaced only\n"
        "                        when everything succeeded\n"
        "      --raw-base-quals  use base qualities as written (by default\n"
        "                        base qualities below 6 are raised to 6,\n"
        "                        as GATK's and GKL's test readers do)\n"
        "      --chunk-pairs N   compute about N pairs at a time (default\n"
        "                        262144); bounds memory, the output is the\n"
        "                        same for any N\n"
        "      --list-devices    list the OpenCL devices and exit\n"
        "  -h, --help            show this help and exit\n"
        "  -V, --version         show the version and exit\n"
        "\n"
        "Environment:\n"
        "  CLPHMM_DEVICE         default device selector (same syntax as\n"
        "                        --device, which overrides it)\n"
        "\n"
        "Input formats, detected from the content (qualities are phred+33\n"
        "characters; tokens are separated by spaces or tabs; CRLF is fine):\n"
        "  pairs    one pair per line, 7 tokens, as written by GATK's\n"
        "           --pair-hmm-results-file ('#' starts a comment line):\n"
        "             HAP READ BASE_QUALS INS_QUALS DEL_QUALS GCP EXPECTED\n"
        "           (EXPECTED is read but not used)\n"
        "  batches  repeated blocks: a header line 'NR NH', NR read lines\n"
        "             READ BASE_QUALS INS_QUALS DEL_QUALS GCP\n"
        "           then NH haplotype lines; every read of a block is\n"
        "           paired with every haplotype of the block\n"
        "\n"
        "Output: one log10 likelihood per pair and line, in input order\n"
        "(batches: block by block, read-major: read 1 against haplotypes\n"
        "1..NH, then read 2, ...), with 12 significant digits; '-inf' for\n"
        "a zero likelihood.\n"
        "\n"
        "Results are written only when everything succeeded: on an error\n"
        "nothing reaches stdout (results of long inputs wait in a temporary\n"
        "file in $TMPDIR) and --output FILE is left alone.\n"
        "\n"
        "Exit status: 0 on success, 1 on an input, device or output error,\n"
        "2 on a usage error. Errors go to stderr as '" PROG ": MESSAGE'\n"
        "(problems in INPUT as '" PROG ": FILE:LINE: what is wrong').\n",
        stdout);
}

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

static int usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Report a usage error with the --help hint; returns EXIT_USAGE. */
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, PROG ": ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry '" PROG " --help' for more information.\n");
  return EXIT_USAGE;
}

/* A positive decimal integer (digits only). Returns 0, or -1. */
static int parse_count(const char *s, size_t *out) {
  size_t v = 0;
  if (*s == '\0')
    return -1;
  for (; *s; s++) {
    unsigned d = (unsigned)(unsigned char)*s - '0';
    if (d > 9 || v > (SIZE_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  if (v == 0)
    return -1;
  *out = v;
  return 0;
}

/* Parse argv into *args. Returns EXIT_OK or EXIT_USAGE (already reported). */
static int parse_args(int argc, char **argv, cli_args *args) {
  memset(args, 0, sizeof *args);
  args->mode = MODE_RUN;
  args->precision = CLPHMM_PRECISION_FLOAT;
  args->chunk_pairs = DEFAULT_CHUNK_PAIRS;
  int list_devices = 0, help = 0, version = 0;

  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":d:p:ro:hV", long_options, NULL)) !=
         -1) {
    switch (c) {
    case 'd': args->device = optarg; break;
    case 'p':
      if (strcmp(optarg, "float") == 0)
        args->precision = CLPHMM_PRECISION_FLOAT;
      else if (strcmp(optarg, "double") == 0)
        args->precision = CLPHMM_PRECISION_DOUBLE;
      else
        return usage_error(
            "invalid --precision '%s' (expected 'float' or 'double')", optarg);
      break;
    case 'r': args->reference = 1; break;
    case 'o': args->output = optarg; break;
    case OPT_RAW_BASE_QUALS:
      args->read_flags |= CLPHMM_READ_RAW_BASE_QUALS;
      break;
    case OPT_CHUNK_PAIRS:
      if (parse_count(optarg, &args->chunk_pairs) != 0)
        return usage_error("invalid --chunk-pairs '%s' (expected a positive "
                           "integer)",
                           optarg);
      break;
    case OPT_LIST_DEVICES: list_devices = 1; break;
    case 'h': help = 1; break;
    case 'V': version = 1; break;
    case ':':
      return usage_error("option '%s' needs an argument", argv[optind - 1]);
    default: /* '?' */
      if (optopt != 0) {
        char opt[3] = {'-', (char)optopt, '\0'};
        return usage_error("unknown option '%s'", opt);
      }
      return usage_error("unknown or ambiguous option '%s'", argv[optind - 1]);
    }
  }

  if (help) {
    args->mode = MODE_HELP;
    return EXIT_OK;
  }
  if (version) {
    args->mode = MODE_VERSION;
    return EXIT_OK;
  }
  if (list_devices) {
    if (optind < argc)
      return usage_error("unexpected argument '%s' with --list-devices",
                         argv[optind]);
    args->mode = MODE_LIST_DEVICES;
    return EXIT_OK;
  }
  if (optind >= argc)
    return usage_error("%s", "missing INPUT file");
  if (optind + 1 < argc)
    return usage_error("unexpected extra argument '%s'", argv[optind + 1]);
  args->input = argv[optind];
  if (args->output != NULL && args->output[0] == '\0')
    return usage_error("%s", "empty --output file name");
  return EXIT_OK;
}

/* ---- --list-devices ------------------------------------------------------ */

static const char *device_type_name(clphmm_device_type type) {
  switch (type) {
  case CLPHMM_DEVICE_CPU: return "cpu";
  case CLPHMM_DEVICE_GPU: return "gpu";
  case CLPHMM_DEVICE_ACCELERATOR: return "accelerator";
  case CLPHMM_DEVICE_OTHER: break;
  }
  return "other";
}

static int list_devices(void) {
  size_t count = 0;
  clphmm_status st = clphmm_device_count(&count);
  if (st != CLPHMM_SUCCESS) {
    fprintf(stderr, PROG ": %s\n", clphmm_last_error(NULL));
    fputs(reference_hint, stderr);
    return EXIT_RUNTIME;
  }
  if (count == 0) {
    fprintf(stderr, PROG ": the OpenCL runtime has no device\n");
    fputs(reference_hint, stderr);
    return EXIT_RUNTIME;
  }
  for (size_t i = 0; i < count; i++) {
    clphmm_device_info info;
    if (clphmm_device_get_info(i, &info) != CLPHMM_SUCCESS) {
      fprintf(stderr, PROG ": device %zu: %s\n", i, clphmm_last_error(NULL));
      return EXIT_RUNTIME;
    }
    printf("%zu: %s \"%s\", platform \"%s\", %u compute units, "
           "%.1f GiB global memory, fp64 %s\n",
           i, device_type_name(info.type), info.name, info.platform,
           info.compute_units,
           (double)info.global_mem_bytes / (1024.0 * 1024.0 * 1024.0),
           info.has_fp64 ? "yes" : "no");
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, PROG ": write error on standard output: %s\n",
            strerror(errno));
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

/* ---- computing ----------------------------------------------------------- */

/* Compute every pair of one chunk into a new array (*out, *n_out). The
 * device context is created on the first chunk and reused. */
static int compute_chunk(const cli_args *args, clphmm_context **ctx,
                         const clphmm_dataset *ds, double **out,
                         size_t *n_out) {
  const clphmm_batch *batches = clphmm_dataset_batches(ds);
  size_t n_batches = clphmm_dataset_n_batches(ds);
  size_t n_pairs = clphmm_dataset_n_pairs(ds);
  if (n_pairs > SIZE_MAX / sizeof(double)) {
    fprintf(stderr, PROG ": %s: too many pairs (%zu)\n", args->input, n_pairs);
    return EXIT_RUNTIME;
  }
  double *values = malloc(n_pairs > 0 ? n_pairs * sizeof *values : 1);
  if (values == NULL) {
    fprintf(stderr, PROG ": out of memory for %zu results\n", n_pairs);
    return EXIT_RUNTIME;
  }
  clphmm_status st;
  if (args->reference) {
    st = clphmm_reference(batches, n_batches, args->precision, values);
  } else {
    if (*ctx == NULL) {
      clphmm_options options;
      clphmm_options_init(&options);
      options.device = args->device;
      options.precision = args->precision;
      if (clphmm_context_create(&options, ctx) != CLPHMM_SUCCESS) {
        fprintf(stderr, PROG ": %s\n", clphmm_last_error(NULL));
        fputs(reference_hint, stderr);
        free(values);
        return EXIT_RUNTIME;
      }
    }
    st = clphmm_compute(*ctx, batches, n_batches, values);
  }
  if (st != CLPHMM_SUCCESS) {
    fprintf(stderr, PROG ": %s\n",
            clphmm_last_error(args->reference ? NULL : *ctx));
    free(values);
    return EXIT_RUNTIME;
  }
  *out = values;
  *n_out = n_pairs;
  return EXIT_OK;
}

/* ---- writing ------------------------------------------------------------- */

/* Write the values, one per line. Returns 0, or -1 with errno set. */
static int write_values(FILE *f, const double *values, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int w;
    if (isinf(values[i]) && values[i] < 0)
      w = fputs("-inf\n", f);
    else
      w = fprintf(f, "%.12g\n", values[i]);
    if (w < 0)
      return -1;
  }
  return 0;
}

/* Flush and check a stream. Returns 0, or -1 with errno set. */
static int flush_checked(FILE *f) {
  if (fflush(f) != 0 || ferror(f)) {
    if (errno == 0)
      errno = EIO;
    return -1;
  }
  return 0;
}

/* Permissions of a newly created file under the current umask. */
static mode_t default_file_mode(void) {
  mode_t mask = umask(0);
  umask(mask);
  return (mode_t)(0666 & ~mask);
}

/* Where results go while the input is being computed. Nothing reaches the
 * destination before everything succeeded: --output FILE is written to a
 * temporary file next to it and renamed into place; stdout gets an input
 * of one chunk directly (nothing is written before the computation ends),
 * and the results of longer inputs are spooled to an unlinked temporary
 * file and copied to stdout at the end. */
typedef struct sink {
  FILE *f;
  char *tmp;   /* --output: the temporary file's name */
  int spooled; /* stdout through an unlinked temporary file */
} sink;

static int sink_open_output(sink *s, const char *path) {
  static const char suffix[] = ".tmp-XXXXXX";
  size_t len = strlen(path);
  s->tmp = malloc(len + sizeof suffix);
  if (s->tmp == NULL) {
    fprintf(stderr, PROG ": out of memory\n");
    return EXIT_RUNTIME;
  }
  memcpy(s->tmp, path, len);
  memcpy(s->tmp + len, suffix, sizeof suffix);
  int fd = mkstemp(s->tmp);
  if (fd < 0) {
    fprintf(stderr, PROG ": %s: cannot create temporary file: %s\n", path,
            strerror(errno));
    free(s->tmp);
    s->tmp = NULL;
    return EXIT_RUNTIME;
  }
  const char *what = NULL;
  if (fchmod(fd, default_file_mode()) != 0)
    what = "cannot set permissions of";
  else if ((s->f = fdopen(fd, "w")) == NULL)
    what = "cannot open";
  if (what != NULL) {
    fprintf(stderr, PROG ": %s: %s %s: %s\n", path, what, s->tmp,
            strerror(errno));
    close(fd);
    unlink(s->tmp);
    free(s->tmp);
    s->tmp = NULL;
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

static int sink_open_spool(sink *s) {
  const char *dir = getenv("TMPDIR");
  if (dir == NULL || dir[0] == '\0')
    dir = "/tmp";
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/clphmm-XXXXXX", dir) >=
      sizeof path) {
    fprintf(stderr, PROG ": TMPDIR is too long\n");
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
    fprintf(stderr,
            PROG ": cannot create a temporary file in %s for the results: "
                 "%s (set TMPDIR, or use --output)\n",
            dir, strerror(errno));
    return EXIT_RUNTIME;
  }
  s->spooled = 1;
  return EXIT_OK;
}

/* Open the sink before the first results; `last` says whether they are
 * the only ones (stdout then needs no spool). */
static int sink_open(sink *s, const char *output, int last) {
  if (output != NULL)
    return sink_open_output(s, output);
  if (last) {
    s->f = stdout;
    return EXIT_OK;
  }
  return sink_open_spool(s);
}

static int sink_write(sink *s, const cli_args *args, const double *values,
                      size_t n) {
  errno = 0;
  if (write_values(s->f, values, n) == 0)
    return EXIT_OK;
  int err = errno ? errno : EIO;
  if (s->tmp != NULL)
    fprintf(stderr, PROG ": %s: write error on %s: %s\n", args->output, s->tmp,
            strerror(err));
  else if (s->spooled)
    fprintf(stderr, PROG ": write error on a temporary file: %s\n",
            strerror(err));
  else
    fprintf(stderr, PROG ": write error on standard output: %s\n",
            strerror(err));
  return EXIT_RUNTIME;
}

/* Copy the spool to stdout. Returns 0, or -1 with errno set. */
static int copy_spool(FILE *spool) {
  char buf[1 << 16];
  size_t got;
  if (fflush(spool) != 0 || fseek(spool, 0, SEEK_SET) != 0)
    return -1;
  while ((got = fread(buf, 1, sizeof buf, spool)) > 0)
    if (fwrite(buf, 1, got, stdout) != got)
      return -1;
  if (ferror(spool)) {
    if (errno == 0)
      errno = EIO;
    return -1;
  }
  return 0;
}

/* Deliver the results (ok) or discard them. Returns the exit status. */
static int sink_close(sink *s, const cli_args *args, int ok) {
  int rc = ok ? EXIT_OK : EXIT_RUNTIME;
  if (s->f == NULL)
    return rc;
  errno = 0;
  if (s->tmp != NULL) {
    int failed = ok && flush_checked(s->f) != 0;
    int err = errno;
    if (fclose(s->f) != 0 && ok && !failed) {
      failed = 1;
      err = errno ? errno : EIO;
    }
    if (ok && !failed && rename(s->tmp, args->output) != 0) {
      fprintf(stderr, PROG ": %s: cannot rename into place %s: %s\n",
              args->output, s->tmp, strerror(errno));
      rc = EXIT_RUNTIME;
    } else if (failed) {
      fprintf(stderr, PROG ": %s: write error on %s: %s\n", args->output,
              s->tmp, strerror(err));
      rc = EXIT_RUNTIME;
    }
    if (rc != EXIT_OK)
      unlink(s->tmp);
    free(s->tmp);
    return rc;
  }
  if (ok &&
      ((s->spooled && copy_spool(s->f) != 0) || flush_checked(stdout) != 0)) {
    fprintf(stderr, PROG ": write error on standard output: %s\n",
            strerror(errno ? errno : EIO));
    rc = EXIT_RUNTIME;
  }
  if (s->spooled)
    fclose(s->f);
  return rc;
}

/* ---- the run ------------------------------------------------------------- */

static int next_chunk(const cli_args *args, clphmm_reader *rd,
                      clphmm_dataset **chunk) {
  if (clphmm_reader_next(rd, args->chunk_pairs, CHUNK_BYTES, chunk) !=
      CLPHMM_SUCCESS) {
    fprintf(stderr, PROG ": %s\n", clphmm_last_error(NULL));
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

/* Read, compute and write the input chunk by chunk, so that memory stays
 * bounded whatever its size. The next chunk is read before the results of
 * the current one are written, which tells whether they are the last. */
static int run(const cli_args *args) {
  clphmm_reader *rd = NULL;
  if (clphmm_reader_open(args->input, args->read_flags, &rd) !=
      CLPHMM_SUCCESS) {
    fprintf(stderr, PROG ": %s\n", clphmm_last_error(NULL));
    return EXIT_RUNTIME;
  }
  clphmm_context *ctx = NULL;
  clphmm_dataset *chunk = NULL, *next = NULL;
  sink out = {0};
  int rc = next_chunk(args, rd, &chunk);
  while (rc == EXIT_OK && chunk != NULL) {
    double *values = NULL;
    size_t n = 0;
    rc = compute_chunk(args, &ctx, chunk, &values, &n);
    if (rc == EXIT_OK)
      rc = next_chunk(args, rd, &next);
    if (rc == EXIT_OK && out.f == NULL)
      rc = sink_open(&out, args->output, next == NULL);
    if (rc == EXIT_OK)
      rc = sink_write(&out, args, values, n);
    free(values);
    clphmm_dataset_destroy(chunk);
    chunk = next;
    next = NULL;
  }
  clphmm_dataset_destroy(chunk);
  clphmm_reader_close(rd);
  clphmm_context_destroy(ctx);
  return sink_close(&out, args, rc == EXIT_OK);
}

int main(int argc, char **argv) {
  cli_args args;
  int rc = parse_args(argc, argv, &args);
  if (rc != EXIT_OK)
    return rc;
  switch (args.mode) {
  case MODE_HELP:
    print_help();
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
  case MODE_VERSION:
    printf(PROG " %s\n", clphmm_version());
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
  case MODE_LIST_DEVICES: return list_devices();
  case MODE_RUN: break;
  }
  return run(&args);
}
