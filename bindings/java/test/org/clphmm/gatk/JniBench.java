package org.clphmm.gatk;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeArguments;
import org.broadinstitute.gatk.nativebindings.pairhmm.PairHMMNativeBinding;

/**
 * Times every region of an input file, one computeLikelihoods call per region as GATK makes
 * them, through the clphmm binding and through Intel GKL's IntelPairHmmOMP (when it loads).
 * Reports regions/s, pairs/s and cells/s, and the cost of the JNI layer itself: the binding's
 * call time minus the time of clphmm_compute inside it, and a call that does everything but
 * compute (arrays checked and copied). Run by bench/jni.sh.
 *
 * <pre>
 * JniBench FILE [--repeat N] [--precision float|double] [--threads N] [--no-gkl]
 * </pre>
 */
public final class JniBench {
  static String f(String fmt, Object... a) {
    return String.format(Locale.ROOT, fmt, a);
  }

  static double mean(double[] v) {
    double t = 0;
    for (double x : v) t += x;
    return v.length == 0 ? 0 : t / v.length;
  }

  /** Median of a copy. */
  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length == 0 ? 0 : s[s.length / 2];
  }

  interface Step {
    void run(Regions.Region r, double[] out);
  }

  /** Seconds of each pass over all regions (one call per region). */
  static double[] passes(List<Regions.Region> regions, int repeat, Step step) {
    double[] t = new double[repeat];
    for (int k = 0; k < repeat; k++) {
      long t0 = System.nanoTime();
      for (Regions.Region r : regions) step.run(r, new double[r.pairs()]);
      t[k] = (System.nanoTime() - t0) * 1e-9;
    }
    return t;
  }

  static void rates(String name, Regions in, double seconds) {
    System.out.println(f("%-26s %10.3f s/pass %12.1f regions/s %14.0f pairs/s %10.3f GCUPS",
        name, seconds, in.regions.size() / seconds, in.pairs() / seconds, in.cells() / seconds * 1e-9));
  }

  public static void main(String[] argv) throws Exception {
    Path file = null;
    int repeat = 5, threads = 4;
    boolean dbl = false, gkl = true;
    for (int i = 0; i < argv.length; i++) {
      switch (argv[i]) {
        case "--repeat": repeat = Integer.parseInt(argv[++i]); break;
        case "--threads": threads = Integer.parseInt(argv[++i]); break;
        case "--precision": dbl = argv[++i].equals("double"); break;
        case "--no-gkl": gkl = false; break;
        default: file = Paths.get(argv[i]);
      }
    }
    if (file == null || repeat < 1) {
      System.err.println("usage: JniBench FILE [--repeat N] [--precision float|double] [--threads N] [--no-gkl]");
      System.exit(2);
    }
    Regions in = Regions.read(file);
    List<Regions.Region> regions = in.regions;
    PairHMMNativeArguments args = new PairHMMNativeArguments();
    args.maxNumberOfThreads = threads;
    args.useDoublePrecision = dbl;
    System.out.println(f("input: %s: %d regions, %d pairs, %.3g cells; %s precision; %d timed passes "
        + "after one warm-up pass; times are medians over the passes", file, regions.size(), in.pairs(),
        (double) in.cells(), dbl ? "double" : "float", repeat));

    ClphmmPairHmm b = new ClphmmPairHmm();
    if (!b.load(null)) {
      System.err.println("jni bench: the clphmm binding does not load (see the warning above)");
      System.exit(1);
    }
    long c0 = System.nanoTime();
    b.initialize(args);
    double create = (System.nanoTime() - c0) * 1e-9;
    System.out.println("clphmm " + ClphmmPairHmm.libraryVersion() + " on \"" + b.deviceName() + "\"");
    // Warm-up: kernels built or loaded from the cache, buffers grown.
    long w0 = System.nanoTime();
    passes(regions, 1, (r, out) -> b.computeLikelihoods(r.reads, r.haplotypes, out));
    double warm = (System.nanoTime() - w0) * 1e-9;
    System.out.println(f("context creation %.3f s, warm-up pass %.3f s", create, warm));

    // Per call: Java wall time of computeLikelihoods and the native stages.
    int n = regions.size() * repeat;
    double[] call = new double[n], compute = new double[n], marshal = new double[n],
        copyOut = new double[n], libWall = new double[n];
    double[] passSeconds = new double[repeat];
    int k = 0;
    for (int p = 0; p < repeat; p++) {
      long p0 = System.nanoTime();
      for (Regions.Region r : regions) {
        double[] out = new double[r.pairs()];
        long t0 = System.nanoTime();
        b.computeLikelihoods(r.reads, r.haplotypes, out);
        call[k] = (System.nanoTime() - t0) * 1e-9;
        double[] s = b.lastCallSeconds();
        marshal[k] = s[0];
        compute[k] = s[1];
        copyOut[k] = s[2];
        libWall[k] = s[4];
        k++;
      }
      passSeconds[p] = (System.nanoTime() - p0) * 1e-9;
    }
    double[] overhead = new double[n];
    for (int i = 0; i < n; i++) overhead[i] = call[i] - compute[i];
    double[] only = passes(regions, repeat, (r, out) -> b.marshalOnly(r.reads, r.haplotypes, out));
    double[] onlyCall = new double[regions.size()];
    for (int i = 0; i < regions.size(); i++) {
      Regions.Region r = regions.get(i);
      double[] out = new double[r.pairs()];
      double best = Double.MAX_VALUE;
      for (int j = 0; j < repeat; j++) {
        long t0 = System.nanoTime();
        b.marshalOnly(r.reads, r.haplotypes, out);
        best = Math.min(best, (System.nanoTime() - t0) * 1e-9);
      }
      onlyCall[i] = best;
    }
    double clphmmPass = median(passSeconds);
    System.out.println();
    rates("clphmm binding", in, clphmmPass);
    System.out.println(f("per region, mean over %d calls: call %.1f us = clphmm_compute %.1f us + "
        + "JNI layer %.1f us (copy in and checks %.1f us, copy out %.1f us)%s",
        n, mean(call) * 1e6, mean(compute) * 1e6, mean(overhead) * 1e6, mean(marshal) * 1e6,
        mean(copyOut) * 1e6,
        mean(libWall) > 0 ? f("; clphmm_stats wall %.1f us", mean(libWall) * 1e6) : ""));
    System.out.println(f("per region, median: call %.1f us, clphmm_compute %.1f us, JNI layer %.1f us",
        median(call) * 1e6, median(compute) * 1e6, median(overhead) * 1e6));
    System.out.println(f("JNI layer without compute (arrays checked and copied, nothing computed): "
        + "%.1f us per region (mean of the best of %d calls), %.4f s per pass (%.2f%% of the pass "
        + "with compute)", mean(onlyCall) * 1e6, repeat, median(only), 100 * median(only) / clphmmPass));
    b.done();

    if (!gkl) return;
    StringBuilder why = new StringBuilder();
    PairHMMNativeBinding omp = BindingTest.gkl("com.intel.gkl.pairhmm.IntelPairHmmOMP", why);
    if (omp == null) {
      System.out.println("GKL IntelPairHmmOMP: not available (" + why + "): clphmm only");
      return;
    }
    omp.initialize(args);
    passes(regions, 1, (r, out) -> omp.computeLikelihoods(r.reads, r.haplotypes, out));
    double gklPass = median(passes(regions, repeat, (r, out) -> omp.computeLikelihoods(r.reads, r.haplotypes, out)));
    rates(f("GKL IntelPairHmmOMP (%d thr)", threads), in, gklPass);
    omp.done();
    System.out.println(f("clphmm binding / GKL IntelPairHmmOMP: %.2fx the throughput", gklPass / clphmmPass));
  }
}
