/* Input files: the one-pair-per-line format (GATK's
 * --pair-hmm-results-file) and the batch ".in" format, parsed from memory
 * into a clphmm_dataset that owns every string it points to.
 *
 * While parsing, reads, haplotypes and batches are recorded as offsets and
 * indices into growable arrays (realloc may move them); the public
 * clphmm_read / clphmm_haplotype / clphmm_batch pointers are built once, at
 * the end, when nothing moves any more. */
#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clphmm.h"
#include "error.h"
#include "validate.h"

/* Base qualities below this are raised to it unless the caller passes
 * CLPHMM_READ_RAW_BASE_QUALS: the convention of GATK's and GKL's readers. */
#define MIN_BASE_QUAL 6
/* A pair line has 7 tokens; keeping one more is enough to report "found N"
 * (the count itself keeps going). */
#define MAX_TOKENS 8
/* Longest token shown verbatim in a message. */
#define SHOW_MAX 40

struct clphmm_dataset {
  char *arena; /* every base and quality byte */
  clphmm_read *reads;
  clphmm_haplotype *haps;
  clphmm_batch *batches;
  size_t *batch_lines;
  double *expected; /* one per pair; NULL for the batch format */
  size_t n_batches;
  size_t n_pairs;
};

/* ---- Growable arrays ----------------------------------------------------- */

typedef struct vec {
  void *p;
  size_t n, cap; /* in elements */
} vec;

/* Make room for `more` elements of `elem` bytes. 0 on success, -1 when the
 * size overflows or malloc fails. */
static int vec_reserve(vec *v, size_t elem, size_t more) {
  if (more <= v->cap - v->n)
    return 0;
  if (more > SIZE_MAX / elem - v->n)
    return -1;
  size_t need = v->n + more;
  size_t cap = v->cap ? v->cap : 16;
  while (cap < need)
    cap = cap > SIZE_MAX / elem / 2 ? need : cap * 2;
  void *p = realloc(v->p, cap * elem);
  if (!p)
    return -1;
  v->p = p;
  v->cap = cap;
  return 0;
}

/* Append one zeroed element; returns it, or NULL when out of memory. The
 * pointer is only valid until the next push onto the same vec. */
static void *vec_push(vec *v, size_t elem) {
  if (vec_reserve(v, elem, 1))
    return NULL;
  char *slot = (char *)v->p + v->n++ * elem;
  memset(slot, 0, elem);
  return slot;
}

/* ---- Lines and tokens ---------------------------------------------------- */

typedef struct token {
  const char *p;
  size_t n;
} token;

typedef struct line {
  token tok[MAX_TOKENS];
  size_t n_tokens; /* may exceed MAX_TOKENS; only the first are kept */
  size_t number;   /* 1-based */
} line;

typedef struct cursor {
  const char *data;
  size_t size, pos;
  size_t line;    /* number of the last line read */
  size_t n_lines; /* lines in the whole input */
} cursor;

