/* clphmm: one chunk on the device or on the CPU reference. */
#define _GNU_SOURCE

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int cli_compute_chunk(const cli_args *args, clphmm_context **ctx,
                      const clphmm_dataset *ds, double **out, size_t *n_out) {
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
        fputs(cli_reference_hint, stderr);
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
