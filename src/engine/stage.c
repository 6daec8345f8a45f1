#include "engine/stage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/validate.h"

void cph_stage_release(const cph_bufctx *c, cph_stage *s) {
  cph_hostbuf_release(c, &s->raw);
  cph_hostbuf_release(c, &s->reads);
  cph_hostbuf_release(c, &s->hcodes);
  cph_hostbuf_release(c, &s->rows);
  cph_hostbuf_release(c, &s->weights);
  free(s->jobs);
  free(s->offs);
  free(s->bad);
  s->jobs = NULL;
  s->offs = NULL;
  s->bad = NULL;
  s->cap_jobs = s->cap_offs = s->cap_bad = 0;
}

uint64_t cph_stage_device_bytes(uint64_t rows, uint64_t words, uint64_t reads,
                                uint64_t pairs, size_t real) {
  /* raw bytes + rows; haplotypes; read table + weights; pair list, sums
   * (two per slot) and about one work-group entry per slot. */
  return rows * (CPH_RAW_ROW_BYTES + 8 * real) + 4 * words + 24 * reads +
         pairs * (16 + 2 * real + 8);
}

/* Grow a malloc'ed array to hold n elements (contents kept). */
static int grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n <= *cap)
    return 1;
  size_t c = n + n / 2;
  if (c > SIZE_MAX / size)
    return 0;
  void *q = realloc(*p, c * size);
  if (!q)
    return 0;
  *p = q;
  *cap = c;
  return 1;
}

/* Room for the staged data of the sizes in s (n_rows etc.). */
static clphmm_status ensure(const cph_bufctx *c, cph_stage *s,
                            size_t n_pieces) {
  clphmm_status st = CLPHMM_SUCCESS;
  if (s->n_rows > UINT32_MAX || s->n_hwords > UINT32_MAX ||
      s->n_jobs > UINT32_MAX || s->n_reads > UINT32_MAX)
    return cph_error(CLPHMM_ERROR_TOO_LARGE,
                     "more than 2^32-1 read rows, haplotype words or pairs in "
                     "one piece of work; split the input");
  st = cph_hostbuf_ensure(c, &s->raw, CPH_RAW_ROW_BYTES * s->n_rows,
                          "staging reads");
  if (!st)
    st = cph_hostbuf_ensure(c, &s->reads, 8 * s->n_reads, "staging reads");
  if (!st)
    st = cph_hostbuf_ensure(c, &s->hcodes, 4 * s->n_hwords,
                            "staging haplotypes");
  if (!st)
    st = cph_hostbuf_ensure(c, &s->weights, 16 * s->n_reads, "staging weights");
  if (!st && s->host_prep)
    st = cph_hostbuf_ensure(c, &s->rows, 8 * s->real_size * s->n_rows,
                            "staging read rows");
  if (!st &&
      (!grow((void **)&s->jobs, &s->cap_jobs, s->n_jobs + 1, sizeof *s->jobs) ||
       !grow((void **)&s->offs, &s->cap_offs, 4 * (n_pieces + 1),
             sizeof *s->offs) ||
       !grow((void **)&s->bad, &s->cap_bad, n_pieces + 1, sizeof *s->bad)))
    st = cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to plan %zu pairs",
                   s->n_jobs);
  return st;
}

clphmm_status cph_stage_copy(const cph_bufctx *c, cph_stage *s,
                             const cph_stage *from) {
  s->n_rows = from->n_rows;
  s->n_reads = from->n_reads;
  s->n_hwords = from->n_hwords;
  s->n_jobs = from->n_jobs;
  clphmm_status st = ensure(c, s, 0);
  if (st)
    return st;
  memcpy(s->raw.ptr, from->raw.ptr, CPH_RAW_ROW_BYTES * s->n_rows);
  memcpy(s->reads.ptr, from->reads.ptr, 8 * s->n_reads);
  memcpy(s->hcodes.ptr, from->hcodes.ptr, 4 * s->n_hwords);
  /* (Not the weights: each pass has its own, from its own tables. Until
   * computed they are NaN, so that a weight never computed shows.) */
  double *w = s->weights.ptr;
  for (size_t k = 0; k < 2 * s->n_reads; k++)
    w[k] = NAN;
  memcpy(s->jobs, from->jobs, s->n_jobs * sizeof *s->jobs);
  return CLPHMM_SUCCESS;
}

/* Reads per part of the weights on the pool (a multiple of 4). */
#define WEIGHT_PART 256

