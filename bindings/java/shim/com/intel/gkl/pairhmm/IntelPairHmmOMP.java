package com.intel.gkl.pairhmm;

import org.clphmm.gatk.ClphmmPairHmm;

/**
 * Stands in for Intel GKL's {@code com.intel.gkl.pairhmm.IntelPairHmmOMP} so that an unmodified
 * GATK runs its PairHMM on clphmm: with this jar ahead of GATK's jar on the class path, GATK's
 * {@code VectorLoglessPairHMM} (implementation {@code AVX_LOGLESS_CACHING_OMP}, and {@code
 * FASTEST_AVAILABLE}, GATK's default, which tries it first) constructs this class instead of
 * GKL's. Everything is {@link ClphmmPairHmm}'s; GKL's {@code IntelPairHmm} ({@code
 * AVX_LOGLESS_CACHING}) is untouched.
 */
public final class IntelPairHmmOMP extends ClphmmPairHmm {
  public IntelPairHmmOMP() {
    super();
  }
}
