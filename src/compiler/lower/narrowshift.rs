//! 8- and 16-bit shifts done in 32 bits.
//!
//! clang promotes a C shift of `char` or `short` to `int`, so 8- and 16-bit `OpShift*`
//! instructions come only from LLVM's own idioms: llvm-spirv-15's helper for `llvm.bswap.i16`
//! (`spirv.llvm_bswap_i16`, inlined by [`super::calls`]) and the funnel-shift expansion of
//! `rotate` on `ushort`/`uchar` ([`super::select`]). NVIDIA's Vulkan driver (580.159, H200)
//! returns 0 for those (measured 2026-12-02: `swap16(0x6269)` and `rotate((ushort)0x6269, 8)`
//! gave 0 where lavapipe gives 0x6962; the same shifts through a loaded, not constant, amount
//! were right). Each such shift becomes: extend the operand to 32 bits (`OpSConvert` for an
//! arithmetic right shift, else `OpUConvert`), shift in 32 bits, truncate back
//! (`OpUConvert`). The result is the same on every device: the shift amount is below the
//! operand's width (OpenCL C 3.0 section 6.5.7 takes it modulo the width, and clang masks it),
//! so the bits shifted in from above the narrow width never reach the kept low bits of a
//! left or logical right shift, and an arithmetic right shift of the sign-extended value
//! keeps the sign.

use rspirv::dr::Operand;
use rspirv::spirv::{Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// Component count of integer scalar or vector type `ty` (1 for a scalar).
fn components(ctx: &Ctx, ty: Word) -> u32 {
    match ctx.def(ty) {
        Some(d) if d.class.opcode == Op::TypeVector => match d.operands.get(1) {
            Some(Operand::LiteralBit32(n)) => *n,
            _ => 1,
        },
        _ => 1,
    }
}

/// Rewrites every 8- and 16-bit `OpShiftLeftLogical`, `OpShiftRightLogical` and
/// `OpShiftRightArithmetic` as the same shift in 32 bits between an extension and a
/// truncation.
///
/// # Errors
/// None today; the signature matches the other passes.
pub(crate) fn widen_narrow_shifts(ctx: &mut Ctx) -> Result<(), String> {
    let is_shift = |op: Op| {
        matches!(
            op,
            Op::ShiftLeftLogical | Op::ShiftRightLogical | Op::ShiftRightArithmetic
        )
    };
    // The shifts to rewrite, as (result type, component count), and the 32-bit types they need.
    let mut wanted = Vec::new();
    for i in ctx
        .module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
    {
        if is_shift(i.class.opcode) {
            if let Some(ty) = i.result_type {
                if matches!(ctx.scalar_width(ty), Some(8 | 16)) {
                    wanted.push(components(ctx, ty));
                }
            }
        }
    }
    if wanted.is_empty() {
        return Ok(());
    }
    let u32t = ctx.t_int(32);
    let mut wide = std::collections::HashMap::new();
    for n in wanted {
        let t = if n == 1 { u32t } else { ctx.t_vec(u32t, n) };
        wide.insert(n, t);
    }
    let types = ctx.value_types();
    let widths: std::collections::HashMap<Word, (u32, u32)> = types
        .values()
        .chain(wide.values())
        .filter_map(|&t| Some((t, (ctx.scalar_width(t)?, components(ctx, t)))))
        .collect();
    let mut functions = std::mem::take(&mut ctx.module.functions);
    for b in functions.iter_mut().flat_map(|f| f.blocks.iter_mut()) {
        let mut out = Vec::with_capacity(b.instructions.len());
        for i in std::mem::take(&mut b.instructions) {
            let (Some(ty), Some(id)) = (i.result_type, i.result_id) else {
                out.push(i);
                continue;
            };
            let narrow = is_shift(i.class.opcode) && matches!(widths.get(&ty), Some((8 | 16, _)));
            let (Some(value), Some(amount)) = (id_operand(&i, 0), id_operand(&i, 1)) else {
                out.push(i);
                continue;
            };
            if !narrow {
                out.push(i);
                continue;
            }
            let n = widths[&ty].1;
            let wt = wide[&n];
            let extend = if i.class.opcode == Op::ShiftRightArithmetic {
                Op::SConvert
            } else {
                Op::UConvert
            };
            let v32 = ctx.id();
            out.push(inst(
                extend,
                Some(wt),
                Some(v32),
                vec![Operand::IdRef(value)],
            ));
            let amount_width = types.get(&amount).and_then(|t| widths.get(t)).map(|w| w.0);
            let a32 = if amount_width == Some(32) {
                amount
            } else {
                let a = ctx.id();
                out.push(inst(
                    Op::UConvert,
                    Some(wt),
                    Some(a),
                    vec![Operand::IdRef(amount)],
                ));
                a
            };
            let s32 = ctx.id();
            out.push(inst(
                i.class.opcode,
                Some(wt),
                Some(s32),
                vec![Operand::IdRef(v32), Operand::IdRef(a32)],
            ));
            out.push(inst(
                Op::UConvert,
                Some(ty),
                Some(id),
                vec![Operand::IdRef(s32)],
            ));
        }
        b.instructions = out;
    }
    ctx.module.functions = functions;
    Ok(())
}
