// vkcl's OpenCL C prelude, included before every program (`clang -include`). It implements
// built-ins that have no Vulkan counterpart in OpenCL C itself, so that they inline like user
// code.
//
// async_work_group_copy / async_work_group_strided_copy: every work-item of the group copies
// its share at once; wait_group_events is a barrier, which makes the copies visible to the
// group. The stride applies to the __global side. prefetch is a hint: it does nothing.

// OpenCL C before 1.2 has no `static`; the helpers are always inlined, so no definition is
// ever emitted for them.
#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 120
#define __VKCL_STATIC static
#else
#define __VKCL_STATIC
#endif

__VKCL_STATIC inline size_t __attribute__((overloadable, always_inline)) __vkcl_global_stride(const __global void *p, size_t s) {
    return s;
}

__VKCL_STATIC inline size_t __attribute__((overloadable, always_inline)) __vkcl_global_stride(const __local void *p, size_t s) {
    return 1;
}

#define __VKCL_LOCAL_LINEAR_ID() \
    (get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)))
#define __VKCL_LOCAL_ITEMS() (get_local_size(0) * get_local_size(1) * get_local_size(2))

#define async_work_group_strided_copy(dst, src, num, stride, event) ({                       \
    __typeof__(dst) __vkcl_d = (dst);                                                       \
    __typeof__(src) __vkcl_s = (src);                                                       \
    size_t __vkcl_n = (num), __vkcl_st = (stride);                                          \
    size_t __vkcl_ds = __vkcl_global_stride(__vkcl_d, __vkcl_st);                           \
    size_t __vkcl_ss = __vkcl_global_stride(__vkcl_s, __vkcl_st);                           \
    for (size_t __vkcl_i = __VKCL_LOCAL_LINEAR_ID(); __vkcl_i < __vkcl_n;                   \
         __vkcl_i += __VKCL_LOCAL_ITEMS())                                                  \
        __vkcl_d[__vkcl_i * __vkcl_ds] = __vkcl_s[__vkcl_i * __vkcl_ss];                    \
    (event_t)(event);                                                                       \
})

#define async_work_group_copy(dst, src, num, event) \
    async_work_group_strided_copy(dst, src, num, 1, event)

#define wait_group_events(num_events, event_list) \
    ((void)(num_events), (void)(event_list), barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE))

#define prefetch(p, num) ((void)(p), (void)(num))

// Work-group collective functions (OpenCL C 3.0 section 6.15.16, feature
// __opencl_c_work_group_collective_functions). llvm-spirv would emit OpGroup* instructions of
// Workgroup scope, which Vulkan does not allow; they are written here in terms of __local
// memory and barriers instead. Every work-item stores its value in a scratch array with one
// slot per work-item of the group (the lowering gives each kernel that uses them a Workgroup
// array of CL_DEVICE_MAX_WORK_GROUP_SIZE slots: __vkcl_wg_scratch32/64 stand for it), then
// folds the slots it needs in work-item order (linear local id). The first barrier keeps a
// store from overtaking the loads of the previous collective call.
#ifdef __opencl_c_work_group_collective_functions
__local uint *__vkcl_wg_scratch32(void);
__local ulong *__vkcl_wg_scratch64(void);

