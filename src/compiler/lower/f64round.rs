//! `GLSL.std.450` `Round`, `RoundEven` and `Trunc` of `double` operands through `Floor` and
//! `Ceil`, for llvmpipe.
//!
//! llvmpipe (lavapipe 22.3.6 and 25.0.7 alike) keeps `double` values of one invocation group
//! in 512-bit vectors. On a host CPU without AVX-512 it has no vector rounding instruction of
//! that size and falls back to a sequence written for `float`: values above 2^24 are returned
//! unchanged (their fraction kept) and halfway cases round down. Measured 2026-12-02 on an
//! Intel Xeon with `GALLIUM_OVERRIDE_CPU_CAPS=avx` (and on the AMD EPYC CI hosts, without the
//! override): `rint(1663934893.5471)` = 1663934893.5471, `trunc(20000000.5)` = 20000000.5,
//! `rint(3.5)` = 3, while `floor` and `ceil` (which it lowers to LLVM's own intrinsics for
//! 64-bit types) were right everywhere; with AVX-512 all five are right. `convert_long_rte`,
//! `rint`, `round`, `trunc` and `modf` of `double` all reached the broken sequence.
//!
//! Each instruction becomes (per component, `x` the operand):
//! - `Trunc`: `x < 0 ? ceil(x) : floor(x)`;
//! - `RoundEven`: `f = floor(x)`, `d = x - f` (exact), `f + 1` when `d > 0.5` or `d == 0.5`
//!   and `f` is odd (`floor(f / 2) != f / 2`), else `f`; a zero result of a negative `x` is
//!   `-0`;
//! - `Round` (halfway cases away from zero, as OpenCL's `round`): `t` as `Trunc` above, then
//!   `t + copysign(1, x)` when `|x - t| >= 0.5`.
//!
//! And every conversion of an integer to `double` is decorated `NoContraction`: Mesa folds
//! `(double)(long)x` (`OpConvertSToF` of an `OpConvertFToS`) into its `ftrunc` of `x`,
//! which reaches the broken sequence above, and which keeps the sign of a zero result
//! (`(double)(long)-0.3` came out `-0`, on AVX-512 hosts too); an exact conversion is not
//! folded.
//!
//! Infinities and NaN pass through unchanged (`x - floor(x)` is NaN, every test false).
//! Every step is exact, so the pass is right on any device; it runs where
//! [`DeviceCaps::f64_rounding_by_floor`](crate::compiler::caps::DeviceCaps) says so.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst, lit_operand};

const ROUND: u32 = 1;
const ROUND_EVEN: u32 = 2;
const TRUNC: u32 = 3;
const FABS: u32 = 4;
const FLOOR: u32 = 8;
const CEIL: u32 = 9;

struct Rewrite<'c> {
    ctx: &'c mut Ctx,
    glsl: Word,
    out: Vec<Instruction>,
}

impl Rewrite<'_> {
    fn emit(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.ctx.id();
        self.out.push(inst(op, Some(ty), Some(id), operands));
        id
    }

    fn bin(&mut self, op: Op, ty: Word, a: Word, b: Word) -> Word {
        self.emit(op, ty, vec![Operand::IdRef(a), Operand::IdRef(b)])
    }

    fn glsl(&mut self, n: u32, ty: Word, x: Word) -> Word {
        let ops = vec![
            Operand::IdRef(self.glsl),
            Operand::LiteralExtInstInteger(n),
            Operand::IdRef(x),
        ];
        self.emit(Op::ExtInst, ty, ops)
    }

    fn select(&mut self, ty: Word, c: Word, a: Word, b: Word) -> Word {
        let ops = vec![Operand::IdRef(c), Operand::IdRef(a), Operand::IdRef(b)];
        self.emit(Op::Select, ty, ops)
    }

    fn components(&self, ty: Word) -> u32 {
        self.ctx
            .def(ty)
            .filter(|d| d.class.opcode == Op::TypeVector)
            .and_then(|d| lit_operand(d, 1))
            .unwrap_or(1)
    }

    /// The `double` constant `v` shaped like `ty`.
    fn constant(&mut self, ty: Word, v: f64) -> Word {
        let f64t = self
            .ctx
            .global(Op::TypeFloat, None, vec![Operand::LiteralBit32(64)]);
        let c = self.ctx.global(
            Op::Constant,
            Some(f64t),
            vec![Operand::LiteralBit64(v.to_bits())],
        );
        match self.components(ty) {
            1 => c,
            n => self.ctx.global(
                Op::ConstantComposite,
                Some(ty),
                vec![Operand::IdRef(c); n as usize],
            ),
        }
    }

    /// The boolean type shaped like `ty`.
    fn bool_like(&mut self, ty: Word) -> Word {
        let b = self.ctx.t_bool();
        match self.components(ty) {
            1 => b,
            n => self.ctx.t_vec(b, n),
        }
    }

    /// `trunc(x)` from `floor` and `ceil`.
    fn trunc(&mut self, ty: Word, x: Word) -> Word {
        let bt = self.bool_like(ty);
        let zero = self.constant(ty, 0.0);
        let neg = self.bin(Op::FOrdLessThan, bt, x, zero);
        let c = self.glsl(CEIL, ty, x);
        let f = self.glsl(FLOOR, ty, x);
        self.select(ty, neg, c, f)
    }

    /// `rint(x)` (halfway cases to even) from `floor`.
    fn round_even(&mut self, ty: Word, x: Word) -> Word {
        let bt = self.bool_like(ty);
        let (zero, half, one) = (
            self.constant(ty, 0.0),
            self.constant(ty, 0.5),
            self.constant(ty, 1.0),
        );
        let f = self.glsl(FLOOR, ty, x);
        let d = self.bin(Op::FSub, ty, x, f);
        let above = self.bin(Op::FOrdGreaterThan, bt, d, half);
        let tie = self.bin(Op::FOrdEqual, bt, d, half);
        let halved = self.bin(Op::FMul, ty, f, half);
        let halved_floor = self.glsl(FLOOR, ty, halved);
        let odd = self.bin(Op::FOrdNotEqual, bt, halved_floor, halved);
        let odd_tie = self.bin(Op::LogicalAnd, bt, tie, odd);
        let up = self.bin(Op::LogicalOr, bt, above, odd_tie);
        let stepped = self.bin(Op::FAdd, ty, f, one);
        let r = self.select(ty, up, stepped, f);
        // -0.3 and -0.5 step from -1 to +0: the result is -0.
        let is_zero = self.bin(Op::FOrdEqual, bt, r, zero);
        let neg = self.bin(Op::FOrdLessThan, bt, x, zero);
        let neg_zero = self.bin(Op::LogicalAnd, bt, is_zero, neg);
        let minus_zero = self.constant(ty, -0.0);
        self.select(ty, neg_zero, minus_zero, r)
    }

    /// `round(x)` (halfway cases away from zero) from `trunc` above.
    fn round_away(&mut self, ty: Word, x: Word) -> Word {
        let bt = self.bool_like(ty);
        let t = self.trunc(ty, x);
        let d = self.bin(Op::FSub, ty, x, t);
        let ad = self.glsl(FABS, ty, d);
        let half = self.constant(ty, 0.5);
        let up = self.bin(Op::FOrdGreaterThanEqual, bt, ad, half);
        let zero = self.constant(ty, 0.0);
        let neg = self.bin(Op::FOrdLessThan, bt, x, zero);
        let (one, minus_one) = (self.constant(ty, 1.0), self.constant(ty, -1.0));
        let s = self.select(ty, neg, minus_one, one);
        let stepped = self.bin(Op::FAdd, ty, t, s);
        self.select(ty, up, stepped, t)
    }
}

