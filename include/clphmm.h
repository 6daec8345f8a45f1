/*
 * clphmm: GATK HaplotypeCaller's PairHMM forward algorithm on OpenCL devices.
 *
 * One public header. Conventions:
 *  - every function that can fail returns a clphmm_status; CLPHMM_SUCCESS is 0;
 *  - on failure, clphmm_last_error() holds a detailed message (which batch,
 *    read, position; which file and line; which OpenCL call and error);
 *  - the library never prints and never exits; it keeps no global state
 *    except a per-thread last-error buffer and immutable probability tables;
 *  - output arrays are either fully written or left untouched.
 *
 * Semantics are those of ../docs in the project (PAIRHMM_SPEC): float mode
 * follows Intel GKL (float, rescued in double below 1e-28), double mode
 * follows GATK Java LoglessPairHMM.
 */
#ifndef CLPHMM_H
#define CLPHMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CLPHMM_SHARED_BUILD)
#define CLPHMM_API __declspec(dllexport)
#elif defined(__GNUC__)
#define CLPHMM_API __attribute__((visibility("default")))
#else
#define CLPHMM_API
#endif

/* ---- Version ----------------------------------------------------------- */

#define CLPHMM_VERSION_MAJOR 0
#define CLPHMM_VERSION_MINOR 2
#define CLPHMM_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH" (may differ from the header
 * the caller was compiled with). */
CLPHMM_API const char *clphmm_version(void);

/* ---- Status codes -------------------------------------------------------- */

typedef enum clphmm_status {
  CLPHMM_SUCCESS = 0,
  CLPHMM_ERROR_INVALID_ARGUMENT = 1, /* NULL pointer, bad option value */
  CLPHMM_ERROR_INVALID_BASE = 2,     /* a base other than ACGTN (any case) */
  CLPHMM_ERROR_INVALID_QUALITY = 3,  /* a phred byte of 128 or more */
  CLPHMM_ERROR_OUT_OF_MEMORY = 4,    /* host allocation failed */
  CLPHMM_ERROR_TOO_LARGE = 5,        /* sizes overflow or exceed a limit */
  CLPHMM_ERROR_NO_OPENCL = 6,        /* no OpenCL runtime or platform */
  CLPHMM_ERROR_NO_DEVICE = 7,        /* no device matches the selector */
  CLPHMM_ERROR_BUILD_FAILED = 8,     /* kernel compilation failed */
  CLPHMM_ERROR_OPENCL = 9,           /* an OpenCL call failed */
  CLPHMM_ERROR_IO = 10,              /* a file could not be opened or read */
  CLPHMM_ERROR_PARSE = 11            /* a malformed input file */
} clphmm_status;

/* A short constant description of a status ("invalid base", ...). */
CLPHMM_API const char *clphmm_status_string(clphmm_status status);

/* ---- Inputs -------------------------------------------------------------- */

/* Precision mode (see PAIRHMM_SPEC section 10). */
typedef enum clphmm_precision {
  CLPHMM_PRECISION_FLOAT = 0, /* GKL: float, double rescue below 1e-28 */
  CLPHMM_PRECISION_DOUBLE = 1 /* GATK Java: double only */
} clphmm_precision;

/* The longest read or haplotype, in bases: a longer one is refused with
 * CLPHMM_ERROR_TOO_LARGE (the device path keeps lengths in 32 bits). */
#define CLPHMM_MAX_LENGTH 4294967280u

/* One read: bases (ACGTN, either case) and four raw phred arrays (0..127,
 * no +33 offset), each `length` bytes (at most CLPHMM_MAX_LENGTH).
 * Pointers may be NULL only when length is 0. */
typedef struct clphmm_read {
  const char *bases;
  const uint8_t *base_quals;
  const uint8_t *ins_quals;
  const uint8_t *del_quals;
  const uint8_t *gcp_quals; /* gap-continuation penalty, 10 in GATK */
  size_t length;
} clphmm_read;