// A value of each element type in one scratch slot and back: 32- and 64-bit types by their
// bits, half (cl_khr_fp16) by its 16 bits in a 32-bit slot.
#define __VKCL_WG_SLOT_int uint
#define __VKCL_WG_SLOT_uint uint
#define __VKCL_WG_SLOT_float uint
#define __VKCL_WG_SLOT_half uint
#define __VKCL_WG_SLOT_long ulong
#define __VKCL_WG_SLOT_ulong ulong
#define __VKCL_WG_SLOT_double ulong
#define __VKCL_WG_SCRATCH_uint __vkcl_wg_scratch32
#define __VKCL_WG_SCRATCH_ulong __vkcl_wg_scratch64
#define __VKCL_WG_CAT2(a, b) a##b
#define __VKCL_WG_CAT(a, b) __VKCL_WG_CAT2(a, b)
#define __VKCL_WG_SLOT(T) __VKCL_WG_CAT2(__VKCL_WG_SLOT_, T)
#define __VKCL_WG_SCRATCH(T) __VKCL_WG_CAT(__VKCL_WG_SCRATCH_, __VKCL_WG_SLOT(T))()
#define __VKCL_WG_PUT(T, x) __VKCL_WG_CAT(__vkcl_wg_put_, T)(x)
#define __VKCL_WG_GET(T, s) __VKCL_WG_CAT(__vkcl_wg_get_, T)(s)
#define __VKCL_WG_BITS(T, S)                                                                     \
    __VKCL_STATIC inline S __attribute__((always_inline)) __vkcl_wg_put_##T(T x) {                \
        return __VKCL_WG_CAT2(as_, S)(x);                                                         \
    }                                                                                             \
    __VKCL_STATIC inline T __attribute__((always_inline)) __vkcl_wg_get_##T(S s) {                \
        return __VKCL_WG_CAT2(as_, T)(s);                                                         \
    }

#define __VKCL_WG_ADD(a, b) ((a) + (b))
#define __VKCL_WG_MIN(a, b) ((b) < (a) ? (b) : (a))
#define __VKCL_WG_MAX(a, b) ((b) > (a) ? (b) : (a))

// mode 0: reduce over the group; 1: inclusive scan; 2: exclusive scan.
#define __VKCL_WG_FOLD(T, NAME, OP, IDENT)                                                      \
    __VKCL_STATIC inline T __attribute__((overloadable, always_inline))                          \
    __vkcl_wg_fold_##NAME(T x, int mode) {                                                        \
        size_t lid = __VKCL_LOCAL_LINEAR_ID();                                                    \
        size_t n = __VKCL_LOCAL_ITEMS();                                                          \
        __local __VKCL_WG_SLOT(T) *s = __VKCL_WG_SCRATCH(T);                                      \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        s[lid] = __VKCL_WG_PUT(T, x);                                                             \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        size_t end = mode == 0 ? n : (mode == 1 ? lid + 1 : lid);                                 \
        T acc = (IDENT);                                                                          \
        for (size_t i = 0; i < end; i++) {                                                        \
            T v = __VKCL_WG_GET(T, s[i]);                                                         \
            acc = OP(acc, v);                                                                     \
        }                                                                                         \
        return acc;                                                                               \
    }

#define __VKCL_WG_TYPE(T, MIN, MAX)                                                              \
    __VKCL_WG_FOLD(T, add, __VKCL_WG_ADD, (T)0)                                                  \
    __VKCL_WG_FOLD(T, min, __VKCL_WG_MIN, MAX)                                                   \
    __VKCL_WG_FOLD(T, max, __VKCL_WG_MAX, MIN)                                                   \
    __VKCL_STATIC inline T __attribute__((overloadable, always_inline))                          \
    __vkcl_wg_broadcast(T a, size_t id) {                                                         \
        __local __VKCL_WG_SLOT(T) *s = __VKCL_WG_SCRATCH(T);                                      \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        if (__VKCL_LOCAL_LINEAR_ID() == id)                                                       \
            s[0] = __VKCL_WG_PUT(T, a);                                                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                             \
        return __VKCL_WG_GET(T, s[0]);                                                            \
    }                                                                                             \
    __VKCL_STATIC inline T __attribute__((overloadable, always_inline))                          \
    __vkcl_wg_broadcast(T a, size_t x, size_t y) {                                                \
        return __vkcl_wg_broadcast(a, x + get_local_size(0) * y);                                 \
    }                                                                                             \
    __VKCL_STATIC inline T __attribute__((overloadable, always_inline))                          \
    __vkcl_wg_broadcast(T a, size_t x, size_t y, size_t z) {                                      \
        return __vkcl_wg_broadcast(a, x + get_local_size(0) * (y + get_local_size(1) * z));       \
    }

