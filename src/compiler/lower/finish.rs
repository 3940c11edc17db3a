//! Final clean-up: dead globals, decorations Vulkan does not know, capabilities derived from
//! the types in use, the memory model, the entry point interface, declaration order, version.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{AddressingModel, Capability, Decoration, MemoryModel, Op, StorageClass, Word};

use super::ctx::Ctx;
use super::types::add_layout;
use crate::compiler::caps::DeviceCaps;
use crate::compiler::spv::{id_operand, inst, lit_operand, used_ids};

const KEEP_DECORATIONS: &[Decoration] = &[
    Decoration::BuiltIn,
    Decoration::SpecId,
    Decoration::Offset,
    Decoration::ArrayStride,
    Decoration::Block,
    Decoration::NoContraction,
    Decoration::NoSignedWrap,
    Decoration::NoUnsignedWrap,
    Decoration::AliasedPointer,
    Decoration::RestrictPointer,
    Decoration::DescriptorSet,
    Decoration::Binding,
];

/// Finishes the module for Vulkan 1.2.
///
/// # Errors
/// When the kernel needs a feature the device lacks (`caps`), or types Vulkan cannot express.
pub(crate) fn finish(ctx: &mut Ctx, caps: &DeviceCaps) -> Result<(), String> {
    strip_foreign_ext_inst(ctx);
    remove_dead_globals(ctx);
    add_layout(ctx)?;
    clean_annotations(ctx);
    aliased_pointer_variables(ctx);
    capabilities(ctx, caps)?;
    ctx.module.extensions.clear();
    ctx.module.memory_model = Some(inst(
        Op::MemoryModel,
        None,
        None,
        vec![
            Operand::AddressingModel(AddressingModel::PhysicalStorageBuffer64),
            Operand::MemoryModel(MemoryModel::GLSL450),
        ],
    ));
    interface(ctx);
    sort_globals(ctx);
    let bound = ctx.bound();
    if let Some(h) = ctx.module.header.as_mut() {
        h.version = 0x0001_0500;
        h.bound = bound;
    }
    Ok(())
}

/// Drops debug-info extended instruction sets (only GLSL.std.450 remains).
fn strip_foreign_ext_inst(ctx: &mut Ctx) {
    let foreign: HashSet<Word> = ctx
        .module
        .ext_inst_imports
        .iter()
        .filter(|i| !matches!(i.operands.first(), Some(Operand::LiteralString(s)) if s == "GLSL.std.450"))
        .filter_map(|i| i.result_id)
        .collect();
    if foreign.is_empty() {
        return;
    }
    ctx.module
        .ext_inst_imports
        .retain(|i| !i.result_id.is_some_and(|r| foreign.contains(&r)));
    for b in &mut ctx.module.functions[0].blocks {
        b.instructions.retain(|i| {
            !(i.class.opcode == Op::ExtInst
                && id_operand(i, 0).is_some_and(|s| foreign.contains(&s)))
        });
    }
    ctx.module.types_global_values.retain(|i| {
        !(i.class.opcode == Op::ExtInst && id_operand(i, 0).is_some_and(|s| foreign.contains(&s)))
    });
}