typedef struct clphmm_haplotype {
  const char *bases;
  size_t length;
} clphmm_haplotype;

/* GATK's unit of work: every read against every haplotype. Results are
 * read-major: pair (r, h) of this batch lands at offset + r * n_haplotypes + h
 * where offset is the number of pairs in earlier batches. */
typedef struct clphmm_batch {
  const clphmm_read *reads;
  size_t n_reads;
  const clphmm_haplotype *haplotypes;
  size_t n_haplotypes;
} clphmm_batch;

/* Number of results that `n_batches` batches produce (sum of reads x
 * haplotypes). Returns CLPHMM_ERROR_TOO_LARGE if that overflows size_t. */
CLPHMM_API clphmm_status clphmm_count_pairs(const clphmm_batch *batches,
                                            size_t n_batches, size_t *n_pairs);

/* ---- CPU reference ------------------------------------------------------- */

/* Compute every pair on the CPU with the scalar reference implementation:
 * no OpenCL needed. Validates all inputs first, as clphmm_compute does:
 * the batches' pointers and sizes (counts and lengths that overflow:
 * CLPHMM_ERROR_TOO_LARGE) before any base or quality; on error nothing is
 * written. `out` must hold clphmm_count_pairs() values. */
CLPHMM_API clphmm_status clphmm_reference(const clphmm_batch *batches,
                                          size_t n_batches,
                                          clphmm_precision precision,
                                          double *out);

/* ---- Devices ------------------------------------------------------------- */

typedef enum clphmm_device_type {
  CLPHMM_DEVICE_OTHER = 0,
  CLPHMM_DEVICE_CPU = 1,
  CLPHMM_DEVICE_GPU = 2,
  CLPHMM_DEVICE_ACCELERATOR = 3
} clphmm_device_type;

typedef struct clphmm_device_info {
  size_t index; /* position in clphmm's flat device list */
  clphmm_device_type type;
  char name[256];
  char vendor[256];
  char platform[256];
  char version[256]; /* CL_DEVICE_VERSION */
  char driver[256];  /* CL_DRIVER_VERSION */
  unsigned compute_units;
  unsigned clock_mhz;
  uint64_t global_mem_bytes;
  uint64_t local_mem_bytes;
  int has_fp64; /* cl_khr_fp64 or a double fp config */
} clphmm_device_info;

/* The OpenCL devices clphmm can see, all platforms flattened in platform
 * order. *count is 0 with CLPHMM_SUCCESS when a runtime exists but has no
 * device; CLPHMM_ERROR_NO_OPENCL when there is no runtime or platform. */
CLPHMM_API clphmm_status clphmm_device_count(size_t *count);
CLPHMM_API clphmm_status clphmm_device_get_info(size_t index,
                                                clphmm_device_info *info);

/* ---- Contexts ------------------------------------------------------------ */

typedef struct clphmm_context clphmm_context;

typedef struct clphmm_options {
  /* Device selector: a decimal index into the device list, "gpu", "cpu", or
   * a case-insensitive substring of the device name (the first device that
   * matches); spaces around it are ignored. NULL or "" (no selector) means
   * the CLPHMM_DEVICE environment variable, a selector of the same form
   * (unset or "": none), else the first GPU, else the first CPU, else the
   * first device.
   * Several devices: a comma-separated list of selectors ("0,1",
   * "gpu,cpu", the same device twice: "0,0"; at most CLPHMM_MAX_DEVICES),
   * or "all": every GPU, or every device when there is no GPU (also as an
   * item of a list). One context then drives them all: see clphmm_compute.
   * An empty item, a selector of spaces alone, or one that matches no
   * device is an error naming it. */
  const char *device;
  clphmm_precision precision;
  /* Upper bound on matrix cells per kernel launch; 0 = library default
   * (2^38 on GPUs, 2^36 elsewhere). Bigger inputs are split into chunks. */
  uint64_t max_cells_per_launch;
  /* Directory of the on-disk cache of compiled kernels. NULL means
   * $CLPHMM_CACHE_DIR when set, else $XDG_CACHE_HOME/clphmm, else
   * ~/.cache/clphmm; "" (here or in the variable) turns the cache off. An
   * unusable directory only turns caching off (see clphmm_diagnostics). */
  const char *cache_dir;
  /* Device memory, in bytes, that one launch and its inputs should stay
   * within; 0 = half the device's global memory. Work is split into chunks
   * to fit. Independently of it, when the device fails an allocation the
   * work is halved and retried, down to a single pair. */
  uint64_t max_device_bytes;
  /* 1: measure the device's times for clphmm_stats (kernel_seconds,
   * rows_seconds, upload_seconds, download_seconds, the bins' and devices'
   * kernel_seconds) with OpenCL profiling; 0 (the default): those stay 0.
   * Profiling costs the host time per command (on NVIDIA's driver over a
   * quarter of a HaplotypeCaller region's call). $CLPHMM_PROFILE (0 or 1)
   * overrides it (added in 0.2). */
  int profile;
} clphmm_options;

