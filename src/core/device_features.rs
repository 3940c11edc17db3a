//! What a device offers to programs: extensions with versions, floating-point configurations,
//! OpenCL C features, sub-group operations and atomic capabilities (OpenCL 3.0 API section
//! 4.2, `clGetDeviceInfo`; OpenCL C 3.0 section 6.2.1 for the features). Each is decided from
//! the Vulkan physical device's features and vkcl's settings, so that what is reported is what
//! the compiler and the backend carry out.

use super::device::Device;
use super::make_version;
use opencl_sys::*;

/// The C11-atomics features of `CL_DEVICE_OPENCL_C_FEATURES` (OpenCL C 3.0 section 6.2.1),
/// consistent with [`Device::atomic_memory_capabilities`].
const ATOMIC_FEATURES: [&str; 4] = [
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
];

impl Device {
    /// Whether buffers can be imported from opaque fds of Vulkan memory
    /// (`cl_khr_external_memory_opaque_fd`; the Vulkan device imports them for vkcl's buffers).
    pub fn imports_opaque_fd(&self) -> bool {
        self.phys.import_opaque_fd
    }

    /// Device extensions with versions (`CL_DEVICE_EXTENSIONS_WITH_VERSION`).
    pub fn extensions(&self) -> Vec<(&'static str, u32)> {
        let mut v = vec![
            ("cl_khr_icd", make_version(1, 0, 0)),
            ("cl_khr_global_int32_base_atomics", make_version(1, 0, 0)),
            (
                "cl_khr_global_int32_extended_atomics",
                make_version(1, 0, 0),
            ),
            ("cl_khr_local_int32_base_atomics", make_version(1, 0, 0)),
            ("cl_khr_local_int32_extended_atomics", make_version(1, 0, 0)),
            ("cl_khr_device_uuid", make_version(1, 0, 0)),
            ("cl_khr_suggested_local_work_size", make_version(1, 0, 0)),
            // SPIR-V extensions of IL programs (compiler/il.rs; llvm-spirv-15 reads the first
            // two, vkcl drops the expect/assume hints before it).
            (
                "cl_khr_spirv_no_integer_wrap_decoration",
                make_version(1, 0, 0),
            ),
            ("cl_khr_spirv_linkonce_odr", make_version(1, 0, 0)),
            ("cl_khr_expect_assume", make_version(1, 0, 0)),
            // What the IL path accepts (compiler/spirv_queries.rs; empty lists without the
            // compiler tools, as CL_DEVICE_IL_VERSION).
            ("cl_khr_spirv_queries", make_version(1, 0, 0)),
            // CL_MEM_IMMUTABLE_EXT buffers (api/memory): every write gives CL_INVALID_OPERATION.
            ("cl_ext_immutable_memory_objects", make_version(1, 0, 0)),
            // Written in OpenCL C in the prelude (compiler/prelude.cl): bit-field insert and
            // extract, bit reverse; dot products of four 8-bit integers (vectors and packed,
            // version 2.0.0), not accelerated (CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_*).
            ("cl_khr_extended_bit_ops", make_version(1, 0, 0)),
            ("cl_khr_integer_dot_product", make_version(2, 0, 0)),
            // Binary semaphores ordering commands on the host (core/semaphore.rs); no
            // external handle types (docs/interop.md).
            ("cl_khr_semaphore", make_version(1, 0, 0)),
        ];
        // Programs from SPIR-V under the extension's names too (clCreateProgramWithILKHR,
        // CL_DEVICE_IL_VERSION_KHR, CL_PROGRAM_IL_KHR: the core function and queries), where
        // the IL path works (the compiler tools, as CL_DEVICE_IL_VERSION). OpenCL 3.0 makes
        // IL programs core, but clients that forward them decide by this name: PoCL-Remote's
        // pocld passes SPIR-V to a device only when it lists cl_khr_il_program
        // (docs/remote.md).
        if crate::compiler::available() {
            v.push(("cl_khr_il_program", make_version(1, 0, 0)));
        }
        // Buffer device addresses as raw values (core/device_address.rs), revision 1.0.2 of
        // the extension (the one the CTS and the headers know).
        if self.has_device_addresses() {
            v.push(("cl_ext_buffer_device_address", make_version(1, 0, 2)));
        }
        // cl_khr_command_buffer (api/command_buffer.rs): 1.0.0, final since 2026-09-09 with
        // the semantics and ABI of 0.9.8 (which VKCL_COMMAND_BUFFER_REVISION=0.9.8 reports),
        // with mutable dispatch 0.9.5; at 0.9.4 with its older ABI and no mutable dispatch
        // under VKCL_COMMAND_BUFFER_REVISION=0.9.4.
        let config = crate::util::config::config();
        if config.command_buffer_094 {
            v.push(("cl_khr_command_buffer", make_version(0, 9, 4)));
        } else {
            let revision = if config.command_buffer_098 {
                make_version(0, 9, 8)
            } else {
                make_version(1, 0, 0)
            };
            v.push(("cl_khr_command_buffer", revision));
            v.push((
                "cl_khr_command_buffer_mutable_dispatch",
                make_version(0, 9, 5),
            ));
            // Command buffers of several queues of devices that share a root device
            // (api/command_buffer_multi.rs, docs/command-buffers.md).
            if config.command_buffer_multi_device {
                v.push(("cl_khr_command_buffer_multi_device", make_version(0, 9, 2)));
            }
        }
        // Buffers on imported Vulkan memory (api/memory/external.rs, docs/interop.md).
        if self.imports_opaque_fd() {
            v.push(("cl_khr_external_memory", make_version(1, 0, 1)));
            v.push(("cl_khr_external_memory_opaque_fd", make_version(1, 0, 0)));
        }
        if self.phys.storage_8bit {
            v.push(("cl_khr_byte_addressable_store", make_version(1, 0, 0)));
        }
        // Not cl_khr_subgroups: the OpenCL 3.0 API specification (table "Device queries",
        // CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS) says that query "must return
        // CL_TRUE for devices that support the cl_khr_subgroups extension", and the CTS's
        // subgroups ifp_ext fails a device that claims it with CL_FALSE. Vulkan promises no
        // forward progress between the subgroups of a workgroup (lavapipe runs them in turn:
        // a spin-wait on another sub-group never ends), so vkcl reports CL_FALSE and offers
        // sub-groups as OpenCL 3.0's __opencl_c_subgroups, which does not require it.
        v.extend(self.subgroup_extensions());
        // atom_* on 64-bit integers in __global and __local memory: SPIR-V Int64Atomics on
        // storage buffers and on workgroup memory.
        if self.phys.shader_int64_atomics && self.phys.shader_shared_int64_atomics {
            v.push(("cl_khr_int64_base_atomics", make_version(1, 0, 0)));
            v.push(("cl_khr_int64_extended_atomics", make_version(1, 0, 0)));
        }
        if self.has_fp64() {
            v.push(("cl_khr_fp64", make_version(1, 0, 0)));
        }
        if self.has_fp16() {
            v.push(("cl_khr_fp16", make_version(1, 0, 0)));
        }
        v
    }

