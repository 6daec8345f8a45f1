/* Every kernel build the library can ask of an OpenCL compiler, for the
 * offline compile of scripts/kernels-offline.sh: for each built-in entry of
 * the variant table, the variant sets the planner makes of it for a device
 * of that entry (float kernels, the double rescue of float mode, double
 * mode; fused arithmetic on GPUs, exact on CPUs, as the entry's devices
 * default to), each with every shuffle backend that
 * makes sense on the compiler target of that entry's devices, with the
 * build options the host passes (cph_variant_options, after
 * cph_variant_fit) and the program source it builds (cph_program_sources,
 * concatenated as clCreateProgramWithSource sees it).
 *
 *   kernel_variants DIR
 *
 * writes DIR/pairhmm.cl and DIR/builds.txt, one build per line, no
 * duplicates: "TARGET BACKEND OPTIONS...". Targets: nvptx64 (NVIDIA
 * entries: nvidia, local), amdgcn (AMD entries: amd, local), spir64 (all
 * others, Intel GPUs and CPUs through PoCL: intel, khr, khr-abs, local).
 * Vector variants (the CPU kernel) are listed for every target, with the
 * local backend only (they exchange nothing), in the entry's arithmetic
 * form on its own target and fused on the others (GPUs).
 * Exits non-zero when an entry does not select itself for its own device
 * (the listing would then miss it) or a target gets no build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "opencl/program.h"
#include "tuning/plan.h"
#include "tuning/tuning.h"

#define MAX_BUILDS 8192

static char *builds[MAX_BUILDS];
static size_t n_builds;

static void add_build(const char *line) {
  for (size_t i = 0; i < n_builds; i++)
    if (!strcmp(builds[i], line))
      return;
  if (n_builds == MAX_BUILDS || !(builds[n_builds] = strdup(line))) {
    fprintf(stderr, "kernel_variants: too many builds\n");
    exit(1);
  }
  n_builds++;
}

static int has(const char *hay, const char *needle) {
  for (size_t n = strlen(needle); *hay; hay++)
    if (!strncasecmp(hay, needle, n))
      return 1;
  return 0;
}

/* The compiler target of an entry's devices and its backends. */
static const char *target_of(const cph_tuning_entry *e, unsigned *backends) {
  if (has(e->vendor, "NVIDIA")) {
    *backends = 1u << CPH_SHUFFLE_NVIDIA | 1u << CPH_SHUFFLE_LOCAL;
    return "nvptx64";
  }
  if (has(e->vendor, "Advanced Micro Devices") || has(e->vendor, "AMD")) {
    *backends = 1u << CPH_SHUFFLE_AMD | 1u << CPH_SHUFFLE_LOCAL;
    return "amdgcn";
  }
  *backends = 1u << CPH_SHUFFLE_INTEL | 1u << CPH_SHUFFLE_KHR |
              1u << CPH_SHUFFLE_KHR_ABS | 1u << CPH_SHUFFLE_LOCAL;
  return "spir64";
}

/* A device the entry matches (and, being built from its key, matches
 * best): 1024 work-items and 64 KiB of local memory per work-group. */
static cph_device device_of(const cph_tuning_entry *e) {
  cph_device d;
  memset(&d, 0, sizeof d);
  snprintf(d.info.name, sizeof d.info.name, "%s", e->name[0] ? e->name : "any");
  snprintf(d.info.vendor, sizeof d.info.vendor, "%s", e->vendor);
  snprintf(d.arch, sizeof d.arch, "%s", e->arch);
  d.info.type = e->type == CPH_TUNING_ANY_TYPE ? CLPHMM_DEVICE_OTHER
                                               : (clphmm_device_type)e->type;
  d.info.local_mem_bytes = 64 * 1024;
  d.info.has_fp64 = 1;
  d.max_work_group_size = 1024;
  return d;
}

