/* The CPU kernel: vector variants, written vPxC/WG (CPH_VEC 1).
 *
 * The lane-group kernel (pairhmm.cl) spreads one pair over a group of
 * work-items that pass values to each other every step; on a CPU (PoCL)
 * that exchange goes through local memory and two work-group barriers per
 * step, and PoCL runs the work-items between barriers one after the
 * other. This kernel has no exchange and no barrier: one work-item
 * computes CPH_G = P whole pairs at once, one pair per lane of an OpenCL
 * vector (float16, double8, ...; P = 1 is scalar code that PoCL's
 * work-group vectorizer may vectorize across work-items). The host sorts
 * pairs by read-length bin, tiles and haplotype length, so the P pairs of a
 * work-item have similar shapes and the lanes stay busy.
 *
 * A work-item walks its pairs' read rows in tiles of C = CPH_C rows (kept
 * in private memory with their transitions and priors) and, for each tile,
 * the haplotype columns one by one: a column's C cells are computed top to
 * bottom, each from the cell above (this column), the one to the left and
 * the diagonal one (the previous column, kept from the previous step).
 * Every lane runs the work-group's tiles and steps (groups[]: the most of
 * its pairs):
 *  - reads shorter than the tiles are padded at the top with transparent
 *    rows (prior 0, no insertion, Y carried down), as in pairhmm.cl, so the
 *    last row of every pair is the last row of the last tile;
 *  - columns past a pair's haplotype compute values that nothing reads:
 *    the sums of the last row skip them (adding 0, so the sums are those of
 *    columns 1..H exactly) and no column left of them depends on them.
 * A tile's last row goes to the pair's boundary row in global memory (M, X
 * and the third value, per column), which the next tile of the same
 * work-item reads back: no synchronisation is needed.
 *
 * The cell arithmetic is pairhmm.cl's, operation by operation, in its
 * three forms (exact, fused, scaled: see there), so both kernels give the
 * same bits with the same form; the exact form (the default on CPUs)
 * reproduces the CPU reference bit for bit.
 *
 * Defines: CPH_VEC (1), CPH_G (pairs per work-item: 1, 2, 4, 8 or 16),
 * CPH_C (rows per tile), CPH_WG (work-items per work-group), CPH_DOUBLE,
 * CPH_FMA, CPH_SCALED. The arguments are pairhmm.cl's (coop is always 1;
 * bound holds 3 P reals per column per work-item).
 */
#ifndef CPH_VEC
#define CPH_VEC 0
#endif
#if CPH_VEC
#pragma OPENCL FP_CONTRACT OFF

#if CPH_SCALED && !CPH_FMA
#error "the scaled form is a fast form: it needs CPH_FMA"
#endif

#define P CPH_G
#define C CPH_C
#define ROW_STRIDE 8 /* mm, gapm, mx, xx, my, yy, match, mismatch */
#define BASE_N 4
/* Symbols as bit masks: A C G T one bit each, N all of them, so a read
 * row matches a column when their masks share a bit. The padding symbol
 * (5, past the haplotype) matches nothing; its columns are not summed. */
#define MASK_N 0x1f

#if CPH_DOUBLE
#define RNAME double
#define INAME long
typedef long itype;
#else
#define RNAME float
#define INAME int
typedef int itype;
#endif

#define VCAT_(a, b) a##b
#define VCAT(a, b) VCAT_(a, b)
#if P == 1
typedef real realP;
typedef itype intP;
#define SEL(a, b, m) ((m) ? (b) : (a))
#define LOADP(p) ((p)[0])
#define STOREP(v, p) ((p)[0] = (v))
#elif P == 2 || P == 4 || P == 8 || P == 16
typedef VCAT(RNAME, P) realP;
typedef VCAT(INAME, P) intP;
#define SEL(a, b, m) select((a), (b), (m))
#define LOADP(p) VCAT(vload, P)(0, (p))
#define STOREP(v, p) VCAT(vstore, P)((v), 0, (p))
#else
#error "CPH_G (pairs per work-item) must be 1, 2, 4, 8 or 16"
#endif

