#include "opencl/device.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

typedef struct flat_list {
  cl_platform_id platform[MAX_DEVICES];
  cl_device_id device[MAX_DEVICES];
  size_t n;
} flat_list;

static clphmm_status list_platform_devices(flat_list *list);
static void dev_string(cl_device_id d, cl_device_info what, char *buf,
                       size_t n);

/* The first listing in the process, on one thread while the others wait:
 * the platforms and devices, and each device's name. PoCL starts its
 * devices lazily, and threads that listed and queried devices at once, as
 * the first OpenCL calls of the process, could crash in its
 * clGetDeviceInfo or find no device (three threads creating their first
 * contexts; GATK's binding objects on several threads). */
static pthread_once_t first_listing = PTHREAD_ONCE_INIT;
static void list_first(void) {
  flat_list list;
  char name[256];
  if (list_platform_devices(&list) == CLPHMM_SUCCESS)
    for (size_t i = 0; i < list.n; i++)
      dev_string(list.device[i], CL_DEVICE_NAME, name, sizeof name);
}

/* Every device of every platform, platform order. A platform that reports
 * no devices is skipped, not an error. */
static clphmm_status list_devices(flat_list *list) {
  clphmm_status st = cph_cl_load();
  if (st)
    return st;
  pthread_once(&first_listing, list_first);
  return list_platform_devices(list);
}

static clphmm_status list_platform_devices(flat_list *list) {
  cl_platform_id plats[MAX_PLATFORMS];
  cl_uint np = 0;
  cl_int err = cph_cl.GetPlatformIDs(MAX_PLATFORMS, plats, &np);
  if (err == -1001 || (err == CL_SUCCESS && np == 0))
    return cph_error(CLPHMM_ERROR_NO_OPENCL,
                     "no OpenCL platform is installed (the ICD loader found "
                     "no driver; e.g. install pocl-opencl-icd)");
  if (err != CL_SUCCESS)
    return cph_cl_fail(CLPHMM_ERROR_NO_OPENCL, "clGetPlatformIDs", err,
                       "listing OpenCL platforms");
  list->n = 0;
  for (cl_uint p = 0; p < np && p < MAX_PLATFORMS; p++) {
    cl_device_id devs[MAX_DEVICES];
    cl_uint nd = 0;
    err = cph_cl.GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devs,
                              &nd);
    if (err != CL_SUCCESS)
      continue;
    for (cl_uint d = 0; d < nd && list->n < MAX_DEVICES; d++) {
      list->platform[list->n] = plats[p];
      list->device[list->n++] = devs[d];
    }
  }
  return CLPHMM_SUCCESS;
}

clphmm_status cph_device_count(size_t *count) {
  flat_list list;
  clphmm_status st = list_devices(&list);
  if (!st)
    *count = list.n;
  return st;
}

/* The device list, which must not be empty (for selecting from it). */
static clphmm_status list_some_devices(flat_list *list) {
  clphmm_status st = list_devices(list);
  if (!st && list->n == 0)
    st = cph_error(CLPHMM_ERROR_NO_DEVICE,
                   "the OpenCL platforms report no device");
  return st;
}

static void dev_string(cl_device_id d, cl_device_info what, char *buf,
                       size_t n) {
  buf[0] = '\0';
  if (cph_cl.GetDeviceInfo(d, what, n - 1, buf, NULL) != CL_SUCCESS)
    snprintf(buf, n, "?");
  buf[n - 1] = '\0';
}

/* Architecture for the variant table: NVIDIA's compute capability (from
 * cl_nv_device_attribute_query), AMD's gfx name (ROCm names devices by
 * it); unknown elsewhere. */
#define CPH_CC_MAJOR_NV 0x4000
#define CPH_CC_MINOR_NV 0x4001
static void fill_arch(cph_device *dev) {
  dev->arch[0] = '\0';
  cl_uint major = 0, minor = 0;
  if (strstr(dev->extensions, "cl_nv_device_attribute_query") &&
      cph_cl.GetDeviceInfo(dev->id, CPH_CC_MAJOR_NV, sizeof major, &major,
                           NULL) == CL_SUCCESS &&
      cph_cl.GetDeviceInfo(dev->id, CPH_CC_MINOR_NV, sizeof minor, &minor,
                           NULL) == CL_SUCCESS) {
    snprintf(dev->arch, sizeof dev->arch, "sm_%u%u", major, minor);
    return;
  }
  const char *n = dev->info.name;
  if (strncmp(n, "gfx", 3) == 0) {
    size_t len = strcspn(n, ": ");
    if (len < sizeof dev->arch)
      snprintf(dev->arch, sizeof dev->arch, "%.*s", (int)len, n);
  }
}

