/* The variant table: which kernel variants (and shuffle backend, FMA) a
 * device uses. A small database of entries keyed by device name,
 * architecture, vendor and device type, looked up from the most specific
 * key to the least (name > architecture > vendor > type > generic), in two
 * layers: the override file that `clphmm-bench --tune` writes, then the
 * built-in defaults. CLPHMM_VARIANTS, CLPHMM_SHUFFLE and CLPHMM_FMA override
 * both. The file format is documented in README.md ("Variant tables"). */
#ifndef CLPHMM_TUNING_H
#define CLPHMM_TUNING_H

#include "tuning/plan.h"

/* What a lookup sees of a device (no OpenCL needed, so tests can fake it). */
#define CPH_VARIANT_TEXT 512 /* longest variant list, NUL included */

typedef struct cph_tuning_device {
  const char *name;
  const char *vendor;
  const char *arch; /* "sm_90", "gfx90a", or "" when unknown */
  clphmm_device_type type;
  const char *extensions; /* OpenCL extension list (NULL: none known) */
} cph_tuning_device;

#define CPH_TUNING_ANY_TYPE (-1)
#define CPH_TUNING_DEFAULT (-1)

/* One entry: the match (empty strings and CPH_TUNING_ANY_TYPE match
 * anything) and what it sets (CPH_TUNING_DEFAULT: the device's default).
 * New fields go here and in the field table of tuning.c. */
typedef struct cph_tuning_entry {
  char name[128];   /* case-insensitive substring of the device name */
  char arch[64];    /* architecture, case-insensitive, whole string */
  char vendor[128]; /* case-insensitive substring of the vendor string */
  int type;         /* clphmm_device_type or CPH_TUNING_ANY_TYPE */
  char variants[CPH_VARIANT_TEXT];        /* "GxC/WG,..." (always set) */
  char variants_double[CPH_VARIANT_TEXT]; /* for double kernels ("": see
                                             plan.h) */
  int shuffle;   /* cph_shuffle or CPH_TUNING_DEFAULT */
  int fma;       /* 0, 1 or CPH_TUNING_DEFAULT */
  unsigned line; /* line in the override file (0: built in) */
} cph_tuning_entry;

/* Entries of an override file, in file order. */
typedef struct cph_tuning_table {
  cph_tuning_entry *e;
  size_t n;
} cph_tuning_table;

/* Match levels, most specific last; -1 = no match. */
enum {
  CPH_MATCH_GENERIC,
  CPH_MATCH_TYPE,
  CPH_MATCH_VENDOR,
  CPH_MATCH_ARCH,
  CPH_MATCH_NAME
};

/* What was chosen for a device, and why. */
typedef struct cph_tuning_choice {
  cph_tuning_entry entry; /* shuffle and fma resolved (never DEFAULT) */
  const char *source;     /* "builtin", "file" or "env" */
  char key[384];          /* the matching entry's key, e.g. name "H200" */
  /* Where the double list came from (source and key unless
   * CLPHMM_DOUBLE_VARIANTS set it): errors name the list's own origin. */
  const char *source_double;
  char key_double[384];
  char file[1024]; /* the override file consulted, "" if none */
} cph_tuning_choice;

/* Parse a variant list "GxC[/WG][:long][:rN],..." into `set` (unsorted):
 * ":long" marks the variant for reads longer than every other variant's
 * tile (at most one), ":rN" caps its registers at N (NVIDIA). "vPxC[/WG]"
 * is a vector variant (the CPU kernel, cl/pairhmm_cpu.cl): P pairs per
 * work-item (1, 2, 4, 8, 16), C rows per tile, WG work-items per
 * work-group (default 1). On failure
 * returns 0 and says why in `why`. */
int cph_variants_parse(const char *spec, cph_variant_set *set, char *why,
                       size_t why_n);

/* The override file's path: $CLPHMM_TUNING_FILE, else
 * $XDG_CONFIG_HOME/clphmm/tuning.txt, else ~/.config/clphmm/tuning.txt;
 * "" when none can be named. */
void cph_tuning_file_path(char *buf, size_t n);

/* Parse override-file text; errors read "FILE:LINE: what". */
clphmm_status cph_tuning_parse(const char *text, const char *file,
                               cph_tuning_table *table);
/* Load a file; a missing file is an empty table, not an error. */
clphmm_status cph_tuning_load(const char *path, cph_tuning_table *table);
void cph_tuning_free(cph_tuning_table *table);

/* Level at which `e` matches `d`, or -1. */
int cph_tuning_match(const cph_tuning_entry *e, const cph_tuning_device *d);

/* The entry for a device: the most specific match of `file` (may be NULL;
 * read from `file_name`), else of the built-in table, then the environment
 * overrides. */
clphmm_status cph_tuning_choose(const cph_tuning_device *d,
                                const cph_tuning_table *file,
                                const char *file_name,
                                cph_tuning_choice *choice);

/* The choice for an opened device: loads the override file (see
 * cph_tuning_file_path), then cph_tuning_choose. */
clphmm_status cph_tuning_for_device(const cph_device *dev,
                                    cph_tuning_choice *choice);

/* The built-in entries (for tools that build every variant the library
 * can ask for, e.g. the offline kernel compile of scripts/). */
const cph_tuning_entry *cph_tuning_builtin(size_t *n);

/* Describe an entry's key ("name \"H200\", type gpu"; "generic"). */
void cph_tuning_key(const cph_tuning_entry *e, char *buf, size_t n);

#endif
