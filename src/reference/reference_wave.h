/* The forward algorithm in strips of V read rows, one row per vector lane,
 * written once for both precisions and every vector width: include with
 * CPH_T (float or double), CPH_I (the integer of the same width), CPH_V
 * (lanes: 2, 4, 8 or 16), CPH_WAVE (the function name) and CPH_WAVE_TARGET
 * (a function attribute selecting an instruction set, or nothing) defined.
 * Needs GCC or Clang vector extensions.
 *
 * Lane t of a strip owns read row i0+1+t and, at step s, computes its
 * column j = s-t+1: the cells of one step lie on an anti-diagonal and are
 * independent. The row above a lane's cell is the lane before it one step
 * earlier (one lane shift per step of M, X and Y; lane 0 takes the strip's
 * top row from memory); its left cell is its own previous step; the
 * diagonal cell is the previous step's shifted row. Transitions and
 * priors are per lane and stay in registers for the whole strip, so a step
 * touches memory only for the haplotype masks, the top row and the bottom
 * row (written in place over the top row, behind the reads). This is the
 * shape of GKL's AVX kernel; a plain loop over each anti-diagonal instead
 * was bound by its ~20 loads and stores per vector of cells.
 *
 * Every cell does exactly PAIRHMM_SPEC 5.2's operations in its order and
 * precision (built with -ffp-contract=off; vector lanes round like scalar
 * code), and the last row's sums add columns 1..H in order: results are
 * bit-identical to reference_dp.h, the oracle the tests compare with.
 *
 * Boundaries: the registers start at zero, which is column 0 of every row
 * below 0 (a lane before its first column computes zeros from zeros: its
 * inputs are lanes before their first column). The first strip's top row
 * is row 0 (M = X = 0, Y = K/H, column 0 included). Rows past R, in the
 * last strip's high lanes, have every parameter 0 and compute zeros; the
 * bottom row is then taken from lane R-1-i0. Columns past H compute values
 * that no cell of columns 1..H reads. */

#ifndef CPH_REFERENCE_WAVE_ONCE
#define CPH_REFERENCE_WAVE_ONCE
/* Shift by one lane, lane 0 from the second vector's lane 0. */
#define CPH_SHIFT_IDX_2 2, 0
#define CPH_SHIFT_IDX_4 4, 0, 1, 2
#define CPH_SHIFT_IDX_8 8, 0, 1, 2, 3, 4, 5, 6
#define CPH_SHIFT_IDX_16 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14
#define CPH_WAVE_CAT2(a, b) a##b
#define CPH_WAVE_CAT(a, b) CPH_WAVE_CAT2(a, b)
#if defined(__clang__)
#define CPH_SHIFT_IN(vt, vi, v, x)                                             \
  __builtin_shufflevector((v), (vt){(x)}, CPH_WAVE_CAT(CPH_SHIFT_IDX_, CPH_V))
#else
#define CPH_SHIFT_IN(vt, vi, v, x)                                             \
  __builtin_shuffle((v), (vt){(x)}, (vi){CPH_WAVE_CAT(CPH_SHIFT_IDX_, CPH_V)})
#endif
#endif

#define CPH_VT CPH_WAVE_CAT(CPH_WAVE, _vt)
#define CPH_VI CPH_WAVE_CAT(CPH_WAVE, _vi)
#define CPH_LANES CPH_WAVE_CAT(CPH_WAVE, _lanes)
#define CPH_START CPH_WAVE_CAT(CPH_WAVE, _start)
#define CPH_STEP CPH_WAVE_CAT(CPH_WAVE, _step)
#define CPH_STRIPS CPH_WAVE_CAT(CPH_WAVE, _strips)
#define CPH_INLINE static inline __attribute__((always_inline)) CPH_WAVE_TARGET

typedef CPH_T CPH_VT __attribute__((vector_size(CPH_V * sizeof(CPH_T))));
typedef CPH_I CPH_VI __attribute__((vector_size(CPH_V * sizeof(CPH_I))));

