/* A test-only OpenCL library that forwards every entry point clphmm uses to
 * the real ICD loader and injects failures on demand, so the tests can
 * force faults (a kernel that does not build, a device out of memory, a
 * launch that fails mid-run, no platform) without any hook inside clphmm.
 * clphmm loads it through CLPHMM_OPENCL_LIBRARY.
 *
 * Rules, from $CPH_SHIM_FAIL at the first call or from cph_shim_configure(),
 * separated by commas:
 *   FUNC[@N[+]][:CODE][~TEXT]   make calls of FUNC fail: every call, only
 *                               the Nth (1-based), or the Nth and later;
 *                               with CODE (default: a fitting error per
 *                               function); ~TEXT: only calls whose build
 *                               options contain TEXT (clBuildProgram)
 *   mem=BYTES                   a device of BYTES bytes: clCreateBuffer
 *                               fails when live buffers would exceed it
 * The real library is $CPH_SHIM_REAL, else libOpenCL.so.1. Calls from
 * several threads (a context of several devices) count under one lock.
 *
 * It also keeps every object clphmm creates (contexts, queues, programs,
 * kernels, buffers, events) by handle: releasing one that is not live (a
 * release too many, which a driver may only notice later, in another
 * object's count) is not forwarded, is said on stderr at once and counted
 * (cph_shim_objects), and so are the objects still live. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl/clapi.h"

#define SHIM_API __attribute__((visibility("default")))
#define MAX_RULES 16

typedef struct rule {
  char func[64];
  long nth;  /* 0: every call */
  int later; /* the Nth and every later call */
  int has_code;
  cl_int code;
  char text[256];
  long seen; /* matching calls so far */
} rule;

static cph_cl_api real;
static pthread_mutex_t shim_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;
static rule rules[MAX_RULES];
static int n_rules;
static size_t mem_limit, mem_live; /* mem_live: the live buffers' bytes */

/* Calls per entry point since the last configuration, for the tests. */
typedef struct counter {
  char func[64];
  long calls;
} counter;
static counter counters[64];
static int n_counters;

