// Kernels the lowering rejects today, with a clear build log (known limitations).

// A union read through a byte array indexed dynamically: 8-bit views of private memory.
__kernel void byte_views(__global const float *in, __global uint *out) {
    union { float f; uint u; uchar b[4]; } x;
    x.f = in[get_global_id(0)];
    out[get_global_id(0)] = x.u + x.b[get_global_id(0) & 3];
}