static void fill_info(size_t index, cph_device *dev) {
  clphmm_device_info *in = &dev->info;
  memset(in, 0, sizeof *in);
  in->index = index;
  cl_device_id d = dev->id;
  dev_string(d, CL_DEVICE_NAME, in->name, sizeof in->name);
  dev_string(d, CL_DEVICE_VENDOR, in->vendor, sizeof in->vendor);
  dev_string(d, CL_DEVICE_VERSION, in->version, sizeof in->version);
  dev_string(d, CL_DRIVER_VERSION, in->driver, sizeof in->driver);
  dev_string(d, CL_DEVICE_EXTENSIONS, dev->extensions, sizeof dev->extensions);
  if (cph_cl.GetPlatformInfo(dev->platform, CL_PLATFORM_NAME,
                             sizeof in->platform - 1, in->platform,
                             NULL) != CL_SUCCESS)
    snprintf(in->platform, sizeof in->platform, "?");
  cl_device_type type = 0;
  cph_cl.GetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  in->type = (type & CL_DEVICE_TYPE_GPU)           ? CLPHMM_DEVICE_GPU
             : (type & CL_DEVICE_TYPE_CPU)         ? CLPHMM_DEVICE_CPU
             : (type & CL_DEVICE_TYPE_ACCELERATOR) ? CLPHMM_DEVICE_ACCELERATOR
                                                   : CLPHMM_DEVICE_OTHER;
  cl_uint u = 0;
  cl_ulong ul = 0;
  if (cph_cl.GetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u, &u,
                           NULL) == CL_SUCCESS)
    in->compute_units = u;
  if (cph_cl.GetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof u, &u,
                           NULL) == CL_SUCCESS)
    in->clock_mhz = u;
  if (cph_cl.GetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof ul, &ul,
                           NULL) == CL_SUCCESS)
    in->global_mem_bytes = ul;
  if (cph_cl.GetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ul, &ul,
                           NULL) == CL_SUCCESS)
    dev->max_alloc_bytes = ul;
  cl_uint align_bits = 0;
  if (cph_cl.GetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
                           &align_bits, NULL) == CL_SUCCESS)
    dev->base_align = align_bits / 8;
  if (cph_cl.GetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ul, &ul, NULL) ==
      CL_SUCCESS)
    in->local_mem_bytes = ul;
  cl_device_fp_config fp = 0;
  cph_cl.GetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL);
  in->has_fp64 = fp != 0 || strstr(dev->extensions, "cl_khr_fp64") != NULL;
  dev->has_subgroups = strstr(dev->extensions, "cl_khr_subgroups") != NULL ||
                       strstr(dev->extensions, "cl_intel_subgroups") != NULL;
  size_t wg = 0;
  cph_cl.GetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  dev->max_work_group_size = wg ? wg : 1;
  fill_arch(dev);
}

static clphmm_status open_from(const flat_list *list, size_t index,
                               cph_device *dev) {
  memset(dev, 0, sizeof *dev);
  dev->platform = list->platform[index];
  dev->id = list->device[index];
  fill_info(index, dev);
  return CLPHMM_SUCCESS;
}

clphmm_status cph_device_open(size_t index, cph_device *dev) {
  flat_list list;
  clphmm_status st = list_devices(&list);
  if (st)
    return st;
  if (index >= list.n)
    return cph_error(CLPHMM_ERROR_NO_DEVICE,
                     "device index %zu is out of range (%zu device%s)", index,
                     list.n, list.n == 1 ? "" : "s");
  return open_from(&list, index, dev);
}

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] &&
           tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n)
      return 1;
  }
  return n == 0;
}

/* Does device `i` match the selector? Index, "gpu", "cpu" or name part. */
static int matches(const cph_device *dev, const char *sel, size_t i) {
  char *end;
  unsigned long idx = strtoul(sel, &end, 10);
  if (*sel && isdigit((unsigned char)*sel) && *end == '\0')
    return idx == i;
  if (strcasecmp(sel, "gpu") == 0)
    return dev->info.type == CLPHMM_DEVICE_GPU;
  if (strcasecmp(sel, "cpu") == 0)
    return dev->info.type == CLPHMM_DEVICE_CPU;
  return contains_nocase(dev->info.name, sel);
}

