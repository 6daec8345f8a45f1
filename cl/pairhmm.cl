/* The lane-group PairHMM kernel (DESIGN section 3).
 *
 * A group of CPH_G work-items computes one read x haplotype pair; each
 * work-item owns CPH_C consecutive read rows and keeps their M, X, Y and
 * transitions in registers. The haplotype streams through the group: at
 * step s, lane t computes column j = s - t + 1 for its rows, receiving the
 * last row of lane t-1 (computed one step earlier) through the shuffle,
 * together with the haplotype symbol that lane used.
 *
 * No per-step branches on the column: lane 0 reads the haplotype four
 * symbols at a time, and columns outside 1..H get the symbol NONE whose
 * prior is 0. Such a column's M is 0, so a lane that has not started or
 * has finished computes zeros (or values that never reach the result):
 * every lane runs the same instructions at every step.
 *
 * Reads are padded at the top with transparent rows (prior 0, no
 * insertion, Y carried down unchanged), so the pair's last row is always
 * the last register of the last lane of the last tile: no run-time register
 * indexing.
 *
 * Reads longer than one tile (G*C rows) run in rounds of `coop` tiles at
 * once: the work-group's lane groups form `coop` tile slots, and slot t
 * computes tile t of a round LAG steps behind slot t-1. A tile's last row
 * goes to the pair's boundary row in global memory (`bound`), which the
 * tile below reads; one row serves every tile of every round. Column index
 * k is written by tile t-1 at its step k + G - 1, loaded by tile t at its
 * step k - PREFETCH, which is LAG - G - PREFETCH + 1 >= 4 steps (one block
 * of four) later, and rewritten by tile t after that load; a work-group
 * barrier after every block of four steps orders the blocks. With coop = 1
 * the tiles run one after the other.
 *
 * Three arithmetic forms (CPH_FMA selects a fast one, CPH_SCALED which: the
 * scaled form for single precision and for float mode's double rescue, the
 * fused one for double mode, whose sums are per column):
 *  exact  (CPH_FMA 0): PAIRHMM_SPEC 5.2 operation by operation, no
 *     contraction; bit-identical to the CPU reference.
 *  fused  (CPH_FMA 1, double): 7 instead of 12 instructions per cell. Y is
 *     kept divided by the row's my (y = Y/my, so y' = yy*y + M: one FMA),
 *     the diagonal input X+Y is formed once per cell as S = X + my*y, and
 *     products fuse with additions:
 *         M = p * fma(mm, M_diag, gapm * S_diag)
 *         X = fma(xx, X_up, mx * M_up)
 *         y = fma(yy, y_left, M_left)
 *     y never exceeds the row's sum of M (at most the scale K), so nothing
 *     overflows.
 *  scaled (CPH_SCALED 1): 5 instructions per cell. Row i keeps
 *         m = M / P_i,  x = X / (P_i-1 mx_i),  y = Y / (P_i my_i),
 *     with P_i = mm_1 ... mm_i, which makes three coefficients exactly 1:
 *         m = p * fma(b, x_diag, fma(g, y_diag, m_diag))
 *         x = fma(a, x_up, m_up)
 *         y = fma(yy, y_left, m_left)
 *     with per-row constants (row i-1 above; 1s above the first row),
 *     computed in double (row_of in rows.cl; the host's cph_rows_scaled
 *     where the device cannot):
 *         b = gapm_i mx_i-1 / (mm_i mm_i-1),  g = gapm_i my_i-1 / mm_i,
 *         a = xx_i mx_i-1 / (mx_i mm_i-1).
 *     The kernel returns the last row's sums of m and x; the host weights
 *     them by P_R and P_R-1 mx_R in double (cph_rows_scaled computes them,
 *     store_sums applies them). Scaled
 *     values stay near M's magnitude for GATK-like qualities (1/mm_i is
 *     about 1 + 6e-5); an extreme quality jump can overflow them, which
 *     gives a sum that is not finite, and the host then recomputes the
 *     pair in double, as for an underflow. In the double rescue (K =
 *     2^1020) such a pair goes on to the CPU reference. Scaled values are
 *     never smaller than the unscaled ones (P_i, mx_i, my_i <= 1), so the
 *     form never underflows where the plain one would not.
 *  Fast forms move results by a few ulps, far inside the spec's levels.
 *
 * Long-read variants (CPH_SEQ) run their tiles one after the other; on
 * NVIDIA (G = 32, float) they pass the boundary row through local memory
 * (RING below) instead of reading and writing global memory every step.
 *
 * Defines: CPH_DOUBLE (0/1), CPH_FMA (0/1), CPH_SCALED (0/1), CPH_SEQ (0/1),
 * CPH_MAXREG (the register cap inserted into NVIDIA's PTX, or 0), CPH_G, CPH_C
 * (a multiple of the vector width: 4 floats or 2 doubles), CPH_WG
 * (work-group size, a multiple of CPH_G), CPH_SHUFFLE (see shuffle.cl,
 * prepended by the host), CPH_INLINE (0/1: rows computed in the kernel,
 * ROW_AT below), CPH_EXIT, CPH_SPLIT and CPH_LRING (below).
 */
#ifndef CPH_VEC
#define CPH_VEC 0
#endif
#if !CPH_VEC /* the vector variants' kernel is pairhmm_cpu.cl */
#pragma OPENCL FP_CONTRACT OFF

#ifndef CPH_SCALED
#error "the host passes CPH_SCALED (cph_variant_options)"
#endif
#ifndef CPH_INLINE
#define CPH_INLINE 0
#endif
#if CPH_SCALED && !CPH_FMA
#error "the scaled form is a fast form: it needs CPH_FMA"
#endif
/* Early exits: 1, float mode's first pass (the scaled float form) stops
 * pairs certain to need the double rescue; 2, double programs stop pairs
 * whose rows have underflowed to zeros (see exit_ok). */
#ifndef CPH_EXIT
#define CPH_EXIT 0
#endif
#if CPH_EXIT == 1 && (!CPH_SCALED || CPH_DOUBLE)
#error "the bound's early exit is float mode's first pass: the scaled float form"
#endif
#if CPH_EXIT == 2 && !CPH_DOUBLE
#error "the underflow exit is for double programs"
#endif

#define G CPH_G
#define C CPH_C
#define LG (CPH_WG / CPH_G) /* lane groups per work-group */
#define TILE (CPH_G * CPH_C) /* read rows per tile */
#define BASE_N 4
#define SYM_NONE 5 /* a column outside 1..H: prior 0 (host pads with it) */
#define NSYM 6
#define ROW_STRIDE 8 /* mm, gapm, mx, xx, my, yy, match, mismatch */
#define NONE4 (SYM_NONE * 0x01010101u) /* a haplotype word of NONE */
/* Columns of the boundary row that lane 0 of a concurrent tile loads ahead
 * of its step (MULTI 1 below). The row was written by the tile above a few
 * steps earlier, so its lines come from L2, not L1; loaded one step ahead,
 * the double kernels waited for them. Four steps ahead: on the H200 the
 * long suite in double mode took 71.8 ms of kernels instead of 81.4, the
 * exact pass of float mode's long suite 95.2 instead of 102.0. The float
 * kernels' 32x16 tiles lost with it (the 7e9-cell file's float pass 3.1
 * instead of 2.5 ms) and keep one step (bench/results/
 * nvidia-h200-2026-11-26-prefetch-experiments-54c31b7.txt). */
