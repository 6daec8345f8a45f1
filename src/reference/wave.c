#include "reference/wave.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "model/validate.h"

/* The strip kernels need GCC or Clang vector extensions; elsewhere the
 * reference runs the row-by-row oracle. Vectors are 16 bytes in the
 * baseline build (SSE2 on x86-64, NEON on AArch64; lowered to scalar code
 * on targets without SIMD).
 *
 * Run-time instruction-set selection: x86-64 builds the kernels twice more,
 * with 32-byte vectors for AVX2 and 64-byte vectors for AVX-512F (function
 * target attributes), and picks one with __builtin_cpu_supports, which
 * also checks that the OS saves the wider registers. This needs no ifunc
 * support (unlike target_clones), so it works with any x86-64 libc and
 * with static linking. The attributes name no FMA extension, and
 * -ffp-contract=off applies to them as to all code: no fused operation can
 * appear. */
#if defined(__GNUC__) || defined(__clang__)
#define WAVE_GNU 1
#else
#define WAVE_GNU 0
#endif
#if WAVE_GNU && defined(__x86_64__)
#define WAVE_X86 1
#else
#define WAVE_X86 0
#endif

/* Most lanes of any kernel: the padding every layout provides. */
#define WAVE_VMAX 16

#if WAVE_GNU
#define CPH_WAVE_TARGET
#define CPH_T float
#define CPH_I int32_t
#define CPH_V 4
#define CPH_WAVE wave_f
#include "reference/reference_wave.h"
#undef CPH_T
#undef CPH_I
#undef CPH_V
#undef CPH_WAVE
#define CPH_T double
#define CPH_I int64_t
#define CPH_V 2
#define CPH_WAVE wave_d
#include "reference/reference_wave.h"
#undef CPH_T
#undef CPH_I
#undef CPH_V
#undef CPH_WAVE
#undef CPH_WAVE_TARGET
#endif

#if WAVE_X86
#define CPH_WAVE_TARGET __attribute__((target("avx2")))
#define CPH_T float
#define CPH_I int32_t
#define CPH_V 8
#define CPH_WAVE wave_f_avx2
#include "reference/reference_wave.h"
#undef CPH_T
#undef CPH_I
#undef CPH_V
#undef CPH_WAVE
#define CPH_T double
#define CPH_I int64_t
#define CPH_V 4
#define CPH_WAVE wave_d_avx2
#include "reference/reference_wave.h"
#undef CPH_T
#undef CPH_I
#undef CPH_V
#undef CPH_WAVE
#undef CPH_WAVE_TARGET

#define CPH_WAVE_TARGET __attribute__((target("avx512f")))
#define CPH_T float
#define CPH_I int32_t
#define CPH_V 16
#define CPH_WAVE wave_f_avx512
#include "reference/reference_wave.h"
#undef CPH_T
#undef CPH_I
#undef CPH_V
#undef CPH_WAVE
#define CPH_T double
#define CPH_I int64_t
#define CPH_V 8
#define CPH_WAVE wave_d_avx512
#include "reference/reference_wave.h"
#undef CPH_T
#undef CPH_I
#undef CPH_V
#undef CPH_WAVE
#undef CPH_WAVE_TARGET
#endif

const char *cph_ref_kernel_name(cph_ref_kernel k) {
  switch (k) {
  case CPH_REF_AUTO: return "auto";
  case CPH_REF_SCALAR: return "scalar";
  case CPH_REF_WAVE: return "wave";
  case CPH_REF_WAVE_AVX2: return "wave-avx2";
  case CPH_REF_WAVE_AVX512: return "wave-avx512";
  }
  return "?";
}

int cph_ref_kernel_available(cph_ref_kernel k) {
  switch (k) {
  case CPH_REF_AUTO:
  case CPH_REF_SCALAR: return 1;
  case CPH_REF_WAVE: return WAVE_GNU;
#if WAVE_X86
  case CPH_REF_WAVE_AVX2: return __builtin_cpu_supports("avx2");
  case CPH_REF_WAVE_AVX512: return __builtin_cpu_supports("avx512f");
#else
  case CPH_REF_WAVE_AVX2:
  case CPH_REF_WAVE_AVX512: return 0;
#endif
  }
  return 0;
}

