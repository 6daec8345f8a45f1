/* The on-disk cache of compiled kernel programs (one file per program
 * binary), so that a warm start compiles nothing.
 *
 * An entry is named after a 64-bit hash of its key text and holds a header
 * (magic, format version, key length, payload size, payload checksum), the
 * full key text and the payload. Readers check all of it, so a corrupt,
 * truncated or foreign entry (another key, device or driver that happens to
 * share the file name) is detected, deleted and rebuilt. Writers write a
 * temporary file of their own and rename it into place, so processes that
 * fill the cache at once never see half an entry. Nothing here ever fails
 * a computation: an unusable directory only turns caching off, with a note
 * saying why. */
#ifndef CLPHMM_CACHE_H
#define CLPHMM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "opencl/device.h"

#define CPH_CACHE_PATH_MAX 1024
#define CPH_CACHE_NOTE_MAX (CPH_CACHE_PATH_MAX + 256)

typedef struct cph_cache {
  int readable; /* entries are looked up */
  int writable; /* new entries are written (off after a failed write) */
  char dir[CPH_CACHE_PATH_MAX];
  char note[CPH_CACHE_NOTE_MAX]; /* why caching is (partly) off, or "" */
} cph_cache;

/* Choose and create the directory: `option` when not NULL, else
 * $CLPHMM_CACHE_DIR when set, else $XDG_CACHE_HOME/clphmm, else
 * $HOME/.cache/clphmm. An empty string (option or variable) turns caching
 * off, and so does PoCL running with POCL_KERNEL_CACHE=0 (see cache.c).
 * Never fails; see c->note. */
void cph_cache_open(cph_cache *c, const char *option, const cph_device *dev);

/* The key text of a program: library version, kernel source identity,
 * build options, and the device, vendor, driver and platform versions. */
void cph_cache_key(const cph_device *dev, const char *source_id,
                   const char *options, char *key, size_t n);

/* Path of the entry for `key`. */
void cph_cache_entry_path(const cph_cache *c, const char *key, char *path,
                          size_t n);

typedef enum cph_cache_result {
  CPH_CACHE_MISS = 0,    /* no entry (or caching off) */
  CPH_CACHE_HIT = 1,     /* *data (malloc'd) and *size hold the payload */
  CPH_CACHE_REJECTED = 2 /* a bad entry was deleted; `why` says what */
} cph_cache_result;

cph_cache_result cph_cache_get(const cph_cache *c, const char *key,
                               unsigned char **data, size_t *size, char *why,
                               size_t why_n);

/* Store a payload. 0 on success; -1 with `why` on failure, after which the
 * cache stops writing (c->writable = 0, c->note set). */
int cph_cache_put(cph_cache *c, const char *key, const unsigned char *data,
                  size_t size, char *why, size_t why_n);

/* Delete the entry for `key` (e.g. a binary the driver refused). */
void cph_cache_remove(const cph_cache *c, const char *key);

/* Serialise an entry exactly as the cache stores it (for tests that plant
 * entries). Returns a malloc'd buffer of *n bytes, or NULL. */
unsigned char *cph_cache_encode(const char *key, const unsigned char *data,
                                size_t size, size_t *n);

/* 64-bit FNV-1a, continuing from `h` (start with CPH_HASH64_INIT). */
#define CPH_HASH64_INIT 0xcbf29ce484222325ull
uint64_t cph_hash64(uint64_t h, const void *data, size_t n);

#endif
