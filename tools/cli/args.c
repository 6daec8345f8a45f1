/* clphmm: options and --help. */
#define _GNU_SOURCE

#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

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

void cli_print_help(void) {
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

/* getopt_long's '?' for the argument `arg` being parsed: an unknown or
 * ambiguous option, or a value given to a long option that takes none
 * ("--reference=1", "--prog=1"). getopt then sets optopt to that option's
 * value: the letter of its short spelling, or for a long-only one no
 * character at all, so it cannot name the option by itself. (While a
 * bundle of short options is parsed, `arg` is the argument before it:
 * only a long option without an argument whose value is optopt is
 * named as such.) */
static int bad_option(const char *arg, int opt) {
  const size_t n = strcspn(arg, "=");
  if (opt != 0 && strncmp(arg, "--", 2) == 0 && arg[n] == '=')
    for (const struct option *o = long_options; o->name != NULL; o++)
      if (o->has_arg == no_argument && o->val == opt &&
          strncmp(o->name, arg + 2, n - 2) == 0)
        return usage_error("option '--%s' takes no argument", o->name);
  if (opt > ' ' && opt < 127)
    return usage_error("unknown option '-%c'", opt);
  return usage_error("unknown or ambiguous option '%s'", arg);
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

int cli_parse_args(int argc, char **argv, cli_args *args) {
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
    default: /* '?' */ return bad_option(argv[optind - 1], optopt);
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
