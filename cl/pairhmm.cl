/* The lane-group PairHMM kernel (DESIGN section 3).
 *
 * A group of CPH_G work-items computes one read x haplotype pair; each
 * work-item owns CPH_C consecutive read rows and keeps their M, X, Y and
 * transitions in registers. The haplotype streams through the group: at
 * step s, lane t computes column j = s - t + 1 for its rows, receiving the
 * last row of lane t-1 (computed one step earlier) through the shuffle.
 *
 * Reads are padded at the top with transparent rows (no emission, no
 * insertion, Y carried down unchanged), so the pair's last row is always
 * the last register of the last lane of the last tile: no run-time register
 * indexing. Reads longer than one tile (G*C rows) run tile after tile; the
 * last row of each tile goes to global memory (`bound`) for the next.
 *
 * Arithmetic follows PAIRHMM_SPEC 5.2 operation by operation; contraction
 * into FMA is off, so results equal the CPU reference's.
 *
 * Defines: CPH_DOUBLE (0/1), CPH_G, CPH_C, CPH_WG (work-group size, a
 * multiple of CPH_G), CPH_SHUFFLE (see shuffle.cl, prepended by the host).
 */
#pragma OPENCL FP_CONTRACT OFF

/* CPH_FMA=1 fuses each product with the following addition (8 instead of 12
 * arithmetic instructions per cell; results move by about one float ulp,
 * far inside the spec's levels). CPH_FMA=0 keeps the exact GKL/GATK order,
 * bit-identical to the CPU reference. */
#if CPH_FMA
#define MAD(a, b, c) fma((a), (b), (c))
#else
#define MAD(a, b, c) ((a) * (b) + (c))
#endif

#define G CPH_G
#define C CPH_C
#define PPW (CPH_WG / CPH_G) /* pairs per work-group */
#define TILE (CPH_G * CPH_C) /* read rows per tile */
#define NSYM 5               /* base codes A C G T N */
#define BASE_N 4
#define ROW_STRIDE 8 /* mm, gapm, mx, xx, my, yy, match, mismatch */

/* Emission table in local memory: per pair slot, per symbol, per row c of
 * a lane, the G lanes side by side. A warp reading row c of one symbol then
 * touches consecutive banks (a lane-major layout made that an 8- to 32-way
 * bank conflict and capped the H200 near 1 TCUPS). Slots are padded so
 * that the 32/G slots of a warp start on different banks. */
#define EMIS_SLOT_RAW (NSYM * C * G)
#define EMIS_SLOT (EMIS_SLOT_RAW + ((G - EMIS_SLOT_RAW % 32) % 32 + 32) % 32)
#define EMIS(slot, sym, c) ((slot) * EMIS_SLOT + ((sym) * C + (c)) * G + lane)

/* Fill this lane's rows of the emission table and its transitions for one
 * tile. Transparent (padding) rows get prior 0, no insertion, yy = 1. */
#define LOAD_TILE_ROWS()                                                       \
  _Pragma("unroll") for (uint c = 0; c < C; c++) {                             \
    const uint p = tile * TILE + lane * C + c;                                 \
    if (p < pad) {                                                             \
      mm[c] = gapm[c] = mx[c] = xx[c] = my[c] = (real)0;                       \
      yy[c] = (real)1;                                                         \
      for (uint s = 0; s < NSYM; s++)                                          \
        emis[EMIS(slot, s, c)] = (real)0;                                      \
      M[c] = X[c] = (real)0;                                                   \
      Y[c] = init;                                                             \
    } else {                                                                   \
      const uint i = pr.x + (p - pad);                                         \
      __global const real *rp = rows + (size_t)i * ROW_STRIDE;                 \
      mm[c] = rp[0];                                                           \
      gapm[c] = rp[1];                                                         \
      mx[c] = rp[2];                                                           \
      xx[c] = rp[3];                                                           \
      my[c] = rp[4];                                                           \
      yy[c] = rp[5];                                                           \
      const uchar rb = rcodes[i];                                              \
      for (uint s = 0; s < NSYM; s++)                                          \
        emis[EMIS(slot, s, c)] =                                               \
            (rb == s || rb == BASE_N || s == BASE_N) ? rp[6] : rp[7];          \
      M[c] = X[c] = Y[c] = (real)0;                                            \
    }                                                                          \
  }

