/* A source of text lines, from memory or from a stream, that holds at most
 * one line (plus one read block) in memory at a time: the bottom layer of
 * the streaming file reader. It rejects what can never be part of a valid
 * input file (control bytes, lines longer than CLPHMM_MAX_LINE_BYTES) with
 * a "NAME:LINE: ..." message. */
#ifndef CLPHMM_LINESRC_H
#define CLPHMM_LINESRC_H

#include <stddef.h>
#include <stdio.h>

#include "clphmm.h"

typedef struct cph_linesrc {
  const char *name;    /* for messages; not owned */
  FILE *file;          /* NULL when reading from memory */
  char *buf;           /* file: owned buffer; memory: the caller's data */
  size_t cap;          /* file buffer capacity */
  size_t first_cap;    /* file buffer size to start with */
  size_t start;        /* first byte not yet delivered */
  size_t end;          /* end of the valid bytes in buf */
  int eof;             /* nothing more will be added to buf */
  size_t line_no;      /* number of the last line delivered (1-based) */
  size_t max_line;     /* longest accepted line, newline excluded */
  clphmm_status error; /* status of the failure once next returned -1 */
} cph_linesrc;

/* A source over `size` bytes at `data` (not copied: they must outlive it). */
void cph_linesrc_memory(cph_linesrc *s, const char *data, size_t size,
                        const char *name);

/* A source over an open stream, which the source then owns and closes.
 * The buffer starts at `first_buffer` bytes (0: the default, 64 KiB) and
 * doubles while a line does not fit. */
void cph_linesrc_stream(cph_linesrc *s, FILE *file, const char *name,
                        size_t first_buffer);

void cph_linesrc_close(cph_linesrc *s);

/* The next line without its '\n': returns 1 and sets *p and *len (valid
 * until the next call), 0 at the end of the input, or -1 with the thread's
 * last error set and s->error the status (binary data, over-long line,
 * read error, no memory). */
int cph_linesrc_next(cph_linesrc *s, const char **p, size_t *len);

#endif
