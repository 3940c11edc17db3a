//! OpenCL C -> Kernel SPIR-V -> Vulkan SPIR-V. Pure functions of bytes in, bytes out.
//!
//! [`compile_source`] runs `clang-15` (OpenCL C -> LLVM IR), `opt-15` (inlining and CFG
//! structurization) and `llvm-spirv-15` (LLVM IR -> OpenCL "Kernel" SPIR-V), then lowers every
//! kernel to its own Vulkan compute module ([`KernelInfo::spirv`]). [`compile_il`] starts from
//! Kernel SPIR-V (`clCreateProgramWithIL`).
//!
//! Every program is compiled with a small OpenCL C prelude (`prelude.cl`: async work-group
//! copies, `prefetch`). Every lowered module goes through spirv-val (Vulkan 1.2) before it is
//! handed out, where spirv-val is installed and `VKCL_SPIRV_VAL` is not `0`
//! (`validate::enabled`), and a failure is a build error whose log carries the validator's
//! message.
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
//! ## Launch header (device memory, 96 bytes, 8-byte aligned; read-only but for `loop_limit_hit`)
//! | offset | type      | meaning                                                |
//! |--------|-----------|--------------------------------------------------------|
//! | 0      | `u32`     | `work_dim` (1..=3)                                      |
//! | 4      | `u32`     | `loop_limit_hit`: 0 from the runtime; the loop-guard variant stores 1 |
//! | 8      | `u64[3]`  | `global_offset`                                        |
//! | 32     | `u64[3]`  | `global_size` (of the whole NDRange)                   |
//! | 56     | `u32[3]`  | `local_size` (enqueued)                                |
//! | 68     | `u32[3]`  | `num_groups` (of the whole NDRange, rounded up)        |
//! | 80     | `u64`     | `printf_buffer` address, 0 = none                      |
//! | 88     | `u64`     | the program's `__global` variable block (`globals`), 0 = none |
//!
//! For dimensions `d >= work_dim` the runtime writes the OpenCL defaults into the header
//! (`global_offset` 0, `global_size` 1, `local_size` 1, `num_groups` 1) and dispatches one group
//! of size 1 in that dimension; the kernel then returns the spec's defaults without a test.
//!
//! ## Printf buffer (device memory at `printf_buffer`, only for kernels that call printf)
//! | offset | type      | meaning                                                          |
//! |--------|-----------|------------------------------------------------------------------|
//! | 0      | `u32`     | `used`: bytes reserved so far (kernels add to it atomically)      |
//! | 4      | `u32`     | `capacity`: bytes of the record area (`CL_DEVICE_PRINTF_BUFFER_SIZE`) |
//! | 8      | records   | `capacity` bytes of records, then one overflow slot of [`PrintfInfo::max_record_bytes`] |
//!
//! Each `printf` call reserves its record with `OpAtomicIAdd(used, size)` (Device scope) and,
//! when `offset + size <= capacity`, writes it at `8 + offset` and returns 0; otherwise it
//! writes it into the overflow slot at `8 + capacity` (never read) and returns -1. A record is
//! `u32` words: its size in bytes, the call's index in [`KernelInfo::printf`]'s `calls`, then
//! each argument as [`PrintfArg`] describes (components of up to 32 bits one word each,
//! zero-extended; 64-bit components two words, low first; a `%s` string its index in
//! `strings`; a pointer its 64-bit address). The runtime sets `used` to 0 before the launch
//! and, when the command completes, prints the records of `[8, 8 + min(used, capacity))` in
//! order. Formats and `%s` arguments must be constant strings (literals or `__constant` data).
//!
//! ## Argument block (device memory at `args_address`)
//! Every argument that is not a `__local` pointer lives at [`KernelArgInfo::offset`], aligned
//! with OpenCL C rules (scalars and vectors: their size, so an `int8` is 32 bytes and
//! 32-aligned and a `ulong16` 128 bytes and 128-aligned; 3-component vectors like 4-component
//! ones, structs: the largest member alignment, pointers: 8). [`KernelInfo::args_size`] is the
//! block size, rounded up to 8 bytes.
//! - [`ArgKind::Buffer`] (`__global`/`__constant` pointer): the 8-byte device address (0 for
//!   NULL). Kernels access memory through `PhysicalStorageBuffer` pointers, so pointer
//!   arithmetic, casts and sub-buffers (address + offset) work, and so do raw addresses
//!   (`clSetKernelArgDevicePointerEXT`) and pointers stored in memory (a struct that points to
//!   its own type is forward-declared, `OpTypeForwardPointer`).
//! - [`ArgKind::Value`]: the `size` bytes given to `clSetKernelArg`, copied verbatim.
//! - [`ArgKind::Local`]: no bytes in the block. The kernel declares a `Workgroup` array whose
//!   element type has `elem_size` bytes and whose length is the specialization constant
//!   `spec_id` (= 3 + argument index); the runtime sets it to `ceil(bytes / elem_size)`.
//!
//! ## Work-group size and launch specialization constants
//! The `WorkgroupSize` built-in is a spec-constant composite with spec IDs 0, 1, 2 (x, y, z),
//! defaults 1, 1, 1 or the kernel's `reqd_work_group_size`.
//!
//! The runtime also specializes every pipeline on facts of the launch that would otherwise be
//! loads (a module may lack any of them when the kernel does not use it):
//! - [`ENQUEUED_LOCAL_SIZE_SPEC_ID`] + 0, 1, 2: the enqueued work-group size (the header's
//!   `local_size`; equal to `WorkgroupSize` but in the edge boxes of a non-uniform NDRange).
//! - [`ZERO_GLOBAL_OFFSET_SPEC_ID`] (bool): the global offset is 0; the kernel then does not
//!   read the header's `global_offset`.
//! - [`ZERO_GROUP_OFFSET_SPEC_ID`] (bool): every dispatch of the pipeline pushes
//!   `group_offset` 0; the kernel then does not read it.
//!
//! A launch whose offsets are not 0 uses a pipeline specialized with the flag false, so a
//! mutable-dispatch update that changes them changes the pipeline (re-recorded, not in place).
//!
//! Non-uniform NDRanges (a global size that is not a multiple of the local size) are run as
//! up to `2^work_dim` boxes of groups: per dimension the uniform part (`global / local`
//! groups of the enqueued size) and the edge (one group of `global % local` items). Each box
//! is its own dispatch of a pipeline whose `WorkgroupSize` is that box's group size, with
//! `group_offset` naming its first group; the header always holds the enqueued `local_size`
//! and `num_groups = ceil(global / local)`.
//!
//! ## Built-ins
//! - `get_group_id(d)` = `WorkgroupId[d] + group_offset[d]`
//! - `get_global_id(d)` = `get_group_id(d) * local_size[d] + LocalInvocationId[d] +
//!   global_offset[d]` (64-bit; the enqueued `local_size`, a spec constant; `group_offset`
//!   and `global_offset` 0 without a load where their flags say so)
//! - `get_local_size` = the `WorkgroupSize` spec constants (this group's actual size);
//!   `get_enqueued_local_size` = the enqueued-size spec constants (the header's `local_size`);
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
//! lavapipe does not use it by default (`VKCL_SUBDEVICE_DISPATCH`, docs/settings.md): llvmpipe stops any
//! shader invocation after 65535 loop iterations in total, which one launched group looping
//! over many virtual groups exceeds; there the runtime dispatches the plain module in waves.
//!
//! ## Loop-limit guard (llvmpipe before Mesa 25)
//! llvmpipe (Mesa 22.3.6, `lp_bld_ir_common.c`) gives each shader call (one SIMD vector of
//! invocations, 8 on AVX2) one counter of 65535 loop passes, shared by every loop of the
//! shader and never reset, and leaves any loop once it is spent: later results are silently
//! wrong. No loop shape avoids it. The same driver also leaves loops that follow a loop with a
//! data-dependent exit after one pass. On such a device the runtime creates the pipeline from
//! [`loop_guard_variant`] of a module with loops: each loop marks, in a private word, whether
//! an invocation left it through one of its exits, and its merge block stores 1 into the
//! header's `loop_limit_hit` when not; a loop whose merge is unreachable gets a never-taken
//! exit whose merge stores the flag. The runtime fails the command with `CL_OUT_OF_RESOURCES`
//! when the flag is set after it completes.
//!
//! ## Bounds-check variant (`VKCL_BOUNDS_CHECK=1`)
//! With the setting on, the runtime creates pipelines from [`bounds_check_variant`]: every
//! `OpLoad`, `OpStore` and atomic through a `PhysicalStorageBuffer` pointer checks that
//! `[address, address + size)` lies inside one `[base, end)` entry of the launch's range table
//! (one entry per `__global`/`__constant` pointer argument, then the launch buffer, the printf
//! buffer and the program's global variable block, then one per address of the launch's
//! `CL_KERNEL_EXEC_INFO_DEVICE_PTRS_EXT` list; empty entries are `[0, 0)`; the runtime asks for
//! the variant of the table's length). Header words
//! 96..128 (otherwise padding): 96 `bounds_hit` (`u32`), 104 a bad address (`u64`), 112 the
//! table's offset from the header (`u64`), 120 the offset of a 256-byte sink (`u64`). An access
//! outside every entry goes to the sink instead, and the function stores 1 and the address
//! into the header at each return; the runtime fails the command with `CL_OUT_OF_RESOURCES`.
//!
//! ## Memory model
//! Global and constant memory: `PhysicalStorageBuffer` pointers with `Aligned` accesses.
//! `__local`: `Workgroup` variables. 32-bit atomics on global memory use `Device` scope (OpenCL
//! 1.2 atomics arrive with `Workgroup` scope and are widened), on local memory `Workgroup` scope.
//! `barrier(flags)` is `OpControlBarrier Workgroup Workgroup AcquireRelease|<memory classes>`.