/* Read k's weights from its staged insertion and deletion qualities. */
static void read_weights(cph_stage *s, size_t k) {
  const uint32_t *reads = s->reads.ptr;
  const uint8_t *raw = s->raw.ptr;
  double *w = s->weights.ptr;
  cph_weights_scaled(raw + 2 * s->n_rows + reads[2 * k],
                     raw + 3 * s->n_rows + reads[2 * k], reads[2 * k + 1],
                     s->flavor == CPH_GKL_DOUBLE, &w[2 * k], &w[2 * k + 1]);
}

/* The weights of reads idx[0 .. n-1] (NULL: reads lo .. lo + n - 1), four
 * at a time as independent chains of products (cph_weights_scaled4: the
 * same bits as one at a time). */
static void weights_of_reads(cph_stage *s, const uint32_t *idx, size_t lo,
                             size_t n) {
  const uint32_t *reads = s->reads.ptr;
  const uint8_t *ins = (const uint8_t *)s->raw.ptr + 2 * s->n_rows,
                *del = (const uint8_t *)s->raw.ptr + 3 * s->n_rows;
  double *w = s->weights.ptr;
  const int dbl = s->flavor == CPH_GKL_DOUBLE;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint8_t *in[4], *de[4];
    size_t len[4];
    double out[8];
    for (int r = 0; r < 4; r++) {
      const size_t k = idx ? idx[i + r] : lo + i + r;
      in[r] = ins + reads[2 * k];
      de[r] = del + reads[2 * k];
      len[r] = reads[2 * k + 1];
      out[2 * r] = w[2 * k]; /* (a read of length 0 keeps its 1, 1) */
      out[2 * r + 1] = w[2 * k + 1];
    }
    cph_weights_scaled4(in, de, len, dbl, out);
    for (int r = 0; r < 4; r++) {
      const size_t k = idx ? idx[i + r] : lo + i + r;
      w[2 * k] = out[2 * r];
      w[2 * k + 1] = out[2 * r + 1];
    }
  }
  for (; i < n; i++)
    read_weights(s, idx ? idx[i] : lo + i);
}

static void weights_part(void *arg, size_t part) {
  cph_stage *s = arg;
  const size_t lo = part * WEIGHT_PART, hi = lo + WEIGHT_PART < s->n_reads
                                                 ? lo + WEIGHT_PART
                                                 : s->n_reads;
  weights_of_reads(s, NULL, lo, hi - lo);
}

void cph_stage_weights(cph_stage *s, cph_pool *pool) {
  cph_pool_for(cph_pool_for_work(pool, s->n_rows),
               (s->n_reads + WEIGHT_PART - 1) / WEIGHT_PART, weights_part, s);
}

void cph_stage_weights_of(cph_stage *s, const unsigned char *want) {
  /* Each wanted read once: a region's rescue pairs are often several
   * haplotypes of one read (on the H200 a 300-pair region's rescue spent
   * about 15 us here computing a read's weights again for each). */
  uint32_t *idx = malloc((s->n_reads ? s->n_reads : 1) * sizeof *idx);
  unsigned char *seen = calloc(s->n_reads ? s->n_reads : 1, 1);
  size_t n = 0;
  for (size_t i = 0; i < s->n_jobs; i++) {
    const uint32_t r = s->jobs[i].read;
    if (!want[s->jobs[i].out])
      continue;
    if (!idx || !seen) /* (no memory: one at a time, again per job) */
      read_weights(s, r);
    else if (!seen[r]) {
      seen[r] = 1;
      idx[n++] = r;
    }
  }
  weights_of_reads(s, idx, 0, n);
  free(idx);
  free(seen);
}

/* Copy n quality bytes; returns their OR (bit 7: a byte above 127). */
static uint8_t copy_quals(uint8_t *dst, const uint8_t *src, size_t n) {
  uint8_t any = 0;
  for (size_t i = 0; i < n; i++) {
    dst[i] = src[i];
    any |= src[i];
  }
  return any;
}

/* Read k's entry in the read table (first row, length) and its weights,
 * 1 and 1 until computed; returns the weights. */
static double *set_read_entry(cph_stage *s, size_t row, size_t len, size_t k) {
  ((uint32_t *)s->reads.ptr)[2 * k] = (uint32_t)row;
  ((uint32_t *)s->reads.ptr)[2 * k + 1] = (uint32_t)len;
  double *w = (double *)s->weights.ptr + 2 * k;
  w[0] = w[1] = 1.0;
  return w;
}

/* One read into the raw arrays at row `row` (and its rows and weights when
 * the host prepares them); its table entry is read index `k`. Returns 0
 * when the read is invalid (a NULL array, a bad base or quality): nothing
 * is computed then, and the caller finds the error. */
