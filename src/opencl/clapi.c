#include "opencl/clapi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

cph_cl_api cph_cl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static clphmm_status load_status;
static char load_message[1024];

static void *open_loader(char *tried, size_t n, const char **lib) {
  const char *env = getenv("CLPHMM_OPENCL_LIBRARY");
  const char *names[] = {env && *env ? env : NULL, "libOpenCL.so.1",
                         "libOpenCL.so"};
  tried[0] = '\0';
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    if (!names[i])
      continue;
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    *lib = names[i];
    if (h)
      return h;
    /* (With the loader's reason: a file that is there but does not load
     * says why.) */
    const char *why = dlerror();
    size_t used = strlen(tried);
    snprintf(tried + used, n - used, "%s%s (%s)", used ? ", " : "", names[i],
             why ? why : "not found");
    if (env && *env)
      break; /* an explicit choice is not second-guessed */
  }
  return NULL;
}

static void load_once_fn(void) {
  char tried[512];
  const char *lib = NULL;
  void *h = open_loader(tried, sizeof tried, &lib);
  if (!h) {
    load_status = CLPHMM_ERROR_NO_OPENCL;
    snprintf(load_message, sizeof load_message,
             "no OpenCL runtime: could not load %s (install an OpenCL ICD "
             "loader and a driver, e.g. ocl-icd-libopencl1 and "
             "pocl-opencl-icd)",
             tried);
    return;
  }
#define CPH_CL_LOAD(name, ret, args)                                           \
  {                                                                            \
    void *sym = dlsym(h, "cl" #name);                                          \
    memcpy(&cph_cl.name, &sym, sizeof sym);                                    \
  }                                                                            \
  if (!cph_cl.name) {                                                          \
    load_status = CLPHMM_ERROR_NO_OPENCL;                                      \
    snprintf(load_message, sizeof load_message,                                \
             "the OpenCL library %s lacks cl" #name, lib);                     \
    return;                                                                    \
  }
  CPH_CL_FUNCTIONS(CPH_CL_LOAD)
#undef CPH_CL_LOAD
  load_status = CLPHMM_SUCCESS;
}

clphmm_status cph_cl_load(void) {
  pthread_once(&load_once, load_once_fn);
  if (load_status)
    return cph_error(load_status, "%s", load_message);
  return CLPHMM_SUCCESS;
}

const char *cph_cl_error_name(cl_int err) {
  /* clang-format off */
  switch (err) {
#define E(x)                                                                   \
  case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE)
    E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_BUILD_PROGRAM_FAILURE)
    E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM)
    E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT) E(CL_INVALID_QUEUE_PROPERTIES)
    E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_BINARY)
    E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
    E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE)
    E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
    E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET)
    E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_BUFFER_SIZE)
    E(CL_INVALID_GLOBAL_WORK_SIZE)
#undef E
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
  default: return "unknown OpenCL error";
  }
  /* clang-format on */
}

clphmm_status cph_cl_fail(clphmm_status status, const char *call, cl_int err,
                          const char *what) {
  return cph_error(status, "%s: %s failed with %s (%d)", what, call,
                   cph_cl_error_name(err), (int)err);
}
