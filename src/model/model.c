#include "model/model.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "model/bound.h"
#include "model/validate.h"

/* Jacobian log table: J[k] = log10(1 + 10^(-k * 0.0001)), k = 0..80000. */
#define JACOBIAN_STEP 0.0001
#define JACOBIAN_MAX 8.0
/* (int)(JACOBIAN_MAX / JACOBIAN_STEP) + 1, as both implementations size it */
#define JACOBIAN_SIZE 80001

static double jacobian_d[JACOBIAN_SIZE];
static float jacobian_f[JACOBIAN_SIZE];
static cph_tables_f tables_gkl_f;
static cph_tables_d tables_gkl_d;
static cph_tables_d tables_java_d;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static int fast_round_d(double d) {
  return d > 0.0 ? (int)(d + 0.5) : (int)(d - 0.5);
}

static int fast_round_f(float d) {
  return d > 0.0f ? (int)(d + 0.5f) : (int)(d - 0.5f);
}

/* approxSum in double (Java MathUtils / GKL Context<double>). Arguments
 * are finite here, so the infinity checks of both never trigger. */
static double approx_sum_d(double a, double b) {
  double lo = a < b ? a : b, hi = a < b ? b : a;
  double diff = hi - lo;
  if (diff >= JACOBIAN_MAX)
    return hi;
  return hi + jacobian_d[fast_round_d(diff * (1.0 / JACOBIAN_STEP))];
}

/* approxSum in float (GKL Context<float>). */
static float approx_sum_f(float a, float b) {
  float lo = a < b ? a : b, hi = a < b ? b : a;
  float diff = hi - lo;
  if (diff >= (float)JACOBIAN_MAX)
    return hi;
  return hi + jacobian_f[fast_round_f(diff * (float)(1.0 / JACOBIAN_STEP))];
}

/* 1 - 10^s via log1p, as both implementations build matchToMatch. */
static double one_minus_pow10(double s, double inv_ln10) {
  double p = pow(10.0, s);
  return pow(10.0, log1p(-(p < 1.0 ? p : 1.0)) * inv_ln10);
}

static void build_tables(void) {
  for (int k = 0; k < JACOBIAN_SIZE; k++) {
    jacobian_d[k] = log10(1.0 + pow(10.0, -((double)k) * JACOBIAN_STEP));
    jacobian_f[k] = (float)jacobian_d[k];
  }
  const double java_inv_ln10 = 1.0 / log(10.0);
  const double gkl_inv_ln10 = 0.434294; /* GKL's truncated constant */
  for (int q = 0; q < CPH_NQUAL; q++) {
    tables_gkl_f.ph2pr[q] = powf(10.f, -((float)q) / 10.f);
    tables_gkl_d.ph2pr[q] = pow(10.0, -((double)q) / 10.0);
    tables_java_d.ph2pr[q] = pow(10.0, q / -10.0);
  }
  for (int hi = 0, off = 0; hi < CPH_NQUAL; off += ++hi) {
    for (int lo = 0; lo <= hi; lo++) {
      double sd = approx_sum_d(-0.1 * hi, -0.1 * lo);
      float sf = approx_sum_f((float)-0.1 * (float)hi, (float)-0.1 * (float)lo);
      tables_java_d.mm[off + lo] = one_minus_pow10(sd, java_inv_ln10);
      tables_gkl_d.mm[off + lo] = one_minus_pow10(sd, gkl_inv_ln10);
      tables_gkl_f.mm[off + lo] = (float)one_minus_pow10(sf, gkl_inv_ln10);
    }
  }
}

const cph_tables_f *cph_tables_gkl_float(void) {
  pthread_once(&tables_once, build_tables);
  return &tables_gkl_f;
}

const cph_tables_d *cph_tables_double(cph_flavor flavor) {
  pthread_once(&tables_once, build_tables);
  return flavor == CPH_JAVA_DOUBLE ? &tables_java_d : &tables_gkl_d;
}

static size_t mm_index(unsigned ins, unsigned del) {
  unsigned hi = ins > del ? ins : del, lo = ins > del ? del : ins;
  return (size_t)hi * (hi + 1) / 2 + lo;
}