/* A strip in flight: its rows' parameters, its last step's M, X, Y and
 * the shifted ones (the next step's diagonal). */
typedef struct CPH_LANES {
  CPH_VT p[WAVE_PLANES];
  CPH_VI rm;
  CPH_VT m, x, y, dm, dx, dy;
} CPH_LANES;

/* Rows i0+1..i0+V (lanes past the read have zero parameters) below the
 * row in tm, tx, ty (column j at index j). */
CPH_INLINE void CPH_START(CPH_LANES *L, const CPH_T *par, size_t P,
                          const CPH_I *rmask, size_t i0, const CPH_T *tm,
                          const CPH_T *tx, const CPH_T *ty) {
  for (int q = 0; q < WAVE_PLANES; q++)
    memcpy(&L->p[q], par + q * P + i0, sizeof L->p[q]);
  memcpy(&L->rm, rmask + i0, sizeof L->rm);
  const CPH_VT zero = {0};
  L->m = L->x = L->y = zero;
  L->dm = CPH_SHIFT_IN(CPH_VT, CPH_VI, zero, tm[0]);
  L->dx = CPH_SHIFT_IN(CPH_VT, CPH_VI, zero, tx[0]);
  L->dy = CPH_SHIFT_IN(CPH_VT, CPH_VI, zero, ty[0]);
}

/* Step s: lane t computes column s-t+1; lane `out`'s cell replaces column
 * s-out+1 of the row in tm, tx, ty, behind the reads of lane 0 (columns
 * below 1 are column 0 of a real row: zeros). Lane t's haplotype base is
 * s - t, whose mask is hs[t-s] (hs = hrev + H - 1): lanes 0..V-1 read
 * consecutive masks. */
CPH_INLINE void CPH_STEP(CPH_LANES *L, size_t s, unsigned out, const CPH_I *hs,
                         CPH_T *tm, CPH_T *tx, CPH_T *ty) {
  const CPH_VT um = CPH_SHIFT_IN(CPH_VT, CPH_VI, L->m, tm[s + 1]);
  const CPH_VT ux = CPH_SHIFT_IN(CPH_VT, CPH_VI, L->x, tx[s + 1]);
  const CPH_VT uy = CPH_SHIFT_IN(CPH_VT, CPH_VI, L->y, ty[s + 1]);
  CPH_VI hm;
  memcpy(&hm, hs - s, sizeof hm);
  const CPH_VI sel = (L->rm & hm) != 0;
  const CPH_VT prior = (CPH_VT)(((CPH_VI)L->p[WAVE_MATCH] & sel) |
                                ((CPH_VI)L->p[WAVE_MISMATCH] & ~sel));
  const CPH_VT nm = prior * ((L->dm * L->p[WAVE_MM] + L->dx * L->p[WAVE_GAPM]) +
                             L->dy * L->p[WAVE_GAPM]);
  const CPH_VT nx = um * L->p[WAVE_MX] + ux * L->p[WAVE_XX];
  const CPH_VT ny = L->m * L->p[WAVE_MY] + L->y * L->p[WAVE_YY];
  L->dm = um;
  L->dx = ux;
  L->dy = uy;
  L->m = nm;
  L->x = nx;
  L->y = ny;
  const ptrdiff_t j = (ptrdiff_t)s + 1 - (ptrdiff_t)out; /* down to 2 - V */
  tm[j] = nm[out];
  tx[j] = nx[out];
  ty[j] = ny[out];
}

/* Strip i0 alone (n == 1, `out` its last real lane), or strips i0 and
 * i0+V together (n == 2, `out` the second one's), the second V steps
 * behind the first: its lane 0 reads columns the first one's last lane
 * wrote a step earlier, and the two dependency chains interleave (one
 * strip's step is bound by the latency of shift, multiply and add).
 * Always inlined, so that `out` is a constant for full strips. */
