/* Tests of the variant table (src/tuning/tuning.c) and its public face: the
 * built-in fallback chain (name > architecture > vendor > type > generic)
 * on fake devices, the tuning file format and every class of malformed
 * line, the precedence environment > file > built-in, the file's location,
 * clphmm_tuning_file_update, clphmm_device_get_plan, and the per-bin
 * statistics of clphmm_compute on the machine's device (skipped without
 * one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "clphmm.h"
#include "test_util.h"
#include "tuning/tuning.h"

static char tmpdir[256];

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
}

static char *read_text(const char *path) {
  static char buf[8192];
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f)
    fclose(f);
  buf[n] = '\0';
  return buf;
}

static void clear_env(void) {
  unsetenv("CLPHMM_VARIANTS");
  unsetenv("CLPHMM_DOUBLE_VARIANTS");
  unsetenv("CLPHMM_SHUFFLE");
  unsetenv("CLPHMM_FMA");
}

static cph_tuning_choice choose(const cph_tuning_device *d,
                                const cph_tuning_table *t) {
  cph_tuning_choice c;
  clphmm_status st = cph_tuning_choose(d, t, "f.txt", &c);
  CHECK(st == CLPHMM_SUCCESS, "choose failed: %s", cph_error_message());
  return c;
}

/* ---- Built-in table ------------------------------------------------------ */

static void test_builtin_chain(void) {
  clear_env();
  const cph_tuning_device h200 = {"NVIDIA H200", "NVIDIA Corporation", "sm_90",
                                  CLPHMM_DEVICE_GPU, NULL};
  const cph_tuning_device a100 = {"NVIDIA A100-SXM4-80GB", "NVIDIA Corporation",
                                  "sm_80", CLPHMM_DEVICE_GPU, NULL};
  const cph_tuning_device mi = {"gfx90a:sramecc+:xnack-",
                                "Advanced Micro Devices, Inc.", "gfx90a",
                                CLPHMM_DEVICE_GPU, NULL};
  const cph_tuning_device arc = {"Intel(R) Arc(TM) A770",
                                 "Intel(R) Corporation", "", CLPHMM_DEVICE_GPU,
                                 NULL};
  const cph_tuning_device cpu = {"pthread-skylake", "AuthenticAMD", "",
                                 CLPHMM_DEVICE_CPU, NULL};
  const cph_tuning_device acc = {"FPGA", "Someone", "",
                                 CLPHMM_DEVICE_ACCELERATOR, NULL};
  cph_tuning_choice c = choose(&h200, NULL);
  CHECK(!strcmp(c.source, "builtin") && strstr(c.key, "name \"H200\""),
        "H200 matched by name: %s %s", c.source, c.key);
  CHECK(c.entry.shuffle == CPH_SHUFFLE_NVIDIA && c.entry.fma == 1,
        "H200: nvidia shuffle, fma (%d %d)", c.entry.shuffle, c.entry.fma);
  c = choose(&a100, NULL);
  CHECK(strstr(c.key, "vendor \"NVIDIA\"") && !strstr(c.key, "name"),
        "other NVIDIA GPUs fall back to the vendor: %s", c.key);
  CHECK(c.entry.shuffle == CPH_SHUFFLE_NVIDIA, "A100 shuffle");
  c = choose(&mi, NULL);
  CHECK(strstr(c.key, "Advanced Micro Devices") &&
            c.entry.shuffle == CPH_SHUFFLE_AMD && c.entry.fma == 1,
        "AMD GPU: vendor entry, amd shuffle, fma: %s", c.key);
  /* Other GPUs: the backend follows the subgroup extensions. */
  static const struct {
    const char *ext;
    int want;
  } by_ext[] = {
      {"cl_khr_subgroups cl_khr_subgroup_shuffle_relative", CPH_SHUFFLE_KHR},
      {"cl_khr_subgroup_shuffle cl_intel_subgroups", CPH_SHUFFLE_INTEL},
      {"cl_khr_subgroups cl_khr_subgroup_shuffle", CPH_SHUFFLE_KHR_ABS},
      {"cl_khr_subgroup_shuffle_relativeX", CPH_SHUFFLE_LOCAL},
      {"", CPH_SHUFFLE_LOCAL}};
  for (size_t i = 0; i < sizeof by_ext / sizeof *by_ext; i++) {
    const cph_tuning_device gpu = {"Some GPU", "Someone", "", CLPHMM_DEVICE_GPU,
                                   by_ext[i].ext};
    c = choose(&gpu, NULL);
    CHECK(c.entry.shuffle == by_ext[i].want, "extensions '%s': shuffle %d",
          by_ext[i].ext, c.entry.shuffle);
  }
  const cph_tuning_device cpu_sg = {"pthread", "AuthenticAMD", "",
                                    CLPHMM_DEVICE_CPU, "cl_intel_subgroups"};
  c = choose(&cpu_sg, NULL);
  CHECK(c.entry.shuffle == CPH_SHUFFLE_LOCAL, "CPUs keep the local backend");
  c = choose(&h200, NULL);
  CHECK(c.entry.variants_double[0] != '\0', "H200 has a double list");
  c = choose(&arc, NULL);
  CHECK(strstr(c.key, "vendor \"Intel\""), "Intel GPU: %s", c.key);
  c = choose(&cpu, NULL);
  CHECK(!strcmp(c.key, "type cpu") && c.entry.fma == 0 &&
            c.entry.shuffle == CPH_SHUFFLE_LOCAL,
        "CPU (vendor AMD, not a GPU): type entry, no fma: %s", c.key);
  CHECK(!strcmp(c.entry.variants, "v16x16/1") &&
            !strcmp(c.entry.variants_double, "v8x16/1"),
        "CPU variants: the vector kernel: %s / %s", c.entry.variants,
        c.entry.variants_double);
  c = choose(&acc, NULL);
  CHECK(!strcmp(c.key, "generic") && c.entry.fma == 0,
        "accelerator: the generic entry: %s", c.key);
  /* Every built-in entry parses and has increasing capacities (the
   * long-read variant, last, aside). */
  const cph_tuning_device *all[] = {&h200, &a100, &mi, &arc, &cpu, &acc};
  for (size_t i = 0; i < 6; i++) {
    c = choose(all[i], NULL);
    cph_variant_set set;
    char why[160];
    int ok = cph_variants_parse(c.entry.variants, &set, why, sizeof why);
    CHECK(ok && set.n >= 1, "built-in variants of %s parse: %s", all[i]->name,
          ok ? "" : why);
    /* A small-call variant, if any, ends the list. */
    size_t nb = set.n;
    if (ok && set.v[nb - 1].small)
      nb--;
    for (size_t k = 0; ok && k < nb; k++)
      CHECK(!set.v[k].small, "built-in variants of %s: :small not last",
            all[i]->name);
    for (size_t k = 1; ok && k < nb; k++)
      CHECK(set.v[k].seq
                ? k + 1 == nb
                : cph_variant_rows(&set.v[k]) > cph_variant_rows(&set.v[k - 1]),
            "built-in variants of %s by increasing rows", all[i]->name);
  }
}

