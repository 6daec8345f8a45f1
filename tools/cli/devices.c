/* clphmm --list-devices. */
#define _GNU_SOURCE

#include <stdio.h>

#include "cli.h"

const char cli_reference_hint[] =
    PROG ": use --reference to compute on the CPU without OpenCL\n";

static const char *device_type_name(clphmm_device_type type) {
  switch (type) {
  case CLPHMM_DEVICE_CPU: return "cpu";
  case CLPHMM_DEVICE_GPU: return "gpu";
  case CLPHMM_DEVICE_ACCELERATOR: return "accelerator";
  case CLPHMM_DEVICE_OTHER: break;
  }
  return "other";
}

int cli_list_devices(void) {
  size_t count = 0;
  clphmm_status st = clphmm_device_count(&count);
  if (st != CLPHMM_SUCCESS) {
    fprintf(stderr, PROG ": %s\n", clphmm_last_error(NULL));
    fputs(cli_reference_hint, stderr);
    return EXIT_RUNTIME;
  }
  if (count == 0) {
    fprintf(stderr, PROG ": the OpenCL runtime has no device\n");
    fputs(cli_reference_hint, stderr);
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
  return cli_finish_stdout();
}