static int stage_read(cph_stage *s, const clphmm_read *rd, size_t row,
                      size_t k) {
  uint8_t *raw = s->raw.ptr;
  const size_t n = s->n_rows, len = rd->length;
  double *w = set_read_entry(s, row, len, k);
  if (len == 0)
    return 1;
  if (!rd->bases || !rd->base_quals || !rd->ins_quals || !rd->del_quals ||
      !rd->gcp_quals)
    return 0;
  uint8_t any = cph_encode_bases(rd->bases, len, raw + row);
  any |= copy_quals(raw + n + row, rd->base_quals, len);
  any |= copy_quals(raw + 2 * n + row, rd->ins_quals, len);
  any |= copy_quals(raw + 3 * n + row, rd->del_quals, len);
  any |= copy_quals(raw + 4 * n + row, rd->gcp_quals, len);
  if (any & 0x80)
    return 0;
  if (!s->host_prep)
    return 1;
  unsigned char *dst = (unsigned char *)s->rows.ptr + row * 8 * s->real_size;
  if (s->scaled)
    cph_rows_scaled(rd, s->flavor == CPH_GKL_DOUBLE, dst, &w[0], &w[1]);
  else if (s->flavor == CPH_GKL_FLOAT)
    cph_rows_float(rd, (cph_row_f *)dst);
  else
    cph_rows_double(rd, s->flavor, (cph_row_d *)dst);
  return 1;
}

/* A haplotype's codes at word `word`; 0 when it is invalid. */
static int stage_hap(cph_stage *s, const clphmm_haplotype *hp, size_t word) {
  uint8_t *dst = (uint8_t *)s->hcodes.ptr + 4 * word;
  size_t words = cph_hap_words(hp->length);
  if (hp->length && !hp->bases)
    return 0;
  uint8_t any = cph_encode_bases(hp->bases, hp->length, dst);
  memset(dst + hp->length, CPH_SYM_NONE, 4 * words - hp->length);
  return !(any & 0x80);
}

/* ---- pieces ---------------------------------------------------------- */

typedef struct piece_task {
  cph_stage *s;
  const clphmm_batch *batches;
  const cph_piece *pieces;
  size_t skip_rows; /* cph_stage_pieces */
  double *results;
} piece_task;

/* Whether staging leaves a read of `length` rows out (skip_rows). */
static int skipped(size_t length, size_t skip_rows) {
  return skip_rows && length >= skip_rows;
}

static void stage_piece(void *arg, size_t p) {
  const piece_task *t = arg;
  cph_stage *s = t->s;
  const cph_piece *pc = &t->pieces[p];
  const clphmm_batch *bt = &t->batches[pc->batch];
  const size_t *o = &s->offs[4 * p];
  size_t row = o[0], read = o[1], word = o[2], job = o[3];
  const size_t hword0 = word;
  int ok = 1, any_hap = 0;
  for (size_t h = 0; h < bt->n_haplotypes; h++) {
    ok &= stage_hap(s, &bt->haplotypes[h], word);
    word += cph_hap_words(bt->haplotypes[h].length);
    any_hap |= bt->haplotypes[h].length > 0;
  }
  size_t out = pc->out;
  for (size_t r = pc->r0; r < pc->r1; r++, read++) {
    const clphmm_read *rd = &bt->reads[r];
    if (skipped(rd->length, t->skip_rows)) {
      set_read_entry(s, row, 0, read); /* (an empty read) */
      out += bt->n_haplotypes;
      /* (Validated where its pairs are staged again, double first; a read
       * without any, all its haplotypes empty, here.) */
      ok &= any_hap || cph_validate_read(rd, pc->batch, r) == CLPHMM_SUCCESS;
      continue;
    }
    ok &= stage_read(s, rd, row, read);
    size_t hw = hword0;
    for (size_t h = 0; h < bt->n_haplotypes; h++, out++) {
      const clphmm_haplotype *hp = &bt->haplotypes[h];
      if (rd->length == 0 || hp->length == 0)
        t->results[out] = -INFINITY;
      else
        s->jobs[job++] = (cph_job){(uint32_t)row,
                                   (uint32_t)rd->length,
                                   (uint32_t)hw,
                                   (uint32_t)hp->length,
                                   (uint32_t)read,
                                   0,
                                   out,
                                   rd,
                                   hp};
      hw += cph_hap_words(hp->length);
    }
    row += rd->length;
  }
  s->bad[p] = !ok;
}

