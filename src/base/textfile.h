/* Whole small text files (kernel sources under CLPHMM_KERNEL_DIR, the
 * tuning file): one reader for every caller. */
#ifndef CLPHMM_TEXTFILE_H
#define CLPHMM_TEXTFILE_H

#include <stddef.h>
#include <stdio.h>

/* Read the rest of `f` into a new NUL-terminated buffer (*size bytes before
 * the NUL; the text may itself hold NUL bytes). Works on pipes too: no
 * seeking. Returns 0, or EFBIG when the buffer would grow to `max` bytes
 * or more,
 * ENOMEM, or EIO on a read error; *text is NULL on failure. The caller
 * opens and closes `f` and words its own messages. */
int cph_read_stream(FILE *f, size_t max, char **text, size_t *size);

#endif
