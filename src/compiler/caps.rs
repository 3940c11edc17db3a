//! What the target Vulkan device can do, as far as code generation cares.

/// Device features that change code generation. `Default` describes lavapipe (Mesa 22.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceCaps {
    /// `storageBuffer8BitAccess` + `shaderInt8`: 8-bit loads/stores on global memory.
    pub int8_storage: bool,
    /// `storageBuffer16BitAccess` + `shaderInt16`: 16-bit loads/stores on global memory.
    pub int16_storage: bool,
    /// `shaderFloat64`: `double` (`cl_khr_fp64`).
    pub fp64: bool,
    /// `shaderFloat16`: `half` arithmetic (`cl_khr_fp16`).
    pub fp16: bool,
    /// `shaderBufferInt64Atomics` and `shaderSharedInt64Atomics` (`cl_khr_int64_base_atomics`,
    /// `cl_khr_int64_extended_atomics`).
    pub int64_atomics: bool,
    /// `shaderSharedFloat32Atomics` (`VK_EXT_shader_atomic_float`): atomic load, store and
    /// exchange (`atomic_xchg`, `atomic_load`, `atomic_store`, `atomic_init`) on `__local float`.
    pub shared_float32_atomics: bool,
    /// `Round`, `RoundEven` and `Trunc` of `double` through `Floor` and `Ceil`
    /// ([`lower::f64round`](crate::compiler::lower)): llvmpipe's own sequences for them are wrong
    /// on hosts without AVX-512.
    pub f64_rounding_by_floor: bool,
    /// Numeric `OpUndef`s become `OpConstantNull` ([`lower::undef`](crate::compiler::lower)):
    /// NVIDIA's driver miscompiled loops whose phis enter with undefined values.
    pub undef_as_null: bool,
    /// `maxPushConstantsSize` in bytes (the ABI uses 32 of them).
    pub max_push_constants: u32,
    /// `maxComputeSharedMemorySize` in bytes (`CL_DEVICE_LOCAL_MEM_SIZE`).
    pub max_local_mem_bytes: u32,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE` (`maxComputeWorkGroupInvocations`): the slots of the
    /// work-group collective functions' scratch arrays.
    pub max_work_group_size: u32,
    /// The Vulkan subgroup operations a kernel may use (see [`SubgroupOps`]).
    pub subgroup_ops: SubgroupOps,
    /// The extensions (`CL_DEVICE_EXTENSIONS`) and OpenCL C features
    /// (`CL_DEVICE_OPENCL_C_FEATURES`) the device reports. OpenCL C programs see exactly these
    /// as predefined macros (of the names clang knows). `None`: derived from the flags above
    /// (unit tests).
    pub opencl_c_names: Option<Vec<String>>,
    /// The device's OpenCL version times 10 (`CL_DEVICE_VERSION`: 30 or 31): `__OPENCL_VERSION__`,
    /// and 31 offers OpenCL C 3.1 (`-cl-std=CL3.1`, `CL_VERSION_3_1`).
    pub opencl_version: u32,
}

impl Default for DeviceCaps {
    fn default() -> Self {
        DeviceCaps {
            int8_storage: true,
            int16_storage: true,
            fp64: true,
            fp16: true,
            int64_atomics: true,
            shared_float32_atomics: true,
            f64_rounding_by_floor: true,
            undef_as_null: false,
            max_push_constants: 128,
            max_local_mem_bytes: 32768,
            max_work_group_size: 1024,
            subgroup_ops: SubgroupOps::default(),
            opencl_c_names: None,
            opencl_version: 30,
        }
    }
}

/// The Vulkan subgroup operations usable in compute shaders (`subgroupSupportedOperations`
/// and the features beside it), as the lowering checks the `OpGroupNonUniform*` of a kernel
/// against them. `Default` describes lavapipe (Mesa 22.3): everything but clustered
/// operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubgroupOps {
    /// `VK_SUBGROUP_FEATURE_VOTE_BIT`: `OpGroupNonUniformAll`, `Any`, `AllEqual`.
    pub vote: bool,
    /// `VK_SUBGROUP_FEATURE_ARITHMETIC_BIT`: reductions and scans.
    pub arithmetic: bool,
    /// `VK_SUBGROUP_FEATURE_BALLOT_BIT` and `subgroupBroadcastDynamicId`: ballots, the mask
    /// built-ins, `OpGroupNonUniformBroadcast` with a dynamically uniform id.
    pub ballot: bool,
    /// `VK_SUBGROUP_FEATURE_SHUFFLE_BIT`: `OpGroupNonUniformShuffle`, `ShuffleXor`.
    pub shuffle: bool,
    /// `VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT`: `ShuffleUp`, `ShuffleDown`.
    pub shuffle_relative: bool,
    /// `VK_SUBGROUP_FEATURE_CLUSTERED_BIT`: the `ClusteredReduce` group operation.
    pub clustered: bool,
}

impl Default for SubgroupOps {
    fn default() -> Self {
        SubgroupOps {
            vote: true,
            arithmetic: true,
            ballot: true,
            shuffle: true,
            shuffle_relative: true,
            clustered: false,
        }
    }
}