/* ---- The file ------------------------------------------------------------ */

static void parse_ok(const char *text, cph_tuning_table *t) {
  clphmm_status st = cph_tuning_parse(text, "f.txt", t);
  CHECK(st == CLPHMM_SUCCESS, "parse failed: %s", cph_error_message());
}

static void test_file_match(void) {
  clear_env();
  cph_tuning_table t;
  /* Order in the file does not matter; specificity does. */
  parse_ok("# comment\n"
           "\n"
           "variants=1x1\n"
           "type=gpu variants=2x2/128 fma=0\n"
           "  vendor=nvidia variants=4x4\t# trailing comment\n"
           "arch=SM_90 variants=8x8 shuffle=local\n"
           "name=\"H200\" vendor=NVIDIA variants=16x16/256\n"
           "name=\"H200\" variants=32x1\n",
           &t);
  CHECK(t.n == 6, "six entries, got %zu", t.n);
  const cph_tuning_device h200 = {"NVIDIA H200", "NVIDIA Corporation", "sm_90",
                                  CLPHMM_DEVICE_GPU, NULL};
  cph_tuning_choice c = choose(&h200, &t);
  CHECK(!strcmp(c.source, "file") && !strcmp(c.entry.variants, "16x16/256"),
        "name beats everything; first of equals: %s", c.entry.variants);
  CHECK(strstr(c.key, "(line 7)") && !strcmp(c.file, "f.txt"),
        "key names the line: %s", c.key);
  const cph_tuning_device h100 = {"NVIDIA H100", "NVIDIA Corporation", "sm_90",
                                  CLPHMM_DEVICE_GPU, NULL};
  c = choose(&h100, &t);
  CHECK(!strcmp(c.entry.variants, "8x8") &&
            c.entry.shuffle == CPH_SHUFFLE_LOCAL,
        "arch (case-insensitive) beats vendor: %s", c.entry.variants);
  const cph_tuning_device v100 = {"Tesla V100", "NVIDIA Corporation", "sm_70",
                                  CLPHMM_DEVICE_GPU, NULL};
  c = choose(&v100, &t);
  CHECK(!strcmp(c.entry.variants, "4x4") &&
            c.entry.shuffle == CPH_SHUFFLE_NVIDIA,
        "vendor substring (case-insensitive); default shuffle: %s",
        c.entry.variants);
  const cph_tuning_device amd = {"gfx1100", "AMD", "gfx1100", CLPHMM_DEVICE_GPU,
                                 NULL};
  c = choose(&amd, &t);
  CHECK(!strcmp(c.entry.variants, "2x2/128") && c.entry.fma == 0,
        "type gpu entry, fma set by the file: %s", c.entry.variants);
  const cph_tuning_device cpu = {"cpu", "x", "", CLPHMM_DEVICE_CPU, NULL};
  c = choose(&cpu, &t);
  CHECK(!strcmp(c.entry.variants, "1x1") && !strcmp(c.key, "generic (line 3)"),
        "the file's generic entry beats the built-in CPU entry: %s", c.key);
  cph_tuning_free(&t);
  /* A file without a matching entry: the built-in table. */
  parse_ok("type=gpu variants=2x2\n", &t);
  c = choose(&cpu, &t);
  CHECK(!strcmp(c.source, "builtin"), "no file match: built-in");
  cph_tuning_free(&t);
}

static void parse_bad(const char *text, const char *want) {
  cph_tuning_table t = {(cph_tuning_entry *)1, 99};
  clphmm_status st = cph_tuning_parse(text, "bad.txt", &t);
  const char *m = cph_error_message();
  CHECK(st == CLPHMM_ERROR_PARSE && strstr(m, want),
        "'%s': want PARSE and '%s', got %d '%s'", text, want, st, m);
  CHECK(t.e == NULL && t.n == 0, "failed parse leaves an empty table");
}