/* Fill `options` with the defaults (float precision, default device). */
CLPHMM_API void clphmm_options_init(clphmm_options *options);

/* Open a device and compile the kernels it needs. `options` may be NULL. On
 * failure *context is NULL and clphmm_last_error(NULL) says why. */
CLPHMM_API clphmm_status clphmm_context_create(const clphmm_options *options,
                                               clphmm_context **context);
CLPHMM_API void clphmm_context_destroy(clphmm_context *context);

/* Most devices of one context. */
#define CLPHMM_MAX_DEVICES 16

/* The device a context runs on; with several devices, the first one of the
 * list. */
CLPHMM_API clphmm_status clphmm_context_device(const clphmm_context *context,
                                               clphmm_device_info *info);
/* The number of devices of a context (0 for NULL), and device `i` of them,
 * in the order of the selector list. */
CLPHMM_API size_t clphmm_context_device_count(const clphmm_context *context);
CLPHMM_API clphmm_status clphmm_context_device_at(const clphmm_context *context,
                                                  size_t i,
                                                  clphmm_device_info *info);

/* Compute every pair of every batch on the context's device, in its
 * precision mode. On error (invalid input included) nothing is written to
 * `out`, and the context stays usable.
 *
 * Threads: calls on one context from several threads are safe and run one
 * after the other (the context serialises them; clphmm_context_stats and
 * clphmm_context_diagnostics wait for the call in progress). Contexts are
 * independent: several threads with a context each, on one device or
 * several, run at once. clphmm_last_error(context) is the context's last
 * failure, whichever thread's call it was.
 *
 * Work is cut into chunks that go through a pipeline: the host stages
 * chunk k+1 (on a pool of threads, one per core) while the device computes
 * chunk k; reads go to the device as bytes and their transitions are
 * computed there. Buffers are kept in the context and reused by later
 * calls (clphmm_context_destroy frees them).
 *
 * Several devices: a call large enough to be worth it (about 2^33 cells,
 * or twice $CLPHMM_CHUNK_CELLS) is cut into chunks in input order that
 * the devices take from a shared queue as they finish theirs, each with
 * its own pipeline on its own thread and its own double rescue; smaller
 * calls run on the first device. Results are those of one device of the
 * same kind, bit for bit, in input order, whatever the split. A device
 * that fails (an OpenCL error, or no kernel builds) is dropped for the
 * rest of the context's life and its part of the call is redone on the
 * others: the call succeeds, clphmm_last_error(context) says "not an
 * error: ..." and which device was dropped and why, and so do the
 * statistics and diagnostics. The call fails only when every device
 * failed; the next call then tries every device again. */
CLPHMM_API clphmm_status clphmm_compute(clphmm_context *context,
                                        const clphmm_batch *batches,
                                        size_t n_batches, double *out);

/* Most read-length bins (kernel variants) a device uses. */
#define CLPHMM_MAX_BINS 16

