/* A context drives one or several devices. Each device has an engine: its
 * queue, its variant set and compiled kernels, and the state kept across
 * compute calls (thread pool, staging and device buffers, device tables).
 * A context of one device calls its engine directly (context.c); a
 * context of several splits each large call between its engines
 * (multi.c). */
#ifndef CLPHMM_CONTEXT_H
#define CLPHMM_CONTEXT_H

#include <pthread.h>

#include "base/error.h"
#include "engine/buffers.h"
#include "engine/first.h"
#include "engine/pack.h"
#include "engine/pool.h"
#include "engine/schedule.h"
#include "engine/spans.h"
#include "engine/stage.h"
#include "engine/trace.h"
#include "opencl/build.h"
#include "tuning/plan.h"

/* An in-order queue and the device buffers of the chunks it runs (it runs
 * them one after the other, so one set serves them all). An engine has
 * its main queue, and a side queue for float mode's speculative double
 * pass (speculate.c), which then runs beside the float pass. */
typedef struct cph_devset {
  cl_command_queue queue;
  cph_devbuf raw, reads, hcodes, rows, weights, pairs, groups, sums, bound;
  cph_devbuf sync;         /* split pairs' ticket and flags, zeroed when made */
  uint32_t split_ticket;   /* the next ticket in `sync` (launch.c) */
  cph_devbuf tables[3][2]; /* [flavor][scaled]: cl/prep.cl's tables */
  cph_pack in, out; /* small chunks' inputs and outputs (engine/pack.h) */
  int unflushed;    /* commands enqueued on `queue` since its last clFlush */
} cph_devset;

/* A chunk in flight: its staging, schedule, downloaded sums and the events
 * of its commands (for profiling and for waiting). */
typedef struct cph_event {
  cl_event ev;
  int kind;        /* CPH_EV_* */
  int bin;         /* a kernel's statistics bin, -1: none */
  uint64_t amount; /* a copy's bytes, a launch's cells, else 0 (the trace) */
} cph_event;
enum { CPH_EV_UPLOAD, CPH_EV_PREP, CPH_EV_KERNEL, CPH_EV_DOWNLOAD };

enum { CPH_SPECULATE_NEVER, CPH_SPECULATE_ALWAYS, CPH_SPECULATE_AUTO };
/* cph_engine.exit_cells' default */
#define CPH_EXIT_CELLS ((uint64_t)1 << 24)
/* cph_engine.exact_direct's default */
#define CPH_EXACT_DIRECT_CELLS ((uint64_t)1 << 24)
#define CPH_SPEC_AFTER 8 /* cph_engine.spec_left */
/* cph_engine.small_bins' default, work-groups per compute unit (H200,
 * 20,000 HaplotypeCaller-like pairs in one call, kernel ms with 0, 1, 2
 * and 4: 0.660, 0.645, 0.607, 0.607; the 6e10-cell mix 21.95, 21.96,
 * 21.97, 22.25). */
#define CPH_SMALL_BIN_GROUPS 2

/* cph_engine.inline_cols' default: launches whose pairs' haplotypes are
 * at least this long on average (weighted by read length: cells per read
 * row) compute their rows in the kernel. A row costs the kernel a few
 * table loads and double products per pair that a prepared row does not,
 * against the preparation's kernel and the prepared rows' loads. On the
 * H100 (peak suite, 1e10 cells, reads as long as the haplotypes) the
 * kernel's own rows took 3.30 ms instead of 3.58 at 128 bases, but 3.45
 * instead of 3.41 at 96 and 4.08 instead of 4.02 at 64. (With three
 * double divisions per row, before the reciprocal tables of
 * cph_prep_tables and the rows carried in the lane (cl/rows.cl), the
 * crossing was near 192.) */
#define CPH_INLINE_COLS 128
/* cph_engine.rescue_min's default */
#define CPH_RESCUE_MIN_PAIRS 16384
/* cph_engine.chunk_ramp's default */
#define CPH_CHUNK_RAMP 2
/* cph_engine.rescue_max's default */
#define CPH_RESCUE_MAX_PAIRS ((size_t)1 << 18)

/* Two slots for the chunks of the float or double pass, one for the
 * double rescue between them. */
