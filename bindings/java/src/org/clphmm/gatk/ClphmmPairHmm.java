package org.clphmm.gatk;

import java.io.File;
import java.lang.ref.Cleaner;
import java.util.logging.Logger;
import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeArguments;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeBinding;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

/**
 * GATK's native PairHMM interface ({@code PairHMMNativeBinding} of
 * gatk-native-bindings 1.0) computed by clphmm on an OpenCL device.
 *
 * <p>Use it as GATK uses Intel GKL's {@code IntelPairHmm}: {@link #load(File)}, then {@link
 * #initialize(PairHMMNativeArguments)}, then {@link #computeLikelihoods} once per region (every
 * read against every haplotype, log10 likelihoods, read-major: {@code likelihoods[r *
 * haplotypes.length + h]}), then {@link #done()}.
 *
 * <ul>
 *   <li>{@code useDoublePrecision} selects clphmm's double mode (GATK Java {@code
 *       LoglessPairHMM} semantics); otherwise float mode (GKL semantics, rescued in double).
 *       {@code maxNumberOfThreads} is ignored: the device runs the region.
 *   <li>Device: the system property {@code clphmm.device}, else the environment variable {@code
 *       CLPHMM_DEVICE}, else the first GPU, else the first CPU device (a decimal index, {@code
 *       gpu}, {@code cpu} or a case-insensitive substring of the device name).
 *   <li>Errors are exceptions, never partial results: null arrays or holders ({@link
 *       NullPointerException}), quality arrays whose length differs from the read's or a result
 *       array that is too short ({@link IllegalArgumentException}), invalid bases or quality
 *       bytes, device failures ({@link ClphmmException} with clphmm's message). The array of
 *       likelihoods is written only when the whole region succeeded.
 *   <li>Each object owns one clphmm context. Its methods are synchronized, so an object may be
 *       shared by threads (calls then run one at a time); separate objects run concurrently.
 *   <li>{@link #initialize} on an initialized object releases the old context before it opens
 *       the new one (whose device memory it may need). When it throws, the object is left
 *       uninitialized, not on its old context: {@link #computeLikelihoods} then throws {@link
 *       IllegalStateException} with the reason until an {@code initialize} succeeds, so that no
 *       region is computed on a device or in a precision that the caller tried to replace.
 * </ul>
 */
public class ClphmmPairHmm implements PairHMMNativeBinding {
  /** System property that selects the OpenCL device (overrides {@code CLPHMM_DEVICE}). */
  public static final String DEVICE_PROPERTY = "clphmm.device";
  /** System property naming the JNI library file to load instead of the jar's copy. */
  public static final String LIBRARY_PROPERTY = NativeLoader.LIBRARY_PROPERTY;

  private static final Logger logger = Logger.getLogger(ClphmmPairHmm.class.getName());
  private static final Cleaner cleaner = Cleaner.create();

  /**
   * The native bindings; shared with the cleaner, which frees them if done() was never called:
   * the context in use ({@code value}) and the float context that {@link #load} opened for the
   * first {@link #initialize} ({@code spare}, on the device {@code spareDevice} selected).
   */
  private static final class Handle implements Runnable {
    long value;
    long spare;
    String spareDevice;

    @Override
    public synchronized void run() {
      long h = value;
      value = 0;
      if (h != 0) nativeDestroy(h);
      dropSpare();
    }

    synchronized void dropSpare() {
      long s = spare;
      spare = 0;
      spareDevice = null;
      if (s != 0) nativeDestroy(s);
    }

    /* The spare context if it was opened for `device` in float (0 otherwise; dropped). */
    synchronized long takeSpare(String device, boolean dbl) {
      long s = spare;
      boolean fits = !dbl && java.util.Objects.equals(device, spareDevice);
      if (fits) {
        spare = 0;
        spareDevice = null;
        return s;
      }
      dropSpare();
      return 0;
    }
  }

  private final Handle handle = new Handle();
  private final RegionPacker packer = new RegionPacker();
  private double packSeconds;
  private boolean useDouble;
  private String deviceName = "";
  /* Why the last initialize failed; null after a success or done(). */
  private String initFailure;

