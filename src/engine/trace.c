#include "engine/trace.h"

#include <stdlib.h>

#include "base/clock.h"

int cph_trace_open(cph_trace *t) {
  const char *path = getenv("CLPHMM_TRACE");
  t->f = NULL;
  if (!path || !*path)
    return 1;
  t->f = fopen(path, "a");
  return t->f != NULL;
}

void cph_trace_close(cph_trace *t) {
  if (t->f)
    fclose(t->f);
  t->f = NULL;
}

void cph_trace_call(cph_trace *t, double t0, size_t pairs,
                    unsigned long long cells) {
  if (!t->f)
    return;
  t->t0 = t0;
  t->dev0 = 0;
  fprintf(t->f, "call %lu pairs %zu cells %llu\n", ++t->call, pairs, cells);
}

void cph_trace_host(cph_trace *t, const char *what, int slot, double since) {
  if (!t->f)
    return;
  const double now = cph_now();
  fprintf(t->f, "  host %-10s slot %d at %9.1f us took %8.1f us\n", what, slot,
          (since - t->t0) * 1e6, (now - since) * 1e6);
}

static cl_ulong stamp(cl_event ev, cl_profiling_info what) {
  cl_ulong v = 0;
  if (cph_cl.GetEventProfilingInfo(ev, what, sizeof v, &v, NULL) != CL_SUCCESS)
    return 0;
  return v;
}

void cph_trace_event(cph_trace *t, int slot, const char *kind, int bin,
                     cl_event ev, size_t bytes, uint64_t cells) {
  if (!t->f)
    return;
  const cl_ulong q = stamp(ev, CL_PROFILING_COMMAND_QUEUED),
                 s = stamp(ev, CL_PROFILING_COMMAND_SUBMIT),
                 b = stamp(ev, CL_PROFILING_COMMAND_START),
                 e = stamp(ev, CL_PROFILING_COMMAND_END);
  if (!t->dev0 || (q && q < t->dev0))
    t->dev0 = q;
  /* Offsets from the first command's queued time; the steps between. */
  fprintf(t->f,
          "  dev  %-10s slot %d bin %2d queued %9.1f us, +%7.1f submit, "
          "+%7.1f start, +%8.1f run, ends %9.1f us",
          kind, slot, bin, q >= t->dev0 ? (double)(q - t->dev0) * 1e-3 : -1.0,
          s >= q ? (double)(s - q) * 1e-3 : -1.0,
          b >= s ? (double)(b - s) * 1e-3 : -1.0,
          e >= b ? (double)(e - b) * 1e-3 : -1.0,
          e >= t->dev0 ? (double)(e - t->dev0) * 1e-3 : -1.0);
  if (bytes)
    fprintf(t->f, ", %zu bytes", bytes);
  /* (With the run time: the launch's cells per second.) */
  if (cells)
    fprintf(t->f, ", %llu cells, %.1f GCUPS", (unsigned long long)cells,
            e > b ? (double)cells / (double)(e - b) : 0.0);
  fputc('\n', t->f);
}
