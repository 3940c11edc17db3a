// OpenCL C 3.0 work-item functions (build with -cl-std=CL3.0).
__kernel void workitem30(__global ulong *out) {
    size_t g = get_global_linear_id();
    out[g * 4 + 0] = get_local_linear_id();
    out[g * 4 + 1] = get_enqueued_local_size(0);
    out[g * 4 + 2] = get_global_linear_id();
    out[g * 4 + 3] = get_work_dim();
}
