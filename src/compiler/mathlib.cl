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
// 6. double: sinpi, cospi, tanpi, tgamma as for float, and an exact fma(double) in integer
//    arithmetic (see there), which libclc's double functions call too.

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

// fma(double): the exact a*b + c, rounded once (to nearest even), in 64-bit integer
// arithmetic. lavapipe's GLSL Fma on doubles rounds the product first (tests/fp64.rs), which
// breaks libclc's double functions (their error terms are fma(a, b, -a*b)); every double fma,
// the program's and libclc's, comes here. The product of the two 53-bit significands is a
// 106-bit integer; both addends are normalized to 128-bit integers with the top bit at bit
// 125, the smaller shifted right with its lost bits jammed into bit 0 (cancellation of more
// than one bit happens only when nothing is shifted out), added or subtracted, and rounded at
// bit 52 below the top bit (or at 2^-1074 for subnormal results).
typedef unsigned long ulong;
typedef unsigned int uint;
ulong OVL mul_hi(ulong, ulong);
ulong OVL clz(ulong);
int OVL isnan(double);
int OVL isinf(double);

static uint clz128(ulong hi, ulong lo) {
    return hi != 0 ? (uint)clz(hi) : 64u + (uint)clz(lo);
}

static void shl128(ulong *hi, ulong *lo, uint s) {
    if (s == 0) {
        return;
    }
    if (s >= 64) {
        *hi = *lo << (s - 64);
        *lo = 0;
    } else {
        *hi = (*hi << s) | (*lo >> (64 - s));
        *lo <<= s;
    }
}

static void shr128_jam(ulong *hi, ulong *lo, long s) {
    if (s == 0) {
        return;
    }
    if (s >= 128) {
        ulong sticky = (*hi | *lo) != 0 ? 1 : 0;
        *hi = 0;
        *lo = sticky;
    } else if (s >= 64) {
        uint t = (uint)(s - 64);
        ulong sticky = (*lo != 0 || (t != 0 && (*hi << (64 - t)) != 0)) ? 1 : 0;
        *lo = (t != 0 ? *hi >> t : *hi) | sticky;
        *hi = 0;
    } else {
        uint t = (uint)s;
        ulong sticky = (*lo << (64 - t)) != 0 ? 1 : 0;
        *lo = (*lo >> t) | (*hi << (64 - t)) | sticky;
        *hi >>= t;
    }
}

// Bit k (0..127) of the 128-bit value.
static ulong bit128(ulong hi, ulong lo, uint k) {
    return k >= 64 ? (hi >> (k - 64)) & 1 : (lo >> k) & 1;
}

// Whether any of bits 0..k-1 (k in 0..128) is set.
static int below128(ulong hi, ulong lo, uint k) {
    if (k == 0) {
        return 0;
    }
    if (k >= 64) {
        return lo != 0 || (k > 64 && (hi << (128 - k)) != 0);
    }
    return (lo << (64 - k)) != 0;
}

// |x| = m 2^e with m an integer below 2^53 (x finite, not zero).
static ulong split_d(double x, int *e) {
    ulong b = __builtin_astype(x, ulong);
    int ex = (int)((b >> 52) & 0x7ff);
    ulong f = b & 0xfffffffffffffUL;
    if (ex == 0) {
        *e = -1074;
        return f;
    }
    *e = ex - 1075;
    return f | 0x10000000000000UL;
}

double OVL fma(double a, double b, double c) {
    if (isnan(a) || isnan(b) || isnan(c) || isinf(a) || isinf(b) || a == 0.0 || b == 0.0) {
        // The product is exact (0, an infinity or NaN): one rounding of the sum.
        return a * b + c;
    }
    if (isinf(c)) {
        return c;
    }
    int ea, eb, ec;
    ulong ma = split_d(a, &ea);
    ulong mb = split_d(b, &eb);
    ulong sp = (__builtin_astype(a, ulong) ^ __builtin_astype(b, ulong)) >> 63;
    ulong xh = mul_hi(ma, mb), xl = ma * mb;
    long qx = (long)ea + eb;
    uint s = clz128(xh, xl) - 2;
    shl128(&xh, &xl, s);
    qx -= s;
    ulong sign = sp;
    ulong hi = xh, lo = xl;
    long q = qx;
    if (c != 0.0) {
        ulong sc = __builtin_astype(c, ulong) >> 63;
        ulong yh = 0, yl = split_d(c, &ec);
        long qy = ec;
        uint t = clz128(yh, yl) - 2;
        shl128(&yh, &yl, t);
        qy -= t;
        int x_big = qx > qy || (qx == qy && (xh > yh || (xh == yh && xl >= yl)));
        if (!x_big) {
            ulong th = xh, tl = xl;
            xh = yh;
            xl = yl;
            yh = th;
            yl = tl;
            long tq = qx;
            qx = qy;
            qy = tq;
            ulong ts = sp;
            sp = sc;
            sc = ts;
        }
        shr128_jam(&yh, &yl, qx - qy);
        if (sp == sc) {
            lo = xl + yl;
            hi = xh + yh + (lo < xl ? 1 : 0);
        } else {
            lo = xl - yl;
            hi = xh - yh - (xl < yl ? 1 : 0);
        }
        sign = sp;
        q = qx;
        if (hi == 0 && lo == 0) {
            return 0.0;
        }
    }
    // The value is (hi, lo) 2^q; its top bit is bit m.
    long m = 127 - (long)clz128(hi, lo);
    long r = m + q >= -1022 ? m - 52 : -1074 - q;
    ulong mant;
    long e;
    if (r <= 0) {
        mant = lo << (uint)(-r);
        e = q + r;
    } else if (r >= 128) {
        mant = 0;
        e = q + r;
    } else {
        uint ur = (uint)r;
        mant = ur >= 64 ? hi >> (ur - 64) : (lo >> ur) | (hi << (64 - ur));
        ulong guard = bit128(hi, lo, ur - 1);
        if (guard != 0 && (below128(hi, lo, ur - 1) || (mant & 1) != 0)) {
            mant += 1;
        }
        e = q + r;
    }
    if (mant >= 0x20000000000000UL) {
        mant >>= 1;
        e += 1;
    }
    ulong bits;
    if (e + 1075 >= 2047 && mant >= 0x10000000000000UL) {
        bits = 0x7ff0000000000000UL;
    } else {
        bits = ((ulong)(e + 1074) << 52) + mant;
    }
    return __builtin_astype(bits | (sign << 63), double);
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
    d##N OVL name(d##N x) {                                                                   \
        d##N r;                                                                               \
        for (int i = 0; i < N; i++) {                                                         \
            r[i] = name(x[i]);                                                                \
        }                                                                                     \
        return r;                                                                             \
    }
#define VEC_FMA_D(N)                                                                          \
    d##N OVL fma(d##N x, d##N y, d##N z) {                                                    \
        d##N r;                                                                               \
        for (int i = 0; i < N; i++) {                                                         \
            r[i] = fma(x[i], y[i], z[i]);                                                     \
        }                                                                                     \
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