static void load_real(void) {
  const char *name = getenv("CPH_SHIM_REAL");
  void *h =
      dlopen(name && *name ? name : "libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "clshim: cannot load the real OpenCL library\n");
    abort();
  }
#define LOAD(name, ret, args)                                                  \
  {                                                                            \
    void *sym = dlsym(h, "cl" #name);                                          \
    memcpy(&real.name, &sym, sizeof sym);                                      \
  }
  CPH_CL_FUNCTIONS(LOAD)
#undef LOAD
}

static int parse_rule(const char *s, size_t len, rule *r) {
  char buf[512];
  if (len >= sizeof buf)
    return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  memset(r, 0, sizeof *r);
  char *text = strchr(buf, '~');
  if (text) {
    *text++ = '\0';
    if (strlen(text) >= sizeof r->text)
      return -1;
    memcpy(r->text, text, strlen(text) + 1);
  }
  char *code = strchr(buf, ':');
  if (code) {
    *code++ = '\0';
    r->has_code = 1;
    r->code = (cl_int)strtol(code, NULL, 10);
  }
  char *at = strchr(buf, '@');
  if (at) {
    *at++ = '\0';
    r->nth = strtol(at, &at, 10);
    r->later = *at == '+';
  }
  if (strlen(buf) >= sizeof r->func)
    return -1;
  memcpy(r->func, buf, strlen(buf) + 1);
  return 0;
}

SHIM_API int cph_shim_configure(const char *spec);
int cph_shim_configure(const char *spec) {
  n_rules = 0;
  mem_limit = 0;
  n_counters = 0;
  for (const char *p = spec ? spec : ""; *p;) {
    size_t len = strcspn(p, ",");
    if (strncmp(p, "mem=", 4) == 0)
      mem_limit = (size_t)strtoull(p + 4, NULL, 10);
    else if (len && n_rules < MAX_RULES &&
             parse_rule(p, len, &rules[n_rules]) == 0)
      n_rules++;
    else if (len)
      return -1;
    p += len;
    if (*p == ',')
      p++;
  }
  return 0;
}

/* Calls of `func` since the last configuration. */
SHIM_API long cph_shim_calls(const char *func);
long cph_shim_calls(const char *func) {
  for (int i = 0; i < n_counters; i++)
    if (strcmp(counters[i].func, func) == 0)
      return counters[i].calls;
  return 0;
}

/* ---- objects by handle ------------------------------------------------ */

#define OBJ_SLOTS (1u << 20) /* open addressing; entries are never removed */

typedef struct obj {
  const void *h;
  long live;    /* creations less releases */
  size_t bytes; /* a live buffer's size (sub-buffers and others: 0) */
} obj;
static obj *objs;
static long live_objects, over_releases;
static char first_over[96];

/* The entry of handle h (a free one if h was never seen). Under
 * shim_lock. */
static obj *obj_find(const void *h) {
  if (!objs && !(objs = calloc(OBJ_SLOTS, sizeof *objs)))
    abort();
  size_t i = ((size_t)(uintptr_t)h >> 4) * 0x9E3779B97F4A7C15ull;
  for (size_t k = 0; k < OBJ_SLOTS; k++) {
    obj *o = &objs[(i + k) & (OBJ_SLOTS - 1)];
    if (o->h == h || !o->h)
      return o;
  }
  fprintf(stderr, "clshim: more than %u OpenCL objects\n", OBJ_SLOTS);
  abort();
}

/* A new object h (none if NULL) of `bytes` of device memory. Under
 * shim_lock. */
static void obj_created_locked(const void *h, size_t bytes) {
  if (!h)
    return;
  obj *o = obj_find(h);
  o->h = h;
  o->live++;
  o->bytes = bytes;
  live_objects++;
  mem_live += bytes;
}

static void obj_created(const void *h) {
  pthread_mutex_lock(&shim_lock);
  obj_created_locked(h, 0);
  pthread_mutex_unlock(&shim_lock);
}

/* Whether the release of h may go on to the real library (a buffer's
 * bytes are then no longer live). */
static int obj_released(const void *h, const char *func) {
  pthread_mutex_lock(&shim_lock);
  obj *o = obj_find(h);
  const int ok = o->live > 0;
  if (ok && !--o->live) {
    mem_live -= o->bytes;
    o->bytes = 0;
  }
  if (ok)
    live_objects--;
  else if (!over_releases++)
    snprintf(first_over, sizeof first_over, "%s(%p)", func, h);
  pthread_mutex_unlock(&shim_lock);
  if (!ok)
    fprintf(stderr,
            "clshim: %s(%p): the object is not live (released "
            "already, or never created)\n",
            func, h);
  return ok;
}

/* Objects created and not released so far; *over: releases of objects
 * that were not live, the first named in first[n]. */
SHIM_API long cph_shim_objects(long *over, char *first, size_t n);
long cph_shim_objects(long *over, char *first, size_t n) {
  pthread_mutex_lock(&shim_lock);
  const long live = live_objects;
  *over = over_releases;
  if (n)
    snprintf(first, n, "%s", first_over);
  pthread_mutex_unlock(&shim_lock);
  return live;
}

/* An object the real library returned (NULL: none), kept. */
#define created(x) ((__typeof__(x))obj_kept((x)))
static const void *obj_kept(const void *h) {
  obj_created(h);
  return h;
}

/* An enqueue's status, its event (if asked for and made) kept. */
static cl_int event_out(cl_int rc, const cl_event *e) {
  if (rc == CL_SUCCESS && e)
    obj_created(*e);
  return rc;
}

static void init(void) {
  if (loaded)
    return;
  loaded = 1;
  load_real();
  cph_shim_configure(getenv("CPH_SHIM_FAIL"));
}

static void count(const char *func) {
  for (int i = 0; i < n_counters; i++)
    if (strcmp(counters[i].func, func) == 0) {
      counters[i].calls++;
      return;
    }
  if (n_counters < 64) {
    snprintf(counters[n_counters].func, sizeof counters[0].func, "%s", func);
    counters[n_counters++].calls = 1;
  }
}

/* Should this call fail? Sets *code (the rule's, else `dflt`). */
static int fail_locked(const char *func, const char *text, cl_int dflt,
                       cl_int *code) {
  init();
  count(func);
  for (int i = 0; i < n_rules; i++) {
    rule *r = &rules[i];
    if (strcmp(r->func, func) != 0)
      continue;
    if (r->text[0] && (!text || !strstr(text, r->text)))
      continue;
    r->seen++;
    if (r->nth == 0 || r->seen == r->nth || (r->later && r->seen > r->nth)) {
      *code = r->has_code ? r->code : dflt;
      return 1;
    }
  }
  return 0;
}

static int fail(const char *func, const char *text, cl_int dflt, cl_int *code) {
  pthread_mutex_lock(&shim_lock);
  int f = fail_locked(func, text, dflt, code);
  pthread_mutex_unlock(&shim_lock);
  return f;
}

#define FAIL(dflt) fail(__func__, NULL, (dflt), &code)
/* For entry points that return an object and report through errcode_ret. */
#define FAIL_OBJ(dflt, errp)                                                   \
  do {                                                                         \
    if (FAIL(dflt)) {                                                          \
      if (errp)                                                                \
        *(errp) = code;                                                        \
      return NULL;                                                             \
    }                                                                          \
  } while (0)

SHIM_API cl_int clGetPlatformIDs(cl_uint n, cl_platform_id *p, cl_uint *np) {
  cl_int code;
  if (FAIL(-1001)) { /* CL_PLATFORM_NOT_FOUND_KHR: what ICD loaders say */
    if (np)
      *np = 0;
    return code;
  }
  return real.GetPlatformIDs(n, p, np);
}

SHIM_API cl_int clGetPlatformInfo(cl_platform_id p, cl_platform_info i,
                                  size_t n, void *v, size_t *r) {
  cl_int code;
  if (FAIL(CL_INVALID_PLATFORM))
    return code;
  return real.GetPlatformInfo(p, i, n, v, r);
}

SHIM_API cl_int clGetDeviceIDs(cl_platform_id p, cl_device_type t, cl_uint n,
                               cl_device_id *d, cl_uint *nd) {
  cl_int code;
  if (FAIL(CL_DEVICE_NOT_FOUND)) {
    if (nd)
      *nd = 0;
    return code;
  }
  return real.GetDeviceIDs(p, t, n, d, nd);
}

SHIM_API cl_int clGetDeviceInfo(cl_device_id d, cl_device_info i, size_t n,
                                void *v, size_t *r) {
  cl_int code;
  if (FAIL(CL_INVALID_DEVICE))
    return code;
  return real.GetDeviceInfo(d, i, n, v, r);
}

SHIM_API cl_context clCreateContext(
    const cl_context_properties *props, cl_uint n, const cl_device_id *d,
    void(CL_CALLBACK *cb)(const char *, const void *, size_t, void *),
    void *user, cl_int *err) {
  cl_int code;
  FAIL_OBJ(CL_DEVICE_NOT_AVAILABLE, err);
  return created(real.CreateContext(props, n, d, cb, user, err));
}

SHIM_API cl_int clReleaseContext(cl_context c) {
  cl_int code;
  if (FAIL(CL_INVALID_CONTEXT))
    return code;
  return obj_released(c, __func__) ? real.ReleaseContext(c)
                                   : CL_INVALID_CONTEXT;
}

SHIM_API cl_command_queue clCreateCommandQueue(cl_context c, cl_device_id d,
                                               cl_command_queue_properties p,
                                               cl_int *err) {
  cl_int code;
  FAIL_OBJ(CL_OUT_OF_RESOURCES, err);
  return created(real.CreateCommandQueue(c, d, p, err));
}

SHIM_API cl_int clReleaseCommandQueue(cl_command_queue q) {
  cl_int code;
  if (FAIL(CL_INVALID_COMMAND_QUEUE))
    return code;
  return obj_released(q, __func__) ? real.ReleaseCommandQueue(q)
                                   : CL_INVALID_COMMAND_QUEUE;
}

SHIM_API cl_program clCreateProgramWithSource(cl_context c, cl_uint n,
                                              const char **s, const size_t *len,
                                              cl_int *err) {
  cl_int code;
  FAIL_OBJ(CL_OUT_OF_HOST_MEMORY, err);
  return created(real.CreateProgramWithSource(c, n, s, len, err));
}

SHIM_API cl_program clCreateProgramWithBinary(cl_context c, cl_uint n,
                                              const cl_device_id *d,
                                              const size_t *len,
                                              const unsigned char **b,
                                              cl_int *status, cl_int *err) {
  cl_int code;
  FAIL_OBJ(CL_INVALID_BINARY, err);
  return created(real.CreateProgramWithBinary(c, n, d, len, b, status, err));
}

SHIM_API cl_int clBuildProgram(cl_program p, cl_uint n, const cl_device_id *d,
                               const char *opts,
                               void(CL_CALLBACK *cb)(cl_program, void *),
                               void *user) {
  cl_int code;
  if (fail(__func__, opts, CL_BUILD_PROGRAM_FAILURE, &code))
    return code;
  return real.BuildProgram(p, n, d, opts, cb, user);
}

SHIM_API cl_int clGetProgramBuildInfo(cl_program p, cl_device_id d,
                                      cl_program_build_info i, size_t n,
                                      void *v, size_t *r) {
  cl_int code;
  if (FAIL(CL_INVALID_PROGRAM))
    return code;
  return real.GetProgramBuildInfo(p, d, i, n, v, r);
}

SHIM_API cl_int clGetProgramInfo(cl_program p, cl_program_info i, size_t n,
                                 void *v, size_t *r) {
  cl_int code;
  if (FAIL(CL_INVALID_PROGRAM))
    return code;
  return real.GetProgramInfo(p, i, n, v, r);
}

SHIM_API cl_int clReleaseProgram(cl_program p) {
  cl_int code;
  if (FAIL(CL_INVALID_PROGRAM))
    return code;
  return obj_released(p, __func__) ? real.ReleaseProgram(p)
                                   : CL_INVALID_PROGRAM;
}

SHIM_API cl_kernel clCreateKernel(cl_program p, const char *name, cl_int *err) {
  cl_int code;
  FAIL_OBJ(CL_INVALID_PROGRAM_EXECUTABLE, err);
  return created(real.CreateKernel(p, name, err));
}

SHIM_API cl_int clReleaseKernel(cl_kernel k) {
  cl_int code;
  if (FAIL(CL_INVALID_KERNEL))
    return code;
  return obj_released(k, __func__) ? real.ReleaseKernel(k) : CL_INVALID_KERNEL;
}

SHIM_API cl_int clSetKernelArg(cl_kernel k, cl_uint i, size_t n,
                               const void *v) {
  cl_int code;
  if (FAIL(CL_INVALID_ARG_VALUE))
    return code;
  return real.SetKernelArg(k, i, n, v);
}

SHIM_API cl_int clGetKernelWorkGroupInfo(cl_kernel k, cl_device_id d,
                                         cl_kernel_work_group_info i, size_t n,
                                         void *v, size_t *r) {
  cl_int code;
  if (FAIL(CL_INVALID_KERNEL))
    return code;
  return real.GetKernelWorkGroupInfo(k, d, i, n, v, r);
}

SHIM_API cl_mem clCreateBuffer(cl_context c, cl_mem_flags f, size_t size,
                               void *host, cl_int *err) {
  cl_int code;
  FAIL_OBJ(CL_MEM_OBJECT_ALLOCATION_FAILURE, err);
  pthread_mutex_lock(&shim_lock);
  if (mem_limit && (size > mem_limit || mem_live > mem_limit - size)) {
    pthread_mutex_unlock(&shim_lock);
    if (err)
      *err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
    return NULL;
  }
  cl_mem m = real.CreateBuffer(c, f, size, host, err);
  obj_created_locked(m, size);
  pthread_mutex_unlock(&shim_lock);
  return m;
}

/* (Sub-buffers take no device memory of their own: not counted.) */
SHIM_API cl_mem clCreateSubBuffer(cl_mem m, cl_mem_flags f,
                                  cl_buffer_create_type t, const void *info,
                                  cl_int *err) {
  cl_int code;
  FAIL_OBJ(CL_MEM_OBJECT_ALLOCATION_FAILURE, err);
  return created(real.CreateSubBuffer(m, f, t, info, err));
}

SHIM_API cl_int clReleaseMemObject(cl_mem m) {
  cl_int code;
  if (FAIL(CL_INVALID_MEM_OBJECT))
    return code;
  return obj_released(m, __func__) ? real.ReleaseMemObject(m)
                                   : CL_INVALID_MEM_OBJECT;
}

SHIM_API cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem m,
                                     cl_bool block, size_t off, size_t n,
                                     const void *p, cl_uint ne,
                                     const cl_event *w, cl_event *e) {
  cl_int code;
  if (FAIL(CL_OUT_OF_RESOURCES))
    return code;
  return event_out(real.EnqueueWriteBuffer(q, m, block, off, n, p, ne, w, e),
                   e);
}

