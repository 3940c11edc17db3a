//! Types: `__global`/`__constant` pointers become `PhysicalStorageBuffer` pointers; every
//! struct gets `Offset`s, every array an `ArrayStride` and every physical pointer type an
//! `ArrayStride` (for `OpPtrAccessChain`), all by OpenCL C layout rules. Program-scope
//! `__constant` data becomes `Private` (it is read-only, so a per-invocation copy is exact), as
//! do module-scope `Function` variables (LLVM's private globals, such as switch tables).
//! `__local` variables lose the (undefined) initializer llvm-spirv may give them.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::layout::Layout;
use crate::compiler::spv::{id_operand, inst, Defs};

fn is_physical(sc: StorageClass) -> bool {
    matches!(
        sc,
        StorageClass::CrossWorkgroup | StorageClass::UniformConstant | StorageClass::Generic
    )
}

/// Rewrites storage classes and adds layout decorations. Members of packed structs get their
/// packed offsets even where those are not aligned (a `float4` at byte 1): loads and stores of
/// such members carry the `Aligned` operand of their LLVM alignment (1), which Vulkan allows
/// on physical pointers.
///
/// # Errors
/// None at present (kept for layout failures).
pub(crate) fn lower_types(ctx: &mut Ctx) -> Result<(), String> {
    // Program-scope constant data -> Private variables.
    let vars: Vec<(usize, Word)> = ctx
        .module
        .types_global_values
        .iter()
        .enumerate()
        .filter(|(_, i)| i.class.opcode == Op::Variable)
        .filter(|(_, i)| {
            // A module-scope Function variable is a private-address-space global of LLVM's
            // (llvm-spirv emits e.g. switch lookup tables so; invalid SPIR-V): Private too.
            // CrossWorkgroup variables are the program's __global variables: `entry` turns
            // them into addresses in the program's block (compiler::globals).
            matches!(i.operands.first(), Some(Operand::StorageClass(sc))
                if (is_physical(*sc) && *sc != StorageClass::CrossWorkgroup)
                    || *sc == StorageClass::Function)
        })
        .filter_map(|(k, i)| i.result_type.map(|t| (k, t)))
        .collect();
    for (k, ty) in vars {
        let pointee = ctx
            .ptr_info(ty)
            .map(|p| p.1)
            .ok_or("variable of non-pointer type")?;
        let pty = ctx.t_ptr(StorageClass::Private, pointee);
        let v = &mut ctx.module.types_global_values[k];
        v.result_type = Some(pty);
        v.operands[0] = Operand::StorageClass(StorageClass::Private);
    }
    drop_local_initializers(ctx);
    for i in ctx.module.types_global_values.iter_mut() {
        // The storage class is operand 0 of OpTypePointer, operand 1 of OpTypeForwardPointer
        // (which llvm-spirv emits for a struct holding a pointer to itself).
        let at = match i.class.opcode {
            Op::TypePointer => 0,
            Op::TypeForwardPointer => 1,
            _ => continue,
        };
        if let Some(Operand::StorageClass(sc)) = i.operands.get(at) {
            if is_physical(*sc) {
                i.operands[at] = Operand::StorageClass(StorageClass::PhysicalStorageBuffer);
            }
        }
    }
    dedup_types(ctx);
    add_layout(ctx)
}

/// Removes the initializer of every `Workgroup` variable. OpenCL C's `__local` variables
/// cannot be initialized (OpenCL C 3.0, "Local Address Space"; clang refuses an
/// initializer), so the only one they have is LLVM's `undef`, which llvm-spirv writes as no
/// initializer, except for a struct: an `OpConstantComposite` of `OpUndef`s
/// (`__local testStruct test;`, vectors vec_align_struct). Vulkan allows a
/// Workgroup variable only an `OpConstantNull` initializer, and that only with a feature
/// (VUID-StandaloneSpirv-OpVariable-04734).
fn drop_local_initializers(ctx: &mut Ctx) {
    for v in ctx.module.types_global_values.iter_mut() {
        if v.class.opcode == Op::Variable
            && v.operands.first() == Some(&Operand::StorageClass(StorageClass::Workgroup))
        {
            v.operands.truncate(1);
        }
    }
}