fn remove_dead_globals(ctx: &mut Ctx) {
    let m = &ctx.module;
    let mut live: HashSet<Word> = HashSet::new();
    let mut work: Vec<Word> = Vec::new();
    for f in &m.functions {
        for i in f
            .def
            .iter()
            .chain(f.blocks.iter().flat_map(|b| b.instructions.iter()))
        {
            work.extend(used_ids(i));
        }
    }
    for i in m.entry_points.iter().chain(m.execution_modes.iter()) {
        work.extend(used_ids(i));
    }
    // The WorkgroupSize composite and spec constants stay even when unused: the runtime
    // specializes them.
    for a in &m.annotations {
        if matches!(
            a.operands.get(1),
            Some(Operand::Decoration(
                Decoration::BuiltIn | Decoration::SpecId
            ))
        ) && matches!(
            a.operands.get(2),
            Some(Operand::BuiltIn(rspirv::spirv::BuiltIn::WorkgroupSize))
                | Some(Operand::LiteralBit32(0..=2))
        ) {
            if let Some(t) = id_operand(a, 0) {
                work.push(t);
            }
        }
    }
    let index: HashMap<Word, &Instruction> = m
        .types_global_values
        .iter()
        .filter_map(|i| i.result_id.map(|r| (r, i)))
        .collect();
    while let Some(id) = work.pop() {
        if !live.insert(id) {
            continue;
        }
        if let Some(i) = index.get(&id) {
            work.extend(used_ids(i));
        }
    }
    // A forward declaration goes with the pointer type it declares.
    ctx.module
        .types_global_values
        .retain(|i| match i.result_id {
            Some(r) => live.contains(&r),
            None if i.class.opcode == Op::TypeForwardPointer => {
                id_operand(i, 0).is_some_and(|p| live.contains(&p))
            }
            None => true,
        });
}

fn defined_ids(ctx: &Ctx) -> HashSet<Word> {
    let m = &ctx.module;
    let mut s: HashSet<Word> = m
        .types_global_values
        .iter()
        .chain(m.ext_inst_imports.iter())
        .chain(m.debug_string_source.iter())
        .filter_map(|i| i.result_id)
        .collect();
    for f in &m.functions {
        for i in f.def.iter().chain(
            f.blocks
                .iter()
                .flat_map(|b| b.label.iter().chain(b.instructions.iter())),
        ) {
            if let Some(r) = i.result_id {
                s.insert(r);
            }
        }
    }
    s
}

fn clean_annotations(ctx: &mut Ctx) {
    let defined = defined_ids(ctx);
    // `NoSignedWrap`/`NoUnsignedWrap` stay only on the instructions SPIR-V allows them on: a
    // pass that replaces an instruction by another under the same id (an 8-bit
    // `OpShiftLeftLogical` becoming an `OpUConvert` of a 32-bit shift, `narrowshift`) leaves
    // them on the new one, which spirv-val refuses (difftest seed 500639).
    let opcodes: HashMap<Word, Op> = ctx
        .module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .filter_map(|i| Some((i.result_id?, i.class.opcode)))
        .collect();
    let wrap_ok = |t: Word| {
        matches!(
            opcodes.get(&t),
            Some(Op::IAdd | Op::ISub | Op::IMul | Op::ShiftLeftLogical | Op::SNegate | Op::ExtInst)
        )
    };
    ctx.module.annotations.retain(|a| {
        let target = id_operand(a, 0);
        let target_ok = target.is_some_and(|t| defined.contains(&t));
        let deco = match a.class.opcode {
            Op::Decorate => a.operands.get(1),
            Op::MemberDecorate => a.operands.get(2),
            _ => None,
        };
        let wrap = matches!(
            deco,
            Some(Operand::Decoration(
                Decoration::NoSignedWrap | Decoration::NoUnsignedWrap
            ))
        );
        target_ok
            && (!wrap || target.is_some_and(wrap_ok))
            && matches!(deco, Some(Operand::Decoration(d)) if KEEP_DECORATIONS.contains(d))
    });
    let mut seen = HashSet::new();
    ctx.module.annotations.retain(|a| seen.insert(a.clone()));
    ctx.module
        .debug_names
        .retain(|n| id_operand(n, 0).is_some_and(|t| defined.contains(&t)));
}

/// Function variables that hold physical pointers need `AliasedPointer` in Vulkan.
fn aliased_pointer_variables(ctx: &mut Ctx) {
    let vars: Vec<Word> = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .chain(ctx.module.types_global_values.iter())
        .filter(|i| i.class.opcode == Op::Variable)
        .filter(|i| {
            i.result_type
                .and_then(|t| ctx.ptr_info(t))
                .and_then(|(_, p)| ctx.ptr_info(p))
                .is_some_and(|(sc, _)| sc == StorageClass::PhysicalStorageBuffer)
        })
        .filter_map(|i| i.result_id)
        .collect();
    for v in vars {
        ctx.decorate(v, Decoration::AliasedPointer, vec![]);
    }
}