/* One read-length bin of a compute call: the pairs whose read has at most
 * `max_rows` bases (and more than the previous bin's) ran on `variant`;
 * the last bin also takes every longer read, tile after tile (a long-read
 * variant's bin, "GxC/WG:long", has max_rows UINT32_MAX). Launches of
 * the double rescue count in their bins too (their pairs again). A
 * device's table may add a small-call variant ("GxC/WG:small", max_rows
 * 0, after the bins): every pair of a call (or chunk) too small to fill
 * the device runs on it, in one launch instead of one per bin, and so do
 * a larger chunk's pairs of bins too small to fill it (their reads of one
 * tile of it; CLPHMM_SMALL_BINS), which their own bins then do not count. */
typedef struct clphmm_bin_stats {
  uint32_t max_rows;
  char variant[32]; /* "GxC/WG": lanes per pair x rows per lane / group */
  uint64_t pairs;
  uint64_t cells;
  uint64_t launches;
  double kernel_seconds;
} clphmm_bin_stats;

/* One device's part of a compute call. */
typedef struct clphmm_device_stats {
  size_t index;   /* the device's clphmm_device_info.index */
  char name[256]; /* its name */
  uint64_t pairs; /* pairs it computed (a dropped device's part counts
                     on the devices that redid it) */
  uint64_t cells;
  uint64_t rescued_pairs;
  uint64_t chunks;
  double kernel_seconds;
  double busy_seconds; /* wall time it spent on the call, failed attempts
                          included */
  int dropped;         /* dropped after a failure (this call or earlier) */
} clphmm_device_stats;

/* Statistics of the last successful clphmm_compute on this context. */
typedef struct clphmm_stats {
  uint64_t pairs;
  uint64_t cells;         /* sum of read length x haplotype length */
  uint64_t rescued_pairs; /* float results recomputed in double */
  uint64_t launches;      /* launches of the PairHMM kernel, rescue included
                             (row preparation not included) */
  double kernel_seconds;  /* the time the device ran the call's kernels,
                             the row preparation included: the union of
                             their OpenCL profiling intervals (kernels
                             running at once count once), 0 unless
                             clphmm_options.profile */
  /* Per read-length bin, by increasing max_rows (added in 0.1). */
  size_t n_bins;
  clphmm_bin_stats bins[CLPHMM_MAX_BINS];
  /* Where the time of the call went (added in 0.2). The stages of
   * consecutive chunks overlap (a chunk is prepared while the one before
   * computes), so the stages may add up to more than wall_seconds.
   * Device stages are sums of OpenCL profiling intervals (kernel_seconds
   * their union; 0 unless clphmm_options.profile); host stages sum the
   * wall time of the threads that ran them. */
  double wall_seconds;     /* the whole clphmm_compute call */
  double prepare_seconds;  /* host: validation, ordering, staging */
  double upload_seconds;   /* device: host-to-device copies (of chunks
                              of 1 MiB or more: smaller ones are not
                              timed, which would slow them) */
  double rows_seconds;     /* device: the row preparation kernels (part of
                              kernel_seconds, in no bin) */
  double download_seconds; /* device: device-to-host copies */
  double rescue_seconds;   /* wall: the double rescue of float mode */
  double finish_seconds;   /* host: results written to `out` */
  uint64_t chunks;         /* pieces the work was cut into */
  /* Per device of the context, in the order of the selector list (added
   * with several devices). The totals above are their sums, except
   * wall_seconds (the call's). */
  size_t n_devices;
  clphmm_device_stats devices[CLPHMM_MAX_DEVICES];
  /* Float mode: pairs whose first pass stopped early, their float sum
   * proven to fall below GKL's threshold (they are among rescued_pairs;
   * README, "Long reads"; added with the early exit). */
  uint64_t early_exits;
  /* Pairs computed by the CPU reference: the double rescue on devices
   * without fp64, and, where the exact pass is not available, the rescue
   * pairs whose device result cannot stand (see exact_pairs); added with
   * the early exit. */
  uint64_t cpu_pairs;
  /* Float mode: rescue pairs whose fast (scaled) double sum did not stand
   * (near double's subnormal range, or extreme quality jumps), computed
   * again on the device in GKL's exact operation order (README, "Long
   * reads"; added with that pass). */
  uint64_t exact_pairs;
  /* Pairs that a double pass stopped because a whole row of theirs had
   * underflowed to zeros: every later row is zeros too and their sum is 0
   * (double mode: -inf; float mode's rescue: on to the exact pass, which
   * may stop them as well and is counted again). The results are those of
   * computing every row (README, "Long reads"). */
  uint64_t underflow_stops;
  /* Pairs whose rounds of tiles ran on several work-groups at once (split
   * pairs: few long pairs on GPUs; README, "Long reads"; $CLPHMM_SPLIT).
   * A pair of the rescue or the exact pass counts again there. */
  uint64_t split_pairs;
  /* Float mode: pairs of early_exits that went straight to the exact pass
   * (among exact_pairs and rescued_pairs) instead of the rescue's fast
   * form: GKL's double computation either way (README, "Long reads";
   * $CLPHMM_EXACT_DIRECT). */
  uint64_t exact_direct;
  /* Float mode: pairs of long reads computed in double before their float
   * pass (double_first; $CLPHMM_DOUBLE_FIRST rows and up), and of those
   * the pairs whose float pass then ran because their double results did
   * not prove that GKL rescues them (double_first_checked). Results are
   * those of the float pass first (README, "Long reads"; added with it). */
  uint64_t double_first;
  uint64_t double_first_checked;
} clphmm_stats;
CLPHMM_API clphmm_status clphmm_context_stats(const clphmm_context *context,
                                              clphmm_stats *stats);

