package org.clphmm.gatk;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

/**
 * The regions of a test input, as GATK hands them to a PairHMMNativeBinding: one region = one
 * batch of the {@code .in} format, or consecutive lines with the same read and qualities of the
 * one-pair-per-line format (GATK's {@code --pair-hmm-results-file}). Qualities are phred+33
 * characters; base qualities below 6 are raised to 6, the convention of GATK's, GKL's and
 * clphmm's readers, so every implementation gets the same bytes.
 */
final class Regions {
  static final class Region {
    final ReadDataHolder[] reads;
    final HaplotypeDataHolder[] haplotypes;

    Region(List<ReadDataHolder> reads, List<HaplotypeDataHolder> haplotypes) {
      this.reads = reads.toArray(new ReadDataHolder[0]);
      this.haplotypes = haplotypes.toArray(new HaplotypeDataHolder[0]);
    }

    int pairs() {
      return reads.length * haplotypes.length;
    }

    long cells() {
      long c = 0;
      for (ReadDataHolder r : reads)
        for (HaplotypeDataHolder h : haplotypes)
          c += (long) r.readBases.length * h.haplotypeBases.length;
      return c;
    }
  }

  final String name;
  final List<Region> regions = new ArrayList<>();
  /** The EXPECTED column of the one-pair-per-line format, in result order; null otherwise. */
  final double[] expected;

  private Regions(String name, double[] expected) {
    this.name = name;
    this.expected = expected;
  }

  int pairs() {
    int n = 0;
    for (Region r : regions) n += r.pairs();
    return n;
  }

  long cells() {
    long n = 0;
    for (Region r : regions) n += r.cells();
    return n;
  }

  static byte[] quals(String s, int floor) {
    byte[] q = new byte[s.length()];
    for (int i = 0; i < q.length; i++) q[i] = (byte) Math.max(s.charAt(i) - 33, floor);
    return q;
  }

  static ReadDataHolder read(String bases, String bq, String iq, String dq, String gcp) {
    ReadDataHolder r = new ReadDataHolder();
    r.readBases = bases.getBytes(StandardCharsets.US_ASCII);
    r.readQuals = quals(bq, 6);
    r.insertionGOP = quals(iq, 0);
    r.deletionGOP = quals(dq, 0);
    r.overallGCP = quals(gcp, 0);
    return r;
  }

  static HaplotypeDataHolder haplotype(String bases) {
    HaplotypeDataHolder h = new HaplotypeDataHolder();
    h.haplotypeBases = bases.getBytes(StandardCharsets.US_ASCII);
    return h;
  }

  static Regions read(Path path) throws IOException {
    List<String[]> lines = new ArrayList<>();
    try (BufferedReader in = Files.newBufferedReader(path, StandardCharsets.US_ASCII)) {
      for (String line; (line = in.readLine()) != null; ) {
        String t = line.trim();
        if (t.isEmpty() || t.startsWith("#")) continue;
        lines.add(t.split("\\s+"));
      }
    }
    if (lines.isEmpty()) throw new IOException(path + ": empty");
    String name = path.getFileName().toString();
    if (lines.get(0).length == 7) return pairsFormat(name, lines);
    if (lines.get(0).length == 2) return batchFormat(name, path, lines);
    throw new IOException(path + ": unknown format");
  }

  private static Regions pairsFormat(String name, List<String[]> lines) throws IOException {
    double[] expected = new double[lines.size()];
    Regions out = new Regions(name, expected);
    List<ReadDataHolder> reads = new ArrayList<>();
    List<HaplotypeDataHolder> haps = new ArrayList<>();
    String[] key = null;
    int i = 0;
    for (String[] t : lines) {
      if (t.length != 7) throw new IOException(name + ": line of " + t.length + " tokens");
      String[] k = Arrays.copyOfRange(t, 1, 6);
      if (key == null || !Arrays.equals(key, k)) {
        if (key != null) out.regions.add(new Region(reads, haps));
        reads = new ArrayList<>();
        haps = new ArrayList<>();
        reads.add(read(t[1], t[2], t[3], t[4], t[5]));
        key = k;
      }
      haps.add(haplotype(t[0]));
      expected[i++] = Double.parseDouble(t[6]);
    }
    out.regions.add(new Region(reads, haps));
    return out;
  }

  private static Regions batchFormat(String name, Path path, List<String[]> lines)
      throws IOException {
    Regions out = new Regions(name, null);
    int i = 0;
    while (i < lines.size()) {
      String[] h = lines.get(i++);
      if (h.length != 2) throw new IOException(path + ": bad batch header");
      int nr = Integer.parseInt(h[0]);
      int nh = Integer.parseInt(h[1]);
      if (i + nr + nh > lines.size()) throw new IOException(path + ": truncated batch");
      List<ReadDataHolder> reads = new ArrayList<>();
      List<HaplotypeDataHolder> haps = new ArrayList<>();
      for (int r = 0; r < nr; r++) {
        String[] t = lines.get(i++);
        if (t.length != 5) throw new IOException(path + ": bad read line");
        reads.add(read(t[0], t[1], t[2], t[3], t[4]));
      }
      for (int k = 0; k < nh; k++) haps.add(haplotype(lines.get(i++)[0]));
      out.regions.add(new Region(reads, haps));
    }
    return out;
  }

  /** One log10 value per line (the {@code *.expected-*.txt} fixtures). */
  static double[] values(Path path) throws IOException {
    List<String> lines = Files.readAllLines(path, StandardCharsets.US_ASCII);
    List<Double> v = new ArrayList<>();
    for (String line : lines) {
      String t = line.trim();
      if (!t.isEmpty() && !t.startsWith("#")) v.add(Double.parseDouble(t));
    }
    double[] a = new double[v.size()];
    for (int i = 0; i < a.length; i++) a[i] = v.get(i);
    return a;
  }
}