/* A row's coefficients (k0..k4) from its parameters, and those of a
 * transparent row (PAD_K*). xx == yy (both the gap continuation): one
 * coefficient, gg = k3, serves both. */
#if CPH_SCALED
/* k0 = b, k1 = g, k2 = a (host: cph_rows_scaled); k4 unused. */
#define PAD_K0 0
#define PAD_K1 0
#define PAD_K2 1
#define PAD_K4 0
#else
/* k0 = mm, k1 = gapm, k2 = mx, k4 = my. */
#define PAD_K0 0
#define PAD_K1 0
#define PAD_K2 0
#if CPH_FMA
#define PAD_K4 1 /* y = Y/my: my reconstructs Y, 1 keeps it */
#else
#define PAD_K4 0
#endif
#endif
#define PAD_K3 1

/* Zero columns (pairhmm.cl's zero blocks, ZSKIP, per column here): a cell
 * whose inputs are all exactly 0 is 0, and far from a long read's
 * alignment every path underflows. In a long pair's tiles below the first
 * (a boundary row above), a column whose inputs from the row above and the
 * diagonal are 0 in every lane, while every cell of the tile's previous
 * column is 0 too, stays 0 without its arithmetic: the same bits. The
 * cells are tested at most every fourth column, and only where the inputs
 * are 0 (a few ORs a column otherwise); pairs of fewer than
 * ZSKIP_MIN_TILES tiles (short reads) do not test. Not in the scaled
 * form, whose coefficients can be infinite (1/mm of mm = 0: 0 times them
 * is NaN, not 0). CLPHMM_BUILD_OPTIONS=-DCPH_ZSKIP=0 turns it off, to
 * measure; -DCPH_ZSKIP_DEBUG=1 (tests only) adds 1 to the sums of each
 * skipped column, so that a test sees that columns were skipped. */
#ifndef CPH_ZSKIP
#define CPH_ZSKIP (!CPH_SCALED)
#endif
#ifndef CPH_ZSKIP_DEBUG
#define CPH_ZSKIP_DEBUG 0
#endif
#define ZSKIP_MIN_TILES 16
#if P == 1
#define ZBITS(v) VCAT(as_, INAME)(v)
#define ZANY(z) ((z) != 0)
#else
#define ZBITS(v) VCAT(as_, VCAT(INAME, P))(v)
#define ZANY(z) any((z) != (intP)0)
#endif

/* One cell of row c: pairhmm.cl's CELL / fused CELLS, with the row above
 * (upM, upX: this column) and the diagonal (dgM, dgX, dgY or dgS: the
 * previous column). */
#if CPH_FMA && !CPH_SCALED
#define CELL(c)                                                                \
  {                                                                            \
    const realP oM = M[c], oX = X[c], oy = T[c];                               \
    M[c] = pv * fma(k0[c], dgM, k1[c] * dgS);                                  \
    X[c] = fma(k3[c], upX, k2[c] * upM);                                       \
    T[c] = fma(k3[c], oy, oM);                                                 \
    dgM = oM;                                                                  \
    dgS = fma(k4[c], oy, oX);                                                  \
    upM = M[c];                                                                \
    upX = X[c];                                                                \
  }
#define DIAG_DECL realP dgM = dM, dgS = dT
#define SHIP_T() fma(k4[C - 1], T[C - 1], X[C - 1])
#else
#if CPH_SCALED
#define CELL_UPDATE(c)                                                         \
  (M[c] = pv * fma(k0[c], dgX, fma(k1[c], dgY, dgM)),                          \
   X[c] = fma(k2[c], upX, upM), T[c] = fma(k3[c], oY, oM))
#else
#define CELL_UPDATE(c)                                                         \
  (M[c] = pv * ((dgM * k0[c] + dgX * k1[c]) + dgY * k1[c]),                    \
   X[c] = upM * k2[c] + upX * k3[c], T[c] = oM * k4[c] + oY * k3[c])