void cph_rows_float(const clphmm_read *read, cph_row_f *rows) {
  const cph_tables_f *t = cph_tables_gkl_float();
  for (size_t k = 0; k < read->length; k++) {
    unsigned q = read->base_quals[k] & 127, i = read->ins_quals[k] & 127;
    unsigned d = read->del_quals[k] & 127, c = read->gcp_quals[k] & 127;
    cph_row_f *r = &rows[k];
    r->mm = t->mm[mm_index(i, d)];
    r->gapm = 1.0f - t->ph2pr[c];
    r->mx = t->ph2pr[i];
    r->xx = t->ph2pr[c];
    r->my = t->ph2pr[d];
    r->yy = t->ph2pr[c];
    r->match = 1.0f - t->ph2pr[q];
    r->mismatch = t->ph2pr[q] / 3.0f;
  }
}

/* The scaled form's constants of row k (b, g, a) from its probabilities,
 * in double (the weights' product P is cph_weights_scaled's); the row
 * above the first has M = X = 0, Y = K/H and mm = mx = my = 1.
 *
 * Divisions are products with reciprocals (1/mm, 1/mx: the device takes
 * them from its tables, cph_prep_tables), in this order on both sides so
 * that the bits agree: three double divisions per row were most of what
 * a row cost the kernels that compute their rows (timing-only edit on the
 * H100: 3.05 ms instead of 3.26 for 1e10 cells of 256-base pairs). Each
 * constant is a few double ulps from the quotient, far below the float
 * rounding that follows. */
typedef struct scaled_walk {
  double rpmm, pmx, pmy; /* the row above's 1/mm, mx and my */
} scaled_walk;

static void scaled_step(scaled_walk *w, double mm, double gapm, double mx,
                        double my, double gg, double coef[3]) {
  /* mm = 0 (insertion and deletion qualities both 0) gives infinities: the
   * pair's sum is then not finite and the pair is recomputed without this
   * form. */
  const double rmm = 1.0 / mm, rmx = 1.0 / mx;
  coef[0] = gapm * w->pmx * rmm * w->rpmm;
  coef[1] = gapm * w->pmy * rmm;
  coef[2] = gg * w->pmx * rmx * w->rpmm;
  w->rpmm = rmm;
  w->pmx = mx;
  w->pmy = my;
}

/* A float row's early-exit weights (model/bound.h), advancing the walk. */
static void bound_row(cph_bound_walk *bw, double mm, double gapm, double mx,
                      double my, double gg, float *qm, float *qx) {
  const double growth = cph_bound_growth(mm, gapm, mx, gg, bw->e_prev);
  bw->e_prev = cph_bound_e(my, gg);
  const double q = cph_bound_step(bw, mm, growth);
  *qm = cph_bound_slot(q);
  *qx = cph_bound_slot(q * (mx / mm));
}

void cph_rows_scaled(const clphmm_read *read, int dbl, void *rows, double *wm,
                     double *wx) {
  const cph_tables_f *tf = cph_tables_gkl_float();
  const cph_tables_d *td = cph_tables_double(CPH_GKL_DOUBLE);
  scaled_walk w = {1.0, 1.0, 1.0};
  cph_bound_walk bw = CPH_BOUND_WALK_INIT;
  const int bound = !dbl && read->length > CPH_BOUND_MIN_ROWS;
  for (size_t k = 0; k < read->length; k++) {
    unsigned q = read->base_quals[k] & 127, i = read->ins_quals[k] & 127;
    unsigned d = read->del_quals[k] & 127, c = read->gcp_quals[k] & 127;
    const size_t mi = mm_index(i, d);
    /* GKL's tables of each precision (float mode computes gapm in float). */
    const double mm = dbl ? td->mm[mi] : tf->mm[mi];
    const double gapm = dbl ? 1.0 - td->ph2pr[c] : 1.0f - tf->ph2pr[c];
    const double mx = dbl ? td->ph2pr[i] : tf->ph2pr[i];
    const double my = dbl ? td->ph2pr[d] : tf->ph2pr[d];
    const double gg = dbl ? td->ph2pr[c] : tf->ph2pr[c];
    double coef[3];
    scaled_step(&w, mm, gapm, mx, my, gg, coef);
    if (dbl) {
      cph_row_ds *r = &((cph_row_ds *)rows)[k];
      *r = (cph_row_ds){.b = coef[0],
                        .g = coef[1],
                        .a = coef[2],
                        .gg = gg,
                        .match = 1.0 - td->ph2pr[q],
                        .mismatch = td->ph2pr[q] / 3.0};
    } else {
      float qm = 0.0f, qx = 0.0f; /* short reads get no bound */
      if (bound)
        bound_row(&bw, mm, gapm, mx, my, gg, &qm, &qx);
      cph_row_fs *r = &((cph_row_fs *)rows)[k];
      *r = (cph_row_fs){.b = (float)coef[0],
                        .g = (float)coef[1],
                        .a = (float)coef[2],
                        .gg = (float)gg,
                        .qm = qm,
                        .qx = qx,
                        .match = 1.0f - tf->ph2pr[q],
                        .mismatch = tf->ph2pr[q] / 3.0f};
    }
  }
  cph_weights_scaled(read->ins_quals, read->del_quals, read->length, dbl, wm,
                     wx);
  /* The threshold (NaN: never stop) in the last row's qm. */
  if (!dbl && read->length)
    ((cph_row_fs *)rows)[read->length - 1].qm =
        bound ? cph_float_up(cph_bound_threshold(&bw, read->length)) : NAN;
}

