// Vectors of 8 and 16 components (split into 4-component parts by lower/widevec.rs).

__kernel void stream_int8(__global int8 *dst) {
    int tid = get_global_id(0);
    dst[tid] = (int8)((int)(1 << 8) + 1);
}

__kernel void stream_float16(__global float16 *dst) {
    int tid = get_global_id(0);
    dst[tid] = (float16)(3.40282346638528860e+38f);
}

__kernel void copy_long8(__global const long8 *src, __global long8 *dst) {
    int i = get_global_id(0);
    dst[i] = src[i];
}

/* Arguments by value: a (int8, 32 bytes, 32-aligned) after a char; b (double16-free:
   ulong16, 128 bytes, 128-aligned). */
__kernel void by_value(char c, int8 a, ulong16 b, float8 f, __global int *out) {
    int i = get_global_id(0);
    int8 s = a + (int8)(c);
    out[i * 40 + 0] = s.s0; out[i * 40 + 1] = s.s1; out[i * 40 + 2] = s.s2;
    out[i * 40 + 3] = s.s3; out[i * 40 + 4] = s.s4; out[i * 40 + 5] = s.s5;
    out[i * 40 + 6] = s.s6; out[i * 40 + 7] = s.s7;
    vstore16(convert_int16(b), 1, out + i * 40 - 8);
    vstore8(convert_int8(f), 0, out + i * 40 + 24);
    out[i * 40 + 32] = (int)b.sf;
}

/* Arithmetic, swizzles and per-component selects on int16. */
__kernel void arith_int16(__global const int16 *a, __global const int16 *b,
                          __global int16 *out) {
    int i = get_global_id(0);
    int16 x = a[i], y = b[i];
    int16 r = x * y + (x >> 2) - (y & 0x0f0f);
    r = select(r, x ^ y, x > y);
    r.lo = r.hi + max(x.even, y.odd);
    r.s89abcdef = min(r.s01234567, (int8)(7));
    r.s3 = x.sf;
    out[i] = r;
}

/* vload/vstore of 8 and 16 components on float, conversions, math built-ins. */
__kernel void float_math(__global const float *in, __global float *out,
                         __global int *iout) {
    int i = get_global_id(0);
    float16 v = vload16(i, in);
    float8 w = vload8(i * 2 + 1, in);
    float16 r = v * 2.0f + (float16)(w, w);
    r = fabs(r) + sqrt(fabs(v)) + fmax(v, 1.5f);
    vstore16(r, i, out);
    int8 t = convert_int8_rtz(w * 3.0f);
    vstore8(t, i, iout);
}

/* char and short vectors, conversions, shuffles of swizzles. */
__kernel void small_types(__global const char16 *a, __global const short8 *b,
                          __global uchar16 *c, __global short8 *d) {
    int i = get_global_id(0);
    char16 x = a[i];
    short8 y = b[i];
    c[i] = convert_uchar16(x) + (uchar16)(1);
    short8 z = convert_short8(x.hi) * y + convert_short8(x.odd);
    d[i] = z.s76543210;
}

/* Double and ulong vectors, dynamic component index, private arrays of int8. Only where the
   device reports cl_khr_fp64 (or WIDEVEC_MIXED asks for it, to see the build fail elsewhere). */
#if defined(cl_khr_fp64) || defined(WIDEVEC_MIXED)
__kernel void mixed(__global const double8 *a, __global ulong16 *b, __global double *c, int k) {
    int i = get_global_id(0);
    double8 x = a[i] * 0.5;
    ulong16 u = b[i];
    u = u + convert_ulong16((double16)(x.s0123, x.s4567, x.lo, x.hi)) > (ulong16)(3) ? u : u * 2;
    b[i] = u;
    c[i] = x[k & 7];
    int8 priv[4];
    for (int j = 0; j < 4; j++)
        priv[j] = (int8)(j) * k;
    c[i] += priv[k & 3].s5;
}
#endif

/* Program-scope __constant table of int8, a struct holding a float8, __local int16 tiles and
   reinterpretation between vector shapes of the same size. */
__constant int8 table[2] = {(int8)(1, 2, 3, 4, 5, 6, 7, 8), (int8)(-1, -2, -3, -4, -5, -6, -7, -8)};

typedef struct {
    int tag;
    float8 v;
} tagged;

__kernel void memory_shapes(__global tagged *s, __global int16 *io, __local int16 *tile,
                            __global long4 *bits) {
    int i = get_global_id(0);
    int l = get_local_id(0);
    int n = get_local_size(0);
    tile[l] = io[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    int16 other = tile[n - 1 - l];
    io[i] = other + (int16)(table[i & 1], table[(i + 1) & 1]);
    s[i].v = s[i].v * (float)s[i].tag;
    s[i].tag = (int)s[i].v.s7;
    bits[i] = as_long4(other.lo) + as_long4(as_int8(as_float8(other.hi)));
}

/* Relational built-ins and shuffle on 8/16-component vectors. */
__kernel void relational(__global const float8 *a, __global const float8 *b,
                         __global int8 *cmp, __global uint16 *sh, __global int *flags) {
    int i = get_global_id(0);
    float8 x = a[i], y = b[i];
    int8 c = isgreater(x, y) + isequal(x, y) * 2 + islessequal(x, (float8)(0.0f)) * 4;
    int8 s = select(c, (int8)(100), isnan(x));
    cmp[i] = s;
    uint16 u = convert_uint16(fabs((float16)(x, y)) * 10.0f);
    sh[i] = shuffle(u, (uint16)(15, 0, 14, 1, 13, 2, 12, 3, 11, 4, 10, 5, 9, 6, 8, 7)) +
            shuffle2(u.lo, u.hi, (uint16)(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
    flags[i] = any(s > 1) + all(s <= 0) * 2 + any(convert_long8(s) == 100) * 4;
}

/* Wide values carried around a loop (phis), a private array of float8 written with a dynamic
   index, and a struct argument by value holding an int8. */
typedef struct {
    char c;
    int8 v;
} with_vec;

__kernel void loops(__global const float *in, __global float *out, with_vec sv, int n) {
    int i = get_global_id(0);
    float8 acc = (float8)(0.0f);
    int8 iacc = sv.v;
    float8 hist[4];
    for (int j = 0; j < 4; j++)
        hist[j] = vload8(j, in) * (float)i;
    for (int j = 0; j < n; j++) {
        float8 x = vload8(i * n + j, in);
        acc = acc * 0.5f + x;
        iacc = iacc.s12345670 + (int8)(sv.c);
        hist[j & 3] += x;
    }
    vstore8(acc, i * 3, out);
    vstore8(convert_float8(iacc), i * 3 + 1, out);
    vstore8(hist[n & 3] + hist[(n + 1) & 3], i * 3 + 2, out);
}
