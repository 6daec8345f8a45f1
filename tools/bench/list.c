/* --list: every OpenCL platform and device, with what clphmm would use. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static const char *type_name(clphmm_device_type t) {
  switch (t) {
  case CLPHMM_DEVICE_CPU: return "cpu";
  case CLPHMM_DEVICE_GPU: return "gpu";
  case CLPHMM_DEVICE_ACCELERATOR: return "accelerator";
  case CLPHMM_DEVICE_OTHER: break;
  }
  return "other";
}

static void print_mem(const char *what, uint64_t bytes) {
  if (bytes >= (1ull << 30))
    printf("%s %.1f GiB", what, (double)bytes / (1ull << 30));
  else
    printf("%s %.0f KiB", what, (double)bytes / 1024);
}

static void print_plan(size_t i) {
  clphmm_device_plan p;
  if (clphmm_device_get_plan(i, &p)) {
    printf("  plan:        cannot be made: %s\n", clphmm_last_error(NULL));
    return;
  }
  printf("  arch:        %s\n", p.arch[0] ? p.arch : "(unknown)");
  printf("  subgroups:   %s\n",
         p.subgroup_extensions[0] ? p.subgroup_extensions : "none");
  printf("  shuffle:     %s, fma %s\n", p.shuffle, p.fma ? "on" : "off");
  printf("  variants:    %s\n", p.variants);
  printf("  chosen from: %s, %s\n", p.source, p.key);
  printf("  tuning file: %s%s\n", p.tuning_file[0] ? p.tuning_file : "(none)",
         p.tuning_file[0] && access(p.tuning_file, R_OK) != 0 ? " (absent)"
                                                              : "");
}

int bench_list(const bench_options *o) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  printf("reference: the CPU reference (--device reference), %u threads\n",
         o->threads ? o->threads : (unsigned)(cores > 0 ? cores : 1));
  size_t n = 0;
  if (clphmm_device_count(&n)) {
    fprintf(stderr, "clphmm-bench: no OpenCL devices: %s\n",
            clphmm_last_error(NULL));
    return 1;
  }
  if (n == 0) {
    fprintf(stderr, "clphmm-bench: no OpenCL devices: the OpenCL platforms "
                    "report none\n");
    return 1;
  }
  char platform[256] = "";
  for (size_t i = 0; i < n; i++) {
    clphmm_device_info d;
    if (clphmm_device_get_info(i, &d)) {
      printf("device %zu: cannot be queried: %s\n", i, clphmm_last_error(NULL));
      continue;
    }
    if (strcmp(platform, d.platform)) {
      printf("platform: %s\n", d.platform);
      snprintf(platform, sizeof platform, "%s", d.platform);
    }
    printf("device %zu: %s\n", i, d.name);
    printf("  type:        %s, vendor %s\n", type_name(d.type), d.vendor);
    printf("  version:     %s, driver %s\n", d.version, d.driver);
    printf("  compute:     %u units at %u MHz\n", d.compute_units, d.clock_mhz);
    print_mem("  memory:     ", d.global_mem_bytes);
    print_mem(" global,", d.local_mem_bytes);
    printf(" local\n  fp64:        %s\n", d.has_fp64 ? "yes" : "no");
    print_plan(i);
  }
  return 0;
}