pub mod cache;
mod caps;
mod error;
mod frontend;
mod fwdconv;
mod globals;
mod il;
mod il_library;
mod inlining;
mod layout;
mod lower;
mod lowered_cache;
mod mathlib;
mod options;
mod phiguard;
mod printf;
pub mod ptx;
mod reflect;
mod spirv_queries;
mod spv;
mod tools;
mod validate;

#[cfg(test)]
mod tests;

pub use caps::{DeviceCaps, SubgroupOps};
pub use error::{BuildFailure, BuildFailureKind, CompilerError};
pub use globals::{program_globals, GlobalVariables};
pub use il::{spec_constants, SpecConstant, SpecValues};
pub use options::{parse_link as parse_link_options, LinkOptions};
pub use printf::{parse_format, Length, Piece, PrintfArg, PrintfCall, PrintfInfo, Spec};
pub use reflect::{
    AccessQualifier, AddressQualifier, ArgKind, KernelArgInfo, KernelInfo, TypeQualifiers,
};
pub use spirv_queries::{spirv_queries, SpirvQueries};
pub use tools::{available, find_tools, Tools};

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
    /// Whether the module has program-scope `__global` variables ([`program_globals`] gives
    /// their block).
    pub has_global_variables: bool,
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
    let mut program = finish(front.spirv, front.log, caps, &opts, None)?;
    for k in &mut program.kernels {
        reflect::restore_hint_signedness(k, source);
    }
    Ok(program)
}