__VKCL_WG_BITS(int, uint)
__VKCL_WG_BITS(uint, uint)
__VKCL_WG_BITS(float, uint)
__VKCL_WG_BITS(long, ulong)
__VKCL_WG_BITS(ulong, ulong)
__VKCL_WG_TYPE(int, INT_MIN, INT_MAX)
__VKCL_WG_TYPE(uint, 0u, UINT_MAX)
__VKCL_WG_TYPE(long, LONG_MIN, LONG_MAX)
__VKCL_WG_TYPE(ulong, 0ul, ULONG_MAX)
__VKCL_WG_TYPE(float, -INFINITY, INFINITY)
#ifdef cl_khr_fp64
__VKCL_WG_BITS(double, ulong)
__VKCL_WG_TYPE(double, -(double)INFINITY, (double)INFINITY)
#endif
#ifdef cl_khr_fp16
// OpenCL C 3.0 section 6.15.16: the half overloads where cl_khr_fp16 is supported. Each step
// of a fold rounds to half, as half arithmetic does. The pragma's state is `disable` again
// afterwards, as at the start of every program.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__VKCL_STATIC inline uint __attribute__((always_inline)) __vkcl_wg_put_half(half x) {
    return as_ushort(x);
}
__VKCL_STATIC inline half __attribute__((always_inline)) __vkcl_wg_get_half(uint s) {
    return as_half((ushort)s);
}
__VKCL_WG_TYPE(half, -(half)INFINITY, (half)INFINITY)
#pragma OPENCL EXTENSION cl_khr_fp16 : disable
#endif

__VKCL_STATIC inline int __attribute__((always_inline)) __vkcl_wg_vote(int predicate, int all) {
    size_t lid = __VKCL_LOCAL_LINEAR_ID();
    size_t n = __VKCL_LOCAL_ITEMS();
    __local uint *s = __vkcl_wg_scratch32();
    barrier(CLK_LOCAL_MEM_FENCE);
    s[lid] = predicate != 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint count = 0;
    for (size_t i = 0; i < n; i++)
        count += s[i];
    return all ? count == n : count != 0;
}

#define work_group_all(predicate) __vkcl_wg_vote((predicate), 1)
#define work_group_any(predicate) __vkcl_wg_vote((predicate), 0)
#define work_group_broadcast(...) __vkcl_wg_broadcast(__VA_ARGS__)
#define work_group_reduce_add(x) __vkcl_wg_fold_add((x), 0)
#define work_group_reduce_min(x) __vkcl_wg_fold_min((x), 0)
#define work_group_reduce_max(x) __vkcl_wg_fold_max((x), 0)
#define work_group_scan_inclusive_add(x) __vkcl_wg_fold_add((x), 1)
#define work_group_scan_inclusive_min(x) __vkcl_wg_fold_min((x), 1)
#define work_group_scan_inclusive_max(x) __vkcl_wg_fold_max((x), 1)
#define work_group_scan_exclusive_add(x) __vkcl_wg_fold_add((x), 2)
#define work_group_scan_exclusive_min(x) __vkcl_wg_fold_min((x), 2)
#define work_group_scan_exclusive_max(x) __vkcl_wg_fold_max((x), 2)
#endif

// cl_khr_extended_bit_ops: bitfield_insert, bitfield_extract_signed/unsigned and bit_reverse on
// every integer type and vector size, in shifts and masks (Vulkan's OpBitField* and
// OpBitReverse take 32-bit operands only). offset + count <= the element width, as the
// extension requires; count 0 inserts nothing and extracts 0. Scalar char and short operands
// are promoted to int by C's shifts and converted back, which keeps the low bits.
#define __VKCL_CAT2(a, b) a##b
#ifdef cl_khr_extended_bit_ops
// All-ones in the low `count` bits, shifted by `offset` (count 1..64).
#define __VKCL_BITS(count, offset) ((count) == 0 ? 0UL : (~0UL >> (64 - (count))) << (offset))