#endif
#define CELL(c)                                                                \
  {                                                                            \
    const realP oM = M[c], oX = X[c], oY = T[c];                               \
    CELL_UPDATE(c);                                                            \
    dgM = oM;                                                                  \
    dgX = oX;                                                                  \
    dgY = oY;                                                                  \
    upM = M[c];                                                                \
    upX = X[c];                                                                \
  }
#define DIAG_DECL realP dgM = dM, dgX = dX, dgY = dT
#define SHIP_T() T[C - 1]
#endif

__kernel __attribute__((reqd_work_group_size(CPH_WG, 1, 1))) void
pairhmm(__global const real *rows,   /* ROW_STRIDE reals per read row */
        __global const uchar *rcodes, /* read base codes, one per row */
        __global const uint *hcodes,  /* haplotype codes, 4 per word */
        __global const uint4 *pairs,  /* (row offset, R, hap word, H) */
        __global const uint2 *groups, /* per work-group: (tiles, steps) */
        __global real *sums, /* per pair: scaled final sum (scaled form:
                                the last row's sums of m and x) */
        __global real4 *bound, /* per pair slot, bound_cols columns */
        const uint bound_cols, const int per_column, const uint coop,
        const uint first_slot, const uint first_group,
        /* Split pairs (cl/pairhmm.cl): never on vector variants. */
        volatile __global uint *sync, const uint4 split) {
  (void)coop;
  (void)sync;
  (void)split;
  pairs += first_slot;
  groups += first_group;
  sums += (CPH_SCALED ? 2 : 1) * (size_t)first_slot;
  /* This work-item's pair slots: slot0 .. slot0 + P - 1 of the launch. */
  const size_t slot0 =
      ((size_t)get_group_id(0) * CPH_WG + get_local_id(0)) * P;
  const uint2 grp = groups[get_group_id(0)];
  const uint ntiles = grp.x, nsteps = grp.y;

  /* Per lane: the read's first row, its padding rows, the haplotype's
   * first word and last word, its length, the initial value K/H. */
  uint roff[P], pad[P], hoff[P], lastw[P];
  itype hlen[P], padl[P];
  real initl[P];
  for (uint l = 0; l < P; l++) {
    const uint4 pr = pairs[slot0 + l];
    roff[l] = pr.x;
    pad[l] = ntiles * C - pr.y;
    padl[l] = (itype)pad[l];
    hoff[l] = pr.z;
    lastw[l] = (pr.w + 3) / 4;
    hlen[l] = (itype)pr.w;
    initl[l] = pr.w > 0 ? SCALE / (real)pr.w : (real)0;
  }
  const realP init = LOADP(initl);
  const intP H = LOADP(hlen), padv = LOADP(padl);
  /* Boundary row: column j at (j - 1) * 3P reals: M, X, third value. */
  __global real *bnd = (__global real *)bound + slot0 * 4 * (size_t)bound_cols;

  realP sum_m = 0, sum_x = 0, sum = 0;
  for (uint tile = 0; tile < ntiles; tile++) {
    realP k0[C], k1[C], k2[C], k3[C], k4[C], pm[C], px[C];
    intP rm[C];
    realP M[C], X[C], T[C];
    _Pragma("unroll 1") for (uint c = 0; c < C; c++) {
      real t0[P], t1[P], t2[P], t3[P], t4[P], t6[P], t7[P], tT[P];
      itype tm[P];
      for (uint l = 0; l < P; l++) {
        const uint p = tile * C + c;
        if (p < pad[l]) {
          t0[l] = PAD_K0;
          t1[l] = PAD_K1;
          t2[l] = PAD_K2;
          t3[l] = PAD_K3;
          t4[l] = PAD_K4;
          t6[l] = t7[l] = 0;
          tm[l] = 0;
          tT[l] = initl[l];
        } else {
          const uint i = roff[l] + (p - pad[l]);
          __global const real *rp = rows + (size_t)i * ROW_STRIDE;
          t0[l] = rp[0];
          t1[l] = rp[1];
          t2[l] = rp[2];
          t3[l] = rp[3];
          t4[l] = rp[4];
          t6[l] = rp[6];
          t7[l] = rp[7];
          const uint b = rcodes[i];
          tm[l] = b == BASE_N ? MASK_N : 1 << b;
          tT[l] = 0;
        }
      }
      k0[c] = LOADP(t0);
      k1[c] = LOADP(t1);
      k2[c] = LOADP(t2);
      k3[c] = LOADP(t3);
      k4[c] = LOADP(t4);
      pm[c] = LOADP(t6);
      px[c] = LOADP(t7);
      rm[c] = LOADP(tm);
      T[c] = LOADP(tT);
      M[c] = X[c] = (realP)0;
    }
    /* The diagonal input of the first row at column 1: the row above at
     * column 0, row 0 or a transparent row (Y = init), or a real row (0). */
    realP dM = 0, dX = 0;
    realP dT = SEL((realP)0, init, padv >= (intP)(itype)(tile * C));
    const int more = tile + 1 < ntiles;
    sum_m = sum_x = sum = 0;
    const int ztest = CPH_ZSKIP && tile > 0 && ntiles >= ZSKIP_MIN_TILES;
    int zero_cells = 0; /* the tile's cells are all 0 (known) */
    for (uint q = 0; q < nsteps / 4; q++) {
      itype wl[P];
      for (uint l = 0; l < P; l++)
        wl[l] = (itype)hcodes[hoff[l] + min(q, lastw[l])];
      const intP w = LOADP(wl);
      _Pragma("unroll 1") for (uint r = 0; r < 4; r++) {
        const uint j = 4 * q + r + 1; /* column */
        const intP s = (w >> (intP)(itype)(8 * r)) & (intP)0xff;
        const intP hm = SEL((intP)1 << s, (intP)MASK_N, s == (intP)BASE_N);
        realP uM = 0, uX = 0, uT = init; /* the row above: row 0 */
        __global real *bj = bnd + (size_t)(j - 1) * (3 * P);
        if (tile > 0) {
          uM = LOADP(bj);
          uX = LOADP(bj + P);
          uT = LOADP(bj + 2 * P);
        }
        int skip = 0;
        if (ztest && !ZANY(ZBITS(uM) | ZBITS(uX) | ZBITS(uT) | ZBITS(dM) |
                           ZBITS(dX) | ZBITS(dT))) {
          if (!zero_cells && r == 0) {
            intP z = (intP)0;
            for (uint c = 0; c < C; c++)
              z |= ZBITS(M[c]) | ZBITS(X[c]) | ZBITS(T[c]);
            zero_cells = !ZANY(z);
          }
          skip = zero_cells;
        }
        if (CPH_ZSKIP_DEBUG && skip) {
          sum_m += (realP)1;
          sum += (realP)1;
        }
        if (!skip) {
          zero_cells = 0;
          realP upM = uM, upX = uX;
          DIAG_DECL;
          _Pragma("unroll 1") for (uint c = 0; c < C; c++) {
            const realP pv = SEL(px[c], pm[c], (rm[c] & hm) != (intP)0);
            CELL(c);
          }
          const intP valid = H >= (intP)(itype)j;
          if (per_column) {
            sum = sum + SEL((realP)0, M[C - 1] + X[C - 1], valid);
          } else {
            sum_m += SEL((realP)0, M[C - 1], valid);
            sum_x += SEL((realP)0, X[C - 1], valid);
          }
        }
        if (more && j - 1 < bound_cols) {
          STOREP(M[C - 1], bj);
          STOREP(X[C - 1], bj + P);
          STOREP(SHIP_T(), bj + 2 * P);
        }
        dM = uM;
        dX = uX;
        dT = uT;
      }
    }
  }
  real om[P], ox[P], os[P];
  STOREP(sum_m, om);
  STOREP(sum_x, ox);
  STOREP(sum, os);
  for (uint l = 0; l < P; l++) {
#if CPH_SCALED
    sums[2 * (slot0 + l)] = om[l]; /* weighted by the host */
    sums[2 * (slot0 + l) + 1] = ox[l];
#else
    sums[slot0 + l] = per_column ? os[l] : om[l] + ox[l];
#endif
  }
}
#endif
