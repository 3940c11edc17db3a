//! OpenCL C -> Kernel SPIR-V -> Vulkan SPIR-V. Pure functions of bytes in, bytes out.
//!
//! [`compile_source`] runs `clang-15` (OpenCL C -> LLVM IR), `opt-15` (inlining and CFG
//! structurization) and `llvm-spirv-15` (LLVM IR -> OpenCL "Kernel" SPIR-V), then lowers every
//! kernel to its own Vulkan compute module ([`KernelInfo::spirv`]). [`compile_il`] starts from
//! Kernel SPIR-V (`clCreateProgramWithIL`).
//!
//! Every program is compiled with a small OpenCL C prelude (`prelude.cl`: async work-group
//! copies, `prefetch`). When `VKCL_VALIDATION` is set, every lowered module goes through
//! spirv-val (Vulkan 1.2) before it is handed out, and a failure is a build error whose log
//! carries the validator's message; without it the check costs nothing.
//!
//! # Kernel ABI
//!
//! The runtime relies on exactly this contract. Every kernel module has one `GLCompute` entry
//! point named `main`, uses SPIR-V 1.5 (Vulkan 1.2), the `PhysicalStorageBuffer64` addressing
//! model with the GLSL450 memory model, and needs the device features `bufferDeviceAddress`,
//! `shaderInt64` plus whatever the kernel's types need (`shaderInt8`/`shaderInt16`,
//! `storageBuffer8BitAccess`/`storageBuffer16BitAccess`, `shaderFloat64`, `shaderFloat16`).
//!
//! ## Push constants (one block, 32 bytes)
//! | offset | type      | meaning                                                          |
//! |--------|-----------|------------------------------------------------------------------|
//! | 0      | `u64`     | `launch_header_address`: device address of the launch header      |
//! | 8      | `u64`     | `args_address`: device address of the argument block              |
//! | 16     | `u32[3]`  | `group_offset`: added to `WorkgroupId` (grids split over dispatches) |
//! | 28     | `u32`     | padding                                                          |
//!
//! ## Launch header (device memory, read-only, 96 bytes, 8-byte aligned)
//! | offset | type      | meaning                                                |
//! |--------|-----------|--------------------------------------------------------|
//! | 0      | `u32`     | `work_dim` (1..=3)                                      |
//! | 8      | `u64[3]`  | `global_offset`                                        |
//! | 32     | `u64[3]`  | `global_size` (of the whole NDRange)                   |
//! | 56     | `u32[3]`  | `local_size` (enqueued)                                |
//! | 68     | `u32[3]`  | `num_groups` (of the whole NDRange)                    |
//! | 80     | `u64`     | `printf_buffer` address, 0 = none                      |
//!
//! For dimensions `d >= work_dim` the runtime writes the OpenCL defaults into the header
//! (`global_offset` 0, `global_size` 1, `local_size` 1, `num_groups` 1) and dispatches one group
//! of size 1 in that dimension; the kernel then returns the spec's defaults without a test.
//!
//! ## Argument block (device memory at `args_address`)
//! Every argument that is not a `__local` pointer lives at [`KernelArgInfo::offset`], aligned
//! with OpenCL C rules (scalars and vectors: their size, so an `int8` is 32 bytes and
//! 32-aligned and a `ulong16` 128 bytes and 128-aligned; 3-component vectors like 4-component
//! ones, structs: the largest member alignment, pointers: 8). [`KernelInfo::args_size`] is the
//! block size, rounded up to 8 bytes.
//! - [`ArgKind::Buffer`] (`__global`/`__constant` pointer): the 8-byte device address (0 for
//!   NULL). Kernels access memory through `PhysicalStorageBuffer` pointers, so pointer
//!   arithmetic, casts and sub-buffers (address + offset) work.
//! - [`ArgKind::Value`]: the `size` bytes given to `clSetKernelArg`, copied verbatim.
//! - [`ArgKind::Local`]: no bytes in the block. The kernel declares a `Workgroup` array whose
//!   element type has `elem_size` bytes and whose length is the specialization constant
//!   `spec_id` (= 3 + argument index); the runtime sets it to `ceil(bytes / elem_size)`.
//!
//! ## Work-group size
//! The `WorkgroupSize` built-in is a spec-constant composite with spec IDs 0, 1, 2 (x, y, z),
//! defaults 1, 1, 1 or the kernel's `reqd_work_group_size`. Only uniform work-groups are
//! supported: the runtime guarantees `global_size % local_size == 0`.
//!
//! ## Built-ins
//! - `get_group_id(d)` = `WorkgroupId[d] + group_offset[d]`
//! - `get_global_id(d)` = `get_group_id(d) * local_size[d] + LocalInvocationId[d] +
//!   global_offset[d]` (64-bit)
//! - `get_local_size`/`get_enqueued_local_size` = the `WorkgroupSize` spec constants;
//!   `get_num_groups`, `get_global_size`, `get_global_offset`, `get_work_dim` from the header.
//!
//! ## Persistent variant (compute-unit-limited dispatch on sub-devices)
//! [`persistent_variant`] turns a kernel module into one whose entry `main` loops over the
//! NDRange's virtual work-groups. The runtime launches it as a grid of `[L, 1, 1]` groups
//! (`L` = the sub-device's compute units x groups per unit, fewer than the NDRange's groups)
//! with `group_offset` 0. Each launched group runs virtual groups `v = WorkgroupId.x,
//! v + L, v + 2L, ...` while `v < num_groups.x * num_groups.y * num_groups.z` (launch header,
//! 64-bit arithmetic); `L` is read from Vulkan's `NumWorkgroups.x`, so the loop bounds need
//! no push constant beyond the ABI's. Virtual group `v` has group id
//! `(v % nx, v / nx % ny, v / (nx * ny))`; every built-in derived from `get_group_id` follows,
//! and a work-group barrier separates virtual groups of a kernel that uses `__local` memory.
//! lavapipe does not use it by default (`VKCL_SUBDEVICE_DISPATCH`, README): llvmpipe stops any
//! shader invocation after 65535 loop iterations in total, which one launched group looping
//! over many virtual groups exceeds; there the runtime dispatches the plain module in waves.
//!
//! ## Memory model
//! Global and constant memory: `PhysicalStorageBuffer` pointers with `Aligned` accesses.
//! `__local`: `Workgroup` variables. 32-bit atomics on global memory use `Device` scope (OpenCL
//! 1.2 atomics arrive with `Workgroup` scope and are widened), on local memory `Workgroup` scope.
//! `barrier(flags)` is `OpControlBarrier Workgroup Workgroup AcquireRelease|<memory classes>`.