__kernel __attribute__((reqd_work_group_size(CPH_WG, 1, 1))) void
pairhmm(__global const real *rows,   /* ROW_STRIDE reals per read row */
        __global const uchar *rcodes, /* read base codes, one per row */
        __global const uchar *hcodes, /* haplotype base codes */
        __global const uint4 *pairs,  /* (row offset, R, hap offset, H) */
        __global const uint2 *groups, /* per work-group: (tiles, steps) */
        __global real *sums,          /* per pair: scaled final sum */
        __global real *bound,         /* tile boundaries, 6 x bound_cols */
        const uint bound_cols, const int per_column) {
  __local real emis[PPW * EMIS_SLOT];
  CPH_SHUFFLE_DECL

  const uint lid = get_local_id(0);
  const uint lane = lid % G;
  const uint slot = lid / G;
  const uint pair = get_group_id(0) * PPW + slot;
  const uint4 pr = pairs[pair];
  const uint R = pr.y, H = pr.w;
  const uint2 grp = groups[get_group_id(0)];
  const uint ntiles = grp.x, nsteps = grp.y;
  const uint pad = ntiles * TILE - R;
  const real init = H > 0 ? SCALE / (real)H : (real)0;
  __global real *bnd = bound + (size_t)pair * 6 * bound_cols;

  real mm[C], gapm[C], mx[C], xx[C], my[C], yy[C];
  real M[C], X[C], Y[C];
  real sum_m = 0, sum_x = 0, sum = 0;

  for (uint tile = 0; tile < ntiles; tile++) {
    LOAD_TILE_ROWS();
    barrier(CLK_LOCAL_MEM_FENCE);
    const int last_tile = tile + 1 == ntiles;
    __global const real *bin = bnd + (tile & 1) * 3 * bound_cols;
    __global real *bout = bnd + ((tile & 1) ^ 1) * 3 * bound_cols;
    /* Diagonal input of the first row: the row above at column j-1. For
     * lane 0 at the first step that is column 0 of the tile's upper
     * boundary (row 0 or a transparent row carry init in Y). */
    real dM = 0, dX = 0, dY = (tile * TILE <= pad) ? init : (real)0;

    /* The haplotype base of the next step is loaded one step ahead, so
     * the load's latency hides behind a step of arithmetic. */
    __global const uchar *hap = hcodes + pr.z;
    uchar hb_next = (lane == 0 && H > 0) ? hap[0] : (uchar)0;
    for (uint s = 0; s < nsteps; s++) {
      real uM, uX, uY;
      CPH_SHUFFLE_UP3(M[C - 1], X[C - 1], Y[C - 1], uM, uX, uY);
      const int j = (int)s - (int)lane + 1;
      const int active = j >= 1 && j <= (int)H;
      const uchar hb = hb_next;
      if (j >= 0 && j < (int)H)
        hb_next = hap[j];
      if (lane == 0 && active) {
        if (tile == 0) {
          uM = 0;
          uX = 0;
          uY = init;
        } else {
          uM = bin[j];
          uX = bin[bound_cols + j];
          uY = bin[2 * bound_cols + j];
        }
      }
      if (active) {
        __local const real *prior = &emis[EMIS(slot, hb, 0)];
        real upM = uM, upX = uX, dgM = dM, dgX = dX, dgY = dY;
#pragma unroll
        for (uint c = 0; c < C; c++) {
          const real oM = M[c], oX = X[c], oY = Y[c];
          M[c] = prior[c * G] * MAD(dgY, gapm[c], MAD(dgX, gapm[c], dgM * mm[c]));
          X[c] = MAD(upX, xx[c], upM * mx[c]);
          Y[c] = MAD(oY, yy[c], oM * my[c]);
          dgM = oM;
          dgX = oX;
          dgY = oY;
          upM = M[c];
          upX = X[c];
        }
        if (lane == G - 1) {
          if (last_tile) {
            sum_m += M[C - 1];
            sum_x += X[C - 1];
            sum = sum + (M[C - 1] + X[C - 1]);
          } else {
            bout[j] = M[C - 1];
            bout[bound_cols + j] = X[C - 1];
            bout[2 * bound_cols + j] = Y[C - 1];
          }
        }
      }
      dM = uM;
      dX = uX;
      dY = uY;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  if (lane == G - 1)
    sums[pair] = per_column ? sum : sum_m + sum_x;
}
