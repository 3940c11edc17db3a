// vkcl's math library shim, compiled once per process and linked with libclc's math functions
// (see mathlib.rs). Built with -cl-no-stdinc: every built-in used is declared here.
//
// 1. half_log, half_log2, half_log10, half_powr: the full-precision functions (OpenCL allows
//    8192 ulp; lavapipe's GLSL Log/Log2/Pow have an absolute error near x = 1 that exceeds
//    even that).
// 2. sincos, lgamma_r, remquo with a generic-address-space pointer (OpenCL C 3.0 with
//    __opencl_c_generic_address_space): libclc 15 defines only the private, global and local
//    variants; the result goes through a private temporary.
// 3. sinpi, cospi, tanpi: libclc's scalar functions (renamed __clc_sinpi... by mathlib.rs) with
//    the signed zeros of OpenCL C 3.0 section 7.5.1 (sinpi(n) = copysign(0, n), cospi(n + 0.5)
//    = +0, tanpi(n) = copysign(0, n) for even n and copysign(0, -n) for odd n), which libclc
//    gets wrong.
// 4. tgamma: libclc computes exp(lgamma(x)), whose error grows with |lgamma(x)| (over 100 ulp
//    near x = 27; inf instead of -0 for large negative x). Here Γ(x) = Γ(t) (x-1)(x-2)...(x-n)
//    with t = x - n in [1, 2): every factor is exact, the product is kept as a float-float pair
//    (fma gives each product's rounding error exactly) scaled by powers of two, and only
//    Γ(t) = exp(lgamma(t)), |lgamma(t)| < 0.13, comes from libclc. Negative x by reflection:
//    Γ(x) = -π / (x sinpi(x) Γ(-x)).
// 5. erfc: libclc's (fdlibm's) erfc(x) for 1.25 <= x < 28 is exp(-z*z - 0.5625) exp(...) / x
//    with z = x cut to 12 significant bits, so that z*z is exact, but -z*z - 0.5625 is not
//    exact where it crosses a power of two (x just below 4 or 8: 64 ulp at x = 7.97). The
//    rounding error e of that sum is found exactly (two-sum) and the result scaled by 1 + e.
// 6. double: sinpi, cospi, tanpi, tgamma as for float, and an exact, branch-free fma(double)
//    (see there), which libclc's double functions call too.
// 8. double atan, atanpi, erf, expm1, sin, tan: libclc's (renamed __clc_atan_d... by
//    mathlib.rs) return +0 for -0 (atan computes from |x| and puts the sign back where
//    x != |x|, false for -0), where OpenCL C 3.0 section 7.5.1 (C99 Annex F) asks f(±0) = ±0.

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
typedef double d1;
typedef double V2 d2;
typedef double V3 d3;
typedef double V4 d4;
typedef double V8 d8;
typedef double V16 d16;
typedef int i1;
typedef int V2 i2;
typedef int V3 i3;
typedef int V4 i4;
typedef int V8 i8;
typedef int V16 i16;

#define OVL __attribute__((overloadable))

#pragma OPENCL FP_CONTRACT OFF

// 7. __vkcl_mad_exact: what libclc's own `mad` calls become (mathlib.rs renames them, and the
//    pragma above keeps the shim's `a * b + c` a multiply and an add): a product and a sum,
//    each rounded, which lowering decorates NoContraction. libclc's extended-precision
//    arithmetic needs the product rounded on its own (with it fused, float `pow` was 26.9 ulp
//    off on NVIDIA, `sin` 1535 ulp on lavapipe); a program's own `mad` stays OpenCL.std `mad`,
//    which the driver may fuse (lower/extinst.rs). The half variants are in mathlib_half.cl.
#define EXACT_MAD(T)                                                                          \
    T OVL __vkcl_mad_exact(T a, T b, T c) { return a * b + c; }
