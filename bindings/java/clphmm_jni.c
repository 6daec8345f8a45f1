/*
 * JNI layer of org.clphmm.gatk.ClphmmPairHmm: maps GATK's ReadDataHolder[] /
 * HaplotypeDataHolder[] (gatk-native-bindings) onto one clphmm_batch and
 * turns every clphmm status into a Java exception.
 *
 * Copies: the Java side (RegionPacker) checks a region's holders and packs
 * their arrays into one byte[] with their lengths in an int[]; here those
 * two arrays are copied, with Get<Type>ArrayRegion, into buffers that the
 * binding keeps between calls (they only grow). Reaching into every holder
 * from here took about 700 JNI calls per region of 30 reads and 10
 * haplotypes, most of the layer's 24 us on the H100's host. No JNI array
 * access is held while clphmm_compute runs, so the garbage collector is
 * never blocked by a compute (bench/jni.sh measures the layer's time).
 *
 * Signals: the JVM handles SIGSEGV, SIGBUS, SIGFPE and SIGILL itself
 * (implicit null checks, integer division by zero, safepoints) and uses
 * SIGUSR2, SIGQUIT, SIGHUP, SIGINT and SIGTERM. An OpenCL runtime may
 * replace those handlers when it initialises or compiles: PoCL installs a
 * SIGFPE handler and its LLVM installs crash handlers for all of them.
 * Measured on PoCL 3.1: afterwards the JVM's first integer division by
 * zero raised no ArithmeticException. Unless the JVM runs with libjsig
 * (which chains handlers properly), every call that may install handlers
 * (creating or releasing a context, a compute that built a program) puts
 * back, for every signal below the real-time ones, the handler the
 * application had before it (see "Signal handlers" below).
 *
 * The native methods are registered in JNI_OnLoad (RegisterNatives), so the
 * only exported symbol is JNI_OnLoad. Uses the public API of clphmm only.
 */
#include <jni.h>

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clphmm.h>

#define BINDING_CLASS "org/clphmm/gatk/ClphmmPairHmm"
#define EXCEPTION_CLASS "org/clphmm/gatk/ClphmmException"

/* The exception class and constructor, resolved in JNI_OnLoad. Immutable
 * afterwards; the class reference is a global reference. */
static jclass g_exception_class;
static jmethodID g_exception_ctor;

/* A read's arrays in the packed region (RegionPacker), in this order. */
enum { F_BASES, F_QUALS, F_INS, F_DEL, F_GCP, N_READ_FIELDS };

/* Seconds of the last compute call, by stage (see nativeTimes). */
enum {
  T_MARSHAL,  /* the packed region -> native buffers and the batch */
  T_COMPUTE,  /* clphmm_compute, as timed around the call */
  T_COPY_OUT, /* results -> the Java double[] */
  T_TOTAL,    /* the whole native call */
  T_LIB_WALL, /* clphmm_stats.wall_seconds */
  T_KERNEL,   /* clphmm_stats.kernel_seconds */
  N_TIMES
};

/* Everything one binding object owns; buffers are reused between calls. */
typedef struct binding {
  clphmm_context *ctx; /* NULL for the CPU reference scratch */
  uint8_t *bytes;
  size_t bytes_cap;
  clphmm_read *reads;
  size_t reads_cap;
  clphmm_haplotype *haps;
  size_t haps_cap;
  jint *lengths; /* the reads' lengths, then the haplotypes' */
  size_t lengths_cap;
  double *out;
  size_t out_cap;
  double times[N_TIMES];
} binding;

/* ---- Signal handlers ------------------------------------------------------
 */

/* Every signal below the real-time ones: LLVM's crash handlers alone take
 * fifteen of them (SIGABRT, SIGUSR1, SIGXCPU and SIGSYS among them), and a
 * signal whose default would end the process must not be ignored or
 * swallowed after a call. */
#define LAST_SIGNAL 31

typedef struct signal_set {
  struct sigaction act[LAST_SIGNAL + 1];
  unsigned char have[LAST_SIGNAL + 1];
} signal_set;

/* The process's handlers as the application had them: taken before the
 * first call that may reach OpenCL and again before each later one that
 * may install handlers (creating or destroying a context) when no other
 * such call is running, so that what the application changed between
 * calls stays. Guarded by g_signal_lock. */
