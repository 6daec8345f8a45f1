/* A timeline of each compute call for finding where its microseconds go:
 * with CLPHMM_TRACE=FILE set when a context is created, every call appends
 * its host phases (seconds since the call began) and every device command
 * (queued, submitted, started, ended, from the device's profiling clock)
 * to FILE. Off (no cost beyond a pointer test) otherwise. */
#ifndef CLPHMM_TRACE_H
#define CLPHMM_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "opencl/clapi.h"

typedef struct cph_trace {
  FILE *f;
  double t0; /* host clock at the start of the call */
  unsigned long call;
  cl_ulong dev0; /* device clock of the call's first queued command */
} cph_trace;

/* Opens $CLPHMM_TRACE for appending (a failure leaves tracing off and is
 * reported as a diagnostic note by the caller). Returns 0 when tracing was
 * asked for and the file could not be opened. */
int cph_trace_open(cph_trace *t);
void cph_trace_close(cph_trace *t);

/* A call that began at host time `t0` (offsets are from it). */
void cph_trace_call(cph_trace *t, double t0, size_t pairs,
                    unsigned long long cells);
/* A host phase that started at host time `since` and ends now. */
void cph_trace_host(cph_trace *t, const char *what, int slot, double since);
/* A device command of a slot: its kind's name, bin (-1: none), event and,
 * for a copy, its bytes, for a launch, its cells (else 0). */
void cph_trace_event(cph_trace *t, int slot, const char *kind, int bin,
                     cl_event ev, size_t bytes, uint64_t cells);

#endif
