package org.clphmm.gatk;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeArguments;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeBinding;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

/**
 * The clphmm binding through GATK's PairHMMNativeBinding interface, called the way GATK's
 * VectorLoglessPairHMM calls it (load, initialize, one computeLikelihoods per region, done).
 *
 * <pre>
 *   java ... org.clphmm.gatk.BindingTest DATA_DIR          # the whole test
 *   java ... org.clphmm.gatk.BindingTest DATA_DIR --shim   # GATK's class name, shadowed
 *   java ... org.clphmm.gatk.BindingTest DATA_DIR --no-opencl   # CLPHMM_OPENCL_LIBRARY unloadable
 * </pre>
 *
 * Every input file is fed region by region through (a) Intel GKL's IntelPairHmm and
 * IntelPairHmmOMP when they load (looked up by class name, as GATK does) and (b) the clphmm
 * binding; float mode must be within 1e-5 of GKL and of clphmm's CPU reference, double mode
 * within 1e-7 of the CPU reference in double, of the double fixtures and of GKL in double. When
 * GKL cannot be loaded the test says so and compares with the CPU reference only; with
 * CLPHMM_TEST_REQUIRE_GKL set that is a failure. Bad input must throw, leave the output
 * untouched and keep the JVM and the binding usable; several binding objects on several threads
 * must reproduce the single-threaded results bit for bit.
 *
 * <p>Prints one line per check and "N passed, M failed"; exits 1 on a failure, 77 (skip) when
 * OpenCL lists no device unless CLPHMM_TEST_REQUIRE_DEVICE is set.
 */
public final class BindingTest {
  static final double FLOAT_TOL = 1e-5;
  static final double DOUBLE_TOL = 1e-7;
  static final String[] FILES = {
    "pairhmm-testdata.txt", "expected.Java.hmmresults.txt", "tiny.in", "10s.in"
  };

  private int passed, failed;
  private final long start = System.nanoTime();

  void check(boolean ok, String what) {
    String at = String.format(Locale.ROOT, "[%5.1f s] ", (System.nanoTime() - start) * 1e-9);
    if (ok) {
      passed++;
      System.out.println("ok   " + at + what);
    } else {
      failed++;
      System.out.println("FAIL " + at + what);
    }
  }

  static String fmt(double d) {
    return String.format(Locale.ROOT, "%.3g", d);
  }

  /** Max |a - b| over the elements; infinities must match exactly, NaN never does. */
  static double maxDiff(double[] a, double[] b) {
    if (a.length != b.length) return Double.POSITIVE_INFINITY;
    double m = 0;
    for (int i = 0; i < a.length; i++) {
      if (a[i] == b[i]) continue; // also equal infinities
      double d = Math.abs(a[i] - b[i]);
      if (Double.isNaN(d)) return Double.POSITIVE_INFINITY;
      m = Math.max(m, d);
    }
    return m;
  }

  static PairHMMNativeArguments args(boolean dbl) {
    PairHMMNativeArguments a = new PairHMMNativeArguments();
    a.maxNumberOfThreads = 2;
    a.useDoublePrecision = dbl;
    return a;
  }

  /** Every region through one binding, results concatenated in region order. */
  static double[] run(PairHMMNativeBinding b, Regions in) {
    double[] all = new double[in.pairs()];
    int at = 0;
    for (Regions.Region r : in.regions) {
      double[] out = new double[r.pairs()];
      b.computeLikelihoods(r.reads, r.haplotypes, out);
      System.arraycopy(out, 0, all, at, out.length);
      at += out.length;
    }
    return all;
  }

  /**
   * GKL keeps its precision in a global of its JNI library, not per object (initialize on any
   * IntelPairHmm switches them all), so it is initialized again before every run.
   */
  static double[] runGkl(PairHMMNativeBinding b, Regions in, boolean dbl) {
    b.initialize(args(dbl));
    return run(b, in);
  }

  static double[] reference(Regions in, boolean dbl) {
    double[] all = new double[in.pairs()];
    int at = 0;
    for (Regions.Region r : in.regions) {
      double[] out = new double[r.pairs()];
      ClphmmPairHmm.computeReference(r.reads, r.haplotypes, out, dbl);
      System.arraycopy(out, 0, all, at, out.length);
      at += out.length;
    }
    return all;
  }

