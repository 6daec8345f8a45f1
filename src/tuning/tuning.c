#include "tuning/tuning.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/textfile.h"

#define ANY CPH_TUNING_ANY_TYPE
#define DEF CPH_TUNING_DEFAULT

/* Measured on the H200 (bench/sweep.sh, bench/results); see the entry.
 * Reads longer than 768 rows run on 32x16/32:long:r168: tiles one after
 * the other with the boundary row in local memory, registers capped at
 * 168 for 12 warps per multiprocessor (3.15 TCUPS float pass at 1024
 * bases, 2.98 with the boundary row in global memory;
 * bench/results/nvidia-h200-2026-11-21-peak-long.txt). */
#define H200_VARIANTS                                                          \
  "4x8/128,4x16/128,4x24/128,8x16/128,8x20/128,8x24/128,16x16/128,"            \
  "16x20/128,16x24/128,32x16/128,32x20/128,32x24/128,32x16/32:long:r168,"      \
  "32x8/128:small"
/* Double: long reads tile 32x8/128, whose four lane groups run four tiles
 * at once; 32x12/64 holds two (with it: 0.78 instead of 1.03 TCUPS at 1024
 * bases, and a slower float rescue). Reads of 129-160 bases (most of
 * HaplotypeCaller's) run on 16x10/64 rather than in 256-row tiles: the
 * HaplotypeCaller-like mix in double mode took 51.0 ms of kernels instead
 * of 73.5 (1.30 TCUPS in that bin), and float mode's rescue 0.2 ms less
 * (bench/results, env at 88115d9). */
#define H200_DOUBLE_VARIANTS                                                   \
  "4x8/128,8x8/128,16x8/64,16x10/64,32x8/128,32x8/128:small"

/* Built-in defaults, most specific first within each level. Values are
 * lanes x rows per lane / work-group size; reads longer than the last
 * entry's rows tile it. */
static const cph_tuning_entry builtin[] = {
    /* Measured on the H200 (bench/sweep.sh, bench/results): warp shuffles,
     * bins of 32..768 rows. More rows per lane amortise the per-step work
     * until registers spill (C = 32); fewer lanes waste fewer ramp steps;
     * fine bins keep the top padding small (a 96-base read ran at 2.6
     * TCUPS on 4x24, 1.8 on 8x16, with the fused form). Double kernels need
     * twice the registers per row: C = 16 spills, C = 12 is the best
     * long-read tile (0.55 vs 0.46 TCUPS at 2048 bases for C = 8). */
    {.name = "H200",
     .vendor = "NVIDIA",
     .type = CLPHMM_DEVICE_GPU,
     .variants = H200_VARIANTS,
     .variants_double = H200_DOUBLE_VARIANTS,
     .shuffle = CPH_SHUFFLE_NVIDIA,
     .fma = DEF},
    /* Other NVIDIA GPUs: the H200 table until measured (a guess). */
    {.vendor = "NVIDIA",
     .type = CLPHMM_DEVICE_GPU,
     .variants = H200_VARIANTS,
     .variants_double = H200_DOUBLE_VARIANTS,
     .shuffle = CPH_SHUFFLE_NVIDIA,
     .fma = DEF},
    /* AMD GPUs (64-wide wavefronts; guess, not measured): bigger
     * work-groups; the backend follows the vendor (amd). */
    {.vendor = "Advanced Micro Devices",
     .type = CLPHMM_DEVICE_GPU,
     .variants = "4x8/128,8x8/128,8x16/128,16x16/128,32x16/128",
     .shuffle = DEF,
     .fma = DEF},
    /* Intel GPUs (subgroups of 8..32; guess, not measured): lane groups
     * of at most 8 fit any subgroup size. */
    {.vendor = "Intel",
     .type = CLPHMM_DEVICE_GPU,
     .variants = "4x4/64,4x8/64,8x8/64,8x16/64,8x32/64",
     .shuffle = DEF,
     .fma = DEF},
    /* CPUs (PoCL and others): the vector kernel (cl/pairhmm_cpu.cl), 16
     * float or 8 double pairs per work-item (one 64-byte vector), tiles
     * of 16 rows, one work-item per work-group. One variant serves every
     * read length (longer reads run in tiles), so a cold start builds one
     * program per precision. Measured on PoCL 3.1, 2 cores of an AVX-512
     * EPYC (bench/results/cpu-pocl-2026-11-24.txt): the lane-group table
     * it replaced ran at 0.3 GCUPS. */
    {.type = CLPHMM_DEVICE_CPU,
     .variants = "v16x16/1",
     .variants_double = "v8x16/1",
     .shuffle = DEF,
     .fma = DEF},
    /* Anything else. */
    {.type = ANY,
     .variants = "4x4/64,8x4/64,8x8/64,16x8/64,32x8/64",
     .shuffle = DEF,
     .fma = DEF},
};
#define N_BUILTIN (sizeof builtin / sizeof *builtin)