cph_ref_kernel cph_ref_kernel_best(void) {
  if (cph_ref_kernel_available(CPH_REF_WAVE_AVX512))
    return CPH_REF_WAVE_AVX512;
  if (cph_ref_kernel_available(CPH_REF_WAVE_AVX2))
    return CPH_REF_WAVE_AVX2;
  return WAVE_GNU ? CPH_REF_WAVE : CPH_REF_SCALAR;
}

/* Each region starts on a 64-byte boundary (a cache line, a zmm load). */
static size_t round64(size_t n) {
  return (n + 63) / 64 * 64;
}

/* Rows of the parameter planes: whole strips of the widest kernel. */
static size_t plane_rows(size_t r) {
  return (r + WAVE_VMAX - 1) / WAVE_VMAX * WAVE_VMAX;
}

clphmm_status cph_wave_init(cph_wave_work *w, size_t rmax, size_t hmax) {
  memset(w, 0, sizeof *w);
  if (rmax > SIZE_MAX / 1024 || hmax > SIZE_MAX / 1024)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                     "reference: no memory for %zu x %zu pairs", rmax, hmax);
  const size_t P = plane_rows(rmax), hpad = hmax + 2 * WAVE_VMAX;
  const size_t real[2] = {sizeof(float), sizeof(double)};
  size_t size[2][4], total = 0;
  for (int p = 0; p < 2; p++) {
    size[p][0] = round64(WAVE_PLANES * P * real[p]);
    size[p][1] = round64(P * real[p]);
    size[p][2] = round64(hpad * real[p]);
    size[p][3] = round64(3 * hpad * real[p]);
    total += size[p][0] + size[p][1] + size[p][2] + size[p][3];
  }
  const size_t rows = round64(rmax * sizeof(cph_row_d));
  total += rows + (rmax > hmax ? rmax : hmax);
  /* Zeroed: the padding of planes and haplotype masks stays zero. */
  w->mem = aligned_alloc(64, round64(total));
  if (!w->mem)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY,
                     "reference: no memory for %zu x %zu pairs", rmax, hmax);
  memset(w->mem, 0, round64(total));
  unsigned char *at = w->mem;
  for (int p = 0; p < 2; p++) {
    w->par[p] = at;
    w->rmask[p] = at += size[p][0];
    w->hrev[p] = at += size[p][1];
    w->buf[p] = at += size[p][2];
    at += size[p][3];
  }
  w->rows = at;
  w->codes = at + rows;
  w->rmax = rmax;
  w->hmax = hmax;
  w->stride = P;
  return CLPHMM_SUCCESS;
}

void cph_wave_free(cph_wave_work *w) {
  free(w->mem);
  memset(w, 0, sizeof *w);
}

/* A base code as a mask: one bit per base, all four for N, so that two
 * bases match (equal, or N on either side) when their masks share a bit. */
static unsigned base_mask(uint8_t code) {
  return code == CPH_BASE_N ? 15u : 1u << code;
}

/* The model's rows (structures) as planes, row i at index i - 1, zeros
 * after the read up to a whole strip of the widest kernel. */
#define TO_PLANES(T, I, rows, par, mask, codes, P, R)                          \
  do {                                                                         \
    T *p_ = (par);                                                             \
    I *m_ = (mask);                                                            \
    for (size_t i_ = 0; i_ < plane_rows(R); i_++) {                            \
      const int in_ = i_ < (R);                                                \
      p_[WAVE_MM * (P) + i_] = in_ ? (rows)[i_].mm : 0;                        \
      p_[WAVE_GAPM * (P) + i_] = in_ ? (rows)[i_].gapm : 0;                    \
      p_[WAVE_MX * (P) + i_] = in_ ? (rows)[i_].mx : 0;                        \
      p_[WAVE_XX * (P) + i_] = in_ ? (rows)[i_].xx : 0;                        \
      p_[WAVE_MY * (P) + i_] = in_ ? (rows)[i_].my : 0;                        \
      p_[WAVE_YY * (P) + i_] = in_ ? (rows)[i_].yy : 0;                        \
      p_[WAVE_MATCH * (P) + i_] = in_ ? (rows)[i_].match : 0;                  \
      p_[WAVE_MISMATCH * (P) + i_] = in_ ? (rows)[i_].mismatch : 0;            \
      m_[i_] = in_ ? (I)base_mask((codes)[i_]) : 0;                            \
    }                                                                          \
  } while (0)