static int list_entry(const cph_tuning_entry *e) {
  const cph_device dev = device_of(e);
  char want[256], line[1536];
  cph_tuning_key(e, want, sizeof want);
  cph_tuning_choice c;
  if (cph_tuning_for_device(&dev, &c) || strcmp(c.key, want)) {
    fprintf(stderr, "kernel_variants: entry %s: its device selects %s\n", want,
            c.key);
    return 1;
  }
  unsigned backends;
  const char *target = target_of(e, &backends);
  /* (double, scaled) as the engine plans them: float kernels, the double
   * rescue of float mode, double mode; then float mode's exact set
   * (cph_plan_exact: double mode's without fused multiply-adds). */
  static const int plans[4][2] = {{0, 1}, {1, 1}, {1, 0}, {1, 0}};
  for (int p = 0; p < 4; p++) {
    const int dbl = plans[p][0];
    cph_variant_set set;
    if (p == 3 ? cph_plan_exact(&dev, &set)
               : cph_plan_variants(&dev, dbl, plans[p][1], &set)) {
      fprintf(stderr, "kernel_variants: entry %s: %s\n", want,
              clphmm_last_error(NULL));
      return 1;
    }
    for (size_t i = 0; i < cph_plan_count(&set); i++) {
      if (set.v[i].vec) {
        /* The vector kernel exchanges nothing (local backend only), and
         * compiles for every target: a GPU may be told to use it
         * (CLPHMM_VARIANTS), with its fused arithmetic. */
        static const char *const all[] = {"nvptx64", "amdgcn", "spir64"};
        for (int t = 0; t < 3; t++) {
          cph_variant v = set.v[i];
          if (strcmp(all[t], target))
            v.fma = 1;
          int n = snprintf(line, sizeof line, "%s local ", all[t]);
          cph_variant_options(&v, dbl, line + n, sizeof line - (size_t)n);
          add_build(line);
        }
        continue;
      }
      for (int b = 0; b <= CPH_SHUFFLE_LAST; b++) {
        if (!(backends & 1u << b))
          continue;
        cph_variant v = set.v[i];
        v.shuffle = (cph_shuffle)b;
        v = cph_variant_fit(&v, dbl, &dev);
        /* Every flavour of the program (engine/context.h CPH_KF_*): with
         * split pairs (not long-read variants: their tiles run one after
         * the other), in float mode's first pass with and without the
         * early exit, and computing its rows (without the float exit:
         * the small-call variant's launches and those of wide pairs,
         * engine/context.h CPH_INLINE_COLS). */
        const int splits = !v.seq, exits = !dbl && v.early_exit;
        for (int in = 0; in <= 1; in++)
          for (int sp = 0; sp <= splits; sp++)
            for (int ex = 0; ex <= (in ? 0 : exits); ex++) {
              v.split = sp;
              v.inline_rows = in;
              v.early_exit = exits ? ex : v.early_exit;
              int n = snprintf(line, sizeof line, "%s %s ", target,
                               cph_shuffle_name(v.shuffle));
              cph_variant_options(&v, dbl, line + n, sizeof line - (size_t)n);
              add_build(line);
            }
      }
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: kernel_variants DIR\n");
    return 2;
  }
  char path[4096];
  mkdir(argv[1], 0777); /* or it exists: the writes below say if not */
  /* Only the built-in table: no tuning file, no overrides, no extra
   * options (the missing file in DIR is the empty override table). */
  snprintf(path, sizeof path, "%s/no-tuning-file", argv[1]);
  setenv("CLPHMM_TUNING_FILE", path, 1);
  const char *unset[] = {"CLPHMM_VARIANTS", "CLPHMM_DOUBLE_VARIANTS",
                         "CLPHMM_SHUFFLE", "CLPHMM_FMA",
                         "CLPHMM_BUILD_OPTIONS"};
  for (size_t i = 0; i < sizeof unset / sizeof *unset; i++)
    unsetenv(unset[i]);

  size_t n;
  const cph_tuning_entry *e = cph_tuning_builtin(&n);
  int bad = 0;
  for (size_t i = 0; i < n; i++)
    bad |= list_entry(&e[i]);

  cph_sources s;
  if (cph_program_sources(&s)) {
    fprintf(stderr, "kernel_variants: %s\n", clphmm_last_error(NULL));
    return 1;
  }
  snprintf(path, sizeof path, "%s/pairhmm.cl", argv[1]);
  FILE *f = fopen(path, "wb");
  for (size_t i = 0; f && i < CPH_N_PROGRAM_FILES; i++)
    fwrite(s.text[i], 1, s.size[i], f);
  cph_sources_free(&s);
  if (!f || fclose(f)) {
    fprintf(stderr, "kernel_variants: cannot write %s\n", path);
    return 1;
  }
  snprintf(path, sizeof path, "%s/builds.txt", argv[1]);
  f = fopen(path, "w");
  for (size_t i = 0; f && i < n_builds; i++)
    fprintf(f, "%s\n", builds[i]);
  if (!f || fclose(f)) {
    fprintf(stderr, "kernel_variants: cannot write %s\n", path);
    return 1;
  }
  const char *targets[] = {"nvptx64 ", "amdgcn ", "spir64 "};
  for (int t = 0; t < 3; t++) {
    size_t k = 0;
    for (size_t i = 0; i < n_builds; i++)
      k += !strncmp(builds[i], targets[t], strlen(targets[t]));
    printf("%s%zu builds\n", targets[t], k);
    bad |= k == 0;
  }
  for (size_t i = 0; i < n_builds; i++)
    free(builds[i]);
  return bad;
}
