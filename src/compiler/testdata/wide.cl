// Vectors of 8 and 16 components: split into 4-component parts by the lowering.
__kernel void wide_vectors(__global const float8 *in, __global float8 *out) {
    size_t i = get_global_id(0);
    out[i] = in[i] * 2.0f + in[i].s76543210;
}

__kernel void wide_mix(__global const int16 *a, __global const float *f, __global int16 *out,
                       __global float8 *fo, __global int *flags, float8 s, uint k) {
    size_t i = get_global_id(0);
    int16 x = a[i];
    int16 y = (int16)((int)i) + (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    int16 m = x > y;
    out[i * 3] = select(x, y, m) * 3 - (x >> 2);
    out[i * 3 + 1] = x.sfedcba9876543210 + (int16)(x.lo, x.hi.s01234567) + as_int16(abs(x - y));
    int16 z = x;
    z[k & 15] = -1;
    out[i * 3 + 2] = z;
    float8 v = vload8(i, f);
    float8 w = sqrt(fabs(v)) + convert_float8(x.even) + s;
    fo[i] = w;
    vstore8(w * 2.0f, i + 64, (__global float *)fo);
    flags[i] = any(x < 0) + all(x > -1000000) * 2 + x[k & 15] * 4;
}
