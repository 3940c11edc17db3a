// vkcl's math library shim, part 2: the `half` (cl_khr_fp16) math built-ins (OpenCL C 3.0
// section 6.15.2), appended to mathlib.cl (see mathlib.rs). libclc 15 has almost no half
// functions, and lavapipe's GLSL.std.450 instructions on 16-bit floats are its float ones with
// Vulkan's precision. So each function here converts its operands to float (exactly), calls
// the float built-in (libclc's or vkcl's, within the float limits: a few float ulp, i.e. about
// 2^-12 half ulp) and rounds the result to half once. The result is within 0.5 + 2^-11 half
// ulp, inside every half limit of OpenCL C 3.0 section 7.4 (2 ulp and more for the
// transcendental functions); the functions whose half limit is 0 ulp (fabs, floor, fmod,
// ldexp...) are exact in float, and their result is a half value.
//
// fma(half) is the exception: a*b is exact in float but a*b + c is not, and rounding that sum
// to half would round twice. The float sum's rounding error (two-sum) makes it round-to-odd
// (the last bit set when inexact), after which rounding to half (13 bits fewer) is correct.
//
// nextafter works on the half's bits (stepping in float would step a float ulp).

#pragma OPENCL EXTENSION cl_khr_fp16 : enable

typedef half h1;
typedef half V2 h2;
typedef half V3 h3;
typedef half V4 h4;
typedef half V8 h8;
typedef half V16 h16;
typedef short s1;
typedef short V2 s2;
typedef short V3 s3;
typedef short V4 s4;
typedef short V8 s8;
typedef short V16 s16;

#define CVT(v, T) __builtin_convertvector(v, T)
// CVT_N: conversion of a value of width N (a cast for scalars).
#define CVT_1(v, T) ((T)(v))
#define CVT_2(v, T) CVT(v, T)
#define CVT_3(v, T) CVT(v, T)
#define CVT_4(v, T) CVT(v, T)
#define CVT_8(v, T) CVT(v, T)
#define CVT_16(v, T) CVT(v, T)

// One overload for scalars and each vector width N, given FN(N) expanding to its definition.
#define EACH_WIDTH(FN) FN(1) FN(2) FN(3) FN(4) FN(8) FN(16)

#define H_UN(name)                                                                            \
    f1 OVL name(f1);                                                                          \
    f2 OVL name(f2);                                                                          \
    f3 OVL name(f3);                                                                          \
    f4 OVL name(f4);                                                                          \
    f8 OVL name(f8);                                                                          \
    f16 OVL name(f16);                                                                        \
    h1 OVL name(h1 x) { return (h1)name((f1)x); }                                             \
    h2 OVL name(h2 x) { return CVT(name(CVT(x, f2)), h2); }                                   \
    h3 OVL name(h3 x) { return CVT(name(CVT(x, f3)), h3); }                                   \
    h4 OVL name(h4 x) { return CVT(name(CVT(x, f4)), h4); }                                   \
    h8 OVL name(h8 x) { return CVT(name(CVT(x, f8)), h8); }                                   \
    h16 OVL name(h16 x) { return CVT(name(CVT(x, f16)), h16); }

#define H_BIN_N(name, N)                                                                      \
    f##N OVL name(f##N, f##N);                                                                \
    h##N OVL name(h##N x, h##N y) { return CVT(name(CVT(x, f##N), CVT(y, f##N)), h##N); }
#define H_BIN(name)                                                                           \
    f1 OVL name(f1, f1);                                                                      \
    h1 OVL name(h1 x, h1 y) { return (h1)name((f1)x, (f1)y); }                                \
    H_BIN_N(name, 2) H_BIN_N(name, 3) H_BIN_N(name, 4) H_BIN_N(name, 8) H_BIN_N(name, 16)

// fmin(halfn, half) and fmax(halfn, half).
#define H_BIN_SCALAR_N(name, N)                                                               \
    h##N OVL name(h##N x, h1 y) { return name(x, (h##N)y); }
#define H_BIN_SCALAR(name)                                                                    \
    H_BIN_SCALAR_N(name, 2)                                                                   \
    H_BIN_SCALAR_N(name, 3)                                                                   \
    H_BIN_SCALAR_N(name, 4) H_BIN_SCALAR_N(name, 8) H_BIN_SCALAR_N(name, 16)

// name(halfn, intn): ldexp, pown, rootn.
#define H_INT_N(name, N)                                                                      \
    f##N OVL name(f##N, i##N);                                                                \
    h##N OVL name(h##N x, i##N n) { return CVT(name(CVT(x, f##N), n), h##N); }
#define H_INT(name)                                                                           \
    f1 OVL name(f1, i1);                                                                      \
    h1 OVL name(h1 x, i1 n) { return (h1)name((f1)x, n); }                                    \
    H_INT_N(name, 2) H_INT_N(name, 3) H_INT_N(name, 4) H_INT_N(name, 8) H_INT_N(name, 16)