  /** GKL's binding by class name (as GATK constructs it), loaded; null with the reason. */
  static PairHMMNativeBinding gkl(String className, StringBuilder why) {
    try {
      Object o = Class.forName(className).getDeclaredConstructor().newInstance();
      if (o instanceof ClphmmPairHmm) {
        why.append(className).append(" is clphmm's shim, not GKL");
        return null;
      }
      PairHMMNativeBinding b = (PairHMMNativeBinding) o;
      if (b.load(null)) return b;
      why.append(className).append(".load() returned false (no AVX, or libgkl_pairhmm not found)");
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      why.append(className).append(": ").append(e);
    }
    return null;
  }

  /** A binding of ours, initialized. */
  static ClphmmPairHmm clphmm(boolean dbl) {
    ClphmmPairHmm b = new ClphmmPairHmm();
    if (!b.load(null)) throw new IllegalStateException("clphmm binding does not load");
    b.initialize(args(dbl));
    return b;
  }

  public static void main(String[] argv) throws Exception {
    if (argv.length < 1) {
      System.err.println("usage: BindingTest DATA_DIR [--shim | --no-opencl]");
      System.exit(2);
    }
    BindingTest t = new BindingTest();
    Path data = Paths.get(argv[0]);
    String mode = argv.length > 1 ? argv[1] : "";
    int rc;
    try {
      rc = mode.equals("--shim")        ? t.shimTest(data)
           : mode.equals("--no-opencl") ? t.noOpenclTest(data)
                                        : t.fullTest(data);
    } catch (Throwable e) {
      e.printStackTrace(System.out);
      t.check(false, "unexpected exception: " + e);
      rc = 1;
    }
    if (rc == 77) System.exit(77);
    System.out.println(t.passed + " passed, " + t.failed + " failed");
    System.exit(t.failed == 0 ? 0 : 1);
  }

  /** 0 when a device is there; 77 to skip, or a failure, when none. */
  int deviceOrSkip() {
    boolean libraryOk;
    try {
      System.out.println("clphmm " + ClphmmPairHmm.libraryVersion());
      libraryOk = true;
    } catch (LinkageError e) {
      libraryOk = false;
      System.out.println(e.getMessage());
    }
    check(libraryOk, "the JNI library loads");
    if (!libraryOk) return 1;
    if (new ClphmmPairHmm().load(null)) return 0;
    if (System.getenv("CLPHMM_TEST_REQUIRE_DEVICE") != null) {
      check(false, "an OpenCL device (CLPHMM_TEST_REQUIRE_DEVICE is set)");
      return 1;
    }
    System.out.println("SKIP: OpenCL lists no device");
    return 77;
  }