#define __VKCL_BIT_OPS(T, UT, ST, US)                                                             \
    __VKCL_STATIC inline T __attribute__((overloadable, always_inline))                          \
    __vkcl_bitfield_insert(T base, T insert, uint offset, uint count) {                           \
        UT m = (UT)(US)__VKCL_BITS(count, offset);                                               \
        UT kept = (UT)(__VKCL_CAT2(as_, UT)(base) & (UT)~m);                                    \
        UT put = (UT)((UT)(__VKCL_CAT2(as_, UT)(insert) << (UT)(US)offset) & m);                \
        return __VKCL_CAT2(as_, T)((UT)(kept | put));                                             \
    }                                                                                             \
    __VKCL_STATIC inline UT __attribute__((overloadable, always_inline))                         \
    __vkcl_bitfield_extract_unsigned(T base, uint offset, uint count) {                           \
        if (count == 0)                                                                           \
            return (UT)0;                                                                         \
        return (UT)(__VKCL_CAT2(as_, UT)(base) >> (UT)(US)offset) & (UT)(US)__VKCL_BITS(count, 0); \
    }                                                                                             \
    __VKCL_STATIC inline ST __attribute__((overloadable, always_inline))                         \
    __vkcl_bitfield_extract_signed(T base, uint offset, uint count) {                             \
        if (count == 0)                                                                           \
            return (ST)0;                                                                         \
        uint w = sizeof(US) * 8;                                                                  \
        UT up = (UT)(__VKCL_CAT2(as_, UT)(base) << (UT)(US)(w - offset - count));              \
        return (ST)(__VKCL_CAT2(as_, ST)(up) >> (ST)(w - count));                              \
    }                                                                                             \
    __VKCL_STATIC inline T __attribute__((overloadable, always_inline))                          \
    __vkcl_bit_reverse(T base) {                                                                  \
        uint w = sizeof(US) * 8;                                                                  \
        UT x = __VKCL_CAT2(as_, UT)(base);                                                     \
        x = (UT)(((x >> (UT)1) & (UT)(US)0x5555555555555555UL) | ((x & (UT)(US)0x5555555555555555UL) << (UT)1)); \
        x = (UT)(((x >> (UT)2) & (UT)(US)0x3333333333333333UL) | ((x & (UT)(US)0x3333333333333333UL) << (UT)2)); \
        x = (UT)(((x >> (UT)4) & (UT)(US)0x0f0f0f0f0f0f0f0fUL) | ((x & (UT)(US)0x0f0f0f0f0f0f0f0fUL) << (UT)4)); \
        if (w > 8)                                                                                \
            x = (UT)(((x >> (UT)(US)8) & (UT)(US)0x00ff00ff00ff00ffUL) | ((x & (UT)(US)0x00ff00ff00ff00ffUL) << (UT)(US)8)); \
        if (w > 16)                                                                               \
            x = (UT)(((x >> (UT)(US)16) & (UT)(US)0x0000ffff0000ffffUL) | ((x & (UT)(US)0x0000ffff0000ffffUL) << (UT)(US)16)); \
        if (w > 32)                                                                               \
            x = (UT)(((x >> (UT)(US)32) & (UT)(US)0x00000000ffffffffUL) | ((x & (UT)(US)0x00000000ffffffffUL) << (UT)(US)32)); \
        return __VKCL_CAT2(as_, T)(x);                                                         \
    }

