#include "io/linesrc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* Default first size of a stream's buffer; it doubles while a line does
 * not fit, up to the longest accepted line. */
#define FIRST_BUFFER ((size_t)1 << 16)

void cph_linesrc_memory(cph_linesrc *s, const char *data, size_t size,
                        const char *name) {
  memset(s, 0, sizeof *s);
  s->name = name;
  /* Never written through: memory sources are read only. */
  s->buf = (char *)(size ? data : "");
  s->end = size;
  s->eof = 1;
  s->max_line = CLPHMM_MAX_LINE_BYTES;
}

void cph_linesrc_stream(cph_linesrc *s, FILE *file, const char *name,
                        size_t first_buffer) {
  memset(s, 0, sizeof *s);
  s->name = name;
  s->file = file;
  s->first_cap = first_buffer ? first_buffer : FIRST_BUFFER;
  s->max_line = CLPHMM_MAX_LINE_BYTES;
}

void cph_linesrc_close(cph_linesrc *s) {
  if (s->file) {
    fclose(s->file);
    free(s->buf);
  }
  memset(s, 0, sizeof *s);
}

static int too_long(cph_linesrc *s) {
  s->error =
      cph_error(CLPHMM_ERROR_TOO_LARGE,
                "%s:%zu: line longer than %zu bytes (the longest accepted)",
                s->name, s->line_no + 1, s->max_line);
  return -1;
}

/* Control bytes can never be part of a valid file; rejecting them here
 * gives a compressed or binary file one clear message instead of a
 * confusing token error later. */
static int is_control(unsigned char c) {
  return (c < 0x20) & (c != '\t') & (c != '\r');
}

static int check_text(cph_linesrc *s, const char *line, size_t from,
                      size_t to) {
  /* One pass without an exit first, which compilers vectorise (the parse
   * of a HaplotypeCaller-sized file is a few passes over 200 MB); the
   * byte-by-byte loop below only runs to name a bad byte. */
  unsigned bad = 0;
  for (size_t i = from; i < to; i++)
    bad |= (unsigned)is_control((unsigned char)line[i]);
  if (!bad)
    return 0;
  for (size_t i = from; i < to; i++) {
    unsigned char c = (unsigned char)line[i];
    if (is_control(c)) {
      s->error = cph_error(
          CLPHMM_ERROR_PARSE,
          "%s:%zu: binary data (byte 0x%02x at column %zu); expected a "
          "text file (is it compressed?)",
          s->name, s->line_no + 1, c, i + 1);
      return -1;
    }
  }
  return 0;
}

/* Move the pending bytes to the front, grow the buffer if it is full, and
 * read more. Sets eof when the stream has nothing more. */
static int fill(cph_linesrc *s) {
  size_t avail = s->end - s->start;
  if (s->start > 0) {
    memmove(s->buf, s->buf + s->start, avail);
    s->start = 0;
    s->end = avail;
  }
  if (s->end == s->cap) {
    /* avail <= max_line here, so the new size is always bigger. */
    size_t cap = s->cap ? s->cap * 2 : s->first_cap;
    if (cap > s->max_line + 1)
      cap = s->max_line + 1;
    char *nb = realloc(s->buf, cap);
    if (!nb) {
      s->error = cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                           "%s:%zu: no memory for a line of %zu bytes", s->name,
                           s->line_no + 1, avail);
      return -1;
    }
    s->buf = nb;
    s->cap = cap;
  }
  size_t got = fread(s->buf + s->end, 1, s->cap - s->end, s->file);
  s->end += got;
  if (got == 0) {
    if (ferror(s->file)) {
      int err = errno;
      s->error =
          cph_error(CLPHMM_ERROR_IO, "%s: read error after line %zu: %s",
                    s->name, s->line_no, err ? strerror(err) : "unknown error");
      return -1;
    }
    s->eof = 1;
  }
  return 0;
}

int cph_linesrc_next(cph_linesrc *s, const char **p, size_t *len) {
  size_t scanned = 0; /* bytes after start known to hold no newline */
  for (;;) {
    /* A stream before its first read has no buffer (and NULL + 0 is
     * undefined): fill allocates it. */
    if (!s->buf && fill(s))
      return -1;
    size_t avail = s->end - s->start;
    char *begin = s->buf + s->start;
    char *nl =
        avail > scanned ? memchr(begin + scanned, '\n', avail - scanned) : NULL;
    if (nl || (s->eof && avail > 0)) {
      size_t n = nl ? (size_t)(nl - begin) : avail;
      if (check_text(s, begin, scanned, n))
        return -1;
      if (n > s->max_line)
        return too_long(s);
      s->line_no++;
      s->start += n + (nl != NULL);
      *p = begin;
      *len = n;
      return 1;
    }
    if (s->eof)
      return 0;
    /* Binary data shows up as such even without a newline in sight. */
    if (check_text(s, begin, scanned, avail))
      return -1;
    if (avail > s->max_line)
      return too_long(s);
    scanned = avail;
    if (fill(s))
      return -1;
  }
}
