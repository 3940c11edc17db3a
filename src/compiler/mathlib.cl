// vkcl's math library shim, compiled once per process and linked with libclc's math functions
// (see mathlib.rs). Built with -cl-no-stdinc: every built-in used is declared here.
//
// 1. half_log, half_log2, half_log10, half_powr: the full-precision functions (OpenCL allows
//    8192 ulp; lavapipe's GLSL Log/Log2/Pow have an absolute error near x = 1 that exceeds
//    even that).
// 2. sincos, lgamma_r, remquo with a generic-address-space pointer (OpenCL C 3.0 with
//    __opencl_c_generic_address_space): libclc 15 defines only the private, global and local
//    variants; the result goes through a private temporary.

#define V2 __attribute__((ext_vector_type(2)))
#define V3 __attribute__((ext_vector_type(3)))
#define V4 __attribute__((ext_vector_type(4)))
#define V8 __attribute__((ext_vector_type(8)))
#define V16 __attribute__((ext_vector_type(16)))
typedef float f1;
typedef float V2 f2;
typedef float V3 f3;
typedef float V4 f4;
typedef float V8 f8;
typedef float V16 f16;
typedef int i1;
typedef int V2 i2;
typedef int V3 i3;
typedef int V4 i4;
typedef int V8 i8;
typedef int V16 i16;

#define OVL __attribute__((overloadable))

#define HALF_UNARY(name, full, T)                                                             \
    T OVL full(T);                                                                            \
    T OVL name(T x) { return full(x); }
#define HALF_BINARY(name, full, T)                                                            \
    T OVL full(T, T);                                                                         \
    T OVL name(T x, T y) { return full(x, y); }
#define GENERIC_PTR(name, T, P)                                                               \
    T OVL name(T x, __private P *p);                                                          \
    T OVL name(T x, __generic P *p) {                                                         \
        P t;                                                                                  \
        T r = name(x, &t);                                                                    \
        *p = t;                                                                               \
        return r;                                                                             \
    }
#define REMQUO(T, P)                                                                          \
    T OVL remquo(T x, T y, __private P *p);                                                   \
    T OVL remquo(T x, T y, __generic P *p) {                                                  \
        P t;                                                                                  \
        T r = remquo(x, y, &t);                                                               \
        *p = t;                                                                               \
        return r;                                                                             \
    }

#define ALL(N)                                                                                \
    HALF_UNARY(half_log, log, f##N)                                                           \
    HALF_UNARY(half_log2, log2, f##N)                                                         \
    HALF_UNARY(half_log10, log10, f##N)                                                       \
    HALF_BINARY(half_powr, powr, f##N)                                                        \
    GENERIC_PTR(sincos, f##N, f##N)                                                           \
    GENERIC_PTR(lgamma_r, f##N, i##N)                                                         \
    REMQUO(f##N, i##N)

ALL(1)
ALL(2)
ALL(3)
ALL(4)
ALL(8)
ALL(16)
