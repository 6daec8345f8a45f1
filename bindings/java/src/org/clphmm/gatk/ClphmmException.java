package org.clphmm.gatk;

/**
 * A clphmm call failed: the status code of {@code clphmm.h} and the
 * library's detailed message (which read or haplotype and position for an
 * invalid base, which OpenCL call for a device failure, ...).
 */
public class ClphmmException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** {@code CLPHMM_ERROR_INVALID_BASE}: a base other than ACGTN. */
  public static final int INVALID_BASE = 2;
  /** {@code CLPHMM_ERROR_INVALID_QUALITY}: a quality byte of 128 or more. */
  public static final int INVALID_QUALITY = 3;
  /** {@code CLPHMM_ERROR_TOO_LARGE}: sizes overflow or exceed a limit. */
  public static final int TOO_LARGE = 5;
  /** {@code CLPHMM_ERROR_NO_OPENCL}: no OpenCL runtime or platform. */
  public static final int NO_OPENCL = 6;
  /** {@code CLPHMM_ERROR_NO_DEVICE}: no device matches the selector. */
  public static final int NO_DEVICE = 7;

  private final int status;

  public ClphmmException(int status, String message) {
    super(message);
    this.status = status;
  }

  /** The {@code clphmm_status} value (never 0). */
  public int status() {
    return status;
  }
}
