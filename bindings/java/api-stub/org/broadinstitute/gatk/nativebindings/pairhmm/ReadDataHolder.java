package org.broadinstitute.gatk.nativebindings.pairhmm;

/** Stand-in for gatk-native-bindings 1.0.0 (see NativeLibrary). */
public final class ReadDataHolder {
  public byte[] readBases;
  public byte[] readQuals;
  public byte[] insertionGOP;
  public byte[] deletionGOP;
  public byte[] overallGCP;
}