const cph_tuning_entry *cph_tuning_builtin(size_t *n) {
  *n = N_BUILTIN;
  return builtin;
}

#define DEFAULT_WG 64
/* Vector variants: work-items per work-group (PoCL runs each work-group
 * as one task on one core). */
#define DEFAULT_VEC_WG 1

/* A decimal number at p, digits only (strtoul alone skips blanks and takes
 * a sign: "8x4, 16x8" or "+8x4" were read, and written back as entries the
 * parser then refused); *end == p when there is none. */
static unsigned long parse_digits(const char *p, char **end) {
  if (!isdigit((unsigned char)*p)) {
    *end = (char *)p;
    return 0;
  }
  return strtoul(p, end, 10);
}

/* A variant's optional suffixes: ":long" (the long-read variant), ":small"
 * (the small-call variant) and ":rN" (register cap, 32..255). */
static int parse_suffixes(const char **pp, cph_variant *v, char *why,
                          size_t why_n) {
  const char *p = *pp;
  while (*p == ':') {
    char *end;
    const char *at = p;
    int again = 0;
    if (!strncmp(p + 1, "long", 4) && (p[5] == ':' || p[5] == ',' || !p[5])) {
      again = v->seq;
      v->seq = 1;
      p += 5;
    } else if (!strncmp(p + 1, "small", 5) &&
               (p[6] == ':' || p[6] == ',' || !p[6])) {
      again = v->small;
      v->small = 1;
      p += 6;
    } else if (p[1] == 'r' && isdigit((unsigned char)p[2])) {
      again = v->maxreg != 0;
      unsigned long r = strtoul(p + 2, &end, 10);
      if (r < 32 || r > 255) {
        snprintf(why, why_n, "register caps (:rN) must be 32..255");
        return 0;
      }
      v->maxreg = (unsigned)r;
      p = end;
    } else {
      snprintf(why, why_n, "unknown suffix '%.12s' (known: :long, :small, :rN)",
               p);
      return 0;
    }
    if (again) {
      snprintf(why, why_n, "suffix '%.*s' given twice", (int)(p - at), at);
      return 0;
    }
  }
  *pp = p;
  return 1;
}

int cph_variants_parse(const char *spec, cph_variant_set *set, char *why,
                       size_t why_n) {
  set->n = 0;
  set->has_small = 0; /* (set apart by the planner, plan.c) */
  const char *p = spec;
  while (*p) {
    char *end;
    const int vec = *p == 'v';
    p += vec;
    unsigned long g = parse_digits(p, &end), c = 0,
                  wg = vec ? DEFAULT_VEC_WG : DEFAULT_WG;
    if (end == p || *end != 'x')
      goto bad;
    p = end + 1;
    c = parse_digits(p, &end);
    if (end == p)
      goto bad;
    p = end;
    if (*p == '/') {
      wg = parse_digits(p + 1, &end);
      if (end == p + 1)
        goto bad;
      p = end;
    }
    if (vec) {
      if (g != 1 && g != 2 && g != 4 && g != 8 && g != 16) {
        snprintf(why, why_n,
                 "pairs per work-item (vPxC) must be 1, 2, 4, 8 "
                 "or 16");
        return 0;
      }
      if (c < 1 || c > 64 || wg < 1 || wg > 1024) {
        snprintf(why, why_n,
                 "rows per tile (vPxC) must be 1..64 and the "
                 "work-group size 1..1024");
        return 0;
      }
    } else if (g < 1 || g > 64 || c < 1 || c > 64) {
      snprintf(why, why_n, "lanes and rows per lane must be 1..64");
      return 0;
    } else if (wg < g || wg % g || wg > 1024) {
      snprintf(why, why_n,
               "the work-group size must be a multiple of the lanes, at most "
               "1024");
      return 0;
    }
    if (set->n == CPH_MAX_VARIANTS) {
      snprintf(why, why_n, "more than %d variants", CPH_MAX_VARIANTS);
      return 0;
    }
    cph_variant v = {
        .g = (unsigned)g, .c = (unsigned)c, .wg = (unsigned)wg, .vec = vec};
    if (!parse_suffixes(&p, &v, why, why_n))
      return 0;
    if (v.seq && v.small) {
      snprintf(why, why_n, "a variant cannot be both :long and :small");
      return 0;
    }
    if (vec && (v.seq || v.small || v.maxreg)) {
      snprintf(why, why_n,
               "vector variants (vPxC) take no :long, :small or :rN suffix");
      return 0;
    }
    for (size_t i = 0; i < set->n; i++)
      if ((v.seq && set->v[i].seq) || (v.small && set->v[i].small)) {
        snprintf(why, why_n, "more than one :%s variant",
                 v.seq ? "long" : "small");
        return 0;
      }
    set->v[set->n++] = v;
    if (*p == ',' && p[1])
      p++;
    else if (*p)
      goto bad;
  }
  if (set->n > 0)
    return 1;
bad:
  snprintf(why, why_n,
           "not a list like 8x4,16x8/64,32x16/32:long:r168,32x8/128:small "
           "(lanes x rows per lane [/ work-group size] [:long] [:small] [:r "
           "register cap]) or v16x16/1 (vector kernel: pairs per work-item x "
           "rows per tile [/ work-group size])");
  return 0;
}