  public ClphmmPairHmm() {
    cleaner.register(this, handle);
  }

  /**
   * Loads the JNI library (see the class comment of the loader: property {@code
   * clphmm.jni.library}, the jar's copy extracted to {@code tmpDir}, {@code java.library.path})
   * and opens the device that {@link #initialize} will use (property {@code clphmm.device}, else
   * {@code CLPHMM_DEVICE}, else the default), building its float kernels, so that a binding that
   * loads also initializes: GATK's {@code FASTEST_AVAILABLE} falls back to its next
   * implementation only when {@code load} returns false, and an exception from {@code
   * initialize} would end its run instead. That context serves the first float {@code
   * initialize} on the same device (else it is released then). Returns false, with the reason
   * logged, when the library does not load, no device matches or the kernels do not build, as
   * GKL's {@code load} does on a CPU without AVX. On an initialized object it only checks the
   * library.
   */
  @Override
  public synchronized boolean load(File tmpDir) {
    if (!NativeLoader.load(tmpDir)) {
      logger.warning("clphmm: cannot load the JNI library: " + NativeLoader.failure());
      return false;
    }
    synchronized (handle) {
      if (handle.value != 0 || handle.spare != 0) return true;
    }
    String device = deviceProperty();
    try {
      long h = nativeCreate(device, false);
      synchronized (handle) {
        handle.spare = h;
        handle.spareDevice = device;
      }
      return true;
    } catch (ClphmmException e) {
      logger.warning(e.getMessage());
    }
    return false;
  }

  /* The device selector: the system property, else null (CLPHMM_DEVICE, else the default). */
  private static String deviceProperty() {
    String device = System.getProperty(DEVICE_PROPERTY);
    return device != null && device.isEmpty() ? null : device;
  }

  /**
   * Opens the device (one clphmm context per object) in the precision of {@code args} (null:
   * float). Calling it again replaces the context: the old one is released first, and when this
   * call throws the object is left uninitialized (see the class comment), not on the old context.
   *
   * @throws ClphmmException when no device matches or the kernels cannot be built
   * @throws UnsatisfiedLinkError when the JNI library cannot be loaded
   */
  @Override
  public synchronized void initialize(PairHMMNativeArguments args) {
    boolean dbl = args != null && args.useDoublePrecision;
    String device = deviceProperty();
    long spare = handle.takeSpare(device, dbl);
    release();
    long h;
    String name;
    try {
      requireLibrary();
      h = spare != 0 ? spare : nativeCreate(device, dbl);
      try {
        name = nativeDeviceName(h);
      } catch (RuntimeException | Error e) {
        nativeDestroy(h);
        throw e;
      }
    } catch (RuntimeException | Error e) {
      initFailure = e.getClass().getSimpleName() + ": " + e.getMessage();
      throw e;
    }
    synchronized (handle) {
      handle.value = h;
    }
    useDouble = dbl;
    deviceName = name;
    logger.info(
        "clphmm " + nativeVersion() + " PairHMM on \"" + deviceName + "\", "
            + (dbl ? "double" : "float") + " precision");
  }

  /**
   * Computes every read against every haplotype of one region: {@code likelihoods[r *
   * haplotypes.length + h]} receives the log10 likelihood of read r given haplotype h. Nothing
   * is written when an exception is thrown.
   */
  @Override
  public synchronized void computeLikelihoods(
      ReadDataHolder[] reads, HaplotypeDataHolder[] haplotypes, double[] likelihoods) {
    compute(reads, haplotypes, likelihoods, false);
  }

  private void compute(
      ReadDataHolder[] reads,
      HaplotypeDataHolder[] haplotypes,
      double[] likelihoods,
      boolean skipCompute) {
    long h = current();
    long t0 = System.nanoTime();
    packer.pack(reads, haplotypes, likelihoods);
    packSeconds = (System.nanoTime() - t0) * 1e-9;
    nativeCompute(
        h,
        packer.bytes,
        packer.used,
        packer.lengths,
        packer.nReads,
        packer.nHaplotypes,
        likelihoods,
        skipCompute);
  }

