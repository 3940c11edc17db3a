// vkcl's IL library: definitions of the OpenCL C built-ins that `llvm-spirv-15 -r` names when it
// reads an IL program's SPIR-V (clCreateProgramWithIL) and that source programs get from the
// prelude as macros (compiler/prelude.cl), so that nothing defines them for IL. Compiled with
// the prelude (and the device's truth header) and linked into IL programs that call them
// (compiler/il_library.rs).
//
// Work-group collective functions (OpGroupAll/Any/Broadcast/IAdd/FAdd/SMin/.../FMax of
// Workgroup scope, which llvm-spirv-15 reads back as work_group_*): the prelude's __local
// memory implementation, one definition per OpenCL C overload.
#ifdef __opencl_c_work_group_collective_functions
#undef work_group_all
#undef work_group_any
#undef work_group_broadcast
#undef work_group_reduce_add
#undef work_group_reduce_min
#undef work_group_reduce_max
#undef work_group_scan_inclusive_add
#undef work_group_scan_inclusive_min
#undef work_group_scan_inclusive_max
#undef work_group_scan_exclusive_add
#undef work_group_scan_exclusive_min
#undef work_group_scan_exclusive_max

#define __VKCL_IL_FOLD(T, KIND, OP, MODE)                                                        \
    T __attribute__((overloadable)) work_group_##KIND##_##OP(T x) {                              \
        return __vkcl_wg_fold_##OP(x, MODE);                                                      \
    }

#define __VKCL_IL_WG(T)                                                                           \
    __VKCL_IL_FOLD(T, reduce, add, 0)                                                             \
    __VKCL_IL_FOLD(T, reduce, min, 0)                                                             \
    __VKCL_IL_FOLD(T, reduce, max, 0)                                                             \
    __VKCL_IL_FOLD(T, scan_inclusive, add, 1)                                                     \
    __VKCL_IL_FOLD(T, scan_inclusive, min, 1)                                                     \
    __VKCL_IL_FOLD(T, scan_inclusive, max, 1)                                                     \
    __VKCL_IL_FOLD(T, scan_exclusive, add, 2)                                                     \
    __VKCL_IL_FOLD(T, scan_exclusive, min, 2)                                                     \
    __VKCL_IL_FOLD(T, scan_exclusive, max, 2)                                                     \
    T __attribute__((overloadable)) work_group_broadcast(T a, size_t x) {                         \
        return __vkcl_wg_broadcast(a, x);                                                         \
    }                                                                                             \
    T __attribute__((overloadable)) work_group_broadcast(T a, size_t x, size_t y) {               \
        return __vkcl_wg_broadcast(a, x, y);                                                      \
    }                                                                                             \
    T __attribute__((overloadable)) work_group_broadcast(T a, size_t x, size_t y, size_t z) {     \
        return __vkcl_wg_broadcast(a, x, y, z);                                                   \
    }                                                                                             \
    /* SPIR-V allows 32-bit local ids too. */                                                     \
    T __attribute__((overloadable)) work_group_broadcast(T a, uint x) {                           \
        return __vkcl_wg_broadcast(a, (size_t)x);                                                 \
    }                                                                                             \
    T __attribute__((overloadable)) work_group_broadcast(T a, uint x, uint y) {                   \
        return __vkcl_wg_broadcast(a, (size_t)x, (size_t)y);                                      \
    }                                                                                             \
    T __attribute__((overloadable)) work_group_broadcast(T a, uint x, uint y, uint z) {           \
        return __vkcl_wg_broadcast(a, (size_t)x, (size_t)y, (size_t)z);                           \
    }

__VKCL_IL_WG(int)
__VKCL_IL_WG(uint)
__VKCL_IL_WG(long)
__VKCL_IL_WG(ulong)
__VKCL_IL_WG(float)
#ifdef cl_khr_fp64
__VKCL_IL_WG(double)
#endif

int __attribute__((overloadable)) work_group_all(int predicate) {
    return __vkcl_wg_vote(predicate, 1);
}
int __attribute__((overloadable)) work_group_any(int predicate) {
    return __vkcl_wg_vote(predicate, 0);
}
#endif