EXACT_MAD(f1)
EXACT_MAD(f2)
EXACT_MAD(f3)
EXACT_MAD(f4)
EXACT_MAD(f8)
EXACT_MAD(f16)
EXACT_MAD(d1)
EXACT_MAD(d2)
EXACT_MAD(d3)
EXACT_MAD(d4)
EXACT_MAD(d8)
EXACT_MAD(d16)

float OVL exp(float);
float OVL lgamma(float);
float OVL fma(float, float, float);
float OVL floor(float);
float OVL trunc(float);
float OVL copysign(float, float);
float OVL ldexp(float, int);
float __clc_sinpi(float);
float __clc_cospi(float);
float __clc_tanpi(float);
float __clc_erfc(float);

#define INF __builtin_inff()
#define NAN __builtin_nanf("")

float OVL sinpi(float x) {
    float r = __clc_sinpi(x);
    return r == 0.0f ? copysign(0.0f, x) : r;
}

float OVL cospi(float x) {
    float r = __clc_cospi(x);
    return r == 0.0f ? 0.0f : r;
}

float OVL tanpi(float x) {
    float r = __clc_tanpi(x);
    if (r == 0.0f && x == trunc(x)) {
        float h = x * 0.5f;
        return h == trunc(h) ? copysign(0.0f, x) : copysign(0.0f, -x);
    }
    return r;
}

float OVL erfc(float x) {
    float r = __clc_erfc(x);
    if (x >= 1.25f && x < 28.0f) {
        float z = __builtin_astype(__builtin_astype(x, int) & (int)0xfffff000, float);
        float t = -(z * z); // exact
        float a = t - 0.5625f;
        // Two-sum: a + e == t - 0.5625 exactly.
        float bv = a - t;
        float e = (t - (a - bv)) + (-0.5625f - bv);
        r = r + r * e;
    }
    return r;
}

// Γ(t) for t in [1, 2]: lgamma(t) is in [-0.1215, 0], so exp adds little to its error.
static float gamma12(float t) { return exp(lgamma(t)); }

// Γ(x) for x in [1, 64) as (hi + *lo) * 2^*e.
static float gamma_ge1(float x, float *lo, int *e) {
    float n = floor(x) - 1.0f;
    float hi = gamma12(x - n);
    float l = 0.0f;
    int ex = 0;
    for (float k = 1.0f; k <= n; k += 1.0f) {
        float f = x - k; // exact: x and the result share an exponent range
        float p = hi * f;
        float err = fma(hi, f, -p);
        float q = fma(l, f, err);
        float s = p + q;
        l = q - (s - p);
        hi = s;
        if (hi > 0x1p64f) {
            hi *= 0x1p-64f;
            l *= 0x1p-64f;
            ex += 64;
        }
    }
    *lo = l;
    *e = ex;
    return hi;
}

float OVL tgamma(float x) {
    if (x != x) {
        return x;
    }
    if (x == 0.0f) {
        return copysign(INF, x);
    }
    float lo;
    int e;
    if (x > 0.0f) {
        if (x > 36.0f) {
            return INF;
        }
        if (x < 1.0f) {
            return gamma12(1.0f + x) / x;
        }
        float hi = gamma_ge1(x, &lo, &e);
        return ldexp(hi + lo, e);
    }
    if (x == trunc(x)) {
        return NAN; // negative integers and -inf
    }
    float ax = -x;
    float s = __clc_sinpi(x);
    if (ax < 1.0f) {
        // Γ(-x) = Γ(1 + ax) / ax, so x sinpi(x) Γ(-x) = -sinpi(x) Γ(1 + ax).
        return 0x1.921fb6p+1f / (s * gamma12(1.0f + ax));
    }
    if (ax > 60.0f) {
        return copysign(0.0f, s);
    }
    float hi = gamma_ge1(ax, &lo, &e);
    float m = (x * s) * (hi + lo);
    return ldexp(-0x1.921fb6p+1f / m, -e);
}