/// Builds a program from OpenCL (Kernel-capability) SPIR-V `il` (`clCreateProgramWithIL`,
/// words in host byte order or a byte stream with a SPIR-V magic number in either order).
///
/// The module goes back to LLVM IR (`llvm-spirv-15 -r`) to be structurized, so this also needs
/// the tools of [`find_tools`]. `spec` holds the values of specialization constants
/// (`clSetProgramSpecializationConstant`); the module's own defaults hold for the others.
/// SPIR-V 1.4 instructions llvm-spirv-15 cannot read are rewritten first (`il.rs`).
///
/// # Errors
/// As [`compile_source`]; also `CompileError` when `il` is not a SPIR-V module or the tools are
/// missing.
pub fn compile_il(
    il: &[u8],
    options: &str,
    caps: &DeviceCaps,
    spec: &SpecValues,
) -> Result<CompiledProgram, BuildFailure> {
    let opts = options::parse(options, caps)?;
    let tools = find_tools().map_err(|e| BuildFailure::compile(e.to_string()))?;
    let words = il::prepare(&frontend::words_from_bytes(il)?, spec)?;
    let front = frontend::compile_il(&tools, &words, &opts, caps)?;
    finish(front.spirv, front.log, caps, &opts, None)
}

/// What a front-end result depends on besides its inputs, and where to cache it: the
/// program-building entry points below take one.
pub struct BuildEnv<'a> {
    /// The external tools (their identity is part of every cache key).
    pub tools: &'a Tools,
    /// The device's capabilities (part of every cache key).
    pub caps: &'a DeviceCaps,
    /// The device's identity (vendor and device ID, driver version, UUIDs), opaque bytes.
    pub device_key: &'a [u8],
    /// The on-disk cache, `None` when disabled.
    pub cache: Option<&'a crate::util::cache_file::CacheConfig>,
}

