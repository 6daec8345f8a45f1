/* Error reporting: a per-thread last-error message plus status strings. */
#ifndef CLPHMM_ERROR_H
#define CLPHMM_ERROR_H

#include "clphmm.h"

#if defined(__GNUC__)
#define CPH_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CPH_PRINTF(a, b)
#endif

/* Longest message kept; longer ones (e.g. build logs) are truncated. */
#define CPH_ERROR_MAX 8192

/* Record a formatted message as this thread's last error; returns `status`
 * so callers can write `return cph_error(CLPHMM_ERROR_..., "...")`. */
clphmm_status cph_error(clphmm_status status, const char *fmt, ...)
    CPH_PRINTF(2, 3);

/* Prefix this thread's last error with a formatted context string
 * ("batch 3: " + message). Returns `status`. */
clphmm_status cph_error_prefix(clphmm_status status, const char *fmt, ...)
    CPH_PRINTF(2, 3);

/* This thread's last error (never NULL). */
const char *cph_error_message(void);
void cph_error_clear(void);

#endif