/* The scaled form's tables of a precision, fetched once per call (each
 * fetch is a pthread_once: per row it cost the weights half their time). */
typedef struct weight_tab {
  const float *mm_f, *ph_f;
  const double *mm_d, *ph_d;
  int dbl;
} weight_tab;

static weight_tab weights_tab(int dbl) {
  const cph_tables_f *tf = cph_tables_gkl_float();
  const cph_tables_d *td = cph_tables_double(CPH_GKL_DOUBLE);
  return (weight_tab){tf->mm, tf->ph2pr, td->mm, td->ph2pr, dbl};
}

/* Row k's match-to-match probability. */
static inline double weight_mm(const weight_tab *t, const uint8_t *ins,
                               const uint8_t *del, size_t k) {
  const size_t mi = mm_index(ins[k] & 127u, del[k] & 127u);
  return t->dbl ? t->mm_d[mi] : (double)t->mm_f[mi];
}

/* The weights from P_R-1 (`prod`: rows 0..length-2 multiplied in row
 * order, as cl/prep.cl does) and the last row. */
static void weights_last(const weight_tab *t, const uint8_t *ins,
                         const uint8_t *del, size_t length, double prod,
                         double *wm, double *wx) {
  const unsigned i = ins[length - 1] & 127u;
  *wm = prod * weight_mm(t, ins, del, length - 1);         /* P_R */
  *wx = prod * (t->dbl ? t->ph_d[i] : (double)t->ph_f[i]); /* P_R-1 mx_R */
}

void cph_weights_scaled(const uint8_t *ins, const uint8_t *del, size_t length,
                        int dbl, double *wm, double *wx) {
  if (!length)
    return;
  const weight_tab t = weights_tab(dbl);
  double prod = 1.0;
  for (size_t k = 0; k + 1 < length; k++)
    prod *= weight_mm(&t, ins, del, k);
  weights_last(&t, ins, del, length, prod, wm, wx);
}

void cph_weights_scaled4(const uint8_t *const ins[4],
                         const uint8_t *const del[4], const size_t length[4],
                         int dbl, double w[8]) {
  const weight_tab t = weights_tab(dbl);
  size_t common = length[0];
  for (int r = 1; r < 4; r++)
    common = length[r] < common ? length[r] : common;
  /* The rows all four have (but each one's last) as four independent
   * chains of products, then each read's own rest. */
  double prod[4] = {1.0, 1.0, 1.0, 1.0};
  const size_t shared = common ? common - 1 : 0;
  for (size_t k = 0; k < shared; k++)
    for (int r = 0; r < 4; r++)
      prod[r] *= weight_mm(&t, ins[r], del[r], k);
  for (int r = 0; r < 4; r++) {
    if (!length[r])
      continue;
    for (size_t k = shared; k + 1 < length[r]; k++)
      prod[r] *= weight_mm(&t, ins[r], del[r], k);
    weights_last(&t, ins[r], del[r], length[r], prod[r], &w[2 * r],
                 &w[2 * r + 1]);
  }
}

void cph_rows_double(const clphmm_read *read, cph_flavor flavor,
                     cph_row_d *rows) {
  const cph_tables_d *t = cph_tables_double(flavor);
  for (size_t k = 0; k < read->length; k++) {
    unsigned q = read->base_quals[k] & 127, i = read->ins_quals[k] & 127;
    unsigned d = read->del_quals[k] & 127, c = read->gcp_quals[k] & 127;
    cph_row_d *r = &rows[k];
    r->mm = t->mm[mm_index(i, d)];
    r->gapm = 1.0 - t->ph2pr[c];
    r->mx = t->ph2pr[i];
    r->xx = t->ph2pr[c];
    r->my = t->ph2pr[d];
    r->yy = t->ph2pr[c];
    r->match = 1.0 - t->ph2pr[q];
    r->mismatch = t->ph2pr[q] / 3.0;
  }
}

