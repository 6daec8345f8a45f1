/* Input files: the one-pair-per-line format (GATK's
 * --pair-hmm-results-file) and the batch ".in" format, read as a stream of
 * chunks (clphmm_reader: whole batches, bounded by pairs and bytes) or at
 * once (clphmm_dataset_read_*: one chunk without bounds). One parser serves
 * both; lines come from linesrc.c, chunks are built by dataset.c.
 *
 * Nothing is ever allocated from a number the file claims: a batch header
 * only bounds a loop, and storage grows with the lines actually read. */
#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "clphmm.h"
#include "io/dataset.h"
#include "io/io.h"
#include "io/linesrc.h"
#include "model/validate.h"

/* Base qualities below this are raised to it unless the caller passes
 * CLPHMM_READ_RAW_BASE_QUALS: the convention of GATK's and GKL's readers. */
#define MIN_BASE_QUAL 6
/* A pair line has 7 tokens; keeping one more is enough to report "found N"
 * (the count itself keeps going). */
#define MAX_TOKENS 8
/* Longest token shown verbatim in a message. */
#define SHOW_MAX 40
/* Longest message kept for a reader that failed. */
#define READER_ERROR_MAX 1024

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

/* '\r' counts as a separator so that CRLF files need no special case. */
static int is_separator(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

/* Where each separator next occurs at or after a position (the line's
 * length where it does not), found with memchr (vectorised: tokens are
 * long, separators mostly spaces) and searched again only once the
 * position has passed it, so that splitting a line is linear in its
 * length whatever its separators (a search from every token to the end of
 * a line without spaces made a long tab-separated line quadratic). */
typedef struct next_seps {
  size_t at[3];
} next_seps;

static const char SEPARATORS[3] = {' ', '\t', '\r'};

/* The end of the token that starts at p[i] (not a separator). */
static size_t token_end(const char *p, size_t i, size_t len, next_seps *ns) {
  size_t end = len;
  for (int k = 0; k < 3; k++) {
    if (ns->at[k] <= i) { /* (passed: p[i] is no separator) */
      const char *q = memchr(p + i, SEPARATORS[k], len - i);
      ns->at[k] = q ? (size_t)(q - p) : len;
    }
    end = ns->at[k] < end ? ns->at[k] : end;
  }
  return end;
}

static void split_line(const char *p, size_t len, line *out) {
  size_t i = 0, n = 0;
  next_seps ns = {{0, 0, 0}};
  for (;;) {
    while (i < len && is_separator(p[i]))
      i++;
    if (i == len)
      break;
    size_t start = i;
    i = token_end(p, i, len, &ns);
    if (n < MAX_TOKENS)
      out->tok[n] = (token){p + start, i - start};
    n++;
  }
  out->n_tokens = n;
}

/* ---- Reader state and messages ------------------------------------------- */

enum { FORMAT_UNKNOWN, FORMAT_PAIRS, FORMAT_BATCHES };

struct clphmm_reader {
  cph_linesrc src;
  char *name; /* owned copy, for messages */
  unsigned flags;
  int format;
  cph_store st;  /* the chunk being built */
  line ln;       /* the current content line (tokens point into src) */
  int have_line; /* ln holds a line that no batch has consumed yet */
  int done;      /* the input is exhausted */
  /* Pair format: the read line (5 raw tokens, concatenated) of the batch
   * being built, which the next line must repeat to join the batch. */
  cph_vec prev;
  size_t prev_len[5];
  clphmm_status failed; /* sticky: every later call repeats it */
  char error[READER_ERROR_MAX];
};

/* Record "NAME:LINE: message" as the last error and return `status`. */
static clphmm_status fail(const clphmm_reader *r, size_t line_no,
                          clphmm_status status, const char *fmt, ...)
    CPH_PRINTF(4, 5);
static clphmm_status fail(const clphmm_reader *r, size_t line_no,
                          clphmm_status status, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cph_error(status, "%s:%zu: %s", r->name, line_no, msg);
}

static clphmm_status out_of_memory(const clphmm_reader *r, size_t line_no) {
  return fail(r, line_no, CLPHMM_ERROR_OUT_OF_MEMORY,
              "out of memory (chunk of %zu bytes so far)",
              cph_store_bytes(&r->st));
}

/* Printable form of a byte: 'X' or 0xNN. */
static const char *byte_repr(unsigned char b, char out[8]) {
  if (b > 0x20 && b < 0x7f)
    snprintf(out, 8, "'%c'", b);
  else
    snprintf(out, 8, "0x%02x", b);
  return out;
}

/* Printable form of a token for a message: at most SHOW_MAX bytes, those
 * outside printable ASCII as \xNN (a UTF-8 byte-order mark or a stray
 * control byte would otherwise be invisible in the message), then "..."
 * if there is more. */
#define TOKEN_REPR_MAX (4 * SHOW_MAX + 4)
static const char *token_repr(const token *t, char out[TOKEN_REPR_MAX]) {
  size_t k = 0;
  const size_t n = t->n < SHOW_MAX ? t->n : SHOW_MAX;
  for (size_t i = 0; i < n; i++) {
    const unsigned char b = (unsigned char)t->p[i];
    if (b >= 0x20 && b < 0x7f)
      out[k++] = (char)b;
    else
      k += (size_t)snprintf(out + k, 5, "\\x%02x", b);
  }
  if (t->n > SHOW_MAX)
    memcpy(out + k, "...", 3), k += 3;
  out[k] = '\0';
  return out;
}

/* Advance to the next line with content, skipping blank lines and '#'
 * comment lines. *got is 0 at the end of the input. */
static clphmm_status next_line(clphmm_reader *r, int *got) {
  const char *p;
  size_t n;
  int k;
  r->have_line = 0;
  while ((k = cph_linesrc_next(&r->src, &p, &n)) == 1) {
    split_line(p, n, &r->ln);
    r->ln.number = r->src.line_no;
    if (r->ln.n_tokens > 0 && r->ln.tok[0].p[0] != '#') {
      r->have_line = 1;
      *got = 1;
      return CLPHMM_SUCCESS;
    }
  }
  *got = 0;
  return k < 0 ? r->src.error : CLPHMM_SUCCESS;
}

/* ---- Fields -------------------------------------------------------------- */

/* Whether every byte is a base letter: A, C, G, T or N in either case
 * (clearing bit 5 maps exactly the lower-case letters onto the upper-case
 * ones), in one pass without an exit, which compilers vectorise. */
static int all_bases(const char *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  uint8_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    /* (Byte masks: GCC 12 leaves a chain of comparisons scalar.) */
    const uint8_t u = b[i] & 0xdf;
    uint8_t ok = (uint8_t) - (uint8_t)(u == 'A');
    ok |= (uint8_t) - (uint8_t)(u == 'C');
    ok |= (uint8_t) - (uint8_t)(u == 'G');
    ok |= (uint8_t) - (uint8_t)(u == 'T');
    ok |= (uint8_t) - (uint8_t)(u == 'N');
    bad |= (uint8_t)~ok;
  }
  return !bad;
}