SHIM_API cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool block,
                                    size_t off, size_t n, void *p, cl_uint ne,
                                    const cl_event *w, cl_event *e) {
  cl_int code;
  if (FAIL(CL_OUT_OF_RESOURCES))
    return code;
  return event_out(real.EnqueueReadBuffer(q, m, block, off, n, p, ne, w, e), e);
}

SHIM_API cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k,
                                       cl_uint dim, const size_t *off,
                                       const size_t *global,
                                       const size_t *local, cl_uint ne,
                                       const cl_event *w, cl_event *e) {
  cl_int code;
  if (FAIL(CL_OUT_OF_RESOURCES))
    return code;
  return event_out(
      real.EnqueueNDRangeKernel(q, k, dim, off, global, local, ne, w, e), e);
}

SHIM_API void *clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool block,
                                  cl_map_flags f, size_t off, size_t n,
                                  cl_uint ne, const cl_event *w, cl_event *e,
                                  cl_int *err) {
  cl_int code;
  if (FAIL(CL_MAP_FAILURE)) {
    if (err)
      *err = code;
    return NULL;
  }
  void *ptr = real.EnqueueMapBuffer(q, m, block, f, off, n, ne, w, e, err);
  if (ptr && e)
    obj_created(*e);
  return ptr;
}

