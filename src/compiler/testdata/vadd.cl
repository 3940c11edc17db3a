// Vector addition on floats and ints: c[i] = a[i] + b[i].
__kernel void vadd_float(__global const float *a, __global const float *b, __global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}

__kernel void vadd_int(__global const int *a, __global const int *b, __global int *c, int n) {
    int i = (int)get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