void cph_tuning_file_path(char *buf, size_t n) {
  const char *f = getenv("CLPHMM_TUNING_FILE");
  const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
  if (f && *f)
    snprintf(buf, n, "%s", f);
  else if (xdg && *xdg)
    snprintf(buf, n, "%s/clphmm/tuning.txt", xdg);
  else if (home && *home)
    snprintf(buf, n, "%s/.config/clphmm/tuning.txt", home);
  else
    buf[0] = '\0';
}

/* ---- Parsing ------------------------------------------------------------ */

typedef struct parser {
  const char *file;
  unsigned line;
} parser;

static clphmm_status bad_line(const parser *ps, const char *what,
                              const char *detail) {
  return cph_error(CLPHMM_ERROR_PARSE, "%s:%u: %s%s%s", ps->file, ps->line,
                   what, detail ? ": " : "", detail ? detail : "");
}

static int parse_type(const char *v) {
  if (!strcmp(v, "gpu"))
    return CLPHMM_DEVICE_GPU;
  if (!strcmp(v, "cpu"))
    return CLPHMM_DEVICE_CPU;
  if (!strcmp(v, "accelerator"))
    return CLPHMM_DEVICE_ACCELERATOR;
  if (!strcmp(v, "any"))
    return ANY;
  return -2;
}

static const char *type_name(int t) {
  switch (t) {
  case CLPHMM_DEVICE_GPU: return "gpu";
  case CLPHMM_DEVICE_CPU: return "cpu";
  case CLPHMM_DEVICE_ACCELERATOR: return "accelerator";
  case CLPHMM_DEVICE_OTHER: return "other";
  }
  return "any";
}

static clphmm_status copy_field(const parser *ps, char *dst, size_t n,
                                const char *key, const char *v) {
  /* (An empty name, arch or vendor would match every device.) */
  if (!*v)
    return bad_line(ps, "empty value for field", key);
  if (strlen(v) >= n)
    return bad_line(ps, "value too long for field", key);
  memcpy(dst, v, strlen(v) + 1);
  return CLPHMM_SUCCESS;
}

