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
 *
 * and the host's time in single enqueue calls (each followed by an
 * untimed clFinish): enq-write and enq-read (the copies above), enq-2buf
 * (the kernel above), enq-8buf (a kernel of eight buffer arguments) and
 * enq-8sub (the same on eight sub-buffers of one buffer, as clphmm's
 * packed small chunks have), enq-15arg (those and seven scalars, as
 * clphmm's kernels take) and enq-local (the same with 32 KB of local
 * memory).
 *
 *   roundtrip [N] [IN] [OUT] [SPIN_NS]  (defaults 2000 40000 8192 0)
 * Environment: ROUNDTRIP_DEVICE (index among all devices, default: the
 * first GPU). */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
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
  cl_kernel fifteen = clCreateKernel(prog, "fifteen", &e);
  CHECK(e);
  for (cl_uint a = 0; a < 8; a++)
    CHECK(clSetKernelArg(fifteen, a, sizeof(cl_mem), &sub[a]));
  const cl_uint one_u = 1;
  const cl_uint4 four = {{1, 2, 3, 4}};
  for (cl_uint a = 8; a < 15; a++)
    CHECK(clSetKernelArg(fifteen, a, a == 13 ? sizeof four : sizeof one_u,
                         a == 13 ? (const void *)&four : (const void *)&one_u));
  cl_kernel big = clCreateKernel(prog, "big", &e);
  CHECK(e);
  for (cl_uint a = 0; a < 8; a++)
    CHECK(clSetKernelArg(big, a, sizeof(cl_mem), &sub[a]));
  for (cl_uint a = 8; a < 15; a++)
    CHECK(clSetKernelArg(big, a, a == 13 ? sizeof four : sizeof one_u,
                         a == 13 ? (const void *)&four : (const void *)&one_u));
  static const char *const enq[] = {"enq-write", "enq-read", "enq-2buf",
                                    "enq-8buf",  "enq-8sub", "enq-15arg",
                                    "enq-local"};
  for (int c = 0; c < 7; c++) {
    if (c == 3 || c == 4)
      for (cl_uint a = 0; a < 8; a++)
        CHECK(clSetKernelArg(eight, a, sizeof(cl_mem),
                             c == 3 ? &own[a] : &sub[a]));
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < n; i++) {
        const double t0 = now_us();
        if (c == 0)
          CHECK(clEnqueueWriteBuffer(q, din, CL_FALSE, 0, in_b, pin, 0, NULL,
                                     NULL));
        else if (c == 1)
          CHECK(clEnqueueReadBuffer(q, dout, CL_FALSE, 0, out_b, (void *)pout,
                                    0, NULL, NULL));
        else
          CHECK(clEnqueueNDRangeKernel(q,
                                       c == 2   ? work
                                       : c == 5 ? fifteen
                                       : c == 6 ? big
                                                : eight,
                                       1, NULL, &global, &local, 0, NULL,
                                       NULL));
        t[i] = now_us() - t0;
        CHECK(clFinish(q));
      }
    report(enq[c], t, n);
  }
  return 0;
}