#if CPH_DOUBLE
#define PREFETCH 4
#else
#define PREFETCH 1
#endif
/* Zero blocks. A cell whose inputs (the cells above, left and diagonal)
 * are all exactly 0 is 0: products of 0 with the finite coefficients and
 * sums of such products. Far from a long read's alignment every path
 * underflows, and below a tile's first rows much of a long pair's matrix
 * is such zeros (a 10 kb read on a 15 kb haplotype: 82% of the 4-step
 * blocks of 256-row tiles, by GKL's double recurrence), most of all in
 * the pairs of float mode's exact pass, whose likelihoods are far below
 * GKL's threshold. So the exact double programs' loop of tiles below a
 * boundary row (MULTI 1) tests, before each block of four steps, whether
 * every lane's cells and the block's inputs (the diagonal carried from the
 * last step, lane 0's prefetched boundary columns) are all 0; if every
 * lane of the lane group says so (CPH_ALL), the block's cells stay 0
 * without their arithmetic: the results are the same bits. The test reads
 * the values as bits: -0 counts as not zero (no cell is negative anyway).
 * On the H200 the long suite in float mode took 81.4 ms instead of 98.9;
 * the fast forms' launches, whose pairs have fewer zeros and cheaper cells,
 * lost 8-12% with it (double mode's long suite, peak L = 2048, the
 * 7e9-cell file) and do not test (bench/results/...-env-zskip-*.txt).
 * CLPHMM_BUILD_OPTIONS=-DCPH_ZSKIP=0 or 1 overrides, to measure. (Only
 * the exact form: the scaled form's coefficients can be infinite, 1/mm
 * of mm = 0, where 0 times them is NaN, not 0.) */
#ifndef CPH_ZSKIP
#define CPH_ZSKIP (!CPH_FMA)
#endif
/* -DCPH_ZSKIP_DEBUG=1 (tests only): a skipped block adds 1 to the sums,
 * so that a test sees that blocks were skipped. */
#ifndef CPH_ZSKIP_DEBUG
#define CPH_ZSKIP_DEBUG 0
#endif
#define ZSKIP (CPH_ZSKIP && CPH_HAS_ALL && PREFETCH > 1)

/* Steps between concurrent tiles: a multiple of 4, at least G + PREFETCH +
 * 3, so that a column is written at least one block of four steps (and a
 * barrier) before the tile below loads it. */
#define LAG ((G + PREFETCH + 6) / 4 * 4)

/* Priors are read VW rows at a time (one 16-byte vector load). */
#if CPH_DOUBLE
#define VW 2
typedef double2 realv;
#define VSET(v, a, q) (v) = (realv)((a)[2 * (q)], (a)[2 * (q) + 1])
#define VGET(a, q, v) ((a)[2 * (q)] = (v).s0, (a)[2 * (q) + 1] = (v).s1)
#else
#define VW 4
typedef float4 realv;
#define VSET(v, a, q)                                                          \
  (v) = (realv)((a)[4 * (q)], (a)[4 * (q) + 1], (a)[4 * (q) + 2],              \
                (a)[4 * (q) + 3])
#define VGET(a, q, v)                                                          \
  ((a)[4 * (q)] = (v).s0, (a)[4 * (q) + 1] = (v).s1, (a)[4 * (q) + 2] = (v).s2, \
   (a)[4 * (q) + 3] = (v).s3)
#endif
#if C % VW
#error "CPH_C must be a multiple of the vector width"
#endif
#define NQ (C / VW) /* vectors per lane per symbol */

/* Emission table in local memory, in vectors: per pair slot, per symbol,
 * per vector q of a lane's rows, the G lanes side by side, so a warp's
 * vector loads touch consecutive banks. Symbol strides are whole 128-byte
 * lines and slots of small groups are offset so that the groups sharing a
 * quarter-warp hit different banks. */
#define SYM_STRIDE ((NQ * G + 7) / 8 * 8)
#define SLOT_STRIDE (NSYM * SYM_STRIDE + (G < 8 ? G : 0))

/* A lane's per-row constants (registers) and how one row sets them:
 * PAD_COEFS for a transparent row (prior 0, no insertion, Y carried down),
 * ROW_COEFS from row i's parameters at rp (`first`: the read's first row,
 * whose row above is row 0). xx == yy: both come from the gap
 * continuation, so one register (gg) serves both. */
#if CPH_SCALED
#define DECLARE_COEFS real cb[C], cg[C], ca[C], gg[C]
#define PAD_COEFS(c) (cb[c] = cg[c] = (real)0, ca[c] = gg[c] = (real)1)
/* From the prepared row or row_of (rows.cl). */
#define ROW_COEFS(c, rp, first)                                                \
  (cb[c] = rp[0], cg[c] = rp[1], ca[c] = rp[2], gg[c] = rp[3])
#else
#define DECLARE_COEFS real mm[C], gapm[C], mx[C], gg[C], my[C]
#if CPH_FMA
#define PAD_MY ((real)1) /* y = Y/my: my reconstructs Y, 1 keeps it */
#else
#define PAD_MY ((real)0)
#endif
#define PAD_COEFS(c)                                                           \
  (mm[c] = gapm[c] = mx[c] = (real)0, my[c] = PAD_MY, gg[c] = (real)1)
#define ROW_COEFS(c, rp, first)                                                \
  (mm[c] = rp[0], gapm[c] = rp[1], mx[c] = rp[2], gg[c] = rp[3],               \
   my[c] = rp[4])
#endif

/* Row i's ROW_STRIDE reals as rp[0..7] (`first`: its read's first row):
 * from the prepared rows, or in CPH_INLINE programs computed here from
 * the raw bytes (rows.cl; `rows` then holds the row tables). A small
 * call's launches run so, without the row preparation's kernel in front
 * (about 10 us of a 300-pair region's 30 us float pass on the H200);
 * elsewhere each row is prepared once for all haplotypes of its read.
 * Inline programs have no bound slots, so no float early exit. */
#if CPH_INLINE
#if !ROWS_ON
#error "CPH_INLINE needs the row tables (rows.cl: double arithmetic)"
#endif
#if CPH_EXIT == 1
#error "the float early exit reads the prepared rows' bound slots"
#endif
/* A lane's rows are consecutive: each takes what it needs of the row
 * above from the one before (rows.cl, above_t), only the lane's first
 * loads it (c: the lane's row in LOAD_TILE_ROWS; padding rows come before
 * a read's first row, never between its rows). above_row after row_below
 * repeats three of row_below's loads, which the compiler may merge: the
 * bytes and 1/mm loaded once here and passed on were no faster on the
 * H100. */