void cph_batch_haps_of(const clphmm_batch *bt, cph_batch_sum *sum) {
  *sum = (cph_batch_sum){0, 0, 0, 0, 0};
  for (size_t h = 0; h < bt->n_haplotypes; h++) {
    sum->hap_len += bt->haplotypes[h].length;
    sum->words += cph_hap_words(bt->haplotypes[h].length);
    sum->haps += bt->haplotypes[h].length > 0;
  }
}

void cph_batch_sum_of(const clphmm_batch *bt, cph_batch_sum *sum) {
  cph_batch_haps_of(bt, sum);
  for (size_t r = 0; r < bt->n_reads; r++) {
    sum->rows += bt->reads[r].length;
    sum->reads += bt->reads[r].length > 0;
  }
}

/* Per piece: where its rows, reads, haplotype words and jobs start. (A
 * piece of a whole batch, no read left out, from the batch's sums.) */
static void piece_offsets(cph_stage *s, const clphmm_batch *batches,
                          const cph_batch_sum *sums, const cph_piece *pieces,
                          size_t n, size_t skip_rows) {
  size_t rows = 0, reads = 0, words = 0, jobs = 0;
  for (size_t p = 0; p < n; p++) {
    size_t *o = &s->offs[4 * p];
    o[0] = rows;
    o[1] = reads;
    o[2] = words;
    o[3] = jobs;
    const clphmm_batch *bt = &batches[pieces[p].batch];
    cph_batch_sum own;
    const cph_batch_sum *bs = sums ? &sums[pieces[p].batch] : &own;
    if (!sums)
      cph_batch_haps_of(bt, &own);
    words += bs->words;
    reads += pieces[p].r1 - pieces[p].r0;
    if (sums && !skip_rows && pieces[p].r0 == 0 &&
        pieces[p].r1 == bt->n_reads) {
      rows += bs->rows;
      jobs += bs->reads * bs->haps;
      continue;
    }
    size_t nonempty = 0;
    for (size_t r = pieces[p].r0; r < pieces[p].r1; r++) {
      const size_t len = bt->reads[r].length;
      if (skipped(len, skip_rows))
        continue;
      rows += len;
      nonempty += len > 0;
    }
    jobs += nonempty * bs->haps;
  }
  s->n_rows = rows;
  s->n_reads = reads;
  s->n_hwords = words;
  s->n_jobs = jobs;
}

clphmm_status cph_stage_pieces(const cph_bufctx *c, cph_pool *pool,
                               cph_stage *s, const clphmm_batch *batches,
                               const cph_batch_sum *sums,
                               const cph_piece *pieces, size_t n_pieces,
                               size_t skip_rows, double *results) {
  if (!grow((void **)&s->offs, &s->cap_offs, 4 * (n_pieces + 1),
            sizeof *s->offs))
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory to plan %zu pieces",
                     n_pieces);
  piece_offsets(s, batches, sums, pieces, n_pieces, skip_rows);
  clphmm_status st = ensure(c, s, n_pieces);
  if (st)
    return st;
  piece_task t = {s, batches, pieces, skip_rows, results};
  cph_pool_for(cph_pool_for_work(pool, s->n_rows), n_pieces, stage_piece, &t);
  for (size_t p = 0; p < n_pieces; p++)
    if (s->bad[p]) {
      /* The first invalid batch, with cph_validate_batch's message. */
      for (size_t q = 0; q < n_pieces; q++) {
        clphmm_status bad =
            cph_validate_batch(&batches[pieces[q].batch], pieces[q].batch);
        if (bad)
          return bad;
      }
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "batch %zu: invalid input", pieces[p].batch);
    }
  return CLPHMM_SUCCESS;
}

/* ---- rescue pairs ---------------------------------------------------- */

/* Haplotypes staged so far, by address: rescue pairs of different reads
 * share their haplotypes. Open addressing over a power-of-two table. */
typedef struct hap_map {
  const clphmm_haplotype **key;
  uint32_t *word;
  size_t mask;
} hap_map;

static size_t hap_slot(const hap_map *m, const clphmm_haplotype *hp) {
  size_t i = ((uintptr_t)hp >> 4) * 0x9E3779B97F4A7C15ull & m->mask;
  while (m->key[i] && m->key[i] != hp)
    i = (i + 1) & m->mask;
  return i;
}

/* Rescue staging runs on the pool in parts of about this many pairs or
 * read rows, whichever comes first, cut at read boundaries (by pairs
 * alone, the 1,183 rescue pairs of long reads of a 7e9-cell call, each
 * with its own read, were two parts: 3 ms of staging on two threads of
 * sixteen). */
#define PAIR_PART 1024
#define ROW_PART ((size_t)1 << 14)

