/* Row preparation on the device (appended to every kernel program): the
 * per-row transitions and priors of the lane-group kernel (ROW_STRIDE
 * reals per row, the layouts of cph_row_f / cph_row_d and of the scaled
 * form's cph_row_fs / cph_row_ds in src/model/model.h) from the raw bytes
 * of the reads (rows.cl, row_of), so that the host sends 5 bytes per read
 * row instead of 8 reals, plus, in the scaled form, each read's weights
 * and, in float mode's first pass, its early-exit bound. Bit-identical to
 * the host's (test_device compares them). */
#if ROWS_ON
/* The early-exit bound of float mode's first pass (src/model/bound.c,
 * whose functions these are, operation by operation): per row qm_i and
 * qx_i in the scaled form's slots 4 and 5, the read's threshold in its
 * last row's slot 4. */
#define PREP_BOUND (CPH_SCALED && !CPH_DOUBLE)
#if PREP_BOUND
#define BOUND_RHO (1.0 + 0x1p-20)
#define BOUND_MIN_ROWS 256 /* CPH_BOUND_MIN_ROWS */

static double bound_e(double my, double gg) {
  return BOUND_RHO * my / (1.0 - BOUND_RHO * gg);
}

static double bound_growth(double mm, double gapm, double mx, double gg,
                           double e_prev) {
  if (!(mm > 0.0) || !(BOUND_RHO * gg < 1.0))
    return (double)NAN;
  const double g1 = mm + mx + gapm * e_prev, g2 = gapm + gg;
  return BOUND_RHO * (g1 > g2 ? g1 : g2);
}

static double bound_threshold(double growth, double gmin, uint rows) {
  return growth * ((double)rows + 1.0) <= 0x1p20 * gmin ? growth * 0x1p104
                                                        : (double)NAN;
}

/* cph_bound_slot: rounded up, at least FLT_MIN (devices that flush
 * denormals would read a smaller weight as 0). */
static float bound_slot(double x) {
  return x < (double)FLT_MIN ? FLT_MIN : convert_float_rtp(x);
}
#endif

#if CPH_SCALED
/* Lane 0's serial products over the first n rows of a block: prod times
 * their mm values, one by one in row order (the host's order: the weights
 * must be bit-identical). Eight rows at a time with their operands loaded
 * first, so that only the multiplications wait for each other (a load and
 * a product after another took about 100 ns a row on the H100, most of
 * the row preparation of short reads). */
#define PROD_UNROLL 8
static tab_t products(__local const tab_t *mm, uint n, tab_t prod) {
  uint j = 0;
  for (; j + PROD_UNROLL <= n; j += PROD_UNROLL) {
    tab_t m[PROD_UNROLL];
#pragma unroll
    for (uint u = 0; u < PROD_UNROLL; u++)
      m[u] = mm[j + u];
#pragma unroll
    for (uint u = 0; u < PROD_UNROLL; u++)
      prod *= m[u];
  }
  for (; j < n; j++)
    prod *= mm[j];
  return prod;
}

#if PREP_BOUND
/* The same with the bound's walk (cph_bound_step): per row P_k into p and
 * G_k over its growth factor in g, and the running minimum of G. */
static void bound_products(__local const double *mm, __local double *g,
                           __local double *p, uint n, double *prod,
                           double *growth, double *gmin) {
  double pr = *prod, gr = *growth, gm = *gmin;
  uint j = 0;
  for (; j + PROD_UNROLL <= n; j += PROD_UNROLL) {
    double m[PROD_UNROLL], f[PROD_UNROLL];
#pragma unroll
    for (uint u = 0; u < PROD_UNROLL; u++) {
      m[u] = mm[j + u];
      f[u] = g[j + u];
    }
#pragma unroll
    for (uint u = 0; u < PROD_UNROLL; u++) {
      pr *= m[u];
      gr = gr * f[u];
      gm = gr < gm ? gr : gm;
      p[j + u] = pr;
      g[j + u] = gr;
    }
  }
  for (; j < n; j++) {
    pr *= mm[j];
    gr = gr * g[j];
    gm = gr < gm ? gr : gm;
    p[j] = pr;
    g[j] = gr;
  }
  *prod = pr;
  *growth = gr;
  *gmin = gm;
}
#endif
#endif

/* A read per `lanes` work-items (PREP_WG / lanes reads per work-group):
 * they take its rows in turn, in blocks of 4 lanes rows; in the scaled
 * form each block's mm values go through local memory to the read's first
 * work-item, which multiplies them into the read's weights in row order
 * (the host's order: a product is not associative, and the weights must
 * be bit-identical). Short reads take fewer work-items each (the host's
 * choice), so that more of their serial products run at once: with 64
 * work-items to a 64-base read the row preparation was latency-bound (on
 * the H100, 332 us of a 1e10-cell call's kernels for the weights alone).
 * raw holds five arrays of n_rows bytes: base codes (read directly by the
 * lane-group kernel), base, insertion and deletion qualities and gap
 * continuation penalties. The host launches PREP_WG work-items per group.
 * store_rows 0: the weights alone (the chunk's kernels compute their rows,
 * and take no bound). */