    /// `CL_DEVICE_DOUBLE_FP_CONFIG`: 0 without `double`; otherwise fused multiply-add (`fma`
    /// is exact), infinities and NaNs, denormals (kept by the arithmetic and the math
    /// library: `tests/fp64.rs`), round to nearest (the arithmetic's mode), and round to zero
    /// and to +-infinity: OpenCL C selects a rounding mode only in explicit conversions
    /// (`convert_float_rtz(double)`, `convert_long_rtp(double)`...), which vkcl implements
    /// for every mode. The Khronos CTS (math_brute_force) requires all six, the OpenCL 1.x
    /// minimum (OpenCL 3.0 API section 4.2, table 5.3).
    pub fn double_fp_config(&self) -> cl_device_fp_config {
        if !self.has_fp64() {
            return 0;
        }
        (CL_FP_FMA
            | CL_FP_ROUND_TO_NEAREST
            | CL_FP_ROUND_TO_ZERO
            | CL_FP_ROUND_TO_INF
            | CL_FP_INF_NAN
            | CL_FP_DENORM) as cl_device_fp_config
    }

    /// `CL_DEVICE_HALF_FP_CONFIG`: 0 without `half` arithmetic; otherwise round to nearest
    /// (Vulkan's `shaderFloat16` arithmetic) with infinities and NaNs, the minimum of
    /// `cl_khr_fp16` (OpenCL 3.0 extension specification), and denormals on CPU devices
    /// (lavapipe: its float16 arithmetic, done in float, keeps them, `tests/fp16.rs` and the
    /// CTS's "half precision denormals: YES"). Elsewhere Vulkan leaves float16 denormal
    /// behaviour to the driver unless a shader asks for `DenormPreserve`, which vkcl does not
    /// yet, so `CL_FP_DENORM` is not claimed there.
    pub fn half_fp_config(&self) -> cl_device_fp_config {
        if !self.has_fp16() {
            return 0;
        }
        let mut c = CL_FP_ROUND_TO_NEAREST | CL_FP_INF_NAN;
        if self.phys.is_cpu() {
            c |= CL_FP_DENORM;
        }
        c as cl_device_fp_config
    }

