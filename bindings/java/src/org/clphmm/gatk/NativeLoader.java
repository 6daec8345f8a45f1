package org.clphmm.gatk;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads {@code libclphmm_jni.so} once per JVM, trying in order:
 *
 * <ol>
 *   <li>the file named by the system property {@code clphmm.jni.library};
 *   <li>the copy inside this jar ({@code
 *       org/clphmm/gatk/native/<os>-<arch>/libclphmm_jni.so}), extracted to
 *       {@code tmpDir} (or {@code java.io.tmpdir} when null) and deleted at
 *       exit;
 *   <li>{@code System.loadLibrary("clphmm_jni")}: {@code java.library.path}.
 * </ol>
 *
 * Every failed attempt is recorded in {@link #failure()}.
 */
final class NativeLoader {
  static final String LIBRARY_PROPERTY = "clphmm.jni.library";
  private static final String LIBRARY_NAME = "clphmm_jni";

  private static boolean loaded;
  private static String failure = "not attempted";

  private NativeLoader() {}

  /** The jar resource of this platform, e.g. "linux-x86_64". */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (os.startsWith("linux")) os = "linux";
    if (arch.equals("amd64") || arch.equals("x86-64")) arch = "x86_64";
    if (arch.equals("arm64")) arch = "aarch64";
    return os + "-" + arch;
  }

  static synchronized boolean load(File tmpDir) {
    if (loaded) return true;
    StringBuilder why = new StringBuilder();
    String explicit = System.getProperty(LIBRARY_PROPERTY);
    if (explicit != null && !explicit.isEmpty()) {
      // An explicit choice is not replaced by the defaults when it fails.
      try {
        System.load(new File(explicit).getAbsolutePath());
        return done(null);
      } catch (LinkageError e) {
        return done(LIBRARY_PROPERTY + "=" + explicit + ": " + e.getMessage());
      }
    }
    String resource =
        "/org/clphmm/gatk/native/" + platform() + "/" + System.mapLibraryName(LIBRARY_NAME);
    try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
      if (in == null) {
        why.append("no ").append(resource).append(" in the jar; ");
      } else {
        File dir = tmpDir != null ? tmpDir : new File(System.getProperty("java.io.tmpdir"));
        File file = File.createTempFile("libclphmm_jni", ".so", dir);
        file.deleteOnExit();
        Files.copy(in, file.toPath(), StandardCopyOption.REPLACE_EXISTING);
        try {
          System.load(file.getAbsolutePath());
          return done(null);
        } catch (LinkageError e) {
          why.append(file).append(": ").append(e.getMessage()).append("; ");
        }
      }
    } catch (IOException | SecurityException e) {
      why.append("extracting ").append(resource).append(": ").append(e).append("; ");
    }
    try {
      System.loadLibrary(LIBRARY_NAME);
      return done(null);
    } catch (LinkageError | SecurityException e) {
      why.append("java.library.path: ").append(e.getMessage());
    }
    return done(why.toString());
  }

  private static boolean done(String whyNot) {
    loaded = whyNot == null;
    failure = whyNot;
    return loaded;
  }

  /** Why the library could not be loaded; null once it is loaded. */
  static synchronized String failure() {
    return failure;
  }
}