  /** Frees the context. Further calls need {@link #initialize} again. */
  @Override
  public synchronized void done() {
    release();
  }

  /** Name of the OpenCL device of this object ("" before {@link #initialize}). */
  public synchronized String deviceName() {
    return deviceName;
  }

  /** True when this object computes in double precision (false before {@link #initialize}). */
  public synchronized boolean usesDoublePrecision() {
    return useDouble;
  }

  /** The version of the clphmm library behind the binding. */
  public static String libraryVersion() {
    requireLibrary();
    return nativeVersion();
  }

  /**
   * Seconds of the last {@link #computeLikelihoods} call, by stage: {@code [0]} checking the
   * Java arrays and copying them (packed in Java, then one copy into native memory), {@code [1]}
   * the {@code clphmm_compute} call, {@code [2]} copying the results back, {@code [3]} the whole
   * call after the packing's start, {@code [4]} {@code clphmm_stats.wall_seconds}, {@code [5]}
   * kernel seconds (OpenCL profiling: 0 unless the environment sets CLPHMM_PROFILE=1).
   */
  public synchronized double[] lastCallSeconds() {
    double[] s = nativeTimes(current());
    s[0] += packSeconds;
    s[3] += packSeconds;
    return s;
  }

  /**
   * Everything {@link #computeLikelihoods} does except the computation itself: the arrays are
   * checked and copied, nothing is computed or written. Measures the JNI layer (bench/jni.sh).
   */
  synchronized void marshalOnly(
      ReadDataHolder[] reads, HaplotypeDataHolder[] haplotypes, double[] likelihoods) {
    compute(reads, haplotypes, likelihoods, true);
  }

  /**
   * The same region computed by clphmm's scalar CPU reference ({@code clphmm_reference}): needs
   * no OpenCL. The oracle of the tests.
   */
  public static void computeReference(
      ReadDataHolder[] reads,
      HaplotypeDataHolder[] haplotypes,
      double[] likelihoods,
      boolean useDoublePrecision) {
    requireLibrary();
    RegionPacker p = new RegionPacker();
    p.pack(reads, haplotypes, likelihoods);
    nativeReference(
        p.bytes, p.used, p.lengths, p.nReads, p.nHaplotypes, likelihoods, useDoublePrecision);
  }

  private long current() {
    synchronized (handle) {
      if (handle.value == 0)
        throw new IllegalStateException(
            initFailure != null
                ? "clphmm binding is not initialized: its last initialize failed ("
                    + initFailure
                    + "; any earlier context was released: call initialize again)"
                : "clphmm binding is not initialized (call initialize; done() frees it)");
      return handle.value;
    }
  }

  /* Back to the state before any initialize: no context, float, no device, no failure. */
  private void release() {
    handle.run();
    deviceName = "";
    useDouble = false;
    initFailure = null;
  }

  private static void requireLibrary() {
    if (!NativeLoader.load(null))
      throw new UnsatisfiedLinkError("clphmm: cannot load the JNI library: " + NativeLoader.failure());
  }

  /* Registered by JNI_OnLoad of libclphmm_jni (clphmm_jni.c). */
  private static native String nativeVersion();

  private static native long nativeCreate(String device, boolean useDouble);

  private static native void nativeDestroy(long handle);

  private static native String nativeDeviceName(long handle);

  /* A region packed by RegionPacker: bytes[0, used), the reads' lengths then the haplotypes'. */
  private static native void nativeCompute(
      long handle,
      byte[] bytes,
      int used,
      int[] lengths,
      int nReads,
      int nHaplotypes,
      double[] likelihoods,
      boolean skipCompute);

  private static native double[] nativeTimes(long handle);

  private static native void nativeReference(
      byte[] bytes,
      int used,
      int[] lengths,
      int nReads,
      int nHaplotypes,
      double[] likelihoods,
      boolean useDouble);
}