#define ROW_STATE above_t ab_ = ABOVE_FIRST
#define ROW_AT(rp, i, first)                                                   \
  if (first)                                                                   \
    ab_ = ABOVE_FIRST;                                                         \
  else if (c == 0)                                                             \
    ab_ = above_row((__global const tab_t *)rows, rcodes, (size_t)raw_rows,   \
                    (i) - 1);                                                  \
  const real8 rv_ = row_below((__global const tab_t *)rows, rcodes,           \
                              (size_t)raw_rows, (i), ab_, 1);                  \
  ab_ = above_row((__global const tab_t *)rows, rcodes, (size_t)raw_rows,     \
                  (i));                                                        \
  const real rp[8] = {rv_.s0, rv_.s1, rv_.s2, rv_.s3,                          \
                      rv_.s4, rv_.s5, rv_.s6, rv_.s7}
#else
#define ROW_STATE (void)0
#define ROW_AT(rp, i, first)                                                   \
  __global const real *rp = rows + (size_t)(i)*ROW_STRIDE
#endif

/* Fill this lane's rows of the emission table and its transitions for one
 * tile. */
#define LOAD_TILE_ROWS()                                                       \
  {                                                                            \
    real pmatch[C], pmis[C];                                                   \
    uchar rb[C];                                                               \
    ROW_STATE;                                                                 \
    _Pragma("unroll") for (uint c = 0; c < C; c++) {                           \
      const uint p = tile * TILE + lane * C + c;                               \
      M[c] = X[c] = (real)0;                                                   \
      if (p < pad || tile >= ntiles) {                                         \
        PAD_COEFS(c);                                                          \
        pmatch[c] = pmis[c] = (real)0;                                         \
        rb[c] = BASE_N;                                                        \
        T[c] = init;                                                           \
      } else {                                                                 \
        const uint i = pr.x + (p - pad);                                       \
        ROW_AT(rp, i, p == pad);                                               \
        ROW_COEFS(c, rp, p == pad);                                            \
        pmatch[c] = rp[6];                                                     \
        pmis[c] = rp[7];                                                       \
        rb[c] = rcodes[i];                                                     \
        T[c] = (real)0;                                                        \
      }                                                                        \
    }                                                                          \
    __local realv *et = emis + slot * SLOT_STRIDE + lane;                      \
    for (uint s = 0; s < NSYM; s++) {                                          \
      real pv[C];                                                              \
      _Pragma("unroll") for (uint c = 0; c < C; c++) pv[c] =                   \
          s == SYM_NONE                                                        \
              ? (real)0                                                        \
              : (rb[c] == s || rb[c] == BASE_N || s == BASE_N) ? pmatch[c]     \
                                                               : pmis[c];      \
      _Pragma("unroll") for (uint q = 0; q < NQ; q++) {                        \
        realv v;                                                               \
        VSET(v, pv, q);                                                        \
        et[s * SYM_STRIDE + q * G] = v;                                        \
      }                                                                        \
    }                                                                          \
  }

/* One step's cells of this lane: column j of rows 0..C-1, given the row
 * above (up*: this column, d*: the previous column) and the priors pv. */
#if CPH_FMA && !CPH_SCALED
#define CELLS()                                                                \
  {                                                                            \
    real upM = uM, upX = uX, dgM = dM, dgS = dT;                               \
    _Pragma("unroll") for (uint c = 0; c < C; c++) {                           \
      const real oM = M[c], oX = X[c], oy = T[c];                              \
      M[c] = pv[c] * fma(mm[c], dgM, gapm[c] * dgS);                           \
      X[c] = fma(gg[c], upX, mx[c] * upM);                                     \
      T[c] = fma(gg[c], oy, oM);                                               \
      dgM = oM;                                                                \
      dgS = fma(my[c], oy, oX);                                                \
      upM = M[c];                                                              \
      upX = X[c];                                                              \
    }                                                                          \
  }
/* What the next lane needs of the last row as its third value: S = X+Y. */
#define SHIP_T() fma(my[C - 1], T[C - 1], X[C - 1])
#else
/* Scaled and exact forms: the same walk, different updates of one cell. */
#if CPH_SCALED
#define CELL(c)                                                                \
  (M[c] = pv[c] * fma(cb[c], dgX, fma(cg[c], dgY, dgM)),                       \
   X[c] = fma(ca[c], upX, upM), T[c] = fma(gg[c], oY, oM))
#else
#define CELL(c)                                                                \
  (M[c] = pv[c] * ((dgM * mm[c] + dgX * gapm[c]) + dgY * gapm[c]),             \
   X[c] = upM * mx[c] + upX * gg[c], T[c] = oM * my[c] + oY * gg[c])
#endif
#define CELLS()                                                                \
  {                                                                            \
    real upM = uM, upX = uX, dgM = dM, dgX = dX, dgY = dT;                     \
    _Pragma("unroll") for (uint c = 0; c < C; c++) {                           \
      const real oM = M[c], oX = X[c], oY = T[c];                              \
      CELL(c);                                                                 \
      dgM = oM;                                                                \
      dgX = oX;                                                                \
      dgY = oY;                                                                \
      upM = M[c];                                                              \
      upX = X[c];                                                              \
    }                                                                          \
  }
#define SHIP_T() T[C - 1]
#endif

/* The priors of this lane's rows for symbol SYM into pv[0..C-1]. */
#define LOAD_PRIORS(pv, SYM)                                                   \
  {                                                                            \
    __local const realv *e = emis + slot * SLOT_STRIDE + (SYM) * SYM_STRIDE +  \
                             lane;                                             \
    _Pragma("unroll") for (uint q = 0; q < NQ; q++) {                          \
      const realv v = e[q * G];                                                \
      VGET(pv, q, v);                                                          \
    }                                                                          \
  }

/* One step s + R (R a constant 0..3; s is this tile's step, signed in
 * TILE_STEPS, where a later tile of a round starts at a negative step,
 * NEG): exchange, compute, emit the last row.
 *
 * The symbol and its priors run one step ahead: the lane above used, at
 * this step, the symbol this lane needs at the next, so the shuffle of the
 * symbol and the local-memory loads of the next priors overlap this step's
 * arithmetic instead of delaying it (lane 0 takes the next symbol from the
 * haplotype words w, w_next).
 *
 * MULTI (a constant) selects the multi-tile copy of the loop (1): lane 0
 * takes the row above from the boundary row (loaded PREFETCH steps ahead,
 * through bq, or one step ahead, through bnext) and the last lane writes its
 * row there; the single-tile copy (0) starts from
 * row 0 and only sums; 2 is the ring's copy (RING), 3 a split round's
 * (SPLIT_Q below: its first slot reads the row above volatile) and 4 that
 * of concurrent tiles of one round through local memory (LRING). Every copy
 * sums: a tile's sums are reset at its start, so after the last tile they
 * hold the pair's. */