static pthread_mutex_t g_signal_lock = PTHREAD_MUTEX_INITIALIZER;
static signal_set g_app;
static int g_risky_calls; /* such calls running */
static int g_repair;      /* 0 with libjsig: it chains handlers itself */

static void take_signals(signal_set *s) {
  for (int i = 1; i <= LAST_SIGNAL; i++)
    s->have[i] =
        i != SIGKILL && i != SIGSTOP && sigaction(i, NULL, &s->act[i]) == 0;
}

static int same_handler(const struct sigaction *a, const struct sigaction *b) {
  return (a->sa_flags & SA_SIGINFO)
             ? (b->sa_flags & SA_SIGINFO) && a->sa_sigaction == b->sa_sigaction
             : !(b->sa_flags & SA_SIGINFO) && a->sa_handler == b->sa_handler;
}

/* Every signal whose handler is no longer the application's: back to it. */
static void put_back_signals(void) {
  for (int i = 1; i <= LAST_SIGNAL; i++) {
    struct sigaction now;
    if (g_app.have[i] && sigaction(i, NULL, &now) == 0 &&
        !same_handler(&g_app.act[i], &now))
      sigaction(i, &g_app.act[i], NULL);
  }
}

static void init_signals(void) {
  /* libjsig (LD_PRELOAD) chains handlers installed after the JVM's: then
   * nothing needs repair. */
  g_repair = dlsym(RTLD_DEFAULT, "JVM_begin_signal_setting") == NULL;
  if (g_repair)
    take_signals(&g_app);
}

/* Around a call that may install handlers (an OpenCL runtime's start, a
 * kernel compile, a context's release). */
static void risky_call_begins(void) {
  if (!g_repair)
    return;
  pthread_mutex_lock(&g_signal_lock);
  if (g_risky_calls++ == 0)
    take_signals(&g_app);
  pthread_mutex_unlock(&g_signal_lock);
}

static void risky_call_ends(void) {
  if (!g_repair)
    return;
  pthread_mutex_lock(&g_signal_lock);
  g_risky_calls--;
  put_back_signals();
  pthread_mutex_unlock(&g_signal_lock);
}

/* A compute call reaches the runtime's compiler only when it builds or
 * loads a program (kernels built on first use) or recreates the OpenCL
 * context after a failure: the context's counts of those, read before
 * and after, say whether the handlers need a look (without a system call
 * per signal on every region). */
static uint64_t context_builds(const clphmm_context *ctx) {
  clphmm_diagnostics d;
  if (clphmm_context_diagnostics(ctx, &d) != CLPHMM_SUCCESS)
    return UINT64_MAX;
  return d.programs_compiled + d.programs_loaded + d.resets;
}

