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
