#include "engine/pack.h"

#include "base/error.h"

/* Parts start at the device's base address alignment (and never below 128
 * bytes: the kernels load vectors of up to 64 bytes). */
static size_t part_align(const cph_bufctx *c) {
  const size_t a = c->dev->base_align;
  return a > 128 ? a : 128;
}

static size_t round_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

static void release_parts(cph_pack *p) {
  for (size_t i = 0; i < p->n; i++)
    if (p->part[i])
      cph_cl.ReleaseMemObject(p->part[i]);
  for (size_t i = 0; i < CPH_PACK_MAX_PARTS; i++) {
    p->part[i] = NULL;
    p->off[i] = p->cap[i] = 0;
  }
  p->n = 0;
  cph_devbuf_touch();
}

static int fits(const cph_pack *p, size_t n, const size_t *bytes) {
  if (p->n != n || !p->whole.mem)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (bytes[i] > p->cap[i])
      return 0;
  return 1;
}

/* The parts' capacities and offsets for `bytes`; returns the whole's size. */
static size_t plan(const cph_bufctx *c, const cph_pack *p, size_t n,
                   const size_t *bytes, size_t *cap, size_t *off) {
  const size_t align = part_align(c);
  size_t end = 0;
  for (size_t i = 0; i < n; i++) {
    const size_t want = bytes[i] + bytes[i] / 2;
    cap[i] = round_up(want > p->cap[i] ? want : p->cap[i], align);
    if (cap[i] == 0)
      cap[i] = align;
    off[i] = end;
    end += cap[i];
  }
  return end;
}

int cph_pack_fits(const cph_bufctx *c, const cph_pack *p, size_t n,
                  const size_t *bytes) {
  if (fits(p, n, bytes))
    return 1;
  size_t cap[CPH_PACK_MAX_PARTS], off[CPH_PACK_MAX_PARTS];
  const uint64_t max = c->dev->max_alloc_bytes;
  return !max || plan(c, p, n, bytes, cap, off) <= max;
}

clphmm_status cph_pack_ensure(const cph_bufctx *c, cph_pack *p, size_t n,
                              const size_t *bytes, const char *what) {
  if (fits(p, n, bytes))
    return CLPHMM_SUCCESS;
  size_t cap[CPH_PACK_MAX_PARTS], off[CPH_PACK_MAX_PARTS];
  const size_t end = plan(c, p, n, bytes, cap, off);
  release_parts(p);
  clphmm_status st = cph_devbuf_ensure(c, &p->whole, end, what);
  for (size_t i = 0; i < n && !st; i++) {
    cl_buffer_region r = {off[i], cap[i]};
    cl_int err;
    p->part[i] = cph_cl.CreateSubBuffer(p->whole.mem, CL_MEM_READ_WRITE,
                                        CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    p->n = i + 1;
    if (err != CL_SUCCESS) {
      p->part[i] = NULL;
      st = cph_buf_fail(c, "clCreateSubBuffer", err, what);
    }
    p->off[i] = off[i];
    p->cap[i] = cap[i];
  }
  if (st)
    cph_pack_release(p);
  return st;
}

size_t cph_pack_extent(const cph_pack *p, size_t n, const size_t *bytes) {
  return n ? p->off[n - 1] + bytes[n - 1] : 0;
}

void cph_pack_release(cph_pack *p) {
  release_parts(p);
  cph_devbuf_release(&p->whole);
}
