/*
 * JNI layer of org.clphmm.gatk.ClphmmPairHmm: maps GATK's ReadDataHolder[] /
 * HaplotypeDataHolder[] (gatk-native-bindings) onto one clphmm_batch and
 * turns every clphmm status into a Java exception.
 *
 * Copies: the Java byte arrays of one region are copied once, with
 * GetByteArrayRegion, into one buffer that the binding keeps between calls
 * (it only grows). No JNI array access is held while clphmm_compute runs,
 * so the garbage collector is never blocked by a compute. HotSpot's
 * Get<Type>ArrayElements copies too (and allocates per array), and the
 * library packs its own device layout from the batch anyway, so pinning
 * the Java arrays would save nothing but one memcpy of a few kilobytes per
 * region (bench/jni.sh measures the layer's time).
 *
 * Signals: the JVM handles SIGSEGV, SIGBUS, SIGFPE and SIGILL itself
 * (implicit null checks, integer division by zero, safepoints) and uses
 * SIGUSR2, SIGQUIT, SIGHUP, SIGINT and SIGTERM. An OpenCL runtime may
 * replace those handlers when it initialises or compiles: PoCL installs a
 * SIGFPE handler and its LLVM installs crash handlers for all of them.
 * Measured on PoCL 3.1: afterwards the JVM's first integer division by
 * zero raised no ArithmeticException. Unless the JVM runs with libjsig
 * (which chains handlers properly), every call that may reach OpenCL puts
 * back the handlers the process had when this library was loaded.
 *
 * The native methods are registered in JNI_OnLoad (RegisterNatives), so the
 * only exported symbol is JNI_OnLoad. Uses the public API of clphmm only.
 */
#include <jni.h>

#include <dlfcn.h>
#include <limits.h>
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
#define READ_CLASS                                                             \
  "org/broadinstitute/gatk/nativebindings/pairhmm/ReadDataHolder"
#define HAP_CLASS                                                              \
  "org/broadinstitute/gatk/nativebindings/pairhmm/HaplotypeDataHolder"

/* Field IDs of the holders and the exception class, resolved in JNI_OnLoad.
 * Immutable afterwards; the class references are global references. */
static jclass g_read_class, g_hap_class, g_exception_class;
static jmethodID g_exception_ctor;
enum { F_BASES, F_QUALS, F_INS, F_DEL, F_GCP, N_READ_FIELDS };
static const char *const g_read_field_names[N_READ_FIELDS] = {
    "readBases", "readQuals", "insertionGOP", "deletionGOP", "overallGCP"};
static jfieldID g_read_fields[N_READ_FIELDS];
static jfieldID g_hap_bases;

/* Seconds of the last compute call, by stage (see nativeTimes). */
enum {
  T_MARSHAL,  /* Java arrays -> one buffer and the batch, with checks */
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
  size_t *offsets; /* where each array starts in `bytes` while copying */
  size_t offsets_cap;
  double *out;
  size_t out_cap;
  double times[N_TIMES];
} binding;

/* ---- Signal handlers ------------------------------------------------------
 */

static const int g_signals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,
                                SIGTRAP, SIGXFSZ, SIGUSR2, SIGQUIT,
                                SIGHUP,  SIGINT,  SIGTERM, SIGPIPE};
#define N_SIGNALS (sizeof g_signals / sizeof g_signals[0])
static struct sigaction g_jvm_actions[N_SIGNALS];
static int g_restore_signals; /* set once in JNI_OnLoad */

static void save_jvm_signals(void) {
  /* libjsig (LD_PRELOAD) chains handlers installed after the JVM's: then
   * nothing needs repair. */
  if (dlsym(RTLD_DEFAULT, "JVM_begin_signal_setting"))
    return;
  for (size_t i = 0; i < N_SIGNALS; i++)
    if (sigaction(g_signals[i], NULL, &g_jvm_actions[i]) != 0)
      return;
  g_restore_signals = 1;
}

