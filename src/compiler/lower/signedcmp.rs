//! Signed relational comparisons on operands of signed integer types.
//!
//! OpenCL's SPIR-V (and so vkcl's Vulkan modules) declares every integer type with
//! signedness 0; signedness lives in the opcodes (`OpSLessThan`, ...). The SPIR-V that
//! GLSL compilers give Vulkan drivers declares `int` with signedness 1 instead. NVIDIA's
//! driver (580) ran no pass of `for (int i = -2; i < (x & 7); i += 2)` (vkcl-difftest seed
//! 400148, docs/difftest.md), as if the counter starting at 0xfffffffe were compared
//! unsigned, while both lavapipes ran it once. This pass gives each `OpSLessThan`,
//! `OpSLessThanEqual`, `OpSGreaterThan` and `OpSGreaterThanEqual` of integer scalars or
//! vectors operands of the signed type of the same width (an `OpBitcast` of each), which
//! changes no value: the comparison's opcode already says signed.
//!
//! Experimental: `VKCL_SIGNED_COMPARES=bitcast` turns it on while its effect on NVIDIA is
//! measured.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};
use std::collections::HashMap;

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// Experimental, with the pass: `VKCL_UNDEF_AS_NULL=1` turns every `OpUndef` of an integer,
/// float or boolean scalar or vector into `OpConstantNull` (an undefined value may be any).
pub(crate) fn undef_as_null(ctx: &mut Ctx) {
    if std::env::var("VKCL_UNDEF_AS_NULL").as_deref() != Ok("1") {
        return;
    }
    let numeric: Vec<bool> = ctx
        .module
        .types_global_values
        .iter()
        .map(|i| {
            i.class.opcode == Op::Undef
                && i.result_type.is_some_and(|t| {
                    let d = ctx.def(t);
                    let elem = match d.map(|d| (d.class.opcode, d.operands.first())) {
                        Some((Op::TypeVector, Some(Operand::IdRef(e)))) => ctx.def(*e),
                        _ => d,
                    };
                    elem.is_some_and(|e| {
                        matches!(e.class.opcode, Op::TypeInt | Op::TypeFloat | Op::TypeBool)
                    })
                })
        })
        .collect();
    for (i, n) in ctx.module.types_global_values.iter_mut().zip(numeric) {
        if n {
            *i = inst(Op::ConstantNull, i.result_type, i.result_id, vec![]);
        }
    }
}

/// Whether `VKCL_SIGNED_COMPARES=bitcast` asks for the pass.
pub(crate) fn requested() -> bool {
    std::env::var("VKCL_SIGNED_COMPARES").as_deref() == Ok("bitcast")
}

/// Rewrites the operands of every signed relational comparison of integers as bitcasts to
/// the signed integer type of their width (see the module doc).
///
/// # Errors
/// None today; the signature matches the other passes.
pub(crate) fn compare_signed_types(ctx: &mut Ctx) -> Result<(), String> {
    let types = ctx.value_types();
    // The (unsigned) integer type of a value, or of a global constant.
    let type_of = |ctx: &Ctx, id: Word| {
        types
            .get(&id)
            .copied()
            .or_else(|| ctx.def(id).and_then(|d| d.result_type))
    };
    // Each comparison to rewrite (function, block, instruction, operands) and the shapes
    // (width, components, vector) of the unsigned types met.
    let mut shapes: HashMap<Word, (u32, u32, bool)> = HashMap::new();
    let mut plan: Vec<(usize, usize, usize, [Word; 2])> = Vec::new();
    for (fi, f) in ctx.module.functions.iter().enumerate() {
        for (bi, b) in f.blocks.iter().enumerate() {
            for (ii, i) in b.instructions.iter().enumerate() {
                if !matches!(
                    i.class.opcode,
                    Op::SLessThan | Op::SLessThanEqual | Op::SGreaterThan | Op::SGreaterThanEqual
                ) {
                    continue;
                }
                let (Some(a), Some(c)) = (id_operand(i, 0), id_operand(i, 1)) else {
                    continue;
                };
                let Some(ty) = type_of(ctx, a) else { continue };
                let Some(shape) = signed_type_shape(ctx, ty) else {
                    continue;
                };
                shapes.insert(ty, shape);
                plan.push((fi, bi, ii, [a, c]));
            }
        }
    }
    if plan.is_empty() {
        return Ok(());
    }
    let mut signed: HashMap<Word, Word> = HashMap::new();
    for (&ty, &(width, n, vector)) in &shapes {
        let elem = ctx.global(
            Op::TypeInt,
            None,
            vec![Operand::LiteralBit32(width), Operand::LiteralBit32(1)],
        );
        signed.insert(ty, if vector { ctx.t_vec(elem, n) } else { elem });
    }
    // Insert the bitcasts, last instruction first so that earlier indices stay valid.
    for (fi, bi, ii, ops) in plan.into_iter().rev() {
        let ty = type_of(ctx, ops[0]).expect("typed above");
        let sty = signed[&ty];
        let mut casts: Vec<Instruction> = Vec::new();
        let mut ids = [0; 2];
        for (k, v) in ops.iter().enumerate() {
            let id = ctx.id();
            casts.push(inst(
                Op::Bitcast,
                Some(sty),
                Some(id),
                vec![Operand::IdRef(*v)],
            ));
            ids[k] = id;
        }
        let block = &mut ctx.module.functions[fi].blocks[bi];
        let cmp = &mut block.instructions[ii];
        cmp.operands = vec![Operand::IdRef(ids[0]), Operand::IdRef(ids[1])];
        for (k, c) in casts.into_iter().enumerate() {
            block.instructions.insert(ii + k, c);
        }
    }
    Ok(())
}

/// (width, components, is a vector) of integer scalar or vector type `ty`.
fn signed_type_shape(ctx: &Ctx, ty: Word) -> Option<(u32, u32, bool)> {
    let d = ctx.def(ty)?;
    match (d.class.opcode, d.operands.as_slice()) {
        (Op::TypeInt, [Operand::LiteralBit32(w), _]) => Some((*w, 1, false)),
        (Op::TypeVector, [Operand::IdRef(e), Operand::LiteralBit32(n)]) => {
            let (w, _, _) = signed_type_shape(ctx, *e)?;
            Some((w, *n, true))
        }
        _ => None,
    }
}
