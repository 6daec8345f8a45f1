/* A small JSON writer: objects, arrays, escaped strings, numbers (a
 * non-finite number is written as null). Keys are NULL inside arrays. */
#ifndef CLPHMM_BENCH_JSON_H
#define CLPHMM_BENCH_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

typedef struct json {
  FILE *f;
  int depth;
  int count[JSON_MAX_DEPTH]; /* values written at each depth */
  int newline;               /* start the next value on a new line */
} json;

void json_init(json *j, FILE *f);
void json_object(json *j, const char *key);
void json_end_object(json *j);
void json_array(json *j, const char *key);
void json_end_array(json *j);
void json_string(json *j, const char *key, const char *value);
void json_number(json *j, const char *key, double value);
void json_uint(json *j, const char *key, uint64_t value);
void json_int(json *j, const char *key, long long value);
void json_bool(json *j, const char *key, int value);
/* The next value (or closing bracket) starts on a new, indented line. */
void json_break(json *j);
/* Write `s` as a JSON string literal (quotes included). */
void json_write_escaped(FILE *f, const char *s);

#endif