/* Codes by comparisons rather than a table: the loop then vectorizes
 * (a byte's lower case equals one of acgtn only for that letter in either
 * case). 0.11 ns a base against 0.45 with a table lookup per byte on an
 * AMD EPYC (gcc -O3); staging the HaplotypeCaller-like mix encodes 38 million
 * read bases a call. */
_Static_assert(CPH_BASE_A == 0, "cph_encode_bases: A's mask adds nothing");

uint8_t cph_encode_bases(const char *bases, size_t length, uint8_t *codes) {
  uint8_t any = 0;
  for (size_t i = 0; i < length; i++) {
    const uint8_t l = (uint8_t)bases[i] | 0x20;
    const uint8_t a = (uint8_t) - (l == 'a'), c = (uint8_t) - (l == 'c'),
                  g = (uint8_t) - (l == 'g'), t = (uint8_t) - (l == 't'),
                  n = (uint8_t) - (l == 'n');
    /* (Each mask is 0 or 0xff; an invalid byte has none: 0xff.) */
    const uint8_t code =
        (uint8_t)((c & CPH_BASE_C) | (g & CPH_BASE_G) | (t & CPH_BASE_T) |
                  (n & CPH_BASE_N) | (uint8_t) ~(a | c | g | t | n));
    codes[i] = code;
    any |= code;
  }
  return any;
}

double cph_log10_float(float sum) {
  return (double)(log10f(sum) - log10f(CPH_SCALE_FLOAT));
}

double cph_log10_double(double sum) {
  return log10(sum) - log10(CPH_SCALE_DOUBLE);
}

/* One table entry in the output type (double, or float for float rows). */
static void put(void *out, int dbl, size_t k, double v) {
  if (dbl)
    ((double *)out)[k] = v;
  else
    ((float *)out)[k] = (float)v;
}

size_t cph_prep_tables(cph_flavor flavor, int scaled, void *out) {
  const int fl = flavor == CPH_GKL_FLOAT;
  const int dbl = scaled || !fl; /* the table's type */
  const size_t bytes = CPH_PREP_TABLE_ENTRIES * (dbl ? 8 : 4);
  if (!out)
    return bytes;
  const cph_tables_f *tf = cph_tables_gkl_float();
  const cph_tables_d *td = cph_tables_double(fl ? CPH_GKL_DOUBLE : flavor);
  for (size_t k = 0; k < CPH_MM_SIZE; k++) {
    const double mm = fl ? (double)tf->mm[k] : td->mm[k];
    put(out, dbl, k, mm);
    put(out, dbl, CPH_TAB_INV_MM + k, 1.0 / mm);
  }
  for (size_t q = 0; q < CPH_NQUAL; q++) {
    /* Float mode computes these in float (then widened, exactly). */
    const float fmatch = 1.0f - tf->ph2pr[q], fmis = tf->ph2pr[q] / 3.0f;
    const double ph = fl ? (double)tf->ph2pr[q] : td->ph2pr[q];
    const double gapm = fl ? (double)fmatch : 1.0 - td->ph2pr[q];
    put(out, dbl, CPH_TAB_PH2PR + q, ph);
    put(out, dbl, CPH_TAB_GAPM + q, gapm);
    put(out, dbl, CPH_TAB_MATCH + q, gapm); /* the match prior is 1 - ph2pr */
    put(out, dbl, CPH_TAB_MISMATCH + q, fl ? (double)fmis : td->ph2pr[q] / 3.0);
    put(out, dbl, CPH_TAB_INV_PH2PR + q, 1.0 / ph);
    /* Float mode's priors as two floats in one double slot (the scaled
     * float form loads both at once); zeros in other tables. */
    const float pri[2] = {fmatch, fmis};
    if (fl && dbl)
      memcpy((double *)out + CPH_TAB_PRIORS_F + q, pri, sizeof pri);
    else
      put(out, dbl, CPH_TAB_PRIORS_F + q, 0.0);
  }
  return bytes;
}
