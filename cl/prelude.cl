/* Prepended to every kernel: the working precision and its scale K. */
#if CPH_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#define SCALE 0x1p1020
#else
typedef float real;
#define SCALE 0x1p120f
#endif
