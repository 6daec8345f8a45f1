/* The OpenCL entry points clphmm uses, loaded at run time with dlopen, so
 * that the library and the `clphmm` command start (and `--reference` works)
 * on machines without any OpenCL runtime, and so that tests can substitute
 * a failing entry point to exercise error paths. */
#ifndef CLPHMM_CLAPI_H
#define CLPHMM_CLAPI_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "clphmm.h"

#define CPH_CL_FUNCTIONS(X)                                                    \
  X(GetPlatformIDs, cl_int, (cl_uint, cl_platform_id *, cl_uint *))            \
  X(GetPlatformInfo, cl_int,                                                   \
    (cl_platform_id, cl_platform_info, size_t, void *, size_t *))              \
  X(GetDeviceIDs, cl_int,                                                      \
    (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *))      \
  X(GetDeviceInfo, cl_int,                                                     \
    (cl_device_id, cl_device_info, size_t, void *, size_t *))                  \
  X(CreateContext, cl_context,                                                 \
    (const cl_context_properties *, cl_uint, const cl_device_id *,             \
     void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *,  \
     cl_int *))                                                                \
  X(ReleaseContext, cl_int, (cl_context))                                      \
  X(CreateCommandQueue, cl_command_queue,                                      \
    (cl_context, cl_device_id, cl_command_queue_properties, cl_int *))         \
  X(ReleaseCommandQueue, cl_int, (cl_command_queue))                           \
  X(CreateProgramWithSource, cl_program,                                       \
    (cl_context, cl_uint, const char **, const size_t *, cl_int *))            \
  X(CreateProgramWithBinary, cl_program,                                       \
    (cl_context, cl_uint, const cl_device_id *, const size_t *,                \
     const unsigned char **, cl_int *, cl_int *))                              \
  X(BuildProgram, cl_int,                                                      \
    (cl_program, cl_uint, const cl_device_id *, const char *,                  \
     void(CL_CALLBACK *)(cl_program, void *), void *))                         \
  X(GetProgramBuildInfo, cl_int,                                               \
    (cl_program, cl_device_id, cl_program_build_info, size_t, void *,          \
     size_t *))                                                                \
  X(GetProgramInfo, cl_int,                                                    \
    (cl_program, cl_program_info, size_t, void *, size_t *))                   \
  X(ReleaseProgram, cl_int, (cl_program))                                      \
  X(CreateKernel, cl_kernel, (cl_program, const char *, cl_int *))             \
  X(ReleaseKernel, cl_int, (cl_kernel))                                        \
  X(SetKernelArg, cl_int, (cl_kernel, cl_uint, size_t, const void *))          \
  X(GetKernelWorkGroupInfo, cl_int,                                            \
    (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *,       \
     size_t *))                                                                \
  X(CreateBuffer, cl_mem,                                                      \
    (cl_context, cl_mem_flags, size_t, void *, cl_int *))                      \
  X(CreateSubBuffer, cl_mem,                                                   \
    (cl_mem, cl_mem_flags, cl_buffer_create_type, const void *, cl_int *))     \
  X(ReleaseMemObject, cl_int, (cl_mem))                                        \
  X(EnqueueWriteBuffer, cl_int,                                                \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, \
     const cl_event *, cl_event *))                                            \
  X(EnqueueReadBuffer, cl_int,                                                 \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,       \
     const cl_event *, cl_event *))                                            \
  X(EnqueueNDRangeKernel, cl_int,                                              \
    (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,     \
     const size_t *, cl_uint, const cl_event *, cl_event *))                   \
  X(EnqueueMapBuffer, void *,                                                  \
    (cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint, \
     const cl_event *, cl_event *, cl_int *))                                  \
  X(EnqueueUnmapMemObject, cl_int,                                             \
    (cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, cl_event *)) \
  X(Flush, cl_int, (cl_command_queue))                                         \
  X(Finish, cl_int, (cl_command_queue))                                        \
  X(WaitForEvents, cl_int, (cl_uint, const cl_event *))                        \
  X(GetEventInfo, cl_int, (cl_event, cl_event_info, size_t, void *, size_t *)) \
  X(GetEventProfilingInfo, cl_int,                                             \
    (cl_event, cl_profiling_info, size_t, void *, size_t *))                   \
  X(ReleaseEvent, cl_int, (cl_event))

typedef struct cph_cl_api {
#define CPH_CL_MEMBER(name, ret, args) ret(CL_API_CALL *name) args;
  CPH_CL_FUNCTIONS(CPH_CL_MEMBER)
#undef CPH_CL_MEMBER
} cph_cl_api;

/* The loaded entry points. Valid after cph_cl_load() succeeded. */
extern cph_cl_api cph_cl;

/* Load the OpenCL ICD loader (CLPHMM_OPENCL_LIBRARY, else libOpenCL.so.1,
 * else libOpenCL.so) once. CLPHMM_ERROR_NO_OPENCL with a message if it is
 * missing or lacks an entry point. */
clphmm_status cph_cl_load(void);

/* "CL_OUT_OF_RESOURCES" etc. for an error code. */
const char *cph_cl_error_name(cl_int err);

/* Record "what: clCall failed with CL_X (-n)" as the thread's last error. */
clphmm_status cph_cl_fail(clphmm_status status, const char *call, cl_int err,
                          const char *what);

#endif