H_UN(acos)
H_UN(acosh)
H_UN(acospi)
H_UN(asin)
H_UN(asinh)
H_UN(asinpi)
H_UN(atan)
H_UN(atanh)
H_UN(atanpi)
H_UN(cbrt)
H_UN(ceil)
H_UN(cos)
H_UN(cosh)
H_UN(cospi)
H_UN(erf)
H_UN(erfc)
H_UN(exp)
H_UN(exp2)
H_UN(exp10)
H_UN(expm1)
H_UN(fabs)
H_UN(floor)
H_UN(lgamma)
H_UN(log)
H_UN(log2)
H_UN(log10)
H_UN(log1p)
H_UN(logb)
H_UN(rint)
H_UN(round)
H_UN(rsqrt)
H_UN(sin)
H_UN(sinh)
H_UN(sinpi)
H_UN(sqrt)
H_UN(tan)
H_UN(tanh)
H_UN(tanpi)
H_UN(tgamma)
H_UN(trunc)

H_BIN(atan2)
H_BIN(atan2pi)
H_BIN(copysign)
H_BIN(fdim)
H_BIN(fmax)
H_BIN(fmin)
H_BIN(fmod)
H_BIN(hypot)
H_BIN(maxmag)
H_BIN(minmag)
H_BIN(pow)
H_BIN(powr)
H_BIN(remainder)
H_BIN_SCALAR(fmax)
H_BIN_SCALAR(fmin)

H_INT(ldexp)
H_INT(pown)
H_INT(rootn)

// ldexp(halfn, int).
#define H_LDEXP_SCALAR(N)                                                                     \
    h##N OVL ldexp(h##N x, i1 n) { return ldexp(x, (i##N)n); }
H_LDEXP_SCALAR(2)
H_LDEXP_SCALAR(3)
H_LDEXP_SCALAR(4)
H_LDEXP_SCALAR(8)
H_LDEXP_SCALAR(16)

// ilogb(half): float's ilogb of the same value (every half is a normal float; FP_ILOGB0 and
// FP_ILOGBNAN are the same for both types).
#define H_ILOGB(N)                                                                            \
    i##N OVL ilogb(f##N);                                                                     \
    i##N OVL ilogb(h##N x) { return ilogb(CVT(x, f##N)); }
i1 OVL ilogb(f1);
i1 OVL ilogb(h1 x) { return ilogb((f1)x); }
H_ILOGB(2)
H_ILOGB(3)
H_ILOGB(4)
H_ILOGB(8)
H_ILOGB(16)

// fma (see the top): a*b + c rounded once. `mad` is not here: OpenCL C leaves its precision to
// the implementation, so a program's half `mad` is OpenCL.std `mad` on half operands, a half
// multiply and add the driver may fuse (packed on NVIDIA for half2), where this fma costs about
// fifteen float instructions per component. libclc's own half `mad` calls (renamed by
// mathlib.rs, none in the functions vkcl takes today) are exact, as for float.
EXACT_MAD(h1)
EXACT_MAD(h2)
EXACT_MAD(h3)
EXACT_MAD(h4)
EXACT_MAD(h8)
EXACT_MAD(h16)
static h1 fma_h(h1 a, h1 b, h1 c) {
    f1 p = (f1)a * (f1)b; // exact: 11 + 11 significant bits
    f1 fc = (f1)c;
    f1 s = p + fc;
    f1 bv = s - p;
    f1 e = (p - (s - bv)) + (fc - bv); // s + e == p + c exactly (two-sum)
    uint bits = __builtin_astype(s, uint);
    if (e != 0.0f && (bits & 1u) == 0u && (bits & 0x7f800000u) != 0x7f800000u) {
        // Round to odd: towards e by one float ulp.
        bits = ((e > 0.0f) == (s > 0.0f)) ? bits + 1u : bits - 1u;
        s = __builtin_astype(bits, f1);
    }
    return (h1)s;
}
h1 OVL fma(h1 a, h1 b, h1 c) { return fma_h(a, b, c); }
#define H_FMA(N)                                                                              \
    h##N OVL fma(h##N a, h##N b, h##N c) {                                                    \
        h##N r;                                                                               \
        for (int i = 0; i < N; i++) {                                                         \
            r[i] = fma_h(a[i], b[i], c[i]);                                                   \
        }                                                                                     \
        return r;                                                                             \
    }
H_FMA(2)
H_FMA(3)
H_FMA(4)
H_FMA(8)
H_FMA(16)

// nextafter on the bits: towards y by one half ulp.
static h1 nextafter_h(h1 x, h1 y) {
    if (x != x || y != y) {
        return x + y;
    }
    if (x == y) {
        return y;
    }
    short ix = __builtin_astype(x, short);
    if (x == (h1)0.0f) {
        ix = (y > x) ? (short)0x0001 : (short)0x8001;
    } else {
        ix = ((y > x) == (x > (h1)0.0f)) ? ix + 1 : ix - 1;
    }
    return __builtin_astype(ix, h1);
}
h1 OVL nextafter(h1 x, h1 y) { return nextafter_h(x, y); }
#define H_NEXTAFTER(N)                                                                        \
    h##N OVL nextafter(h##N x, h##N y) {                                                      \
        h##N r;                                                                               \
        for (int i = 0; i < N; i++) {                                                         \
            r[i] = nextafter_h(x[i], y[i]);                                                   \
        }                                                                                     \
        return r;                                                                             \
    }
