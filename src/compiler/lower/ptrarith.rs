//! Element steps of physical pointers as integer address arithmetic.
//!
//! `OpPtrAccessChain %base %element idx...` on a `PhysicalStorageBuffer` pointer steps `%base`
//! by `%element` times the pointer type's `ArrayStride`. OpenCL C (through LLVM's signed GEP
//! indices) needs that step to be signed: `p[-1]`, `out + i * 40 - 8`. NVIDIA's Vulkan
//! driver (H200, issue 18 finding 3) faults the GPU on a store through a chain whose element
//! is a negative constant, so every element that is negative or may be (a negative constant
//! or any non-constant index) becomes
//!
//! ```text
//! %a = OpConvertPtrToU %ulong %base
//! %d = OpIMul %ulong (OpSConvert %ulong %element) %stride      ; folded for constants
//! %s = OpIAdd %ulong %a %d
//! %p = OpConvertUToPtr %base_type %s
//! %r = OpAccessChain %result_type %p idx...                    ; only with further indices
//! ```
//!
//! Constant elements in `[0, 2^31)` stay chains. Every dynamic element goes the integer way,
//! not only the ones that could be proven signed: SPIR-V integers carry no signedness
//! (llvm-spirv's are all signedness 0), so a driver that zero-extends a 32-bit element or
//! treats a 64-bit one as unsigned would be wrong on any of them, and the integer form is
//! what the drivers generate for a chain anyway. Measured on the 38 kernels of the compiler
//! test fixtures (`testdata/*.cl`): 2.4% more SPIR-V bytes in all than lowering only the
//! negative constants (3 to 48 more instructions per kernel; the most, +15%, in
//! `private_array`). Loads and stores keep their `Aligned` operands (added by
//! [`super::memory`]), so the drivers know the alignment as before.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::layout::Layout;
use crate::compiler::spv::{id_operand, inst, Defs};

/// What an element index is known to be.
#[derive(Debug, PartialEq, Eq)]
enum Element {
    /// A constant in `[0, 2^31)`: the chain stays.
    SmallNonNegative,
    /// A constant (sign-extended to 64 bits).
    Constant(i64),
    /// Not a constant.
    Dynamic,
}

/// Rewrites the kernel function's element steps of physical pointers (see the module doc).
///
/// # Errors
/// When a physical pointer type has no stride (its pointee has no OpenCL C layout).
pub(crate) fn lower_ptr_arith(ctx: &mut Ctx) -> Result<(), String> {
    let types = ctx.value_types();
    let mut strides: HashMap<Word, u64> = HashMap::new();
    let mut blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let mut result = Ok(());
    for b in &mut blocks {
        let mut out = Vec::with_capacity(b.instructions.len());
        for i in std::mem::take(&mut b.instructions) {
            if result.is_ok() {
                if let Err(e) = rewrite(ctx, &types, &mut strides, i.clone(), &mut out) {
                    result = Err(e);
                    out.push(i);
                }
            } else {
                out.push(i);
            }
        }
        b.instructions = out;
    }
    ctx.module.functions[0].blocks = blocks;
    result
}

