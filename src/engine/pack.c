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

/* Parts are carved anew, to the chunk's sizes, after LOOSE_RUNS chunks in
 * a row whose one copy moved more than LOOSE_FACTOR times their bytes and
 * LOOSE_SLACK more (about 1.5 us of an H200's copy): rarely enough that
 * chunks of varying sizes (regions of 70 to 600 pairs) do not carve again
 * each time, and never for calls whose packed main chunk and smaller
 * packed rescue chunk take turns (carving again costs each its own: 10s.in
 * per call took 322 us instead of 249 on an H200). */
#define LOOSE_FACTOR 4
#define LOOSE_SLACK ((size_t)64 << 10)
#define LOOSE_RUNS 8

static int loose(const cph_pack *p, size_t n, const size_t *bytes) {
  size_t data = 0;
  for (size_t i = 0; i < n; i++)
    data += bytes[i];
  return cph_pack_extent(p, n, bytes) > LOOSE_FACTOR * data + LOOSE_SLACK;
}

/* The parts' capacities and offsets for `bytes` (each at least its old
 * capacity unless `shrink`); returns the whole's size. */
static size_t plan(const cph_bufctx *c, const cph_pack *p, size_t n,
                   const size_t *bytes, int shrink, size_t *cap, size_t *off) {
  const size_t align = part_align(c);
  size_t end = 0;
  for (size_t i = 0; i < n; i++) {
    const size_t want = bytes[i] + bytes[i] / 2, had = shrink ? 0 : p->cap[i];
    cap[i] = round_up(want > had ? want : had, align);
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
  return !max || plan(c, p, n, bytes, 0, cap, off) <= max;
}

clphmm_status cph_pack_ensure(const cph_bufctx *c, cph_pack *p, size_t n,
                              const size_t *bytes, const char *what) {
  const int fit = fits(p, n, bytes);
  p->loose_runs = fit && loose(p, n, bytes) ? p->loose_runs + 1 : 0;
  const int shrink = p->loose_runs >= LOOSE_RUNS;
  if (fit && !shrink)
    return CLPHMM_SUCCESS;
  p->loose_runs = 0;
  size_t cap[CPH_PACK_MAX_PARTS], off[CPH_PACK_MAX_PARTS];
  const size_t end = plan(c, p, n, bytes, shrink, cap, off);
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
  while (n && !bytes[n - 1])
    n--;
  return n ? p->off[n - 1] + bytes[n - 1] : 0;
}

void cph_pack_release(cph_pack *p) {
  release_parts(p);
  cph_devbuf_release(&p->whole);
}