/* '\r' counts as a separator so that CRLF files need no special case. */
static int is_separator(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

static void split_line(const char *p, size_t len, line *out) {
  size_t i = 0, n = 0;
  for (;;) {
    while (i < len && is_separator(p[i]))
      i++;
    if (i == len)
      break;
    size_t start = i;
    while (i < len && !is_separator(p[i]))
      i++;
    if (n < MAX_TOKENS)
      out->tok[n] = (token){p + start, i - start};
    n++;
  }
  out->n_tokens = n;
}

/* Advance to the next line with content, skipping blank lines and '#'
 * comment lines. Returns 0 at the end of the input. */
static int next_line(cursor *c, line *out) {
  while (c->pos < c->size) {
    const char *start = c->data + c->pos;
    const char *nl = memchr(start, '\n', c->size - c->pos);
    size_t len = nl ? (size_t)(nl - start) : c->size - c->pos;
    c->pos += len + (nl != NULL);
    c->line++;
    split_line(start, len, out);
    out->number = c->line;
    if (out->n_tokens > 0 && out->tok[0].p[0] != '#')
      return 1;
  }
  return 0;
}

static int token_eq(const token *a, const token *b) {
  return a->n == b->n && memcmp(a->p, b->p, a->n) == 0;
}

/* ---- Parser state and messages ------------------------------------------- */

typedef struct span {
  size_t off, len; /* in the arena */
} span;

typedef struct pending_batch {
  size_t read0, n_reads, hap0, n_haps, line;
} pending_batch;

typedef struct parser {
  const char *name;
  unsigned flags;
  cursor cur;
  vec arena;    /* char: a read is its bases then 4 quality strings */
  vec reads;    /* span */
  vec haps;     /* span */
  vec batches;  /* pending_batch */
  vec expected; /* double, pair format only */
} parser;

static void parser_free(parser *ps) {
  free(ps->arena.p);
  free(ps->reads.p);
  free(ps->haps.p);
  free(ps->batches.p);
  free(ps->expected.p);
}

/* Record "NAME:LINE: message" as the last error and return `status`. */
static clphmm_status fail(const parser *ps, size_t line_no,
                          clphmm_status status, const char *fmt, ...)
    CPH_PRINTF(4, 5);
static clphmm_status fail(const parser *ps, size_t line_no,
                          clphmm_status status, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cph_error(status, "%s:%zu: %s", ps->name, line_no, msg);
}

static clphmm_status out_of_memory(const parser *ps, size_t line_no) {
  return fail(ps, line_no, CLPHMM_ERROR_OUT_OF_MEMORY,
              "out of memory (input of %zu bytes)", ps->cur.size);
}

/* Printable form of a byte: 'X' or 0xNN. */
static const char *byte_repr(unsigned char b, char out[8]) {
  if (b > 0x20 && b < 0x7f)
    snprintf(out, 8, "'%c'", b);
  else
    snprintf(out, 8, "0x%02x", b);
  return out;
}

/* Control bytes can never be part of a valid file; rejecting them up front
 * gives a compressed or binary file one clear message instead of a confusing
 * token error later. Also counts the lines, which bounds the sizes a batch
 * header may claim. */
static clphmm_status scan_text(parser *ps) {
  const char *d = ps->cur.data;
  size_t size = ps->cur.size, line_no = 1, col = 0;
  for (size_t i = 0; i < size; i++) {
    unsigned char c = (unsigned char)d[i];
    col++;
    if (c == '\n') {
      line_no++;
      col = 0;
    } else if (c < 0x20 && c != '\t' && c != '\r') {
      return fail(ps, line_no, CLPHMM_ERROR_PARSE,
                  "binary data (byte 0x%02x at column %zu); expected a text "
                  "file (is it compressed?)",
                  c, col);
    }
  }
  ps->cur.n_lines = size == 0 ? 0 : line_no - (d[size - 1] == '\n');
  return CLPHMM_SUCCESS;
}

/* ---- Fields -------------------------------------------------------------- */

static clphmm_status check_bases(const parser *ps, size_t line_no,
                                 const token *t, const char *what) {
  for (size_t i = 0; i < t->n; i++) {
    unsigned char b = (unsigned char)t->p[i];
    if (cph_base_code(b) == CPH_BASE_INVALID) {
      char rep[8];
      return fail(ps, line_no, CLPHMM_ERROR_INVALID_BASE,
                  "%s base %zu is %s, expected A, C, G, T or N", what, i + 1,
                  byte_repr(b, rep));
    }
  }
  return CLPHMM_SUCCESS;
}

static const char *const qual_names[4] = {"base quality", "insertion quality",
                                          "deletion quality",
                                          "gap-continuation penalty"};

/* Decode phred+33 field `f` (0 = base quality) of a read into dst. */
static clphmm_status decode_quals(const parser *ps, size_t line_no,
                                  const token *t, size_t read_len, int f,
                                  uint8_t *dst) {
  if (t->n != read_len)
    return fail(ps, line_no, CLPHMM_ERROR_PARSE,
                "%s string has %zu characters but the read has %zu bases",
                qual_names[f], t->n, read_len);
  int min_q =
      f == 0 && !(ps->flags & CLPHMM_READ_RAW_BASE_QUALS) ? MIN_BASE_QUAL : 0;
  for (size_t i = 0; i < t->n; i++) {
    /* Tokens hold no byte below '!' (separators and control bytes are
     * excluded), so q >= 0; the check is only defensive. */
    int q = (unsigned char)t->p[i] - 33;
    if (q < 0 || q > CPH_MAX_QUAL) {
      char rep[8];
      return fail(ps, line_no, CLPHMM_ERROR_INVALID_QUALITY,
                  "%s character %zu is %s (phred %d), outside 0..%d",
                  qual_names[f], i + 1, byte_repr((unsigned char)t->p[i], rep),
                  q, CPH_MAX_QUAL);
    }
    dst[i] = (uint8_t)(q < min_q ? min_q : q);
  }
  return CLPHMM_SUCCESS;
}

/* Append a read given as 5 tokens READ BASEQ INSQ DELQ GCP. */
static clphmm_status add_read(parser *ps, size_t line_no, const token t[5]) {
  size_t len = t[0].n;
  clphmm_status st = check_bases(ps, line_no, &t[0], "read");
  if (st)
    return st;
  /* len <= input size, so 5 * len only overflows on absurd inputs. */
  if (len > SIZE_MAX / 5 || vec_reserve(&ps->arena, 1, 5 * len) ||
      vec_reserve(&ps->reads, sizeof(span), 1))
    return out_of_memory(ps, line_no);
  char *dst = (char *)ps->arena.p + ps->arena.n;
  memcpy(dst, t[0].p, len);
  for (int f = 0; f < 4; f++) {
    st = decode_quals(ps, line_no, &t[1 + f], len, f,
                      (uint8_t *)dst + (size_t)(f + 1) * len);
    if (st)
      return st;
  }
  span *s = vec_push(&ps->reads, sizeof(span));
  *s = (span){ps->arena.n, len};
  ps->arena.n += 5 * len;
  return CLPHMM_SUCCESS;
}

static clphmm_status add_haplotype(parser *ps, size_t line_no, const token *t) {
  clphmm_status st = check_bases(ps, line_no, t, "haplotype");
  if (st)
    return st;
  if (vec_reserve(&ps->arena, 1, t->n) ||
      vec_reserve(&ps->haps, sizeof(span), 1))
    return out_of_memory(ps, line_no);
  memcpy((char *)ps->arena.p + ps->arena.n, t->p, t->n);
  span *s = vec_push(&ps->haps, sizeof(span));
  *s = (span){ps->arena.n, t->n};
  ps->arena.n += t->n;
  return CLPHMM_SUCCESS;
}

/* strtod follows LC_NUMERIC, and a host program may have set a locale whose
 * decimal point is not '.'; the files always use '.', so rewrite it. */
static int localize_decimal_point(char *buf, size_t cap) {
  const char *dp = localeconv()->decimal_point;
  if (!dp || !dp[0] || strcmp(dp, ".") == 0)
    return 0;
  char *dot = strchr(buf, '.');
  if (!dot)
    return 0;
  size_t dl = strlen(dp), tail = strlen(dot + 1);
  if ((size_t)(dot - buf) + dl + tail + 1 > cap)
    return -1;
  memmove(dot + dl, dot + 1, tail + 1);
  memcpy(dot, dp, dl);
  return 0;
}

/* The EXPECTED column: anything strtod reads completely ("-inf" included). */
static clphmm_status parse_expected(const parser *ps, size_t line_no,
                                    const token *t, double *out) {
  char buf[128];
  char *end = NULL;
  if (t->n < 64) {
    memcpy(buf, t->p, t->n);
    buf[t->n] = '\0';
    if (localize_decimal_point(buf, sizeof buf) == 0)
      *out = strtod(buf, &end);
  }
  if (!end || end == buf || *end != '\0')
    return fail(ps, line_no, CLPHMM_ERROR_PARSE,
                "expected value '%.*s%s' is not a number",
                (int)(t->n < SHOW_MAX ? t->n : SHOW_MAX), t->p,
                t->n > SHOW_MAX ? "..." : "");
  return CLPHMM_SUCCESS;
}

/* ---- Pair-per-line format ------------------------------------------------ */

/* Consecutive lines with the same read and qualities become one batch of
 * 1 read x k haplotypes, which keeps results in file order. */
static clphmm_status parse_pair_lines(parser *ps, line *ln) {
  token prev[5];
  int have_prev = 0;
  do {
    if (ln->n_tokens != 7)
      return fail(ps, ln->number, CLPHMM_ERROR_PARSE,
                  "expected 7 tokens (HAP READ BASEQ INSQ DELQ GCP "
                  "EXPECTED), found %zu",
                  ln->n_tokens);
    int same = have_prev;
    for (int i = 0; same && i < 5; i++)
      same = token_eq(&prev[i], &ln->tok[1 + i]);
    if (!same) {
      clphmm_status st = add_read(ps, ln->number, &ln->tok[1]);
      if (st)
        return st;
      pending_batch *pb = vec_push(&ps->batches, sizeof *pb);
      if (!pb)
        return out_of_memory(ps, ln->number);
      *pb = (pending_batch){ps->reads.n - 1, 1, ps->haps.n, 0, ln->number};
      memcpy(prev, &ln->tok[1], sizeof prev);
      have_prev = 1;
    }
    clphmm_status st = add_haplotype(ps, ln->number, &ln->tok[0]);
    if (st)
      return st;
    ((pending_batch *)ps->batches.p)[ps->batches.n - 1].n_haps++;
    double *e = vec_push(&ps->expected, sizeof(double));
    if (!e)
      return out_of_memory(ps, ln->number);
    st = parse_expected(ps, ln->number, &ln->tok[6], e);
    if (st)
      return st;
  } while (next_line(&ps->cur, ln));
  return CLPHMM_SUCCESS;
}

/* ---- Batch format -------------------------------------------------------- */

/* A header count: decimal digits only (no sign, no junk), fitting size_t. */
static clphmm_status parse_count(const parser *ps, size_t line_no,
                                 const token *t, const char *what,
                                 size_t *out) {
  int show = (int)(t->n < SHOW_MAX ? t->n : SHOW_MAX);
  const char *more = t->n > SHOW_MAX ? "..." : "";
  size_t v = 0;
  for (size_t i = 0; i < t->n; i++) {
    unsigned d = (unsigned)(unsigned char)t->p[i] - '0';
    if (d > 9)
      return fail(ps, line_no, CLPHMM_ERROR_PARSE,
                  "%s '%.*s%s' is not a non-negative decimal integer "
                  "(header \"NR NH\" expected)",
                  what, show, t->p, more);
    if (v > (SIZE_MAX - d) / 10)
      return fail(ps, line_no, CLPHMM_ERROR_PARSE, "%s %.*s%s is too large",
                  what, show, t->p, more);
    v = v * 10 + d;
  }
  *out = v;
  return CLPHMM_SUCCESS;
}

static clphmm_status truncated(const parser *ps, size_t header_line, size_t nr,
                               size_t nh) {
  return fail(ps, header_line, CLPHMM_ERROR_PARSE,
              "header promises %zu reads and %zu haplotypes but the file "
              "ends at line %zu",
              nr, nh, ps->cur.n_lines);
}

/* Parse "NR NH" and refuse counts the rest of the file cannot hold, before
 * anything is allocated from them. */
static clphmm_status parse_header(const parser *ps, const line *ln, size_t *nr,
                                  size_t *nh) {
  if (ln->n_tokens != 2)
    return fail(ps, ln->number, CLPHMM_ERROR_PARSE,
                "expected a batch header \"NR NH\" (2 tokens), found %zu",
                ln->n_tokens);
  clphmm_status st = parse_count(ps, ln->number, &ln->tok[0], "read count", nr);
  if (!st)
    st = parse_count(ps, ln->number, &ln->tok[1], "haplotype count", nh);
  if (st)
    return st;
  size_t remaining = ps->cur.n_lines - ln->number;
  if (*nr > remaining || *nh > remaining - *nr)
    return truncated(ps, ln->number, *nr, *nh);
  return CLPHMM_SUCCESS;
}

/* One batch whose header is `ln`; leaves `ln` on its last line. */
static clphmm_status parse_batch(parser *ps, line *ln) {
  size_t nr, nh, header = ln->number;
  clphmm_status st = parse_header(ps, ln, &nr, &nh);
  if (st)
    return st;
  pending_batch pb = {ps->reads.n, nr, ps->haps.n, nh, header};
  if (vec_reserve(&ps->reads, sizeof(span), nr) ||
      vec_reserve(&ps->haps, sizeof(span), nh))
    return out_of_memory(ps, header);
  for (size_t r = 0; r < nr; r++) {
    if (!next_line(&ps->cur, ln))
      return truncated(ps, header, nr, nh);
    if (ln->n_tokens != 5)
      return fail(ps, ln->number, CLPHMM_ERROR_PARSE,
                  "expected 5 tokens (READ BASEQ INSQ DELQ GCP) for read %zu "
                  "of %zu (header on line %zu), found %zu",
                  r + 1, nr, header, ln->n_tokens);
    if ((st = add_read(ps, ln->number, ln->tok)))
      return st;
  }
  for (size_t h = 0; h < nh; h++) {
    if (!next_line(&ps->cur, ln))
      return truncated(ps, header, nr, nh);
    if (ln->n_tokens != 1)
      return fail(ps, ln->number, CLPHMM_ERROR_PARSE,
                  "expected 1 token (haplotype %zu of %zu, header on line "
                  "%zu), found %zu",
                  h + 1, nh, header, ln->n_tokens);
    if ((st = add_haplotype(ps, ln->number, &ln->tok[0])))
      return st;
  }
  pending_batch *slot = vec_push(&ps->batches, sizeof pb);
  if (!slot)
    return out_of_memory(ps, header);
  *slot = pb;
  return CLPHMM_SUCCESS;
}

static clphmm_status parse_batches(parser *ps, line *ln) {
  do {
    clphmm_status st = parse_batch(ps, ln);
    if (st)
      return st;
  } while (next_line(&ps->cur, ln));
  return CLPHMM_SUCCESS;
}

/* ---- Building the dataset ------------------------------------------------ */

/* calloc for n elements; zero elements give NULL, which is not a failure
 * (hence the separate flag). */
static void *alloc_array(size_t n, size_t elem, int *failed) {
  if (n == 0)
    return NULL;
  void *p = calloc(n, elem);
  if (!p)
    *failed = 1;
  return p;
}

static void fill_reads(clphmm_dataset *ds, const parser *ps) {
  const span *s = ps->reads.p;
  for (size_t i = 0; i < ps->reads.n; i++) {
    const char *b = ds->arena + s[i].off;
    const uint8_t *q = (const uint8_t *)b;
    size_t len = s[i].len;
    ds->reads[i] =
        (clphmm_read){b, q + len, q + 2 * len, q + 3 * len, q + 4 * len, len};
  }
  const span *h = ps->haps.p;
  for (size_t i = 0; i < ps->haps.n; i++)
    ds->haps[i] = (clphmm_haplotype){ds->arena + h[i].off, h[i].len};
}

/* Fill the batches and count the pairs; fails only if the count overflows. */
static int fill_batches(clphmm_dataset *ds, const parser *ps) {
  const pending_batch *pb = ps->batches.p;
  size_t pairs = 0;
  for (size_t i = 0; i < ps->batches.n; i++) {
    clphmm_batch *b = &ds->batches[i];
    b->n_reads = pb[i].n_reads;
    b->n_haplotypes = pb[i].n_haps;
    /* NULL + 0 is undefined, hence the guards. */
    b->reads = b->n_reads ? ds->reads + pb[i].read0 : NULL;
    b->haplotypes = b->n_haplotypes ? ds->haps + pb[i].hap0 : NULL;
    ds->batch_lines[i] = pb[i].line;
    if (b->n_reads && b->n_haplotypes > SIZE_MAX / b->n_reads)
      return -1;
    size_t n = b->n_reads * b->n_haplotypes;
    if (n > SIZE_MAX - pairs)
      return -1;
    pairs += n;
  }
  ds->n_pairs = pairs;
  return 0;
}

/* Move the parser's storage into a new dataset. */
static clphmm_status build_dataset(parser *ps, int pair_format,
                                   clphmm_dataset **out) {
  size_t end_line = ps->cur.n_lines;
  clphmm_dataset *ds = calloc(1, sizeof *ds);
  if (!ds)
    return out_of_memory(ps, end_line);
  /* The arena grew by doubling; give the slack back before pointing into
   * it (a failed shrink just keeps the bigger block). */
  if (ps->arena.n > 0) {
    char *shrunk = realloc(ps->arena.p, ps->arena.n);
    if (shrunk)
      ps->arena.p = shrunk;
  }
  ds->arena = ps->arena.p;
  ps->arena.p = NULL;
  if (pair_format) {
    ds->expected = ps->expected.p;
    ps->expected.p = NULL;
  }
  int failed = 0;
  ds->reads = alloc_array(ps->reads.n, sizeof *ds->reads, &failed);
  ds->haps = alloc_array(ps->haps.n, sizeof *ds->haps, &failed);
  ds->batches = alloc_array(ps->batches.n, sizeof *ds->batches, &failed);
  ds->batch_lines =
      alloc_array(ps->batches.n, sizeof *ds->batch_lines, &failed);
  ds->n_batches = ps->batches.n;
  if (failed) {
    clphmm_dataset_destroy(ds);
    return out_of_memory(ps, end_line);
  }
  fill_reads(ds, ps);
  if (fill_batches(ds, ps)) {
    clphmm_dataset_destroy(ds);
    return fail(ps, end_line, CLPHMM_ERROR_TOO_LARGE,
                "the number of pairs overflows size_t");
  }
  *out = ds;
  return CLPHMM_SUCCESS;
}

/* ---- Public API ---------------------------------------------------------- */

clphmm_status clphmm_dataset_read_memory(const char *data, size_t size,
                                         const char *name, unsigned flags,
                                         clphmm_dataset **dataset) {
  if (dataset)
    *dataset = NULL;
  if (!dataset || (!data && size > 0))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_dataset_read_memory: %s is NULL",
                     dataset ? "data" : "dataset");
  if (flags & ~(unsigned)CLPHMM_READ_RAW_BASE_QUALS)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_dataset_read_memory: unknown flags 0x%x", flags);
  parser ps = {.name = name ? name : "<memory>", .flags = flags};
  ps.cur = (cursor){.data = data, .size = size};
  clphmm_status st = scan_text(&ps);
  if (st)
    return st;
  line ln;
  if (!next_line(&ps.cur, &ln))
    return fail(&ps, ps.cur.n_lines ? ps.cur.n_lines : 1, CLPHMM_ERROR_PARSE,
                "empty file, no pairs");
  /* The first line decides: "NR NH" or a 7-token pair line. */
  int pair_format = ln.n_tokens == 7;
  if (pair_format)
    st = parse_pair_lines(&ps, &ln);
  else if (ln.n_tokens == 2)
    st = parse_batches(&ps, &ln);
  else
    st = fail(&ps, ln.number, CLPHMM_ERROR_PARSE,
              "unknown format: expected a batch header \"NR NH\" (2 tokens) "
              "or a pair line \"HAP READ BASEQ INSQ DELQ GCP EXPECTED\" (7 "
              "tokens), found %zu tokens",
              ln.n_tokens);
  if (!st)
    st = build_dataset(&ps, pair_format, dataset);
  parser_free(&ps);
  return st;
}