/// Whether type `ty` contains a scalar of `width` bits (int if `int`, else float).
fn contains_scalar(ctx: &Ctx, ty: Word, pred: &dyn Fn(Op, u32) -> bool, depth: u32) -> bool {
    if depth > 16 {
        return false;
    }
    let Some(d) = ctx.def(ty) else { return false };
    match d.class.opcode {
        Op::TypeInt | Op::TypeFloat => pred(d.class.opcode, lit_operand(d, 0).unwrap_or(32)),
        Op::TypeVector | Op::TypeArray | Op::TypeRuntimeArray => {
            id_operand(d, 0).is_some_and(|e| contains_scalar(ctx, e, pred, depth + 1))
        }
        Op::TypeStruct => (0..d.operands.len())
            .filter_map(|k| id_operand(d, k))
            .any(|e| contains_scalar(ctx, e, pred, depth + 1)),
        _ => false,
    }
}

fn capabilities(ctx: &mut Ctx, caps: &DeviceCaps) -> Result<(), String> {
    let mut c = vec![
        Capability::Shader,
        Capability::PhysicalStorageBufferAddresses,
        Capability::Int64,
    ];
    let mut storage8 = false;
    let mut storage16 = false;
    for i in &ctx.module.types_global_values {
        match (i.class.opcode, lit_operand(i, 0)) {
            (Op::TypeInt, Some(8)) => c.push(Capability::Int8),
            (Op::TypeInt, Some(16)) => c.push(Capability::Int16),
            (Op::TypeFloat, Some(16)) => c.push(Capability::Float16),
            (Op::TypeFloat, Some(64)) => {
                if !caps.fp64 {
                    return Err("double is not supported by this device".into());
                }
                c.push(Capability::Float64)
            }
            (Op::TypeVector, _) if lit_operand(i, 1).is_some_and(|n| n > 4) => {
                return Err("internal error: a vector of 8 or 16 components was not split".into())
            }
            (Op::TypePointer, _)
                if i.operands.first()
                    == Some(&Operand::StorageClass(StorageClass::PhysicalStorageBuffer)) =>
            {
                if let Some(p) = id_operand(i, 1) {
                    storage8 |= contains_scalar(ctx, p, &|op, w| op == Op::TypeInt && w == 8, 0);
                    storage16 |= contains_scalar(ctx, p, &|_, w| w == 16, 0);
                }
            }
            _ => {}
        }
    }
    if storage8 {
        if !caps.int8_storage {
            return Err("8-bit types in global memory need storageBuffer8BitAccess".into());
        }
        c.push(Capability::StorageBuffer8BitAccess);
    }
    if storage16 {
        if !caps.int16_storage {
            return Err("16-bit types in global memory need storageBuffer16BitAccess".into());
        }
        c.push(Capability::StorageBuffer16BitAccess);
    }
    // 64-bit atomics: by the pointee, which `OpAtomicStore` (no result) needs too.
    let types = ctx.value_types();
    let atomic64 = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter(|i| format!("{:?}", i.class.opcode).starts_with("Atomic"))
        .any(|i| {
            let pointee = id_operand(i, 0)
                .and_then(|p| types.get(&p))
                .and_then(|t| ctx.ptr_info(*t))
                .map(|p| p.1);
            i.result_type.and_then(|t| ctx.scalar_width(t)) == Some(64)
                || pointee.and_then(|t| ctx.scalar_width(t)) == Some(64)
        });
    // Float atomics left on __local memory (see memory::float_atomic_as_int).
    let shared_float_atomic = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .filter(|i| format!("{:?}", i.class.opcode).starts_with("Atomic"))
        .filter_map(|i| id_operand(i, 0).and_then(|p| types.get(&p)).copied())
        .filter_map(|t| ctx.ptr_info(t))
        .any(|(sc, pointee)| {
            sc == StorageClass::Workgroup
                && ctx
                    .def(pointee)
                    .is_some_and(|d| d.class.opcode == Op::TypeFloat)
        });
    if shared_float_atomic && !caps.shared_float32_atomics {
        return Err("atomics on __local float need shaderSharedFloat32Atomics \
                    (VK_EXT_shader_atomic_float), which this device lacks"
            .into());
    }
    if atomic64 {
        if !caps.int64_atomics {
            return Err("64-bit atomics are not supported by this device".into());
        }
        c.push(Capability::Int64Atomics);
    }
    // Sub-group functions (lower/collective.rs) and built-ins (lower/entry.rs).
    c.extend(super::collective::subgroup_capabilities(
        ctx,
        &caps.subgroup_ops,
    )?);
    c.extend(super::image::image_capabilities(ctx));
    c.dedup();
    let mut seen = HashSet::new();
    ctx.module.capabilities = c
        .into_iter()
        .filter(|x| seen.insert(*x))
        .map(|x| inst(Op::Capability, None, None, vec![Operand::Capability(x)]))
        .collect();
    Ok(())
}

