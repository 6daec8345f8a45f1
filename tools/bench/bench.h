/* clphmm-bench: shared types of the benchmark tool's modules.
 *
 *   main.c      options, orchestration, exit status
 *   workload.c  synthetic workloads, input files, the standard suites
 *   measure.c   timing one workload on one device or on the CPU reference
 *   reference.c the CPU reference on all cores (threads), accuracy checks
 *   report.c    the comparison table (stdout) and the JSON file
 *   write.c     --write (workloads as batch files), --results
 *   json.c      a small escaping JSON writer
 *   tune.c      --tune: time candidate variants per read-length bin
 *   list.c      --list: platforms, devices and the plan for each */
#ifndef CLPHMM_BENCH_H
#define CLPHMM_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "clphmm.h"

#define BENCH_MAX_DEVICES 64
#define BENCH_MAX_WORKLOADS 64

/* ---- Options --------------------------------------------------------------
 */

typedef struct bench_options {
  const char *devices[BENCH_MAX_DEVICES]; /* --device, repeatable */
  size_t n_devices;
  const char *synthetic[BENCH_MAX_WORKLOADS]; /* --synthetic, repeatable */
  size_t n_synthetic;
  const char *input;   /* --input FILE */
  unsigned repeat;     /* --repeat N */
  unsigned read_flags; /* --raw-base-quals: CLPHMM_READ_RAW_BASE_QUALS */
  const char *write;   /* --write FILE: write the workloads, compute nothing */
  const char *results; /* --results FILE: every run's results */
  FILE *results_file;  /* open while the runs go */
  unsigned long calls; /* --calls N: per-call mode (0: whole workload) */
  size_t call_batches; /* --call-batches K: batches per call (0: all) */
  const char *suite;   /* --suite peak|realistic|long|all */
  clphmm_precision precision;
  int reps;            /* -n */
  int check_all;       /* --check */
  size_t sample_pairs; /* --sample N */
  double sample_cells; /* --sample-cells N: reference budget */
  double scale;        /* --scale F: multiplies workload sizes */
  double max_cells;    /* --max-cells N: caps workload sizes (0: none) */
  unsigned long long seed;
  unsigned threads; /* reference threads (0: all cores) */
  int verbose;
  int startup;        /* measure context creation cold / warm */
  const char *json;   /* --json FILE */
  const char *commit; /* --commit, else $CLPHMM_COMMIT */
  int list, tune;
  const char *tune_bins;   /* --tune-bins 16,32,...: bin capacities */
  const char *tune_wg;     /* --tune-wg 64,128,...: work-group sizes */
  const char *tune_lanes;  /* --tune-lanes 4,8,...: lanes per pair */
  double tune_cells;       /* cells per bin workload */
  const char *tuning_file; /* --tuning-file: where --tune writes */
  int progress;            /* stderr is a terminal */
} bench_options;

/* ---- Workloads ----------------------------------------------------------- */

typedef struct bench_workload {
  char name[128]; /* "peak L=64", "hc cells=1e+08", "file 10s.in x3" */
  char kind[16];  /* "equal", "hc", "long", "bin", "file" */
  clphmm_batch *batches;
  size_t n_batches;
  size_t n_pairs;
  uint64_t cells;
  double mean_read, mean_hap; /* over pairs */
  unsigned read_len, hap_len; /* the equal-length workloads' L, else 0 */
  /* Owned storage. */
  clphmm_read *reads;
  clphmm_haplotype *haps;
  char *bases;
  uint8_t *quals;
  clphmm_dataset *dataset;
} bench_workload;

/* A synthetic workload from a spec (see the help text). Returns 0 on
 * success, else writes why into err. */
int bench_synthetic(const char *spec, const bench_options *o, bench_workload *w,
                    char *err, size_t err_n);
/* Check a --synthetic spec without building it (0: fine). */
int bench_spec_check(const char *spec, char *err, size_t err_n);
/* Specs of a standard suite (or of all: "all"), one per workload, and the
 * suite each belongs to; returns the count, 0 for an unknown name. */
size_t bench_suite(const char *name, const char **specs, const char **suites,
                   size_t max);
/* An input file, its batches repeated `repeat` times; `flags` as in
 * clphmm_dataset_read_file. */
int bench_file(const char *path, unsigned repeat, unsigned flags,
               bench_workload *w, char *err, size_t err_n);
/* Reads of lengths in (lo, hi] against haplotypes about 1.5 times longer,
 * about `cells` cells: the --tune workload of one bin. */
int bench_bin_workload(unsigned lo, unsigned hi, double cells,
                       unsigned long long seed, bench_workload *w);
void bench_workload_free(bench_workload *w);
/* Offsets of each batch's first result (n_batches + 1 entries). */
size_t *bench_offsets(const bench_workload *w);

/* ---- Reference and accuracy -------------------------------------------- */

/* Batches [b0, b1) of `w` with the CPU reference on `threads` threads
 * (0: all cores), results at out[offset of batch b - offset of b0]. */