#define CPH_SLOTS 3
#define CPH_RESCUE_SLOT 2
typedef struct cph_slot {
  cph_stage stage;
  cph_sched sched;
  cph_hostbuf sums;
  cph_event *events;
  size_t n_events, cap_events;
  int set;    /* its kernel set (CPH_SET_*) */
  int timed;  /* its uploads have events (are counted in upload_seconds) */
  int packed; /* its copies go through the packs (engine/pack.h) */
  cph_hostbuf pack_in, pack_out; /* their host staging */
  size_t out_off[2]; /* the outputs' offsets in pack_out (launch.c) */
  int active;        /* submitted, not yet collected */
  cph_devset *d;     /* the queue and buffers of its chunk */
  /* Chunks whose inputs go over the copy queue (launch.c): the slot's own
   * device buffers for them (raw, reads, haplotype codes, pairs, groups),
   * and the event of the last copy, which the chunk's first command on its
   * queue waits for (NULL once that is enqueued). */
  int copied;
  cph_devbuf in[5];
  cl_event in_ev;
  /* A copied chunk's row preparation may run on the copy queue too
   * (`own_rows`): it then writes the slot's own rows and weights, so that
   * it can overlap the kernels of the chunk before, which read the other
   * slot's, and in_ev is its event. */
  int own_rows;
  cph_devbuf rows, weights;
  /* A preparation on the copy queue that gives the weights alone: the
   * launches, which compute their rows, do not wait for it; the weights'
   * download does (its event, owned by the slot's events; NULL once
   * that is enqueued). */
  cl_event weights_ev;
  /* A small call's speculative pass whose staging and schedule are the
   * float chunk's (launch.c, cph_share_inputs): its kernels read that
   * chunk's copies in (`inputs_of`) after their event (`lent_ev`, which
   * the lending slot's events own; `lends`: the slot's copy in makes it). */
  int sched_copied, lends;
  const struct cph_slot *inputs_of;
  cl_event lent_ev;
  /* Float mode's speculative pass: its weights are computed at its end,
   * for its rescue pairs' reads only (cph_later_weights), not at
   * submission with the float chunk's (6-9 us of the host's share of a
   * region's call on the H200, traced). */
  int weights_later;
  /* A speculative pass whose results its call did not need (`left`): the
   * engine's next call waits for it before it submits anything and drops
   * it (speculate.c cph_call_settle). */
  int left;
} cph_slot;

typedef struct cph_share cph_share;

/* The kernel sets of an engine: float, double (double mode, or float
 * mode's rescue) and float mode's exact double (tuning/plan.h,
 * cph_plan_exact). A pass runs one set. */
enum { CPH_SET_FLOAT, CPH_SET_DOUBLE, CPH_SET_EXACT, CPH_SETS };

/* Programs of a variant (cph_context_kernel_as): the base program, and
 * with split pairs (cph_variant.split) or float mode's early exit
 * (cph_variant.early_exit) for the launches that need them: each costs
 * every launch of concurrent tiles some speed (engine/schedule.c); and
 * for the small-call variant's launches and those of wide pairs, one that
 * computes its rows itself (cph_variant.inline_rows), so that they need
 * no row preparation in front of them, nor prepared rows. */
enum { CPH_KF_SPLIT = 1, CPH_KF_EXIT = 2, CPH_KF_INLINE = 4, CPH_KFLAVORS = 8 };

