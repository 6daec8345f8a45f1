/* Internal entry points of the file reader (io.c). */
#ifndef CLPHMM_IO_H
#define CLPHMM_IO_H

#include <stdio.h>

#include "clphmm.h"

/* A reader over an open stream, which it owns and closes (also on
 * failure). `first_buffer` is the stream buffer's first size (0: the
 * default); small values exercise buffer growth in tests and fuzzers. */
clphmm_status cph_reader_open_stream(FILE *f, const char *name, unsigned flags,
                                     size_t first_buffer,
                                     clphmm_reader **reader);

#endif