SHIM_API cl_int clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p,
                                        cl_uint ne, const cl_event *w,
                                        cl_event *e) {
  cl_int code;
  if (FAIL(CL_OUT_OF_RESOURCES))
    return code;
  return event_out(real.EnqueueUnmapMemObject(q, m, p, ne, w, e), e);
}

SHIM_API cl_int clFlush(cl_command_queue q) {
  cl_int code;
  if (FAIL(CL_OUT_OF_RESOURCES))
    return code;
  return real.Flush(q);
}

SHIM_API cl_int clWaitForEvents(cl_uint n, const cl_event *e) {
  cl_int code;
  if (FAIL(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST))
    return code;
  return real.WaitForEvents(n, e);
}

SHIM_API cl_int clGetEventInfo(cl_event e, cl_event_info i, size_t n, void *v,
                               size_t *r) {
  cl_int code;
  if (FAIL(CL_INVALID_EVENT))
    return code;
  return real.GetEventInfo(e, i, n, v, r);
}

SHIM_API cl_int clFinish(cl_command_queue q) {
  cl_int code;
  if (FAIL(CL_OUT_OF_RESOURCES))
    return code;
  return real.Finish(q);
}

SHIM_API cl_int clGetEventProfilingInfo(cl_event e, cl_profiling_info i,
                                        size_t n, void *v, size_t *r) {
  cl_int code;
  if (FAIL(CL_PROFILING_INFO_NOT_AVAILABLE))
    return code;
  return real.GetEventProfilingInfo(e, i, n, v, r);
}

SHIM_API cl_int clReleaseEvent(cl_event e) {
  cl_int code;
  if (FAIL(CL_INVALID_EVENT))
    return code;
  return obj_released(e, __func__) ? real.ReleaseEvent(e) : CL_INVALID_EVENT;
}