/// Merges identical non-struct type declarations (pointer types that now coincide, and the
/// function/array types built on them).
pub(crate) fn dedup_types(ctx: &mut Ctx) {
    loop {
        let mut seen: HashMap<(Op, Vec<Operand>), Word> = HashMap::new();
        let mut map: HashMap<Word, Word> = HashMap::new();
        for i in &ctx.module.types_global_values {
            let op = i.class.opcode;
            let is_type = matches!(
                op,
                Op::TypeVoid
                    | Op::TypeBool
                    | Op::TypeInt
                    | Op::TypeFloat
                    | Op::TypeVector
                    | Op::TypePointer
                    | Op::TypeFunction
                    | Op::TypeArray
            );
            let Some(id) = i.result_id else { continue };
            if !is_type {
                continue;
            }
            match seen.get(&(op, i.operands.clone())) {
                Some(first) => {
                    map.insert(id, *first);
                }
                None => {
                    seen.insert((op, i.operands.clone()), id);
                }
            }
        }
        if map.is_empty() {
            return;
        }
        ctx.module
            .types_global_values
            .retain(|i| !i.result_id.is_some_and(|id| map.contains_key(&id)));
        ctx.substitute(&map);
    }
}

fn has_deco(
    annotations: &[Instruction],
    target: Word,
    member: Option<u32>,
    deco: Decoration,
) -> bool {
    annotations.iter().any(|a| match member {
        None => {
            a.class.opcode == Op::Decorate
                && id_operand(a, 0) == Some(target)
                && a.operands.get(1) == Some(&Operand::Decoration(deco))
        }
        Some(m) => {
            a.class.opcode == Op::MemberDecorate
                && id_operand(a, 0) == Some(target)
                && a.operands.get(1) == Some(&Operand::LiteralBit32(m))
                && a.operands.get(2) == Some(&Operand::Decoration(deco))
        }
    })
}

/// Adds `Offset`, `ArrayStride` decorations (OpenCL C layout) where missing.
pub(crate) fn add_layout(ctx: &mut Ctx) -> Result<(), String> {
    let defs = Defs::new(&ctx.module);
    let layout = Layout::new(&ctx.module, &defs);
    let mut new = Vec::new();
    for i in &ctx.module.types_global_values {
        let Some(id) = i.result_id else { continue };
        match i.class.opcode {
            Op::TypeStruct => {
                let Ok(offsets) = layout.member_offsets(id) else {
                    continue;
                };
                for (m, (off, _op)) in offsets.iter().zip(&i.operands).enumerate() {
                    if !has_deco(
                        &ctx.module.annotations,
                        id,
                        Some(m as u32),
                        Decoration::Offset,
                    ) {
                        new.push(inst(
                            Op::MemberDecorate,
                            None,
                            None,
                            vec![
                                Operand::IdRef(id),
                                Operand::LiteralBit32(m as u32),
                                Operand::Decoration(Decoration::Offset),
                                Operand::LiteralBit32(*off as u32),
                            ],
                        ));
                    }
                }
            }
            Op::TypeArray => {
                let Some(elem) = id_operand(i, 0) else {
                    continue;
                };
                let Ok(sa) = layout.size_align(elem) else {
                    continue;
                };
                let stride = sa.size.div_ceil(sa.align.max(1)) * sa.align.max(1);
                if !has_deco(&ctx.module.annotations, id, None, Decoration::ArrayStride) {
                    new.push(stride_deco(id, stride));
                }
            }
            Op::TypePointer => {
                if i.operands.first()
                    != Some(&Operand::StorageClass(StorageClass::PhysicalStorageBuffer))
                {
                    continue;
                }
                let Some(pointee) = id_operand(i, 1) else {
                    continue;
                };
                let Ok(sa) = layout.size_align(pointee) else {
                    continue;
                };
                let stride = sa.size.div_ceil(sa.align.max(1)) * sa.align.max(1);
                if stride > 0
                    && !has_deco(&ctx.module.annotations, id, None, Decoration::ArrayStride)
                {
                    new.push(stride_deco(id, stride));
                }
            }
            _ => {}
        }
    }
    ctx.module.annotations.extend(new);
    Ok(())
}

fn stride_deco(id: Word, stride: u64) -> Instruction {
    inst(
        Op::Decorate,
        None,
        None,
        vec![
            Operand::IdRef(id),
            Operand::Decoration(Decoration::ArrayStride),
            Operand::LiteralBit32(stride as u32),
        ],
    )
}
