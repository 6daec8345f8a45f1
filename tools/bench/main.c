/* clphmm-bench: measure, compare and tune clphmm on OpenCL devices.
 * See `clphmm-bench --help` and README.md ("Benchmarks"). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static const char help[] =
    "usage: clphmm-bench --list\n"
    "       clphmm-bench [--device SPEC]... WORKLOAD... [OPTION]...\n"
    "       clphmm-bench --tune [--device SPEC]... [TUNE OPTION]...\n"
    "\n"
    "Workloads (any number, run in this order):\n"
    "  --input FILE          an input file in either format (see clphmm)\n"
    "  --repeat N            repeat the input file's batches N times\n"
    "  --raw-base-quals      keep the input file's base qualities below 6\n"
    "                        (as clphmm --raw-base-quals)\n"
    "  --synthetic SPEC      read=L,hap=L (equal lengths, batches of 8x8;\n"
    "                        reads=R,haps=H change that), or mix=hc (a\n"
    "                        HaplotypeCaller-like mix; reads=R,haps=H fix\n"
    "                        the region shape), or mix=long (reads of\n"
    "                        1-20 kb; read=MIN-MAX changes that, hap=MIN-MAX\n"
    "                        draws haplotype lengths from a range); sized\n"
    "                        by pairs=N or cells=N; seed=S (repeatable)\n"
    "  --suite NAME          peak (L = 64..2048, 1e10 cells each), realistic\n"
    "                        (mix=hc at 1e8, 1e10, 1e11 cells), long (1e11\n"
    "                        cells of 1-20 kb reads), or all\n"
    "\n"
    "Instead of measuring:\n"
    "  --write FILE          write the workloads to FILE ('-': stdout) in\n"
    "                        the batch format that clphmm and gpuPairHMM\n"
    "                        read (qualities as generated: read it back\n"
    "                        with --raw-base-quals), then exit\n"
    "\n"
    "Options:\n"
    "  -d, --device SPEC     a device index, gpu, cpu, a name substring, a\n"
    "                        comma-separated list of those or all (every\n"
    "                        GPU, else every device) for one context of\n"
    "                        several devices, each (every device, one\n"
    "                        after the other), or reference (the CPU\n"
    "                        reference on all cores); repeatable; default:\n"
    "                        clphmm's default device\n"
    "  -p, --precision MODE  float (default) or double\n"
    "  -n N                  timed repetitions after one warm-up (default 5)\n"
    "  --calls N             per-call mode: after one untimed call of the\n"
    "                        whole workload, N timed calls of one batch\n"
    "                        (region) each, cycling through the workload;\n"
    "                        reports wall and kernel microseconds per call\n"
    "  --call-batches K|all  batches per call in per-call mode (default 1)\n"
    "  --results FILE        write every run's results to FILE, one log10\n"
    "                        likelihood per line as clphmm prints them\n"
    "  --check               compare every pair with the CPU reference\n"
    "                        (default: a sample spread over the workload)\n"
    "  --sample N            pairs in the sample (default 1000)\n"
    "  --sample-cells N      most cells in the sample (default 2e9)\n"
    "  --scale F             multiply every workload size by F (e.g. 0.001)\n"
    "  --max-cells N         cap every workload at N cells\n"
    "  --seed S              random seed of synthetic workloads (default 42)\n"
    "  --threads N           threads of the CPU reference (default: cores)\n"
    "  --no-startup          do not time context creation cold and warm\n"
    "  --json FILE           write the results as JSON\n"
    "  --commit ID           commit recorded in the JSON (default:\n"
    "                        $CLPHMM_COMMIT)\n"
    "  -v, --verbose         per-bin breakdown and where the time went\n"
    "                        (stages of the median run or call)\n"
    "  -h, --help            this help;  -V, --version  the version\n"
    "\n"
    "Tuning (--tune): times every variant of each read-length bin's capacity\n"
    "on that device, checked against the reference, and writes the fastest\n"
    "to the tuning file clphmm reads (a device on the vector kernel, as CPUs\n"
    "are, also tries vPxC/1, P each lane count up to 16, C the capacity):\n"
    "  --tune-bins LIST      bin capacities, e.g. 16,32,64 (default: the\n"
    "                        device's current bins)\n"
    "  --tune-wg LIST        work-group sizes to try (default 64,128,256)\n"
    "  --tune-lanes LIST     lanes per pair to try (default 1,2,4,...,32)\n"
    "  --tune-cells N        cells per bin (default 4e9, times --scale)\n"
    "  --tuning-file PATH    write there instead of the library's file\n"
    "\n"
    "Exit status: 0 success, 1 a device or run failed, 2 usage error, 3 a\n"
    "result differs from the reference by more than 1e-5 (double: 1e-7).\n";

static int usage(const char *fmt, const char *arg) {
  fprintf(stderr, "clphmm-bench: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'clphmm-bench --help'.\n");
  return 2;
}

/* Strict numbers: the whole argument, finite, in range. */
static int number(const char *s, double lo, double hi, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !(v >= lo && v <= hi))
    return 0;
  *out = v;
  return 1;
}

