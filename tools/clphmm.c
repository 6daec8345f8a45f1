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
 * --output FILE is not created (see `sink` below).
 */
#define _GNU_SOURCE /* getopt_long */

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
  int progress; /* --progress: progress lines even when stderr is no tty */
  int verbose;  /* --verbose: progress on a terminal, a summary line */
  const char *input;
} cli_args;

/* Long-only options. */
enum {
  OPT_LIST_DEVICES = 256,
  OPT_RAW_BASE_QUALS,
  OPT_CHUNK_PAIRS,
  OPT_PROGRESS
};

static const struct option long_options[] = {
    {"device", required_argument, NULL, 'd'},
    {"precision", required_argument, NULL, 'p'},
    {"reference", no_argument, NULL, 'r'},
    {"output", required_argument, NULL, 'o'},
    {"raw-base-quals", no_argument, NULL, OPT_RAW_BASE_QUALS},
    {"chunk-pairs", required_argument, NULL, OPT_CHUNK_PAIRS},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"verbose", no_argument, NULL, 'v'},
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
        "                        first GPU, else the first CPU device);\n"
        "                        several devices: a comma-separated list\n"
        "                        of those ('0,1'), or 'all' (every GPU,\n"
        "                        else every device)\n"
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
        "                        when everything succeeded (keeping its\n"
        "                        permissions; a device or FIFO is written\n"
        "                        through)\n"
        "      --raw-base-quals  use base qualities as written (by default\n"
        "                        base qualities below 6 are raised to 6,\n"
        "                        as GATK's and GKL's test readers do)\n"
        "      --chunk-pairs N   compute about N pairs at a time (default\n"
        "                        262144); bounds memory, the output is the\n"
        "                        same for any N\n"
        "      --progress        print progress on stderr (pairs, cells,\n"
        "                        GCUPS, elapsed time) a few times a second,\n"
        "                        even when stderr is not a terminal, and a\n"
        "                        summary line at the end\n"
        "  -v, --verbose         progress when stderr is a terminal, and the\n"
        "                        summary line\n"
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
  while ((c = getopt_long(argc, argv, ":d:p:ro:hVv", long_options, NULL)) !=
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
    case OPT_PROGRESS: args->progress = 1; break;
    case 'v': args->verbose = 1; break;
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

/* ---- progress ------------------------------------------------------------ */

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
static progress cli_progress;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* End a pending terminal line, so that the next message starts a line. */
static void progress_break(progress *p) {
  if (p->pending)
    fputc('\n', stderr);
  p->pending = 0;
}

static void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Print an error message (format and arguments as fprintf's) on stderr. */
static void cli_error(const char *fmt, ...) {
  va_list ap;
  progress_break(&cli_progress);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

static void progress_start(progress *p, const cli_args *args) {
  memset(p, 0, sizeof *p);
  p->tty = isatty(STDERR_FILENO);
  p->lines = args->progress || (args->verbose && p->tty);
  p->summary = args->progress || args->verbose;
  p->start = now_seconds();
}

static double gcups(uint64_t cells, double seconds) {
  return seconds > 0 ? (double)cells / seconds * 1e-9 : 0;
}

/* Cells (read length x haplotype length) of a chunk. */
static uint64_t chunk_cells(const clphmm_dataset *ds) {
  const clphmm_batch *b = clphmm_dataset_batches(ds);
  uint64_t cells = 0;
  for (size_t i = 0; i < clphmm_dataset_n_batches(ds); i++) {
    uint64_t r = 0, h = 0;
    for (size_t k = 0; k < b[i].n_reads; k++)
      r += b[i].reads[k].length;
    for (size_t k = 0; k < b[i].n_haplotypes; k++)
      h += b[i].haplotypes[k].length;
    cells += r * h;
  }
  return cells;
}

/* Count a computed chunk; print a line when one is due. */
static void progress_chunk(progress *p, const clphmm_dataset *ds,
                           const clphmm_context *ctx) {
  p->pairs += clphmm_dataset_n_pairs(ds);
  p->cells += chunk_cells(ds);
  p->chunks++;
  clphmm_stats st;
  if (ctx != NULL && clphmm_context_stats(ctx, &st) == CLPHMM_SUCCESS) {
    p->kernel_seconds += st.kernel_seconds;
    p->n_devices = st.n_devices;
    for (size_t i = 0; i < st.n_devices && i < CLPHMM_MAX_DEVICES; i++) {
      clphmm_device_stats *d = &p->devices[i], *c = &st.devices[i];
      snprintf(d->name, sizeof d->name, "%s", c->name);
      d->index = c->index;
      d->pairs += c->pairs;
      d->cells += c->cells;
      d->busy_seconds += c->busy_seconds;
      d->kernel_seconds += c->kernel_seconds;
      d->dropped = c->dropped;
    }
  }
  double t = now_seconds();
  if (!p->lines || (p->chunks > 1 && t - p->last < 1.0 / PROGRESS_HZ))
    return;
  p->last = t;
  double elapsed = t - p->start;
  fprintf(stderr, "%s" PROG ": %llu pairs, %.3g cells, %.2f GCUPS, %.1f s%s",
          p->tty ? "\r\033[K" : "", (unsigned long long)p->pairs,
          (double)p->cells, gcups(p->cells, elapsed), elapsed,
          p->tty ? "" : "\n");
  fflush(stderr);
  p->pending = p->tty;
}

/* The summary line of a successful run. */
static void progress_finish(progress *p, int reference) {
  if (p->pending)
    fputs("\r\033[K", stderr);
  p->pending = 0;
  if (!p->summary)
    return;
  double elapsed = now_seconds() - p->start;
  fprintf(stderr,
          PROG ": done: %llu pairs, %.3g cells, %llu chunks in %.2f s, "
               "%.2f GCUPS",
          (unsigned long long)p->pairs, (double)p->cells,
          (unsigned long long)p->chunks, elapsed, gcups(p->cells, elapsed));
  if (!reference)
    fprintf(stderr, " (kernel %.3f s, %.2f GCUPS)", p->kernel_seconds,
            gcups(p->cells, p->kernel_seconds));
  fputc('\n', stderr);
  for (size_t i = 0; p->n_devices > 1 && i < p->n_devices; i++) {
    const clphmm_device_stats *d = &p->devices[i];
    fprintf(stderr,
            PROG ": device %zu (%zu: %s): %llu pairs, %.3g cells, busy "
                 "%.3f s, kernel %.3f s%s\n",
            i, d->index, d->name, (unsigned long long)d->pairs,
            (double)d->cells, d->busy_seconds, d->kernel_seconds,
            d->dropped ? ", dropped after a failure" : "");
  }
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
    cli_error(PROG ": %s: too many pairs (%zu)\n", args->input, n_pairs);
    return EXIT_RUNTIME;
  }
  double *values = malloc(n_pairs > 0 ? n_pairs * sizeof *values : 1);
  if (values == NULL) {
    cli_error(PROG ": out of memory for %zu results\n", n_pairs);
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
      options.profile = args->verbose; /* the summary's kernel time */
      if (clphmm_context_create(&options, ctx) != CLPHMM_SUCCESS) {
        cli_error(PROG ": %s\n", clphmm_last_error(NULL));
        fputs(reference_hint, stderr);
        free(values);
        return EXIT_RUNTIME;
      }
    }
    st = clphmm_compute(*ctx, batches, n_batches, values);
  }
  if (st != CLPHMM_SUCCESS) {
    cli_error(PROG ": %s\n", clphmm_last_error(args->reference ? NULL : *ctx));
    free(values);
    return EXIT_RUNTIME;
  }
  *out = values;
  *n_out = n_pairs;
  return EXIT_OK;
}

/* ---- writing ------------------------------------------------------------- */

/* Values are formatted on several threads, in parts of FORMAT_PART, and
 * written in order: printf's "%.12g" costs about 0.25 us a value, 0.25 s
 * on one core of a 2-core VM for a HaplotypeCaller-sized input's million
 * results, a sixth of the whole process on the H100 machine before.
 * FORMAT_MAX bytes hold any one line. */
#define FORMAT_PART ((size_t)1 << 15)
#define FORMAT_MAX 32
#define FORMAT_THREADS 16
#define FORMAT_WINDOW 64 /* parts formatted before they are written */

typedef struct format_part {
  const double *values;
  size_t n;
  char *text;
  size_t len;
} format_part;

typedef struct format_work {
  format_part *parts;
  size_t n_parts, stride, first;
} format_work;

static void format_values(format_part *p) {
  size_t len = 0;
  for (size_t i = 0; i < p->n; i++) {
    if (isinf(p->values[i]) && p->values[i] < 0) {
      memcpy(p->text + len, "-inf\n", 5);
      len += 5;
    } else {
      len +=
          (size_t)snprintf(p->text + len, FORMAT_MAX, "%.12g\n", p->values[i]);
    }
  }
  p->len = len;
}

static void *format_thread(void *arg) {
  const format_work *w = arg;
  for (size_t k = w->first; k < w->n_parts; k += w->stride)
    format_values(&w->parts[k]);
  return NULL;
}

/* Format and write values[0, n), at most FORMAT_WINDOW parts. */
static int write_window(FILE *f, const double *values, size_t n,
                        format_part *parts, char *text) {
  const size_t n_parts = (n + FORMAT_PART - 1) / FORMAT_PART;
  for (size_t k = 0; k < n_parts; k++) {
    const size_t lo = k * FORMAT_PART;
    parts[k] =
        (format_part){values + lo, n - lo < FORMAT_PART ? n - lo : FORMAT_PART,
                      text + lo * FORMAT_MAX, 0};
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t threads = cpus < 1 ? 1 : (size_t)cpus;
  threads = threads > FORMAT_THREADS ? FORMAT_THREADS : threads;
  threads = threads > n_parts ? n_parts : threads;
  pthread_t tid[FORMAT_THREADS];
  format_work work[FORMAT_THREADS];
  size_t started = 0; /* threads 1..started run */
  for (size_t t = 1; t < threads; t++) {
    work[t] = (format_work){parts, n_parts, threads, t};
    if (pthread_create(&tid[t], NULL, format_thread, &work[t]) != 0)
      break;
    started = t;
  }
  /* This thread takes share 0, and the shares of threads not started. */
  for (size_t t = 0; t < threads; t++)
    if (t == 0 || t > started) {
      work[t] = (format_work){parts, n_parts, threads, t};
      format_thread(&work[t]);
    }
  for (size_t t = 1; t <= started; t++)
    pthread_join(tid[t], NULL);
  for (size_t k = 0; k < n_parts; k++)
    if (fwrite(parts[k].text, 1, parts[k].len, f) != parts[k].len)
      return -1;
  return 0;
}

/* Write the values, one per line, a window of parts at a time (the text
 * of a window is FORMAT_MAX bytes per value: a chunk of millions of tiny
 * pairs would otherwise need gigabytes). Returns 0, or -1 with errno set. */
static int write_values(FILE *f, const double *values, size_t n) {
  if (n == 0)
    return 0;
  const size_t window =
      n < FORMAT_WINDOW * FORMAT_PART ? n : FORMAT_WINDOW * FORMAT_PART;
  format_part *parts = calloc(FORMAT_WINDOW, sizeof *parts);
  char *text = malloc(window * FORMAT_MAX);
  int rc = 0;
  if (!parts || !text) {
    errno = ENOMEM;
    rc = -1;
  }
  for (size_t at = 0; at < n && rc == 0; at += window)
    rc = write_window(f, values + at, n - at < window ? n - at : window, parts,
                      text);
  free(parts);
  free(text);
  return rc;
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

/* The file that writing to PATH, which does not exist, creates: PATH, or
 * the target of the dangling symbolic link PATH (next to the link when
 * relative). NULL when out of memory. */
static char *new_file_path(const char *path) {
  char target[4096];
  ssize_t n = readlink(path, target, sizeof target - 1);
  if (n <= 0)
    return strdup(path);
  target[n] = '\0';
  const char *slash = strrchr(path, '/');
  if (target[0] == '/' || slash == NULL)
    return strdup(target);
  const size_t dir = (size_t)(slash - path) + 1;
  char *joined = malloc(dir + (size_t)n + 1);
  if (joined != NULL) {
    memcpy(joined, path, dir);
    memcpy(joined + dir, target, (size_t)n + 1);
  }
  return joined;
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
static int sink_prepare(sink *s, const char *path) {
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
static int sink_open(sink *s, int last) {
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

static int sink_write(sink *s, const cli_args *args, const double *values,
                      size_t n) {
  errno = 0;
  if (write_values(s->f, values, n) == 0)
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
  int failed = ok && flush_checked(s->f) != 0;
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

/* Deliver the results (ok) or discard them. Returns the exit status. */
static int sink_close(sink *s, const cli_args *args, int ok) {
  int rc = ok ? EXIT_OK : EXIT_RUNTIME;
  if (s->tmp != NULL && s->f != NULL)
    rc = sink_close_tmp(s, args, ok);
  else if (s->f != NULL) {
    /* (A device or FIFO is opened only now that everything succeeded.) */
    if (ok && s->through != NULL && sink_open_through(s) != EXIT_OK)
      rc = EXIT_RUNTIME;
    errno = 0;
    if (rc == EXIT_OK && ((s->spooled && copy_spool(s->f, s->dest) != 0) ||
                          flush_checked(s->dest) != 0)) {
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

/* ---- the reader thread -------------------------------------------------- */

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

static int pipeline_start(pipeline *p, const cli_args *args) {
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

/* The next chunk in input order (NULL at the end), or EXIT_RUNTIME after
 * reporting the read error. */
static int pipeline_next(pipeline *p, clphmm_dataset **chunk) {
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

/* Stop the reader (it finishes the chunk it is parsing) and free it all. */
static void pipeline_stop(pipeline *p) {
  if (p->started) {
    pthread_mutex_lock(&p->lock);
    p->cancel = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
  }
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->changed);
  clphmm_dataset_destroy(p->slot);
  clphmm_reader_close(p->rd);
}

/* ---- the run ------------------------------------------------------------- */

/* Compute and write the input chunk by chunk as the reader thread delivers
 * it, so that memory stays bounded whatever its size. The next chunk is
 * taken before the results of the current one are written, which tells
 * whether they are the last. */
static int run(const cli_args *args) {
  pipeline pl;
  progress_start(&cli_progress, args);
  int rc = pipeline_start(&pl, args);
  clphmm_context *ctx = NULL;
  clphmm_dataset *chunk = NULL, *next = NULL;
  sink out = {0};
  if (rc == EXIT_OK)
    rc = sink_prepare(&out, args->output);
  if (rc == EXIT_OK)
    rc = pipeline_next(&pl, &chunk);
  while (rc == EXIT_OK && chunk != NULL) {
    double *values = NULL;
    size_t n = 0;
    rc = compute_chunk(args, &ctx, chunk, &values, &n);
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
  pipeline_stop(&pl);
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

int main(int argc, char **argv) {
  keep_freed_memory();
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