/// Identity of vkcl's front end for cache keys: crate version plus a hash of the code and
/// data that decide front-end output (this module's front end, options, prelude).
fn frontend_id() -> &'static [u8; 32] {
    static ID: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        cache::key(&[
            env!("CARGO_PKG_VERSION").as_bytes(),
            include_str!("frontend.rs").as_bytes(),
            include_str!("inlining.rs").as_bytes(),
            include_str!("fwdconv.rs").as_bytes(),
            include_str!("phiguard.rs").as_bytes(),
            include_str!("spv.rs").as_bytes(),
            include_str!("il.rs").as_bytes(),
            include_str!("options.rs").as_bytes(),
            include_str!("prelude.cl").as_bytes(),
            il_library::SOURCE.as_bytes(),
            include_str!("il_library.rs").as_bytes(),
            include_str!("tools.rs").as_bytes(),
            include_str!("mathlib.rs").as_bytes(),
            include_str!("mathlib.cl").as_bytes(),
            include_str!("mathlib_half.cl").as_bytes(),
        ])
    })
}

impl BuildEnv<'_> {
    /// The cache key of a front-end result of kind `tag` from `parts`.
    fn key(&self, tag: &str, parts: &[&[u8]]) -> [u8; 32] {
        let tools = self.tools.identity() + &mathlib::identity();
        let caps = format!("{:?}", self.caps);
        let mut all: Vec<&[u8]> = vec![
            tag.as_bytes(),
            frontend_id(),
            tools.as_bytes(),
            self.device_key,
            caps.as_bytes(),
        ];
        all.extend_from_slice(parts);
        cache::key(&all)
    }

    /// The cached (log, data) of `k`, or `make`'s result, stored when the cache is on.
    fn cached(
        &self,
        k: &[u8; 32],
        make: impl FnOnce() -> Result<(String, Vec<u8>), BuildFailure>,
    ) -> Result<(String, Vec<u8>), BuildFailure> {
        if let Some(c) = self.cache {
            if let Some(e) = cache::load(c, k) {
                return Ok((e.log, e.data));
            }
        }
        let (log, data) = make()?;
        if let Some(c) = self.cache {
            cache::store(c, k, &log, &data);
        }
        Ok((log, data))
    }
}

fn spirv_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// [`compile_source`] through the program cache: a hit skips clang, opt and llvm-spirv
/// (`clBuildProgram` of source). Errors as [`compile_source`].
pub fn build_source(
    env: &BuildEnv,
    source: &str,
    options: &str,
) -> Result<CompiledProgram, BuildFailure> {
    let opts = options::parse(options, env.caps)?;
    let k = env.key("source", &[options.as_bytes(), source.as_bytes()]);
    let lk = lowered_cache::key(&k, b"");
    if let Some(p) = lowered_cache::load(env, &lk) {
        return Ok(p);
    }
    let (log, data) = env.cached(&k, || {
        let front = frontend::compile_c(env.tools, source, &opts, env.caps)?;
        Ok((front.log, spirv_bytes(&front.spirv)))
    })?;
    let words = frontend::words_from_bytes(&data)?;
    let mut program = finish(words, log, env.caps, &opts, env.cache)?;
    for k in &mut program.kernels {
        reflect::restore_hint_signedness(k, source);
    }
    lowered_cache::store(env, &lk, &program);
    Ok(program)
}

/// The bytes of spec constant values for a cache key.
fn spec_key(spec: &SpecValues) -> Vec<u8> {
    let mut k = Vec::new();
    for (id, v) in spec {
        k.extend_from_slice(&id.to_le_bytes());
        k.extend_from_slice(&(v.len() as u32).to_le_bytes());
        k.extend_from_slice(v);
    }
    k
}

/// [`compile_il`] through the program cache (`clBuildProgram` of IL). Errors as
/// [`compile_il`].
pub fn build_il(
    env: &BuildEnv,
    il: &[u8],
    options: &str,
    spec: &SpecValues,
) -> Result<CompiledProgram, BuildFailure> {
    let opts = options::parse(options, env.caps)?;
    let words = frontend::words_from_bytes(il)?;
    let sk = spec_key(spec);
    let k = env.key("il", &[options.as_bytes(), il, &sk]);
    let lk = lowered_cache::key(&k, b"");
    if let Some(p) = lowered_cache::load(env, &lk) {
        return Ok(p);
    }
    let (log, data) = env.cached(&k, || {
        let words = il::prepare(&words, spec)?;
        let front = frontend::compile_il(env.tools, &words, &opts, env.caps)?;
        Ok((front.log, spirv_bytes(&front.spirv)))
    })?;
    let spirv = frontend::words_from_bytes(&data)?;
    let program = finish(spirv, log, env.caps, &opts, env.cache)?;
    lowered_cache::store(env, &lk, &program);
    Ok(program)
}