void cph_wave_read(cph_wave_work *w, const clphmm_read *read,
                   cph_flavor flavor) {
  const size_t R = read->length, P = w->stride;
  const int p = flavor != CPH_GKL_FLOAT;
  cph_encode_bases(read->bases, R, w->codes);
  if (!p) {
    cph_rows_float(read, w->rows);
    TO_PLANES(float, int32_t, (const cph_row_f *)w->rows, w->par[0],
              w->rmask[0], w->codes, P, R);
  } else {
    cph_rows_double(read, flavor, w->rows);
    TO_PLANES(double, int64_t, (const cph_row_d *)w->rows, w->par[1],
              w->rmask[1], w->codes, P, R);
  }
  w->length[p] = R;
  w->flavor[p] = flavor;
}

/* The haplotype's masks reversed, after WAVE_VMAX zeros, with WAVE_VMAX
 * zeros after (what an earlier, longer haplotype left is cleared). */
#define HAP_MASKS(I, hrev, codes, H)                                           \
  do {                                                                         \
    I *h_ = (I *)(hrev) + WAVE_VMAX;                                           \
    for (size_t j_ = 0; j_ < (H); j_++)                                        \
      h_[(H)-1 - j_] = (I)base_mask((codes)[j_]);                              \
    for (size_t j_ = (H); j_ < (H) + WAVE_VMAX; j_++)                          \
      h_[j_] = 0;                                                              \
  } while (0)

#if WAVE_X86
/* The x86 copy of the wave that kernel choice k runs: 2 AVX-512, 1 AVX2,
 * 0 the generic one (the choice is not available here). */
static int wave_x86(cph_ref_kernel k) {
  if (k == CPH_REF_AUTO)
    k = cph_ref_kernel_best();
  if (k == CPH_REF_WAVE_AVX512 && cph_ref_kernel_available(k))
    return 2;
  if (k == CPH_REF_WAVE_AVX2 && cph_ref_kernel_available(k))
    return 1;
  return 0;
}
#endif

float cph_wave_float(cph_wave_work *w, const clphmm_haplotype *hap,
                     cph_ref_kernel k) {
  const size_t H = hap->length;
  cph_encode_bases(hap->bases, H, w->codes);
  HAP_MASKS(int32_t, w->hrev[0], w->codes, H);
  const int32_t *hrev = (const int32_t *)w->hrev[0] + WAVE_VMAX;
  float (*fn)(const float *, size_t, const int32_t *, size_t, const int32_t *,
              size_t, int, float *) = NULL;
#if WAVE_GNU
  fn = wave_f;
#endif
#if WAVE_X86
  const int x = wave_x86(k);
  fn = x == 2 ? wave_f_avx512 : x == 1 ? wave_f_avx2 : fn;
#else
  (void)k;
#endif
  return fn(w->par[0], w->stride, w->rmask[0], w->length[0], hrev, H, 0,
            w->buf[0]);
}

double cph_wave_double(cph_wave_work *w, const clphmm_haplotype *hap,
                       cph_ref_kernel k) {
  const size_t H = hap->length;
  cph_encode_bases(hap->bases, H, w->codes);
  HAP_MASKS(int64_t, w->hrev[1], w->codes, H);
  const int64_t *hrev = (const int64_t *)w->hrev[1] + WAVE_VMAX;
  double (*fn)(const double *, size_t, const int64_t *, size_t, const int64_t *,
               size_t, int, double *) = NULL;
#if WAVE_GNU
  fn = wave_d;
#endif
#if WAVE_X86
  const int x = wave_x86(k);
  fn = x == 2 ? wave_d_avx512 : x == 1 ? wave_d_avx2 : fn;
#else
  (void)k;
#endif
  return fn(w->par[1], w->stride, w->rmask[1], w->length[1], hrev, H,
            w->flavor[1] == CPH_JAVA_DOUBLE, w->buf[1]);
}