#define STEP(R, MULTI, NEG)                                                    \
  {                                                                            \
    real uM, uX, uT;                                                           \
    uint nsym;                                                                 \
    CPH_SHUFFLE_UP4(M[C - 1], X[C - 1], SHIP_T(), sym, uM, uX, uT, nsym);      \
    const int j = (int)(s + (R)) - (int)lane + 1;                              \
    if ((MULTI) == 1 && PREFETCH > 1) {                                        \
      bcur = bq[0];                                                            \
      _Pragma("unroll") for (uint q = 0; q + 1 < PREFETCH; q++) bq[q] =        \
          bq[q + 1];                                                           \
      bq[PREFETCH - 1] = BOUND_IN(s + (R) + PREFETCH, NEG, MULTI);             \
    } else if ((MULTI) == 1 || (MULTI) == 3) {                                 \
      bcur = bnext;                                                            \
      bnext = BOUND_IN(s + (R) + 1, NEG, MULTI);                               \
    } else if ((MULTI) == 2) {                                                 \
      bcur = bnext;                                                            \
      bnext = RING_IN(s, (R) + 1);                                             \
    } else if ((MULTI) == 4) {                                                 \
      bcur = bnext;                                                            \
      bnext = LRING_IN(s + (R) + 1, NEG);                                      \
    }                                                                          \
    if (lane == 0) {                                                           \
      nsym = ((R) < 3 ? w >> (8 * ((R) + 1)) : w_next) & 0xffu;                \
      uM = (MULTI) ? bcur.s0 : (real)0;                                        \
      uX = (MULTI) ? bcur.s1 : (real)0;                                        \
      uT = (MULTI) ? bcur.s2 : init;                                           \
    }                                                                          \
    real pn[C];                                                                \
    LOAD_PRIORS(pn, nsym);                                                     \
    if (CPH_ZSKIP_DEBUG && zb) {                                               \
      sum_m += (real)1;                                                        \
      sum += (real)1;                                                          \
    }                                                                          \
    if (!zb) {                                                                 \
      CELLS();                                                                 \
      if (per_column) {                                                        \
        sum = sum + (M[C - 1] + X[C - 1]);                                     \
      } else {                                                                 \
        sum_m += M[C - 1];                                                     \
        sum_x += X[C - 1];                                                     \
      }                                                                        \
    }                                                                          \
    if (((MULTI) == 1 || (MULTI) == 3) && lane == G - 1 && j >= 1 &&           \
        (!(NEG) || j <= (int)nsteps))                                          \
      bnd[j - 1] = (real4)(M[C - 1], X[C - 1], SHIP_T(), (real)0);             \
    if ((MULTI) == 2 && lane == G - 1)                                         \
      RING_OUT(s, R) = (real4)(M[C - 1], X[C - 1], SHIP_T(), (real)0);         \
    if ((MULTI) == 4 && lane == G - 1 && j >= 1 &&                             \
        (!(NEG) || j <= (int)nsteps))                                          \
      LRING_OUT(j - 1) = (real4)(M[C - 1], X[C - 1], SHIP_T(), (real)0);       \
    dM = uM;                                                                   \
    dX = uX;                                                                   \
    dT = uT;                                                                   \
    sym = nsym;                                                                \
    _Pragma("unroll") for (uint c = 0; c < C; c++) pv[c] = pn[c];              \
  }

/* The boundary row at column index k (column k + 1), clamped to the
 * launch's bound_cols. A tile uses only the columns of its own steps
 * (0 .. nsteps - 1: set at the pair's start, written by the tile above, or
 * still (0, 0, init) past what that tile writes); the loads ahead of its
 * last steps, and in NEG rounds a slot's steps past nsteps, may see stale
 * values of other launches, which reach only columns past the pair's that
 * are neither stored nor in a sum that is used. NEG: a tile computing
 * steps before its start reads the row above's column 0 left of column 1:
 * zeros below a real row, Y = init below a transparent row of padding (a
 * pair's first real tile in a later slot of a round, its row above the
 * last of a tile of padding; zeros there lost the start of every path in
 * column 1, up to 0.4% of a result, found on PoCL with two tile slots). */
#define BOUND_IN(k, NEG, MULTI)                                                \
  ((NEG) && (int)(k) < 0                                                       \
       ? (real4)(0, 0, tile * TILE <= pad ? init : (real)0, 0)                 \
       : (MULTI) == 3 && tslot == 0 ? bvol[min((uint)(k), bound_cols - 1)]    \
                                    : bnd[min((uint)(k), bound_cols - 1)])

/* Haplotype word q (four symbols); NONE before the first. (Steps are
 * unsigned where they cannot be negative: that keeps the NVIDIA compiler's
 * schedule of the single-tile loop.) */
#define HWORD(q, NEG)                                                          \
  ((NEG) && (int)(q) < 0 ? NONE4 : hw[min((uint)(q), last_word)])

/* This tile's state before its step s: the haplotype word, the symbol and
 * priors of lane 0's column, and the prefetched boundary. */
#define FIRST_STEP(s, MULTI, NEG)                                              \
  {                                                                            \
    w = HWORD((s) / 4, NEG);                                                   \
    if ((MULTI) == 1 && PREFETCH > 1) {                                        \
      _Pragma("unroll") for (uint q = 0; q < PREFETCH; q++) bq[q] =            \
          BOUND_IN((s) + q, NEG, MULTI);                                       \
    } else if ((MULTI) == 1 || (MULTI) == 3)                                   \
      bnext = BOUND_IN(s, NEG, MULTI);                                         \
    else if ((MULTI) == 2)                                                     \
      bnext = RING_IN(s, 0);                                                   \
    else if ((MULTI) == 4)                                                     \
      bnext = LRING_IN(s, NEG);                                                \
    sym = lane == 0 ? (w & 0xffu) : SYM_NONE;                                  \
    LOAD_PRIORS(pv, sym);                                                      \
  }

/* zb: whether the block of four steps from here computes only zeros (see
 * ZSKIP), in the loop of tiles below a boundary row (MULTI 1). */
#if ZSKIP
/* (Where MULTI is a variable, the PoCL loop's, every work-item votes:
 * barriers and subgroup functions stay outside conditions there.) */
#if CPH_SHUFFLE == 3
#define ZB_VOTE(MULTI) ((MULTI) == 1)
#else
#define ZB_VOTE(MULTI) 1
#endif
#define ZERO_BLOCK(MULTI, zb)                                                  \
  {                                                                            \
    int zero_ = 0;                                                             \
    if ((MULTI) == 1) {                                                        \
      ulong z_ = as_ulong(dM) | as_ulong(dX) | as_ulong(dT);                   \
      _Pragma("unroll") for (uint c = 0; c < C; c++) z_ |=                     \
          as_ulong(M[c]) | as_ulong(X[c]) | as_ulong(T[c]);                    \
      if (lane == 0)                                                           \
        _Pragma("unroll") for (uint q = 0; q < PREFETCH; q++) z_ |=            \
            as_ulong(bq[q].s0) | as_ulong(bq[q].s1) | as_ulong(bq[q].s2);      \
      zero_ = z_ == 0;                                                         \
    }                                                                          \
    if (ZB_VOTE(MULTI))                                                        \
      CPH_ALL(zero_, zb);                                                      \
  }
#else
#define ZERO_BLOCK(MULTI, zb) (void)0
#endif