/* After a call that may have reached OpenCL: the JVM's handlers again. */
static void restore_jvm_signals(void) {
  if (!g_restore_signals)
    return;
  for (size_t i = 0; i < N_SIGNALS; i++) {
    struct sigaction now;
    if (sigaction(g_signals[i], NULL, &now) != 0)
      continue;
    const struct sigaction *was = &g_jvm_actions[i];
    int same =
        (was->sa_flags & SA_SIGINFO)
            ? (now.sa_flags & SA_SIGINFO) &&
                  now.sa_sigaction == was->sa_sigaction
            : !(now.sa_flags & SA_SIGINFO) && now.sa_handler == was->sa_handler;
    if (!same)
      sigaction(g_signals[i], was, NULL);
  }
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
  snprintf(text, sizeof text, "clphmm: %s: %s", clphmm_status_string(status),
           message && *message ? message : "(no detail)");
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
  free(b->offsets);
  free(b->out);
  memset(b, 0, offsetof(binding, times));
}

/* ---- Marshalling --------------------------------------------------------- */

/* Appends the bytes of `array` to b->bytes at *used; returns the offset or
 * SIZE_MAX on failure (exception pending). */
static size_t append_array(JNIEnv *env, binding *b, size_t *used,
                           jbyteArray array, jsize len) {
  size_t need = *used + (size_t)len;
  if (!reserve((void **)&b->bytes, &b->bytes_cap, need ? need : 1, 1)) {
    throw_oom(env, "cannot allocate the region's sequence buffer");
    return SIZE_MAX;
  }
  size_t at = *used;
  if (len > 0)
    (*env)->GetByteArrayRegion(env, array, 0, len, (jbyte *)(b->bytes + at));
  *used = need;
  return at;
}

/* Copies a region into b (bytes, reads, haplotypes) and checks its shape:
 * non-null holders and arrays, the four quality arrays as long as the read,
 * `out` long enough. On failure an exception is pending and 0 is returned.
 * *n_pairs receives n_reads * n_haplotypes. */
