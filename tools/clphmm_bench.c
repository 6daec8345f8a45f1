/* clphmm-bench: measure kernel and end-to-end throughput on synthetic
 * workloads, checked against the CPU reference on a sample of pairs.
 *
 *   clphmm-bench [--device SPEC] [--precision float|double] [-n REPS]
 *                [--check PAIRS] [--seed S] --synthetic read=L,hap=L,pairs=N
 *
 * Cells are counted as the sum of read length x haplotype length. Kernel
 * time comes from OpenCL profiling events, summed over a compute call's
 * launches; wall time spans clphmm_compute (host memory to host memory).
 * Reported: median, min and max over REPS runs after one warm-up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clphmm.h"

typedef struct args {
  const char *device;
  clphmm_precision precision;
  int reps;
  size_t check;
  unsigned long long seed;
  unsigned read_len, hap_len;
  unsigned long long pairs, cells;
} args;

typedef struct workload {
  clphmm_batch *batches;
  size_t n_batches, n_pairs;
  clphmm_read *reads;
  clphmm_haplotype *haps;
  char *bases;
  uint8_t *quals;
} workload;

static unsigned long long rng_state;
static unsigned rnd(unsigned n) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (unsigned)((rng_state * 0x2545F4914F6CDD1Dull) >> 33) % n;
}

static int usage(const char *msg) {
  if (msg)
    fprintf(stderr, "clphmm-bench: %s\n", msg);
  fprintf(stderr,
          "usage: clphmm-bench [--device SPEC] [--precision float|double] "
          "[-n REPS] [--check PAIRS] [--seed S]\n"
          "                    --synthetic read=L,hap=L,pairs=N|cells=N\n");
  return 2;
}

static int parse_synthetic(const char *spec, args *a) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (!eq)
      return 0;
    *eq = '\0';
    unsigned long long v = strtoull(eq + 1, NULL, 10);
    if (!strcmp(tok, "read"))
      a->read_len = (unsigned)v;
    else if (!strcmp(tok, "hap"))
      a->hap_len = (unsigned)v;
    else if (!strcmp(tok, "pairs"))
      a->pairs = v;
    else if (!strcmp(tok, "cells"))
      a->cells = (unsigned long long)strtod(eq + 1, NULL);
    else
      return 0;
  }
  return a->read_len > 0 && a->hap_len > 0 && (a->pairs || a->cells);
}

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  a->reps = 5;
  a->check = 200;
  a->seed = 42;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--device") && v)
      a->device = argv[++i];
    else if (!strcmp(o, "--precision") && v) {
      i++;
      if (!strcmp(v, "float"))
        a->precision = CLPHMM_PRECISION_FLOAT;
      else if (!strcmp(v, "double"))
        a->precision = CLPHMM_PRECISION_DOUBLE;
      else
        return usage("--precision must be float or double");
    } else if (!strcmp(o, "-n") && v)
      a->reps = atoi(argv[++i]);
    else if (!strcmp(o, "--check") && v)
      a->check = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(o, "--seed") && v)
      a->seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(o, "--synthetic") && v) {
      if (!parse_synthetic(argv[++i], a))
        return usage("bad --synthetic spec");
    } else
      return usage("unknown or incomplete option");
  }
  if (!a->read_len)
    return usage("--synthetic is required");
  if (a->reps < 1)
    return usage("-n must be at least 1");
  return 0;
}

/* Batches of 8 reads x 8 haplotypes, like a HaplotypeCaller region: the
 * haplotypes are variants of one random sequence (~0.1% substitutions
 * each, the density of human heterozygous sites), the reads copies of it
 * with ~0.5% errors, GATK-like qualities. */