/* Build everything the context may need now instead of on first use: the
 * kernels of every read-length bin in its precision (and, in float mode on
 * devices with fp64, the double kernels of the rescue and, where the rescue
 * uses the scaled form, those of the exact pass: see exact_pairs), in float
 * mode with and without the early exit of long pairs. Loads them from the
 * kernel cache when it has them. The programs of launches that split long
 * pairs over several work-groups (GPUs) are built on their first use. */
CLPHMM_API clphmm_status clphmm_context_warmup(clphmm_context *context);

/* What happened behind the scenes since the context was created: kernel
 * builds and the kernel cache, fallbacks, retries and recoveries. (A
 * successful clphmm_compute that had to replace a kernel variant also says
 * so in clphmm_last_error(context).) */
typedef struct clphmm_diagnostics {
  uint64_t programs_compiled; /* kernel programs compiled from source */
  uint64_t programs_loaded;   /* kernel programs built from cached binaries */
  uint64_t cache_writes;      /* entries written to the kernel cache */
  uint64_t cache_rejected;    /* corrupt, truncated, foreign or unloadable
                                 cache entries deleted (then rebuilt) */
  uint64_t variant_fallbacks; /* kernels that failed to build and were
                                 replaced by a simpler variant */
  uint64_t alloc_retries;     /* device allocation failures answered by
                                 halving the work */
  uint64_t resets;            /* OpenCL contexts recreated after a failure */
  int cache_enabled;          /* entries are looked up in cache_dir */
  int cache_writable;         /* new entries are written to cache_dir */
  char cache_dir[1024];       /* the cache directory ("" when none) */
  /* Notes, oldest first, one per line: why the cache is off or read-only,
   * rejected entries, variant fallbacks (with the build error), resets. */
  char detail[4096];
  /* Several devices (added with them): the context's devices and those
   * dropped after a failure (detail names each, with the error; with
   * several devices the counts above are sums and each device's notes
   * follow a line naming it). */
  size_t devices;
  size_t devices_dropped;
} clphmm_diagnostics;
CLPHMM_API clphmm_status clphmm_context_diagnostics(
    const clphmm_context *context, clphmm_diagnostics *diagnostics);