#define PREP_WG 64
#define PREP_BLOCK (4 * PREP_WG) /* rows of a work-group's blocks */
#define PREP_MIN_LANES 8
__kernel __attribute__((reqd_work_group_size(PREP_WG, 1, 1))) void
prep_rows(__global const uchar *raw, const uint n_rows,
          __global const uint2 *reads, /* (first row, length) */
          __global const tab_t *tab, __global real *rows,
          /* scaled form: per read (P_R, P_R-1 mx_R) */
          __global tab_t *weights, const uint store_rows, const uint n_reads,
          const uint lanes /* a power of 2, PREP_MIN_LANES .. PREP_WG */) {
  const uint lid = get_local_id(0), lane = lid % lanes, sub = lid / lanes;
  const uint block = 4 * lanes, base = sub * block; /* its part of a block */
  const uint r = get_group_id(0) * (PREP_WG / lanes) + sub;
  const uint2 rd = r < n_reads ? reads[r] : (uint2)(0, 0);
  /* Blocks: as many as the group's longest read needs (the barriers). */
  __local uint most[PREP_WG / PREP_MIN_LANES];
  if (lane == 0)
    most[sub] = rd.y;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint longest = 0;
  for (uint j = 0; j < PREP_WG / lanes; j++)
    longest = max(longest, most[j]);
#if CPH_SCALED
  __local tab_t block_mm[PREP_BLOCK];
  tab_t prod = 1;
#endif
#if PREP_BOUND
  /* Per row of the block: gamma, then G (the serial products), P, and
   * mx / mm. Only the products are serial; all work-items turn them into
   * the slots (a division, conversions and a store per row in the serial
   * loop made the long suite's row preparation take 5 ms on the H200). */
  __local double block_g[PREP_BLOCK], block_p[PREP_BLOCK], block_x[PREP_BLOCK];
  __local double threshold[PREP_WG / PREP_MIN_LANES];
  double bgrowth = 1, bgmin = 1;
  const int bound_on = store_rows && rd.y > BOUND_MIN_ROWS;
#endif
  __global const uchar *qi = raw + 2 * (size_t)n_rows;
  __global const uchar *qd = raw + 3 * (size_t)n_rows;
#if PREP_BOUND
  __global const uchar *qc = raw + 4 * (size_t)n_rows;
#endif
  for (uint k0 = 0; k0 < longest; k0 += block) {
    for (uint k = k0 + lane; k < k0 + block && k < rd.y; k += lanes) {
      const uint s = rd.x + k;
      /* One vector store per row (8 scalar stores were a third of the
       * kernel's time on the H200). */
      if (store_rows)
        vstore8(row_of(tab, raw, n_rows, s, k == 0), s, rows);
#if CPH_SCALED
      const tab_t mm = tab[mm_index(qi[s], qd[s])];
      block_mm[base + k - k0] = mm;
#if PREP_BOUND
      if (bound_on) {
        const uint i = qi[s], c = qc[s];
        const double gapm = tab[TAB_GAPM + c], mx = tab[TAB_PH2PR + i],
                     gg = tab[TAB_PH2PR + c];
        /* (e of the row above: 0 above the first row.) */
        const double e_prev =
            k > 0 ? bound_e(tab[TAB_PH2PR + qd[s - 1]],
                            tab[TAB_PH2PR + qc[s - 1]])
                  : 0.0;
        block_g[base + k - k0] = bound_growth(mm, gapm, mx, gg, e_prev);
        block_x[base + k - k0] = mx / mm;
      }
#endif
#endif
    }
#if CPH_SCALED
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0 && k0 < rd.y) {
      /* wm = P_R = mm_1 ... mm_R; wx = P_R-1 mx_R. */
      const uint end = min(k0 + block, rd.y);
      const uint last = end == rd.y; /* the block holds the read's last row */
      const uint n = end - k0 - last;
      __local const tab_t *bm = block_mm + base;
#if PREP_BOUND
      if (bound_on)
        bound_products(bm, block_g + base, block_p + base, n, &prod, &bgrowth,
                       &bgmin);
      else
#endif
        prod = products(bm, n, prod);
      if (last) {
        weights[2 * r] = prod * bm[n];
        weights[2 * r + 1] = prod * tab[TAB_PH2PR + qi[rd.x + k0 + n]];
        prod *= bm[n];
#if PREP_BOUND
        if (bound_on) {
          bgrowth = bgrowth * block_g[base + n];
          bgmin = bgrowth < bgmin ? bgrowth : bgmin;
          block_p[base + n] = prod;
          block_g[base + n] = bgrowth;
          threshold[sub] = bound_threshold(bgrowth, bgmin, rd.y);
        }
#endif
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#if PREP_BOUND
    for (uint k = k0 + lane; k < k0 + block && k < rd.y; k += lanes) {
      if (bound_on) {
        const double q = block_p[base + k - k0] / block_g[base + k - k0];
        vstore2((float2)(k + 1 == rd.y ? convert_float_rtp(threshold[sub])
                                       : bound_slot(q),
                         bound_slot(q * block_x[base + k - k0])),
                0, rows + (size_t)(rd.x + k) * 8 + 4);
      } else if (store_rows && k + 1 == rd.y) {
        /* no bound: a threshold that never stops */
        rows[(size_t)(rd.x + k) * 8 + 4] = (real)NAN;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* the next block rewrites block_g */
#endif
#endif
  }
}
#endif