/* Set one key=value on an entry. The field table of the format. */
static clphmm_status set_field(const parser *ps, cph_tuning_entry *e,
                               const char *key, const char *v) {
  if (!strcmp(key, "name"))
    return copy_field(ps, e->name, sizeof e->name, key, v);
  if (!strcmp(key, "arch"))
    return copy_field(ps, e->arch, sizeof e->arch, key, v);
  if (!strcmp(key, "vendor"))
    return copy_field(ps, e->vendor, sizeof e->vendor, key, v);
  if (!strcmp(key, "type")) {
    e->type = parse_type(v);
    return e->type == -2 ? bad_line(ps,
                                    "type must be gpu, cpu, "
                                    "accelerator or any",
                                    v)
                         : CLPHMM_SUCCESS;
  }
  if (!strcmp(key, "variants") || !strcmp(key, "double_variants")) {
    cph_variant_set set;
    char why[160];
    if (!cph_variants_parse(v, &set, why, sizeof why)) {
      char msg[256];
      snprintf(msg, sizeof msg, "bad %.20s '%.60s'", key, v);
      return bad_line(ps, msg, why);
    }
    return key[0] == 'v'
               ? copy_field(ps, e->variants, sizeof e->variants, key, v)
               : copy_field(ps, e->variants_double, sizeof e->variants_double,
                            key, v);
  }
  if (!strcmp(key, "shuffle")) {
    e->shuffle = cph_shuffle_parse(v);
    return e->shuffle < 0 ? bad_line(ps,
                                     "shuffle must be local, khr, "
                                     "khr-abs, intel, nvidia or amd",
                                     v)
                          : CLPHMM_SUCCESS;
  }
  if (!strcmp(key, "fma")) {
    if (strcmp(v, "0") && strcmp(v, "1"))
      return bad_line(ps, "fma must be 0 or 1", v);
    e->fma = v[0] == '1';
    return CLPHMM_SUCCESS;
  }
  return bad_line(ps,
                  "unknown field (known: name, arch, vendor, type, "
                  "variants, double_variants, shuffle, fma)",
                  key);
}

/* Split the next key=value token off *p (the value may be "quoted").
 * Writes NUL terminators into the line buffer. */
static clphmm_status next_token(const parser *ps, char **p, char **key,
                                char **val) {
  char *s = *p;
  *key = s;
  while (*s && *s != '=' && !isspace((unsigned char)*s))
    s++;
  if (*s != '=' || s == *key)
    return bad_line(ps, "expected key=value", NULL);
  *s++ = '\0';
  if (*s == '"') {
    *val = ++s;
    while (*s && *s != '"')
      s++;
    if (*s != '"')
      return bad_line(ps, "unterminated quote", NULL);
    *s++ = '\0';
    if (*s && !isspace((unsigned char)*s))
      return bad_line(ps, "expected a space after the quoted value", NULL);
  } else {
    *val = s;
    while (*s && !isspace((unsigned char)*s))
      s++;
  }
  if (*s)
    *s++ = '\0';
  while (isspace((unsigned char)*s))
    s++;
  *p = s;
  return CLPHMM_SUCCESS;
}

static clphmm_status parse_line(const parser *ps, char *s,
                                cph_tuning_entry *e) {
  memset(e, 0, sizeof *e);
  e->type = ANY;
  e->shuffle = DEF;
  e->fma = DEF;
  e->line = ps->line;
  unsigned seen = 0;
  static const char *const keys[] = {"name",    "arch",     "vendor",
                                     "type",    "variants", "double_variants",
                                     "shuffle", "fma"};
  while (*s && *s != '#') {
    char *key = NULL, *val = NULL;
    clphmm_status st = next_token(ps, &s, &key, &val);
    if (!st)
      st = set_field(ps, e, key, val);
    if (st)
      return st;
    for (unsigned k = 0; k < sizeof keys / sizeof *keys; k++)
      if (!strcmp(key, keys[k])) {
        if (seen & (1u << k))
          return bad_line(ps, "field given twice", key);
        seen |= 1u << k;
      }
  }
  if (!e->variants[0])
    return bad_line(ps, "no variants=... field", NULL);
  return CLPHMM_SUCCESS;
}

static clphmm_status append(cph_tuning_table *t, const cph_tuning_entry *e) {
  cph_tuning_entry *n = realloc(t->e, (t->n + 1) * sizeof *n);
  if (!n)
    return cph_error(CLPHMM_ERROR_OUT_OF_MEMORY, "no memory for the tuning "
                                                 "table");
  t->e = n;
  t->e[t->n++] = *e;
  return CLPHMM_SUCCESS;
}

clphmm_status cph_tuning_parse(const char *text, const char *file,
                               cph_tuning_table *table) {
  table->e = NULL;
  table->n = 0;
  parser ps = {file, 0};
  clphmm_status st = CLPHMM_SUCCESS;
  for (const char *p = text; *p && !st;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    ps.line++;
    char buf[2048];
    if (len >= sizeof buf) {
      st = bad_line(&ps, "line too long", NULL);
      break;
    }
    memcpy(buf, p, len);
    buf[len] = '\0';
    char *s = buf;
    while (isspace((unsigned char)*s))
      s++;
    if (*s && *s != '#') {
      cph_tuning_entry e;
      st = parse_line(&ps, s, &e);
      if (!st)
        st = append(table, &e);
    }
    p = eol ? eol + 1 : p + len;
  }
  if (st)
    cph_tuning_free(table);
  return st;
}

