// 32-bit atomics on global and local memory; a histogram.
__kernel void histogram(__global const uchar *data, uint n, __global uint *bins, __local uint *local_bins) {
    size_t lid = get_local_id(0);
    for (size_t b = lid; b < 256; b += get_local_size(0))
        local_bins[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_bins[data[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t b = lid; b < 256; b += get_local_size(0))
        atomic_add(&bins[b], local_bins[b]);
}

__kernel void global_atomics(__global int *p, __global uint *u) {
    int i = (int)get_global_id(0);
    atomic_add(&p[0], 1);
    atomic_sub(&p[1], 1);
    atomic_inc(&p[2]);
    atomic_dec(&p[3]);
    atomic_min(&p[4], i);
    atomic_max(&p[5], i);
    atomic_and(&p[6], ~(1 << (i & 31)));
    atomic_or(&p[7], 1 << (i & 31));
    atomic_xor(&p[8], i);
    atomic_xchg(&p[9], i);
    atomic_cmpxchg(&p[10], 0, i);
    atomic_min(&u[0], (uint)i);
    atomic_max(&u[1], (uint)i);
    atom_add(&p[11], 2);
}

__kernel void local_atomics(__global int *out) {
    __local int counter;
    __local int mx;
    if (get_local_id(0) == 0) {
        counter = 0;
        mx = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int old = atomic_inc(&counter);
    atomic_max(&mx, old);
    atomic_cmpxchg(&counter, 1000, 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        out[get_group_id(0) * 2] = counter;
        out[get_group_id(0) * 2 + 1] = mx;
    }
}
