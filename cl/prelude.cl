/* Prepended to every kernel: the working precision and its scale K. */
#if CPH_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
typedef double4 real4;
typedef double8 real8;
#define SCALE 0x1p1020
#else
typedef float real;
typedef float4 real4;
typedef float8 real8;
#define SCALE 0x1p120f
#endif
