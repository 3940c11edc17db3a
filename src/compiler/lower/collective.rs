//! The scratch arrays of the work-group collective functions. vkcl's prelude writes
//! `work_group_reduce_add` and the others (OpenCL C 3.0 section 6.15.16) with `__local` memory
//! and barriers, one slot per work-item; OpenCL C cannot declare `__local` memory outside a
//! kernel's outermost scope, so the prelude calls `__vkcl_wg_scratch32()` /
//! `__vkcl_wg_scratch64()` (declared, never defined) for a pointer to its slots. Here each
//! kernel that calls one gets a `Workgroup` array of `max_work_group_size` elements of the
//! pointee type, and the calls become pointers to its first element, in the form llvm-spirv
//! gives a kernel's own `__local` arrays (`OpInBoundsPtrAccessChain %array 0 i`).

use std::collections::HashMap;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{BuiltIn, Capability, GroupOperation, Op, Scope, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::caps::SubgroupOps;
use crate::compiler::spv::{id_operand, inst, name_of};

/// Name prefix of the prelude's scratch functions.
const SCRATCH: &str = "__vkcl_wg_scratch";

/// Whether function `f` of `module` is one of the prelude's scratch functions.
pub(crate) fn is_scratch(module: &Module, f: Word) -> bool {
    name_of(module, f).is_some_and(|n| n.starts_with(SCRATCH))
}

/// Replaces the calls of the scratch functions in the kernel body by pointers into one
/// `Workgroup` array per function, of `max_work_group_size` elements.
///
/// # Errors
/// A call whose result is not a `Workgroup` pointer.
pub(crate) fn scratch_arrays(ctx: &mut Ctx, max_work_group_size: u32) -> Result<(), String> {
    let calls: Vec<(Word, Word, Word)> = ctx
        .module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .filter(|i| i.class.opcode == Op::FunctionCall)
        .filter_map(|i| {
            let f = id_operand(i, 0)?;
            is_scratch(&ctx.module, f).then_some((f, i.result_id?, i.result_type?))
        })
        .collect();
    if calls.is_empty() {
        return Ok(());
    }
    let zero = ctx.c_u64(0);
    // One array per scratch function; each call's result -> the array.
    let mut arrays: HashMap<Word, Word> = HashMap::new();
    let mut call_array: HashMap<Word, Word> = HashMap::new();
    for &(f, result, ty) in &calls {
        let array = match arrays.get(&f) {
            Some(a) => *a,
            None => {
                let (sc, elem) = ctx
                    .ptr_info(ty)
                    .filter(|(sc, _)| *sc == StorageClass::Workgroup)
                    .ok_or("work-group scratch: not a __local pointer")?;
                let len = ctx.c_u32(max_work_group_size.max(1));
                let aty = ctx.global(
                    Op::TypeArray,
                    None,
                    vec![Operand::IdRef(elem), Operand::IdRef(len)],
                );
                let pty = ctx.t_ptr(sc, aty);
                // Not `ctx.global`: that would merge it with a kernel's own array of this type.
                let var = ctx.id();
                ctx.module.types_global_values.push(inst(
                    Op::Variable,
                    Some(pty),
                    Some(var),
                    vec![Operand::StorageClass(sc)],
                ));
                arrays.insert(f, var);
                var
            }
        };
        call_array.insert(result, array);
    }
    for i in ctx
        .module
        .functions
        .iter_mut()
        .flat_map(|f| f.blocks.iter_mut())
        .flat_map(|b| b.instructions.iter_mut())
    {
        // The call -> &array[0].
        if let Some(&array) = i.result_id.and_then(|r| call_array.get(&r)) {
            if i.class.opcode == Op::FunctionCall {
                *i = inst(
                    Op::InBoundsPtrAccessChain,
                    i.result_type,
                    i.result_id,
                    vec![
                        Operand::IdRef(array),
                        Operand::IdRef(zero),
                        Operand::IdRef(zero),
                    ],
                );
                continue;
            }
        }
        // &call[k] -> &array[k] (the form of a kernel's own __local arrays).
        if matches!(
            i.class.opcode,
            Op::InBoundsPtrAccessChain | Op::PtrAccessChain
        ) && i.operands.len() == 2
        {
            if let Some(&array) = id_operand(i, 0).and_then(|b| call_array.get(&b)) {
                let k = i.operands[1].clone();
                *i = inst(
                    Op::InBoundsPtrAccessChain,
                    i.result_type,
                    i.result_id,
                    vec![Operand::IdRef(array), Operand::IdRef(zero), k],
                );
            }
        }
    }
    Ok(())
}

/// Whether `id` is defined by a constant instruction (`OpConstant`, `OpSpecConstant`,
/// `OpSpecConstantOp`): SPIR-V's rule for a clustered reduction's `ClusterSize`, and for the
/// `Id` of `OpGroupNonUniformBroadcast` before SPIR-V 1.5.
fn is_constant(defs: &crate::compiler::spv::Defs, id: Word) -> bool {
    defs.get(id).is_some_and(|d| {
        matches!(
            d.class.opcode,
            Op::Constant | Op::SpecConstant | Op::SpecConstantOp
        )
    })
}

/// Sub-group functions (cl_khr_subgroups): llvm-spirv's `OpGroup*` of `Subgroup` scope ->
/// Vulkan's `OpGroupNonUniform*` (same operands; `sub_group_broadcast` as a shuffle, whose
/// lane id may be any value, with a 32-bit id). The cl_khr_subgroup_* built-ins arrive as
/// `OpGroupNonUniform*` already and stay, but for `sub_group_rotate` and
/// `sub_group_clustered_rotate` (`OpGroupNonUniformRotateKHR`): OpenCL rotates modulo the
/// maximum sub-group size, which vkcl reports as the work-group's size in a work-group
/// smaller than a Vulkan subgroup, where Vulkan's rotate (`VK_KHR_shader_subgroup_rotate`)
/// works modulo `SubgroupSize`; both become shuffles from the lane the OpenCL extension
/// names, `(id + delta) % get_max_sub_group_size()` and, in clusters of `c`,
/// `(id & ~(c - 1)) | ((id + delta) & (c - 1))` (`delta` unsigned, as SPIR-V reads it).
///
/// `sub_group_non_uniform_broadcast` (`OpGroupNonUniformBroadcast`) with an id that is not a
/// constant becomes a shuffle from that lane where `caps` has shuffles: lavapipe (Mesa 25.0)
/// reads the id of a dynamic broadcast from one lane whether or not that lane is active, so in
/// a branch that lane 0 skips the active work-items got the value of the lane that lane 0's id
/// named (CTS subgroups `sub_group_non_uniform_broadcast`). The id is the same in every
/// active work-item and names an active one (cl_khr_subgroup_ballot leaves anything else
/// undefined), so the shuffle's result is the broadcast's.
///
/// # Errors
/// A group instruction of another scope (the work-group functions are the prelude's).
pub(crate) fn subgroup_ops(ctx: &mut Ctx, caps: &SubgroupOps) -> Result<(), String> {
    let types = ctx.value_types();
    let u32t = ctx.t_int(32);
    let subgroup = Scope::Subgroup as u64;
    // The OpenCL built-in variables the rotations read (lowered by `entry`).
    let rotates = ctx
        .module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .any(|i| i.class.opcode == Op::GroupNonUniformRotateKHR);
    let (lid_var, max_var, one) = if rotates {
        let pty = ctx.t_ptr(StorageClass::Input, u32t);
        let var = |ctx: &mut Ctx, b: BuiltIn| {
            let v = ctx.id();
            ctx.module.types_global_values.push(inst(
                Op::Variable,
                Some(pty),
                Some(v),
                vec![Operand::StorageClass(StorageClass::Input)],
            ));
            ctx.decorate(
                v,
                rspirv::spirv::Decoration::BuiltIn,
                vec![Operand::BuiltIn(b)],
            );
            v
        };
        let lid = var(ctx, BuiltIn::SubgroupLocalInvocationId);
        let max = var(ctx, BuiltIn::SubgroupMaxSize);
        (lid, max, ctx.c_u32(1))
    } else {
        (0, 0, 0)
    };
    let defs = crate::compiler::spv::Defs::new(&ctx.module);
    // Conversions get placeholder ids (u32::MAX - k), renumbered below.
    let mut converted: Word = 0;
    for b in ctx
        .module
        .functions
        .iter_mut()
        .flat_map(|f| f.blocks.iter_mut())
    {
        let mut out = Vec::with_capacity(b.instructions.len());
        for mut i in std::mem::take(&mut b.instructions) {
            if i.class.opcode == Op::GroupNonUniformRotateKHR {
                // [scope, value, delta, (cluster size)] -> [scope, value, lane].
                let mut fresh = || {
                    converted += 1;
                    u32::MAX - (converted - 1)
                };
                let mut op = |out: &mut Vec<Instruction>, o: Op, args: Vec<Word>| {
                    let r = fresh();
                    out.push(inst(
                        o,
                        Some(u32t),
                        Some(r),
                        args.into_iter().map(Operand::IdRef).collect(),
                    ));
                    r
                };
                let delta = id_operand(&i, 2).ok_or("rotate without a delta")?;
                let narrow = types
                    .get(&delta)
                    .and_then(|t| defs.get(*t))
                    .and_then(|d| crate::compiler::spv::lit_operand(d, 0))
                    != Some(32);
                let delta = if narrow {
                    op(&mut out, Op::UConvert, vec![delta])
                } else {
                    delta
                };
                let lid = op(&mut out, Op::Load, vec![lid_var]);
                let sum = op(&mut out, Op::IAdd, vec![lid, delta]);
                let lane = match id_operand(&i, 3) {
                    None => {
                        let max = op(&mut out, Op::Load, vec![max_var]);
                        op(&mut out, Op::UMod, vec![sum, max])
                    }
                    Some(c) => {
                        let m = op(&mut out, Op::ISub, vec![c, one]);
                        let low = op(&mut out, Op::BitwiseAnd, vec![sum, m]);
                        let not_m = op(&mut out, Op::Not, vec![m]);
                        let base = op(&mut out, Op::BitwiseAnd, vec![lid, not_m]);
                        op(&mut out, Op::BitwiseOr, vec![base, low])
                    }
                };
                i.operands.truncate(2);
                i.operands.push(Operand::IdRef(lane));
                out.push(inst(
                    Op::GroupNonUniformShuffle,
                    i.result_type,
                    i.result_id,
                    i.operands,
                ));
                continue;
            }
            if i.class.opcode == Op::GroupNonUniformBroadcast
                && caps.shuffle
                && !id_operand(&i, 2).is_some_and(|id| is_constant(&defs, id))
            {
                // [scope, value, id]: the same operands.
                out.push(inst(
                    Op::GroupNonUniformShuffle,
                    i.result_type,
                    i.result_id,
                    i.operands,
                ));
                continue;
            }
            let to = match i.class.opcode {
                Op::GroupAll => Op::GroupNonUniformAll,
                Op::GroupAny => Op::GroupNonUniformAny,
                Op::GroupBroadcast => Op::GroupNonUniformShuffle,
                Op::GroupIAdd => Op::GroupNonUniformIAdd,
                Op::GroupFAdd => Op::GroupNonUniformFAdd,
                Op::GroupSMin => Op::GroupNonUniformSMin,
                Op::GroupUMin => Op::GroupNonUniformUMin,
                Op::GroupFMin => Op::GroupNonUniformFMin,
                Op::GroupSMax => Op::GroupNonUniformSMax,
                Op::GroupUMax => Op::GroupNonUniformUMax,
                Op::GroupFMax => Op::GroupNonUniformFMax,
                _ => {
                    out.push(i);
                    continue;
                }
            };
            let scope = id_operand(&i, 0).and_then(|s| defs.const_u64(s));
            if scope != Some(subgroup) {
                return Err(format!(
                    "{:?} of a scope other than sub-group is not supported",
                    i.class.opcode
                ));
            }
            if to == Op::GroupNonUniformShuffle {
                // [scope, value, local id (one, or x y z for 2-D/3-D: sub-groups are 1-D)].
                let lid = id_operand(&i, 2).ok_or("broadcast without an id")?;
                let wide = types
                    .get(&lid)
                    .and_then(|t| defs.get(*t))
                    .and_then(|d| crate::compiler::spv::lit_operand(d, 0))
                    != Some(32);
                let lid = if wide {
                    let nid = u32::MAX - converted;
                    converted += 1;
                    out.push(inst(
                        Op::UConvert,
                        Some(u32t),
                        Some(nid),
                        vec![Operand::IdRef(lid)],
                    ));
                    nid
                } else {
                    lid
                };
                i.operands.truncate(2);
                i.operands.push(Operand::IdRef(lid));
            }
            out.push(inst(to, i.result_type, i.result_id, i.operands));
        }
        b.instructions = out;
    }
    // Give the conversions real ids.
    if converted > 0 {
        let mut map = HashMap::new();
        for k in 0..converted {
            map.insert(u32::MAX - k, ctx.id());
        }
        for i in ctx
            .module
            .functions
            .iter_mut()
            .flat_map(|f| f.blocks.iter_mut())
            .flat_map(|b| b.instructions.iter_mut())
        {
            if let Some(r) = i.result_id.and_then(|r| map.get(&r)) {
                i.result_id = Some(*r);
            }
            crate::compiler::spv::for_each_used_id_mut(i, |w| {
                if let Some(n) = map.get(w) {
                    *w = *n;
                }
            });
        }
    }
    Ok(())
}

/// The Vulkan subgroup capability of one instruction (`OpGroupNonUniform*`, lowered by
/// [`subgroup_ops`] or left as llvm-spirv wrote it for the cl_khr_subgroup_* built-ins) and
/// whether `caps` offers it (Vulkan 1.2 section "Subgroup Operations": each capability needs
/// its `VK_SUBGROUP_FEATURE_*_BIT` in compute). `None`: not a subgroup instruction.
fn subgroup_capability(i: &Instruction, caps: &SubgroupOps) -> Option<(Capability, bool)> {
    use Capability as C;
    let clustered = i
        .operands
        .get(1)
        .is_some_and(|o| *o == Operand::GroupOperation(GroupOperation::ClusteredReduce));
    Some(match i.class.opcode {
        Op::GroupNonUniformElect => (C::GroupNonUniform, true),
        Op::GroupNonUniformAll | Op::GroupNonUniformAny | Op::GroupNonUniformAllEqual => {
            (C::GroupNonUniformVote, caps.vote)
        }
        Op::GroupNonUniformBroadcast
        | Op::GroupNonUniformBroadcastFirst
        | Op::GroupNonUniformBallot
        | Op::GroupNonUniformInverseBallot
        | Op::GroupNonUniformBallotBitExtract
        | Op::GroupNonUniformBallotBitCount
        | Op::GroupNonUniformBallotFindLSB
        | Op::GroupNonUniformBallotFindMSB => (C::GroupNonUniformBallot, caps.ballot),
        Op::GroupNonUniformShuffle | Op::GroupNonUniformShuffleXor => {
            (C::GroupNonUniformShuffle, caps.shuffle)
        }
        Op::GroupNonUniformShuffleUp | Op::GroupNonUniformShuffleDown => {
            (C::GroupNonUniformShuffleRelative, caps.shuffle_relative)
        }
        Op::GroupNonUniformIAdd
        | Op::GroupNonUniformFAdd
        | Op::GroupNonUniformIMul
        | Op::GroupNonUniformFMul
        | Op::GroupNonUniformSMin
        | Op::GroupNonUniformUMin
        | Op::GroupNonUniformFMin
        | Op::GroupNonUniformSMax
        | Op::GroupNonUniformUMax
        | Op::GroupNonUniformFMax
        | Op::GroupNonUniformBitwiseAnd
        | Op::GroupNonUniformBitwiseOr
        | Op::GroupNonUniformBitwiseXor
        | Op::GroupNonUniformLogicalAnd
        | Op::GroupNonUniformLogicalOr
        | Op::GroupNonUniformLogicalXor => {
            if clustered {
                (C::GroupNonUniformClustered, caps.clustered)
            } else {
                (C::GroupNonUniformArithmetic, caps.arithmetic)
            }
        }
        _ => return None,
    })
}

/// The capabilities the kernel's subgroup instructions and built-ins need
/// (`GroupNonUniform` and one per kind).
///
/// # Errors
/// An instruction or built-in whose Vulkan feature `caps` lacks (the device does not report
/// the cl_khr_subgroup_* extension that offers it: clang-15 then leaves its built-ins
/// undeclared, so this is where SPIR-V input, `clCreateProgramWithIL`, using them fails);
/// a clustered reduction whose `ClusterSize` is not a constant (SPIR-V requires one: the
/// Vulkan driver would refuse the pipeline at the first launch instead).
pub(crate) fn subgroup_capabilities(
    ctx: &Ctx,
    caps: &SubgroupOps,
) -> Result<Vec<Capability>, String> {
    let defs = crate::compiler::spv::Defs::new(&ctx.module);
    let mut c = Vec::new();
    for a in &ctx.module.annotations {
        match a.operands.get(2) {
            Some(Operand::BuiltIn(
                BuiltIn::SubgroupSize
                | BuiltIn::SubgroupId
                | BuiltIn::NumSubgroups
                | BuiltIn::SubgroupLocalInvocationId,
            )) => c.push(Capability::GroupNonUniform),
            Some(Operand::BuiltIn(
                b @ (BuiltIn::SubgroupEqMask
                | BuiltIn::SubgroupGeMask
                | BuiltIn::SubgroupGtMask
                | BuiltIn::SubgroupLeMask
                | BuiltIn::SubgroupLtMask),
            )) => {
                if !caps.ballot {
                    return Err(format!(
                        "built-in {b:?} needs Vulkan subgroup ballot operations, which this \
                         device lacks (no cl_khr_subgroup_ballot)"
                    ));
                }
                c.push(Capability::GroupNonUniform);
                c.push(Capability::GroupNonUniformBallot);
            }
            _ => {}
        }
    }
    for i in ctx
        .module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
    {
        let Some((cap, offered)) = subgroup_capability(i, caps) else {
            continue;
        };
        if !offered {
            return Err(format!(
                "{:?} needs the Vulkan subgroup capability {cap:?}, which this device lacks \
                 in compute shaders (the cl_khr_subgroup_* extension of this built-in is not \
                 reported)",
                i.class.opcode
            ));
        }
        if cap == Capability::GroupNonUniformClustered
            && !id_operand(i, 3).is_some_and(|n| is_constant(&defs, n))
        {
            return Err(format!(
                "{:?}: the cluster size of a clustered reduction must be a constant",
                i.class.opcode
            ));
        }
        c.push(Capability::GroupNonUniform);
        c.push(cap);
    }
    Ok(c)
}
