package org.broadinstitute.gatk.nativebindings.pairhmm;

import org.broadinstitute.gatk.nativebindings.NativeLibrary;

/** Stand-in for gatk-native-bindings 1.0.0 (see NativeLibrary). */
public interface PairHMMNativeBinding extends NativeLibrary {
  void initialize(PairHMMNativeArguments args);

  void computeLikelihoods(
      ReadDataHolder[] readDataArray,
      HaplotypeDataHolder[] haplotypeDataArray,
      double[] likelihoodArray);

  void done();
}
