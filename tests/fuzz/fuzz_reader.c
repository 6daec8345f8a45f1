/* Fuzz target: the whole-file reader on memory (clphmm_dataset_read_memory).
 * The first byte picks the flags and the precision; the rest is the file.
 * Invariants: no crash or sanitizer report; a failure leaves *dataset NULL
 * and a "NAME:LINE: " message; an accepted input passes validation and
 * computes to finite results on the CPU reference. */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  unsigned flags = data[0] & 1u ? CLPHMM_READ_RAW_BASE_QUALS : 0;
  clphmm_precision precision =
      data[0] & 2u ? CLPHMM_PRECISION_DOUBLE : CLPHMM_PRECISION_FLOAT;
  int dummy;
  clphmm_dataset *ds = (clphmm_dataset *)(void *)&dummy;
  clphmm_status st = clphmm_dataset_read_memory((const char *)data + 1,
                                                size - 1, "fuzz", flags, &ds);
  if (st != CLPHMM_SUCCESS) {
    FUZZ_ASSERT(ds == NULL);
    FUZZ_ASSERT(st == CLPHMM_ERROR_PARSE || st == CLPHMM_ERROR_INVALID_BASE ||
                st == CLPHMM_ERROR_INVALID_QUALITY ||
                st == CLPHMM_ERROR_TOO_LARGE);
    FUZZ_ASSERT(strncmp(clphmm_last_error(NULL), "fuzz:", 5) == 0);
    return 0;
  }
  FUZZ_ASSERT(ds != NULL && clphmm_dataset_n_batches(ds) > 0);
  fuzz_compute_dataset(ds, precision);
  clphmm_dataset_destroy(ds);
  return 0;
}