/* Detailed message for the last failure. With a context: that context's
 * last failure, whichever thread's call it was (a copy for this thread,
 * valid until its next clphmm_last_error call with a context; another
 * thread's call may fail meanwhile without changing it). With NULL: the
 * last failure on this thread, of any call (clphmm_context_create's and
 * the calls without a context in particular). Never NULL; "" if none. */
CLPHMM_API const char *clphmm_last_error(const clphmm_context *context);

/* ---- Files --------------------------------------------------------------- */

/* A parsed input file: its batches plus owned storage. Two formats,
 * detected from the content:
 *  - one pair per line, 7 tokens (GATK's --pair-hmm-results-file):
 *      HAP READ BASEQ INSQ DELQ GCP EXPECTED;
 *    consecutive lines with the same read and the same four quality strings
 *    become one batch (1 read x k haplotypes), so results keep file order;
 *  - batches: a line "NR NH", NR lines "READ BASEQ INSQ DELQ GCP", NH
 *    haplotype lines; repeated.
 * In both formats a line starting with '#' is a comment (whole lines only:
 * '#' is also a quality character) and blank lines are skipped. Batches
 * with no reads or no haplotypes are kept (they produce no pairs).
 * Qualities are phred+33 characters. Tokens are separated by any run of
 * spaces or tabs; CRLF and a missing final newline are accepted. Control
 * bytes other than tab and CR (NUL, binary or compressed data) and lines
 * longer than CLPHMM_MAX_LINE_BYTES are errors. */
typedef struct clphmm_dataset clphmm_dataset;

/* Longest input line accepted by the readers (newline excluded): bounds the
 * memory a reader needs for one line. Longer lines fail with
 * CLPHMM_ERROR_TOO_LARGE. */
#define CLPHMM_MAX_LINE_BYTES ((size_t)1 << 26)

enum {
  /* Keep base qualities as written. By default qualities below 6 are raised
   * to 6, the convention of GATK's and GKL's test readers. */
  CLPHMM_READ_RAW_BASE_QUALS = 1u << 0
};

/* Parse a file. On error *dataset is NULL and clphmm_last_error(NULL) reads
 * "PATH:LINE: what is wrong" ("PATH: cannot open: ..." when the file cannot
 * be opened or read). */
CLPHMM_API clphmm_status clphmm_dataset_read_file(const char *path,
                                                  unsigned flags,
                                                  clphmm_dataset **dataset);
/* Same, from memory; `name` is used in messages (NULL: "<memory>"). */
CLPHMM_API clphmm_status clphmm_dataset_read_memory(const char *data,
                                                    size_t size,
                                                    const char *name,
                                                    unsigned flags,
                                                    clphmm_dataset **dataset);
CLPHMM_API void clphmm_dataset_destroy(clphmm_dataset *dataset);

CLPHMM_API const clphmm_batch *clphmm_dataset_batches(const clphmm_dataset *ds);
CLPHMM_API size_t clphmm_dataset_n_batches(const clphmm_dataset *ds);
CLPHMM_API size_t clphmm_dataset_n_pairs(const clphmm_dataset *ds);
/* Expected values of the one-pair-per-line format (one per pair, in result
 * order), or NULL for the batch format. */
CLPHMM_API const double *clphmm_dataset_expected(const clphmm_dataset *ds);
/* 1-based line on which batch `b` starts (for messages). */
CLPHMM_API size_t clphmm_dataset_batch_line(const clphmm_dataset *ds, size_t b);

/* ---- Streaming reader ---------------------------------------------------- */

/* Reads a file (or memory) chunk by chunk, so that inputs of any size can be
 * computed in bounded memory: each chunk is a clphmm_dataset of whole
 * batches, in file order, owned by the caller and independent of the reader
 * (results of consecutive chunks concatenate to the results of the whole
 * file). The whole-file functions above are one chunk without bounds. The
 * reader holds one line of input at a time, plus the chunk being built. */
typedef struct clphmm_reader clphmm_reader;

