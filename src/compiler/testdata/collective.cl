// Work-group collective functions (OpenCL C 3.0, __opencl_c_work_group_collective_functions),
// one kernel per element type. Each work-item writes the results of every function for its
// input value; out holds 11 values per work-item (see tests/features.rs).
#define COLLECTIVE(T, NAME)                                                    \
    kernel void NAME(global const T *in, global T *out) {                     \
        size_t i = get_global_id(0);                                           \
        T x = in[i];                                                           \
        global T *o = out + 11 * i;                                            \
        o[0] = work_group_reduce_add(x);                                       \
        o[1] = work_group_reduce_min(x);                                       \
        o[2] = work_group_reduce_max(x);                                       \
        o[3] = work_group_scan_inclusive_add(x);                               \
        o[4] = work_group_scan_inclusive_min(x);                               \
        o[5] = work_group_scan_inclusive_max(x);                               \
        o[6] = work_group_scan_exclusive_add(x);                               \
        o[7] = work_group_scan_exclusive_min(x);                               \
        o[8] = work_group_scan_exclusive_max(x);                               \
        o[9] = work_group_broadcast(x, get_local_size(0) - 1);                 \
        o[10] = (T)(work_group_all(x != (T)3) * 2 + work_group_any(x == (T)5)); \
    }

COLLECTIVE(int, coll_int)
COLLECTIVE(uint, coll_uint)
COLLECTIVE(long, coll_long)
COLLECTIVE(ulong, coll_ulong)
COLLECTIVE(float, coll_float)
#ifdef cl_khr_fp64
COLLECTIVE(double, coll_double)
#endif

// 2-D groups: broadcast from (x, y), reduce over the whole group.
kernel void coll_2d(global const int *in, global int *out, uint bx, uint by) {
    size_t i = get_global_id(0) + get_global_size(0) * get_global_id(1);
    int x = in[i];
    out[2 * i] = work_group_broadcast(x, bx, by);
    out[2 * i + 1] = work_group_reduce_add(x);
}
