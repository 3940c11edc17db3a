//! Kernel SPIR-V -> Vulkan compute SPIR-V, one kernel at a time. One pass per file:
//!
//! 1. [`select`]: keep only the kernel's body function, expand decoration groups; [`calls`]:
//!    inline llvm-spirv's helper functions (and why vkcl inlines every call).
//!    [`collective`]: the scratch arrays of the work-group collective functions (prelude).
//! 2. [`cfg`]: order blocks by dominance and add `OpSelectionMerge`/`OpLoopMerge` (the CFG is
//!    already structured by LLVM's `structurizecfg`).
//! 3. [`types`]: global/constant pointers -> `PhysicalStorageBuffer`, OpenCL C layout
//!    decorations, `__constant` program data -> `Private`.
//! 4. [`entry`]: parameters -> argument-block loads, built-ins, push constants, `__local`
//!    argument arrays, work-group size spec constants, the `GLCompute` entry point;
//!    [`image`]: image arguments -> descriptor bindings and Vulkan image instructions;
//!    [`sampled`]: sampler arguments and reads with a sampler.
//! 5. [`printf`]: `printf` calls -> records in the launch's printf buffer.
//! 6. [`memory`]: logical pointers (Function/Workgroup/Private) folded into `OpAccessChain`,
//!    physical pointer fixes, memcpy, vector loads/stores, atomics and barriers.
//! 7. [`widevec`]: vectors of 8 and 16 components -> 4-component parts (arrays in memory).
//! 8. [`extinst`]: `OpenCL.std` -> `GLSL.std.450` or core instructions.
//! 9. [`convert`]: saturating and rounding conversions, `half` division; then, on llvmpipe,
//!    [`f64round`] (`double` `round`/`rint`/`trunc` through `floor`/`ceil`); then [`unpack`]
//!    (integer scalar to narrower-integer vector bitcasts as shifts, for lavapipe 22.3.6); then [`srem`]
//!    (`OpSRem` through `OpSDiv`, for NVIDIA's driver) and [`narrowshift`]:
//!    8- and 16-bit shifts done in 32 bits (NVIDIA's driver returned 0 for them); then
//!    [`upcastcmp`]: signed comparisons of a sign-extended `int` with a `long` constant done
//!    in 32 bits (lavapipe 22.3.6 got them wrong); then, on NVIDIA, [`undef`]: numeric
//!    `OpUndef`s as zeros (the driver miscompiled loops with undefined phi entries).
//! 10. [`dynamic`]: dynamic indexing of vectors of 8- and 16-bit components -> selects.
//! 11. [`ptrarith`]: element steps of physical pointers that may be negative -> integer
//!     address arithmetic.
//! 12. [`access`]: `Function`/`Private` access chains next to their loads and stores
//!     (lavapipe 22.3 reads a deref's index at the access).
//! 13. [`scalarphi`]: vector phis as one phi per component (llvmpipe's loops).
//! 14. [`finish`]: capabilities, memory model, decorations, dead globals, ordering.
//!
//! [`persistent`] runs apart, on a finished module: the compute-unit-limited variant; so does
//! [`loopguard`]: the variant that reports llvmpipe's loop limit.

mod access;
mod boundscheck;
mod calls;
mod cfg;
mod collective;
mod convert;
mod ctx;
mod dynamic;
mod entry;
mod extinst;
mod f64round;
mod finish;
mod image;
mod image_half;
mod loopguard;
mod memory;
mod narrowshift;
mod persistent;
mod printf;
mod ptrarith;
mod sampled;
mod scalarphi;
mod select;
mod srem;
mod types;
mod undef;
mod unpack;
mod upcastcmp;
mod widevec;

use rspirv::binary::Assemble;
use rspirv::dr::Module;

use super::caps::DeviceCaps;
use super::reflect::KernelInfo;

/// A lowered kernel.
pub(crate) struct Lowered {
    /// The Vulkan module.
    pub words: Vec<u32>,
    /// Bytes of `__local` variables declared in the kernel body.
    pub static_local_mem_bytes: u64,
    /// Bytes of Function variables.
    pub private_mem_bytes: u64,
    /// The kernel's printf calls.
    pub printf: crate::compiler::printf::PrintfInfo,
}

