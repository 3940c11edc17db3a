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
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__VKCL_IL_WG(half)
#pragma OPENCL EXTENSION cl_khr_fp16 : disable
#endif

int __attribute__((overloadable)) work_group_all(int predicate) {
    return __vkcl_wg_vote(predicate, 1);
}
int __attribute__((overloadable)) work_group_any(int predicate) {
    return __vkcl_wg_vote(predicate, 0);
}
#endif

// SPV_KHR_integer_dot_product (cl_khr_integer_dot_product's SPIR-V): OpSDot, OpUDot, OpSUDot
// and their AccSat forms, which llvm-spirv-15 reads back as calls of __spirv_<op>KHR_R<type>
// (packed: two ints and the packed-format operand; vectors: two char4, the element signedness
// lost) and cannot write again without the extension. Every product is exact in int; the
// AccSat forms add the accumulator with saturation in the result type (signed for S and SU,
// unsigned for U). 32- and 64-bit results.
#ifdef cl_khr_integer_dot_product
#define __VKCL_IL_UNPACK_S(x) ((char4)((char)(x), (char)((x) >> 8), (char)((x) >> 16), (char)((x) >> 24)))
#define __VKCL_IL_UNPACK_U(x)                                                                     \
    ((uchar4)((uchar)(x), (uchar)((uint)(x) >> 8), (uchar)((uint)(x) >> 16), (uchar)((uint)(x) >> 24)))
#define __VKCL_IL_DOT(a, b) ((int)(a).x * (int)(b).x + (int)(a).y * (int)(b).y +                  \
                             (int)(a).z * (int)(b).z + (int)(a).w * (int)(b).w)
#define __VKCL_IL_UDOT(a, b) ((uint)(a).x * (uint)(b).x + (uint)(a).y * (uint)(b).y +             \
                              (uint)(a).z * (uint)(b).z + (uint)(a).w * (uint)(b).w)

int __attribute__((overloadable)) __spirv_SDotKHR_Rint(int a, int b, int format) {
    return __VKCL_IL_DOT(__VKCL_IL_UNPACK_S(a), __VKCL_IL_UNPACK_S(b));
}
int __attribute__((overloadable)) __spirv_SDotKHR_Rint(char4 a, char4 b) {
    return __VKCL_IL_DOT(a, b);
}
uint __attribute__((overloadable)) __spirv_UDotKHR_Ruint(int a, int b, int format) {
    return __VKCL_IL_UDOT(__VKCL_IL_UNPACK_U(a), __VKCL_IL_UNPACK_U(b));
}
uint __attribute__((overloadable)) __spirv_UDotKHR_Ruint(char4 a, char4 b) {
    return __VKCL_IL_UDOT(as_uchar4(a), as_uchar4(b));
}
int __attribute__((overloadable)) __spirv_SUDotKHR_Rint(int a, int b, int format) {
    return __VKCL_IL_DOT(__VKCL_IL_UNPACK_S(a), __VKCL_IL_UNPACK_U(b));
}
int __attribute__((overloadable)) __spirv_SUDotKHR_Rint(char4 a, char4 b) {
    return __VKCL_IL_DOT(a, as_uchar4(b));
}
long __attribute__((overloadable)) __spirv_SDotKHR_Rlong(int a, int b, int format) {
    return __spirv_SDotKHR_Rint(a, b, format);
}
long __attribute__((overloadable)) __spirv_SDotKHR_Rlong(char4 a, char4 b) {
    return __spirv_SDotKHR_Rint(a, b);
}
ulong __attribute__((overloadable)) __spirv_UDotKHR_Rulong(int a, int b, int format) {
    return __spirv_UDotKHR_Ruint(a, b, format);
}
ulong __attribute__((overloadable)) __spirv_UDotKHR_Rulong(char4 a, char4 b) {
    return __spirv_UDotKHR_Ruint(a, b);
}
long __attribute__((overloadable)) __spirv_SUDotKHR_Rlong(int a, int b, int format) {
    return __spirv_SUDotKHR_Rint(a, b, format);
}
long __attribute__((overloadable)) __spirv_SUDotKHR_Rlong(char4 a, char4 b) {
    return __spirv_SUDotKHR_Rint(a, b);
}

int __attribute__((overloadable)) __spirv_SDotAccSatKHR_Rint(int a, int b, int acc, int format) {
    return add_sat(acc, __spirv_SDotKHR_Rint(a, b, format));
}
int __attribute__((overloadable)) __spirv_SDotAccSatKHR_Rint(char4 a, char4 b, int acc) {
    return add_sat(acc, __spirv_SDotKHR_Rint(a, b));
}
uint __attribute__((overloadable)) __spirv_UDotAccSatKHR_Ruint(int a, int b, int acc, int format) {
    return add_sat((uint)acc, __spirv_UDotKHR_Ruint(a, b, format));
}
uint __attribute__((overloadable)) __spirv_UDotAccSatKHR_Ruint(char4 a, char4 b, int acc) {
    return add_sat((uint)acc, __spirv_UDotKHR_Ruint(a, b));
}
int __attribute__((overloadable)) __spirv_SUDotAccSatKHR_Rint(int a, int b, int acc, int format) {
    return add_sat(acc, __spirv_SUDotKHR_Rint(a, b, format));
}
int __attribute__((overloadable)) __spirv_SUDotAccSatKHR_Rint(char4 a, char4 b, int acc) {
    return add_sat(acc, __spirv_SUDotKHR_Rint(a, b));
}
long __attribute__((overloadable)) __spirv_SDotAccSatKHR_Rlong(int a, int b, long acc, int format) {
    return add_sat(acc, (long)__spirv_SDotKHR_Rint(a, b, format));
}
long __attribute__((overloadable)) __spirv_SDotAccSatKHR_Rlong(char4 a, char4 b, long acc) {
    return add_sat(acc, (long)__spirv_SDotKHR_Rint(a, b));
}
ulong __attribute__((overloadable)) __spirv_UDotAccSatKHR_Rulong(int a, int b, long acc, int format) {
    return add_sat((ulong)acc, (ulong)__spirv_UDotKHR_Ruint(a, b, format));
}
ulong __attribute__((overloadable)) __spirv_UDotAccSatKHR_Rulong(char4 a, char4 b, long acc) {
    return add_sat((ulong)acc, (ulong)__spirv_UDotKHR_Ruint(a, b));
}
long __attribute__((overloadable)) __spirv_SUDotAccSatKHR_Rlong(int a, int b, long acc, int format) {
    return add_sat(acc, (long)__spirv_SUDotKHR_Rint(a, b, format));
}
long __attribute__((overloadable)) __spirv_SUDotAccSatKHR_Rlong(char4 a, char4 b, long acc) {
    return add_sat(acc, (long)__spirv_SUDotKHR_Rint(a, b));
}
#endif