/* Steps s .. s + 3 (s a multiple of 4; NEG: it may be negative). */
#define BLOCK4(MULTI, NEG)                                                     \
  {                                                                            \
    const uint w_next = HWORD(s / 4 + 1, NEG);                                 \
    int zb = 0;                                                                \
    ZERO_BLOCK(MULTI, zb);                                                     \
    STEP(0, MULTI, NEG);                                                       \
    STEP(1, MULTI, NEG);                                                       \
    STEP(2, MULTI, NEG);                                                       \
    STEP(3, MULTI, NEG);                                                       \
    w = w_next;                                                                \
  }

/* The boundary row through local memory (RING: CPH_SEQ variants on
 * NVIDIA warps, G = 32, float; their tiles run one after the other). Per
 * step, lane 0 reads its row above from a ring of two chunks of RCH
 * columns (prefetched one step ahead, like the global row) and the last
 * lane writes its row to a chunk of RCH; between chunks the warp moves
 * whole chunks to and from the boundary row in global memory with
 * coalesced accesses. The per-step global accesses of the other loop cost
 * about 10% at 1024 rows on the H200 (bench/results): 64-bit addresses,
 * bounds, the store's condition; here a block of four steps takes
 * constant offsets from one base.
 *
 * Read ring entry (k mod 2 RCH) holds column index k (read by lane 0 at
 * step k, prefetched at k - 1); entry 2 RCH repeats entry 0, so that a
 * block's offsets never wrap. The chunk from column index k0 comes in at
 * the start of the chunk of steps before it. Write ring entry (s mod RCH)
 * holds step s's last row, column index s - (G - 1), and goes out after
 * its chunk. The warp synchronises around each chunk's copies. */
#if CPH_SEQ && CPH_SHUFFLE == 3 && CPH_G == 32 && !CPH_DOUBLE
#define RING 1
#else
#define RING 0
#endif
#define RCH 32 /* steps per chunk */
#if RING
#define RING_IN(s, off) rin[((uint)(s) & (2 * RCH - 1)) + (off)]
#define RING_OUT(s, R) rout[((uint)(s) & (RCH - 1)) + (R)]
#else /* STEP's ring arms are dead code without rings, but must compile */
#define RING_IN(s, off) ((real4)0)
#define RING_OUT(s, R) bcur
#endif
#define RING_SYNC() asm volatile("bar.warp.sync 0xffffffff;" ::: "memory")

/* Concurrent tiles of one round through local memory (LRING: programs of
 * small-call variants whose local memory has room, CPH_LRING from the
 * host). A pair whose tiles all run in one round (a small call's reads of
 * two or more tiles) needs no boundary row in global memory: the tile
 * above's last lane writes column index k to entry k mod LRING_N of its
 * lane group's ring at its step k + G - 1, and lane 0 of the tile below
 * reads it one step ahead of its step k, LAG - G >= 4 steps later, so a
 * barrier (every four steps) lies between; the entry is written again
 * LRING_N + G - LAG >= 4 steps after that read. The first tile's row above
 * is row 0. Through the global row such a tile took 103 ns a step on the
 * H200 (150-base reads on 32x4/128, double), 63 without its loads and
 * stores: the L2's latency was not hidden. Entries past those the tile
 * above writes hold zeros or older columns; they reach only columns of
 * lanes that never get to the last lane (as in the global row). */
#ifndef CPH_LRING
#define CPH_LRING 0
#endif
#define LRING (CPH_LRING && !CPH_SEQ)
#define LRING_N 16
#if LRING_N < LAG - G + 4
#error "the local ring is too short for the lag between concurrent tiles"
#endif
#if LRING
#define LRING_IN(k, NEG)                                                       \
  ((NEG) && (int)(k) < 0                                                       \
       ? (real4)(0, 0, tile * TILE <= pad ? init : (real)0, 0)                 \
   : tslot == 0 ? (real4)(0, 0, init, 0)                                       \
                : lr_in[(uint)(k) & (LRING_N - 1)])
#define LRING_OUT(k) lr_out[(uint)(k) & (LRING_N - 1)]
#define TILES_FENCE (CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#else /* (dead code, but must compile) */
#define LRING_IN(k, NEG) ((real4)0)
#define LRING_OUT(k) bcur
#define TILES_FENCE CLK_GLOBAL_MEM_FENCE
#endif

/* Columns k0 .. k0 + RCH - 1 (clamped) into read ring half h. */
#define RING_LOAD(k0, h)                                                       \
  {                                                                            \
    const real4 v = bnd[min((uint)(k0) + lane, bound_cols - 1)];               \
    rin[(h) * RCH + lane] = v;                                                 \
    if ((h) == 0 && lane == 0)                                                 \
      rin[2 * RCH] = v;                                                        \
  }

/* The write ring's first n entries, steps s0 .. s0 + n - 1, to the
 * boundary row (columns from index 0 on), unless this is the last tile. */
#define RING_STORE(s0, n)                                                      \
  {                                                                            \
    const int k = (int)(s0) + (int)lane - (G - 1);                             \
    if (tile + 1 < ntiles && lane < (n) && k >= 0 && k < (int)bound_cols)      \
      bnd[k] = rout[lane];                                                     \
  }

#define TILE_STATE                                                             \
  uint w, sym;                                                                 \
  real4 bcur = 0, bnext = 0, bq[PREFETCH]; /* bq: MULTI 1, PREFETCH > 1 */    \
  real pv[C]

/* All steps of one round, nsteps per tile (a multiple of 4, rounded by the
 * host), every tile computing every step: tile slot t from its step
 * s0 = -t LAG, so before its start it sees columns <= 0 and after its end
 * columns past H, which give zeros where they could reach the result, as
 * for lanes that have not started or have finished. A barrier follows
 * every block of four steps, as concurrent tiles need, also for a single
 * tile: PoCL needs barriers outside conditions. */
#define TILE_STEPS(MULTI)                                                      \
  {                                                                            \
    const int s0 = (MULTI) ? -(int)(tslot * LAG) : 0;                          \
    const uint gsteps = (MULTI) ? nsteps + (nconc - 1) * LAG : nsteps;         \
    TILE_STATE;                                                                \
    FIRST_STEP(s0, MULTI, MULTI);                                              \
    for (uint gs = 0; gs < gsteps; gs += 4) {                                  \
      const int s = (int)gs + s0;                                              \
      BLOCK4(MULTI, MULTI);                                                    \
      SPLIT_POINT(gs + 4);                                                     \
      barrier(TILES_FENCE);                                                    \
    }                                                                          \
  }

/* One tile, one round (NVIDIA, AMD). */
#define TILE_STEPS_SINGLE()                                                    \
  {                                                                            \
    TILE_STATE;                                                                \
    FIRST_STEP(0u, 0, 0);                                                      \
    for (uint s = 0; s < nsteps; s += 4)                                       \
      BLOCK4(0, 0);                                                            \
  }

