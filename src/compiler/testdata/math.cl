// Math built-ins (GLSL.std.450 precision for now), integer built-ins, select, vector loads.
__kernel void float_math(__global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    float a = x[i];
    float r = sqrt(fabs(a)) + fmin(a, 1.0f) + fmax(a, -1.0f) + mad(a, 2.0f, 3.0f);
    r += exp(a) + log(fabs(a) + 1.0f) + sin(a) + cos(a) + tan(a * 0.1f);
    r += exp2(a) + log2(fabs(a) + 1.0f) + pow(fabs(a), 1.5f) + rsqrt(fabs(a) + 1.0f);
    r += floor(a) + ceil(a) + trunc(a) + round(a) + rint(a) + fmod(a, 3.0f);
    r += clamp(a, -2.0f, 2.0f) + mix(a, 1.0f, 0.25f) + step(0.5f, a) + sign(a);
    r += native_sin(a) + native_exp(a) + half_sqrt(fabs(a)) + atan2(a, 2.0f) + fma(a, a, a);
    r += exp10(a * 0.1f) + log10(fabs(a) + 1.0f) + hypot(a, 2.0f) + native_divide(a, 3.0f);
    y[i] = r;
}

__kernel void vector_math(__global const float4 *x, __global float4 *y) {
    size_t i = get_global_id(0);
    float4 a = x[i];
    float4 r = sqrt(fabs(a)) + fmin(a, (float4)(1.0f)) + fmax(a, 0.5f) + mad(a, a, a);
    r += (float4)(dot(a, a), length(a), distance(a, (float4)(1.0f)), 0.0f);
    r += normalize(a) + clamp(a, 0.0f, 1.0f) + exp(a);
    y[i] = r;
}

__kernel void int_math(__global const int *x, __global const uint *u, __global int *y, __global uint *z) {
    size_t i = get_global_id(0);
    int a = x[i];
    uint b = u[i];
    y[i] = mul_hi(a, 12345) + min(a, 7) + max(a, -7) + clamp(a, -100, 100) + (int)abs(a) + mad24(a, 3, 4)
        + mul24(a, 5) + rotate(a, 3) + (int)popcount(a) + (int)clz(a);
    z[i] = mul_hi(b, 0x9e3779b9u) + min(b, 7u) + max(b, 9u) + clamp(b, 3u, 300u) + abs(b) + rotate(b, 7u)
        + mad_hi(b, b, 1u);
}

__kernel void selects(__global const int4 *a, __global const int4 *b, __global int4 *c, __global float *f) {
    size_t i = get_global_id(0);
    int4 x = a[i], y = b[i];
    c[i] = select(x, y, x < y) + select(x, y, (int4)(-1, 0, -1, 0)) + (x > y ? x : y);
    f[i] = select(1.0f, 2.0f, (int)i & 1) + (f[i] > 0.0f ? 1.0f : 0.0f);
}

__kernel void vector_loads(__global const float *in, __global float *out, __global const int *ii, __global int *io) {
    size_t i = get_global_id(0);
    float2 a = vload2(i, in);
    float3 b = vload3(i, in + 1);
    float4 c = vload4(i, in + 2);
    vstore4(c + (float4)(a, b.xy), i, out);
    vstore2(a, i, out + 1);
    vstore3(b, i + 1, out);
    int4 v = vload4(0, ii + i);
    vstore4(v * 2, i, io);
}
