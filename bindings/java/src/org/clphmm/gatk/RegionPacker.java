package org.clphmm.gatk;

import org.broadinstitute.gatk.nativebindings.pairhmm.HaplotypeDataHolder;
import org.broadinstitute.gatk.nativebindings.pairhmm.ReadDataHolder;

/**
 * One region's reads and haplotypes checked and packed into one byte array, so that the native
 * call copies two arrays instead of reaching into every holder (about 700 JNI calls for a region
 * of 30 reads and 10 haplotypes: most of the layer's 24 us per region on the H100's host).
 *
 * <p>Layout: per read its bases, base qualities, insertion, deletion and gap continuation
 * qualities, each as long as the read; then each haplotype's bases. {@code lengths} holds the
 * reads' lengths, then the haplotypes'. The arrays are reused between regions (they only grow);
 * an object packs one region at a time (ClphmmPairHmm's methods are synchronized).
 */
final class RegionPacker {
  private static final String[] READ_FIELDS = {
    "readBases", "readQuals", "insertionGOP", "deletionGOP", "overallGCP"
  };

  byte[] bytes = new byte[1 << 16];
  int[] lengths = new int[256];
  int used;
  int nReads;
  int nHaplotypes;

  /**
   * Checks and packs a region: null arrays or holders give a {@link NullPointerException},
   * quality arrays of another length than the read's and a result array that is too short an
   * {@link IllegalArgumentException}, naming the element.
   */
  void pack(ReadDataHolder[] reads, HaplotypeDataHolder[] haplotypes, double[] likelihoods) {
    if (reads == null) throw new NullPointerException("reads array is null");
    if (haplotypes == null) throw new NullPointerException("haplotypes array is null");
    if (likelihoods == null) throw new NullPointerException("likelihood array is null");
    long pairs = (long) reads.length * haplotypes.length;
    if (pairs > likelihoods.length)
      throw new IllegalArgumentException(
          "likelihood array has " + likelihoods.length + " elements, " + reads.length
              + " reads x " + haplotypes.length + " haplotypes need " + pairs);
    long total = 0;
    for (int r = 0; r < reads.length; r++) total += 5L * readLength(reads, r);
    for (int h = 0; h < haplotypes.length; h++) total += bases(haplotypes, h).length;
    if (total > Integer.MAX_VALUE - 8)
      throw new ClphmmException(ClphmmException.TOO_LARGE, "clphmm: region of " + total
          + " bytes is too large for one call");
    ensure((int) total, reads.length + haplotypes.length);
    int at = 0;
    for (int r = 0; r < reads.length; r++) {
      ReadDataHolder rd = reads[r];
      int n = rd.readBases.length;
      System.arraycopy(rd.readBases, 0, bytes, at, n);
      System.arraycopy(rd.readQuals, 0, bytes, at + n, n);
      System.arraycopy(rd.insertionGOP, 0, bytes, at + 2 * n, n);
      System.arraycopy(rd.deletionGOP, 0, bytes, at + 3 * n, n);
      System.arraycopy(rd.overallGCP, 0, bytes, at + 4 * n, n);
      at += 5 * n;
      lengths[r] = n;
    }
    for (int h = 0; h < haplotypes.length; h++) {
      byte[] a = haplotypes[h].haplotypeBases;
      System.arraycopy(a, 0, bytes, at, a.length);
      at += a.length;
      lengths[reads.length + h] = a.length;
    }
    used = at;
    nReads = reads.length;
    nHaplotypes = haplotypes.length;
  }

  /** The read's length, its five arrays checked (without allocating: a region is many reads). */
  private static int readLength(ReadDataHolder[] reads, int r) {
    ReadDataHolder rd = reads[r];
    if (rd == null) throw new NullPointerException("reads[" + r + "] is null");
    int n = field(rd.readBases, r, 0, -1);
    field(rd.readQuals, r, 1, n);
    field(rd.insertionGOP, r, 2, n);
    field(rd.deletionGOP, r, 3, n);
    field(rd.overallGCP, r, 4, n);
    return n;
  }

  /** Field k of read r: not null, and as long as the read (want >= 0). */
  private static int field(byte[] a, int r, int k, int want) {
    if (a == null) throw new NullPointerException("reads[" + r + "]." + READ_FIELDS[k] + " is null");
    if (want >= 0 && a.length != want)
      throw new IllegalArgumentException(
          "reads[" + r + "]." + READ_FIELDS[k] + " has " + a.length + " bytes but readBases has "
              + want);
    return a.length;
  }

  private static byte[] bases(HaplotypeDataHolder[] haplotypes, int h) {
    HaplotypeDataHolder hp = haplotypes[h];
    if (hp == null) throw new NullPointerException("haplotypes[" + h + "] is null");
    if (hp.haplotypeBases == null)
      throw new NullPointerException("haplotypes[" + h + "].haplotypeBases is null");
    return hp.haplotypeBases;
  }

  private void ensure(int nBytes, int nLengths) {
    if (bytes.length < nBytes) bytes = new byte[Math.max(nBytes, bytes.length * 2)];
    if (lengths.length < nLengths) lengths = new int[Math.max(nLengths, lengths.length * 2)];
  }
}