static void describe_devices(const flat_list *list, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < list->n && used < n; i++) {
    cph_device d;
    open_from(list, i, &d);
    int w = snprintf(buf + used, n - used, "%s%zu: %s", i ? "; " : "", i,
                     d.info.name);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

/* Default rule: first GPU, else first CPU, else the first device. */
static size_t default_index(const flat_list *list) {
  size_t cpu = list->n;
  for (size_t i = 0; i < list->n; i++) {
    cph_device d;
    open_from(list, i, &d);
    if (d.info.type == CLPHMM_DEVICE_GPU)
      return i;
    if (d.info.type == CLPHMM_DEVICE_CPU && cpu == list->n)
      cpu = i;
  }
  return cpu < list->n ? cpu : 0;
}

/* Where a selector came from, for messages: the caller's, or the
 * environment's (a user who passed none may not think of it). */
static const char *origin(const char *selector) {
  return selector && *selector ? "" : " (from CLPHMM_DEVICE)";
}

/* The selector s[0, *len) without the spaces around it ("0 ", " gpu"), as
 * a single selector and as an item of a list: its start, *len its length. */
static const char *trim_span(const char *s, size_t *len) {
  size_t n = *len;
  while (n && isspace((unsigned char)*s)) {
    s++;
    n--;
  }
  while (n && isspace((unsigned char)s[n - 1]))
    n--;
  *len = n;
  return s;
}

static int is_all(const char *s, size_t len) {
  return len == 3 && tolower((unsigned char)s[0]) == 'a' &&
         tolower((unsigned char)s[1]) == 'l' &&
         tolower((unsigned char)s[2]) == 'l';
}

clphmm_status cph_device_select(const char *selector, cph_device *dev) {
  flat_list list;
  clphmm_status st = list_some_devices(&list);
  if (st)
    return st;
  const char *sel = selector && *selector ? selector : getenv("CLPHMM_DEVICE");
  if (!sel || !*sel)
    return open_from(&list, default_index(&list), dev);
  size_t len = strlen(sel);
  const char *at = trim_span(sel, &len);
  if (len == 0)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                     "device selector '%s'%s is empty", sel, origin(selector));
  /* A selector of 256 characters or more names no device (names are
   * shorter, indexes overflow): it is matched as it is, and fails. */
  char trimmed[256];
  if (len < sizeof trimmed) {
    memcpy(trimmed, at, len);
    trimmed[len] = '\0';
    sel = trimmed;
  }
  for (size_t i = 0; i < list.n; i++) {
    open_from(&list, i, dev);
    if (matches(dev, sel, i))
      return CLPHMM_SUCCESS;
  }
  char names[2048];
  describe_devices(&list, names, sizeof names);
  return cph_error(CLPHMM_ERROR_NO_DEVICE,
                   "no OpenCL device matches '%s'%s (devices: %s)", sel,
                   origin(selector), names);
}

/* "all": every GPU, else every device. */
static clphmm_status add_all(const flat_list *list, cph_device *devs,
                             size_t max, size_t *n) {
  size_t gpus = 0;
  for (size_t i = 0; i < list->n; i++) {
    cph_device d;
    open_from(list, i, &d);
    gpus += d.info.type == CLPHMM_DEVICE_GPU;
  }
  for (size_t i = 0; i < list->n; i++) {
    cph_device d;
    open_from(list, i, &d);
    if (gpus && d.info.type != CLPHMM_DEVICE_GPU)
      continue;
    if (*n == max)
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "'all' names more than %zu devices, the most one "
                       "context drives",
                       max);
    devs[(*n)++] = d;
  }
  return CLPHMM_SUCCESS;
}

clphmm_status cph_device_select_list(const char *selector, cph_device *devs,
                                     size_t max, size_t *n) {
  *n = 0;
  const char *sel = selector && *selector ? selector : getenv("CLPHMM_DEVICE");
  size_t whole = sel ? strlen(sel) : 0;
  const char *whole_at = sel ? trim_span(sel, &whole) : NULL;
  if (!sel || !*sel || (!strchr(sel, ',') && !is_all(whole_at, whole))) {
    clphmm_status st = cph_device_select(selector, &devs[0]);
    if (!st)
      *n = 1;
    return st;
  }
  flat_list list;
  clphmm_status st = list_some_devices(&list);
  if (st)
    return st;
  size_t item = 0;
  for (const char *p = sel;; item++) {
    size_t len = strcspn(p, ",");
    const char *next = p + len;
    p = trim_span(p, &len);
    char one[256];
    if (len == 0)
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "device list '%s'%s: item %zu is empty", sel,
                       origin(selector), item + 1);
    if (len >= sizeof one)
      return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                       "device list '%s'%s: item %zu is too long", sel,
                       origin(selector), item + 1);
    memcpy(one, p, len);
    one[len] = '\0';
    if (is_all(one, len)) {
      st = add_all(&list, devs, max, n);
      if (st)
        return st;
    } else {
      size_t i = 0;
      for (; i < list.n; i++) {
        open_from(&list, i, &devs[*n < max ? *n : max - 1]);
        if (matches(&devs[*n < max ? *n : max - 1], one, i))
          break;
      }
      if (i == list.n) {
        char names[2048];
        describe_devices(&list, names, sizeof names);
        return cph_error(CLPHMM_ERROR_NO_DEVICE,
                         "device list '%s'%s: no OpenCL device matches item "
                         "%zu, '%s' (devices: %s)",
                         sel, origin(selector), item + 1, one, names);
      }
      if (*n == max)
        return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT,
                         "device list '%s'%s names more than %zu devices, the "
                         "most one context drives",
                         sel, origin(selector), max);
      (*n)++;
    }
    if (!*next)
      break;
    p = next + 1; /* after the comma */
  }
  return CLPHMM_SUCCESS;
}

clphmm_status clphmm_device_count(size_t *count) {
  if (!count)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "count is NULL");
  return cph_device_count(count);
}

clphmm_status clphmm_device_get_info(size_t index, clphmm_device_info *info) {
  if (!info)
    return cph_error(CLPHMM_ERROR_INVALID_ARGUMENT, "info is NULL");
  cph_device dev;
  clphmm_status st = cph_device_open(index, &dev);
  if (!st)
    *info = dev.info;
  return st;
}
