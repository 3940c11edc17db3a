// Kernels the lowering rejects today, with a clear build log (known limitations).

// A pointer that selects between two private arrays: private and local pointers are offsets
// into one variable, so a select (or phi) between different variables has no form.
__kernel void pointer_select(__global int *o, int w) {
    int a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    int *p = w ? a : b;
    o[get_global_id(0)] = p[get_global_id(0) & 3];
}