/// Lowers kernel `info` of Kernel module `module` for a device with `caps`. `exact_mad`: every
/// `mad` (the program's own and the contracted `a * b + c`) rounded twice, as with
/// `-cl-opt-disable`; otherwise the driver may fuse them (see `extinst`).
///
/// # Errors
/// A message naming the construct that cannot be lowered yet.
pub(crate) fn lower_kernel(
    module: &Module,
    info: &KernelInfo,
    caps: &DeviceCaps,
    exact_mad: bool,
) -> Result<Lowered, String> {
    // Image and sampler arguments only where the device reports images (`VKCL_IMAGES=1`);
    // a device list that is not known (`DeviceCaps::default()`, tools) allows them.
    let images = caps
        .opencl_c_names
        .as_ref()
        .is_none_or(|n| n.iter().any(|x| x == "__opencl_c_images"));
    if !images {
        if let Some(a) = info
            .args
            .iter()
            .find(|a| matches!(a.kind, super::ArgKind::Image | super::ArgKind::Sampler))
        {
            return Err(format!(
                "argument `{}`: images and samplers need a device with image support \
                 (VKCL_IMAGES=1, experimental)",
                a.name
            ));
        }
    }
    let (globals, _) = crate::compiler::globals::offsets(module)?;
    let mut ctx = ctx::Ctx::new(select::select_kernel(module, info)?);
    collective::scratch_arrays(&mut ctx, caps.max_work_group_size)?;
    collective::subgroup_ops(&mut ctx, &caps.subgroup_ops)?;
    cfg::structurize(&mut ctx)?;
    types::lower_types(&mut ctx)?;
    let sizes = entry::lower_entry(&mut ctx, info, &globals)?;
    let printf = printf::lower_printf(&mut ctx)?;
    memory::lower_memory(&mut ctx)?;
    widevec::lower_wide_vectors(&mut ctx)?;
    extinst::lower_ext_inst(&mut ctx, exact_mad)?;
    convert::lower_conversions(&mut ctx)?;
    if caps.f64_rounding_by_floor {
        f64round::round_doubles_by_floor(&mut ctx)?;
    }
    unpack::unpack_scalar_bitcasts(&mut ctx)?;
    narrowshift::widen_narrow_shifts(&mut ctx)?;
    srem::expand_signed_remainders(&mut ctx)?;
    upcastcmp::narrow_upcast_compares(&mut ctx)?;
    if caps.undef_as_null {
        undef::define_undefs(&mut ctx);
    }
    dynamic::lower_dynamic_indexing(&mut ctx)?;
    ptrarith::lower_ptr_arith(&mut ctx)?;
    access::sink_private_access_chains(&mut ctx)?;
    scalarphi::scalarize_vector_phis(&mut ctx)?;
    finish::finish(&mut ctx, caps)?;
    Ok(Lowered {
        words: ctx.module.assemble(),
        static_local_mem_bytes: sizes.static_local_mem_bytes,
        private_mem_bytes: sizes.private_mem_bytes,
        printf,
    })
}

/// The inline samplers of lowered kernel `words` with `args` arguments: (binding,
/// normalized, addressing mode as the SPIR-V enumerant, linear) (see `sampled`).
pub(crate) fn inline_samplers(words: &[u32], args: u32) -> Vec<(u32, bool, u32, bool)> {
    sampled::inline_sampler_bindings(words, args)
}

/// The table value of a sampler argument of state (`normalized`, `addressing` as the SPIR-V
/// enumerant) (see `sampled`).
pub(crate) fn sampler_entry(normalized: bool, addressing: u32) -> u32 {
    sampled::sampler_entry(normalized, addressing)
}

/// The persistent variant of a lowered kernel module (see [`persistent`]).
///
/// # Errors
/// A message when `words` is not a module this crate lowered.
pub(crate) fn persistent_variant(words: &[u32]) -> Result<Vec<u32>, String> {
    let module =
        crate::compiler::spv::load(words).map_err(|e| format!("cannot parse SPIR-V: {e}"))?;
    let mut ctx = ctx::Ctx::new(module);
    persistent::make_persistent(&mut ctx)?;
    Ok(ctx.module.assemble())
}

/// The loop-limit guard variant of a lowered kernel module (see [`loopguard`]); the module
/// itself when it has no loop.
///
/// # Errors
/// A message when `words` is not a module this crate lowered.
pub(crate) fn loop_guard_variant(words: &[u32]) -> Result<Vec<u32>, String> {
    let module =
        crate::compiler::spv::load(words).map_err(|e| format!("cannot parse SPIR-V: {e}"))?;
    let mut ctx = ctx::Ctx::new(module);
    loopguard::guard_loops(&mut ctx)?;
    Ok(ctx.module.assemble())
}

/// The bounds-check variant of a lowered kernel module (see [`boundscheck`]) checking against
/// `ranges` entries of the launch's range table.
///
/// # Errors
/// A message when `words` is not a module this crate lowered.
pub(crate) fn bounds_check_variant(words: &[u32], ranges: u32) -> Result<Vec<u32>, String> {
    let module =
        crate::compiler::spv::load(words).map_err(|e| format!("cannot parse SPIR-V: {e}"))?;
    let mut ctx = ctx::Ctx::new(module);
    boundscheck::check_bounds(&mut ctx, ranges)?;
    Ok(ctx.module.assemble())
}

/// Header offsets of the bounds-check variant: flag, bad address, table offset, sink offset.
pub(crate) const BOUNDS_OFFSETS: [u64; 4] = [
    boundscheck::FLAG,
    boundscheck::BAD_ADDRESS,
    boundscheck::TABLE_OFFSET,
    boundscheck::SINK_OFFSET,
];

/// Offset of the `loop_limit_hit` flag (`u32`) in the launch header, bytes.
pub(crate) const LOOP_FLAG_OFFSET: u64 = loopguard::LOOP_FLAG;