typedef struct cph_engine {
  cph_device dev;
  cl_context cl;
  clphmm_precision precision;
  uint64_t max_cells;
  unsigned max_coop; /* most tiles of a read run at once (0: per launch) */
  /* Parts of a split pair (cl/pairhmm.cl, SPLIT_Q): launches of concurrent
   * tiles split each pair over this many work-groups ($CLPHMM_SPLIT; 1:
   * never; 0: per launch, schedule.c launch_split), and the epoch of the
   * split launches' progress flags (launch.c). */
  unsigned split_parts;
  uint32_t split_epoch;
  uint64_t seq_fill;         /* long reads' pairs that fill the device on the
                                long-read variant (cph_plan_bin_long; tests set 0) */
  uint64_t max_device_bytes; /* planning bound for one chunk and launch */
  /* [set]: CPH_SET_FLOAT, _DOUBLE, _EXACT (float mode's exact double,
   * planned where the rescue uses the scaled form: n = 0 otherwise) */
  cph_variant_set variants[CPH_SETS];
  /* [flavor][set][variant] (CPH_KF_*), built on first use */
  cph_kernel kernels[CPH_KFLAVORS][CPH_SETS][CPH_MAX_VARIANTS];
  unsigned char flavor_failed[CPH_KFLAVORS][CPH_SETS][CPH_MAX_VARIANTS];
  /* Float mode's first pass: launches whose largest pair has at least this
   * many cells get the early exit ($CLPHMM_EXIT_CELLS; 0: every launch). */
  uint64_t exit_cells;
  cph_cache cache;
  clphmm_diagnostics diag;
  int alloc_failed; /* the last OpenCL failure was a device allocation */
  int broken;       /* an OpenCL failure left no usable OpenCL context */
  int host_prep;    /* rows prepared on the host (CLPHMM_HOST_PREP) */
  /* Commands are profiled (clphmm_options.profile, $CLPHMM_PROFILE):
   * the queue has profiling on and every launch an event, for the
   * statistics' device times and CLPHMM_TRACE's device commands. Without
   * it only a chunk's last copy has an event (to wait for): on the H100 a
   * region per call took 201 us instead of 284 (the events cost the host
   * about 60 us of it, the queue's profiling about 20). */
  int profile;
  /* Chunks whose copies total at most this many bytes go through the
   * packs (engine/pack.h; $CLPHMM_PACK_BYTES, 0: never). */
  size_t pack_bytes;
  /* Work is handed to the device after each stage of a chunk's commands
   * (uploads, row preparation, each launch) rather than once at the end,
   * so that it starts while the host enqueues the rest
   * ($CLPHMM_EARLY_FLUSH=0: once, at the end). */
  int early_flush;
  /* A chunk's last command is polled for this long before the host
   * thread blocks on it ($CLPHMM_WAIT_SPIN_US, default 0). A blocking
   * wait on the H100 returned about 28 us after a region's chunk ended
   * on the device, but polling the event's status returned no sooner
   * (bench/results, host-path at aaa1b8c): off by default, for drivers
   * whose blocking waits are slower. */
  double wait_spin_s;
  /* Float mode's speculative double pass for small calls (speculate.c;
   * $CLPHMM_SPECULATE), the small calls that `auto` still
   * speculates on (CPH_SPEC_AFTER after one that had pairs to rescue,
   * fewer by one after each that had none), and the calls that speculated
   * (tests). */
  int speculate; /* CPH_SPECULATE_* */
  /* Stopped pairs of at least this many cells go straight to the exact
   * pass ($CLPHMM_EXACT_DIRECT, finish.c; 0: none, 1: all). */
  uint64_t exact_direct;
  /* Float mode: reads that go to the double rescue before their float
   * pass, which runs only where their double results do not prove GKL's
   * rescue (compute.c plan_double_first, engine/first.h;
   * $CLPHMM_DOUBLE_FIRST): with first_auto, the lengths that first_seen
   * has seen rescued (the default); else reads of at least double_first
   * rows (0: none). first_growth: model/bound.h. */
  int first_auto;
  uint64_t double_first;
  cph_first_counts first_seen;
  double first_growth;
  int side_queue; /* $CLPHMM_SIDE_QUEUE (speculate.c) */
  /* A small call that rescues nothing returns without waiting for its
   * speculative pass ($CLPHMM_SPEC_LEAVE; speculate.c), the passes left
   * so, and those that a later call waited for before submitting anything
   * (tests). */
  int spec_leave;
  unsigned long spec_left_passes, spec_settled;
  /* A large call's rescue chunks in its main pass gather at least this
   * many pairs ($CLPHMM_RESCUE_PAIRS; rescue.c cph_call_rescue_some). */
  uint64_t rescue_min;
  size_t rescue_max; /* pairs of a rescue chunk at most (tests set it) */
  /* The first chunk of a call of at least two full chunks holds
   * 1/chunk_ramp of a chunk's usual cells and pairs ($CLPHMM_CHUNK_RAMP;
   * 1: all chunks the same; compute.c chunk_k_bounds). */
  unsigned chunk_ramp;
  unsigned spec_left;
  unsigned long spec_calls;
  /* The speculative pass copies the float chunk's schedule where it is
   * the same (compute.c cph_call_start_chunk; tests set 0), and the chunks that
   * did (tests). */
  int copy_sched;
  unsigned long sched_copies;
  /* The speculative pass reads the float chunk's copies in where it may
   * (launch.c cph_share_inputs; tests set 0), and the passes that did. */
  int share_inputs;
  unsigned long shared_inputs;
  /* Launches that run programs computing their rows themselves
   * ($CLPHMM_INLINE_ROWS; schedule.c launch_kernel): 0 none, 1 small
   * calls' and those of at least inline_cols cells per read row
   * ($CLPHMM_INLINE_COLS), 2 all (tests); and the chunks whose launches
   * all did: no rows on the device (small calls: no row preparation,
   * weights from the host). */
  int inline_rows;
  uint64_t inline_cols;
  unsigned long inline_chunks;
  /* A large chunk's bins too small to fill the device run on the
   * small-call variant, up to this many of its work-groups per compute
   * unit ($CLPHMM_SMALL_BINS, default CPH_SMALL_BIN_GROUPS; 0: never;
   * schedule.c to_small, cph_plan_to_small). */
  unsigned small_bins;
  /* Row preparations that gave the weights alone (tests). */
  unsigned long weight_preps;
  /* Work-items per read in the row preparation ($CLPHMM_PREP_LANES: 8,
   * 16, 32 or 64; 0: from the chunk's mean read length, launch.c
   * prep_lanes). */
  unsigned prep_lanes;
  unsigned long spin_waits; /* waits that polling ended (tests) */
  /* The bins' names and the variants they name (compute.c reset_stats:
   * naming 14 bins with snprintf took about 3 us of a region's call on
   * the H200's host; variants replaced after a build failure are named
   * again). */
  char bin_names[CLPHMM_MAX_BINS][sizeof((clphmm_bin_stats *)0)->variant];
  cph_variant bin_named[CLPHMM_MAX_BINS];
  size_t n_bin_named;
  clphmm_stats stats;
  /* Chunks of about this many cells, without the rule that a chunk holds
   * enough pairs to fill the device ($CLPHMM_CHUNK_CELLS, for tests and
   * tuning; 0: the default bounds of compute.c). */
  uint64_t chunk_cells;
  /* Serialises kernel builds between the engines of one context, so that
   * engines of the same kind of device load what the first one built
   * from the kernel cache (NULL: one engine). */
  pthread_mutex_t *build_lock;
  /* The engine's state (src/engine/compute.c). */
  cph_pool *pool;
  cph_bufctx bufs;
  cph_devset d;    /* the main queue and its buffers */
  cph_devset side; /* the speculative pass's (its queue made on first use) */
  /* Large chunks' uploads go to this queue (made on first use), so that
   * they overlap the kernels of the chunk before ($CLPHMM_COPY_QUEUE). */
  cl_command_queue copy_queue;
  int copy_uploads;
  /* Their row preparation too ($CLPHMM_PREP_QUEUE; launch.c). */
  int prep_on_copy;
  unsigned long copied_chunks; /* (tests) */
  unsigned long copy_preps;    /* row preparations on the copy queue (tests) */
  unsigned long side_chunks;   /* chunks on the side queue (tests) */
  cph_slot slots[CPH_SLOTS];
  unsigned chunk_div; /* chunks are divided by this after allocation
                         failures (reset per call) */
  cph_trace trace;    /* CLPHMM_TRACE */
  /* The call's kernels' device intervals: kernel_seconds is their union
   * (launch.c, compute.c). */
  cph_spans kernel_spans;
  unsigned long kernel_events; /* of this call, collected (tests) */
  /* Several devices (multi.c): dropped after a device failure, and why. */
  int dropped;
  char why[1024];
} cph_engine;

