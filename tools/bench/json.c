#include "json.h"

#include <math.h>

void json_init(json *j, FILE *f) {
  j->f = f;
  j->depth = 0;
  j->count[0] = 0;
  j->newline = 0;
}

void json_write_escaped(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        fprintf(f, "\\u%04x", *p);
      else
        fputc(*p, f); /* UTF-8 passes through */
    }
  }
  fputc('"', f);
}

static void indent(json *j) {
  fputc('\n', j->f);
  for (int i = 0; i < j->depth; i++)
    fputs("  ", j->f);
  j->newline = 0;
}

/* Separator, line break and key before a value. */
static void begin_value(json *j, const char *key) {
  if (j->count[j->depth]++)
    fputc(',', j->f);
  if (j->newline)
    indent(j);
  else if (j->count[j->depth] > 1)
    fputc(' ', j->f);
  if (key) {
    json_write_escaped(j->f, key);
    fputs(": ", j->f);
  }
}

static void open_container(json *j, const char *key, char c) {
  begin_value(j, key);
  fputc(c, j->f);
  if (j->depth + 1 < JSON_MAX_DEPTH)
    j->depth++;
  j->count[j->depth] = 0;
}

static void close_container(json *j, char c) {
  if (j->depth > 0)
    j->depth--;
  if (j->newline)
    indent(j);
  fputc(c, j->f);
  if (j->depth == 0)
    fputc('\n', j->f);
}

void json_object(json *j, const char *key) {
  open_container(j, key, '{');
}
void json_end_object(json *j) {
  close_container(j, '}');
}
void json_array(json *j, const char *key) {
  open_container(j, key, '[');
}
void json_end_array(json *j) {
  close_container(j, ']');
}
void json_break(json *j) {
  j->newline = 1;
}

void json_string(json *j, const char *key, const char *value) {
  begin_value(j, key);
  json_write_escaped(j->f, value ? value : "");
}

void json_number(json *j, const char *key, double value) {
  begin_value(j, key);
  if (isfinite(value))
    fprintf(j->f, "%.10g", value);
  else
    fputs("null", j->f);
}

void json_uint(json *j, const char *key, uint64_t value) {
  begin_value(j, key);
  fprintf(j->f, "%llu", (unsigned long long)value);
}

void json_int(json *j, const char *key, long long value) {
  begin_value(j, key);
  fprintf(j->f, "%lld", value);
}

void json_bool(json *j, const char *key, int value) {
  begin_value(j, key);
  fputs(value ? "true" : "false", j->f);
}