    /// Whether `half` arithmetic is offered (`cl_khr_fp16`; OpenCL C 3.0 defines no
    /// `__opencl_c_fp16` feature, half being an extension only): the Vulkan
    /// device has `shaderFloat16`, `shaderInt16` and 16-bit storage-buffer access, and
    /// `VKCL_FP16` turns it on (docs/settings.md).
    ///
    /// Offered by default (`VKCL_FP16=0` turns it off). On the H200 (NVIDIA 580) vkcl works
    /// around two driver bugs for it: half division is done in float and rounded to half on
    /// the bits (`lower::convert`), and dynamic indexing of 16-bit vectors becomes selects
    /// (`lower::dynamic`); `tests/fp16.rs` passes there (docs/h200.md).
    pub fn has_fp16(&self) -> bool {
        let wanted = crate::util::config::config().fp16.unwrap_or(true);
        self.phys.shader_float16 && self.phys.shader_int16 && self.phys.storage_16bit && wanted
    }

    /// Whether the device supports `cl_ext_buffer_device_address`: every vkcl device does,
    /// since kernels reach memory through buffer device addresses and a Vulkan device
    /// without `bufferDeviceAddress` is not offered at all (`backend/vulkan/instance.rs`).
    pub fn has_device_addresses(&self) -> bool {
        true
    }

    /// Whether `double` is offered (`cl_khr_fp64`, `__opencl_c_fp64`): the Vulkan device has
    /// `shaderFloat64` and `shaderInt64` (the double math library works on the bits through
    /// 64-bit integers) and `VKCL_FP64` does not turn it off (docs/settings.md).
    pub fn has_fp64(&self) -> bool {
        self.phys.shader_float64 && self.phys.shader_int64 && crate::util::config::config().fp64
    }

    /// `CL_DEVICE_OPENCL_C_FEATURES`: the optional OpenCL C 3.0 features supported.
    pub fn opencl_c_features(&self) -> Vec<(&'static str, u32)> {
        let mut v = Vec::new();
        if self.phys.shader_int64 {
            v.push(("__opencl_c_int64", make_version(3, 0, 0)));
        }
        if self.has_fp64() {
            v.push(("__opencl_c_fp64", make_version(3, 0, 0)));
        }
        // C11-style atomics (OpenCL C 3.0 section 6.15.12): every Vulkan device has
        // acquire/release semantics and Device scope. seq_cst runs as acq_rel (Vulkan's
        // memory model has no sequentially consistent semantics; on a device without SVM
        // every shared location is a buffer, which acq_rel orders the same way), and
        // memory_scope_all_devices as Device scope (no SVM: nothing outside this VkDevice
        // can see the memory before the next synchronisation point).
        for f in ATOMIC_FEATURES {
            v.push((f, make_version(3, 0, 0)));
        }
        // cl_khr_integer_dot_product's inputs (compiler/prelude.cl).
        v.push((
            "__opencl_c_integer_dot_product_input_4x8bit",
            make_version(2, 0, 0),
        ));
        v.push((
            "__opencl_c_integer_dot_product_input_4x8bit_packed",
            make_version(2, 0, 0),
        ));
        // One buffer per program, its address in the launch header (compiler::globals).
        v.push((
            "__opencl_c_program_scope_global_variables",
            make_version(3, 0, 0),
        ));
        if self.subgroups() {
            v.push(("__opencl_c_subgroups", make_version(3, 0, 0)));
        }
        // Written with __local memory and barriers in the prelude (compiler/prelude.cl).
        if self.work_group_collective_functions() {
            v.push((
                "__opencl_c_work_group_collective_functions",
                make_version(3, 0, 0),
            ));
        }
        v
    }

    /// Sub-groups (`__opencl_c_subgroups`, OpenCL C 3.0 section 6.15.17): Vulkan subgroups in compute
    /// with basic, vote, arithmetic and shuffle operations, on 64-bit types too
    /// (`shaderSubgroupExtendedTypes`).
    pub fn subgroups(&self) -> bool {
        let ops = self.phys.subgroup_operations();
        self.phys.subgroup_size > 0
            && self.phys.shader_int64
            && self.phys.subgroup_extended_types
            && ops.basic
            && ops.vote
            && ops.arithmetic
            && ops.shuffle
    }

