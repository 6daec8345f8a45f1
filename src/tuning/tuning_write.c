/* clphmm_tuning_file_update: records a measured variant list in the tuning
 * file (what `clphmm-bench --tune` writes), keeping every other line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/textfile.h"
#include "tuning/tuning.h"

/* mkdir -p of the directory part of `path`. */
static clphmm_status make_parents(const char *path) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
      return cph_error(CLPHMM_ERROR_IO, "%s: cannot create directory: %s", dir,
                       strerror(errno));
    *p = '/';
  }
  return CLPHMM_SUCCESS;
}

/* Is this line an entry keyed by exactly `name` and nothing else? */
static int is_name_entry(const char *line, size_t len, const char *file,
                         const char *name) {
  char *text = malloc(len + 1);
  if (!text)
    return 0;
  memcpy(text, line, len);
  text[len] = '\0';
  cph_tuning_table t;
  int yes = 0;
  if (cph_tuning_parse(text, file, &t) == CLPHMM_SUCCESS && t.n == 1)
    yes = !strcmp(t.e[0].name, name) && !t.e[0].arch[0] && !t.e[0].vendor[0] &&
          t.e[0].type == CPH_TUNING_ANY_TYPE;
  cph_tuning_free(&t);
  free(text);
  return yes;
}

static clphmm_status read_all(const char *path, char **text) {
  *text = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return errno == ENOENT ? CLPHMM_SUCCESS
                           : cph_error(CLPHMM_ERROR_IO, "%s: cannot open: %s",
                                       path, strerror(errno));
  size_t size;
  int err = cph_read_stream(f, SIZE_MAX, text, &size);
  fclose(f);
  if (err)
    return cph_error(CLPHMM_ERROR_IO, "%s: cannot read", path);
  return CLPHMM_SUCCESS;
}

/* Old text with the entry for `name` replaced by (or followed by) `entry`. */
static void write_merged(FILE *f, const char *old, const char *file,
                         const char *name, const char *entry) {
  int done = 0;
  for (const char *p = old; p && *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (!done && is_name_entry(p, len, file, name)) {
      fputs(entry, f);
      done = 1;
    } else {
      fwrite(p, 1, len, f);
      fputc('\n', f);
    }
    p = eol ? eol + 1 : p + len;
  }
  if (!done)
    fputs(entry, f);
}

static clphmm_status check_args(const char *name, const char *variants) {
  if (!name || !*name || strpbrk(name, "\"\n\r"))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "the device name must be non-empty, without quotes or "
                     "line breaks");
  cph_variant_set set;
  char why[160];
  if (!variants || !cph_variants_parse(variants, &set, why, sizeof why))
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "variants '%s': %s",
                     variants ? variants : "(null)", variants ? why : "NULL");
  /* (What the parser would refuse is not written: a file it refuses makes
   * every context's creation fail.) */
  const cph_tuning_entry *e = NULL;
  if (strlen(name) >= sizeof e->name || strlen(variants) >= sizeof e->variants)
    return cph_error(CLPHMM_ERROR_TOO_LARGE,
                     "a device name of %zu bytes or a variant list of %zu "
                     "(at most %zu and %zu) would not read back",
                     strlen(name), strlen(variants), sizeof e->name - 1,
                     sizeof e->variants - 1);
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_tuning_file_update(const char *path,
                                        const char *device_name,
                                        const char *variants) {
  char def[1024];
  if (!path) {
    cph_tuning_file_path(def, sizeof def);
    path = def;
  }
  if (!*path)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "no tuning file: set CLPHMM_TUNING_FILE, "
                     "XDG_CONFIG_HOME or HOME");
  clphmm_status st = check_args(device_name, variants);
  char tmp[1100], entry[1200];
  /* (A name, list or path cut to the buffers would write a broken entry or
   * another file: refused instead.) */
  if (!st && ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path,
                               (long)getpid()) >= sizeof tmp ||
              strlen(path) >= sizeof def))
    st = cph_error(CLPHMM_ERROR_TOO_LARGE,
                   "tuning file path of %zu bytes is too long (at most %zu)",
                   strlen(path), sizeof def - 1);
  if (!st && (size_t)snprintf(entry, sizeof entry, "name=\"%s\" variants=%s\n",
                              device_name, variants) >= sizeof entry)
    st = cph_error(CLPHMM_ERROR_TOO_LARGE,
                   "tuning entry too long: device name of %zu and variant "
                   "list of %zu bytes (at most %zu together)",
                   strlen(device_name), strlen(variants), sizeof entry - 24);
  char *old = NULL;
  if (!st)
    st = read_all(path, &old);
  cph_tuning_table t = {0};
  if (!st && old) /* refuse to rewrite a file the library cannot read */
    st = cph_tuning_parse(old, path, &t);
  cph_tuning_free(&t);
  if (!st)
    st = make_parents(path);
  FILE *f = st ? NULL : fopen(tmp, "wb");
  if (!st && !f)
    st = cph_error(CLPHMM_ERROR_IO, "%s: cannot create: %s", tmp,
                   strerror(errno));
  if (f) {
    if (!old)
      fputs("# clphmm variant table overrides (see README.md, \"Variant "
            "tables\")\n",
            f);
    write_merged(f, old, path, device_name, entry);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
      st = cph_error(CLPHMM_ERROR_IO, "%s: cannot write: %s", path,
                     strerror(errno));
      remove(tmp);
    }
  }
  free(old);
  return st;
}