/// A compiled object (LLVM bitcode) and its build log.
pub struct CompiledObject {
    /// LLVM bitcode of target `spir64`, before optimisation: what `clLinkProgram` links.
    pub bitcode: Vec<u8>,
    /// Diagnostics (warnings), empty when there were none.
    pub log: String,
}

/// `clCompileProgram` of OpenCL C: `source` with the embedded `headers` ((include name,
/// contents), found by `#include "name"`) and compile `options`, to a compiled object,
/// through the program cache.
///
/// Compiled objects are LLVM bitcode rather than SPIR-V: vkcl inlines everything and
/// structurizes control flow at the LLVM level (opt-15) before translating to SPIR-V, and a
/// call into another compiled object can only be inlined once both are in one module, so
/// objects are linked with llvm-link-15 and the linked module takes the usual path.
///
/// # Errors
/// `InvalidOptions` (`CL_INVALID_COMPILER_OPTIONS`), `CompileError` with clang's diagnostics
/// naming `<source>` or the header's include name and the line (`CL_COMPILE_PROGRAM_FAILURE`).
pub fn compile_object(
    env: &BuildEnv,
    source: &str,
    headers: &[(String, String)],
    options: &str,
) -> Result<CompiledObject, BuildFailure> {
    let opts = options::parse(options, env.caps)?;
    let mut parts: Vec<&[u8]> = vec![options.as_bytes(), source.as_bytes()];
    for (name, text) in headers {
        parts.push(name.as_bytes());
        parts.push(text.as_bytes());
    }
    let k = env.key("object", &parts);
    let (log, bitcode) = env.cached(&k, || {
        let o = frontend::compile_object(env.tools, source, headers, &opts, env.caps)?;
        Ok((o.log, o.bitcode))
    })?;
    Ok(CompiledObject {
        bitcode,
        log: if log.trim().is_empty() {
            String::new()
        } else {
            log
        },
    })
}

/// `clCompileProgram` of a program created from Kernel SPIR-V: the module, with the
/// specialization constant values `spec` and rewritten as for [`compile_il`], as a compiled
/// object (`llvm-spirv-15 -r`).
///
/// # Errors
/// `InvalidOptions` for bad options, `CompileError` when the module is not valid SPIR-V.
pub fn il_object(
    env: &BuildEnv,
    il: &[u8],
    options: &str,
    spec: &SpecValues,
) -> Result<CompiledObject, BuildFailure> {
    options::parse(options, env.caps)?;
    let words = il::prepare(&frontend::words_from_bytes(il)?, spec)?;
    let bitcode =
        frontend::il_to_object(env.tools, &words, il::has_linkonce_odr(&words), env.caps)?;
    Ok(CompiledObject {
        bitcode,
        log: String::new(),
    })
}

/// `clLinkProgram -create-library`: links compiled objects and libraries into one library.
///
/// # Errors
/// `CompileError` with llvm-link's message (`CL_LINK_PROGRAM_FAILURE`).
pub fn link_library(env: &BuildEnv, objects: &[&[u8]]) -> Result<Vec<u8>, BuildFailure> {
    frontend::link(env.tools, objects)
}

/// `clLinkProgram` (and `clBuildProgram` of a compiled-object binary): links compiled objects
/// and libraries into an executable, through the program cache. `sources` is the OpenCL C the
/// objects came from, where known (for `vec_type_hint` signedness).
///
/// # Errors
/// `CompileError` with the linker's, opt's or the lowering's message (an unresolved or
/// duplicate symbol, a kernel that cannot be lowered): `CL_LINK_PROGRAM_FAILURE`.
pub fn link_executable(
    env: &BuildEnv,
    objects: &[&[u8]],
    sources: &str,
) -> Result<CompiledProgram, BuildFailure> {
    let k = env.key("link", objects);
    let lk = lowered_cache::key(&k, sources.as_bytes());
    if let Some(p) = lowered_cache::load(env, &lk) {
        return Ok(p);
    }
    let (log, data) = env.cached(&k, || {
        let linked = frontend::link(env.tools, objects)?;
        let spirv = frontend::object_to_spirv(env.tools, &linked)?;
        Ok((String::new(), spirv_bytes(&spirv)))
    })?;
    let words = frontend::words_from_bytes(&data)?;
    let undefined = imported_functions(&words);
    if !undefined.is_empty() {
        return Err(BuildFailure::compile(format!(
            "error: undefined function(s) after linking: {}",
            undefined.join(", ")
        )));
    }
    // Link options have no `-cl-opt-disable` (OpenCL 3.0 API 5.8.7): the defaults.
    let mut program = finish(
        words,
        log,
        env.caps,
        &options::ParsedOptions::default(),
        env.cache,
    )?;
    for k in &mut program.kernels {
        reflect::restore_hint_signedness(k, sources);
    }
    lowered_cache::store(env, &lk, &program);
    Ok(program)
}