CPH_INLINE void CPH_STRIPS(int n, const CPH_T *par, size_t P,
                           const CPH_I *rmask, size_t i0, unsigned out,
                           const CPH_I *hrev, size_t H, CPH_T *tm, CPH_T *tx,
                           CPH_T *ty) {
  const CPH_I *hs = hrev + H - 1;
  CPH_LANES a, b;
  CPH_START(&a, par, P, rmask, i0, tm, tx, ty);
  if (n == 1) {
    for (size_t s = 0; s < H + out; s++) /* until lane out reaches H */
      CPH_STEP(&a, s, out, hs, tm, tx, ty);
    return;
  }
  const size_t lag = CPH_V, end_a = H + CPH_V - 1, end_b = lag + H + out;
  size_t s = 0;
  for (; s < lag; s++)
    CPH_STEP(&a, s, CPH_V - 1, hs, tm, tx, ty);
  /* The first strip's column 0 is written: the second one starts. */
  CPH_START(&b, par, P, rmask, i0 + CPH_V, tm, tx, ty);
  for (; s < end_a; s++) {
    CPH_STEP(&a, s, CPH_V - 1, hs, tm, tx, ty);
    CPH_STEP(&b, s - lag, out, hs, tm, tx, ty);
  }
  for (; s < end_b; s++)
    CPH_STEP(&b, s - lag, out, hs, tm, tx, ty);
}

/* The scaled final sum of an R x H pair (R, H >= 1): GKL style (sum M, sum
 * X, then add) unless per_column, then GATK Java style (per column M + X).
 * par: the parameter planes, row i at index i - 1 of each, P apart, zeros
 * from R up to a whole strip (P >= that); rmask: the read's base masks,
 * likewise; hrev: the haplotype's masks reversed (hrev[k]: base H-1-k),
 * with at least V - 1 zeros before and after; row: 3 (H + 2V) values. */
static CPH_WAVE_TARGET CPH_T CPH_WAVE(const CPH_T *par, size_t P,
                                      const CPH_I *rmask, size_t R,
                                      const CPH_I *hrev, size_t H,
                                      int per_column, CPH_T *row) {
  const size_t W = H + 2 * CPH_V;
  /* Column j at index V + j: lane `out` writes columns down to 2 - V. */
  CPH_T *tm = row + CPH_V, *tx = tm + W, *ty = tx + W;
  const CPH_T init =
      (CPH_T)(sizeof(CPH_T) == sizeof(float) ? CPH_SCALE_FLOAT
                                             : CPH_SCALE_DOUBLE) /
      (CPH_T)H;
  for (size_t k = 0; k < 3 * W; k++)
    row[k] = 0;
  for (size_t j = 0; j <= H; j++)
    ty[j] = init;
  for (size_t i0 = 0; i0 < R; i0 += 2 * CPH_V) {
    const size_t left = R - i0;
    if (left >= 2 * CPH_V)
      CPH_STRIPS(2, par, P, rmask, i0, CPH_V - 1, hrev, H, tm, tx, ty);
    else if (left > CPH_V)
      CPH_STRIPS(2, par, P, rmask, i0, (unsigned)(left - CPH_V - 1), hrev, H,
                 tm, tx, ty);
    else
      CPH_STRIPS(1, par, P, rmask, i0, (unsigned)(left - 1), hrev, H, tm, tx,
                 ty);
  }
  CPH_T sum_m = 0, sum_x = 0, sum = 0;
  for (size_t j = 1; j <= H; j++) {
    if (per_column) {
      sum = sum + (tm[j] + tx[j]);
    } else {
      sum_m += tm[j];
      sum_x += tx[j];
    }
  }
  return per_column ? sum : sum_m + sum_x;
}

#undef CPH_VT
#undef CPH_VI
#undef CPH_LANES
#undef CPH_START
#undef CPH_STEP
#undef CPH_STRIPS
#undef CPH_INLINE
