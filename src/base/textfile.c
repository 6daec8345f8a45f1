#include "base/textfile.h"

#include <errno.h>
#include <stdlib.h>

int cph_read_stream(FILE *f, size_t max, char **text, size_t *size) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  *text = NULL;
  *size = 0;
  while (buf) {
    n += fread(buf + n, 1, cap - 1 - n, f);
    if (n < cap - 1)
      break;
    if (cap >= max) {
      free(buf);
      return EFBIG;
    }
    char *t = realloc(buf, cap * 2);
    if (!t)
      free(buf);
    buf = t;
    cap *= 2;
  }
  if (!buf)
    return ENOMEM;
  if (ferror(f)) {
    free(buf);
    return EIO;
  }
  buf[n] = '\0';
  *text = buf;
  *size = n;
  return 0;
}
