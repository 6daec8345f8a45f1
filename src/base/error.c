#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char thread_error[CPH_ERROR_MAX];

clphmm_status cph_error(clphmm_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(thread_error, sizeof thread_error, fmt, ap);
  va_end(ap);
  return status;
}

clphmm_status cph_error_prefix(clphmm_status status, const char *fmt, ...) {
  char old[CPH_ERROR_MAX];
  memcpy(old, thread_error, sizeof old);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(thread_error, sizeof thread_error, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof thread_error)
    snprintf(thread_error + n, sizeof thread_error - (size_t)n, "%s", old);
  return status;
}

const char *cph_error_message(void) {
  return thread_error;
}

void cph_error_clear(void) {
  thread_error[0] = '\0';
}

const char *clphmm_status_string(clphmm_status status) {
  switch (status) {
  case CLPHMM_SUCCESS: return "success";
  case CLPHMM_ERROR_INVALID_ARGUMENT: return "invalid argument";
  case CLPHMM_ERROR_INVALID_BASE: return "invalid base";
  case CLPHMM_ERROR_INVALID_QUALITY: return "invalid quality";
  case CLPHMM_ERROR_OUT_OF_MEMORY: return "out of memory";
  case CLPHMM_ERROR_TOO_LARGE: return "input too large";
  case CLPHMM_ERROR_NO_OPENCL: return "no OpenCL runtime";
  case CLPHMM_ERROR_NO_DEVICE: return "no OpenCL device";
  case CLPHMM_ERROR_BUILD_FAILED: return "kernel build failed";
  case CLPHMM_ERROR_OPENCL: return "OpenCL error";
  case CLPHMM_ERROR_IO: return "I/O error";
  case CLPHMM_ERROR_PARSE: return "parse error";
  }
  return "unknown status";
}