// Both signednesses of one element type, as scalars and vectors of 2, 3, 4, 8 and 16.
#define __VKCL_BIT_OPS_N(S, U, N) \
    __VKCL_BIT_OPS(S##N, U##N, S##N, U) __VKCL_BIT_OPS(U##N, U##N, S##N, U)
#define __VKCL_BIT_OPS_TYPE(S, U)                                                           \
    __VKCL_BIT_OPS_N(S, U, ) __VKCL_BIT_OPS_N(S, U, 2) __VKCL_BIT_OPS_N(S, U, 3)            \
    __VKCL_BIT_OPS_N(S, U, 4) __VKCL_BIT_OPS_N(S, U, 8) __VKCL_BIT_OPS_N(S, U, 16)
__VKCL_BIT_OPS_TYPE(char, uchar)
__VKCL_BIT_OPS_TYPE(short, ushort)
__VKCL_BIT_OPS_TYPE(int, uint)
__VKCL_BIT_OPS_TYPE(long, ulong)

#define bitfield_insert(b, i, o, c) __vkcl_bitfield_insert(b, i, o, c)
#define bitfield_extract_signed(b, o, c) __vkcl_bitfield_extract_signed(b, o, c)
#define bitfield_extract_unsigned(b, o, c) __vkcl_bitfield_extract_unsigned(b, o, c)
#define bit_reverse(b) __vkcl_bit_reverse(b)
#endif

// cl_khr_integer_dot_product (version 2.0.0): dot products of four 8-bit integers, as vectors
// (uchar4/char4) and packed in a uint (element 0 in the least significant byte), each product
// exact in 32 bits; the _acc_sat forms add the accumulator with saturation (add_sat).
#ifdef __opencl_c_integer_dot_product_input_4x8bit
#define __VKCL_DOT4(R, A, B)                                                                   \
    __VKCL_STATIC inline R __attribute__((overloadable, always_inline)) __vkcl_dot(A a, B b) { \
        return (R)a.x * (R)b.x + (R)a.y * (R)b.y + (R)a.z * (R)b.z + (R)a.w * (R)b.w;        \
    }                                                                                          \
    __VKCL_STATIC inline R __attribute__((overloadable, always_inline))                       \
    __vkcl_dot_acc_sat(A a, B b, R acc) {                                                      \
        return add_sat(__vkcl_dot(a, b), acc);                                                 \
    }
__VKCL_DOT4(uint, uchar4, uchar4)
__VKCL_DOT4(int, char4, char4)
__VKCL_DOT4(int, uchar4, char4)
__VKCL_DOT4(int, char4, uchar4)
// `dot` becomes __vkcl_dot below, so the floating-point dot products forward to the built-in.
#define __VKCL_DOT_FP(S, T)                                                                    \
    __VKCL_STATIC inline S __attribute__((overloadable, always_inline))                       \
    __vkcl_dot(T a, T b) {                                                                     \
        return dot(a, b);                                                                      \
    }
#define __VKCL_DOT_FP_TYPE(S) \
    __VKCL_DOT_FP(S, S) __VKCL_DOT_FP(S, S##2) __VKCL_DOT_FP(S, S##3) __VKCL_DOT_FP(S, S##4)
__VKCL_DOT_FP_TYPE(float)
#ifdef cl_khr_fp64
__VKCL_DOT_FP_TYPE(double)
#endif
#ifdef cl_khr_fp16
// The pragma's state is `disable` again afterwards, as at the start of every program.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__VKCL_DOT_FP_TYPE(half)
#pragma OPENCL EXTENSION cl_khr_fp16 : disable
#endif
#define dot(a, b) __vkcl_dot(a, b)
#define dot_acc_sat(a, b, acc) __vkcl_dot_acc_sat(a, b, acc)
#endif
#ifdef __opencl_c_integer_dot_product_input_4x8bit_packed
#define dot_4x8packed_uu_uint(a, b) __vkcl_dot(as_uchar4((uint)(a)), as_uchar4((uint)(b)))
#define dot_4x8packed_ss_int(a, b) __vkcl_dot(as_char4((uint)(a)), as_char4((uint)(b)))
#define dot_4x8packed_us_int(a, b) __vkcl_dot(as_uchar4((uint)(a)), as_char4((uint)(b)))
#define dot_4x8packed_su_int(a, b) __vkcl_dot(as_char4((uint)(a)), as_uchar4((uint)(b)))
#define dot_acc_sat_4x8packed_uu_uint(a, b, acc) \
    __vkcl_dot_acc_sat(as_uchar4((uint)(a)), as_uchar4((uint)(b)), (uint)(acc))
#define dot_acc_sat_4x8packed_ss_int(a, b, acc) \
    __vkcl_dot_acc_sat(as_char4((uint)(a)), as_char4((uint)(b)), (int)(acc))
#define dot_acc_sat_4x8packed_us_int(a, b, acc) \
    __vkcl_dot_acc_sat(as_uchar4((uint)(a)), as_char4((uint)(b)), (int)(acc))
#define dot_acc_sat_4x8packed_su_int(a, b, acc) \
    __vkcl_dot_acc_sat(as_char4((uint)(a)), as_uchar4((uint)(b)), (int)(acc))
#endif
