/* json_check FILE: parses a clphmm-bench JSON results file strictly
 * (RFC 8259 syntax), checks the schema (top-level keys and every run's
 * required keys, with their types), and prints every scalar as
 * "path=value" (e.g. "runs.0.pairs=256") for test_bench.sh to inspect.
 * Exit status 0 when valid, 1 otherwise (with the reason on stderr). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_STRING, T_NUMBER, T_BOOL, T_NULL } scalar_type;

typedef struct entry {
  char path[128];
  scalar_type type;
  char text[512];
} entry;

typedef struct parser {
  const char *p;
  entry *e;
  size_t n, cap;
  const char *error;
} parser;

static void ws(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
    ps->p++;
}

static int fail(parser *ps, const char *why) {
  if (!ps->error)
    ps->error = why;
  return 0;
}

static int add(parser *ps, const char *path, scalar_type t, const char *s,
               size_t len) {
  if (ps->n == ps->cap) {
    ps->cap = ps->cap ? 2 * ps->cap : 256;
    ps->e = realloc(ps->e, ps->cap * sizeof *ps->e);
    if (!ps->e)
      return fail(ps, "out of memory");
  }
  entry *e = &ps->e[ps->n++];
  snprintf(e->path, sizeof e->path, "%s", path);
  e->type = t;
  if (len >= sizeof e->text)
    len = sizeof e->text - 1;
  memcpy(e->text, s, len);
  e->text[len] = '\0';
  return 1;
}

/* A string literal into out (escapes decoded; \u kept as written). */
static int string(parser *ps, char *out, size_t n) {
  if (*ps->p != '"')
    return fail(ps, "expected a string");
  ps->p++;
  size_t k = 0;
  while (*ps->p != '"') {
    unsigned char c = (unsigned char)*ps->p++;
    if (c == '\0' || c < 0x20)
      return fail(ps, "unterminated string or control character");
    if (c == '\\') {
      char x = *ps->p++;
      if (x == 'u') {
        for (int i = 0; i < 4; i++)
          if (!isxdigit((unsigned char)*ps->p++))
            return fail(ps, "bad \\u escape");
        c = '?';
      } else if (strchr("\"\\/bfnrt", x) && x) {
        c = (unsigned char)(x == 'n' ? '\n' : x == 't' ? '\t' : x);
      } else
        return fail(ps, "bad escape");
    }
    if (k + 1 < n)
      out[k++] = (char)c;
  }
  ps->p++;
  out[k] = '\0';
  return 1;
}

static int number(parser *ps, const char *path) {
  const char *s = ps->p;
  if (*ps->p == '-')
    ps->p++;
  if (!isdigit((unsigned char)*ps->p))
    return fail(ps, "bad number");
  if (*ps->p == '0' && isdigit((unsigned char)ps->p[1]))
    return fail(ps, "leading zero");
  while (isdigit((unsigned char)*ps->p))
    ps->p++;
  if (*ps->p == '.') {
    ps->p++;
    if (!isdigit((unsigned char)*ps->p))
      return fail(ps, "bad fraction");
    while (isdigit((unsigned char)*ps->p))
      ps->p++;
  }
  if (*ps->p == 'e' || *ps->p == 'E') {
    ps->p++;
    if (*ps->p == '+' || *ps->p == '-')
      ps->p++;
    if (!isdigit((unsigned char)*ps->p))
      return fail(ps, "bad exponent");
    while (isdigit((unsigned char)*ps->p))
      ps->p++;
  }
  return add(ps, path, T_NUMBER, s, (size_t)(ps->p - s));
}

static int value(parser *ps, const char *path, int depth);

static int members(parser *ps, const char *path, int depth, int object) {
  char close = object ? '}' : ']';
  ps->p++;
  ws(ps);
  if (*ps->p == close) {
    ps->p++;
    return 1;
  }
  for (size_t i = 0;; i++) {
    char key[128], sub[256];
    ws(ps);
    if (object) {
      if (!string(ps, key, sizeof key))
        return 0;
      ws(ps);
      if (*ps->p++ != ':')
        return fail(ps, "expected ':'");
    } else
      snprintf(key, sizeof key, "%zu", i);
    snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
    if (!value(ps, sub, depth + 1))
      return 0;
    ws(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p++ != close)
      return fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    return 1;
  }
}