  int fullTest(Path data) throws Exception {
    int rc = deviceOrSkip();
    if (rc != 0) return rc;

    StringBuilder why = new StringBuilder();
    PairHMMNativeBinding gklAvx = gkl("com.intel.gkl.pairhmm.IntelPairHmm", why);
    PairHMMNativeBinding gklOmp = gkl("com.intel.gkl.pairhmm.IntelPairHmmOMP", why.append(gklAvx == null ? "; " : ""));
    if (gklAvx == null || gklOmp == null) {
      System.out.println("GKL NOT LOADED: " + why);
      System.out.println("  the comparisons with GKL are skipped; clphmm is compared with its CPU reference only");
      if (System.getenv("CLPHMM_TEST_REQUIRE_GKL") != null)
        check(false, "GKL loads (CLPHMM_TEST_REQUIRE_GKL is set)");
      gklAvx = gklOmp = null;
    } else {
      System.out.println("GKL loaded: IntelPairHmm and IntelPairHmmOMP");
    }

    ClphmmPairHmm flt = clphmm(false);
    ClphmmPairHmm dbl = clphmm(true);
    System.out.println("device: " + flt.deviceName());
    check(!flt.usesDoublePrecision() && dbl.usesDoublePrecision(), "useDoublePrecision selects the mode");

    double[] worst = new double[5]; // float vs GKL AVX, OMP, reference; double vs ref, GKL
    for (String name : FILES) {
      Regions in = Regions.read(data.resolve(name));
      String head = String.format(Locale.ROOT, "%s (%d regions, %d pairs)", name, in.regions.size(), in.pairs());
      double[] f = run(flt, in);
      double[] d = run(dbl, in);
      double[] refF = reference(in, false);
      double[] refD = reference(in, true);
      double dRefF = maxDiff(f, refF);
      double dRefD = maxDiff(d, refD);
      check(dRefF <= FLOAT_TOL, head + " float: max |clphmm - CPU reference| = " + fmt(dRefF));
      check(dRefD <= DOUBLE_TOL, head + " double: max |clphmm - CPU reference double| = " + fmt(dRefD));
      worst[2] = Math.max(worst[2], dRefF);
      worst[3] = Math.max(worst[3], dRefD);
      if (gklAvx != null) {
        double a = maxDiff(f, runGkl(gklAvx, in, false));
        double o = maxDiff(f, runGkl(gklOmp, in, false));
        double g = maxDiff(d, runGkl(gklAvx, in, true));
        check(a <= FLOAT_TOL, head + " float: max |clphmm - GKL IntelPairHmm| = " + fmt(a));
        check(o <= FLOAT_TOL, head + " float: max |clphmm - GKL IntelPairHmmOMP| = " + fmt(o));
        check(g <= DOUBLE_TOL, head + " double: max |clphmm - GKL IntelPairHmm double| = " + fmt(g));
        worst[0] = Math.max(worst[0], a);
        worst[1] = Math.max(worst[1], o);
        worst[4] = Math.max(worst[4], g);
      }
      if (in.expected != null) {
        double e = maxDiff(f, in.expected);
        check(e <= FLOAT_TOL, head + " float: max |clphmm - file's EXPECTED| = " + fmt(e));
      }
      String stem = name.endsWith(".in") ? name.substring(0, name.length() - 3) : null;
      if (stem != null) {
        Path fe = data.resolve(stem + ".expected-float.txt");
        Path de = data.resolve(stem + ".expected-double.txt");
        if (Files.exists(fe)) {
          double e = maxDiff(f, Regions.values(fe));
          check(e <= FLOAT_TOL, head + " float: max |clphmm - " + fe.getFileName() + "| = " + fmt(e));
        }
        if (Files.exists(de)) {
          double e = maxDiff(d, Regions.values(de));
          check(e <= DOUBLE_TOL, head + " double: max |clphmm - " + de.getFileName() + "| = " + fmt(e));
        }
      }
    }
    System.out.println("summary: float max |clphmm - GKL| = "
        + (gklAvx != null ? fmt(worst[0]) + " (IntelPairHmm), " + fmt(worst[1]) + " (IntelPairHmmOMP)" : "n/a (GKL not loaded)")
        + ", float max |clphmm - CPU reference| = " + fmt(worst[2])
        + "; double max |clphmm - CPU reference| = " + fmt(worst[3])
        + ", double max |clphmm - GKL double| = " + (gklAvx != null ? fmt(worst[4]) : "n/a"));

    badInput(flt, data);
    unmatchedDevice();
    lifecycle();
    threads(flt, data);
    jvmSignals();
    flt.done();
    dbl.done();
    if (gklAvx != null) {
      gklAvx.done();
      gklOmp.done();
    }
    return 0;
  }

  /**
   * A device selector that matches nothing: load() is false (GATK then falls back to its next
   * implementation), not true with an initialize() that throws and ends GATK's run.
   */
  void unmatchedDevice() {
    String was = System.getProperty(ClphmmPairHmm.DEVICE_PROPERTY);
    System.setProperty(ClphmmPairHmm.DEVICE_PROPERTY, "no-such-opencl-device");
    try {
      ClphmmPairHmm b = new ClphmmPairHmm();
      check(!b.load(null), "load() with clphmm.device matching no device is false");
      expectThrow("initialize with clphmm.device matching no device", ClphmmException.class,
          "no-such-opencl-device", null, () -> b.initialize(args(false)));
      b.done();
    } finally {
      if (was == null) System.clearProperty(ClphmmPairHmm.DEVICE_PROPERTY);
      else System.setProperty(ClphmmPairHmm.DEVICE_PROPERTY, was);
    }
  }

  interface Call {
    void run() throws Exception;
  }