typedef struct pair_task {
  cph_stage *s;
  const cph_pair *pairs;
  const hap_map *m;
  const size_t *part_start;      /* n_parts + 1 pair indices */
  const clphmm_haplotype **haps; /* distinct haplotypes, in map order */
  const uint32_t *hap_word;
  size_t n_haps, n_parts;
} pair_task;

/* Part p of the pairs (their reads and jobs), then a share of the
 * haplotypes. */
static void stage_pair_part(void *arg, size_t p) {
  const pair_task *t = arg;
  cph_stage *s = t->s;
  const size_t *o = &s->offs[4 * p];
  size_t row = o[0], read = o[1];
  int ok = 1;
  for (size_t i = t->part_start[p]; i < t->part_start[p + 1]; i++) {
    const clphmm_read *rd = t->pairs[i].read;
    const int first = i == t->part_start[p] || rd != t->pairs[i - 1].read;
    if (first && i > t->part_start[p]) {
      row += t->pairs[i - 1].read->length;
      read++;
    }
    if (first)
      ok &= stage_read(s, rd, row, read);
    const size_t k = hap_slot(t->m, t->pairs[i].hap);
    s->jobs[i] = (cph_job){(uint32_t)row,   (uint32_t)rd->length,
                           t->m->word[k],   (uint32_t)t->pairs[i].hap->length,
                           (uint32_t)read,  0,
                           t->pairs[i].out, rd,
                           t->pairs[i].hap};
  }
  for (size_t h = p; h < t->n_haps; h += t->n_parts)
    ok &= stage_hap(s, t->haps[h], t->hap_word[h]);
  s->bad[p] = !ok;
}

clphmm_status cph_stage_pairs(const cph_bufctx *c, cph_pool *pool, cph_stage *s,
                              const cph_pair *pairs, size_t n) {
  hap_map m = {0};
  size_t size = 16;
  while (size < 2 * n)
    size *= 2;
  m.mask = size - 1;
  m.key = calloc(size, sizeof *m.key);
  m.word = calloc(size, sizeof *m.word);
  const clphmm_haplotype **haps = malloc((n ? n : 1) * sizeof *haps);
  uint32_t *hap_word = malloc((n ? n : 1) * sizeof *hap_word);
  size_t *part_start = malloc((n + 2) * sizeof *part_start);
  clphmm_status st = m.key && m.word && haps && hap_word && part_start
                         ? CLPHMM_SUCCESS
                         : cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                                     "no memory to rescue %zu pairs", n);
  /* Sizes, parts and the haplotypes' places, in one pass. */
  size_t n_haps = 0, n_parts = 0, part_rows = 0;
  s->n_rows = s->n_reads = s->n_hwords = 0;
  s->n_jobs = n;
  for (size_t i = 0; i < n && !st; i++) {
    const int first = i == 0 || pairs[i].read != pairs[i - 1].read;
    if (first && (i == 0 || i - part_start[n_parts - 1] >= PAIR_PART ||
                  part_rows >= ROW_PART)) {
      part_start[n_parts++] = i;
      part_rows = 0;
    }
    if (first) {
      s->n_rows += pairs[i].read->length;
      part_rows += pairs[i].read->length;
      s->n_reads++;
    }
    size_t k = hap_slot(&m, pairs[i].hap);
    if (!m.key[k]) {
      m.key[k] = pairs[i].hap;
      m.word[k] = (uint32_t)s->n_hwords;
      haps[n_haps] = pairs[i].hap;
      hap_word[n_haps++] = (uint32_t)s->n_hwords;
      s->n_hwords += cph_hap_words(pairs[i].hap->length);
    }
  }
  if (!st) {
    part_start[n_parts] = n;
    st = ensure(c, s, n_parts);
  }
  /* Where each part's rows and reads start. */
  size_t rows = 0, reads = 0;
  for (size_t p = 0; p < n_parts && !st; p++) {
    s->offs[4 * p] = rows;
    s->offs[4 * p + 1] = reads;
    for (size_t i = part_start[p]; i < part_start[p + 1]; i++)
      if (i == part_start[p] || pairs[i].read != pairs[i - 1].read) {
        rows += pairs[i].read->length;
        reads++;
      }
  }
  if (!st) {
    pair_task t = {s, pairs, &m, part_start, haps, hap_word, n_haps, n_parts};
    cph_pool_for(cph_pool_for_work(pool, s->n_rows), n_parts, stage_pair_part,
                 &t);
    for (size_t p = 0; p < n_parts && !st; p++)
      if (s->bad[p])
        st = cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "invalid input in pairs staged again");
  }
  free(m.key);
  free(m.word);
  free(haps);
  free(hap_word);
  free(part_start);
  return st;
}