int bench_reference(const bench_workload *w, const size_t *offsets, size_t b0,
                    size_t b1, clphmm_precision p, unsigned threads,
                    double *out, char *err, size_t err_n);

/* The reference results of a sample of the workload's batches (every batch
 * with check_all), computed once and compared with each device. */
typedef struct bench_sample {
  size_t *batch; /* batch indices */
  size_t n;
  double *ref; /* reference results of those batches, in order */
  size_t n_pairs;
} bench_sample;

int bench_sample_make(const bench_workload *w, const size_t *offsets,
                      const bench_options *o, bench_sample *s, char *err,
                      size_t err_n);
void bench_sample_free(bench_sample *s);
/* Max and mean |log10 device - log10 reference| over the sample. */
void bench_sample_compare(const bench_sample *s, const bench_workload *w,
                          const size_t *offsets, const double *out,
                          double *max_err, double *mean_err);

/* ---- Measurements ------------------------------------------------------- */

typedef struct bench_stat {
  double median, min, max;
} bench_stat;

/* Where the time of one clphmm_compute went (clphmm_stats' stage fields;
 * the CPU reference has only wall = kernel = its own time). */
typedef struct bench_stages {
  double wall, prepare, upload, kernel, rows, download, rescue, finish;
  uint64_t chunks;
} bench_stages;

typedef struct bench_run {
  /* Device. */
  char device[256];
  char driver[256];
  char platform[256];
  long device_index; /* -1: the CPU reference */
  char variants[512];
  char shuffle[16];
  /* Workload. */
  bench_workload w; /* a copy without its storage (pointers NULL) */
  clphmm_precision precision;
  /* Results. */
  int reps;
  bench_stat kernel, wall;
  uint64_t rescued, early_exits, cpu_pairs, exact_pairs, underflow_stops,
      split_pairs, exact_direct, double_first, double_first_checked, launches;
  double max_err, mean_err;
  size_t checked_pairs;
  double create_cold, create_warm; /* < 0: not measured */
  clphmm_stats last;               /* per-bin data of the last repetition */
  bench_stages stages; /* of the run (or call) with the median wall time */
  /* Per-call mode (--calls): kernel and wall above are per call. */
  unsigned long calls;    /* timed calls; 0: whole-workload runs */
  size_t call_batches;    /* batches per call */
  double call_pairs_mean; /* pairs per timed call */
  uint64_t call_cells;    /* cells of all timed calls */
  double call_wall_sum, call_kernel_sum;
  int ok;          /* measured */
  char error[512]; /* why not */
} bench_run;

double bench_now(void);
bench_stat bench_stats_of(double *v, int n); /* sorts v */

/* One device (an opened context; NULL with index -1 = the reference). */
typedef struct bench_device {
  char spec[64]; /* what was asked: "0", "gpu", "reference" */
  long index;    /* -1 for the reference */
  clphmm_context *ctx;
  clphmm_device_info info;
  clphmm_device_plan plan;
  double create_cold, create_warm;
} bench_device;

/* Open a device (spec as in clphmm --device, or "reference") and measure
 * context creation cold and warm when o->startup. */
int bench_device_open(const char *spec, const bench_options *o, bench_device *d,
                      char *err, size_t err_n);
void bench_device_close(bench_device *d);

/* Time `w` on `d`: one warm-up, o->reps repetitions; accuracy against the
 * sample. Fills r (r->ok = 0 and r->error on failure). */
void bench_measure(bench_device *d, const bench_workload *w,
                   const size_t *offsets, const bench_sample *s,
                   const bench_options *o, bench_run *r);

/* ---- Output ------------------------------------------------------------- */

void bench_print_table(FILE *f, const bench_run *runs, size_t n,
                       size_t n_devices, int verbose);
int bench_write_json(const char *path, const bench_run *runs, size_t n,
                     const bench_options *o, char *err, size_t err_n);

/* The batches of `w` in the batch format that clphmm and gpuPairHMM read
 * (see write.c). Returns 0, or -1 with the reason in err. */
int bench_write_workload(FILE *f, const bench_workload *w, char *err,
                         size_t err_n);
/* Values one per line as clphmm prints them ("%.12g", "-inf"); 0 or -1. */
int bench_write_results(FILE *f, const double *values, size_t n);

/* Progress on stderr (only when o->progress and after two seconds). */
void bench_progress(const bench_options *o, double start, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void bench_progress_done(const bench_options *o);

/* ---- Commands ----------------------------------------------------------- */

int bench_list(const bench_options *o);
int bench_tune(const bench_options *o);

/* Deterministic random numbers (xorshift64*), one stream per generator. */
typedef struct bench_rng {
  unsigned long long s;
} bench_rng;
static inline unsigned bench_rnd(bench_rng *r, unsigned n) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return (unsigned)((r->s * 0x2545F4914F6CDD1Dull) >> 33) % n;
}
static inline double bench_unif(bench_rng *r) {
  return bench_rnd(r, 1u << 30) / (double)(1u << 30);
}

#endif