/// Pushes `i` to `out`, rewritten when it is an element step of a physical pointer that may
/// be negative.
fn rewrite(
    ctx: &mut Ctx,
    types: &HashMap<Word, Word>,
    strides: &mut HashMap<Word, u64>,
    i: Instruction,
    out: &mut Vec<Instruction>,
) -> Result<(), String> {
    if !matches!(
        i.class.opcode,
        Op::PtrAccessChain | Op::InBoundsPtrAccessChain
    ) {
        out.push(i);
        return Ok(());
    }
    let (Some(base), Some(elem)) = (id_operand(&i, 0), id_operand(&i, 1)) else {
        return Err("OpPtrAccessChain without an element".into());
    };
    let Some(&base_ty) = types.get(&base) else {
        out.push(i);
        return Ok(());
    };
    if ctx.ptr_info(base_ty).map(|p| p.0) != Some(StorageClass::PhysicalStorageBuffer) {
        out.push(i);
        return Ok(());
    }
    let kind = element(ctx, elem);
    if kind == Element::SmallNonNegative {
        out.push(i);
        return Ok(());
    }
    let (Some(rty), Some(rid)) = (i.result_type, i.result_id) else {
        return Err("OpPtrAccessChain without a result".into());
    };
    let stride = match strides.get(&base_ty) {
        Some(s) => *s,
        None => {
            let s = stride_of(ctx, base_ty)?;
            strides.insert(base_ty, s);
            s
        }
    };
    let u64t = ctx.t_int(64);
    let mut emit = |ctx: &mut Ctx, op: Op, ty: Word, ops: Vec<Operand>| -> Word {
        let id = ctx.id();
        out.push(inst(op, Some(ty), Some(id), ops));
        id
    };
    let addr = emit(ctx, Op::ConvertPtrToU, u64t, vec![Operand::IdRef(base)]);
    let delta = match kind {
        Element::Constant(c) => ctx.c_u64(c.wrapping_mul(stride as i64) as u64),
        _ => {
            let ety = types.get(&elem).copied().ok_or("element index type")?;
            let wide = if ctx.scalar_width(ety) == Some(64) {
                elem
            } else {
                emit(ctx, Op::SConvert, u64t, vec![Operand::IdRef(elem)])
            };
            if stride == 1 {
                wide
            } else {
                let s = ctx.c_u64(stride);
                emit(
                    ctx,
                    Op::IMul,
                    u64t,
                    vec![Operand::IdRef(wide), Operand::IdRef(s)],
                )
            }
        }
    };
    let sum = emit(
        ctx,
        Op::IAdd,
        u64t,
        vec![Operand::IdRef(addr), Operand::IdRef(delta)],
    );
    let rest: Vec<Operand> = i.operands[2..].to_vec();
    if rest.is_empty() {
        out.push(inst(
            Op::ConvertUToPtr,
            Some(rty),
            Some(rid),
            vec![Operand::IdRef(sum)],
        ));
    } else {
        let p = emit(ctx, Op::ConvertUToPtr, base_ty, vec![Operand::IdRef(sum)]);
        let mut ops = vec![Operand::IdRef(p)];
        ops.extend(rest);
        out.push(inst(Op::AccessChain, Some(rty), Some(rid), ops));
    }
    Ok(())
}

/// What element index `id` is known to be.
fn element(ctx: &Ctx, id: Word) -> Element {
    let Some(d) = ctx.def(id) else {
        return Element::Dynamic;
    };
    let v = match (d.class.opcode, d.operands.first()) {
        (Op::ConstantNull, _) => 0,
        (Op::Constant, Some(Operand::LiteralBit32(v))) => {
            let w = d
                .result_type
                .and_then(|t| ctx.scalar_width(t))
                .unwrap_or(32);
            // Sign-extend from the constant's own width (8, 16 or 32 bits).
            let sh = 64 - w.clamp(1, 32);
            ((u64::from(*v) << sh) as i64) >> sh
        }
        (Op::Constant, Some(Operand::LiteralBit64(v))) => *v as i64,
        _ => return Element::Dynamic,
    };
    if (0..1 << 31).contains(&v) {
        Element::SmallNonNegative
    } else {
        Element::Constant(v)
    }
}

/// The `ArrayStride` of physical pointer type `ty`: its decoration, else the pointee's size
/// rounded up to its alignment (the rule of [`super::types::add_layout`]).
fn stride_of(ctx: &Ctx, ty: Word) -> Result<u64, String> {
    let decorated = ctx.module.annotations.iter().find_map(|a| {
        (a.class.opcode == Op::Decorate
            && id_operand(a, 0) == Some(ty)
            && a.operands.get(1) == Some(&Operand::Decoration(Decoration::ArrayStride)))
        .then(|| match a.operands.get(2) {
            Some(Operand::LiteralBit32(s)) => Some(u64::from(*s)),
            _ => None,
        })
        .flatten()
    });
    if let Some(s) = decorated {
        return Ok(s);
    }
    let pointee = ctx.ptr_info(ty).map(|p| p.1).ok_or("pointer type")?;
    let defs = Defs::new(&ctx.module);
    let sa = Layout::new(&ctx.module, &defs).size_align(pointee)?;
    let a = sa.align.max(1);
    Ok(sa.size.div_ceil(a) * a)
}

#[cfg(test)]
mod tests;
