package org.broadinstitute.gatk.nativebindings.pairhmm;

/** Stand-in for gatk-native-bindings 1.0.0 (see NativeLibrary). */
public class PairHMMNativeArguments {
  public int maxNumberOfThreads;
  public boolean useDoublePrecision;
}