/* Most devices of one context. */
#define CPH_MAX_ENGINES CLPHMM_MAX_DEVICES

struct clphmm_context {
  pthread_mutex_t lock; /* one compute call at a time */
  clphmm_precision precision;
  size_t n; /* engines, one per device named */
  cph_engine *eng[CPH_MAX_ENGINES];
  pthread_mutex_t build_lock; /* cph_engine.build_lock (n > 1) */
  clphmm_stats stats;         /* n > 1: the last call's, combined */
  clphmm_diagnostics diag;    /* n > 1: the context's own notes */
  char error[CPH_ERROR_MAX];
};

/* The kernel serving variant `v` of a set (CPH_SET_*), built on first use
 * (its `variant` field is what was built: see cph_kernel_obtain). */
clphmm_status cph_context_kernel(cph_engine *ctx, size_t v, int set,
                                 const cph_kernel **kernel);

/* Whether launches on base kernel k may run its program that computes its
 * rows (CPH_KF_INLINE), where the device prepares rows (the program has
 * the row tables' code) and that is not turned off: the small-call
 * variant's, and with `wide` (at least inline_cols cells per read row)
 * any other's. */
int cph_engine_inline_rows(const cph_engine *ctx, const cph_kernel *k,
                           int wide);

/* The program of `base` (the base kernel of variant `v` of a set) in
 * `flavor` (CPH_KF_*), built on first use. A flavour that does not build
 * fails at once from then on (noted in the diagnostics): callers run the
 * base program instead. */