// The double variants of sinpi, cospi, tanpi and tgamma (same reasons and methods as the
// float ones above; libclc's double tgamma is exp(lgamma(x)) too).
double OVL exp(double);
double OVL lgamma(double);
double OVL floor(double);
double OVL trunc(double);
double OVL copysign(double, double);
double OVL ldexp(double, int);
double __clc_sinpi_d(double);
double __clc_cospi_d(double);
double __clc_tanpi_d(double);

double OVL sinpi(double x) {
    double r = __clc_sinpi_d(x);
    return r == 0.0 ? copysign(0.0, x) : r;
}

double OVL cospi(double x) {
    double r = __clc_cospi_d(x);
    return r == 0.0 ? 0.0 : r;
}

double OVL tanpi(double x) {
    double r = __clc_tanpi_d(x);
    if (r == 0.0 && x == trunc(x)) {
        double h = x * 0.5;
        return h == trunc(h) ? copysign(0.0, x) : copysign(0.0, -x);
    }
    return r;
}

#define KEEP_SIGNED_ZERO(name)                                                                \
    double __clc_##name##_d(double);                                                          \
    double OVL name(double x) {                                                               \
        double r = __clc_##name##_d(x);                                                       \
        return x == 0.0 ? x : r;                                                              \
    }
KEEP_SIGNED_ZERO(atan)
KEEP_SIGNED_ZERO(atanpi)
KEEP_SIGNED_ZERO(erf)
KEEP_SIGNED_ZERO(expm1)
KEEP_SIGNED_ZERO(sin)
KEEP_SIGNED_ZERO(tan)

// fma(double): the exact a*b + c, rounded once (to nearest even), branch-free in double
// arithmetic. lavapipe's GLSL Fma on doubles rounds the product first (tests/fp64.rs), which
// breaks libclc's double functions (their error terms are fma(a, b, -a*b)); every double fma,
// the program's and libclc's, comes here, inlined dozens of times per libclc function, so it
// is kept short and without branches (llvmpipe's compile time grows with both).
// 1. a = A 2^ea, b = B 2^eb with |A|, |B| in [1, 2) (subnormals normalized); c = C 2^E with
//    E = ea + eb, its exponent clamped to [-200, 61] relative to the product (below, c only
//    decides a rounding direction, any tiny value of its sign does; above, the result is c).
// 2. Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
//    using rounding to odd" (IEEE Trans. Computers 57(4), 2008), algorithm 5: A*B = uh + ul
//    exactly (Veltkamp/Dekker), C + uh = th + tl exactly (two-sum), v = tl + ul rounded to
//    odd (a two-sum, then the last bit set towards the error), r = th + v rounded to nearest
//    is A*B + C rounded to nearest. No overflow or underflow can happen at this scale.
// 3. r 2^E: exact, or overflow (correct), or subnormal, where the second rounding is wrong
//    only when r is halfway between two subnormals and A*B + C != r: then the neighbour on the
//    side of the remainder is the answer (double rounding).
// Tested against the host's fma on edge and random inputs (tests/fp64.rs).
typedef unsigned long ulong;
typedef unsigned int uint;
double OVL fabs(double);
int OVL isinf(double);
int OVL isfinite(double);

// 2^e as a double, e in [-1022, 1023].
static double pow2_d(long e) { return __builtin_astype((ulong)(e + 1023) << 52, double); }

// x = m 2^e with |m| in [1, 2) (x finite, nonzero; subnormals normalized); x = 0: m = x.
static double norm_d(double x, long *e) {
    int sub = fabs(x) < 0x1p-1022;
    ulong b = __builtin_astype(sub ? x * 0x1p54 : x, ulong);
    *e = (long)((b >> 52) & 0x7ff) - 1023 - (sub ? 54 : 0);
    double m = __builtin_astype((b & 0x800fffffffffffffUL) | 0x3ff0000000000000UL, double);
    return x == 0.0 ? x : m;
}