H_NEXTAFTER(2)
H_NEXTAFTER(3)
H_NEXTAFTER(4)
H_NEXTAFTER(8)
H_NEXTAFTER(16)

// Functions with a pointer result, for each address space a program can pass (private,
// global, local; generic where the compiler offers it): the float function's results through
// private temporaries, each rounded to half (exactly, for modf, frexp, remquo; sincos
// and lgamma_r as their value functions).
#define H_PTR_AS(name, N, P, AS)                                                              \
    h##N OVL name(h##N x, AS P##N *p) {                                                       \
        f##N t;                                                                               \
        f##N r = name(CVT_##N(x, f##N), &t);                                                      \
        *p = CVT_##N(t, P##N);                                                                    \
        return CVT_##N(r, h##N);                                                                  \
    }
// fract: the float result (at most 0x1.fffffep-1) may round up to 1.0 in half; OpenCL wants
// fmin(x - floor(x), 0x1.ffcp-1) (the largest half below 1).
#define H_FRACT_AS(N, AS)                                                                     \
    h##N OVL fract(h##N x, AS h##N *p) {                                                      \
        f##N t;                                                                               \
        f##N r = fract(CVT_##N(x, f##N), &t);                                                 \
        *p = CVT_##N(t, h##N);                                                                \
        h##N one = (h##N)1.0f;                                                                \
        h##N rh = CVT_##N(r, h##N);                                                           \
        return rh == one ? (h##N)0x1.ffcp-1f : rh;                                           \
    }
#define H_PTR_INT_AS(name, N, AS)                                                             \
    h##N OVL name(h##N x, AS i##N *p) {                                                       \
        i##N t;                                                                               \
        f##N r = name(CVT_##N(x, f##N), &t);                                                      \
        *p = t;                                                                               \
        return CVT_##N(r, h##N);                                                                  \
    }
#define H_REMQUO_AS(N, AS)                                                                    \
    h##N OVL remquo(h##N x, h##N y, AS i##N *p) {                                             \
        i##N t;                                                                               \
        f##N r = remquo(CVT_##N(x, f##N), CVT_##N(y, f##N), &t);                                      \
        *p = t;                                                                               \
        return CVT_##N(r, h##N);                                                                  \
    }
#define H_PTR_DECL(N)                                                                         \
    f##N OVL sincos(f##N, __private f##N *);                                                  \
    f##N OVL fract(f##N, __private f##N *);                                                   \
    f##N OVL modf(f##N, __private f##N *);                                                    \
    f##N OVL frexp(f##N, __private i##N *);                                                   \
    f##N OVL lgamma_r(f##N, __private i##N *);                                                \
    f##N OVL remquo(f##N, f##N, __private i##N *);
#define H_PTR(N_)                                                                             \
    H_PTR_DECL(N_)                                                                            \
    H_PTR_WIDTH(N_)
#define H_PTR_WIDTH(N_) H_PTR_WIDTH_(N_)
#define H_PTR_WIDTH_(N)                                                                       \
    H_PTR_AS(sincos, N, h, __private)                                                         \
    H_FRACT_AS(N, __private)                                                          \
    H_PTR_AS(modf, N, h, __private)                                                           \
    H_PTR_INT_AS(frexp, N, __private)                                                         \
    H_PTR_INT_AS(lgamma_r, N, __private)                                                      \
    H_REMQUO_AS(N, __private)                                                                 \
    H_PTR_AS(sincos, N, h, __global)                                                          \
    H_FRACT_AS(N, __global)                                                           \
    H_PTR_AS(modf, N, h, __global)                                                            \
    H_PTR_INT_AS(frexp, N, __global)                                                          \
    H_PTR_INT_AS(lgamma_r, N, __global)                                                       \
    H_REMQUO_AS(N, __global)                                                                  \
    H_PTR_AS(sincos, N, h, __local)                                                           \
    H_FRACT_AS(N, __local)                                                            \
    H_PTR_AS(modf, N, h, __local)                                                             \
    H_PTR_INT_AS(frexp, N, __local)                                                           \
    H_PTR_INT_AS(lgamma_r, N, __local)                                                        \
    H_REMQUO_AS(N, __local)                                                                   \
    H_PTR_AS(sincos, N, h, __generic)                                                         \
    H_FRACT_AS(N, __generic)                                                          \
    H_PTR_AS(modf, N, h, __generic)                                                           \
    H_PTR_INT_AS(frexp, N, __generic)                                                         \
    H_PTR_INT_AS(lgamma_r, N, __generic)                                                      \
    H_REMQUO_AS(N, __generic)
EACH_WIDTH(H_PTR)
