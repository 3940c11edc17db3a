// __local memory: arrays declared in the kernel, __local pointer arguments, barriers.
#define WG 64

__kernel void reduce_sum(__global const float *in, __global float *out, __local float *scratch) {
    size_t lid = get_local_id(0);
    size_t lsz = get_local_size(0);
    scratch[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = lsz / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = scratch[0];
}

__kernel void reverse_tile(__global int *data) {
    __local int tile[WG];
    size_t lid = get_local_id(0);
    size_t g = get_global_id(0);
    tile[lid] = data[g];
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    data[g] = tile[get_local_size(0) - 1 - lid];
}

__kernel void two_local_args(__global float4 *out, __local float4 *a, __local int *b) {
    size_t lid = get_local_id(0);
    a[lid] = (float4)(lid);
    b[lid] = (int)lid * 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = a[(lid + 1) % get_local_size(0)] + (float4)(b[0]);
}

__kernel void local_2d(__global float *m, int n) {
    __local float t[16][17];
    size_t x = get_local_id(0), y = get_local_id(1);
    t[y][x] = m[get_global_id(1) * n + get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    m[get_global_id(1) * n + get_global_id(0)] = t[x][y];
}