/* One tile, one round, the boundary row through the rings (RING). */
#define TILE_STEPS_RING()                                                      \
  {                                                                            \
    TILE_STATE;                                                                \
    RING_LOAD(0u, 0);                                                          \
    RING_SYNC();                                                               \
    FIRST_STEP(0u, 2, 0);                                                      \
    for (uint s = 0; s < nsteps; s += 4) {                                     \
      if ((s & (RCH - 1)) == 0) {                                              \
        RING_SYNC();                                                           \
        if (s)                                                                 \
          RING_STORE(s - RCH, RCH);                                            \
        RING_LOAD(s + RCH, (s / RCH + 1) & 1);                                 \
        RING_SYNC();                                                           \
      }                                                                        \
      BLOCK4(2, 0);                                                            \
    }                                                                          \
    RING_SYNC();                                                               \
    const uint last = (nsteps - 1) & ~(RCH - 1);                               \
    RING_STORE(last, nsteps - last);                                           \
  }

/* The barrier after a block of four steps ending at global step gs:
 * concurrent tiles need it (sync); a split round (MULTI 3) needs one at
 * each of its points. */
#define IDLE_BARRIER(MULTI, gs)                                                \
  {                                                                            \
    const int point_ = (MULTI) == 3 && (gs) % SPLIT_Q == 0;                    \
    if (point_)                                                                \
      SPLIT_POINT(gs);                                                         \
    if (sync || point_)                                                        \
      barrier((MULTI) == 4 ? CLK_LOCAL_MEM_FENCE : CLK_GLOBAL_MEM_FENCE);      \
  }

/* The same round where a tile, and a slot past the round's tiles, idles at
 * the barriers outside its own steps (NVIDIA, AMD: their barriers count
 * arrivals, wherever in the code they come from; the host gives each slot
 * whole warps, as the shuffles need). Without concurrent tiles, no
 * barriers. */
#define TILE_STEPS_IDLE(MULTI)                                                 \
  {                                                                            \
    const uint gsteps = nsteps + (nconc - 1) * LAG;                            \
    const int active = tslot < nconc, sync = coop > 1;                         \
    const uint pre = active ? tslot * LAG : gsteps;                            \
    for (uint gs = 0; gs < pre; gs += 4)                                       \
      IDLE_BARRIER(MULTI, gs + 4);                                             \
    if (active) {                                                              \
      TILE_STATE;                                                              \
      FIRST_STEP(0u, MULTI, 0);                                                \
      for (uint s = 0; s < nsteps; s += 4) {                                   \
        BLOCK4(MULTI, 0);                                                      \
        IDLE_BARRIER(MULTI, pre + s + 4);                                      \
      }                                                                        \
    }                                                                          \
    for (uint gs = pre + (active ? nsteps : 0); gs < gsteps; gs += 4)          \
      IDLE_BARRIER(MULTI, gs + 4);                                             \
  }

/* Split pairs (split.x = W > 1 parts for the launch's first K groups, its
 * largest pairs; the others run whole): W work-groups share each such
 * group of pairs, part p running rounds p, p + W, p + 2W, ... A round's tiles
 * write their boundary row to buffer (round mod W) of the pair's W, and
 * its first tile reads the row of the round above from buffer (round - 1)
 * mod W, as that round's work-group writes it: round r+1 runs while round
 * r is still computing, W rounds of a pair at once on W compute units
 * instead of one (the long suite's largest pairs, 4e8 cells each, bounded
 * a whole call by themselves).
 *
 * Progress flags (one 64-bit word per group and round, the launch's epoch
 * in the upper half, so that no launch needs them cleared): every SPLIT_Q
 * steps all work-items fence their global writes, and after a barrier
 * work-item 0 publishes how many columns of the round's boundary row are
 * written (from the last slot's step) and waits until the round above has
 * published the columns its next SPLIT_Q steps read (need). Buffer
 * (round mod W) is next written by round + W, whose first column comes
 * after round + 1 has read the same column (every round waits for the one
 * above), so W buffers suffice for W >= 2. A round's first slot reads
 * the row above volatile: another compute unit wrote it, and a line left
 * in this unit's cache from an earlier round would be stale.
 *
 * Work-groups take their (group, part) from a ticket drawn at their start
 * (an atomic counter, per launch from split.w on; the split groups' parts
 * first, then the whole groups), not from their index,
 * so a group's parts start one after the other: every group but the last
 * one started has all its parts running or finished, and a part waits only
 * for parts of its own group (part 0 for part W - 1 too, from round W on).
 * A device that holds W work-groups at once therefore always makes
 * progress; one that runs work-groups one at a time does not (PoCL may, on
 * one thread: the host splits only on GPUs, whose compute units hold more).
 * A round ends with DONE or, when
 * the early exit stopped its pairs or the round above had stopped, STOP;
 * rounds running below a stopped round see STOP as "all columns written",
 * compute on what the rows hold (values written earlier: finite) and stop
 * after their round without writing sums.
 *
 * Programs built with CPH_SPLIT=0 (the host's default) have none of it:
 * W = 1 whatever split.x says, no ticket, no split copy of the loop. With
 * it every launch of concurrent tiles ran slower (H200: the long suite in
 * double 83 -> 92 ms, peak L = 2048 float kernel 7.2 -> 7.6 ms). The host
 * gives launches that split a CPH_SPLIT=1 program. */
#ifndef CPH_SPLIT
#define CPH_SPLIT 1
#endif
#define SPLIT_Q 32
#define SPLIT_DONE 0xfffffff0u
#define SPLIT_STOP 0xffffffffu
#define SPLIT_MARK(n) (((ulong)split.z << 32) | (ulong)(n))
/* Work-item 0 waits until the round above has published `need` columns,
 * DONE or STOP. */
#define SPLIT_WAIT(need)                                                       \
  {                                                                            \
    const ulong want_ = SPLIT_MARK(need);                                      \
    while (*above_flag < want_)                                                \
      ;                                                                        \
  }
/* Columns of the round's boundary row written before global step gs: the
 * last slot (from step pre_last on) writes column index k at its step
 * k + G - 1. */
#define SPLIT_HAVE(gs)                                                         \
  ((gs) >= pre_last + G - 1 ? min((gs) - pre_last - G + 1, split_cols) : 0u)
/* A split point at global step gs (a multiple of SPLIT_Q), before a
 * barrier that every work-item reaches: every work-item fences its global
 * writes; work-item 0 publishes the columns written before the previous
 * point (whose barrier followed every work-item's fence), then waits for
 * what the next SPLIT_Q steps read of the round above. The barrier after
 * it holds the others until then. */
#define SPLIT_POINT(gs)                                                        \
  if (W > 1 && (gs) % SPLIT_Q == 0) {                                          \
    mem_fence(CLK_GLOBAL_MEM_FENCE);                                           \
    if (lid == 0) {                                                            \
      *my_flag = SPLIT_MARK(SPLIT_HAVE((gs) - SPLIT_Q));                       \
      if (round > 0)                                                           \
        SPLIT_WAIT(min((gs) + SPLIT_Q + 4, split_cols));                       \
      mem_fence(CLK_GLOBAL_MEM_FENCE);                                         \
    }                                                                          \
  }