/// Functions the module imports (`LinkageAttributes ... Import` on an `OpFunction`; imported
/// built-in variables are not functions). llvm-spirv turns calls to OpenCL built-ins into
/// instructions, so an imported function is one no input defined.
fn imported_functions(words: &[u32]) -> Vec<String> {
    use rspirv::dr::Operand;
    use rspirv::spirv::{Decoration, LinkageType, Op};
    let Ok(module) = spv::load(words) else {
        return Vec::new();
    };
    let functions: Vec<u32> = module
        .functions
        .iter()
        .filter_map(|f| f.def.as_ref().and_then(|d| d.result_id))
        .collect();
    module
        .annotations
        .iter()
        .filter(|i| i.class.opcode == Op::Decorate)
        .filter_map(|i| match i.operands.as_slice() {
            // The prelude's work-group scratch functions are the lowering's (lower/collective).
            [Operand::IdRef(target), Operand::Decoration(Decoration::LinkageAttributes), Operand::LiteralString(name), Operand::LinkageType(LinkageType::Import)]
                if functions.contains(target) && !name.starts_with("__vkcl_wg_scratch") =>
            {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

/// Checks OpenCL build options without building.
///
/// # Errors
/// `InvalidOptions` naming the first bad option; `CompileError` for an OpenCL C version the
/// device does not offer.
pub fn check_options(options: &str, caps: &DeviceCaps) -> Result<(), BuildFailure> {
    options::parse(options, caps).map(|_| ())
}

/// Rebuilds a program from the structurized Kernel SPIR-V of a [`CompiledProgram`]
/// ([`CompiledProgram::opencl_spirv`], as vkcl's executable binaries carry it): reflection and
/// lowering only, no external tool.
///
/// # Errors
/// `InvalidOptions` for bad options; `CompileError` when the module cannot be parsed or
/// lowered.
pub fn build_structured(
    spirv: &[u8],
    options: &str,
    caps: &DeviceCaps,
) -> Result<CompiledProgram, BuildFailure> {
    let opts = options::parse(options, caps)?;
    let words = frontend::words_from_bytes(spirv)?;
    finish(words, String::new(), caps, &opts, None)
}

/// [`build_structured`] through the program cache (`clBuildProgram` of an executable binary):
/// a hit on the whole built program ([`lowered_cache`]) runs no pass, a miss validates the
/// lowered modules through the cache as source builds do. Errors as [`build_structured`].
pub fn build_binary(
    env: &BuildEnv,
    spirv: &[u8],
    options: &str,
) -> Result<CompiledProgram, BuildFailure> {
    let opts = options::parse(options, env.caps)?;
    let k = env.key("binary", &[options.as_bytes(), spirv]);
    let lk = lowered_cache::key(&k, b"");
    if let Some(p) = lowered_cache::load(env, &lk) {
        return Ok(p);
    }
    let words = frontend::words_from_bytes(spirv)?;
    let program = finish(words, String::new(), env.caps, &opts, env.cache)?;
    lowered_cache::store(env, &lk, &program);
    Ok(program)
}

/// The persistent variant of a lowered kernel module ([`KernelInfo::spirv`]), validated
/// with spirv-val where every lowered module is (`validate::enabled`); see "Persistent variant" in the module doc.
///
/// # Errors
/// A message when the module cannot be rewritten or the result does not validate.
pub fn persistent_variant(words: &[u32]) -> Result<Vec<u32>, String> {
    let out = lower::persistent_variant(words)?;
    if validate::enabled() {
        validate::validate_vulkan(&out).map_err(|e| {
            format!("internal error, the persistent variant is not valid Vulkan SPIR-V: {e}")
        })?;
    }
    Ok(out)
}

/// The loop-limit guard variant of a lowered kernel module ([`KernelInfo::spirv`]) for
/// llvmpipe's loop limiter, validated where every lowered module is (`validate::enabled`);
/// see "Loop-limit guard" in the module doc.
///
/// # Errors
/// A message when the module cannot be rewritten or the result does not validate.
pub fn loop_guard_variant(words: &[u32]) -> Result<Vec<u32>, String> {
    let out = lower::loop_guard_variant(words)?;
    if validate::enabled() {
        validate::validate_vulkan(&out).map_err(|e| {
            format!("internal error, the loop-guard variant is not valid Vulkan SPIR-V: {e}")
        })?;
    }
    Ok(out)
}

/// Whether a SPIR-V module (`words`, header included) has a loop (`OpLoopMerge`): only such a
/// module's loop-guard variant can raise `loop_limit_hit`.
pub fn has_loops(words: &[u32]) -> bool {
    let mut at = 5;
    while let Some(&w) = words.get(at) {
        if w & 0xffff == rspirv::spirv::Op::LoopMerge as u32 {
            return true;
        }
        at += ((w >> 16) as usize).max(1);
    }
    false
}

/// The bounds-check variant of a lowered kernel module (`VKCL_BOUNDS_CHECK=1`; see
/// "Bounds-check variant" in the module doc): every global load, store and atomic is checked
/// against the `ranges` `[base, end)` entries of the launch's range table, validated where
/// every lowered module is.
///
/// # Errors
/// A message when the module cannot be rewritten or the result does not validate.
pub fn bounds_check_variant(words: &[u32], ranges: u32) -> Result<Vec<u32>, String> {
    let out = lower::bounds_check_variant(words, ranges)?;
    if validate::enabled() {
        validate::validate_vulkan(&out).map_err(|e| {
            format!("internal error, the bounds-check variant is not valid Vulkan SPIR-V: {e}")
        })?;
    }
    Ok(out)
}

/// Launch-header offsets (bytes) of the bounds-check variant's words: `bounds_hit` (`u32`),
/// the bad address (`u64`), the range table's offset from the header (`u64`) and the sink's
/// offset from the header (`u64`).
pub const BOUNDS_OFFSETS: [u64; 4] = lower::BOUNDS_OFFSETS;

/// The inline samplers (`const sampler_t` in the source) of `kernel`: (binding, normalized,
/// addressing mode as the SPIR-V enumerant 0..=4 in `CL_ADDRESS_NONE`.. order, linear) of
/// each descriptor the runtime binds a sampler of that state to (docs/images.md).
pub fn inline_samplers(kernel: &KernelInfo) -> Vec<(u32, bool, u32, bool)> {
    lower::inline_samplers(&kernel.spirv, kernel.args.len() as u32)
}

/// The table value (a `u32`) of a sampler argument with normalized coordinates or not and
/// addressing mode `addressing` (`CL_ADDRESS_*`): bit 0 normalized, bits 1-2 the wrap the
/// lowered kernel applies to normalized coordinates (1 `CL_ADDRESS_REPEAT`, 2
/// `CL_ADDRESS_MIRRORED_REPEAT`, as OpenCL C 3.0 8.2 computes them; docs/images.md).
pub fn sampler_entry(normalized: bool, addressing: u32) -> u32 {
    lower::sampler_entry(normalized, addressing.wrapping_sub(0x1130))
}

/// Spec ids of the enqueued work-group size (`u32`, x at this id, y and z after it): the
/// runtime sets them to the launch header's `local_size` (kernel ABI, "Work-group size").
pub const ENQUEUED_LOCAL_SIZE_SPEC_ID: u32 = 0x1_0000;

/// Spec id of a bool (`VkBool32`, default false): true when the launch's global offset is 0
/// in every dimension, and the kernel then reads no `global_offset` from the header.
pub const ZERO_GLOBAL_OFFSET_SPEC_ID: u32 = 0x1_0003;

/// Spec id of a bool (`VkBool32`, default false): true when every dispatch of the pipeline
/// pushes `group_offset` 0, and the kernel then reads no `group_offset` push constant.
pub const ZERO_GROUP_OFFSET_SPEC_ID: u32 = 0x1_0004;

/// Offset of the `loop_limit_hit` flag (`u32`) in the launch header, bytes (kernel ABI).
pub const LOOP_FLAG_OFFSET: u64 = lower::LOOP_FLAG_OFFSET;

/// Writes a kernel's lowered module to `dir/<kernel>-<hash>.spv` (`VKCL_DUMP_SPIRV`); a
/// failure is logged, never a build error.
fn dump_spirv(dir: &std::path::Path, kernel: &str, words: &[u32]) {
    use sha2::{Digest, Sha256};
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let hash = Sha256::digest(&bytes);
    let name = format!(
        "{kernel}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}.spv",
        hash[0], hash[1], hash[2], hash[3], hash[4], hash[5]
    );
    if let Err(e) =
        std::fs::create_dir_all(dir).and_then(|()| std::fs::write(dir.join(&name), &bytes))
    {
        tracing::warn!(
            "VKCL_DUMP_SPIRV: cannot write {}: {e}",
            dir.join(&name).display()
        );
    }
}

/// Reflects and lowers every kernel of a structurized Kernel module with build options `opts`:
/// spirv-opt on each lowered module ([`SPIRV_OPT`]) and fusable `mad` unless
/// `-cl-opt-disable`.
///
/// `cache`: the program cache, where a lowered module that passed spirv-val is recorded (by its
/// hash, [`validate_once`]) so that building it again does not validate it again.
fn finish(
    spirv: Vec<u32>,
    mut log: String,
    caps: &DeviceCaps,
    opts: &options::ParsedOptions,
    cache: Option<&crate::util::cache_file::CacheConfig>,
) -> Result<CompiledProgram, BuildFailure> {
    let optimize = SPIRV_OPT && !opts.opt_disable;
    let module = spv::load(&spirv)
        .map_err(|e| BuildFailure::compile(format!("cannot parse SPIR-V: {e}")))?;
    let infos = reflect::reflect_module(&module).map_err(BuildFailure::compile)?;
    let mut kernels = Vec::with_capacity(infos.len());
    let check = validate::enabled();
    for mut info in infos {
        let mut lowered = lower::lower_kernel(&module, &info, caps, opts.opt_disable)
            .map_err(|e| BuildFailure::compile(format!("kernel `{}`: {e}", info.name)))?;
        let mut valid = false;
        if optimize {
            // spirv-opt validates its input; its output is only taken when it stays valid
            // (checked when spirv-val runs, see `validate::enabled`).
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
        // spirv-val on everything handed to Vulkan (`validate::enabled`); a failure is a build
        // error.
        if check && !valid {
            if let Err(e) = validate_once(cache, &lowered.words) {
                return Err(BuildFailure::compile(format!(
                    "kernel `{}`: internal error, the lowered module is not valid Vulkan \
                     SPIR-V (spirv-val, Vulkan 1.2): {e}",
                    info.name
                )));
            }
        }
        if let Some(dir) = &crate::util::config::config().dump_spirv {
            dump_spirv(dir, &info.name, &lowered.words);
        }
        info.spirv = lowered.words;
        info.static_local_mem_bytes = lowered.static_local_mem_bytes;
        info.private_mem_bytes = lowered.private_mem_bytes;
        info.printf = lowered.printf;
        kernels.push(info);
    }
    if log.trim().is_empty() {
        log.clear();
    }
    let has_global_variables = globals::offsets(&module).map_err(BuildFailure::compile)?.1 > 0;
    Ok(CompiledProgram {
        build_log: log,
        kernels,
        opencl_spirv: spirv,
        has_global_variables,
    })
}

/// spirv-val (Vulkan 1.2) on lowered module `words`, unless the program `cache` records that
/// this very module passed it with this very validator: an entry keyed by the module's bytes
/// and the validator's identity ([`validate::identity`]), stored after it passes. Lowering is
/// deterministic, so a program built again from the cache lowers to the same module: its
/// validation (60% of a cached build of pyopencl's 4.4-million-word `bessel_jn`, 15 s) is
/// done once. Without a cache, spirv-val every time.
///
/// # Errors
/// spirv-val's message when the module is invalid.
fn validate_once(
    cache: Option<&crate::util::cache_file::CacheConfig>,
    words: &[u32],
) -> Result<(), String> {
    let Some(c) = cache else {
        return validate::validate_vulkan(words);
    };
    let k = cache::key(&[
        b"validated",
        validate::identity().as_bytes(),
        &spirv_bytes(words),
    ]);
    if cache::load(c, &k).is_some() {
        return Ok(());
    }
    validate::validate_vulkan(words)?;
    cache::store(c, &k, "", &[]);
    Ok(())
}
