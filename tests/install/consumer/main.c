/* A program outside the clphmm tree, built against an installed clphmm
 * (through find_package(clphmm) and through pkg-config) by
 * tests/install/check_install.sh. It checks that the library's version
 * matches the installed header and that the CPU reference computes a finite,
 * negative log10 likelihood for one hand-made pair in both precisions.
 * Prints "version X.Y.Z" on success; exits non-zero on any failure. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <clphmm.h>

#define STR2(x) #x
#define STR(x) STR2(x)
#define HEADER_VERSION                                                         \
  STR(CLPHMM_VERSION_MAJOR)                                                    \
  "." STR(CLPHMM_VERSION_MINOR) "." STR(CLPHMM_VERSION_PATCH)

int main(void) {
  const char *version = clphmm_version();
  if (version == NULL || strcmp(version, HEADER_VERSION) != 0) {
    fprintf(stderr, "consumer: library version %s, header version %s\n",
            version ? version : "(null)", HEADER_VERSION);
    return 1;
  }

  /* Raw phred values (no +33): base 30, insertion/deletion 45, GCP 10. */
  static const uint8_t bq[] = {30, 30, 30, 30, 30, 30};
  static const uint8_t iq[] = {45, 45, 45, 45, 45, 45};
  static const uint8_t dq[] = {45, 45, 45, 45, 45, 45};
  static const uint8_t gcp[] = {10, 10, 10, 10, 10, 10};
  const clphmm_read read = {"ACGTnA", bq, iq, dq, gcp, 6};
  const clphmm_haplotype hap = {"TTACGTGAC", 9};
  const clphmm_batch batch = {&read, 1, &hap, 1};

  size_t n_pairs = 0;
  if (clphmm_count_pairs(&batch, 1, &n_pairs) != CLPHMM_SUCCESS ||
      n_pairs != 1) {
    fprintf(stderr, "consumer: clphmm_count_pairs: %zu pairs: %s\n", n_pairs,
            clphmm_last_error(NULL));
    return 1;
  }
  const clphmm_precision modes[] = {CLPHMM_PRECISION_FLOAT,
                                    CLPHMM_PRECISION_DOUBLE};
  double result[2];
  for (int m = 0; m < 2; m++) {
    result[m] = 0.0;
    clphmm_status st = clphmm_reference(&batch, 1, modes[m], &result[m]);
    if (st != CLPHMM_SUCCESS) {
      fprintf(stderr, "consumer: clphmm_reference: %s: %s\n",
              clphmm_status_string(st), clphmm_last_error(NULL));
      return 1;
    }
    if (!isfinite(result[m]) || !(result[m] < 0.0)) {
      fprintf(stderr, "consumer: %s result %g is not finite and negative\n",
              m ? "double" : "float", result[m]);
      return 1;
    }
  }
  if (fabs(result[0] - result[1]) > 1e-5) {
    fprintf(stderr, "consumer: float %.12g and double %.12g differ by > 1e-5\n",
            result[0], result[1]);
    return 1;
  }
  printf("version %s\nfloat %.12g\ndouble %.12g\n", version, result[0],
         result[1]);
  return 0;
}