/* The early exits (CPH_EXIT): after each round but the last, the slot of
 * the round's last tile tests that tile's last row (exit_ok, from the
 * row's sums of m and x in the last lane), and the work-group stops when
 * every pair in it may stop (one flag in local memory; the loop's
 * condition, not a break, ends it: PoCL needs barriers in loops with
 * uniform exits). A tile of padding rows only (a pair shorter than its
 * work-group's tiles) never votes to stop; a slot without a pair (R = 0,
 * the last work-group's spare slots) always may. */
#define EXIT_VOTE()                                                            \
  {                                                                            \
    if (lid == 0)                                                              \
      exit_all = 1;                                                            \
    barrier(CLK_LOCAL_MEM_FENCE);                                              \
    if (lane == G - 1 && tslot == nconc - 1 && R > 0 &&                        \
        !exit_ok(rows, pr, H, tile, ntiles, pad,                               \
                 per_column ? sum : sum_m, per_column ? (real)0 : sum_x))      \
      exit_all = 0;                                                            \
    barrier(CLK_LOCAL_MEM_FENCE);                                              \
    stop = exit_all; /* set again only after the next round's barriers */     \
  }

#if CPH_EXIT == 1
/* Float mode's first pass: the pair's bound (src/model/bound.h: the row's
 * slots 4 and 5, the read's threshold in its last row's slot 4) proves
 * that its float sum falls below GKL's threshold. */
#define EXIT_MAX_H (1u << 20) /* CPH_BOUND_MAX_H: the proof's haplotypes */
static int exit_ok(__global const real *rows, uint4 pr, uint H, uint tile,
                   uint ntiles, uint pad, real sm, real sx) {
  const uint R = pr.y, last = (tile + 1) * TILE; /* rows, padding included */
  if (tile + 1 >= ntiles || last <= pad || H > EXIT_MAX_H)
    return 0;
  __global const real *rp = rows + (size_t)(pr.x + last - 1 - pad) * ROW_STRIDE;
  const real t = rows[(size_t)(pr.x + R - 1) * ROW_STRIDE + 4];
  return (rp[4] * sm + rp[5] * sx) * t < (real)1;
}
#elif CPH_EXIT == 2
/* Double programs: a real row whose cells m and x are all zero (their sums
 * are 0: the cells are never negative, and a sum of non-negative numbers
 * is 0 only when each is) has zeros for y too (y at column j takes the
 * row's m and y at column j - 1, and y is 0 left of column 1 in real
 * rows), and every row below it takes only that row's cells and their
 * own left neighbours: all later rows are zeros, in every form (products
 * and fused multiply-adds of zeros and finite factors are zeros), and
 * the pair's sum is 0. Stopping there gives the same sum as computing on
 * (double mode: -inf; the scaled rescue: to the exact pass, whose sum
 * decides). Reads of many kilobases whose likelihood is below double's
 * range underflow this way long before their last row. */
static int exit_ok(__global const real *rows, uint4 pr, uint H, uint tile,
                   uint ntiles, uint pad, real sm, real sx) {
  return tile + 1 < ntiles && (tile + 1) * TILE > pad && sm == (real)0 &&
         sx == (real)0;
}
#endif

