/* Staging: the host side of one chunk of work. A chunk is a list of pieces
 * (reads r0..r1 of one batch against all its haplotypes) or, for the double
 * rescue, a list of single pairs. Staging writes what the device needs
 * into host buffers it can copy from: the raw bytes of the reads (base
 * codes and the four qualities, 5 bytes per row), the haplotypes as codes,
 * and the pair list ("jobs"). Rows are expanded into transitions and
 * priors on the device (cl/prep.cl), or here when the device cannot
 * (host_prep). Pieces are staged in parallel on the context's pool. */
#ifndef CLPHMM_STAGE_H
#define CLPHMM_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/buffers.h"
#include "engine/pool.h"
#include "model/model.h"

/* Reads [r0, r1) of batch `batch` against all its haplotypes; the result
 * of pair (r0, 0) goes to results[out]. */
typedef struct cph_piece {
  size_t batch, r0, r1, out;
} cph_piece;

/* One pair of the double rescue. */
typedef struct cph_pair {
  const clphmm_read *read;
  const clphmm_haplotype *hap;
  size_t out;
} cph_pair;

/* One pair for the device: offsets into the chunk's staged data plus where
 * its result goes. */
typedef struct cph_job {
  uint32_t row_off, R, hap_off /* in 32-bit words */, H;
  uint32_t read; /* the read's index in the chunk (its weights) */
  uint32_t slot; /* its pair slot in the chunk's launches (schedule.c) */
  size_t out;
  const clphmm_read *rd;
  const clphmm_haplotype *hp;
} cph_job;

/* 32-bit words a staged haplotype of `length` bases takes: padded with
 * CPH_SYM_NONE to a word boundary plus one whole word of it (the kernels
 * read four codes at a time and keep reading that last word past the
 * end). */
#define CPH_SYM_NONE 5
/* (Lengths are at most CPH_MAX_SEQ_LENGTH, model/validate.h: the count
 * fits.) */
static inline uint32_t cph_hap_words(size_t length) {
  return (uint32_t)((length + 3) / 4 + 1);
}

/* Bytes per read row in the raw staging (code and four qualities). */
#define CPH_RAW_ROW_BYTES 5

typedef struct cph_stage {
  cph_flavor flavor;
  int scaled;    /* rows in the scaled form (cph_rows_scaled) */
  int host_prep; /* rows prepared here rather than on the device */
  size_t real_size;
  size_t n_rows, n_reads, n_hwords, n_jobs;
  cph_hostbuf raw;     /* 5 arrays of n_rows bytes (cl/prep.cl) */
  cph_hostbuf reads;   /* per read: (first row, length) */
  cph_hostbuf hcodes;  /* n_hwords words of haplotype codes */
  cph_hostbuf rows;    /* host_prep: 8 reals per row */
  cph_hostbuf weights; /* per read: the scaled form's (wm, wx), else 1, 1 */
  cph_job *jobs;
  size_t cap_jobs;
  /* Per piece (or rescue part): first row, read, word and job, and
   * whether it holds invalid input. */
  size_t *offs;
  size_t cap_offs;
  uint8_t *bad;
  size_t cap_bad;
} cph_stage;

void cph_stage_release(const cph_bufctx *c, cph_stage *s);

/* What staging a whole batch takes, summed over its reads and haplotypes
 * once per call (on the pool, while the call is validated), so that the
 * caller's thread, which cuts chunks and plans each chunk's staging, need
 * not read every read of a batch that goes whole: read rows, the bases of
 * all haplotypes (a row's cells), haplotype words, and the reads and
 * haplotypes that are not empty (a pair of two such is a job). */
typedef struct cph_batch_sum {
  uint64_t rows, hap_len, words;
  size_t reads, haps;
} cph_batch_sum;

void cph_batch_sum_of(const clphmm_batch *bt, cph_batch_sum *sum);
/* Its haplotypes' part alone (hap_len, words, haps; the rest 0). */
void cph_batch_haps_of(const clphmm_batch *bt, cph_batch_sum *sum);

/* Stage pieces of batches whose shapes are valid (cph_validate_batch_shape)
 * in `flavor` (results of pairs with an empty read or haplotype are set to
 * -inf in `results` here). Staging validates what it copies: on invalid
 * bases, qualities or pointers it fails with the error that
 * cph_validate_batch gives for the first invalid batch. */
/* Reads of at least `skip_rows` rows (0: none) are left out: they take no
 * rows and their pairs no jobs nor results (float mode's double-first
 * pairs, computed elsewhere); their table entries are empty reads. */
/* `sums`: the batches' cph_batch_sum, or NULL (it only makes planning a
 * piece of a whole batch faster). */
clphmm_status cph_stage_pieces(const cph_bufctx *c, cph_pool *pool,
                               cph_stage *s, const clphmm_batch *batches,
                               const cph_batch_sum *sums,
                               const cph_piece *pieces, size_t n_pieces,
                               size_t skip_rows, double *results);

/* The staging of `from` (rows not prepared on the host, nor in s; weights
 * not copied: each pass computes its own, on the device or, when its
 * kernels compute their rows, on the host at submission): the same
 * pieces for another pass (float mode's speculative double pass takes the
 * float pass's staging: a copy of a region's 30 KB instead of encoding and
 * checking it again). */
clphmm_status cph_stage_copy(const cph_bufctx *c, cph_stage *s,
                             const cph_stage *from);

/* The scaled form's weights of every staged read (cph_weights_scaled) from
 * its raw bytes, for chunks whose rows the kernels compute themselves
 * (no row preparation to compute them on the device); on the pool for
 * chunks of many rows (the rescue's chunks of a large call: about 0.6 ms
 * for 4,096 reads of 150 bases on one thread). */
void cph_stage_weights(cph_stage *s, cph_pool *pool);

/* The same for the reads of the staged jobs that `want` marks (by out
 * index), each read once: float mode's speculative double pass, whose
 * results only its rescue pairs take (a few reads of a region's tens,
 * often with several haplotypes each). */
void cph_stage_weights_of(cph_stage *s, const unsigned char *want);

/* Stage pairs of batches whose shapes are valid (consecutive pairs of one
 * read share its rows; pairs share their haplotypes): rescue pairs, or
 * float mode's double-first pairs, whose bases and qualities no pass has
 * checked before; invalid ones fail it (CLPHMM_ERROR_INVALID_ARGUMENT: the
 * caller names the batch). */
clphmm_status cph_stage_pairs(const cph_bufctx *c, cph_pool *pool, cph_stage *s,
                              const cph_pair *pairs, size_t n);

/* Bytes of device memory a chunk of `rows` read rows, `words` haplotype
 * words, `reads` reads and `pairs` pairs needs at real size `real`
 * (without the tile boundary rows of long reads). */
uint64_t cph_stage_device_bytes(uint64_t rows, uint64_t words, uint64_t reads,
                                uint64_t pairs, size_t real);

#endif
