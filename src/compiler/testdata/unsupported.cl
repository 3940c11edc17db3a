// Kernels the lowering rejects today, with a clear build log (known limitations).

// Vectors of 8 and 16 components are not split into smaller ones yet.
__kernel void wide_vectors(__global const float8 *in, __global float8 *out) {
    size_t i = get_global_id(0);
    out[i] = in[i] * 2.0f + in[i].s76543210;
}
