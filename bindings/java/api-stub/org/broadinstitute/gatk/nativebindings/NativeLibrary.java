package org.broadinstitute.gatk.nativebindings;

import java.io.File;

/**
 * Compile-time stand-in for gatk-native-bindings 1.0.0, used only when its jar is not installed
 * (the build then says so). Declares the published API; never shipped in clphmm's jars.
 */
public interface NativeLibrary {
  boolean load(File tmpDir);
}
