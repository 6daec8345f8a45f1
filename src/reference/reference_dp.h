/* The scalar forward algorithm, written once for both precisions: include
 * with CPH_T (float or double), CPH_ROW (cph_row_f / cph_row_d) and CPH_DP
 * (the function name) defined. Row by row with two rolling rows of M, X, Y;
 * operation order exactly as PAIRHMM_SPEC 5.2 (the library is built with
 * -ffp-contract=off, so no FMA is formed). */

/* Returns the scaled final sum: GKL style (sum M, sum X, then add) unless
 * per_column, then GATK Java style (sum of M + X per column). */
static CPH_T CPH_DP(const CPH_ROW *rows, const uint8_t *rcodes, size_t R,
                    const uint8_t *hcodes, size_t H, int per_column,
                    CPH_T *work) {
  CPH_T *Mp = work, *Xp = Mp + (H + 1), *Yp = Xp + (H + 1);
  CPH_T *Mc = Yp + (H + 1), *Xc = Mc + (H + 1), *Yc = Xc + (H + 1);
  const CPH_T init =
      (CPH_T)(sizeof(CPH_T) == sizeof(float) ? CPH_SCALE_FLOAT
                                             : CPH_SCALE_DOUBLE) /
      (CPH_T)H;
  for (size_t j = 0; j <= H; j++) {
    Mp[j] = 0;
    Xp[j] = 0;
    Yp[j] = init;
  }
  for (size_t i = 1; i <= R; i++) {
    const CPH_ROW *t = &rows[i - 1];
    const uint8_t rb = rcodes[i - 1];
    Mc[0] = Xc[0] = Yc[0] = 0;
    for (size_t j = 1; j <= H; j++) {
      const uint8_t hb = hcodes[j - 1];
      const CPH_T prior = (rb == hb || rb == CPH_BASE_N || hb == CPH_BASE_N)
                              ? t->match
                              : t->mismatch;
      Mc[j] = prior *
              ((Mp[j - 1] * t->mm + Xp[j - 1] * t->gapm) + Yp[j - 1] * t->gapm);
      Xc[j] = Mp[j] * t->mx + Xp[j] * t->xx;
      Yc[j] = Mc[j - 1] * t->my + Yc[j - 1] * t->yy;
    }
    CPH_T *s;
    s = Mp, Mp = Mc, Mc = s;
    s = Xp, Xp = Xc, Xc = s;
    s = Yp, Yp = Yc, Yc = s;
  }
  /* Mp/Xp now hold row R (or row 0 when R == 0: all zeros). */
  CPH_T sum_m = 0, sum_x = 0, sum = 0;
  for (size_t j = 1; j <= H; j++) {
    if (per_column) {
      sum = sum + (Mp[j] + Xp[j]);
    } else {
      sum_m += Mp[j];
      sum_x += Xp[j];
    }
  }
  return per_column ? sum : sum_m + sum_x;
}
