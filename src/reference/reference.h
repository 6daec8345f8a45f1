/* The CPU reference: the oracle for every test, the rescue path on devices
 * without fp64, and the engine behind `clphmm --reference`. */
#ifndef CLPHMM_REFERENCE_H
#define CLPHMM_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Scaled final sums of one pair (inputs already validated). Return
 * CLPHMM_ERROR_OUT_OF_MEMORY if scratch space cannot be allocated. */
clphmm_status cph_reference_pair_float(const clphmm_read *read,
                                       const clphmm_haplotype *hap, float *sum);
clphmm_status cph_reference_pair_double(const clphmm_read *read,
                                        const clphmm_haplotype *hap,
                                        cph_flavor flavor, double *sum);

/* log10 likelihood of one pair in a precision mode, rescue included. */
clphmm_status cph_reference_pair(const clphmm_read *read,
                                 const clphmm_haplotype *hap,
                                 clphmm_precision precision, double *result);

#endif