  /** `call` must throw `type` (message containing `text`), leave `out` as it was. */
  void expectThrow(String what, Class<? extends Throwable> type, String text, double[] out, Call call) {
    double[] before = out == null ? null : out.clone();
    try {
      call.run();
      check(false, what + ": no exception");
    } catch (Throwable e) {
      boolean ok = type.isInstance(e) && (text == null || String.valueOf(e.getMessage()).contains(text));
      if (out != null) ok &= Arrays.equals(before, out);
      check(ok, what + ": " + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  static ReadDataHolder copy(ReadDataHolder r) {
    ReadDataHolder c = new ReadDataHolder();
    c.readBases = r.readBases.clone();
    c.readQuals = r.readQuals.clone();
    c.insertionGOP = r.insertionGOP.clone();
    c.deletionGOP = r.deletionGOP.clone();
    c.overallGCP = r.overallGCP.clone();
    return c;
  }

  void badInput(ClphmmPairHmm b, Path data) throws Exception {
    Regions.Region good = Regions.read(data.resolve("tiny.in")).regions.get(0);
    ReadDataHolder[] reads = Arrays.copyOf(good.reads, 3);
    HaplotypeDataHolder[] haps = good.haplotypes;
    double[] want = new double[reads.length * haps.length];
    ClphmmPairHmm.computeReference(reads, haps, want, false);
    double[] out = new double[want.length];
    Arrays.fill(out, 42.0);

    expectThrow("null reads", NullPointerException.class, "reads", out, () -> b.computeLikelihoods(null, haps, out));
    expectThrow("null haplotypes", NullPointerException.class, "haplotypes", out, () -> b.computeLikelihoods(reads, null, out));
    expectThrow("null likelihoods", NullPointerException.class, "likelihood", null, () -> b.computeLikelihoods(reads, haps, null));
    ReadDataHolder[] r1 = reads.clone();
    r1[1] = null;
    expectThrow("null read holder", NullPointerException.class, "reads[1]", out, () -> b.computeLikelihoods(r1, haps, out));
    for (String field : new String[] {"readBases", "readQuals", "insertionGOP", "deletionGOP", "overallGCP"}) {
      ReadDataHolder[] r2 = reads.clone();
      r2[2] = copy(reads[2]);
      ReadDataHolder.class.getField(field).set(r2[2], null);
      expectThrow("null " + field, NullPointerException.class, "reads[2]." + field, out, () -> b.computeLikelihoods(r2, haps, out));
      ReadDataHolder[] r3 = reads.clone();
      r3[2] = copy(reads[2]);
      if (!field.equals("readBases")) {
        ReadDataHolder.class.getField(field).set(r3[2], Arrays.copyOf(reads[2].readQuals, reads[2].readQuals.length - 1));
        expectThrow("short " + field, IllegalArgumentException.class, "reads[2]." + field, out, () -> b.computeLikelihoods(r3, haps, out));
      }
    }
    HaplotypeDataHolder[] h1 = haps.clone();
    h1[1] = null;
    expectThrow("null haplotype holder", NullPointerException.class, "haplotypes[1]", out, () -> b.computeLikelihoods(reads, h1, out));
    HaplotypeDataHolder[] h2 = haps.clone();
    h2[0] = new HaplotypeDataHolder();
    expectThrow("null haplotypeBases", NullPointerException.class, "haplotypes[0].haplotypeBases", out, () -> b.computeLikelihoods(reads, h2, out));
    double[] shortOut = new double[want.length - 1];
    expectThrow("likelihood array too short", IllegalArgumentException.class, "likelihood array", shortOut, () -> b.computeLikelihoods(reads, haps, shortOut));

    ReadDataHolder[] r4 = reads.clone();
    r4[1] = copy(reads[1]);
    r4[1].readBases[3] = 'X';
    expectThrow("invalid read base", ClphmmException.class, "invalid base", out, () -> b.computeLikelihoods(r4, haps, out));
    HaplotypeDataHolder[] h3 = haps.clone();
    h3[1] = Regions.haplotype(new String(haps[1].haplotypeBases, "US-ASCII").replaceFirst(".$", "!"));
    expectThrow("invalid haplotype base", ClphmmException.class, "invalid base", out, () -> b.computeLikelihoods(reads, h3, out));
    ReadDataHolder[] r5 = reads.clone();
    r5[0] = copy(reads[0]);
    r5[0].deletionGOP[0] = (byte) 200;
    expectThrow("quality byte 200", ClphmmException.class, "quality", out, () -> b.computeLikelihoods(r5, haps, out));
    try {
      b.computeLikelihoods(r4, haps, out);
    } catch (ClphmmException e) {
      check(e.status() == ClphmmException.INVALID_BASE, "ClphmmException.status() is INVALID_BASE (" + e.status() + ")");
    }

    // The JVM and the binding survive: the same object computes correctly afterwards.
    b.computeLikelihoods(reads, haps, out);
    check(maxDiff(out, want) <= FLOAT_TOL, "after the errors the binding still computes (" + fmt(maxDiff(out, want)) + ")");

    double[] none = {7.0};
    b.computeLikelihoods(new ReadDataHolder[0], haps, none);
    check(none[0] == 7.0, "a region without reads writes nothing");
    ReadDataHolder empty = Regions.read("", "", "", "", "");
    double[] e = new double[haps.length];
    b.computeLikelihoods(new ReadDataHolder[] {empty}, haps, e);
    check(e[0] == Double.NEGATIVE_INFINITY, "an empty read gives -inf");
    double[] longer = new double[want.length + 1];
    longer[want.length] = 5.0;
    b.computeLikelihoods(reads, haps, longer);
    check(longer[want.length] == 5.0 && maxDiff(Arrays.copyOf(longer, want.length), want) <= FLOAT_TOL,
        "a longer likelihood array: the pairs written, the rest untouched");
  }

  void lifecycle() {
    ClphmmPairHmm b = new ClphmmPairHmm();
    double[] out = new double[1];
    ReadDataHolder[] r = {Regions.read("ACGT", "IIII", "IIII", "IIII", "++++")};
    HaplotypeDataHolder[] h = {Regions.haplotype("ACGT")};
    expectThrow("compute before initialize", IllegalStateException.class, "initialize", out, () -> b.computeLikelihoods(r, h, out));
    b.initialize(null); // GKL's default: float
    b.computeLikelihoods(r, h, out);
    check(out[0] < 0 && out[0] > -1, "initialize(null) then compute: " + out[0]);
    b.done();
    expectThrow("compute after done", IllegalStateException.class, "initialize", out, () -> b.computeLikelihoods(r, h, out));
    b.done(); // twice is harmless
    System.setProperty(ClphmmPairHmm.DEVICE_PROPERTY, "no such device 1234");
    try {
      expectThrow("clphmm.device matching nothing", ClphmmException.class, "no such device 1234", null, () -> b.initialize(null));
    } finally {
      System.clearProperty(ClphmmPairHmm.DEVICE_PROPERTY);
    }
    System.setProperty(ClphmmPairHmm.DEVICE_PROPERTY, "0");
    try {
      b.initialize(args(false));
      check(!b.deviceName().isEmpty(), "clphmm.device=0 selects device 0: " + b.deviceName());
      b.done();
    } finally {
      System.clearProperty(ClphmmPairHmm.DEVICE_PROPERTY);
    }
    // A failed initialize of an initialized object leaves it uninitialized, not on its old
    // context: the old one computed in double, the caller asked for float on another device.
    b.initialize(args(true));
    check(b.usesDoublePrecision(), "initialize(double) computes in double");
    System.setProperty(ClphmmPairHmm.DEVICE_PROPERTY, "no such device 1234");
    try {
      expectThrow("initialize again, on a device matching nothing", ClphmmException.class, "no such device 1234", null, () -> b.initialize(args(false)));
    } finally {
      System.clearProperty(ClphmmPairHmm.DEVICE_PROPERTY);
    }
    check(b.deviceName().isEmpty() && !b.usesDoublePrecision(),
        "after a failed initialize: no device (\"" + b.deviceName() + "\"), not double");
    out[0] = 3.0;
    expectThrow("compute after a failed initialize", IllegalStateException.class, "no such device 1234", out, () -> b.computeLikelihoods(r, h, out));
    b.done();
    expectThrow("compute after a failed initialize and done", IllegalStateException.class, "call initialize", out, () -> b.computeLikelihoods(r, h, out));
    b.initialize(null);
    b.computeLikelihoods(r, h, out);
    check(out[0] < 0 && out[0] > -1 && !b.usesDoublePrecision(), "initialize after a failed one: float, computes " + out[0]);
    b.done();
  }

  static int divide(int a, int b) {
    return a / b;
  }

  static int length(int[] a) {
    return a.length;
  }

  /**
   * The JVM turns SIGFPE and SIGSEGV into ArithmeticException and NullPointerException. After
   * OpenCL initialised and compiled (PoCL installs its own SIGFPE handler, its LLVM crash
   * handlers), those must still arrive: without the binding's repair the first division by zero
   * of the interpreter raised nothing on PoCL 3.1.
   */
  /**
   * Signals 1-31 that the process catches and ignores (SigCgt, SigIgn of /proc/self/status), or
   * null where that file is not there. Taken before the binding's class loads.
   */
  static long[] signalMasks() {
    Path status = Paths.get("/proc/self/status");
    long cgt = -1, ign = -1;
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("SigCgt:")) cgt = Long.parseUnsignedLong(line.substring(7).trim(), 16);
        if (line.startsWith("SigIgn:")) ign = Long.parseUnsignedLong(line.substring(7).trim(), 16);
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
    return cgt < 0 || ign < 0 ? null : new long[] {cgt & 0x7fffffffL, ign & 0x7fffffffL};
  }

  static final long[] MASKS_AT_START = signalMasks();

  void jvmSignals() {
    // The OpenCL runtime's handlers (PoCL's, LLVM's on fifteen signals) are all gone again: the
    // process catches and ignores the signals it did before any context existed.
    long[] now = signalMasks();
    if (MASKS_AT_START != null && now != null)
      check(Arrays.equals(MASKS_AT_START, now), String.format(Locale.ROOT,
          "after OpenCL: the same signals caught (%x, at start %x) and ignored (%x, at start %x)",
          now[0], MASKS_AT_START[0], now[1], MASKS_AT_START[1]));

    int n = 20000, arith = 0, npe = 0;
    for (int i = 0; i < n; i++) {
      try {
        divide(i, i % 2 == 0 ? 0 : 1);
      } catch (ArithmeticException e) {
        arith++;
      }
      try {
        length(i % 2 == 0 ? null : new int[1]);
      } catch (NullPointerException e) {
        npe++;
      }
    }
    check(arith == n / 2 && npe == n / 2, "after OpenCL: every integer division by zero throws ("
        + arith + " of " + n / 2 + "), every null dereference throws (" + npe + " of " + n / 2 + ")");
  }

  /** Several objects on several threads, one object shared by two threads: same bits. */
  void threads(ClphmmPairHmm shared, Path data) throws Exception {
    List<Regions.Region> work = new ArrayList<>();
    work.addAll(Regions.read(data.resolve("tiny.in")).regions);
    work.addAll(Regions.read(data.resolve("pairhmm-testdata.txt")).regions.subList(0, 15));
    // `shared` (the test's float object) gives the single-threaded results first.
    List<double[]> want = new ArrayList<>();
    for (Regions.Region r : work) {
      double[] out = new double[r.pairs()];
      shared.computeLikelihoods(r.reads, r.haplotypes, out);
      want.add(out);
    }
    int nThreads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(nThreads);
    List<Future<Integer>> results = new ArrayList<>();
    for (int t = 0; t < nThreads; t++) {
      final boolean own = t < 2;
      final int first = t;
      results.add(pool.submit(() -> {
        ClphmmPairHmm b = own ? clphmm(false) : shared;
        int bad = 0;
        for (int k = 0; k < work.size(); k++) {
          int i = (k + first * 7) % work.size(); // different orders per thread
          Regions.Region r = work.get(i);
          double[] out = new double[r.pairs()];
          b.computeLikelihoods(r.reads, r.haplotypes, out);
          if (!Arrays.equals(out, want.get(i))) bad++;
        }
        if (own) b.done();
        return bad;
      }));
    }
    int bad = 0;
    for (Future<Integer> f : results) bad += f.get();
    pool.shutdown();
    check(bad == 0, nThreads + " threads (2 own objects, 1 object shared by 2), " + work.size()
        + " regions each: results equal the single-threaded ones bit for bit (" + bad + " regions differ)");
  }

  /**
   * GATK unmodified: the shim jar ahead of GKL's on the class path. Constructs
   * com.intel.gkl.pairhmm.IntelPairHmmOMP by name as GATK's VectorLoglessPairHMM does and
   * checks that it is clphmm and gives GKL's results, while IntelPairHmm stays GKL's.
   */
  int shimTest(Path data) throws Exception {
    int rc = deviceOrSkip();
    if (rc != 0) return rc;
    // VectorLoglessPairHMM, implementation OMP: new IntelPairHmmOMP(), load(null), initialize.
    PairHMMNativeBinding omp =
        (PairHMMNativeBinding) Class.forName("com.intel.gkl.pairhmm.IntelPairHmmOMP").getDeclaredConstructor().newInstance();
    check(omp instanceof ClphmmPairHmm, "com.intel.gkl.pairhmm.IntelPairHmmOMP is clphmm's: " + omp.getClass().getProtectionDomain().getCodeSource().getLocation());
    check(omp.load(null), "IntelPairHmmOMP.load(null) is true");
    PairHMMNativeArguments a = new PairHMMNativeArguments();
    a.maxNumberOfThreads = 4; // GATK's default --native-pair-hmm-threads
    a.useDoublePrecision = false;
    omp.initialize(a);
    Regions in = Regions.read(data.resolve("10s.in"));
    double[] got = run(omp, in);
    double dRef = maxDiff(got, reference(in, false));
    check(dRef <= FLOAT_TOL, "10s.in through the shim: max |clphmm - CPU reference| = " + fmt(dRef));
    StringBuilder why = new StringBuilder();
    PairHMMNativeBinding avx = gkl("com.intel.gkl.pairhmm.IntelPairHmm", why);
    if (avx == null) {
      System.out.println("GKL NOT LOADED: " + why + "; the shim is compared with the CPU reference only");
      if (System.getenv("CLPHMM_TEST_REQUIRE_GKL") != null)
        check(false, "GKL loads (CLPHMM_TEST_REQUIRE_GKL is set)");
    } else {
      check(!(avx instanceof ClphmmPairHmm), "com.intel.gkl.pairhmm.IntelPairHmm is still GKL's");
      double d = maxDiff(got, runGkl(avx, in, false));
      check(d <= FLOAT_TOL, "10s.in through the shim: max |clphmm - GKL IntelPairHmm| = " + fmt(d));
      avx.done();
    }
    omp.done();
    return 0;
  }

  /**
   * A machine without OpenCL (the test sets CLPHMM_OPENCL_LIBRARY to a file that does not
   * exist): GATK constructs IntelPairHmmOMP by name and calls load(null), which must return
   * false, so that GATK falls back to its next implementation instead of failing; initialize
   * throws ClphmmException naming the missing library, the object stays unusable with an
   * IllegalStateException (never a crash), and the CPU reference still computes.
   */
  int noOpenclTest(Path data) throws Exception {
    String lib = System.getenv("CLPHMM_OPENCL_LIBRARY");
    check(lib != null && !Files.exists(Paths.get(lib)),
        "CLPHMM_OPENCL_LIBRARY names a missing file: " + lib);
    if (lib == null) return 1;
    System.out.println("clphmm " + ClphmmPairHmm.libraryVersion());
    PairHMMNativeBinding omp =
        (PairHMMNativeBinding) Class.forName("com.intel.gkl.pairhmm.IntelPairHmmOMP").getDeclaredConstructor().newInstance();
    check(omp instanceof ClphmmPairHmm && !omp.load(null),
        "without OpenCL IntelPairHmmOMP (the shim) .load(null) is false: GATK falls back");
    ClphmmPairHmm b = new ClphmmPairHmm();
    check(!b.load(null), "without OpenCL ClphmmPairHmm.load(null) is false");
    String name = Paths.get(lib).getFileName().toString();
    expectThrow("initialize without OpenCL", ClphmmException.class, "clphmm: no OpenCL runtime: could not load " + lib, null,
        () -> b.initialize(args(false)));
    Regions.Region r = Regions.read(data.resolve("tiny.in")).regions.get(0);
    double[] out = new double[r.pairs()];
    Arrays.fill(out, 3.0);
    expectThrow("compute after initialize failed without OpenCL", IllegalStateException.class, name, out,
        () -> b.computeLikelihoods(r.reads, r.haplotypes, out));
    b.done();
    double[] ref = new double[r.pairs()];
    ClphmmPairHmm.computeReference(r.reads, r.haplotypes, ref, false);
    boolean finite = ref.length > 0;
    for (double v : ref) finite &= Double.isFinite(v) && v < 0;
    check(finite, "the CPU reference computes without OpenCL (" + ref.length + " pairs, first " + ref[0] + ")");
    return 0;
  }
}