/* Open a file (anything fopen reads: pipes and /dev/stdin included). Fails
 * with CLPHMM_ERROR_IO ("PATH: cannot open: ...") when it cannot be opened
 * or is a directory. Nothing is parsed yet. */
CLPHMM_API clphmm_status clphmm_reader_open(const char *path, unsigned flags,
                                            clphmm_reader **reader);
/* Same over `size` bytes at `data`, which must stay valid until the reader
 * is closed (chunks copy what they need); `name` is used in messages (NULL:
 * "<memory>"). */
CLPHMM_API clphmm_status clphmm_reader_open_memory(const char *data,
                                                   size_t size,
                                                   const char *name,
                                                   unsigned flags,
                                                   clphmm_reader **reader);
/* The next chunk: whole batches, at least one, added until the chunk holds
 * `max_pairs` pairs or `max_bytes` bytes of storage (bases, qualities and
 * the structures pointing to them), whichever comes first; 0 means no
 * bound. A chunk may exceed a bound by its last batch (a batch is never
 * split). At the end of the input *chunk is NULL with CLPHMM_SUCCESS. An
 * input without any batch fails on the first call ("empty file"). On error
 * *chunk is NULL, the message reads "NAME:LINE: what is wrong", and every
 * later call fails the same way: batches of earlier chunks are valid, the
 * rest of the input is not read. Free each chunk with
 * clphmm_dataset_destroy. */
CLPHMM_API clphmm_status clphmm_reader_next(clphmm_reader *reader,
                                            size_t max_pairs, size_t max_bytes,
                                            clphmm_dataset **chunk);
/* Close the file and free the reader (chunks already returned stay
 * valid). NULL is ignored. */
CLPHMM_API void clphmm_reader_close(clphmm_reader *reader);

/* ---- Variant tables --------------------------------------------------- */

/* What clphmm would use on a device, and why. The variant list comes from,
 * in this order: the CLPHMM_VARIANTS environment variable ("env"), the
 * tuning file ("file", written by `clphmm-bench --tune`), the built-in
 * table ("builtin"). In the file and the built-in table the most specific
 * matching entry wins: device name, then architecture, then vendor, then
 * device type, then the generic entry. See README.md, "Variant tables". */
typedef struct clphmm_device_plan {
  char variants[512];     /* "GxC/WG,..." by increasing rows (GxC) */
  char shuffle[16];       /* cross-lane backend: local, khr, intel, nvidia */
  int fma;                /* 1: kernels fuse multiply-adds */
  char source[16];        /* "builtin", "file" or "env" */
  char key[384];          /* the entry that matched, e.g. name "H200", type
                             gpu; a file entry adds its line: "(line 3)" */
  char tuning_file[1024]; /* the tuning file consulted ("" if none could be
                             named; it need not exist) */
  char arch[64];          /* architecture used for matching ("" unknown) */
  char subgroup_extensions[256]; /* the device's subgroup extensions */
} clphmm_device_plan;

/* The plan of device `index` (as in clphmm_device_get_info). Fails with
 * CLPHMM_ERROR_PARSE when the tuning file is malformed (the message names
 * the file and line) and with CLPHMM_ERROR_INVALID_ARGUMENT for a bad
 * CLPHMM_VARIANTS / CLPHMM_SHUFFLE. */
CLPHMM_API clphmm_status clphmm_device_get_plan(size_t index,
                                                clphmm_device_plan *plan);

/* Record a variant list for devices whose name contains `device_name` in
 * the tuning file `path` (NULL: the file clphmm reads, see
 * clphmm_device_plan.tuning_file): the existing entry keyed by exactly that
 * name alone is replaced, or a new one is added; other lines are kept
 * verbatim. Missing directories are created; the file is written to a
 * temporary file and renamed. `variants` must parse ("8x4/128,16x8/128"). */
CLPHMM_API clphmm_status clphmm_tuning_file_update(const char *path,
                                                   const char *device_name,
                                                   const char *variants);

#ifdef __cplusplus
}
#endif

#endif /* CLPHMM_H */