clphmm_status cph_tuning_load(const char *path, cph_tuning_table *table) {
  table->e = NULL;
  table->n = 0;
  if (!path || !*path)
    return CLPHMM_SUCCESS;
  FILE *f = fopen(path, "rb");
  if (!f) {
    if (errno == ENOENT)
      return CLPHMM_SUCCESS;
    return cph_error(CLPHMM_ERROR_IO, "%s: cannot open the tuning file: %s",
                     path, strerror(errno));
  }
  char *text;
  size_t n;
  int err = cph_read_stream(f, (size_t)16 << 20, &text, &n);
  fclose(f);
  if (err)
    return cph_error(CLPHMM_ERROR_IO, "%s: cannot read the tuning file%s", path,
                     err == EIO ? "" : " (too big or no memory)");
  if (memchr(text, '\0', n)) {
    free(text);
    return cph_error(CLPHMM_ERROR_PARSE, "%s: not a text file", path);
  }
  clphmm_status st = cph_tuning_parse(text, path, table);
  free(text);
  return st;
}

void cph_tuning_free(cph_tuning_table *table) {
  free(table->e);
  table->e = NULL;
  table->n = 0;
}

/* ---- Lookup ------------------------------------------------------------- */

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++)
    if (strncasecmp(hay, needle, n) == 0)
      return 1;
  return n == 0;
}

int cph_tuning_match(const cph_tuning_entry *e, const cph_tuning_device *d) {
  int level = CPH_MATCH_GENERIC;
  if (e->type != ANY) {
    if ((int)d->type != e->type)
      return -1;
    level = CPH_MATCH_TYPE;
  }
  if (e->vendor[0]) {
    if (!contains_nocase(d->vendor, e->vendor))
      return -1;
    level = CPH_MATCH_VENDOR;
  }
  if (e->arch[0]) {
    if (strcasecmp(d->arch, e->arch) != 0)
      return -1;
    level = CPH_MATCH_ARCH;
  }
  if (e->name[0]) {
    if (!contains_nocase(d->name, e->name))
      return -1;
    level = CPH_MATCH_NAME;
  }
  return level;
}

/* The first entry of the most specific level that matches, or NULL. */
static const cph_tuning_entry *best(const cph_tuning_entry *e, size_t n,
                                    const cph_tuning_device *d) {
  const cph_tuning_entry *b = NULL;
  int bl = -1;
  for (size_t i = 0; i < n; i++) {
    int l = cph_tuning_match(&e[i], d);
    if (l > bl) {
      bl = l;
      b = &e[i];
    }
  }
  return b;
}

void cph_tuning_key(const cph_tuning_entry *e, char *buf, size_t n) {
  size_t u = 0;
  buf[0] = '\0';
#define KEY_PART(...)                                                          \
  do {                                                                         \
    int w_ = snprintf(buf + u, n - u, "%s", u ? ", " : "");                    \
    if (w_ > 0 && (size_t)w_ < n - u)                                          \
      u += (size_t)w_;                                                         \
    w_ = snprintf(buf + u, n - u, __VA_ARGS__);                                \
    if (w_ > 0 && (size_t)w_ < n - u)                                          \
      u += (size_t)w_;                                                         \
  } while (0)
  if (e->name[0])
    KEY_PART("name \"%s\"", e->name);
  if (e->arch[0])
    KEY_PART("arch %s", e->arch);
  if (e->vendor[0])
    KEY_PART("vendor \"%s\"", e->vendor);
  if (e->type != ANY)
    KEY_PART("type %s", type_name(e->type));
  if (!u)
    KEY_PART("generic");
#undef KEY_PART
}