// x 2^e, exact unless the result is out of range (then rounded once).
static double scale_d(double x, long e) {
    e = e < -2000 ? -2000 : (e > 2040 ? 2040 : e);
    long e1 = e >> 1;
    return (x * pow2_d(e1)) * pow2_d(e - e1);
}

double OVL fma(double a, double b, double c) {
    long ea, eb, ec;
    double A = norm_d(a, &ea), B = norm_d(b, &eb), Cm = norm_d(c, &ec);
    long E = ea + eb;
    long d = ec - E;
    double C = Cm * pow2_d(d < -200 ? -200 : (d > 61 ? 61 : d));
    double uh = A * B;
    double ta = A * 134217729.0, ah = ta - (ta - A), al = A - ah;
    double tb = B * 134217729.0, bh = tb - (tb - B), bl = B - bh;
    double ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl;
    double th = C + uh, z = th - C, tl = (C - (th - z)) + (uh - z);
    double s = tl + ul, y = s - tl, se = (tl - (s - y)) + (ul - y);
    ulong sb = __builtin_astype(s, ulong);
    int odd = se != 0.0 && (sb & 1) == 0;
    double v = odd ? __builtin_astype(sb + ((se > 0.0) == (s > 0.0) ? 1UL : ~0UL), double) : s;
    double e2 = (s - v) + se;
    double r = th + v, w = r - th, e1 = (th - (r - w)) + (v - w);
    double rest = e1 != 0.0 ? e1 : e2;
    double res = scale_d(r, E);
    double back = scale_d(res, -E);
    long g = -1075 - E;
    double hs = pow2_d(g < -1000 ? -1000 : (g > 1000 ? 1000 : g));
    int mid = rest != 0.0 && r != back && fabs(r - back) == hs;
    res = mid ? scale_d(r + copysign(hs, rest), E) : res;
    res = copysign(res, r);
    res = d > 61 && c != 0.0 ? c : res;
    int special = !(isfinite(a) && isfinite(b) && isfinite(c)) || a == 0.0 || b == 0.0;
    double naive = isinf(c) && isfinite(a) && isfinite(b) ? c : a * b + c;
    return special ? naive : res;
}

static double gamma12_d(double t) { return exp(lgamma(t)); }

static double gamma_ge1_d(double x, double *lo, int *e) {
    double n = floor(x) - 1.0;
    double hi = gamma12_d(x - n);
    double l = 0.0;
    int ex = 0;
    for (double k = 1.0; k <= n; k += 1.0) {
        double f = x - k;
        double p = hi * f;
        double err = fma(hi, f, -p);
        double q = fma(l, f, err);
        double s = p + q;
        l = q - (s - p);
        hi = s;
        if (hi > 0x1p512) {
            hi *= 0x1p-512;
            l *= 0x1p-512;
            ex += 512;
        }
    }
    *lo = l;
    *e = ex;
    return hi;
}

double OVL tgamma(double x) {
    if (x != x) {
        return x;
    }
    if (x == 0.0) {
        return copysign((double)INF, x);
    }
    double lo;
    int e;
    if (x > 0.0) {
        if (x > 172.0) {
            return (double)INF;
        }
        if (x < 1.0) {
            return gamma12_d(1.0 + x) / x;
        }
        double hi = gamma_ge1_d(x, &lo, &e);
        return ldexp(hi + lo, e);
    }
    if (x == trunc(x)) {
        return (double)NAN;
    }
    double ax = -x;
    double s = __clc_sinpi_d(x);
    if (ax < 1.0) {
        return 0x1.921fb54442d18p+1 / (s * gamma12_d(1.0 + ax));
    }
    if (ax > 190.0) {
        return copysign(0.0, s);
    }
    double hi = gamma_ge1_d(ax, &lo, &e);
    double m = (x * s) * (hi + lo);
    return ldexp(-0x1.921fb54442d18p+1 / m, -e);
}

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