mod caps;
mod error;
mod frontend;
mod layout;
mod lower;
mod options;
pub mod ptx;
mod reflect;
mod spv;
mod tools;
mod validate;

#[cfg(test)]
mod tests;

pub use caps::DeviceCaps;
pub use error::{BuildFailure, BuildFailureKind, CompilerError};
pub use reflect::{
    AccessQualifier, AddressQualifier, ArgKind, KernelArgInfo, KernelInfo, TypeQualifiers,
};
pub use tools::{find_tools, Tools};

/// Whether lowered modules go through spirv-opt `-O`. Off: SPIRV-Tools v2023.1 (Debian 12)
/// folds `GLSL.std.450` `SMax`/`SMin`/`SClamp` on constants as *unsigned* when the integer type
/// is declared unsigned, and llvm-spirv declares every integer type unsigned, so
/// `convert_uchar_sat(-5)` became 255. Its output did stay spirv-val clean on every test kernel.
const SPIRV_OPT: bool = false;

/// A built program: the build log, one [`KernelInfo`] (with its own Vulkan module) per kernel,
/// and the OpenCL (Kernel-capability) SPIR-V it was lowered from (`CL_PROGRAM_IL`, caching,
/// linking).
#[derive(Clone, Debug, Default)]
pub struct CompiledProgram {
    /// Diagnostics of the build (warnings), empty when there were none.
    pub build_log: String,
    /// The kernels, in the order the module declares them.
    pub kernels: Vec<KernelInfo>,
    /// The Kernel SPIR-V module (words) after structurization.
    pub opencl_spirv: Vec<u32>,
}

/// Compiles OpenCL C `source` with the OpenCL build `options` (`clBuildProgram`) for a device
/// with `caps`.
///
/// # Errors
/// [`BuildFailure`] of kind [`BuildFailureKind::InvalidOptions`] for options that are not
/// OpenCL build options (`CL_INVALID_BUILD_OPTIONS`), [`BuildFailureKind::CompileError`] with
/// clang's diagnostics (file `<source>` and line) or the lowering's reason otherwise
/// (`CL_BUILD_PROGRAM_FAILURE`).
pub fn compile_source(
    tools: &Tools,
    source: &str,
    options: &str,
    caps: &DeviceCaps,
) -> Result<CompiledProgram, BuildFailure> {
    let opts = options::parse(options, caps)?;
    let front = frontend::compile_c(tools, source, &opts, caps)?;
    let mut program = finish(front.spirv, front.log, caps, SPIRV_OPT && !opts.opt_disable)?;
    for k in &mut program.kernels {
        reflect::restore_hint_signedness(k, source);
    }
    Ok(program)
}