static int value(parser *ps, const char *path, int depth) {
  ws(ps);
  if (depth > 32)
    return fail(ps, "nested too deeply");
  char buf[512];
  switch (*ps->p) {
  case '{': return members(ps, path, depth, 1);
  case '[': return members(ps, path, depth, 0);
  case '"':
    return string(ps, buf, sizeof buf) &&
           add(ps, path, T_STRING, buf, strlen(buf));
  case 't':
  case 'f':
  case 'n': {
    const char *w = *ps->p == 't' ? "true" : *ps->p == 'f' ? "false" : "null";
    if (strncmp(ps->p, w, strlen(w)))
      return fail(ps, "bad literal");
    ps->p += strlen(w);
    return add(ps, path, *w == 'n' ? T_NULL : T_BOOL, w, strlen(w));
  }
  default: return number(ps, path);
  }
}

static const entry *find(const parser *ps, const char *path) {
  for (size_t i = 0; i < ps->n; i++)
    if (!strcmp(ps->e[i].path, path))
      return &ps->e[i];
  return NULL;
}

/* `key` must exist with type t (numbers may also be null: not measured). */
static int need(const parser *ps, const char *prefix, const char *key,
                scalar_type t) {
  char path[256];
  snprintf(path, sizeof path, "%s%s", prefix, key);
  const entry *e = find(ps, path);
  if (e && (e->type == t || (t == T_NUMBER && e->type == T_NULL)))
    return 1;
  fprintf(stderr, "json_check: %s: %s\n", path, e ? "wrong type" : "missing");
  return 0;
}

static int schema(const parser *ps) {
  static const char *const top[] = {"clphmm_version", "commit", "date", "host"};
  static const char *const run_str[] = {"device", "driver", "workload",
                                        "precision", "mode"};
  static const char *const run_num[] = {"pairs",
                                        "cells",
                                        "kernel_seconds",
                                        "wall_seconds",
                                        "gcups_kernel",
                                        "gcups_wall",
                                        "rescued_pairs",
                                        "early_exits",
                                        "max_abs_error",
                                        "mean_abs_error",
                                        "call_wall_us",
                                        "call_kernel_us",
                                        "stages.wall_seconds",
                                        "stages.prepare_seconds",
                                        "stages.upload_seconds",
                                        "stages.kernel_seconds",
                                        "stages.rows_seconds",
                                        "stages.download_seconds",
                                        "stages.rescue_seconds",
                                        "stages.finish_seconds",
                                        "stages.chunks"};
  int ok = 1;
  for (size_t i = 0; i < sizeof top / sizeof *top; i++)
    ok &= need(ps, "", top[i], T_STRING);
  size_t runs = 0;
  for (;; runs++) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "runs.%zu.", runs);
    char dev[80];
    snprintf(dev, sizeof dev, "%sdevice", prefix);
    if (!find(ps, dev))
      break;
    for (size_t i = 0; i < sizeof run_str / sizeof *run_str; i++)
      ok &= need(ps, prefix, run_str[i], T_STRING);
    for (size_t i = 0; i < sizeof run_num / sizeof *run_num; i++)
      ok &= need(ps, prefix, run_num[i], T_NUMBER);
  }
  if (!runs) {
    fprintf(stderr, "json_check: no runs\n");
    ok = 0;
  }
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: json_check FILE\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    fprintf(stderr, "json_check: cannot open %s\n", argv[1]);
    return 1;
  }
  static char text[1 << 22];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  parser ps = {text, NULL, 0, 0, NULL};
  int ok = value(&ps, "", 0);
  ws(&ps);
  if (ok && *ps.p)
    ok = fail(&ps, "text after the value");
  if (!ok) {
    fprintf(stderr, "json_check: %s: invalid JSON at offset %ld: %s\n", argv[1],
            (long)(ps.p - text), ps.error);
    free(ps.e);
    return 1;
  }
  ok = schema(&ps);
  for (size_t i = 0; i < ps.n; i++)
    printf("%s=%s\n", ps.e[i].path, ps.e[i].text);
  free(ps.e);
  return ok ? 0 : 1;
}