static int make_workload(const args *a, workload *w) {
  enum { NR = 8, NH = 8 };
  unsigned long long pairs = a->pairs;
  if (!pairs)
    pairs = a->cells / ((unsigned long long)a->read_len * a->hap_len);
  pairs = (pairs + NR * NH - 1) / (NR * NH) * (NR * NH);
  w->n_batches = pairs / (NR * NH);
  w->n_pairs = pairs;
  size_t nreads = w->n_batches * NR, nhaps = w->n_batches * NH;
  w->batches = calloc(w->n_batches, sizeof *w->batches);
  w->reads = calloc(nreads, sizeof *w->reads);
  w->haps = calloc(nhaps, sizeof *w->haps);
  w->bases = malloc(nreads * a->read_len + nhaps * a->hap_len);
  w->quals = malloc(nreads * 4 * (size_t)a->read_len);
  if (!w->batches || !w->reads || !w->haps || !w->bases || !w->quals)
    return 0;
  rng_state = a->seed ? a->seed : 1;
  char *b = w->bases;
  uint8_t *q = w->quals;
  for (size_t bt = 0; bt < w->n_batches; bt++) {
    clphmm_haplotype *hp = &w->haps[bt * NH];
    for (int h = 0; h < NH; h++, b += a->hap_len) {
      for (unsigned j = 0; j < a->hap_len; j++)
        b[j] = h == 0 || rnd(1000) == 0 ? "ACGT"[rnd(4)] : hp[0].bases[j];
      hp[h] = (clphmm_haplotype){b, a->hap_len};
    }
    clphmm_read *rd = &w->reads[bt * NR];
    for (int r = 0; r < NR; r++, b += a->read_len, q += 4 * a->read_len) {
      unsigned L = a->read_len;
      unsigned start = a->hap_len > L ? rnd(a->hap_len - L + 1) : 0;
      for (unsigned i = 0; i < L; i++) {
        int copy = start + i < a->hap_len && rnd(1000) >= 5;
        b[i] = copy ? hp[0].bases[start + i] : "ACGT"[rnd(4)];
        q[i] = (uint8_t)(rnd(10) == 0 ? 6 : 20 + rnd(21));
        q[L + i] = (uint8_t)(40 + rnd(6));
        q[2 * L + i] = (uint8_t)(40 + rnd(6));
        q[3 * L + i] = 10;
      }
      rd[r] = (clphmm_read){b, q, q + L, q + 2 * L, q + 3 * L, L};
    }
    w->batches[bt] = (clphmm_batch){rd, NR, hp, NH};
  }
  return 1;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Max |device - reference| over up to `n` batches spread over the run. */
static double check_sample(const args *a, const workload *w,
                           const double *out, size_t n_check) {
  double worst = 0;
  size_t per = w->batches[0].n_reads * w->batches[0].n_haplotypes;
  size_t nb = (n_check + per - 1) / per, step = w->n_batches / (nb ? nb : 1);
  double ref[64];
  for (size_t k = 0; k < nb && k * (step ? step : 1) < w->n_batches; k++) {
    size_t bt = k * (step ? step : 1);
    if (clphmm_reference(&w->batches[bt], 1, a->precision, ref))
      return INFINITY;
    for (size_t i = 0; i < per; i++) {
      double x = out[bt * per + i], y = ref[i];
      double d = x == y ? 0.0 : fabs(x - y); /* -inf == -inf */
      if (!(d <= worst))
        worst = d;
    }
  }
  return worst;
}

int main(int argc, char **argv) {
  args a;
  int rc = parse_args(argc, argv, &a);
  if (rc)
    return rc;
  workload w;
  memset(&w, 0, sizeof w);
  if (!make_workload(&a, &w)) {
    fprintf(stderr, "clphmm-bench: out of memory building the workload\n");
    return 1;
  }
  clphmm_options o;
  clphmm_options_init(&o);
  o.device = a.device;
  o.precision = a.precision;
  clphmm_context *ctx;
  double t0 = now();
  if (clphmm_context_create(&o, &ctx)) {
    fprintf(stderr, "clphmm-bench: %s\n", clphmm_last_error(NULL));
    return 1;
  }
  double t_create = now() - t0;
  double *out = malloc(w.n_pairs * sizeof *out);
  double *kern = calloc((size_t)a.reps, sizeof *kern);
  double *wall = calloc((size_t)a.reps, sizeof *wall);
  if (!out || !kern || !wall)
    return 1;
  clphmm_stats st = {0};
  for (int r = -1; r < a.reps; r++) {
    t0 = now();
    if (clphmm_compute(ctx, w.batches, w.n_batches, out)) {
      fprintf(stderr, "clphmm-bench: %s\n", clphmm_last_error(ctx));
      return 1;
    }
    double t = now() - t0;
    clphmm_context_stats(ctx, &st);
    if (r >= 0) {
      kern[r] = st.kernel_seconds;
      wall[r] = t;
    }
  }
  double err = check_sample(&a, &w, out, a.check);
  qsort(kern, (size_t)a.reps, sizeof *kern, cmp_double);
  qsort(wall, (size_t)a.reps, sizeof *wall, cmp_double);
  double cells = (double)st.cells, km = kern[a.reps / 2], wm = wall[a.reps / 2];
  clphmm_device_info info;
  clphmm_context_device(ctx, &info);
  printf("%-28s %-6s read=%-5u hap=%-5u pairs=%-9zu cells=%.3e  "
         "kernel %.4fs [%.4f..%.4f] %.3f TCUPS  wall %.3fs %.1f GCUPS  "
         "rescued %llu  max|err| %.2e  create %.2fs\n",
         info.name, a.precision ? "double" : "float", a.read_len, a.hap_len,
         w.n_pairs, cells, km, kern[0], kern[a.reps - 1], cells / km * 1e-12,
         wm, cells / wm * 1e-9, (unsigned long long)st.rescued_pairs, err,
         t_create);
  clphmm_context_destroy(ctx);
  free(out);
  free(kern);
  free(wall);
  free(w.batches);
  free(w.reads);
  free(w.haps);
  free(w.bases);
  free(w.quals);
  return err <= (a.precision ? 1e-7 : 1e-5) ? 0 : 3;
}