/* Whether the space-separated extension list names `ext` exactly. */
static int has_ext(const char *list, const char *ext) {
  const size_t n = strlen(ext);
  if (!list)
    return 0;
  for (const char *p = list; (p = strstr(p, ext)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
      return 1;
  return 0;
}

/* The shuffle backend for a device: the vendor's own on NVIDIA and AMD
 * GPUs, else the portable subgroup extensions on GPUs, else local memory.
 * CPUs (PoCL) use local memory: their subgroups need not keep a lane group
 * together, and the lane-group kernel is not their fast path anyway. */
static int default_shuffle(const cph_tuning_device *d) {
  if (d->type != CLPHMM_DEVICE_GPU)
    return CPH_SHUFFLE_LOCAL;
  if (contains_nocase(d->vendor, "NVIDIA"))
    return CPH_SHUFFLE_NVIDIA;
  if (contains_nocase(d->vendor, "Advanced Micro Devices") ||
      contains_nocase(d->vendor, "AMD"))
    return CPH_SHUFFLE_AMD;
  if (has_ext(d->extensions, "cl_khr_subgroup_shuffle_relative"))
    return CPH_SHUFFLE_KHR;
  if (has_ext(d->extensions, "cl_intel_subgroups"))
    return CPH_SHUFFLE_INTEL;
  if (has_ext(d->extensions, "cl_khr_subgroup_shuffle"))
    return CPH_SHUFFLE_KHR_ABS;
  return CPH_SHUFFLE_LOCAL;
}

/* A variant list from environment variable `name` into `dst` (the
 * entry's variants or variants_double); errors name the variable. */
static clphmm_status env_variants(cph_tuning_choice *c, const char *name,
                                  int dbl) {
  char *dst = dbl ? c->entry.variants_double : c->entry.variants;
  const char *v = getenv(name);
  if (!v || !*v)
    return CLPHMM_SUCCESS;
  cph_variant_set set;
  char why[160];
  const int too_long = strlen(v) >= CPH_VARIANT_TEXT;
  if (too_long || !cph_variants_parse(v, &set, why, sizeof why))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "%s='%s': %s", name, v,
                     too_long ? "too long" : why);
  snprintf(dst, CPH_VARIANT_TEXT, "%s", v);
  if (dbl) {
    c->source_double = "env";
    snprintf(c->key_double, sizeof c->key_double, "%s", name);
  } else {
    c->source = "env";
    snprintf(c->key, sizeof c->key, "%s", name);
  }
  return CLPHMM_SUCCESS;
}

/* Environment overrides; errors name the variable. */
static clphmm_status apply_env(cph_tuning_choice *c) {
  const char *sh = getenv("CLPHMM_SHUFFLE");
  if (sh && *sh) {
    c->entry.shuffle = cph_shuffle_parse(sh);
    if (c->entry.shuffle < 0)
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "CLPHMM_SHUFFLE='%s' is not one of local, khr, "
                       "khr-abs, intel, nvidia, amd",
                       sh);
  }
  const char *fma = getenv("CLPHMM_FMA");
  if (fma && *fma)
    c->entry.fma = strcmp(fma, "0") != 0;
  clphmm_status st = env_variants(c, "CLPHMM_VARIANTS", 0);
  if (!st)
    st = env_variants(c, "CLPHMM_DOUBLE_VARIANTS", 1);
  return st;
}

clphmm_status cph_tuning_choose(const cph_tuning_device *d,
                                const cph_tuning_table *file,
                                const char *file_name, cph_tuning_choice *c) {
  memset(c, 0, sizeof *c);
  snprintf(c->file, sizeof c->file, "%s", file_name ? file_name : "");
  const cph_tuning_entry *e = file ? best(file->e, file->n, d) : NULL;
  c->source = e ? "file" : "builtin";
  if (!e)
    e = best(builtin, N_BUILTIN, d); /* the last entry matches anything */
  c->entry = *e;
  char key[256];
  cph_tuning_key(e, key, sizeof key);
  if (e->line)
    snprintf(c->key, sizeof c->key, "%s (line %u)", key, e->line);
  else
    snprintf(c->key, sizeof c->key, "%s", key);
  c->source_double = c->source;
  snprintf(c->key_double, sizeof c->key_double, "%s", c->key);
  /* Defaults for what the entry leaves open. */
  if (c->entry.shuffle == DEF)
    c->entry.shuffle = default_shuffle(d);
  if (c->entry.fma == DEF) /* GPUs fuse; CPUs keep the exact order */
    c->entry.fma = d->type == CLPHMM_DEVICE_GPU;
  return apply_env(c);
}

clphmm_status cph_tuning_for_device(const cph_device *dev,
                                    cph_tuning_choice *c) {
  char path[1024];
  cph_tuning_file_path(path, sizeof path);
  cph_tuning_table file;
  clphmm_status st = cph_tuning_load(path, &file);
  if (st)
    return st;
  const cph_tuning_device d = {dev->info.name, dev->info.vendor, dev->arch,
                               dev->info.type, dev->extensions};
  st = cph_tuning_choose(&d, &file, path, c);
  cph_tuning_free(&file);
  return st;
}
