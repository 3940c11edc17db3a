// Kernels the lowering rejects today, with a clear build log (known limitations).

// A memcpy whose length is known only at run time: Vulkan has no instruction for it, and
// the lowering does not make it a loop.
__kernel void variable_memcpy(__global int *o, int n) {
    int a[8], b[8];
    for (int j = 0; j < 8; j++) a[j] = j + get_global_id(0);
    __builtin_memcpy(b, a, n * sizeof(int));
    o[get_global_id(0)] = b[get_global_id(0) & 7];
}