/// Lists every module-scope variable in the entry point (SPIR-V 1.4+ rule).
fn interface(ctx: &mut Ctx) {
    let vars: Vec<Word> = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
        .filter_map(|i| i.result_id)
        .collect();
    if let Some(ep) = ctx.module.entry_points.first_mut() {
        ep.operands.truncate(3);
        ep.operands.extend(vars.into_iter().map(Operand::IdRef));
    }
}

/// Orders types, constants and variables so that every definition precedes its uses. A
/// pointer type that a struct holds before the pointer can be declared (a struct pointing to
/// itself, such as a list node: the pointer's pointee is the struct) is forward-declared:
/// the `OpTypeForwardPointer`s go first (one per pointer type), and a struct's use of such a
/// pointer does not order it.
fn sort_globals(ctx: &mut Ctx) {
    let mut globals = std::mem::take(&mut ctx.module.types_global_values);
    let mut forward: Vec<Instruction> = Vec::new();
    let mut declared: HashSet<Word> = HashSet::new();
    globals.retain(|i| {
        if i.class.opcode != Op::TypeForwardPointer {
            return true;
        }
        if id_operand(i, 0).is_some_and(|p| declared.insert(p)) {
            forward.push(i.clone());
        }
        false
    });
    let index: HashMap<Word, usize> = globals
        .iter()
        .enumerate()
        .filter_map(|(k, i)| i.result_id.map(|r| (r, k)))
        .collect();
    let mut done = vec![false; globals.len()];
    let mut visiting = vec![false; globals.len()];
    let mut order = Vec::with_capacity(globals.len());
    for start in 0..globals.len() {
        let mut stack = vec![(start, false)];
        while let Some((k, expanded)) = stack.pop() {
            if done[k] {
                continue;
            }
            if expanded {
                done[k] = true;
                order.push(k);
                continue;
            }
            if visiting[k] {
                continue;
            }
            visiting[k] = true;
            stack.push((k, true));
            let is_struct = globals[k].class.opcode == Op::TypeStruct;
            for u in used_ids(&globals[k]) {
                if is_struct && declared.contains(&u) {
                    continue;
                }
                if let Some(&d) = index.get(&u) {
                    if !done[d] && d != k {
                        stack.push((d, false));
                    }
                }
            }
        }
    }
    let mut slots: Vec<Option<Instruction>> = globals.into_iter().map(Some).collect();
    forward.extend(order.into_iter().filter_map(|k| slots[k].take()));
    ctx.module.types_global_values = forward;
}

#[cfg(test)]
#[path = "finish_tests.rs"]
mod tests;