static int marshal(JNIEnv *env, binding *b, jobjectArray jreads,
                   jobjectArray jhaps, jdoubleArray jout, clphmm_batch *batch,
                   size_t *n_pairs) {
  char msg[256];
  if (!jreads || !jhaps || !jout) {
    throw_npe(env, !jreads  ? "reads array is null"
                   : !jhaps ? "haplotypes array is null"
                            : "likelihood array is null");
    return 0;
  }
  jsize nr = (*env)->GetArrayLength(env, jreads);
  jsize nh = (*env)->GetArrayLength(env, jhaps);
  jsize nout = (*env)->GetArrayLength(env, jout);
  if (nh > 0 && (size_t)nr > SIZE_MAX / (size_t)nh) {
    throw_status(env, CLPHMM_ERROR_TOO_LARGE, "reads x haplotypes overflow");
    return 0;
  }
  size_t pairs = (size_t)nr * (size_t)nh;
  if (pairs > (size_t)nout) {
    snprintf(msg, sizeof msg,
             "likelihood array has %ld elements, %ld reads x %ld "
             "haplotypes need %zu",
             (long)nout, (long)nr, (long)nh, pairs);
    throw_iae(env, msg);
    return 0;
  }
  if (!reserve((void **)&b->reads, &b->reads_cap, nr ? (size_t)nr : 1,
               sizeof *b->reads) ||
      !reserve((void **)&b->haps, &b->haps_cap, nh ? (size_t)nh : 1,
               sizeof *b->haps) ||
      !reserve((void **)&b->offsets, &b->offsets_cap,
               (size_t)N_READ_FIELDS * (size_t)nr + (size_t)nh + 1,
               sizeof *b->offsets)) {
    throw_oom(env, "cannot allocate the region's read table");
    return 0;
  }

  /* Offsets first (the byte buffer moves while it grows), pointers at the
   * end. */
  size_t used = 0;
  for (jsize r = 0; r < nr; r++) {
    jobject holder = (*env)->GetObjectArrayElement(env, jreads, r);
    if (!holder) {
      snprintf(msg, sizeof msg, "reads[%ld] is null", (long)r);
      throw_npe(env, msg);
      return 0;
    }
    jbyteArray arr[N_READ_FIELDS];
    jsize len[N_READ_FIELDS];
    int ok = 1;
    for (int f = 0; f < N_READ_FIELDS; f++) {
      arr[f] =
          (jbyteArray)(*env)->GetObjectField(env, holder, g_read_fields[f]);
      if (!arr[f]) {
        snprintf(msg, sizeof msg, "reads[%ld].%s is null", (long)r,
                 g_read_field_names[f]);
        throw_npe(env, msg);
        ok = 0;
        for (int g = 0; g < f; g++)
          (*env)->DeleteLocalRef(env, arr[g]);
        break;
      }
      len[f] = (*env)->GetArrayLength(env, arr[f]);
    }
    (*env)->DeleteLocalRef(env, holder);
    if (!ok)
      return 0;
    for (int f = 1; f < N_READ_FIELDS && ok; f++) {
      if (len[f] != len[F_BASES]) {
        snprintf(msg, sizeof msg,
                 "reads[%ld].%s has %ld bytes but readBases has %ld", (long)r,
                 g_read_field_names[f], (long)len[f], (long)len[F_BASES]);
        throw_iae(env, msg);
        ok = 0;
      }
    }
    size_t *at = b->offsets + (size_t)N_READ_FIELDS * (size_t)r;
    for (int f = 0; f < N_READ_FIELDS; f++) {
      if (ok) {
        at[f] = append_array(env, b, &used, arr[f], len[f]);
        if (at[f] == SIZE_MAX)
          ok = 0;
      }
      (*env)->DeleteLocalRef(env, arr[f]);
    }
    if (!ok)
      return 0;
    b->reads[r].length = (size_t)len[F_BASES];
  }
  size_t *hap_at = b->offsets + (size_t)N_READ_FIELDS * (size_t)nr;
  for (jsize h = 0; h < nh; h++) {
    jobject holder = (*env)->GetObjectArrayElement(env, jhaps, h);
    if (!holder) {
      snprintf(msg, sizeof msg, "haplotypes[%ld] is null", (long)h);
      throw_npe(env, msg);
      return 0;
    }
    jbyteArray arr =
        (jbyteArray)(*env)->GetObjectField(env, holder, g_hap_bases);
    (*env)->DeleteLocalRef(env, holder);
    if (!arr) {
      snprintf(msg, sizeof msg, "haplotypes[%ld].haplotypeBases is null",
               (long)h);
      throw_npe(env, msg);
      return 0;
    }
    jsize len = (*env)->GetArrayLength(env, arr);
    hap_at[h] = append_array(env, b, &used, arr, len);
    (*env)->DeleteLocalRef(env, arr);
    if (hap_at[h] == SIZE_MAX)
      return 0;
    b->haps[h].length = (size_t)len;
  }
  if ((*env)->ExceptionCheck(env))
    return 0;

  /* The buffer is final: offsets become pointers. */
  const uint8_t *base = b->bytes;
  for (jsize r = 0; r < nr; r++) {
    const size_t *at = b->offsets + (size_t)N_READ_FIELDS * (size_t)r;
    clphmm_read *rd = &b->reads[r];
    rd->bases = (const char *)(base + at[F_BASES]);
    rd->base_quals = base + at[F_QUALS];
    rd->ins_quals = base + at[F_INS];
    rd->del_quals = base + at[F_DEL];
    rd->gcp_quals = base + at[F_GCP];
  }
  for (jsize h = 0; h < nh; h++)
    b->haps[h].bases = (const char *)(base + hap_at[h]);

  if (!reserve((void **)&b->out, &b->out_cap, pairs ? pairs : 1,
               sizeof *b->out)) {
    throw_oom(env, "cannot allocate the region's result buffer");
    return 0;
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

/* Number of OpenCL devices; throws ClphmmException when there is no
 * runtime or platform. */
static jint JNICALL native_device_count(JNIEnv *env, jclass cls) {
  (void)cls;
  size_t n = 0;
  clphmm_status st = clphmm_device_count(&n);
  restore_jvm_signals();
  if (st != CLPHMM_SUCCESS) {
    throw_status(env, st, clphmm_last_error(NULL));
    return 0;
  }
  return n > INT_MAX ? INT_MAX : (jint)n;
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
  clphmm_status st = clphmm_context_create(&opt, &b->ctx);
  restore_jvm_signals();
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
  clphmm_context_destroy(b->ctx);
  restore_jvm_signals();
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
                                   jobjectArray jreads, jobjectArray jhaps,
                                   jdoubleArray jout, jboolean skip_compute) {
  (void)cls;
  binding *b = from_handle(env, handle);
  if (!b)
    return;
  double t0 = now_seconds();
  clphmm_batch batch;
  size_t pairs = 0;
  if (!marshal(env, b, jreads, jhaps, jout, &batch, &pairs))
    return;
  double t1 = now_seconds();
  double t2 = t1;
  clphmm_stats stats;
  memset(&stats, 0, sizeof stats);
  if (!skip_compute) {
    clphmm_status st = clphmm_compute(b->ctx, &batch, 1, b->out);
    restore_jvm_signals();
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
static void JNICALL native_reference(JNIEnv *env, jclass cls,
                                     jobjectArray jreads, jobjectArray jhaps,
                                     jdoubleArray jout, jboolean use_double) {
  (void)cls;
  binding scratch;
  memset(&scratch, 0, sizeof scratch);
  clphmm_batch batch;
  size_t pairs = 0;
  if (marshal(env, &scratch, jreads, jhaps, jout, &batch, &pairs)) {
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

#define READ_ARRAY "[L" READ_CLASS ";"
#define HAP_ARRAY "[L" HAP_CLASS ";"

static JNINativeMethod g_methods[] = {
    {"nativeVersion", "()Ljava/lang/String;", (void *)native_version},
    {"nativeDeviceCount", "()I", (void *)native_device_count},
    {"nativeCreate", "(Ljava/lang/String;Z)J", (void *)native_create},
    {"nativeDestroy", "(J)V", (void *)native_destroy},
    {"nativeDeviceName", "(J)Ljava/lang/String;", (void *)native_device_name},
    {"nativeCompute", "(J" READ_ARRAY HAP_ARRAY "[DZ)V",
     (void *)native_compute},
    {"nativeTimes", "(J)[D", (void *)native_times},
    {"nativeReference", "(" READ_ARRAY HAP_ARRAY "[DZ)V",
     (void *)native_reference},
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
  save_jvm_signals();
  g_read_class = global_class(env, READ_CLASS);
  g_hap_class = g_read_class ? global_class(env, HAP_CLASS) : NULL;
  g_exception_class = g_hap_class ? global_class(env, EXCEPTION_CLASS) : NULL;
  if (!g_exception_class)
    return JNI_ERR; /* NoClassDefFoundError pending */
  for (int f = 0; f < N_READ_FIELDS; f++) {
    g_read_fields[f] =
        (*env)->GetFieldID(env, g_read_class, g_read_field_names[f], "[B");
    if (!g_read_fields[f])
      return JNI_ERR;
  }
  g_hap_bases = (*env)->GetFieldID(env, g_hap_class, "haplotypeBases", "[B");
  g_exception_ctor = g_hap_bases
                         ? (*env)->GetMethodID(env, g_exception_class, "<init>",
                                               "(ILjava/lang/String;)V")
                         : NULL;
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