clphmm_status cph_context_kernel_as(cph_engine *ctx, size_t v, int set,
                                    const cph_kernel *base, int flavor,
                                    const cph_kernel **kernel);

/* Release every buffer the engine keeps (device and pinned host memory). */
void cph_engine_release(cph_engine *ctx);

/* Wait for everything enqueued on the engine's queues. */
void cph_engine_finish(cph_engine *ctx);

/* A queue of the engine's (ctx->side.queue, ctx->copy_queue), made on
 * first use. */
clphmm_status cph_engine_queue(cph_engine *ctx, cl_command_queue *q);

/* Whether the queue *q of an optional use (*on: the side queue, the copy
 * queue) is there, made on first use; when it cannot be made, the use is
 * turned off for good (its work goes to the main queue) and the
 * diagnostics say so, naming `what`. */
int cph_engine_optional_queue(cph_engine *ctx, cl_command_queue *q, int *on,
                              const char *what);

/* clphmm_compute's work on one engine that is usable (compute.c): the
 * results go to `out` only when everything succeeded. */
clphmm_status cph_engine_compute(cph_engine *ctx, const clphmm_batch *batches,
                                 size_t n_batches, double *out);

/* One pass of an engine over a call split between engines (multi.c): it
 * takes chunks from the call's shared queue (the ranges to redo first)
 * until none is left, writes their results straight into the share's
 * result array, and rescues its own float results in double. The batches'
 * shapes are validated (their bases and qualities are checked while
 * staged). The statistics are the pass's, without pairs and cells. */
clphmm_status cph_engine_compute_shared(cph_engine *ctx, cph_share *sh,
                                        size_t me);

/* A range of the input: from (batch, read), whose first result is `out`,
 * to (end_batch, end_read), exclusive. */
typedef struct cph_range {
  size_t batch, read, out;
  size_t end_batch, end_read;
} cph_range;

/* A call split between engines (multi.c): a queue of chunks in input
 * order that the engines take from as they finish, and the ranges that
 * an engine dropped after a device failure left to redo. Everything below
 * `lock` is guarded by it. */
struct cph_share {
  const clphmm_batch *batches;
  size_t n_batches;
  uint64_t cells;  /* the call's: chunks are sized on cells / parts */
  uint64_t pairs;  /* the call's (chunk_bounds) */
  unsigned parts;  /* engines that share the call */
  double *results; /* the call's results, by pair */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  cph_range next;  /* the queue: the rest of the input */
  cph_range *redo; /* ranges to redo, taken before the queue */
  size_t n_redo, cap_redo;
  /* Per engine, the ranges it took in its current pass: redone by the
   * others when it fails. */
  cph_range *taken[CPH_MAX_ENGINES];
  size_t n_taken[CPH_MAX_ENGINES], cap_taken[CPH_MAX_ENGINES];
  int stop; /* a call error: take nothing more */
};

/* Engine operations for multi.c (context.c): recreate the OpenCL context
 * after a failure; build every kernel; store kernels built from source. */
clphmm_status cph_engine_reset(cph_engine *e);
/* A whole call on one engine (a broken one gets one more try; the kernels
 * it built are stored): no reset after a failure. */
clphmm_status cph_engine_run(cph_engine *e, const clphmm_batch *batches,
                             size_t n_batches, double *out);
clphmm_status cph_engine_warmup(cph_engine *e);
void cph_engine_save_kernels(cph_engine *e);
/* A device's statistics entry: index, name and dropped flag set, counts
 * zero. */
void cph_device_stats_fill(const cph_engine *e, clphmm_device_stats *d);
/* The same with the counts of the engine's last call. */
void cph_device_stats_counted(const cph_engine *e, clphmm_device_stats *d);

/* Contexts of several devices (multi.c): clphmm_compute (sets the
 * context's error and statistics), clphmm_context_warmup and
 * clphmm_context_diagnostics. */
clphmm_status cph_multi_compute(clphmm_context *ctx,
                                const clphmm_batch *batches, size_t n_batches,
                                double *out);
clphmm_status cph_multi_warmup(clphmm_context *ctx);
void cph_multi_diagnostics(const clphmm_context *ctx, clphmm_diagnostics *d);

/* Record that engine `me` took range `r` (under sh->lock). 0: no memory. */
int cph_share_record(cph_share *sh, size_t me, const cph_range *r);

#endif