static void compute_ended(const clphmm_context *ctx, uint64_t builds_before) {
  if (!g_repair || context_builds(ctx) == builds_before)
    return;
  pthread_mutex_lock(&g_signal_lock);
  put_back_signals();
  pthread_mutex_unlock(&g_signal_lock);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- Exceptions ---------------------------------------------------------- */

static void throw_named(JNIEnv *env, const char *cls, const char *message) {
  if ((*env)->ExceptionCheck(env))
    return;
  jclass c = (*env)->FindClass(env, cls);
  if (c) {
    (*env)->ThrowNew(env, c, message);
    (*env)->DeleteLocalRef(env, c);
  }
}

static void throw_npe(JNIEnv *env, const char *message) {
  throw_named(env, "java/lang/NullPointerException", message);
}

static void throw_iae(JNIEnv *env, const char *message) {
  throw_named(env, "java/lang/IllegalArgumentException", message);
}

/* A ClphmmException(status, message) carrying clphmm's own message. */
static void throw_status(JNIEnv *env, clphmm_status status,
                         const char *message) {
  if ((*env)->ExceptionCheck(env))
    return;
  char text[2048];
  const char *what = clphmm_status_string(status);
  const char *detail = message && *message ? message : "(no detail)";
  /* (Some messages begin with the status's words: not twice.) */
  if (!strncmp(detail, what, strlen(what)))
    snprintf(text, sizeof text, "clphmm: %s", detail);
  else
    snprintf(text, sizeof text, "clphmm: %s: %s", what, detail);
  jstring jmsg = (*env)->NewStringUTF(env, text);
  if (!jmsg)
    return; /* OutOfMemoryError pending */
  jobject ex = (*env)->NewObject(env, g_exception_class, g_exception_ctor,
                                 (jint)status, jmsg);
  if (ex) {
    (*env)->Throw(env, (jthrowable)ex);
    (*env)->DeleteLocalRef(env, ex);
  }
  (*env)->DeleteLocalRef(env, jmsg);
}

static void throw_oom(JNIEnv *env, const char *what) {
  throw_status(env, CLPHMM_ERROR_OUT_OF_MEMORY, what);
}

/* ---- Buffers ------------------------------------------------------------- */

/* Grow *buf to hold n elements of size `size`; 0 on failure (then nothing
 * changed). */
static int reserve(void **buf, size_t *cap, size_t n, size_t size) {
  if (n <= *cap)
    return 1;
  size_t want = *cap ? *cap : 64;
  while (want < n)
    want = want > SIZE_MAX / 2 ? n : want * 2;
  if (want > SIZE_MAX / size)
    return 0;
  void *p = realloc(*buf, want * size);
  if (!p)
    return 0;
  *buf = p;
  *cap = want;
  return 1;
}

static void binding_free_buffers(binding *b) {
  free(b->bytes);
  free(b->reads);
  free(b->haps);
  free(b->lengths);
  free(b->out);
  memset(b, 0, offsetof(binding, times));
}

/* ---- Unpacking ----------------------------------------------------------- */

/* The packed region (RegionPacker: bytes[0, used), lengths of the nr
 * reads then of the nh haplotypes) copied into b and laid out as one
 * batch. RegionPacker has checked the holders; this checks only that the
 * packing is consistent, so that a bad call from Java cannot read past the
 * arrays. On failure an exception is pending and 0 is returned. */
static int unpack(JNIEnv *env, binding *b, jbyteArray jbytes, jint used,
                  jintArray jlengths, jint nr, jint nh, jdoubleArray jout,
                  clphmm_batch *batch, size_t *n_pairs) {
  if (!jbytes || !jlengths || !jout) {
    throw_npe(env, "packed region or likelihood array is null");
    return 0;
  }
  const jsize nbytes = (*env)->GetArrayLength(env, jbytes);
  const jsize nlen = (*env)->GetArrayLength(env, jlengths);
  const jsize nout = (*env)->GetArrayLength(env, jout);
  const size_t pairs = (size_t)(nr < 0 ? 0 : nr) * (size_t)(nh < 0 ? 0 : nh);
  if (nr < 0 || nh < 0 || used < 0 || used > nbytes ||
      (jlong)nr + nh > (jlong)nlen || pairs > (size_t)nout) {
    throw_iae(env, "inconsistent packed region");
    return 0;
  }
  const size_t nl = (size_t)nr + (size_t)nh;
  if (!reserve((void **)&b->bytes, &b->bytes_cap, used ? (size_t)used : 1, 1) ||
      !reserve((void **)&b->lengths, &b->lengths_cap, nl ? nl : 1,
               sizeof *b->lengths) ||
      !reserve((void **)&b->reads, &b->reads_cap, nr ? (size_t)nr : 1,
               sizeof *b->reads) ||
      !reserve((void **)&b->haps, &b->haps_cap, nh ? (size_t)nh : 1,
               sizeof *b->haps) ||
      !reserve((void **)&b->out, &b->out_cap, pairs ? pairs : 1,
               sizeof *b->out)) {
    throw_oom(env, "cannot allocate the region's buffers");
    return 0;
  }
  if (used > 0)
    (*env)->GetByteArrayRegion(env, jbytes, 0, used, (jbyte *)b->bytes);
  if (nl > 0)
    (*env)->GetIntArrayRegion(env, jlengths, 0, (jsize)nl, b->lengths);
  if ((*env)->ExceptionCheck(env))
    return 0;
  size_t at = 0;
  for (jint r = 0; r < nr; r++) {
    const jint len = b->lengths[r];
    if (len < 0 || (size_t)len > ((size_t)used - at) / N_READ_FIELDS) {
      throw_iae(env, "inconsistent packed region");
      return 0;
    }
    const uint8_t *p = b->bytes + at;
    const size_t n = (size_t)len;
    b->reads[r] = (clphmm_read){(const char *)p + F_BASES * n,
                                p + F_QUALS * n,
                                p + F_INS * n,
                                p + F_DEL * n,
                                p + F_GCP * n,
                                n};
    at += N_READ_FIELDS * n;
  }
  for (jint h = 0; h < nh; h++) {
    const jint len = b->lengths[(size_t)nr + (size_t)h];
    if (len < 0 || (size_t)len > (size_t)used - at) {
      throw_iae(env, "inconsistent packed region");
      return 0;
    }
    b->haps[h] = (clphmm_haplotype){(const char *)b->bytes + at, (size_t)len};
    at += (size_t)len;
  }
  batch->reads = b->reads;
  batch->n_reads = (size_t)nr;
  batch->haplotypes = b->haps;
  batch->n_haplotypes = (size_t)nh;
  *n_pairs = pairs;
  return 1;
}

static binding *from_handle(JNIEnv *env, jlong handle) {
  binding *b = (binding *)(intptr_t)handle;
  if (!b)
    throw_named(env, "java/lang/IllegalStateException",
                "clphmm binding is not initialized (or done() was called)");
  return b;
}

/* ---- Native methods ------------------------------------------------------ */

static jstring JNICALL native_version(JNIEnv *env, jclass cls) {
  (void)cls;
  return (*env)->NewStringUTF(env, clphmm_version());
}

static jlong JNICALL native_create(JNIEnv *env, jclass cls, jstring jdevice,
                                   jboolean use_double) {
  (void)cls;
  binding *b = calloc(1, sizeof *b);
  if (!b) {
    throw_oom(env, "cannot allocate the binding");
    return 0;
  }
  const char *device = NULL;
  if (jdevice) {
    device = (*env)->GetStringUTFChars(env, jdevice, NULL);
    if (!device) {
      free(b);
      return 0; /* OutOfMemoryError pending */
    }
  }
  clphmm_options opt;
  clphmm_options_init(&opt);
  opt.device = device; /* NULL: $CLPHMM_DEVICE, else the library default */
  opt.precision = use_double ? CLPHMM_PRECISION_DOUBLE : CLPHMM_PRECISION_FLOAT;
  risky_call_begins();
  clphmm_status st = clphmm_context_create(&opt, &b->ctx);
  risky_call_ends();
  if (device)
    (*env)->ReleaseStringUTFChars(env, jdevice, device);
  if (st != CLPHMM_SUCCESS) {
    throw_status(env, st, clphmm_last_error(NULL));
    free(b);
    return 0;
  }
  return (jlong)(intptr_t)b;
}

static void JNICALL native_destroy(JNIEnv *env, jclass cls, jlong handle) {
  (void)env;
  (void)cls;
  binding *b = (binding *)(intptr_t)handle;
  if (!b)
    return;
  risky_call_begins();
  clphmm_context_destroy(b->ctx);
  risky_call_ends();
  binding_free_buffers(b);
  free(b);
}

static jstring JNICALL native_device_name(JNIEnv *env, jclass cls,
                                          jlong handle) {
  (void)cls;
  binding *b = from_handle(env, handle);
  if (!b)
    return NULL;
  clphmm_device_info info;
  clphmm_status st = clphmm_context_device(b->ctx, &info);
  if (st != CLPHMM_SUCCESS) {
    throw_status(env, st, clphmm_last_error(b->ctx));
    return NULL;
  }
  return (*env)->NewStringUTF(env, info.name);
}

/* computeLikelihoods: skip_compute = true marshals and checks everything
 * but calls no clphmm_compute and writes nothing (the JNI layer's own cost,
 * for bench/jni.sh). */
static void JNICALL native_compute(JNIEnv *env, jclass cls, jlong handle,
                                   jbyteArray jbytes, jint used,
                                   jintArray jlengths, jint nr, jint nh,
                                   jdoubleArray jout, jboolean skip_compute) {
  (void)cls;
  binding *b = from_handle(env, handle);
  if (!b)
    return;
  double t0 = now_seconds();
  clphmm_batch batch;
  size_t pairs = 0;
  if (!unpack(env, b, jbytes, used, jlengths, nr, nh, jout, &batch, &pairs))
    return;
  double t1 = now_seconds();
  double t2 = t1;
  clphmm_stats stats;
  memset(&stats, 0, sizeof stats);
  if (!skip_compute) {
    const uint64_t builds = context_builds(b->ctx);
    clphmm_status st = clphmm_compute(b->ctx, &batch, 1, b->out);
    compute_ended(b->ctx, builds);
    t2 = now_seconds();
    if (st != CLPHMM_SUCCESS) {
      throw_status(env, st, clphmm_last_error(b->ctx));
      return;
    }
    if (clphmm_context_stats(b->ctx, &stats) != CLPHMM_SUCCESS)
      memset(&stats, 0, sizeof stats);
    if (pairs > 0)
      (*env)->SetDoubleArrayRegion(env, jout, 0, (jsize)pairs, b->out);
  }
  double t3 = now_seconds();
  b->times[T_MARSHAL] = t1 - t0;
  b->times[T_COMPUTE] = t2 - t1;
  b->times[T_COPY_OUT] = t3 - t2;
  b->times[T_TOTAL] = t3 - t0;
  b->times[T_LIB_WALL] = stats.wall_seconds;
  b->times[T_KERNEL] = stats.kernel_seconds;
}

static jdoubleArray JNICALL native_times(JNIEnv *env, jclass cls,
                                         jlong handle) {
  (void)cls;
  binding *b = from_handle(env, handle);
  if (!b)
    return NULL;
  jdoubleArray arr = (*env)->NewDoubleArray(env, N_TIMES);
  if (arr)
    (*env)->SetDoubleArrayRegion(env, arr, 0, N_TIMES, b->times);
  return arr;
}

/* The CPU reference (clphmm_reference) on one region: no OpenCL. */
static void JNICALL native_reference(JNIEnv *env, jclass cls, jbyteArray jbytes,
                                     jint used, jintArray jlengths, jint nr,
                                     jint nh, jdoubleArray jout,
                                     jboolean use_double) {
  (void)cls;
  binding scratch;
  memset(&scratch, 0, sizeof scratch);
  clphmm_batch batch;
  size_t pairs = 0;
  if (unpack(env, &scratch, jbytes, used, jlengths, nr, nh, jout, &batch,
             &pairs)) {
    clphmm_status st = clphmm_reference(&batch, 1,
                                        use_double ? CLPHMM_PRECISION_DOUBLE
                                                   : CLPHMM_PRECISION_FLOAT,
                                        scratch.out);
    if (st != CLPHMM_SUCCESS)
      throw_status(env, st, clphmm_last_error(NULL));
    else if (pairs > 0)
      (*env)->SetDoubleArrayRegion(env, jout, 0, (jsize)pairs, scratch.out);
  }
  binding_free_buffers(&scratch);
}

/* The packed region's arguments: bytes, used, lengths, reads, haplotypes. */
#define PACKED "[BI[III"

static JNINativeMethod g_methods[] = {
    {"nativeVersion", "()Ljava/lang/String;", (void *)native_version},
    {"nativeCreate", "(Ljava/lang/String;Z)J", (void *)native_create},
    {"nativeDestroy", "(J)V", (void *)native_destroy},
    {"nativeDeviceName", "(J)Ljava/lang/String;", (void *)native_device_name},
    {"nativeCompute", "(J" PACKED "[DZ)V", (void *)native_compute},
    {"nativeTimes", "(J)[D", (void *)native_times},
    {"nativeReference", "(" PACKED "[DZ)V", (void *)native_reference},
};

static jclass global_class(JNIEnv *env, const char *name) {
  jclass local = (*env)->FindClass(env, name);
  if (!local)
    return NULL;
  jclass global = (jclass)(*env)->NewGlobalRef(env, local);
  (*env)->DeleteLocalRef(env, local);
  return global;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
  (void)reserved;
  JNIEnv *env = NULL;
  if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
    return JNI_ERR;
  init_signals();
  g_exception_class = global_class(env, EXCEPTION_CLASS);
  if (!g_exception_class)
    return JNI_ERR; /* NoClassDefFoundError pending */
  g_exception_ctor = (*env)->GetMethodID(env, g_exception_class, "<init>",
                                         "(ILjava/lang/String;)V");
  if (!g_exception_ctor)
    return JNI_ERR;
  jclass binding_class = (*env)->FindClass(env, BINDING_CLASS);
  if (!binding_class)
    return JNI_ERR;
  jint rc =
      (*env)->RegisterNatives(env, binding_class, g_methods,
                              (jint)(sizeof g_methods / sizeof g_methods[0]));
  (*env)->DeleteLocalRef(env, binding_class);
  return rc == 0 ? JNI_VERSION_1_8 : JNI_ERR;
}