#define VEC_UNARY(name, N)                                                                    \
    f##N OVL name(f##N x) {                                                                   \
        f##N r;                                                                               \
        for (int i = 0; i < N; i++) {                                                         \
            r[i] = name(x[i]);                                                                \
        }                                                                                     \
        return r;                                                                             \
    }                                                                                         \
    D_UNARY(name, N)
// 7. The double vector variants: a loop over the scalar function that is not unrolled
//    (`nounroll` reaches SPIR-V as DontUnroll, which Mesa keeps), so that a double16 kernel
//    holds one copy of the scalar body, not sixteen (libclc's vector variants are unrolled;
//    llvmpipe's compile time grows with the copies: tgamma(double16) took minutes). mathlib.rs
//    takes only the scalar double functions from libclc.
#define D_UNARY(name, N)                                                                      \
    d##N OVL name(d##N x) {                                                                   \
        d##N r;                                                                               \
        _Pragma("nounroll") for (int i = 0; i < N; i++) { r[i] = name(x[i]); }                \
        return r;                                                                             \
    }
#define D_BINARY(name, N, Y)                                                                  \
    d##N OVL name(d##N x, Y##N y) {                                                           \
        d##N r;                                                                               \
        _Pragma("nounroll") for (int i = 0; i < N; i++) { r[i] = name(x[i], y[i]); }          \
        return r;                                                                             \
    }
// name(x, p) with *p a second result of element type P, for each address space AS.
#define D_PTR(name, N, P, AS)                                                                 \
    d##N OVL name(d##N x, AS P##N *p) {                                                       \
        d##N r;                                                                               \
        P##N q;                                                                               \
        _Pragma("nounroll") for (int i = 0; i < N; i++) {                                     \
            P##1 t;                                                                           \
            r[i] = name(x[i], &t);                                                            \
            q[i] = t;                                                                         \
        }                                                                                     \
        *p = q;                                                                               \
        return r;                                                                             \
    }
#define D_REMQUO(N, AS)                                                                       \
    d##N OVL remquo(d##N x, d##N y, AS i##N *p) {                                             \
        d##N r;                                                                               \
        i##N q;                                                                               \
        _Pragma("nounroll") for (int i = 0; i < N; i++) {                                     \
            int t;                                                                            \
            r[i] = remquo(x[i], y[i], &t);                                                    \
            q[i] = t;                                                                         \
        }                                                                                     \
        *p = q;                                                                               \
        return r;                                                                             \
    }
#define VEC_FMA_D(N)                                                                          \
    d##N OVL fma(d##N x, d##N y, d##N z) {                                                    \
        d##N r;                                                                               \
        _Pragma("nounroll") for (int i = 0; i < N; i++) { r[i] = fma(x[i], y[i], z[i]); }     \
        return r;                                                                             \
    }
VEC_FMA_D(2)
VEC_FMA_D(3)
VEC_FMA_D(4)
VEC_FMA_D(8)
VEC_FMA_D(16)

#define VECTORS(N)                                                                            \
    VEC_UNARY(sinpi, N)                                                                       \
    VEC_UNARY(cospi, N)                                                                       \
    VEC_UNARY(tanpi, N)                                                                       \
    VEC_UNARY(tgamma, N)

#define VEC_ERFC(N)                                                                           \
    f##N OVL erfc(f##N x) {                                                                   \
        f##N r;                                                                               \
        for (int i = 0; i < N; i++) {                                                         \
            r[i] = erfc(x[i]);                                                                \
        }                                                                                     \
        return r;                                                                             \
    }
VEC_ERFC(2)
VEC_ERFC(3)
VEC_ERFC(4)
VEC_ERFC(8)
VEC_ERFC(16)

VECTORS(2)
VECTORS(3)
VECTORS(4)
VECTORS(8)
VECTORS(16)

