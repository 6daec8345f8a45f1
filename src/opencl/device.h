/* OpenCL device discovery, selection and capabilities. */
#ifndef CLPHMM_DEVICE_H
#define CLPHMM_DEVICE_H

#include "opencl/clapi.h"

/* What the kernels and the planner need to know about a device. */
typedef struct cph_device {
  cl_platform_id platform;
  cl_device_id id;
  clphmm_device_info info;
  char extensions[4096];
  int has_subgroups; /* cl_khr_subgroups or cl_intel_subgroups */
  size_t max_work_group_size;
  uint64_t max_alloc_bytes; /* CL_DEVICE_MAX_MEM_ALLOC_SIZE (0: unknown) */
  size_t base_align; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes (0: unknown) */
  char arch[64];     /* "sm_90" (NVIDIA), "gfx90a" (AMD), else "" */
} cph_device;

/* Number of devices over all platforms (loads OpenCL first). */
clphmm_status cph_device_count(size_t *count);

/* Fill `dev` for device `index` of the flat list. */
clphmm_status cph_device_open(size_t index, cph_device *dev);

/* Resolve a selector (NULL/"" = $CLPHMM_DEVICE, else default rule) into a
 * device. Spaces around the selector are ignored; one of spaces alone is
 * an error. The error lists the devices that exist. */
clphmm_status cph_device_select(const char *selector, cph_device *dev);

/* Resolve a selector that may name several devices: a comma-separated
 * list of selectors, each as above (the first device that matches, spaces
 * around it ignored), or "all" (every GPU, else every device), alone or as
 * an item. At most `max` devices go to devs[0..*n). A selector without a
 * comma other than "all" is cph_device_select's. Errors name the item. */
clphmm_status cph_device_select_list(const char *selector, cph_device *devs,
                                     size_t max, size_t *n);

#endif
