// The program pyopencl 2026.1.4 builds for `clmath.bessel_jn` on doubles (its elementwise
// kernel generator, `get_bessel_kernel`), as text: the Bessel code itself is pyopencl's
// `pyopencl-bessel-j.cl`, found through `-I <pyopencl>/cl` (not part of vkcl).
#if __OPENCL_C_VERSION__ < 120
#pragma OPENCL EXTENSION cl_khr_fp64: enable
#endif
#define PYOPENCL_DEFINE_CDOUBLE
#include <pyopencl-bessel-j.cl>

#define PYOPENCL_ELWISE_CONTINUE continue

__kernel void bessel_jn_kernel(__global double *z__base, long z__offset, int ord_n,
                               __global double *x__base, long x__offset, long n)
{
  int lid = get_local_id(0);
  int gsize = get_global_size(0);
  int work_group_start = get_local_size(0)*get_group_id(0);
  long i;

  __global double *z = (__global double *) ((__global char *) z__base + z__offset);
  __global double *x = (__global double *) ((__global char *) x__base + x__offset);
  for (i = work_group_start + lid; i < n; i += gsize)
  {
    z[i] = bessel_jn(ord_n, x[i]);
  }
}