static void defaults(bench_options *o) {
  memset(o, 0, sizeof *o);
  o->reps = 5;
  o->sample_pairs = 1000;
  o->sample_cells = 2e9;
  o->scale = 1;
  o->seed = 42;
  o->startup = 1;
  o->tune_wg = "64,128,256";
  o->tune_lanes = "1,2,4,8,16,32";
  o->tune_cells = 4e9;
  o->progress = isatty(2);
  o->call_batches = 1;
}

/* Options that take a number. Returns 1 if `opt` is one, 0 if not, -1 on
 * a bad value. */
static int numeric_option(bench_options *o, const char *opt, const char *v) {
  double d;
#define NUM(name, lo, hi, dst)                                                 \
  if (!strcmp(opt, name)) {                                                    \
    if (!v || !number(v, lo, hi, &d))                                          \
      return -1;                                                               \
    dst;                                                                       \
    return 1;                                                                  \
  }
  NUM("-n", 1, 1e6, o->reps = (int)d)
  NUM("--repeat", 1, 1e6, o->repeat = (unsigned)d)
  NUM("--sample", 1, 1e12, o->sample_pairs = (size_t)d)
  NUM("--sample-cells", 1, 1e18, o->sample_cells = d)
  NUM("--scale", 1e-12, 1e6, o->scale = d)
  NUM("--max-cells", 1, 1e18, o->max_cells = d)
  NUM("--seed", 0, 1.8e19, o->seed = strtoull(v, NULL, 10))
  NUM("--threads", 1, 256, o->threads = (unsigned)d)
  NUM("--tune-cells", 1, 1e18, o->tune_cells = d)
  NUM("--calls", 1, 1e6, o->calls = (unsigned long)d)
#undef NUM
  return 0;
}

static int string_option(bench_options *o, const char *opt, const char *v) {
  if (!strcmp(opt, "--device") || !strcmp(opt, "-d")) {
    if (o->n_devices == BENCH_MAX_DEVICES)
      return -1;
    o->devices[o->n_devices++] = v;
  } else if (!strcmp(opt, "--synthetic")) {
    if (o->n_synthetic == BENCH_MAX_WORKLOADS)
      return -1;
    o->synthetic[o->n_synthetic++] = v;
  } else if (!strcmp(opt, "--precision") || !strcmp(opt, "-p")) {
    if (strcmp(v, "float") && strcmp(v, "double"))
      return -1;
    o->precision =
        strcmp(v, "double") ? CLPHMM_PRECISION_FLOAT : CLPHMM_PRECISION_DOUBLE;
  } else if (!strcmp(opt, "--input"))
    o->input = v;
  else if (!strcmp(opt, "--suite")) {
    const char *specs[BENCH_MAX_WORKLOADS], *suites[BENCH_MAX_WORKLOADS];
    if (!bench_suite(v, specs, suites, BENCH_MAX_WORKLOADS))
      return -1;
    o->suite = v;
  } else if (!strcmp(opt, "--json"))
    o->json = v;
  else if (!strcmp(opt, "--commit"))
    o->commit = v;
  else if (!strcmp(opt, "--tune-bins"))
    o->tune_bins = v;
  else if (!strcmp(opt, "--tune-wg"))
    o->tune_wg = v;
  else if (!strcmp(opt, "--tune-lanes"))
    o->tune_lanes = v;
  else if (!strcmp(opt, "--tuning-file"))
    o->tuning_file = v;
  else if (!strcmp(opt, "--write"))
    o->write = v;
  else if (!strcmp(opt, "--results"))
    o->results = v;
  else if (!strcmp(opt, "--call-batches")) {
    double d;
    if (strcmp(v, "all") && !number(v, 1, 1e9, &d))
      return -1;
    o->call_batches = strcmp(v, "all") ? (size_t)d : 0;
  } else
    return 0;
  return 1;
}

