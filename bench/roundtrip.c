/* The floor under a small call: how long an OpenCL device takes to run a
 * copy in, one kernel and a copy out and tell the host, measured with
 * nothing of clphmm around it (bench/roundtrip.sh builds and runs it).
 * Each case runs N times after a warm-up; it prints the median, the 10th
 * and the 90th percentile of the host's wall time per round trip, in
 * microseconds:
 *
 *   empty+finish   an empty kernel, clFinish
 *   empty+wait     an empty kernel with an event, clWaitForEvents
 *   trip+wait      copy in (IN bytes from pinned memory), a kernel that
 *                  spins SPIN_NS nanoseconds, copy out (OUT bytes into pinned
 *                  memory), clWaitForEvents on the copy out
 *   trip+poll      the same, polling the copy out's status before waiting
 *   trip+blocking  the same with a blocking copy out
 *   trip+flag      the same, spinning on the copy out's last word (the
 *                  kernel writes the round trip's number there) before
 *                  clWaitForEvents: when the host could see the data
 *   flag-seen      that case's time to the flag alone
 *   gated+wait     the trip enqueued ahead behind a user event, timed from
 *                  setting the event to the copy out's completion
 *   gated+flush    the same, the queue flushed before the gate opens
 *
 * and the host's time in single enqueue calls (each followed by an
 * untimed clFinish): enq-write and enq-read (the copies above), enq-2buf
 * (the kernel above), enq-8buf (a kernel of eight buffer arguments) and
 * enq-8sub (the same on eight sub-buffers of one buffer, as clphmm's
 * packed small chunks have), enq-15arg (those and seven scalars, as
 * clphmm's kernels take), enq-local (the same with 32 KB of local
 * memory) and enq-local48 (48 KB, as a small call's double kernel has),
 * and four of them again returning an event (-ev); then two launches on
 * two queues enqueued by one thread (2q-serial) or at once by two
 * (2q-threads), timed until both calls returned.
 *
 *   roundtrip [N] [IN] [OUT] [SPIN_NS]  (defaults 2000 40000 8192 0)
 * Environment: ROUNDTRIP_DEVICE (index among all devices, default: the
 * first GPU). */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *src =
    "__kernel void empty(void) {}\n"
    "__kernel void work(__global const uint *in, __global uint *out,\n"
    "                   uint n_out, uint seq, ulong spin) {\n"
    "  size_t i = get_global_id(0);\n"
    "#ifdef NV /* (NVIDIA's clock; elsewhere no spin) */\n"
    "  ulong t0, t;\n"
    "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "  do asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
    "  while (t - t0 < spin);\n"
    "#endif\n"
    "  for (size_t k = i; k + 1 < n_out; k += get_global_size(0))\n"
    "    out[k] = in[k] + seq;\n"
    "  barrier(CLK_GLOBAL_MEM_FENCE);\n"
    "  if (i == 0) out[n_out - 1] = seq;\n"
    "}\n"
    "__kernel void eight(__global uint *a, __global uint *b, __global uint "
    "*c,\n"
    "                    __global uint *d, __global uint *e, __global uint "
    "*f,\n"
    "                    __global uint *g, __global uint *h) {\n"
    "  if (get_global_id(0) == 0) a[0] = b[0] + c[0] + d[0] + e[0] + f[0] +\n"
    "                                     g[0] + h[0];\n"
    "}\n"
    "__kernel void fifteen(__global uint *a, __global uint *b, __global uint "
    "*c,\n"
    "                      __global uint *d, __global uint *e, __global uint "
    "*f,\n"
    "                      __global uint *g, __global uint *h, uint i, int j,\n"
    "                      uint k, uint l, uint m, uint4 n, uint o) {\n"
    "  if (get_global_id(0) == 0) a[0] = b[0] + c[0] + d[0] + e[0] + f[0] +\n"
    "                                     g[0] + h[0] + i + j + k + l + m +\n"
    "                                     n.x + o;\n"
    "}\n"
    "__kernel void big(__global uint *a, __global uint *b, __global uint *c,\n"
    "                  __global uint *d, __global uint *e, __global uint *f,\n"
    "                  __global uint *g, __global uint *h, uint i, int j,\n"
    "                  uint k, uint l, uint m, uint4 n, uint o) {\n"
    "  __local uint t[8192];\n"
    "  const size_t w = get_local_id(0);\n"
    "  for (size_t q = w; q < 8192; q += get_local_size(0)) t[q] = b[q & 7] + "
    "q;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (get_global_id(0) == 0) a[0] = t[i & 8191] + c[0] + d[0] + e[0] +\n"
    "                                     f[0] + g[0] + h[0] + j + k + l + m "
    "+\n"
    "                                     n.x + o;\n"
    "}\n"
    "__kernel void big48(__global uint *a, __global uint *b, __global uint "
    "*c,\n"
    "                  __global uint *d, __global uint *e, __global uint *f,\n"
    "                  __global uint *g, __global uint *h, uint i, int j,\n"
    "                  uint k, uint l, uint m, uint4 n, uint o) {\n"
    "  __local uint t[12288];\n"
    "  const size_t w = get_local_id(0);\n"
    "  for (size_t q = w; q < 12288; q += get_local_size(0)) t[q] = b[q & 7] + "
    "q;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (get_global_id(0) == 0) a[0] = t[i % 12288] + c[0] + d[0] + e[0] +\n"
    "                                     f[0] + g[0] + h[0] + j + k + l + m "
    "+\n"
    "                                     n.x + o;\n"
    "}\n";

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *name, double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp);
  printf("%-14s median %8.1f us   p10 %8.1f   p90 %8.1f\n", name, t[n / 2],
         t[n / 10], t[n * 9 / 10]);
}