/// Builds a program from OpenCL (Kernel-capability) SPIR-V `il` (`clCreateProgramWithIL`,
/// words in host byte order or a byte stream with a SPIR-V magic number in either order).
///
/// The module goes back to LLVM IR (`llvm-spirv-15 -r`) to be structurized, so this also needs
/// the tools of [`find_tools`].
///
/// # Errors
/// As [`compile_source`]; also `CompileError` when `il` is not a SPIR-V module or the tools are
/// missing.
pub fn compile_il(
    il: &[u8],
    options: &str,
    caps: &DeviceCaps,
) -> Result<CompiledProgram, BuildFailure> {
    let opts = options::parse(options, caps)?;
    let tools = find_tools().map_err(|e| BuildFailure::compile(e.to_string()))?;
    let words = frontend::words_from_bytes(il)?;
    let front = frontend::compile_il(&tools, &words, &opts)?;
    finish(front.spirv, front.log, caps, SPIRV_OPT && !opts.opt_disable)
}

/// The persistent variant of a lowered kernel module ([`KernelInfo::spirv`]), validated
/// with spirv-val when `VKCL_VALIDATION` is set; see "Persistent variant" in the module doc.
///
/// # Errors
/// A message when the module cannot be rewritten or the result does not validate.
pub fn persistent_variant(words: &[u32]) -> Result<Vec<u32>, String> {
    let out = lower::persistent_variant(words)?;
    // spirv-val runs where every lowered module does: with VKCL_VALIDATION (and in tests).
    if cfg!(test) || validate::enabled() {
        validate::validate_vulkan(&out).map_err(|e| {
            format!("internal error, the persistent variant is not valid Vulkan SPIR-V: {e}")
        })?;
    }
    Ok(out)
}

/// Reflects and lowers every kernel of a structurized Kernel module; `optimize` runs spirv-opt
/// on each lowered module.
fn finish(
    spirv: Vec<u32>,
    mut log: String,
    caps: &DeviceCaps,
    optimize: bool,
) -> Result<CompiledProgram, BuildFailure> {
    let module = rspirv::dr::load_words(&spirv)
        .map_err(|e| BuildFailure::compile(format!("cannot parse SPIR-V: {e}")))?;
    let infos = reflect::reflect_module(&module).map_err(BuildFailure::compile)?;
    let mut kernels = Vec::with_capacity(infos.len());
    let check = validate::enabled();
    for mut info in infos {
        let mut lowered = lower::lower_kernel(&module, &info, caps)
            .map_err(|e| BuildFailure::compile(format!("kernel `{}`: {e}", info.name)))?;
        let mut valid = false;
        if optimize {
            // spirv-opt validates its input; its output is only taken when it stays valid
            // (checked when VKCL_VALIDATION is set).
            match validate::optimize(&lowered.words) {
                Ok(words) if check => match validate::validate_vulkan(&words) {
                    Ok(()) => (lowered.words, valid) = (words, true),
                    Err(e) => tracing::warn!(
                        "kernel `{}`: spirv-opt output is invalid, keeping the unoptimised \
                         module: {e}",
                        info.name
                    ),
                },
                Ok(words) => lowered.words = words,
                Err(e) => tracing::warn!("kernel `{}`: spirv-opt failed: {e}", info.name),
            }
        }
        // VKCL_VALIDATION: spirv-val on everything handed to Vulkan; a failure is a build error.
        if check && !valid {
            if let Err(e) = validate::validate_vulkan(&lowered.words) {
                return Err(BuildFailure::compile(format!(
                    "kernel `{}`: internal error, the lowered module is not valid Vulkan \
                     SPIR-V (spirv-val, Vulkan 1.2): {e}",
                    info.name
                )));
            }
        }
        info.spirv = lowered.words;
        info.static_local_mem_bytes = lowered.static_local_mem_bytes;
        info.private_mem_bytes = lowered.private_mem_bytes;
        kernels.push(info);
    }
    if log.trim().is_empty() {
        log.clear();
    }
    Ok(CompiledProgram {
        build_log: log,
        kernels,
        opencl_spirv: spirv,
    })
}