static int flag_option(bench_options *o, const char *opt) {
  if (!strcmp(opt, "--list"))
    o->list = 1;
  else if (!strcmp(opt, "--tune"))
    o->tune = 1;
  else if (!strcmp(opt, "--check"))
    o->check_all = 1;
  else if (!strcmp(opt, "--no-startup"))
    o->startup = 0;
  else if (!strcmp(opt, "-v") || !strcmp(opt, "--verbose"))
    o->verbose = 1;
  else if (!strcmp(opt, "--raw-base-quals"))
    o->read_flags |= CLPHMM_READ_RAW_BASE_QUALS;
  else
    return 0;
  return 1;
}

/* Returns -1 to continue, else an exit status. */
static int parse_args(int argc, char **argv, bench_options *o) {
  defaults(o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(help, stdout);
      return 0;
    }
    if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
      printf("clphmm-bench %s\n", clphmm_version());
      return 0;
    }
    if (flag_option(o, a))
      continue;
    int k = numeric_option(o, a, v);
    if (k == 0 && v)
      k = string_option(o, a, v);
    else if (k == 0 && !v && a[0] == '-' && a[1])
      return usage("unknown option '%s', or it needs a value", a);
    if (k < 0)
      return usage(v ? "bad value for %s" : "%s needs a value", a);
    if (k == 0)
      return usage("unknown option '%s'", a);
    i++;
  }
  if (o->list || o->tune)
    return -1;
  for (size_t k = 0; k < o->n_synthetic; k++) {
    char err[256];
    if (bench_spec_check(o->synthetic[k], err, sizeof err))
      return usage("%s", err);
  }
  if (!o->input && !o->n_synthetic && !o->suite)
    return usage("%s", "no workload: give --synthetic, --input or --suite");
  if (o->repeat && !o->input)
    return usage("%s", "--repeat needs --input");
  if (o->write && (o->results || o->calls || o->json))
    return usage("%s", "--write computes nothing: no --results, --calls or "
                       "--json with it");
  return -1;
}

/* ---- Running ------------------------------------------------------------ */

typedef struct session {
  bench_options *o;
  bench_device dev[BENCH_MAX_DEVICES];
  size_t n_dev;
  bench_run *runs;
  size_t n_runs;
  int failed, inaccurate;
} session;

/* Expand `each` into device indices; open every device (`all` and lists
 * are one context of several devices). */
static int open_devices(session *s) {
  static char idx[BENCH_MAX_DEVICES][24];
  const char *specs[BENCH_MAX_DEVICES];
  size_t n = 0;
  if (!s->o->n_devices)
    specs[n++] = "";
  for (size_t i = 0; i < s->o->n_devices; i++) {
    if (strcmp(s->o->devices[i], "each")) {
      specs[n++] = s->o->devices[i];
      continue;
    }
    size_t count = 0;
    if (clphmm_device_count(&count) || count == 0) {
      fprintf(stderr, "clphmm-bench: --device each: no OpenCL devices%s%s\n",
              count ? "" : ": ", count ? "" : clphmm_last_error(NULL));
      return 1;
    }
    for (size_t d = 0; d < count && n < BENCH_MAX_DEVICES; d++) {
      snprintf(idx[d], sizeof idx[d], "%zu", d);
      specs[n++] = idx[d];
    }
  }
  for (size_t i = 0; i < n; i++) {
    char err[1024];
    if (bench_device_open(specs[i], s->o, &s->dev[i], err, sizeof err)) {
      fprintf(stderr, "clphmm-bench: device '%s': %s\n", specs[i], err);
      return 1;
    }
    s->n_dev = i + 1;
  }
  return 0;
}

/* Build workload `k` of the session's list; 1 when there is none. */
static int next_workload(session *s, size_t k, bench_workload *w, char *err,
                         size_t err_n) {
  const bench_options *o = s->o;
  if (o->input) {
    if (k == 0)
      return bench_file(o->input, o->repeat, o->read_flags, w, err, err_n) ? -1
                                                                           : 0;
    k--;
  }
  if (k < o->n_synthetic)
    return bench_synthetic(o->synthetic[k], o, w, err, err_n) ? -1 : 0;
  k -= o->n_synthetic;
  const char *specs[BENCH_MAX_WORKLOADS], *suites[BENCH_MAX_WORKLOADS];
  size_t n =
      o->suite ? bench_suite(o->suite, specs, suites, BENCH_MAX_WORKLOADS) : 0;
  if (k >= n)
    return 1;
  int rc = bench_synthetic(specs[k], o, w, err, err_n);
  if (!rc) { /* name suite workloads after their suite */
    char name[128];
    snprintf(name, sizeof name, "%s %s", suites[k], specs[k]);
    snprintf(w->name, sizeof w->name, "%s", name);
  }
  return rc ? -1 : 0;
}

