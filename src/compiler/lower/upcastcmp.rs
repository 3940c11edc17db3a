//! Signed comparisons of a sign-extended 32-bit value with a 64-bit constant done in 32 bits.
//!
//! Lavapipe 22.3.6 (Mesa's NIR) computes `OpSLessThan`, `OpSLessThanEqual`,
//! `OpSGreaterThan` and `OpSGreaterThanEqual` wrongly when one operand is an `OpSConvert` of
//! a 32-bit value to 64 bits and the other a constant: measured 2026-12-02,
//! `convert_long(x) < 1L` is false for x = 0, `convert_long(x) <= 0L` false for x = 0,
//! `convert_long(x) > 11L` true for x = -936415223, while `>= 0L`, `> -1L`, `==`, `!=`,
//! the unsigned forms of `convert_ulong(x)` and comparisons with a non-constant were right,
//! as is every one of them on lavapipe 25.0.7 (vkcl-difftest seeds 201776, 202721, 202734,
//! 204964, docs/difftest.md). clang narrows `(long)x < 1L` itself, so the shape comes from
//! libclc's `convert_long`/`convert_long_sat` inlined after clang's optimizations.
//!
//! Each such comparison becomes the same comparison of the 32-bit value with the constant
//! clamped to the 32-bit range (`x` the 32-bit value, `C` the constant, `min`/`max` the
//! `int` range; a constant on the left is first moved to the right):
//! - `sext(x) <  C`: `x <= max` (true) when `C > max`, else `x < clamp(C)`;
//! - `sext(x) <= C`: `x < min` (false) when `C < min`, else `x <= clamp(C)`;
//! - `sext(x) >  C`: `x >= min` (true) when `C < min`, else `x > clamp(C)`;
//! - `sext(x) >= C`: `x > max` (false) when `C > max`, else `x >= clamp(C)`.
//!
//! Each is exact on every device (a sign extension keeps order and maps the `int` range onto
//! itself), so the pass runs everywhere.

use rspirv::dr::Operand;
use rspirv::spirv::{Op, Word};
use std::collections::HashMap;

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst};

/// The comparison `op` with its operands swapped (`C op x` is `x swapped(op) C`).
fn swapped(op: Op) -> Op {
    match op {
        Op::SLessThan => Op::SGreaterThan,
        Op::SLessThanEqual => Op::SGreaterThanEqual,
        Op::SGreaterThan => Op::SLessThan,
        _ => Op::SLessThanEqual,
    }
}

/// The 32-bit form of `x op C` (`x` sign-extended to 64 bits): the comparison and its
/// `int` constant.
fn narrowed(op: Op, c: i64) -> (Op, i32) {
    let (min, max) = (i64::from(i32::MIN), i64::from(i32::MAX));
    let clamp = c.clamp(min, max) as i32;
    match op {
        Op::SLessThan if c > max => (Op::SLessThanEqual, i32::MAX),
        Op::SLessThanEqual if c < min => (Op::SLessThan, i32::MIN),
        Op::SGreaterThan if c < min => (Op::SGreaterThanEqual, i32::MIN),
        Op::SGreaterThanEqual if c > max => (Op::SGreaterThan, i32::MAX),
        _ => (op, clamp),
    }
}