#define CHECK(x)                                                               \
  do {                                                                         \
    cl_int e_ = (x);                                                           \
    if (e_ != CL_SUCCESS) {                                                    \
      fprintf(stderr, "roundtrip: %s failed: %d (line %d)\n", #x, e_,          \
              __LINE__);                                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static cl_device_id pick(void) {
  cl_platform_id p[16];
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(16, p, &np));
  const char *want = getenv("ROUNDTRIP_DEVICE");
  int idx = want ? atoi(want) : -1, k = 0;
  for (cl_uint i = 0; i < np; i++) {
    cl_device_id d[16];
    cl_uint nd = 0;
    if (clGetDeviceIDs(p[i], CL_DEVICE_TYPE_ALL, 16, d, &nd) != CL_SUCCESS)
      continue;
    for (cl_uint j = 0; j < nd; j++, k++) {
      cl_device_type type = 0;
      CHECK(clGetDeviceInfo(d[j], CL_DEVICE_TYPE, sizeof type, &type, NULL));
      if (k == idx || (idx < 0 && (type & CL_DEVICE_TYPE_GPU)))
        return d[j];
    }
  }
  fprintf(stderr, "roundtrip: no such device\n");
  exit(1);
}

static void *pinned(cl_context c, cl_command_queue q, size_t n, cl_mem *m) {
  cl_int e;
  *m = clCreateBuffer(c, CL_MEM_ALLOC_HOST_PTR, n, NULL, &e);
  CHECK(e);
  void *p = clEnqueueMapBuffer(q, *m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n,
                               0, NULL, NULL, &e);
  CHECK(e);
  return p;
}

/* Kernel `name` of fifteen arguments (eight buffers, seven scalars) with
 * them set. */
static cl_kernel fifteen_args(cl_program prog, const char *name,
                              const cl_mem *sub) {
  cl_int e;
  cl_kernel k = clCreateKernel(prog, name, &e);
  CHECK(e);
  const cl_uint one_u = 1;
  const cl_uint4 four = {{1, 2, 3, 4}};
  for (cl_uint a = 0; a < 8; a++)
    CHECK(clSetKernelArg(k, a, sizeof(cl_mem), &sub[a]));
  for (cl_uint a = 8; a < 15; a++)
    CHECK(clSetKernelArg(k, a, a == 13 ? sizeof four : sizeof one_u,
                         a == 13 ? (const void *)&four : (const void *)&one_u));
  return k;
}

/* Two launches on two queues (as a small call's float pass and its
 * speculative double pass): enqueued one after the other by one thread
 * ("2q-serial"), or at once, the second by a helper thread that spins on
 * a flag ("2q-threads"); timed until both enqueue calls returned. */
typedef struct helper {
  cl_command_queue q;
  cl_kernel k;
  atomic_int go, done, quit;
} helper;

static void *helper_main(void *arg) {
  helper *h = arg;
  const size_t global = 128, local = 128;
  for (;;) {
    while (!atomic_load(&h->go))
      if (atomic_load(&h->quit))
        return NULL;
    atomic_store(&h->go, 0);
    CHECK(clEnqueueNDRangeKernel(h->q, h->k, 1, NULL, &global, &local, 0, NULL,
                                 NULL));
    CHECK(clFlush(h->q));
    atomic_store(&h->done, 1);
  }
}

static void two_queues(cl_context ctx, cl_device_id dev, cl_kernel k1,
                       cl_kernel k2, double *t, int n) {
  cl_int e;
  cl_command_queue q1 = clCreateCommandQueue(ctx, dev, 0, &e);
  CHECK(e);
  cl_command_queue q2 = clCreateCommandQueue(ctx, dev, 0, &e);
  CHECK(e);
  helper h = {.q = q2, .k = k2};
  pthread_t th;
  if (pthread_create(&th, NULL, helper_main, &h)) {
    fprintf(stderr, "roundtrip: no thread\n");
    exit(1);
  }
  const size_t global = 128, local = 128;
  for (int threads = 0; threads < 2; threads++) {
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < n; i++) {
        const double t0 = now_us();
        if (threads)
          atomic_store(&h.go, 1);
        CHECK(clEnqueueNDRangeKernel(q1, k1, 1, NULL, &global, &local, 0, NULL,
                                     NULL));
        CHECK(clFlush(q1));
        if (threads) {
          while (!atomic_load(&h.done))
            ;
          atomic_store(&h.done, 0);
        } else {
          CHECK(clEnqueueNDRangeKernel(q2, k2, 1, NULL, &global, &local, 0,
                                       NULL, NULL));
          CHECK(clFlush(q2));
        }
        t[i] = now_us() - t0;
        CHECK(clFinish(q1));
        CHECK(clFinish(q2));
      }
    report(threads ? "2q-threads" : "2q-serial", t, n);
  }
  atomic_store(&h.quit, 1);
  pthread_join(th, NULL);
  clReleaseCommandQueue(q1);
  clReleaseCommandQueue(q2);
}