__kernel __attribute__((reqd_work_group_size(CPH_WG, 1, 1))) void
pairhmm(__global const real *rows,   /* ROW_STRIDE reals per read row
                                        (CPH_INLINE: the row tables) */
        __global const uchar *rcodes, /* read base codes, one per row */
        __global const uint *hcodes,  /* haplotype codes, 4 per word */
        __global const uint4 *pairs,  /* (row offset, R, hap word, H) */
        __global const uint2 *groups, /* per work-group: (tiles, steps) */
        __global real *sums, /* per pair: scaled final sum (scaled form:
                                the last row's sums of m and x) */
        __global real4 *bound, /* per pair slot, bound_cols columns of the
                                  tile boundary row: (M, X, T, 0) */
        const uint bound_cols, const int per_column,
        const uint coop /* tile slots, dividing the lane groups */,
        /* This launch's first pair slot and work-group in pairs, groups
         * and sums: the launches of a chunk share those buffers. */
        const uint first_slot, const uint first_group,
        /* Split pairs (see SPLIT_Q): the ticket counter, then per group
         * and round a progress flag; (parts W | split groups K << 8,
         * rounds per group, epoch, the launch's first ticket): the first
         * K groups run on W work-groups each, the others on one. W = 1:
         * not split, sync unused. */
        volatile __global uint *sync, const uint4 split
#if CPH_INLINE
        ,
        const uint raw_rows /* rows of the raw bytes (rcodes: all five) */
#endif
) {
  __local realv emis[LG * SLOT_STRIDE];
#if CPH_EXIT
  __local int exit_all;
#endif
#if CPH_SPLIT
  __local uint split_word; /* the ticket, then the round above's end */
#endif
#if RING
  __local real4 ring_in[LG][2 * RCH + 1], ring_out[LG][RCH];
#endif
#if LRING
  __local real4 lring[LG][LRING_N];
#endif
  CPH_SHUFFLE_DECL

  const uint lid = get_local_id(0);
  const uint lane = lid % G;
  const uint slot = lid / G;
  /* The group of pairs and part of it (split pairs: from the ticket;
   * tickets 0 .. K W - 1 are the parts of the split groups, in order). */
#if CPH_SPLIT
  const uint WS = split.x & 0xffu, KS = split.x >> 8;
  if (lid == 0)
    split_word = WS > 1 ? atomic_inc(sync) - split.w : (uint)get_group_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint W = WS > 1 && split_word < KS * WS ? WS : 1u;
  const uint gidx = W > 1 ? split_word / W
                    : WS > 1 ? KS + (split_word - KS * WS)
                             : split_word;
  const uint part = W > 1 ? split_word % W : 0u;
#else
  const uint WS = 1u, W = 1u, gidx = get_group_id(0), part = 0u;
#endif
  /* Lane group `slot` computes tile slot tslot of pair slot pslot. */
  const uint ppw = LG / coop; /* pairs per work-group */
  const uint tslot = slot / ppw, pslot = slot % ppw;
  const uint pair = gidx * ppw + pslot;
#if RING
  __local real4 *const rin = ring_in[slot], *const rout = ring_out[slot];
#endif
#if LRING
  /* This lane group's ring, and that of the tile above (slot - ppw). */
  __local real4 *const lr_out = lring[slot],
                       *const lr_in = lring[slot >= ppw ? slot - ppw : slot];
#endif
  pairs += first_slot;
  groups += first_group;
  sums += (CPH_SCALED ? 2 : 1) * (size_t)first_slot;
  const uint4 pr = pairs[pair];
  const uint R = pr.y, H = pr.w;
  const uint2 grp = groups[gidx];
  const uint ntiles = grp.x, nsteps = grp.y;
  const uint pad = ntiles * TILE - R;
  const real init = H > 0 ? SCALE / (real)H : (real)0;
  /* The haplotype's words: its codes, NONE up to a word boundary, then one
   * word of NONE that every later step reads again. */
  __global const uint *hw = hcodes + pr.z;
  const uint last_word = (H + 3) / 4;
  /* The pair's boundary rows: W of them when split (round r writes row
   * r mod W; its first slot reads row (r - 1) mod W through bvol, the
   * others read row r mod W as usual: only this work-group writes it, so
   * this compute unit's cache holds no stale line of it). */
  __global real4 *const rows0 =
      bound + (size_t)pair * max(WS, 1u) * bound_cols;
  __global real4 *bnd = rows0;
  volatile __global const real4 *bvol = rows0;
  volatile __global ulong *const flags =
      (volatile __global ulong *)(sync + 2) + (size_t)gidx * split.y;
  volatile __global ulong *my_flag = flags, *above_flag = flags;
  /* Columns of a boundary row the round below reads: 1..H at least. */
  const uint split_cols = nsteps + 1 > G ? nsteps + 1 - G : 0u;

  DECLARE_COEFS;
  real M[C], X[C], T[C]; /* T: Y (exact form) or y (fast forms) */
  real sum_m = 0, sum_x = 0, sum = 0;
  int stop = 0; /* the early exit stopped the work-group's pairs */
  int told = 0; /* a split round above had stopped them */
  uint last_round = UINT_MAX; /* this work-group's last round (none) */

  /* The row above the first tile is row 0: M = X = 0, Y = init. Column j
   * of a boundary row is stored at j - 1. (The barrier stays outside the
   * condition: PoCL cannot form work-group regions around it otherwise.) */
  /* Concurrent tiles of one round pass their rows through local memory
   * (LRING), never through `bound`: ntiles <= coop is one round. (The
   * round count itself is computed after the barrier below: computed
   * before it, it lived across the barrier, and the driver's code for
   * 64-base pairs on 4x16/128 ran 1e10 cells in 3.85 ms instead of 3.54
   * on the H200.) */
  /* (Bitwise: LRING, and W and use_lring in some programs, are constants,
   * and compilers warn of a constant operand of && or ||, which drivers
   * then report on the process's stderr.) */
  const int use_lring = LRING & (ntiles > 1) & (ntiles <= coop) & (W == 1u);
#if CPH_SPLIT
  if ((ntiles > 1) & !use_lring & (tslot == 0) & (part == 0))
#else
  if ((ntiles > 1) & !use_lring & (tslot == 0))
#endif
    for (uint b = 0; b < W; b++)
      for (uint c = lane; c < nsteps; c += G)
        rows0[(size_t)b * bound_cols + c] = (real4)(0, 0, init, 0);
  barrier(CLK_GLOBAL_MEM_FENCE);
  const uint nrounds = (ntiles + coop - 1) / coop;
  for (uint round = part; round < nrounds && !stop; round += W) {
    const uint tile = round * coop + tslot;
    /* Tiles running in this round; slots past them compute padding. */
    const uint nconc = min(coop, ntiles - round * coop);
    const uint pre_last = (nconc - 1) * LAG;
    last_round = round;
    if (W > 1) {
      bnd = rows0 + (size_t)(round % W) * bound_cols;
      bvol = rows0 + (size_t)((round + W - 1) % W) * bound_cols;
      my_flag = flags + round;
      above_flag = flags + (round > 0 ? round - 1 : 0);
    }
    LOAD_TILE_ROWS();
#if LRING
    if (use_lring) /* (defined entries, ordered by the barrier below) */
      for (uint c = lane; c < LRING_N; c += G)
        lr_out[c] = (real4)0;
#endif
    /* A split round's first columns of the round above. */
    if (W > 1 && lid == 0 && round > 0) {
      SPLIT_WAIT(min((uint)SPLIT_Q + 4, split_cols));
      mem_fence(CLK_GLOBAL_MEM_FENCE);
    }
#if CPH_SPLIT
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
#else
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    /* Diagonal input of lane 0's first row: the row above at column 0,
     * which is row 0 (or a transparent row: Y = init) or a real row (0). */
    real dM = 0, dX = 0, dT = (tile * TILE <= pad) ? init : (real)0;
    sum_m = sum_x = sum = 0;
#if CPH_SHUFFLE == 3 || CPH_SHUFFLE == 4
    /* Two copies of the loop, the single-tile one without boundary rows.
     * These shuffles need whole warps in step: the host gives every tile
     * slot whole subgroups when it runs tiles concurrently. */
    if (ntiles == 1)
      TILE_STEPS_SINGLE()
#if LRING
    else if (use_lring)
      TILE_STEPS_IDLE(4)
#endif
#if RING /* the host runs CPH_SEQ variants with coop = 1, never split */
    else
      TILE_STEPS_RING()
#elif CPH_SPLIT
    else if (W > 1)
      TILE_STEPS_IDLE(3)
    else
      TILE_STEPS_IDLE(1)
#else
    else
      TILE_STEPS_IDLE(1)
#endif
#else
    /* One copy: these backends synchronise the work-group (local memory
     * barriers, or subgroup operations that PoCL implements with them),
     * and PoCL cannot compile barriers inside the arms of an if/else. */
    const int multi = ntiles == 1 ? 0 : W > 1 ? 3 : use_lring ? 4 : 1;
    TILE_STEPS(multi)
#endif
    if (W > 1)
      mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
#if CPH_EXIT
    EXIT_VOTE();
#endif
#if CPH_SPLIT
    if (W > 1) {
      /* The round's end: whether the round above had stopped, then this
       * round's DONE or STOP (the fence above preceded the barriers). */
      if (lid == 0) {
        uint above_stopped = 0;
        if (round > 0) {
          SPLIT_WAIT(SPLIT_DONE);
          above_stopped = *above_flag == SPLIT_MARK(SPLIT_STOP);
        }
        *my_flag =
            SPLIT_MARK(stop || above_stopped ? SPLIT_STOP : SPLIT_DONE);
        split_word = above_stopped;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      told = split_word != 0;
      stop = stop || told;
      barrier(CLK_LOCAL_MEM_FENCE); /* before split_word's next use */
    }
#endif
  }
  /* The slot of the pair's last tile holds its sums. A stopped pair's
   * sums: after the bound's exit (-1, 0), which the host rescues (its sum
   * is negative) and counts; after the underflow exit -0 (computed sums
   * are never -0: they add non-negative numbers to +0), which is the
   * pair's sum and which the host counts. */
  const real stopped = CPH_EXIT == 1 ? (real)-1 : (real)-0.0;
  /* (Split: the part that ran the last round, or that stopped the pair.) */
  const int writes = !told && (stop || last_round == nrounds - 1);
  if (writes && lane == G - 1 && tslot == (stop ? 0 : (ntiles - 1) % coop)) {
#if CPH_SCALED
    sums[2 * pair] = stop ? stopped : sum_m; /* weighted by the host */
    sums[2 * pair + 1] = stop ? (CPH_EXIT == 1 ? (real)0 : (real)-0.0) : sum_x;
#else
    sums[pair] = stop ? stopped : per_column ? sum : sum_m + sum_x;
#endif
  }
}
#endif /* !CPH_VEC */