/// Rewrites every scalar signed relational comparison of an `OpSConvert` from 32 to 64 bits
/// with a 64-bit `OpConstant` as the equivalent 32-bit comparison (see the module doc).
///
/// # Errors
/// None today; the signature matches the other passes.
pub(crate) fn narrow_upcast_compares(ctx: &mut Ctx) -> Result<(), String> {
    let relational = |op: Op| {
        matches!(
            op,
            Op::SLessThan | Op::SLessThanEqual | Op::SGreaterThan | Op::SGreaterThanEqual
        )
    };
    let types = ctx.value_types();
    // The type of a value or of a global (a constant).
    let width = |ctx: &Ctx, id: Word| {
        let ty = types
            .get(&id)
            .copied()
            .or_else(|| ctx.def(id).and_then(|d| d.result_type))?;
        scalar_int_width(ctx, ty)
    };
    // 64-bit scalar constants by id.
    let mut constants: HashMap<Word, i64> = HashMap::new();
    for i in &ctx.module.types_global_values {
        if i.class.opcode != Op::Constant {
            continue;
        }
        let (Some(id), Some(ty)) = (i.result_id, i.result_type) else {
            continue;
        };
        if scalar_int_width(ctx, ty) != Some(64) {
            continue;
        }
        let v = match i.operands.as_slice() {
            [Operand::LiteralBit64(v)] => *v as i64,
            [Operand::LiteralBit32(lo), Operand::LiteralBit32(hi)] => {
                (u64::from(*lo) | (u64::from(*hi) << 32)) as i64
            }
            _ => continue,
        };
        constants.insert(id, v);
    }
    // Sign extensions from 32 to 64 bits (and copies of them): result id -> the 32-bit value.
    let mut extended: HashMap<Word, Word> = HashMap::new();
    for i in ctx
        .module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
    {
        let (Some(id), Some(ty), Some(src)) = (i.result_id, i.result_type, id_operand(i, 0)) else {
            continue;
        };
        match i.class.opcode {
            Op::SConvert
                if scalar_int_width(ctx, ty) == Some(64) && width(ctx, src) == Some(32) =>
            {
                extended.insert(id, src);
            }
            // Earlier passes leave copies (blocks come in dominance order: a copy follows
            // what it copies).
            Op::CopyObject => {
                if let Some(&x) = extended.get(&src) {
                    extended.insert(id, x);
                }
                if let Some(&c) = constants.get(&src) {
                    constants.insert(id, c);
                }
            }
            _ => {}
        }
    }
    if extended.is_empty() || constants.is_empty() {
        return Ok(());
    }
    // The rewrites: instruction result id -> (op, 32-bit value, constant).
    let mut rewrites: Vec<(Word, Op, Word, i32)> = Vec::new();
    for i in ctx
        .module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
    {
        if !relational(i.class.opcode) {
            continue;
        }
        let (Some(id), Some(a), Some(b)) = (i.result_id, id_operand(i, 0), id_operand(i, 1)) else {
            continue;
        };
        let (x, c, op) = match (extended.get(&a), constants.get(&b)) {
            (Some(&x), Some(&c)) => (x, c, i.class.opcode),
            _ => match (constants.get(&a), extended.get(&b)) {
                (Some(&c), Some(&x)) => (x, c, swapped(i.class.opcode)),
                _ => continue,
            },
        };
        let (op, c32) = narrowed(op, c);
        rewrites.push((id, op, x, c32));
    }
    let mut by_id = HashMap::new();
    for (id, op, x, c32) in rewrites {
        let c = ctx.c_u32(c32 as u32);
        by_id.insert(id, (op, x, c));
    }
    for i in ctx
        .module
        .functions
        .iter_mut()
        .flat_map(|f| f.blocks.iter_mut())
        .flat_map(|b| b.instructions.iter_mut())
    {
        let Some(&(op, x, c)) = i.result_id.and_then(|id| by_id.get(&id)) else {
            continue;
        };
        *i = inst(
            op,
            i.result_type,
            i.result_id,
            vec![Operand::IdRef(x), Operand::IdRef(c)],
        );
    }
    Ok(())
}

/// Width of integer scalar type `ty` (None for vectors and other types).
fn scalar_int_width(ctx: &Ctx, ty: Word) -> Option<u32> {
    let d = ctx.def(ty)?;
    match (d.class.opcode, d.operands.first()) {
        (Op::TypeInt, Some(Operand::LiteralBit32(w))) => Some(*w),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rewrite agrees with the 64-bit comparison at the ends of the `int` range and
    /// around the constant.
    #[test]
    fn narrowed_comparisons_are_exact() {
        let cmp = |op: Op, a: i64, b: i64| match op {
            Op::SLessThan => a < b,
            Op::SLessThanEqual => a <= b,
            Op::SGreaterThan => a > b,
            _ => a >= b,
        };
        let xs = [
            i32::MIN,
            i32::MIN + 1,
            -2,
            -1,
            0,
            1,
            2,
            i32::MAX - 1,
            i32::MAX,
        ];
        let mut cs: Vec<i64> = vec![i64::MIN, i64::MAX, 1 << 32, -(1 << 32), 11, -936415223];
        cs.extend(
            xs.iter()
                .flat_map(|&x| [-1, 0, 1].map(|d| i64::from(x) + d)),
        );
        for op in [
            Op::SLessThan,
            Op::SLessThanEqual,
            Op::SGreaterThan,
            Op::SGreaterThanEqual,
        ] {
            for &c in &cs {
                let (nop, c32) = narrowed(op, c);
                for &x in &xs {
                    assert_eq!(
                        cmp(nop, i64::from(x), i64::from(c32)),
                        cmp(op, i64::from(x), c),
                        "{op:?} {x} {c}"
                    );
                    // The constant on the left.
                    let s = swapped(op);
                    assert_eq!(cmp(s, i64::from(x), c), cmp(op, c, i64::from(x)));
                }
            }
        }
    }
}