/* Read a whole stream (pipes included, so no fseek/ftell). */
static clphmm_status read_all(const char *path, vec *buf) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return cph_error(CLPHMM_ERROR_IO, "%s: cannot open: %s", path,
                     strerror(errno));
  size_t chunk = (size_t)1 << 16, got;
  do {
    if (vec_reserve(buf, 1, chunk)) {
      fclose(f);
      return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                       "%s: out of memory after reading %zu bytes", path,
                       buf->n);
    }
    got = fread((char *)buf->p + buf->n, 1, buf->cap - buf->n, f);
    buf->n += got;
  } while (got > 0 && !feof(f) && !ferror(f));
  int failed = ferror(f), err = errno;
  fclose(f);
  if (failed)
    return cph_error(CLPHMM_ERROR_IO, "%s: read error: %s", path,
                     err ? strerror(err) : "unknown error");
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_dataset_read_file(const char *path, unsigned flags,
                                       clphmm_dataset **dataset) {
  if (dataset)
    *dataset = NULL;
  if (!path || !dataset)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_dataset_read_file: %s is NULL",
                     path ? "dataset" : "path");
  vec buf = {0};
  clphmm_status st = read_all(path, &buf);
  if (!st)
    st = clphmm_dataset_read_memory(buf.p, buf.n, path, flags, dataset);
  free(buf.p);
  return st;
}

void clphmm_dataset_destroy(clphmm_dataset *ds) {
  if (!ds)
    return;
  free(ds->arena);
  free(ds->reads);
  free(ds->haps);
  free(ds->batches);
  free(ds->batch_lines);
  free(ds->expected);
  free(ds);
}

const clphmm_batch *clphmm_dataset_batches(const clphmm_dataset *ds) {
  return ds ? ds->batches : NULL;
}

size_t clphmm_dataset_n_batches(const clphmm_dataset *ds) {
  return ds ? ds->n_batches : 0;
}

size_t clphmm_dataset_n_pairs(const clphmm_dataset *ds) {
  return ds ? ds->n_pairs : 0;
}

const double *clphmm_dataset_expected(const clphmm_dataset *ds) {
  return ds ? ds->expected : NULL;
}

size_t clphmm_dataset_batch_line(const clphmm_dataset *ds, size_t b) {
  return ds && b < ds->n_batches ? ds->batch_lines[b] : 0;
}