/* --write: every workload of the session, one after the other, into one
 * file; only one workload is in memory at a time. A failed write removes
 * the file. */
static int write_all(session *s) {
  const char *path = s->o->write;
  int to_stdout = !strcmp(path, "-");
  FILE *f = to_stdout ? stdout : fopen(path, "w");
  if (!f) {
    fprintf(stderr, "clphmm-bench: %s: cannot create: %s\n", path,
            strerror(errno));
    return 1;
  }
  static char buf[1 << 20];
  setvbuf(f, buf, _IOFBF, sizeof buf);
  int rc = 0;
  for (size_t k = 0; !rc; k++) {
    bench_workload w;
    char err[1024];
    int got = next_workload(s, k, &w, err, sizeof err);
    if (got > 0)
      break;
    if (got == 0)
      got = bench_write_workload(f, &w, err, sizeof err);
    if (got) {
      fprintf(stderr, "clphmm-bench: %s: %s\n", path, err);
      rc = 1;
    }
    bench_workload_free(&w);
  }
  int failed = fflush(f) != 0 || ferror(f);
  if (!to_stdout)
    failed |= fclose(f) != 0;
  if (failed && !rc)
    fprintf(stderr, "clphmm-bench: %s: write error\n", path);
  if ((failed || rc) && !to_stdout)
    remove(path);
  return failed || rc;
}

static int run_workload(session *s, const bench_workload *w) {
  char err[1024];
  size_t *off = bench_offsets(w);
  bench_sample smp;
  if (!off || bench_sample_make(w, off, s->o, &smp, err, sizeof err)) {
    fprintf(stderr, "clphmm-bench: %s: %s\n", w->name,
            off ? err : "out of memory");
    free(off);
    return 1;
  }
  bench_run *r = realloc(s->runs, (s->n_runs + s->n_dev) * sizeof *r);
  if (!r) {
    bench_sample_free(&smp);
    free(off);
    return 1;
  }
  s->runs = r;
  double level = s->o->precision == CLPHMM_PRECISION_DOUBLE ? 1e-7 : 1e-5;
  for (size_t d = 0; d < s->n_dev; d++) {
    bench_run *run = &s->runs[s->n_runs++];
    bench_measure(&s->dev[d], w, off, &smp, s->o, run);
    if (!run->ok) {
      fprintf(stderr, "clphmm-bench: %s on %s: %s\n", w->name, run->device,
              run->error);
      s->failed = 1;
    } else if (!(run->max_err <= level))
      s->inaccurate = 1;
  }
  bench_sample_free(&smp);
  free(off);
  return 0;
}

static int run_all(session *s) {
  for (size_t k = 0;; k++) {
    bench_workload w;
    char err[1024];
    int rc = next_workload(s, k, &w, err, sizeof err);
    if (rc > 0)
      return 0;
    if (rc < 0) {
      fprintf(stderr, "clphmm-bench: %s\n", err);
      return 1;
    }
    rc = run_workload(s, &w);
    bench_workload_free(&w);
    if (rc)
      return 1;
  }
}

int main(int argc, char **argv) {
  bench_options o;
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0)
    return rc;
  if (o.list)
    return bench_list(&o);
  if (o.tune)
    return bench_tune(&o);
  session s;
  memset(&s, 0, sizeof s);
  s.o = &o;
  if (o.write)
    return write_all(&s);
  if (o.results && !(o.results_file = fopen(o.results, "w"))) {
    fprintf(stderr, "clphmm-bench: %s: cannot create: %s\n", o.results,
            strerror(errno));
    return 1;
  }
  rc = open_devices(&s);
  if (!rc)
    rc = run_all(&s);
  if (s.n_runs)
    bench_print_table(stdout, s.runs, s.n_runs, s.n_dev, o.verbose);
  char err[512];
  if (s.n_runs && o.json &&
      bench_write_json(o.json, s.runs, s.n_runs, &o, err, sizeof err)) {
    fprintf(stderr, "clphmm-bench: %s\n", err);
    rc = 1;
  }
  if (o.results_file && (ferror(o.results_file) | fclose(o.results_file))) {
    fprintf(stderr, "clphmm-bench: %s: write error\n", o.results);
    rc = 1;
  }
  for (size_t d = 0; d < s.n_dev; d++)
    bench_device_close(&s.dev[d]);
  free(s.runs);
  if (rc || s.failed)
    return 1;
  return s.inaccurate ? 3 : 0;
}