/// The GLSL.std.450 import's id, if the module has one.
fn glsl_import(ctx: &Ctx) -> Option<Word> {
    ctx.module
        .ext_inst_imports
        .iter()
        .find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == "GLSL.std.450" => i.result_id,
            _ => None,
        })
}

/// Which rewrite instruction `i` needs: the GLSL number and the operand, for a `Round`,
/// `RoundEven` or `Trunc` of `double`s.
fn target(ctx: &Ctx, glsl: Word, i: &Instruction) -> Option<(u32, Word, Word, Word)> {
    if i.class.opcode != Op::ExtInst || id_operand(i, 0) != Some(glsl) {
        return None;
    }
    let n = match i.operands.get(1) {
        Some(Operand::LiteralExtInstInteger(n)) if matches!(*n, ROUND | ROUND_EVEN | TRUNC) => *n,
        _ => return None,
    };
    let ty = i.result_type?;
    let float = ctx.def(ty).map(|d| match d.class.opcode {
        Op::TypeVector => id_operand(d, 0).and_then(|e| ctx.def(e)).cloned(),
        _ => Some(d.clone()),
    })??;
    if float.class.opcode != Op::TypeFloat || ctx.scalar_width(ty) != Some(64) {
        return None;
    }
    Some((n, ty, i.result_id?, id_operand(i, 2)?))
}

/// Rewrites every `Round`, `RoundEven` and `Trunc` of `double`s and marks every conversion of
/// an integer to `double` exact (see the module doc).
///
/// # Errors
/// None today; the signature matches the other passes.
pub(crate) fn round_doubles_by_floor(ctx: &mut Ctx) -> Result<(), String> {
    let Some(glsl) = glsl_import(ctx) else {
        return Ok(());
    };
    let mut functions = std::mem::take(&mut ctx.module.functions);
    let exact: Vec<Word> = functions
        .iter()
        .flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter()))
        .filter(|i| matches!(i.class.opcode, Op::ConvertSToF | Op::ConvertUToF))
        .filter(|i| i.result_type.and_then(|t| ctx.scalar_width(t)) == Some(64))
        .filter_map(|i| i.result_id)
        .collect();
    for id in exact {
        ctx.decorate(id, rspirv::spirv::Decoration::NoContraction, vec![]);
    }
    for b in functions.iter_mut().flat_map(|f| f.blocks.iter_mut()) {
        if !b
            .instructions
            .iter()
            .any(|i| target(ctx, glsl, i).is_some())
        {
            continue;
        }
        let mut rw = Rewrite {
            ctx,
            glsl,
            out: Vec::with_capacity(b.instructions.len() + 16),
        };
        for i in std::mem::take(&mut b.instructions) {
            let Some((n, ty, id, x)) = target(rw.ctx, glsl, &i) else {
                rw.out.push(i);
                continue;
            };
            let r = match n {
                TRUNC => rw.trunc(ty, x),
                ROUND_EVEN => rw.round_even(ty, x),
                _ => rw.round_away(ty, x),
            };
            rw.out.push(inst(
                Op::CopyObject,
                Some(ty),
                Some(id),
                vec![Operand::IdRef(r)],
            ));
        }
        b.instructions = rw.out;
    }
    ctx.module.functions = functions;
    Ok(())
}
