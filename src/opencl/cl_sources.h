/* Kernel sources embedded at build time (see cmake/embed_cl.cmake). */
#ifndef CLPHMM_CL_SOURCES_H
#define CLPHMM_CL_SOURCES_H

#include <stddef.h>

typedef struct cph_cl_source {
  const char *name; /* file name in cl/, e.g. "pairhmm.cl" */
  const char *text; /* NUL-terminated */
  size_t size;
} cph_cl_source;

/* Terminated by an entry whose name is NULL. */
extern const cph_cl_source cph_cl_sources[];
/* SHA-256 (hex) over every embedded source's name and text. */
extern const char cph_cl_sources_hash[];

#endif
