/* Small chunks in fewer commands. NVIDIA's driver spends about 10 us of
 * host time on each command it is given, and the chunk of one
 * HaplotypeCaller region has five small uploads and two downloads. Below
 * a size (cph_engine.pack_bytes), the chunk's inputs go to the device as
 * one copy from a host staging area into one device buffer, and its
 * outputs come back as one copy: the kernels see each input and output
 * through a sub-buffer at its own aligned offset of that buffer. The parts
 * are carved once, and carved again only when one of them outgrows its
 * share (each is given half again what it needed, and the whole buffer
 * grows as every buffer of the engine does, so that carving again rarely
 * needs a new one) or when the parts have stayed much larger than the
 * chunks' for several chunks in a row: the one copy moves the whole span up to
 * the last part's bytes, shares of the parts before it included, so shares
 * carved for one large chunk made every later small one pay for them (one
 * HaplotypeCaller region's copy moved 947 KB for about 30 KB of inputs, 21 us
 * of the H200's copy engine, on the call's critical path). */
#ifndef CLPHMM_PACK_H
#define CLPHMM_PACK_H

#include <stddef.h>

#include "engine/buffers.h"

#define CPH_PACK_MAX_PARTS 5
/* The default size below which chunks are packed (a region of 300 pairs
 * needs about 60 KB), and the largest that may be asked for: beyond it
 * the copy into the staging area costs more than the commands it saves. */
#define CPH_PACK_DEFAULT_BYTES ((size_t)1 << 20)
#define CPH_PACK_MAX_BYTES ((size_t)1 << 26)

typedef struct cph_pack {
  cph_devbuf whole;
  size_t n; /* parts carved (0: none yet) */
  cl_mem part[CPH_PACK_MAX_PARTS];
  size_t off[CPH_PACK_MAX_PARTS], cap[CPH_PACK_MAX_PARTS];
  unsigned loose_runs; /* chunks in a row that the parts fitted loosely */
} cph_pack;

/* Make the `n` parts of `p` hold at least bytes[i] each (`what` names the
 * buffer in errors). Carving again releases the old parts (kernels whose
 * arguments named them see a new buffer generation). */
clphmm_status cph_pack_ensure(const cph_bufctx *c, cph_pack *p, size_t n,
                              const size_t *bytes, const char *what);

/* Whether the parts for `bytes` fit in the device's largest buffer (a
 * chunk that does not fit goes without the packs). */
int cph_pack_fits(const cph_bufctx *c, const cph_pack *p, size_t n,
                  const size_t *bytes);

/* Bytes from the start of the whole to the end of the last part of the
 * first n with bytes (parts after it have none): what one copy moves. */
size_t cph_pack_extent(const cph_pack *p, size_t n, const size_t *bytes);

void cph_pack_release(cph_pack *p);

#endif
