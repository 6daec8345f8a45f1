/* The CPU reference: the oracle for every test, the rescue path on devices
 * without fp64, and the engine behind `clphmm --reference`. */
#ifndef CLPHMM_REFERENCE_H
#define CLPHMM_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "reference/wave.h"

/* Scaled final sums of one pair (inputs already validated). Return
 * CLPHMM_ERROR_OUT_OF_MEMORY if scratch space cannot be allocated. */
clphmm_status cph_reference_pair_float(const clphmm_read *read,
                                       const clphmm_haplotype *hap, float *sum);
clphmm_status cph_reference_pair_double(const clphmm_read *read,
                                        const clphmm_haplotype *hap,
                                        cph_flavor flavor, double *sum);

/* The same computed by `kernel` (CPH_REF_SCALAR: the row-by-row oracle that
 * the tests compare every other kernel with); a float sum is returned
 * widened, exactly. */
clphmm_status cph_reference_sum(const clphmm_read *read,
                                const clphmm_haplotype *hap, cph_flavor flavor,
                                cph_ref_kernel kernel, double *sum);

/* log10 likelihood of one pair in a precision mode, rescue included. */
clphmm_status cph_reference_pair_with(const clphmm_read *read,
                                      const clphmm_haplotype *hap,
                                      clphmm_precision precision,
                                      cph_ref_kernel kernel, double *result);

/* clphmm_reference computed by `kernel` (clphmm_reference: CPH_REF_AUTO). */
clphmm_status cph_reference_with(const clphmm_batch *batches, size_t n_batches,
                                 clphmm_precision precision,
                                 cph_ref_kernel kernel, double *out);

#endif
