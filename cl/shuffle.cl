/* One primitive, many backends: pass a lane's (M, X, T) of its last row and
 * its haplotype symbol to the next lane of its lane group ("shuffle up by
 * one"). Lane 0 of a group receives garbage and must override it. Chosen by
 * CPH_SHUFFLE:
 *   0  local memory with barriers (any device, PoCL 3 included)
 *   1  cl_khr_subgroup_shuffle_relative: sub_group_shuffle_up
 *   5  cl_khr_subgroup_shuffle: sub_group_shuffle(v, id - 1), for drivers
 *      that have only the absolute shuffle (PoCL 5)
 *   2  cl_intel_subgroups: intel_sub_group_shuffle_up
 *   3  NVIDIA inline PTX: shfl.sync.up.b32
 *   4  AMD: __builtin_amdgcn_ds_bpermute (wavefront-wide permute)
 * The subgroup backends need each lane group inside one subgroup and
 * uniform control flow around the call (the kernels guarantee both). */

#ifndef CPH_SHUFFLE
#define CPH_SHUFFLE 0
#endif

/* A second primitive: CPH_ALL(p, out) sets out to whether p holds on every
 * lane of the caller's lane group (or of a wider set holding it: its
 * subgroup), under the shuffle's rules (uniform control flow); backends
 * without one have CPH_HAS_ALL 0. */

#if CPH_SHUFFLE == 0

/* Exchange arrays live at kernel scope (OpenCL C 1.2 rule). */
#define CPH_SHUFFLE_DECL                                                       \
  __local real cph_xch[3][CPH_WG];                                             \
  __local uint cph_xsym[CPH_WG];                                               \
  __local uint cph_xall[CPH_WG];
#define CPH_HAS_ALL 1
#define CPH_ALL(p, out)                                                        \
  do {                                                                         \
    const uint cph_l = get_local_id(0), cph_g0 = cph_l / CPH_G * CPH_G;        \
    cph_xall[cph_l] = (p) ? 1u : 0u;                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                              \
    uint cph_a = 1u;                                                           \
    for (uint cph_k = 0; cph_k < CPH_G; cph_k++)                               \
      cph_a &= cph_xall[cph_g0 + cph_k];                                       \
    barrier(CLK_LOCAL_MEM_FENCE);                                              \
    (out) = (int)cph_a;                                                        \
  } while (0)
#define CPH_SHUFFLE_UP4(a, b, c, d, oa, ob, oc, od)                            \
  do {                                                                         \
    const uint cph_l = get_local_id(0);                                        \
    cph_xch[0][cph_l] = (a);                                                   \
    cph_xch[1][cph_l] = (b);                                                   \
    cph_xch[2][cph_l] = (c);                                                   \
    cph_xsym[cph_l] = (d);                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                              \
    const uint cph_s = cph_l > 0 ? cph_l - 1 : 0;                              \
    (oa) = cph_xch[0][cph_s];                                                  \
    (ob) = cph_xch[1][cph_s];                                                  \
    (oc) = cph_xch[2][cph_s];                                                  \
    (od) = cph_xsym[cph_s];                                                    \
    barrier(CLK_LOCAL_MEM_FENCE);                                              \
  } while (0)

#else

#define CPH_SHUFFLE_DECL
#define CPH_SHUFFLE_UP4(a, b, c, d, oa, ob, oc, od)                            \
  do {                                                                         \
    (oa) = cph_shfl_up(a);                                                     \
    (ob) = cph_shfl_up(b);                                                     \
    (oc) = cph_shfl_up(c);                                                     \
    (od) = cph_shfl_up_u32(d);                                                 \
  } while (0)

/* Each backend defines cph_shfl_up_u32; reals go through it as bits. */
#if CPH_SHUFFLE == 1 || CPH_SHUFFLE == 5
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define CPH_HAS_ALL 1
#define CPH_ALL(p, out) ((out) = sub_group_all((p) ? 1 : 0))
#endif

#if CPH_SHUFFLE == 1
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle_relative : enable
inline uint cph_shfl_up_u32(uint v) { return sub_group_shuffle_up(v, 1u); }

#elif CPH_SHUFFLE == 5
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle : enable
inline uint cph_shfl_up_u32(uint v) {
  const uint id = get_sub_group_local_id();
  return sub_group_shuffle(v, id > 0 ? id - 1 : 0);
}

#elif CPH_SHUFFLE == 2
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
/* The int overload: PoCL 5.0's kernel library lacks the uint one. */
inline uint cph_shfl_up_u32(uint v) {
  return (uint)intel_sub_group_shuffle_up((int)v, (int)v, 1u);
}

#elif CPH_SHUFFLE == 3
inline uint cph_shfl_up_u32(uint v) {
  uint r;
  asm volatile("shfl.sync.up.b32 %0, %1, 1, 0x0, 0xffffffff;"
               : "=r"(r)
               : "r"(v));
  return r;
}
#define CPH_HAS_ALL 1
inline int cph_all_warp(uint p) {
  uint r;
  asm volatile("{ .reg .pred a, b; setp.ne.u32 a, %1, 0; "
               "vote.sync.all.pred b, a, 0xffffffff; selp.u32 %0, 1, 0, b; }"
               : "=r"(r)
               : "r"(p));
  return (int)r;
}
#define CPH_ALL(p, out) ((out) = cph_all_warp((p) ? 1u : 0u))

#elif CPH_SHUFFLE == 4
/* ds_bpermute reads the value of the lane at byte address 4 * source; the
 * work-group is laid out over whole wavefronts, so the source is lid - 1. */
inline uint cph_shfl_up_u32(uint v) {
  const int src = (int)get_local_id(0) - 1;
  return (uint)__builtin_amdgcn_ds_bpermute(src > 0 ? src << 2 : 0, (int)v);
}

#else
#error "unknown CPH_SHUFFLE backend"
#endif

#ifndef CPH_HAS_ALL
#define CPH_HAS_ALL 0
#endif

#if CPH_DOUBLE
inline real cph_shfl_up(real v) {
  const uint2 u = as_uint2(v);
  return as_double((uint2)(cph_shfl_up_u32(u.x), cph_shfl_up_u32(u.y)));
}
#else
inline real cph_shfl_up(real v) { return as_float(cph_shfl_up_u32(as_uint(v))); }
#endif
#endif