    /// The Vulkan subgroup operations of compute shaders that the compiler may use: each
    /// cl_khr_subgroup_* extension is reported where its operations are (see
    /// [`Self::subgroup_extensions`]).
    pub fn subgroup_ops(&self) -> crate::compiler::SubgroupOps {
        let ops = self.phys.subgroup_operations();
        let on = |offered: bool| self.subgroups() && offered;
        crate::compiler::SubgroupOps {
            vote: on(ops.vote),
            arithmetic: on(ops.arithmetic),
            ballot: on(ops.ballot) && self.phys.subgroup_broadcast_dynamic_id,
            shuffle: on(ops.shuffle),
            shuffle_relative: on(ops.shuffle_relative),
            clustered: on(ops.clustered),
        }
    }

    /// The cl_khr_subgroup_* extensions (OpenCL extension specification, 1.0.0 each), each
    /// where the Vulkan device offers its operations in compute shaders
    /// (`subgroupSupportedOperations`, `VK_KHR_shader_subgroup_rotate`):
    /// `_extended_types` (8- and 16-bit integers; `shaderSubgroupExtendedTypes`, required by
    /// [`Self::subgroups`], with `shaderInt8` and `shaderInt16`), `_non_uniform_vote` (vote),
    /// `_ballot` (ballot, `subgroupBroadcastDynamicId`), `_non_uniform_arithmetic`
    /// (arithmetic), `_shuffle` (shuffle), `_shuffle_relative` (shuffle relative),
    /// `_clustered_reduce` (clustered) and `_rotate` (shuffle: OpenCL rotates modulo the
    /// maximum sub-group size, which is the work-group's size in a work-group smaller than
    /// a Vulkan subgroup, where `VK_KHR_shader_subgroup_rotate` rotates modulo
    /// `SubgroupSize`; `lower::collective` shuffles from the computed lane instead). None
    /// without sub-groups.
    pub fn subgroup_extensions(&self) -> Vec<(&'static str, u32)> {
        let ops = self.subgroup_ops();
        let p = &self.phys;
        let v1 = make_version(1, 0, 0);
        [
            (
                "cl_khr_subgroup_extended_types",
                self.subgroups() && p.shader_int8 && p.shader_int16,
            ),
            ("cl_khr_subgroup_non_uniform_vote", ops.vote),
            ("cl_khr_subgroup_ballot", ops.ballot),
            ("cl_khr_subgroup_non_uniform_arithmetic", ops.arithmetic),
            ("cl_khr_subgroup_shuffle", ops.shuffle),
            ("cl_khr_subgroup_shuffle_relative", ops.shuffle_relative),
            ("cl_khr_subgroup_clustered_reduce", ops.clustered),
            ("cl_khr_subgroup_rotate", ops.shuffle),
        ]
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| (n, v1))
        .collect()
    }

    /// `CL_DEVICE_MAX_NUM_SUB_GROUPS`: sub-groups in the largest work-group (0 without them).
    pub fn max_num_sub_groups(&self) -> u32 {
        if self.subgroups() {
            (self.max_work_group_size() as u32).div_ceil(self.phys.subgroup_size)
        } else {
            0
        }
    }

    /// `CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT`: the prelude's implementation
    /// needs one scratch slot of 8 bytes per work-item of the largest group in local memory.
    pub fn work_group_collective_functions(&self) -> bool {
        (self.max_work_group_size() as u64) * 8 <= self.local_mem_size() / 2
    }

    /// `CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES`, consistent with [`Self::opencl_c_features`]
    /// (OpenCL 3.0 section 4.2, table "Device queries").
    pub fn atomic_memory_capabilities(&self) -> u64 {
        CL_DEVICE_ATOMIC_ORDER_RELAXED
            | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
            | CL_DEVICE_ATOMIC_ORDER_SEQ_CST
            | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
            | CL_DEVICE_ATOMIC_SCOPE_DEVICE
            | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES
    }

    /// `CL_DEVICE_ATOMIC_FENCE_CAPABILITIES`: the memory capabilities plus work-item scope
    /// (`atomic_work_item_fence` with `memory_scope_work_item`).
    pub fn atomic_fence_capabilities(&self) -> u64 {
        self.atomic_memory_capabilities() | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM
    }
}