static clphmm_status check_bases(const clphmm_reader *r, size_t line_no,
                                 const token *t, const char *what) {
  if (all_bases(t->p, t->n))
    return CLPHMM_SUCCESS;
  for (size_t i = 0; i < t->n; i++) {
    unsigned char b = (unsigned char)t->p[i];
    if (cph_base_code(b) == CPH_BASE_INVALID) {
      char rep[8];
      return fail(r, line_no, CLPHMM_ERROR_INVALID_BASE,
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
static clphmm_status decode_quals(const clphmm_reader *r, size_t line_no,
                                  const token *t, size_t read_len, int f,
                                  uint8_t *dst) {
  if (t->n != read_len)
    return fail(r, line_no, CLPHMM_ERROR_PARSE,
                "%s string has %zu characters but the read has %zu bases",
                qual_names[f], t->n, read_len);
  const int min_q =
      f == 0 && !(r->flags & CLPHMM_READ_RAW_BASE_QUALS) ? MIN_BASE_QUAL : 0;
  /* Decode and check in one pass without an exit (vectorised); the loop
   * below only runs to name a bad character. */
  const unsigned char *restrict src = (const unsigned char *)t->p;
  uint8_t *restrict out = dst;
  const size_t n = t->n;
  unsigned bad = 0;
  for (size_t i = 0; i < n; i++) {
    const int q = src[i] - 33;
    bad |= (unsigned)(q < 0) | (unsigned)(q > CPH_MAX_QUAL);
    out[i] = (uint8_t)(q < min_q ? min_q : q);
  }
  if (!bad)
    return CLPHMM_SUCCESS;
  for (size_t i = 0; i < t->n; i++) {
    /* Tokens hold no byte below '!' (separators and control bytes are
     * excluded), so q >= 0; the check is only defensive. */
    int q = (unsigned char)t->p[i] - 33;
    if (q < 0 || q > CPH_MAX_QUAL) {
      char rep[8];
      return fail(r, line_no, CLPHMM_ERROR_INVALID_QUALITY,
                  "%s character %zu is %s (phred %d), outside 0..%d",
                  qual_names[f], i + 1, byte_repr((unsigned char)t->p[i], rep),
                  q, CPH_MAX_QUAL);
    }
    dst[i] = (uint8_t)(q < min_q ? min_q : q);
  }
  return CLPHMM_SUCCESS;
}

/* Append a read given as 5 tokens READ BASEQ INSQ DELQ GCP. */
static clphmm_status add_read(clphmm_reader *r, size_t line_no,
                              const token t[5]) {
  size_t len = t[0].n;
  clphmm_status st = check_bases(r, line_no, &t[0], "read");
  if (st)
    return st;
  /* len <= CLPHMM_MAX_LINE_BYTES, so 5 * len cannot overflow; the check
   * only keeps that true if the limit ever grows. */
  if (len > SIZE_MAX / 5 || cph_vec_reserve(&r->st.arena, 1, 5 * len) ||
      cph_vec_reserve(&r->st.reads, sizeof(cph_span), 1))
    return out_of_memory(r, line_no);
  char *dst = (char *)r->st.arena.p + r->st.arena.n;
  memcpy(dst, t[0].p, len);
  for (int f = 0; f < 4; f++) {
    st = decode_quals(r, line_no, &t[1 + f], len, f,
                      (uint8_t *)dst + (size_t)(f + 1) * len);
    if (st)
      return st;
  }
  cph_span *s = cph_vec_push(&r->st.reads, sizeof(cph_span));
  *s = (cph_span){r->st.arena.n, len};
  r->st.arena.n += 5 * len;
  return CLPHMM_SUCCESS;
}

static clphmm_status add_haplotype(clphmm_reader *r, size_t line_no,
                                   const token *t) {
  clphmm_status st = check_bases(r, line_no, t, "haplotype");
  if (st)
    return st;
  if (cph_vec_reserve(&r->st.arena, 1, t->n) ||
      cph_vec_reserve(&r->st.haps, sizeof(cph_span), 1))
    return out_of_memory(r, line_no);
  memcpy((char *)r->st.arena.p + r->st.arena.n, t->p, t->n);
  cph_span *s = cph_vec_push(&r->st.haps, sizeof(cph_span));
  *s = (cph_span){r->st.arena.n, t->n};
  r->st.arena.n += t->n;
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
static clphmm_status parse_expected(const clphmm_reader *r, size_t line_no,
                                    const token *t, double *out) {
  /* (A number of any length: written by another program, it may carry
   * many digits.) */
  char small[128], *buf = small;
  char *end = NULL;
  const size_t cap = t->n + 16; /* (room for a longer decimal point) */
  if (cap > sizeof small)
    buf = malloc(cap);
  if (!buf)
    return out_of_memory(r, line_no);
  memcpy(buf, t->p, t->n);
  buf[t->n] = '\0';
  if (localize_decimal_point(buf, cap) == 0)
    *out = strtod(buf, &end);
  const int bad = !end || end == buf || *end != '\0';
  if (buf != small)
    free(buf);
  char shown[TOKEN_REPR_MAX];
  if (bad)
    return fail(r, line_no, CLPHMM_ERROR_PARSE,
                "expected value '%s' is not a number", token_repr(t, shown));
  return CLPHMM_SUCCESS;
}

/* ---- Pair-per-line format ------------------------------------------------ */

static clphmm_status want_pair_tokens(const clphmm_reader *r, const line *ln) {
  if (ln->n_tokens == 7)
    return CLPHMM_SUCCESS;
  return fail(r, ln->number, CLPHMM_ERROR_PARSE,
              "expected 7 tokens (HAP READ BASEQ INSQ DELQ GCP EXPECTED), "
              "found %zu",
              ln->n_tokens);
}

/* Keep the raw read tokens of the batch being built (the line they point
 * into is about to be replaced). */
static clphmm_status remember_read(clphmm_reader *r, const token t[5]) {
  size_t total = 0;
  for (int i = 0; i < 5; i++)
    total += t[i].n; /* the line is at most CLPHMM_MAX_LINE_BYTES */
  r->prev.n = 0;
  if (cph_vec_reserve(&r->prev, 1, total))
    return out_of_memory(r, r->ln.number);
  for (int i = 0; i < 5; i++) {
    memcpy((char *)r->prev.p + r->prev.n, t[i].p, t[i].n);
    r->prev.n += t[i].n;
    r->prev_len[i] = t[i].n;
  }
  return CLPHMM_SUCCESS;
}

static int same_read(const clphmm_reader *r, const token t[5]) {
  const char *p = r->prev.p;
  for (int i = 0; i < 5; i++) {
    if (t[i].n != r->prev_len[i] || memcmp(t[i].p, p, t[i].n) != 0)
      return 0;
    p += t[i].n;
  }
  return 1;
}

/* One batch: consecutive lines with the same read and qualities (1 read x
 * k haplotypes, which keeps results in file order). Starts on the current
 * line; ends with the first line of the next batch current, if any. */
static clphmm_status parse_pair_batch(clphmm_reader *r) {
  line *ln = &r->ln;
  clphmm_status st = want_pair_tokens(r, ln);
  if (!st)
    st = add_read(r, ln->number, &ln->tok[1]);
  if (!st)
    st = remember_read(r, &ln->tok[1]);
  if (st)
    return st;
  cph_pending_batch *pb = cph_vec_push(&r->st.batches, sizeof *pb);
  if (!pb)
    return out_of_memory(r, ln->number);
  *pb = (cph_pending_batch){r->st.reads.n - 1, 1, r->st.haps.n, 0, ln->number};
  for (;;) {
    if ((st = add_haplotype(r, ln->number, &ln->tok[0])))
      return st;
    ((cph_pending_batch *)r->st.batches.p)[r->st.batches.n - 1].n_haps++;
    double *e = cph_vec_push(&r->st.expected, sizeof(double));
    if (!e)
      return out_of_memory(r, ln->number);
    if ((st = parse_expected(r, ln->number, &ln->tok[6], e)))
      return st;
    int got;
    if ((st = next_line(r, &got)) || !got)
      return st;
    if ((st = want_pair_tokens(r, ln)))
      return st;
    if (!same_read(r, &ln->tok[1]))
      return CLPHMM_SUCCESS;
  }
}

/* ---- Batch format -------------------------------------------------------- */

/* A header count: decimal digits only (no sign, no junk), fitting size_t. */
static clphmm_status parse_count(const clphmm_reader *r, size_t line_no,
                                 const token *t, const char *what,
                                 size_t *out) {
  char shown[TOKEN_REPR_MAX];
  size_t v = 0;
  for (size_t i = 0; i < t->n; i++) {
    unsigned d = (unsigned)(unsigned char)t->p[i] - '0';
    if (d > 9)
      return fail(r, line_no, CLPHMM_ERROR_PARSE,
                  "%s '%s' is not a non-negative decimal integer "
                  "(header \"NR NH\" expected)",
                  what, token_repr(t, shown));
    if (v > (SIZE_MAX - d) / 10)
      return fail(r, line_no, CLPHMM_ERROR_PARSE,
                  "%s %s is too large (at most %zu)", what,
                  token_repr(t, shown), (size_t)SIZE_MAX);
    v = v * 10 + d;
  }
  *out = v;
  return CLPHMM_SUCCESS;
}

static clphmm_status truncated(const clphmm_reader *r, size_t header_line,
                               size_t nr, size_t nh) {
  return fail(r, header_line, CLPHMM_ERROR_PARSE,
              "header promises %zu reads and %zu haplotypes but the file "
              "ends at line %zu",
              nr, nh, r->src.line_no);
}

/* Parse "NR NH". The counts only bound loops: nothing is allocated from
 * them, so a header that lies costs nothing but its error message. */
static clphmm_status parse_header(const clphmm_reader *r, const line *ln,
                                  size_t *nr, size_t *nh) {
  if (ln->n_tokens != 2)
    return fail(r, ln->number, CLPHMM_ERROR_PARSE,
                "expected a batch header \"NR NH\" (2 tokens), found %zu",
                ln->n_tokens);
  clphmm_status st = parse_count(r, ln->number, &ln->tok[0], "read count", nr);
  if (!st)
    st = parse_count(r, ln->number, &ln->tok[1], "haplotype count", nh);
  if (st)
    return st;
  if (*nr && *nh > SIZE_MAX / *nr)
    return fail(r, ln->number, CLPHMM_ERROR_TOO_LARGE,
                "%zu reads x %zu haplotypes overflows the pair count", *nr,
                *nh);
  return CLPHMM_SUCCESS;
}

static clphmm_status parse_reads(clphmm_reader *r, size_t header, size_t nr,
                                 size_t nh) {
  line *ln = &r->ln;
  for (size_t i = 0; i < nr; i++) {
    int got;
    clphmm_status st = next_line(r, &got);
    if (st)
      return st;
    if (!got)
      return truncated(r, header, nr, nh);
    if (ln->n_tokens != 5)
      return fail(r, ln->number, CLPHMM_ERROR_PARSE,
                  "expected 5 tokens (READ BASEQ INSQ DELQ GCP) for read %zu "
                  "of %zu (header on line %zu), found %zu%s",
                  i + 1, nr, header, ln->n_tokens,
                  ln->n_tokens == 1 ? " (does the header promise too many "
                                      "reads?)"
                                    : "");
    if ((st = add_read(r, ln->number, ln->tok)))
      return st;
  }
  return CLPHMM_SUCCESS;
}

static clphmm_status parse_haplotypes(clphmm_reader *r, size_t header,
                                      size_t nr, size_t nh) {
  line *ln = &r->ln;
  for (size_t i = 0; i < nh; i++) {
    int got;
    clphmm_status st = next_line(r, &got);
    if (st)
      return st;
    if (!got)
      return truncated(r, header, nr, nh);
    if (ln->n_tokens != 1)
      return fail(r, ln->number, CLPHMM_ERROR_PARSE,
                  "expected 1 token (haplotype %zu of %zu, header on line "
                  "%zu), found %zu",
                  i + 1, nh, header, ln->n_tokens);
    if ((st = add_haplotype(r, ln->number, &ln->tok[0])))
      return st;
  }
  return CLPHMM_SUCCESS;
}

/* One batch whose header is the current line; consumes its last line. */
static clphmm_status parse_batch(clphmm_reader *r) {
  size_t nr = 0, nh = 0, header = r->ln.number;
  clphmm_status st = parse_header(r, &r->ln, &nr, &nh);
  if (st)
    return st;
  r->have_line = 0;
  cph_pending_batch pb = {r->st.reads.n, nr, r->st.haps.n, nh, header};
  if ((st = parse_reads(r, header, nr, nh)) ||
      (st = parse_haplotypes(r, header, nr, nh)))
    return st;
  r->have_line = 0;
  cph_pending_batch *slot = cph_vec_push(&r->st.batches, sizeof pb);
  if (!slot)
    return out_of_memory(r, header);
  *slot = pb;
  return CLPHMM_SUCCESS;
}

/* ---- Chunks -------------------------------------------------------------- */

/* Whether a carriage return lies between the line's first and last kept
 * tokens: a file whose lines end with CR alone reads as one long line. */
static int inner_cr(const line *ln) {
  const size_t k = ln->n_tokens < MAX_TOKENS ? ln->n_tokens : MAX_TOKENS;
  if (k < 2)
    return 0;
  const char *a = ln->tok[0].p, *b = ln->tok[k - 1].p;
  return memchr(a, '\r', (size_t)(b - a)) != NULL;
}

/* The first content line decides: "NR NH" or a 7-token pair line. */
static clphmm_status detect_format(clphmm_reader *r) {
  int got;
  clphmm_status st = next_line(r, &got);
  if (st)
    return st;
  if (!got)
    return fail(r, r->src.line_no ? r->src.line_no : 1, CLPHMM_ERROR_PARSE,
                "empty file, no pairs");
  const token *t0 = &r->ln.tok[0];
  if (r->ln.number == 1 && t0->n >= 3 && !memcmp(t0->p, "\xef\xbb\xbf", 3))
    return fail(r, 1, CLPHMM_ERROR_PARSE,
                "the file starts with a UTF-8 byte-order mark (bytes "
                "\\xef\\xbb\\xbf): remove it");
  if (r->ln.n_tokens == 7)
    r->format = FORMAT_PAIRS;
  else if (r->ln.n_tokens == 2)
    r->format = FORMAT_BATCHES;
  else
    return fail(r, r->ln.number, CLPHMM_ERROR_PARSE,
                "unknown format: expected a batch header \"NR NH\" (2 "
                "tokens) or a pair line \"HAP READ BASEQ INSQ DELQ GCP "
                "EXPECTED\" (7 tokens), found %zu tokens%s",
                r->ln.n_tokens,
                inner_cr(&r->ln) ? "; its tokens are separated by carriage "
                                   "returns: do the file's lines end with CR "
                                   "alone? (convert them to LF)"
                                 : "");
  return CLPHMM_SUCCESS;
}

/* Pairs of the batch just parsed. */
static size_t last_batch_pairs(const cph_store *st) {
  const cph_pending_batch *pb =
      (const cph_pending_batch *)st->batches.p + st->batches.n - 1;
  return pb->n_reads * pb->n_haps; /* checked by parse_header */
}

static clphmm_status read_chunk(clphmm_reader *r, size_t max_pairs,
                                size_t max_bytes, clphmm_dataset **chunk) {
  clphmm_status st = CLPHMM_SUCCESS;
  if (r->format == FORMAT_UNKNOWN && (st = detect_format(r)))
    return st;
  size_t pairs = 0;
  while (!r->done) {
    int got = 1;
    if (!r->have_line && (st = next_line(r, &got)))
      return st;
    if (!got) {
      r->done = 1;
      break;
    }
    size_t line_no = r->ln.number;
    st = r->format == FORMAT_PAIRS ? parse_pair_batch(r) : parse_batch(r);
    if (st)
      return st;
    size_t n = last_batch_pairs(&r->st);
    if (n > SIZE_MAX - pairs)
      return fail(r, line_no, CLPHMM_ERROR_TOO_LARGE,
                  "this batch's %zu pairs after %zu overflow the pair count", n,
                  pairs);
    pairs += n;
    if ((max_pairs && pairs >= max_pairs) ||
        (max_bytes && cph_store_bytes(&r->st) >= max_bytes))
      break;
  }
  if (r->st.batches.n == 0)
    return CLPHMM_SUCCESS; /* the end: *chunk stays NULL */
  st = cph_dataset_build(&r->st, r->format == FORMAT_PAIRS, chunk);
  if (st == CLPHMM_ERROR_TOO_LARGE)
    return fail(r, r->src.line_no, st, "the number of pairs overflows size_t");
  if (st)
    return out_of_memory(r, r->src.line_no);
  return CLPHMM_SUCCESS;
}

/* ---- Public API ---------------------------------------------------------- */

static clphmm_status check_flags(const char *fn, unsigned flags) {
  if (flags & ~(unsigned)CLPHMM_READ_RAW_BASE_QUALS)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "%s: unknown flags 0x%x",
                     fn, flags);
  return CLPHMM_SUCCESS;
}

static clphmm_status new_reader(const char *name, unsigned flags,
                                clphmm_reader **out) {
  clphmm_reader *r = calloc(1, sizeof *r);
  size_t len = strlen(name);
  char *copy = malloc(len + 1);
  if (!r || !copy) {
    free(r);
    free(copy);
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "%s: no memory for a reader",
                     name);
  }
  memcpy(copy, name, len + 1);
  r->name = copy;
  r->flags = flags;
  *out = r;
  return CLPHMM_SUCCESS;
}

clphmm_status cph_reader_open_stream(FILE *f, const char *name, unsigned flags,
                                     size_t first_buffer,
                                     clphmm_reader **reader) {
  clphmm_reader *r = NULL;
  clphmm_status st = new_reader(name, flags, &r);
  if (st) {
    fclose(f);
    return st;
  }
  cph_linesrc_stream(&r->src, f, r->name, first_buffer);
  *reader = r;
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_reader_open(const char *path, unsigned flags,
                                 clphmm_reader **reader) {
  if (reader)
    *reader = NULL;
  if (!path || !reader)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_reader_open: %s is NULL",
                     path ? "reader" : "path");
  clphmm_status st = check_flags("clphmm_reader_open", flags);
  if (st)
    return st;
  FILE *f = fopen(path, "rb");
  if (!f)
    return cph_error(CLPHMM_ERROR_IO, "%s: cannot open: %s", path,
                     strerror(errno));
  /* A directory opens but cannot be read: say so now, not at the first
   * chunk. */
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fclose(f);
    return cph_error(CLPHMM_ERROR_IO, "%s: cannot read: %s", path,
                     strerror(EISDIR));
  }
  return cph_reader_open_stream(f, path, flags, 0, reader);
}

clphmm_status clphmm_reader_open_memory(const char *data, size_t size,
                                        const char *name, unsigned flags,
                                        clphmm_reader **reader) {
  if (reader)
    *reader = NULL;
  if (!reader || (!data && size > 0))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_reader_open_memory: %s is NULL",
                     reader ? "data" : "reader");
  clphmm_status st = check_flags("clphmm_reader_open_memory", flags);
  clphmm_reader *r = NULL;
  if (st || (st = new_reader(name ? name : "<memory>", flags, &r)))
    return st;
  cph_linesrc_memory(&r->src, data, size, r->name);
  *reader = r;
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_reader_next(clphmm_reader *reader, size_t max_pairs,
                                 size_t max_bytes, clphmm_dataset **chunk) {
  if (chunk)
    *chunk = NULL;
  if (!reader || !chunk)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_reader_next: %s is NULL",
                     reader ? "chunk" : "reader");
  if (reader->failed)
    return cph_error(reader->failed, "%s", reader->error);
  clphmm_status st = read_chunk(reader, max_pairs, max_bytes, chunk);
  if (st) {
    /* Drop the partial chunk; keep the message for later calls. */
    reader->failed = st;
    snprintf(reader->error, sizeof reader->error, "%s", cph_error_message());
    cph_store_free(&reader->st);
  }
  return st;
}

void clphmm_reader_close(clphmm_reader *reader) {
  if (!reader)
    return;
  cph_linesrc_close(&reader->src);
  cph_store_free(&reader->st);
  free(reader->prev.p);
  free(reader->name);
  free(reader);
}

/* The whole input as one chunk. */
static clphmm_status read_whole(clphmm_reader *r, clphmm_dataset **dataset) {
  clphmm_status st = clphmm_reader_next(r, 0, 0, dataset);
  clphmm_reader_close(r);
  return st;
}

clphmm_status clphmm_dataset_read_memory(const char *data, size_t size,
                                         const char *name, unsigned flags,
                                         clphmm_dataset **dataset) {
  if (dataset)
    *dataset = NULL;
  if (!dataset || (!data && size > 0))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_dataset_read_memory: %s is NULL",
                     dataset ? "data" : "dataset");
  clphmm_reader *r = NULL;
  clphmm_status st = clphmm_reader_open_memory(data, size, name, flags, &r);
  return st ? st : read_whole(r, dataset);
}

clphmm_status clphmm_dataset_read_file(const char *path, unsigned flags,
                                       clphmm_dataset **dataset) {
  if (dataset)
    *dataset = NULL;
  if (!path || !dataset)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "clphmm_dataset_read_file: %s is NULL",
                     path ? "dataset" : "path");
  clphmm_reader *r = NULL;
  clphmm_status st = clphmm_reader_open(path, flags, &r);
  return st ? st : read_whole(r, dataset);
}