#define ALL(N)                                                                                \
    HALF_UNARY(half_log, log, f##N)                                                           \
    HALF_UNARY(half_log2, log2, f##N)                                                         \
    HALF_UNARY(half_log10, log10, f##N)                                                       \
    HALF_BINARY(half_powr, powr, f##N)                                                        \
    GENERIC_PTR(sincos, f##N, f##N)                                                           \
    GENERIC_PTR(lgamma_r, f##N, i##N)                                                         \
    REMQUO(f##N, i##N)                                                                        \
    GENERIC_PTR(sincos, d##N, d##N)                                                           \
    GENERIC_PTR(lgamma_r, d##N, i##N)                                                         \
    REMQUO(d##N, i##N)

ALL(1)
ALL(2)
ALL(3)
ALL(4)
ALL(8)
ALL(16)

// libclc's scalar double functions (mathlib.rs, DOUBLE_FUNCTIONS) and their vector variants.
#define D_DECL1(name) double OVL name(double);
#define D_DECL2(name, Y) double OVL name(double, Y);
D_DECL1(acos) D_DECL1(acosh) D_DECL1(acospi) D_DECL1(asin) D_DECL1(asinh) D_DECL1(asinpi)
D_DECL1(atan) D_DECL1(atanh) D_DECL1(atanpi) D_DECL1(cbrt) D_DECL1(cos) D_DECL1(cosh)
D_DECL1(erf) D_DECL1(erfc) D_DECL1(exp2) D_DECL1(exp10) D_DECL1(expm1) D_DECL1(log)
D_DECL1(log10) D_DECL1(log1p) D_DECL1(log2) D_DECL1(sin) D_DECL1(sinh) D_DECL1(tan)
D_DECL1(tanh)
D_DECL2(atan2, double) D_DECL2(atan2pi, double) D_DECL2(fmod, double) D_DECL2(pow, double)
D_DECL2(powr, double) D_DECL2(remainder, double) D_DECL2(pown, int) D_DECL2(rootn, int)
#define D_PTR_DECL(name, P, AS) double OVL name(double, AS P *);
#define D_AS(M, ...) M(__VA_ARGS__, __private) M(__VA_ARGS__, __global) M(__VA_ARGS__, __local)
D_AS(D_PTR_DECL, sincos, double)
D_AS(D_PTR_DECL, lgamma_r, int)
double OVL remquo(double, double, __private int *);
double OVL remquo(double, double, __global int *);
double OVL remquo(double, double, __local int *);

#define D_LIBCLC(N)                                                                           \
    D_UNARY(acos, N) D_UNARY(acosh, N) D_UNARY(acospi, N) D_UNARY(asin, N)                    \
    D_UNARY(asinh, N) D_UNARY(asinpi, N) D_UNARY(atan, N) D_UNARY(atanh, N)                   \
    D_UNARY(atanpi, N) D_UNARY(cbrt, N) D_UNARY(cos, N) D_UNARY(cosh, N) D_UNARY(erf, N)      \
    D_UNARY(erfc, N) D_UNARY(exp, N) D_UNARY(exp2, N) D_UNARY(exp10, N) D_UNARY(expm1, N)     \
    D_UNARY(lgamma, N) D_UNARY(log, N) D_UNARY(log10, N) D_UNARY(log1p, N)                    \
    D_UNARY(log2, N) D_UNARY(sin, N) D_UNARY(sinh, N) D_UNARY(tan, N) D_UNARY(tanh, N)        \
    D_BINARY(atan2, N, d) D_BINARY(atan2pi, N, d) D_BINARY(fmod, N, d) D_BINARY(pow, N, d)    \
    D_BINARY(powr, N, d) D_BINARY(remainder, N, d) D_BINARY(pown, N, i)                       \
    D_BINARY(rootn, N, i)                                                                     \
    D_AS(D_PTR, sincos, N, d) D_AS(D_PTR, lgamma_r, N, i) D_REMQUO(N, __private)              \
    D_REMQUO(N, __global) D_REMQUO(N, __local)
D_LIBCLC(2)
D_LIBCLC(3)
D_LIBCLC(4)
D_LIBCLC(8)
D_LIBCLC(16)