enum { WAIT, POLL, BLOCKING, FLAG };

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2000;
  const size_t in_b = argc > 2 ? (size_t)atol(argv[2]) : 40000,
               out_b = argc > 3 ? (size_t)atol(argv[3]) : 8192;
  const cl_ulong spin = argc > 4 ? (cl_ulong)atol(argv[4]) : 0;
  /* (The kernel reads in[k] for every k it writes: IN >= OUT.) */
  if (n < 10 || out_b < 8 || in_b < out_b) {
    fprintf(stderr, "usage: roundtrip [N>=10] [IN>=OUT] [OUT>=8] [SPIN_NS]\n");
    return 2;
  }
  cl_device_id dev = pick();
  char name[256];
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
  cl_int e;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  CHECK(e);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
  CHECK(e);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  CHECK(e);
  char vendor[256];
  clGetDeviceInfo(dev, CL_DEVICE_VENDOR, sizeof vendor, vendor, NULL);
  CHECK(clBuildProgram(prog, 1, &dev, strstr(vendor, "NVIDIA") ? "-DNV" : "",
                       NULL, NULL));
  cl_kernel empty = clCreateKernel(prog, "empty", &e);
  CHECK(e);
  cl_kernel work = clCreateKernel(prog, "work", &e);
  CHECK(e);
  cl_mem hin, hout;
  uint32_t *pin = pinned(ctx, q, in_b, &hin);
  volatile uint32_t *pout = pinned(ctx, q, out_b, &hout);
  memset(pin, 1, in_b);
  cl_mem din = clCreateBuffer(ctx, CL_MEM_READ_ONLY, in_b, NULL, &e);
  CHECK(e);
  cl_mem dout = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, out_b, NULL, &e);
  CHECK(e);
  const cl_uint n_out = (cl_uint)(out_b / 4);
  CHECK(clSetKernelArg(work, 0, sizeof din, &din));
  CHECK(clSetKernelArg(work, 1, sizeof dout, &dout));
  CHECK(clSetKernelArg(work, 2, sizeof n_out, &n_out));
  CHECK(clSetKernelArg(work, 4, sizeof spin, &spin));
  double *t = malloc(sizeof *t * (size_t)n),
         *seen = malloc(sizeof *t * (size_t)n);
  if (!t || !seen) {
    fprintf(stderr, "roundtrip: out of memory\n");
    return 1;
  }
  const size_t one = 1, global = 128, local = 128;
  printf("# %s; %d round trips per case; copy in %zu bytes, copy out %zu, "
         "kernel spin %lu ns\n",
         name, n, in_b, out_b, (unsigned long)spin);

  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < n; i++) {
      const double t0 = now_us();
      CHECK(
          clEnqueueNDRangeKernel(q, empty, 1, NULL, &one, NULL, 0, NULL, NULL));
      CHECK(clFinish(q));
      t[i] = now_us() - t0;
    }
  }
  report("empty+finish", t, n);
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < n; i++) {
      const double t0 = now_us();
      cl_event ev;
      CHECK(
          clEnqueueNDRangeKernel(q, empty, 1, NULL, &one, NULL, 0, NULL, &ev));
      CHECK(clFlush(q));
      CHECK(clWaitForEvents(1, &ev));
      clReleaseEvent(ev);
      t[i] = now_us() - t0;
    }
  }
  report("empty+wait", t, n);

  static const char *const names[] = {"trip+wait", "trip+poll", "trip+blocking",
                                      "trip+flag"};
  cl_uint seq = 1;
  for (int mode = WAIT; mode <= FLAG; mode++) {
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < n; i++, seq++) {
        const double t0 = now_us();
        CHECK(clSetKernelArg(work, 3, sizeof seq, &seq));
        CHECK(clEnqueueWriteBuffer(q, din, CL_FALSE, 0, in_b, pin, 0, NULL,
                                   NULL));
        CHECK(clEnqueueNDRangeKernel(q, work, 1, NULL, &global, &local, 0, NULL,
                                     NULL));
        cl_event ev = NULL;
        CHECK(clEnqueueReadBuffer(q, dout, mode == BLOCKING, 0, out_b,
                                  (void *)pout, 0, NULL,
                                  mode == BLOCKING ? NULL : &ev));
        if (mode != BLOCKING)
          CHECK(clFlush(q));
        if (mode == POLL) {
          cl_int st = CL_QUEUED;
          while (st > CL_COMPLETE)
            CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                 sizeof st, &st, NULL));
        }
        if (mode == FLAG) {
          while (pout[n_out - 1] != seq)
            atomic_thread_fence(memory_order_acquire);
          seen[i] = now_us() - t0;
        }
        if (ev) {
          CHECK(clWaitForEvents(1, &ev));
          clReleaseEvent(ev);
        }
        t[i] = now_us() - t0;
        if (pout[0] != pin[0] + seq || pout[n_out - 1] != seq) {
          fprintf(stderr, "roundtrip: wrong data in %s\n", names[mode]);
          return 1;
        }
      }
    report(names[mode], t, n);
  }
  report("flag-seen", seen, n);

  /* The same round trip enqueued ahead, behind a user event (as a call
   * could enqueue the next call's commands): timed from opening the gate
   * to the copy out's completion; "gated+flush" flushes the queue after
   * enqueueing, before the timed part. */
  for (int flush = 0; flush < 2; flush++) {
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < n; i++, seq++) {
        cl_event gate = clCreateUserEvent(ctx, &e), ev;
        CHECK(e);
        CHECK(clSetKernelArg(work, 3, sizeof seq, &seq));
        CHECK(clEnqueueWriteBuffer(q, din, CL_FALSE, 0, in_b, pin, 1, &gate,
                                   NULL));
        CHECK(clEnqueueNDRangeKernel(q, work, 1, NULL, &global, &local, 0, NULL,
                                     NULL));
        CHECK(clEnqueueReadBuffer(q, dout, CL_FALSE, 0, out_b, (void *)pout, 0,
                                  NULL, &ev));
        if (flush)
          CHECK(clFlush(q));
        const double t0 = now_us();
        CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
        CHECK(clFlush(q));
        CHECK(clWaitForEvents(1, &ev));
        t[i] = now_us() - t0;
        clReleaseEvent(ev);
        clReleaseEvent(gate);
        if (pout[0] != pin[0] + seq || pout[n_out - 1] != seq) {
          fprintf(stderr, "roundtrip: wrong data in gated trips\n");
          return 1;
        }
      }
    report(flush ? "gated+flush" : "gated+wait", t, n);
  }

  cl_kernel eight = clCreateKernel(prog, "eight", &e);
  CHECK(e);
  cl_mem own[8], whole = clCreateBuffer(ctx, 0, 8 * 4096, NULL, &e), sub[8];
  CHECK(e);
  for (int a = 0; a < 8; a++) {
    own[a] = clCreateBuffer(ctx, 0, 4096, NULL, &e);
    CHECK(e);
    cl_buffer_region r = {(size_t)a * 4096, 4096};
    sub[a] = clCreateSubBuffer(whole, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
    CHECK(e);
  }
  cl_kernel fifteen = fifteen_args(prog, "fifteen", sub);
  cl_kernel big = fifteen_args(prog, "big", sub);
  cl_kernel big48 = fifteen_args(prog, "big48", sub);
  static const char *const enq[] = {
      "enq-write",    "enq-read",    "enq-2buf",    "enq-8buf",
      "enq-8sub",     "enq-15arg",   "enq-local",   "enq-local48",
      "enq-write-ev", "enq-read-ev", "enq-2buf-ev", "enq-local48-ev"};
  for (int c0 = 0; c0 < 12; c0++) {
    /* Cases 8..11 repeat 0, 1, 2 and 7 with an event. */
    const int c = c0 < 8 ? c0 : c0 == 11 ? 7 : c0 - 8;
    cl_event ev = NULL, *evp = c0 >= 8 ? &ev : NULL;
    if (c == 3 || c == 4)
      for (cl_uint a = 0; a < 8; a++)
        CHECK(clSetKernelArg(eight, a, sizeof(cl_mem),
                             c == 3 ? &own[a] : &sub[a]));
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < n; i++) {
        const double t0 = now_us();
        if (c == 0)
          CHECK(clEnqueueWriteBuffer(q, din, CL_FALSE, 0, in_b, pin, 0, NULL,
                                     evp));
        else if (c == 1)
          CHECK(clEnqueueReadBuffer(q, dout, CL_FALSE, 0, out_b, (void *)pout,
                                    0, NULL, evp));
        else
          CHECK(clEnqueueNDRangeKernel(q,
                                       c == 2   ? work
                                       : c == 5 ? fifteen
                                       : c == 6 ? big
                                       : c == 7 ? big48
                                                : eight,
                                       1, NULL, &global, &local, 0, NULL, evp));
        t[i] = now_us() - t0;
        CHECK(clFinish(q));
        if (ev)
          clReleaseEvent(ev);
      }
    report(enq[c0], t, n);
  }
  two_queues(ctx, dev, big48, fifteen, t, n);
  return 0;
}
