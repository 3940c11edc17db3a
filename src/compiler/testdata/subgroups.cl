// Sub-group functions (OpenCL C 3.0, __opencl_c_subgroups): 12 values per work-item.
kernel void sg_int(global const int *in, global int *out) {
    size_t i = get_global_id(0);
    int x = in[i];
    global int *o = out + 12 * i;
    o[0] = get_sub_group_size();
    o[1] = get_max_sub_group_size();
    o[2] = get_num_sub_groups();
    o[3] = get_sub_group_id();
    o[4] = get_sub_group_local_id();
    o[5] = get_enqueued_num_sub_groups();
    o[6] = sub_group_reduce_add(x);
    o[7] = sub_group_scan_inclusive_min(x);
    o[8] = sub_group_scan_exclusive_max(x);
    o[9] = sub_group_broadcast(x, 1);
    o[10] = sub_group_all(x != 3) * 2 + sub_group_any(x == 5);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    o[11] = sub_group_reduce_max(x);
}

kernel void sg_long_float(global const long *l, global const float *f, global long *lo,
                          global float *fo) {
    size_t i = get_global_id(0);
    lo[2 * i] = sub_group_scan_inclusive_add(l[i]);
    lo[2 * i + 1] = sub_group_broadcast(l[i], 0);
    fo[2 * i] = sub_group_reduce_add(f[i]);
    fo[2 * i + 1] = sub_group_scan_exclusive_min(f[i]);
}