static void test_file_errors(void) {
  parse_bad("variants=8x4\nfoo=1 variants=8x4\n",
            "bad.txt:2: unknown field (known: name, arch, vendor, type, "
            "variants, double_variants, shuffle, fma): foo");
  parse_bad("variants=8x4,\n", "bad.txt:1: bad variants '8x4,'");
  parse_bad("variants=8y4\n", "bad.txt:1: bad variants");
  parse_bad("variants=8x4/60\n", "multiple of the lanes");
  parse_bad("variants=99x4\n", "1..64");
  parse_bad("type=gpu\n", "bad.txt:1: no variants=... field");
  parse_bad("variants=8x4 variants=8x8\n", "bad.txt:1: field given twice");
  parse_bad("name=\"H200 variants=8x4\n", "bad.txt:1: unterminated quote");
  parse_bad("name=\"H200\"variants=8x4\n", "expected a space after");
  parse_bad("\n\n   type=tpu variants=8x4\n", "bad.txt:3: type must be");
  parse_bad("variants=8x4 fma=yes\n", "fma must be 0 or 1: yes");
  parse_bad("variants=8x4 shuffle=warp\n", "shuffle must be local");
  parse_bad("variants 8x4\n", "bad.txt:1: expected key=value");
  parse_bad("=8x4\n", "expected key=value");
  char big[3000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  parse_bad(big, "line too long");
  char name[300] = "name=\"";
  memset(name + 6, 'x', 200);
  strcpy(name + 206, "\" variants=8x4");
  parse_bad(name, "value too long for field: name");
  /* Digits only in variants (strtoul skipped blanks and took signs: the
   * update below once wrote "8x4, 16x8", which this parser refused), each
   * suffix once, and no empty match field (it matched every device). */
  parse_bad("variants=+8x+4/+64\n", "bad variants");
  parse_bad("variants=8x4/-18446744073709551552\n", "bad variants");
  parse_bad("variants=8x4:r100:r200\n", "suffix ':r200' given twice");
  parse_bad("variants=32x16/32:long:long\n", "suffix ':long' given twice");
  parse_bad("name=\"\" variants=8x4\n", "empty value for field: name");
  parse_bad("vendor= variants=8x4\n", "empty value for field: vendor");
}

static void test_load(void) {
  char path[512];
  cph_tuning_table t;
  snprintf(path, sizeof path, "%s/none.txt", tmpdir);
  CHECK(cph_tuning_load(path, &t) == CLPHMM_SUCCESS && t.n == 0,
        "a missing file is an empty table");
  snprintf(path, sizeof path, "%s/bin.txt", tmpdir);
  FILE *f = fopen(path, "wb");
  fwrite("variants=8x4\n\0\1", 1, 16, f);
  fclose(f);
  CHECK(cph_tuning_load(path, &t) == CLPHMM_ERROR_PARSE &&
            strstr(cph_error_message(), "not a text file"),
        "a binary file is refused: %s", cph_error_message());
  CHECK(cph_tuning_load(tmpdir, &t) != CLPHMM_SUCCESS,
        "a directory is an error, not a crash");
  snprintf(path, sizeof path, "%s/ok.txt", tmpdir);
  write_file(path, "variants=8x4\r\nvariants=8x8");
  CHECK(cph_tuning_load(path, &t) == CLPHMM_SUCCESS && t.n == 2 &&
            !strcmp(t.e[0].variants, "8x4"),
        "CRLF and no final newline: %s", cph_error_message());
  cph_tuning_free(&t);
}

static void test_env(void) {
  clear_env();
  cph_tuning_table t;
  parse_ok("variants=1x1 shuffle=intel fma=0\n", &t);
  const cph_tuning_device gpu = {"G", "V", "", CLPHMM_DEVICE_GPU, NULL};
  setenv("CLPHMM_VARIANTS", "8x4/32,4x4", 1);
  cph_tuning_choice c = choose(&gpu, &t);
  CHECK(!strcmp(c.source, "env") && !strcmp(c.entry.variants, "8x4/32,4x4") &&
            !strcmp(c.key, "CLPHMM_VARIANTS"),
        "CLPHMM_VARIANTS beats the file: %s %s", c.source, c.entry.variants);
  CHECK(c.entry.shuffle == CPH_SHUFFLE_INTEL && c.entry.fma == 0,
        "shuffle and fma still from the file");
  setenv("CLPHMM_SHUFFLE", "khr", 1);
  setenv("CLPHMM_FMA", "1", 1);
  c = choose(&gpu, &t);
  CHECK(c.entry.shuffle == CPH_SHUFFLE_KHR && c.entry.fma == 1,
        "CLPHMM_SHUFFLE and CLPHMM_FMA beat the file");
  setenv("CLPHMM_VARIANTS", "8x", 1);
  cph_tuning_choice bad;
  CHECK(cph_tuning_choose(&gpu, &t, "f", &bad) ==
                CLPHMM_ERROR_INVALID_ARGUMENT &&
            strstr(cph_error_message(), "CLPHMM_VARIANTS='8x'"),
        "bad CLPHMM_VARIANTS: %s", cph_error_message());
  setenv("CLPHMM_VARIANTS", "8x4", 1);
  setenv("CLPHMM_DOUBLE_VARIANTS", "32x16/64", 1);
  c = choose(&gpu, &t);
  CHECK(!strcmp(c.entry.variants_double, "32x16/64") &&
            !strcmp(c.entry.variants, "8x4"),
        "CLPHMM_DOUBLE_VARIANTS sets the double list only: '%s' '%s'",
        c.entry.variants_double, c.entry.variants);
  setenv("CLPHMM_DOUBLE_VARIANTS", "16x", 1);
  CHECK(cph_tuning_choose(&gpu, &t, "f", &bad) ==
                CLPHMM_ERROR_INVALID_ARGUMENT &&
            strstr(cph_error_message(), "CLPHMM_DOUBLE_VARIANTS='16x'"),
        "bad CLPHMM_DOUBLE_VARIANTS: %s", cph_error_message());
  unsetenv("CLPHMM_DOUBLE_VARIANTS");
  setenv("CLPHMM_SHUFFLE", "warp", 1);
  CHECK(cph_tuning_choose(&gpu, &t, "f", &bad) ==
                CLPHMM_ERROR_INVALID_ARGUMENT &&
            strstr(cph_error_message(), "CLPHMM_SHUFFLE='warp'"),
        "bad CLPHMM_SHUFFLE: %s", cph_error_message());
  clear_env();
  cph_tuning_free(&t);
}

static void test_path(void) {
  const char *saved = getenv("CLPHMM_TUNING_FILE");
  char *keep = saved ? strdup(saved) : NULL;
  char buf[1024];
  setenv("CLPHMM_TUNING_FILE", "/x/t.txt", 1);
  setenv("XDG_CONFIG_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  cph_tuning_file_path(buf, sizeof buf);
  CHECK(!strcmp(buf, "/x/t.txt"), "CLPHMM_TUNING_FILE first: %s", buf);
  unsetenv("CLPHMM_TUNING_FILE");
  cph_tuning_file_path(buf, sizeof buf);
  CHECK(!strcmp(buf, "/xdg/clphmm/tuning.txt"), "then XDG: %s", buf);
  setenv("XDG_CONFIG_HOME", "", 1);
  cph_tuning_file_path(buf, sizeof buf);
  CHECK(!strcmp(buf, "/home/u/.config/clphmm/tuning.txt"), "then HOME: %s",
        buf);
  unsetenv("XDG_CONFIG_HOME");
  unsetenv("HOME");
  cph_tuning_file_path(buf, sizeof buf);
  CHECK(buf[0] == '\0', "nothing: empty");
  CHECK(clphmm_tuning_file_update(NULL, "dev", "8x4") ==
                CLPHMM_ERROR_INVALID_ARGUMENT &&
            strstr(clphmm_last_error(NULL), "no tuning file"),
        "update without any location: %s", clphmm_last_error(NULL));
  if (keep)
    setenv("CLPHMM_TUNING_FILE", keep, 1);
  free(keep);
}

/* ---- clphmm_tuning_file_update ------------------------------------------ */

static void test_update(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/a/b/tuning.txt", tmpdir);
  /* What the parser would refuse is not written. */
  CHECK(clphmm_tuning_file_update(path, "Dev One", "8x4, 16x8") ==
            CLPHMM_ERROR_INVALID_ARGUMENT,
        "a list with a blank refused: %s", clphmm_last_error(NULL));
  char long_name[201];
  memset(long_name, 'n', 200);
  long_name[200] = '\0';
  CHECK(clphmm_tuning_file_update(path, long_name, "8x4") ==
                CLPHMM_ERROR_TOO_LARGE &&
            strstr(clphmm_last_error(NULL), "would not read back"),
        "a 200-byte device name refused: %s", clphmm_last_error(NULL));
  CHECK(clphmm_tuning_file_update(path, "Dev One", "8x4/64,16x8/64") ==
            CLPHMM_SUCCESS,
        "create in new directories: %s", clphmm_last_error(NULL));
  const char *t = read_text(path);
  CHECK(strstr(t, "name=\"Dev One\" variants=8x4/64,16x8/64\n") != NULL,
        "new entry written: %s", t);
  /* Keep comments and other entries; replace only the same name alone. */
  write_file(path, "# mine\n"
                   "type=gpu variants=4x4\n"
                   "name=\"Dev One\" vendor=X variants=2x2\n"
                   "name=\"Dev One\" variants=1x1\n"
                   "name=\"Dev Two\" variants=1x2\n");
  CHECK(clphmm_tuning_file_update(path, "Dev One", "8x8") == CLPHMM_SUCCESS,
        "replace: %s", clphmm_last_error(NULL));
  t = read_text(path);
  CHECK(!strcmp(t, "# mine\n"
                   "type=gpu variants=4x4\n"
                   "name=\"Dev One\" vendor=X variants=2x2\n"
                   "name=\"Dev One\" variants=8x8\n"
                   "name=\"Dev Two\" variants=1x2\n"),
        "only the entry keyed by the name alone changed:\n%s", t);
  CHECK(clphmm_tuning_file_update(path, "Dev Three", "4x4/128") ==
            CLPHMM_SUCCESS,
        "append");
  t = read_text(path);
  CHECK(strstr(t, "variants=1x2\nname=\"Dev Three\" variants=4x4/128\n"),
        "appended at the end:\n%s", t);
  cph_tuning_table tab;
  CHECK(cph_tuning_load(path, &tab) == CLPHMM_SUCCESS && tab.n == 5,
        "the result parses");
  cph_tuning_free(&tab);
  /* Refusals leave the file alone. */
  char before[8192];
  snprintf(before, sizeof before, "%s", read_text(path));
  CHECK(clphmm_tuning_file_update(path, "Dev", "8x") ==
                CLPHMM_ERROR_INVALID_ARGUMENT &&
            !strcmp(before, read_text(path)),
        "bad variants refused");
  CHECK(clphmm_tuning_file_update(path, "a\"b", "8x4") ==
                CLPHMM_ERROR_INVALID_ARGUMENT &&
            clphmm_tuning_file_update(path, "", "8x4") ==
                CLPHMM_ERROR_INVALID_ARGUMENT,
        "bad names refused");
  /* Too long to write whole: refused, the file still parses (an entry cut
   * to its buffer had left an unterminated quote that blocked every later
   * context). */
  char name[1300], longpath[1300];
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  CHECK(clphmm_tuning_file_update(path, name, "8x4") ==
                CLPHMM_ERROR_TOO_LARGE &&
            !strcmp(before, read_text(path)),
        "a name too long for an entry refused: %s", clphmm_last_error(NULL));
  snprintf(longpath, sizeof longpath, "%s/", tmpdir);
  size_t at = strlen(longpath);
  memset(longpath + at, 'p', sizeof longpath - at - 1);
  longpath[sizeof longpath - 1] = '\0';
  CHECK(clphmm_tuning_file_update(longpath, "Dev", "8x4") ==
            CLPHMM_ERROR_TOO_LARGE,
        "a path too long refused: %s", clphmm_last_error(NULL));
  CHECK(cph_tuning_load(path, &tab) == CLPHMM_SUCCESS && tab.n == 5,
        "the file parses after the refusals");
  cph_tuning_free(&tab);
  write_file(path, "variants=8x4\nbroken\n");
  CHECK(clphmm_tuning_file_update(path, "Dev", "8x4") == CLPHMM_ERROR_PARSE &&
            strstr(clphmm_last_error(NULL), "tuning.txt:2:") &&
            !strcmp(read_text(path), "variants=8x4\nbroken\n"),
        "a malformed file is not rewritten: %s", clphmm_last_error(NULL));
}

/* ---- On the machine's device --------------------------------------------- */

static void test_device_plan(void) {
  size_t n = 0;
  if (clphmm_device_count(&n) || n == 0) {
    if (getenv("CLPHMM_TEST_REQUIRE_DEVICE"))
      CHECK(0, "an OpenCL device is required");
    else
      printf("skip: device checks (no OpenCL device)\n");
    return;
  }
  clear_env();
  char path[512];
  snprintf(path, sizeof path, "%s/plan.txt", tmpdir);
  setenv("CLPHMM_TUNING_FILE", path, 1);
  clphmm_device_plan p;
  CHECK(clphmm_device_get_plan(0, &p) == CLPHMM_SUCCESS &&
            !strcmp(p.source, "builtin") && !strcmp(p.tuning_file, path) &&
            p.variants[0],
        "built-in plan: %s %s", p.source, clphmm_last_error(NULL));
  CHECK(clphmm_device_get_plan(n, &p) == CLPHMM_ERROR_NO_DEVICE,
        "index out of range");
  CHECK(clphmm_device_get_plan(0, NULL) == CLPHMM_ERROR_INVALID_ARGUMENT,
        "NULL plan");
  write_file(path, "variants=16x4/64,4x4/32\n");
  CHECK(clphmm_device_get_plan(0, &p) == CLPHMM_SUCCESS &&
            !strcmp(p.source, "file") &&
            !strcmp(p.variants, "4x4/32,16x4/64") &&
            !strcmp(p.key, "generic (line 1)"),
        "file plan, sorted by rows: %s %s %s", p.source, p.variants, p.key);
  setenv("CLPHMM_VARIANTS", "8x8", 1);
  CHECK(clphmm_device_get_plan(0, &p) == CLPHMM_SUCCESS &&
            !strcmp(p.source, "env") && !strcmp(p.variants, "8x8/64"),
        "env plan: %s %s", p.source, p.variants);
  clear_env();
  /* Compute with the file's table: bins follow it, stats add up (device
   * times measured). */
  clphmm_context *ctx = NULL;
  clphmm_options po;
  clphmm_options_init(&po);
  po.profile = 1;
  CHECK_STATUS(clphmm_context_create(&po, &ctx), CLPHMM_SUCCESS, NULL);
  if (ctx) {
    enum { NR = 6 };
    static const size_t len[NR] = {3, 16, 17, 40, 64, 100};
    char bases[256];
    uint8_t q[256];
    memset(q, 30, sizeof q);
    for (size_t i = 0; i < sizeof bases; i++)
      bases[i] = "ACGT"[(i * 5 + i / 3) % 4];
    clphmm_read r[NR];
    for (int i = 0; i < NR; i++)
      r[i] = (clphmm_read){bases, q, q, q, q, len[i]};
    clphmm_haplotype h = {bases + 1, 120};
    clphmm_batch b = {r, NR, &h, 1};
    double out[NR];
    CHECK_STATUS(clphmm_compute(ctx, &b, 1, out), CLPHMM_SUCCESS, ctx);
    clphmm_stats s;
    clphmm_context_stats(ctx, &s);
    CHECK(s.n_bins == 2 && s.bins[0].max_rows == 16 &&
              s.bins[1].max_rows == 64 && !strcmp(s.bins[1].variant, "16x4/64"),
          "bins from the file: %zu", s.n_bins);
    CHECK(s.bins[0].pairs == 2 && s.bins[1].pairs == 4 + s.rescued_pairs,
          "pairs per bin: %llu %llu (rescued %llu)",
          (unsigned long long)s.bins[0].pairs,
          (unsigned long long)s.bins[1].pairs,
          (unsigned long long)s.rescued_pairs);
    CHECK(s.bins[0].cells == (3 + 16) * 120 && s.bins[0].launches == 1,
          "cells per bin: %llu", (unsigned long long)s.bins[0].cells);
    /* Every kernel is in a bin, except the row preparation; the call's
     * kernel time is the union of their intervals, at most their sum. */
    double sum =
        s.bins[0].kernel_seconds + s.bins[1].kernel_seconds + s.rows_seconds;
    CHECK(sum > 0 && s.kernel_seconds > 0 && s.kernel_seconds <= sum * 1.000001,
          "bin kernel times and the call's: %g vs %g", sum, s.kernel_seconds);
    clphmm_context_destroy(ctx);
  }
  /* A malformed file stops context creation with file and line. */
  write_file(path, "\nvariants=8x4 bogus=1\n");
  ctx = NULL;
  CHECK(clphmm_context_create(NULL, &ctx) == CLPHMM_ERROR_PARSE && !ctx &&
            strstr(clphmm_last_error(NULL), "plan.txt:2: unknown field"),
        "malformed file: %s", clphmm_last_error(NULL));
  CHECK(clphmm_device_get_plan(0, &p) == CLPHMM_ERROR_PARSE,
        "malformed file: plan error too");
  unlink(path);
}

/* Read-length bins: the smallest variant that holds a read; longer reads
 * go to the widest variant that tiles them at the least estimated cost
 * (padded rows, plus a per-step overhead that favours more rows per lane). */
static void test_bins(void) {
  cph_variant_set set;
  char why[160];
  CHECK(cph_variants_parse("4x16/128,8x16/128,32x16/128,32x24/128", &set, why,
                           sizeof why),
        "parse: %s", why);
  /* cph_variants_parse leaves the order; bins need increasing rows. */
  static const struct {
    uint32_t rows;
    unsigned g, c;
  } cases[] = {{1, 4, 16},     {64, 4, 16},    {65, 8, 16},   {512, 32, 16},
               {513, 32, 24},  {768, 32, 24},  {769, 32, 16}, {1024, 32, 16},
               {1100, 32, 24}, {1536, 32, 24}, {2048, 32, 16}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const cph_variant *v = &set.v[cph_plan_bin(&set, cases[i].rows)];
    CHECK(v->g == cases[i].g && v->c == cases[i].c,
          "%u rows: got %ux%u, want %ux%u", cases[i].rows, v->g, v->c,
          cases[i].g, cases[i].c);
  }
  /* A long-read variant (":long", sorted last) serves every read longer
   * than the other variants' tiles; its register cap rides along. */
  CHECK(cph_variants_parse("4x16/128,32x16/128,32x24/128,32x16/32:long:r168",
                           &set, why, sizeof why),
        "parse: %s", why);
  static const struct {
    uint32_t rows;
    unsigned c, wg;
    int seq;
  } lcases[] = {{64, 16, 128, 0}, {512, 16, 128, 0}, {768, 24, 128, 0},
                {769, 16, 32, 1}, {1024, 16, 32, 1}, {2048, 16, 32, 1}};
  for (size_t i = 0; i < sizeof lcases / sizeof *lcases; i++) {
    const cph_variant *v = &set.v[cph_plan_bin(&set, lcases[i].rows)];
    CHECK(v->c == lcases[i].c && v->wg == lcases[i].wg &&
              v->seq == lcases[i].seq && v->maxreg == (v->seq ? 168u : 0u),
          "%u rows: got %ux%u/%u seq %d r%u", lcases[i].rows, v->g, v->c, v->wg,
          v->seq, v->maxreg);
  }
  /* Too few long pairs to fill the device with the long-read variant: the
   * widest variant with the smallest tiles takes them all (whatever their
   * length: 1100 rows would go to 32x24 by cost); shorter reads keep their
   * bins. (The scheduler decides, see test_device's test_long_variant.) */
  CHECK(!set.v[cph_plan_bin_long(&set)].seq &&
            set.v[cph_plan_bin_long(&set)].g == 32 &&
            set.v[cph_plan_bin_long(&set)].c == 16 &&
            set.v[cph_plan_bin(&set, 700)].c == 24,
        "the bin of few long pairs: %ux%u", set.v[cph_plan_bin_long(&set)].g,
        set.v[cph_plan_bin_long(&set)].c);
  char text[256];
  cph_plan_format(&set, text, sizeof text);
  CHECK(!strcmp(text, "4x16/128,32x16/128,32x24/128,32x16/32:long:r168"),
        "format: %s", text);
  CHECK(cph_variants_parse("4x16/128,32x8/128:small:r96,8x16", &set, why,
                           sizeof why) &&
            set.n == 3 && set.v[1].small && !set.v[0].small &&
            set.v[1].maxreg == 96 && !set.v[1].seq,
        "parse :small: %s", why);
  static const char *const bad[] = {"32x16:long,32x8:long",
                                    "32x16:bogus",
                                    "32x16:r7",
                                    "32x16:r168x",
                                    "32x16:r",
                                    "32x16:longer",
                                    "32x8:small:long",
                                    "8x4:small,16x4:small",
                                    "8x4:smaller"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    CHECK(!cph_variants_parse(bad[i], &set, why, sizeof why), "'%s' parsed",
          bad[i]);
  CHECK(!cph_variants_parse("32x16:long,32x8:long", &set, why, sizeof why) &&
            strstr(why, "more than one :long"),
        "two long variants: %s", why);
  /* Vector variants (vPxC/WG): P pairs per work-item, C rows per tile,
   * WG work-items (default 1); every one of them tiles long reads, at the
   * least estimated cost. */
  CHECK(cph_variants_parse("v16x16,v4x32/3,v1x8/64", &set, why, sizeof why) &&
            set.n == 3,
        "parse vector variants: %s", why);
  CHECK(set.v[0].vec && set.v[0].g == 16 && set.v[0].c == 16 &&
            set.v[0].wg == 1 && set.v[1].vec && set.v[1].wg == 3 &&
            set.v[2].g == 1 && set.v[2].wg == 64,
        "vector variant fields");
  CHECK(cph_variant_rows(&set.v[0]) == 16 &&
            cph_variant_pairs(&set.v[0]) == 16 &&
            cph_variant_pairs(&set.v[1]) == 12 &&
            cph_variant_pairs(&set.v[2]) == 64 &&
            cph_variant_steps(&set.v[0], 1) == 4 &&
            cph_variant_steps(&set.v[0], 250) == 252,
        "vector variant rows, pairs per work-group, steps");
  cph_variant lane = {.g = 8, .c = 4, .wg = 64};
  CHECK(cph_variant_rows(&lane) == 32 && cph_variant_pairs(&lane) == 8 &&
            cph_variant_steps(&lane, 250) == 260,
        "lane-group rows, pairs per work-group, steps");
  cph_plan_format(&set, text, sizeof text);
  CHECK(!strcmp(text, "v16x16/1,v4x32/3,v1x8/64"), "format: %s", text);
  static const struct {
    uint32_t rows;
    size_t bin;
  } vcases[] = {{1, 0},  {8, 0},  {9, 1},  {16, 1}, {17, 2}, {32, 2},
                {33, 0}, {40, 0}, {48, 1}, {64, 2}, {100, 0}};
  CHECK(cph_variants_parse("v16x8,v16x16,v16x32", &set, why, sizeof why),
        "parse: %s", why);
  for (size_t i = 0; i < sizeof vcases / sizeof *vcases; i++) {
    const size_t b = cph_plan_bin(&set, vcases[i].rows);
    CHECK(b == vcases[i].bin, "vector set, %u rows: bin %zu (%ux%u), want %zu",
          vcases[i].rows, b, set.v[b].g, set.v[b].c, vcases[i].bin);
  }
  static const char *const vbad[] = {
      "v3x16",       "v32x16",      "v16x0", "v16x65", "v16x16/0",
      "v16x16:long", "v16x16:r128", "vx16",  "v16",    "16v16"};
  for (size_t i = 0; i < sizeof vbad / sizeof *vbad; i++)
    CHECK(!cph_variants_parse(vbad[i], &set, why, sizeof why), "'%s' parsed",
          vbad[i]);
  /* The double table's long-read shapes: 384-row tiles beat 256-row ones
   * even with some padding; 512 rows stay on two 256-row tiles. */
  CHECK(cph_variants_parse("16x8/64,32x8/128,32x12/64", &set, why, sizeof why),
        "parse: %s", why);
  static const struct {
    uint32_t rows;
    unsigned c;
  } dcases[] = {{256, 8}, {300, 12}, {512, 8}, {1024, 12}, {2048, 12}};
  for (size_t i = 0; i < sizeof dcases / sizeof *dcases; i++) {
    const cph_variant *v = &set.v[cph_plan_bin(&set, dcases[i].rows)];
    CHECK(v->g == 32 && v->c == dcases[i].c,
          "double %u rows: got %ux%u, want 32x%u", dcases[i].rows, v->g, v->c,
          dcases[i].c);
  }
}

/* cph_plan_to_small: which of a large chunk's bins run on the small-call
 * variant (32x8/128: 256 rows, 4 pairs per work-group), on a device of 132
 * compute units. */
static void test_to_small(void) {
  cph_variant_set set, small;
  char why[160];
  CHECK(cph_variants_parse("4x16/128,8x16/128,32x8/128,32x16/32:long", &set,
                           why, sizeof why) &&
            cph_variants_parse("32x8/128:small", &small, why, sizeof why),
        "parse: %s", why);
  set.v[set.n] = small.v[0];
  set.has_small = 1;
  static const struct {
    size_t bin;
    uint64_t pairs;
    uint32_t longest;
    uint64_t moved;
    unsigned groups;
    int want;
  } cases[] = {
      {0, 100, 64, 0, 2, 1},   /* 4 work-groups of 4x16/128 */
      {0, 4192, 64, 0, 64, 1}, /* 131 work-groups (64 per unit: no limit) */
      {0, 4193, 64, 0, 64, 0}, /* 132: as many as compute units */
      {0, 100, 64, 956, 2, 1}, /* 1056 pairs: 2 of 32x8's groups per unit */
      {0, 100, 64, 957, 2, 0}, /* one more */
      {0, 100, 64, 0, 0, 0},   /* never */
      {0, 0, 0, 0, 2, 0},      /* nothing to move */
      {1, 1000, 128, 0, 2, 1}, /* 8x16/128: 128 rows, 63 work-groups */
      {1, 1000, 128, 0, 1, 0}, /* over 528 pairs */
      {2, 10, 256, 0, 2, 1},   /* 32x8/128: reads of one 256-row tile */
      {2, 10, 257, 0, 2, 0},   /* the last bin: a read it tiles */
      {2, 10, 20000, 0, 2, 0}, /* (a long read) */
      {3, 10, 200, 0, 2, 0},   /* the long-read variant */
      {4, 10, 64, 0, 2, 0},    /* the small-call variant itself */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    CHECK(cph_plan_to_small(&set, cases[i].bin, cases[i].pairs,
                            cases[i].longest, cases[i].moved, 132,
                            cases[i].groups) == cases[i].want,
          "bin %zu, %llu pairs of up to %u rows beside %llu, %u groups per "
          "unit: want %d",
          cases[i].bin, (unsigned long long)cases[i].pairs, cases[i].longest,
          (unsigned long long)cases[i].moved, cases[i].groups, cases[i].want);
  set.has_small = 0;
  CHECK(!cph_plan_to_small(&set, 0, 100, 64, 0, 132, 2),
        "no small-call variant: a bin moved");
}

/* Concurrent tiles: the smallest power of two covering a launch's tiles,
 * within the lane groups, the limit, and whole warps per tile slot where
 * the kernel idles slots with branches (NVIDIA 32, AMD 64 lanes). */
static void test_coop(void) {
/* A lane-group or vector variant (fma: the scaled fused form). */
#define V(G, C, WG, SH, FMA, SEQ, MAXREG, VEC)                                 \
  {                                                                            \
    .g = G, .c = C, .wg = WG, .shuffle = SH, .fma = FMA, .scaled = FMA,        \
    .seq = SEQ, .maxreg = MAXREG, .vec = VEC                                   \
  }
  static const struct {
    cph_variant v;
    uint32_t tiles;
    unsigned max, want;
  } cases[] = {
      {V(32, 16, 128, CPH_SHUFFLE_NVIDIA, 1, 0, 0, 0), 1, 0, 1},
      {V(32, 16, 128, CPH_SHUFFLE_NVIDIA, 1, 0, 0, 0), 2, 0, 2},
      {V(32, 16, 128, CPH_SHUFFLE_NVIDIA, 1, 0, 0, 0), 3, 0, 4},
      {V(32, 16, 128, CPH_SHUFFLE_NVIDIA, 1, 0, 0, 0), 40, 0, 4},
      {V(32, 16, 128, CPH_SHUFFLE_NVIDIA, 1, 0, 0, 0), 40, 2, 2},
      {V(32, 16, 128, CPH_SHUFFLE_NVIDIA, 1, 0, 0, 0), 40, 1, 1},
      {V(32, 16, 128, CPH_SHUFFLE_NVIDIA, 1, 0, 0, 0), 40, 3, 2},
      {V(32, 12, 64, CPH_SHUFFLE_NVIDIA, 1, 0, 0, 0), 5, 0, 2},
      {V(8, 16, 128, CPH_SHUFFLE_NVIDIA, 1, 0, 0, 0), 40, 0, 4},
      {V(8, 16, 128, CPH_SHUFFLE_AMD, 1, 0, 0, 0), 40, 0, 2},
      {V(32, 16, 64, CPH_SHUFFLE_AMD, 1, 0, 0, 0), 40, 0, 1},
      {V(8, 4, 64, CPH_SHUFFLE_LOCAL, 0, 0, 0, 0), 7, 0, 8},
      {V(8, 4, 64, CPH_SHUFFLE_LOCAL, 0, 0, 0, 0), 40, 0, 8},
      /* 24 lane groups */
      {V(4, 4, 96, CPH_SHUFFLE_LOCAL, 0, 0, 0, 0), 40, 0, 8},
      /* Long-read variants run their tiles one after the other. */
      {V(32, 16, 32, CPH_SHUFFLE_NVIDIA, 1, 1, 168, 0), 2, 0, 1},
      {V(32, 16, 128, CPH_SHUFFLE_NVIDIA, 1, 1, 0, 0), 40, 0, 1},
      {V(8, 4, 64, CPH_SHUFFLE_LOCAL, 0, 1, 0, 0), 40, 0, 1},
      /* So do vector variants (one work-item computes a pair's tiles). */
      {V(16, 16, 1, CPH_SHUFFLE_LOCAL, 0, 0, 0, 1), 40, 0, 1},
      {V(1, 16, 64, CPH_SHUFFLE_LOCAL, 0, 0, 0, 1), 40, 0, 1},
  };
#undef V
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const cph_variant *v = &cases[i].v;
    unsigned got = cph_variant_coop(v, cases[i].tiles, cases[i].max);
    CHECK(got == cases[i].want,
          "%ux%u/%u %s, %u tiles, max %u: %u slots, "
          "want %u",
          v->g, v->c, v->wg, cph_shuffle_name(v->shuffle), cases[i].tiles,
          cases[i].max, got, cases[i].want);
  }
}

/* A device of `type` named `name` with double precision, 64 KiB of local
 * memory and work-groups of up to 1024 (the planner's inputs). */
static void plain_device(cph_device *d, const char *name,
                         clphmm_device_type type) {
  memset(d, 0, sizeof *d);
  snprintf(d->info.name, sizeof d->info.name, "%s", name);
  d->info.type = type;
  d->info.local_mem_bytes = 64 * 1024;
  d->info.has_fp64 = 1;
  d->max_work_group_size = 1024;
}

/* Double lists derived from a float list (no double_variants): vector
 * variants halve their pairs per work-item (the same vector bytes), lane
 * groups keep at most 8 rows per lane; vector variants always take the
 * local backend (they exchange nothing). */
static void test_derived_double(void) {
  clear_env();
  char path[512];
  snprintf(path, sizeof path, "%s/derived.txt", tmpdir);
  write_file(path, "type=cpu variants=v16x16/2,4x16/64,v1x8/4 shuffle=intel\n");
  setenv("CLPHMM_TUNING_FILE", path, 1);
  cph_device d;
  plain_device(&d, "some cpu", CLPHMM_DEVICE_CPU);
  cph_variant_set f, db;
  const int ok = cph_plan_variants(&d, 0, 1, &f) == CLPHMM_SUCCESS &&
                 cph_plan_variants(&d, 1, 1, &db) == CLPHMM_SUCCESS;
  CHECK(ok && f.n == 3 && db.n == 3, "plans: %s", cph_error_message());
  if (ok && f.n == 3 && db.n == 3) {
    char ft[256], dt[256];
    cph_plan_format(&f, ft, sizeof ft);
    cph_plan_format(&db, dt, sizeof dt);
    CHECK(!strcmp(ft, "v1x8/4,v16x16/2,4x16/64") &&
              !strcmp(dt, "v1x8/4,v8x16/2,4x8/64"),
          "float %s, derived double %s", ft, dt);
    CHECK(f.v[0].shuffle == CPH_SHUFFLE_LOCAL &&
              f.v[1].shuffle == CPH_SHUFFLE_LOCAL &&
              f.v[2].shuffle == CPH_SHUFFLE_INTEL,
          "vector variants use the local backend");
  }
  unsetenv("CLPHMM_TUNING_FILE");
  unlink(path);
}

/* A variant refused by the planner is named with the list it came from:
 * CLPHMM_VARIANTS' float list, CLPHMM_DOUBLE_VARIANTS' double list, or
 * the table's entry (before, the last variable applied was named for
 * both). */
static void test_list_origin(void) {
  clear_env();
  cph_device d;
  plain_device(&d, "some gpu", CLPHMM_DEVICE_GPU);
  cph_variant_set set;
  /* Float rows per lane come in fours: 32x2 is refused in float. */
  setenv("CLPHMM_VARIANTS", "32x2/64", 1);
  setenv("CLPHMM_DOUBLE_VARIANTS", "32x8/64", 1);
  CHECK(cph_plan_variants(&d, 0, 1, &set) == CLPHMM_ERROR_INVALID_ARGUMENT &&
            strstr(cph_error_message(), "(env, CLPHMM_VARIANTS)"),
        "a bad float list names CLPHMM_VARIANTS: %s", cph_error_message());
  CHECK(cph_plan_variants(&d, 1, 1, &set) == CLPHMM_SUCCESS,
        "the double list stands: %s", cph_error_message());
  /* Double rows per lane come in twos. */
  setenv("CLPHMM_VARIANTS", "32x8/64", 1);
  setenv("CLPHMM_DOUBLE_VARIANTS", "32x3/64", 1);
  CHECK(cph_plan_variants(&d, 1, 1, &set) == CLPHMM_ERROR_INVALID_ARGUMENT &&
            strstr(cph_error_message(), "(env, CLPHMM_DOUBLE_VARIANTS)"),
        "a bad double list names CLPHMM_DOUBLE_VARIANTS: %s",
        cph_error_message());
  /* Without its own double list the double set is the float list's. */
  unsetenv("CLPHMM_DOUBLE_VARIANTS");
  setenv("CLPHMM_VARIANTS", "32x6/64", 1);
  CHECK(cph_plan_variants(&d, 1, 1, &set) == CLPHMM_SUCCESS,
        "a derived double list: %s", cph_error_message());
  CHECK(cph_plan_variants(&d, 0, 1, &set) == CLPHMM_ERROR_INVALID_ARGUMENT &&
            strstr(cph_error_message(), "(env, CLPHMM_VARIANTS)"),
        "a bad float list names CLPHMM_VARIANTS: %s", cph_error_message());
  clear_env();
}

/* Float programs flush denormals on CPUs only (GKL's float pass runs with
 * FTZ; CPUs pay for denormals, GPUs do not): the variants say so and
 * their build options carry -cl-denorms-are-zero; double programs never
 * flush. */
static void test_flush_denormals(void) {
  clear_env();
  for (int type = 0; type < 2; type++) {
    cph_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.info.name, sizeof d.info.name, type ? "some gpu" : "some cpu");
    d.info.type = type ? CLPHMM_DEVICE_GPU : CLPHMM_DEVICE_CPU;
    d.info.local_mem_bytes = 64 * 1024;
    d.info.has_fp64 = 1;
    d.max_work_group_size = 1024;
    for (int dbl = 0; dbl < 2; dbl++) {
      cph_variant_set set;
      const int ok = cph_plan_variants(&d, dbl, 1, &set) == CLPHMM_SUCCESS;
      CHECK(ok && set.n > 0, "plan: %s", cph_error_message());
      const int want = !type && !dbl;
      for (size_t i = 0; ok && i < cph_plan_count(&set); i++) {
        char opts[1024];
        cph_variant_options(&set.v[i], dbl, opts, sizeof opts);
        const int has = strstr(opts, "-cl-denorms-are-zero") != NULL;
        CHECK(set.v[i].ftz == want && has == want,
              "%s %s variant %zu: ftz %d, options '%s'", d.info.name,
              dbl ? "double" : "float", i, set.v[i].ftz, opts);
      }
    }
  }
}

int main(void) {
  test_bins();
  test_to_small();
  test_coop();
  snprintf(tmpdir, sizeof tmpdir, "%s/clphmm-tuning-XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_builtin_chain();
  test_file_match();
  test_file_errors();
  test_load();
  test_env();
  test_update();
  test_device_plan();
  test_flush_denormals();
  test_derived_double();
  test_list_origin();
  test_path();
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0)
    printf("note: could not remove %s\n", tmpdir);
  return test_finish();
}
