//! Conversions with OpenCL semantics that Vulkan lacks: `OpSatConvertSToU`/`OpSatConvertUToS`
//! (Kernel-only instructions), and conversions carrying the `SaturatedConversion` or
//! `FPRoundingMode` decorations (`convert_int_sat`, `convert_char_sat(int)`,
//! `convert_int_rtn`, ...), which Vulkan ignores: an out-of-range `OpConvertFToS` is undefined
//! there.
//!
//! Directed rounding modes on conversions *to* floating point (`convert_float_rtp(int)`,
//! `convert_double_rtz(long)`, `convert_float_rtn(double)`) round to nearest, then step to the
//! neighbouring value where the result lies on the wrong side of the source. `half` results
//! of `float` and integer sources are rounded to half precision in the mode's direction with
//! integer arithmetic first ([`round_to_half_precision`]; integers through an exact `float`),
//! so that the conversion to `half` is exact; `half` sources convert to `float` (exactly)
//! first. `double` -> `half` (every one, decorated or not) rounds to odd in float first.
//!
//! `half` division is done in `float` and rounded to half with integer arithmetic
//! (`Lower::half_division`): NVIDIA's half division is up to 2 ulp off.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, FPRoundingMode, Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst, lit_operand};

/// What the decorations ask of one conversion.
#[derive(Default, Clone, Copy)]
struct Mode {
    saturate: bool,
    rounding: Option<FPRoundingMode>,
}

struct Lower<'c> {
    ctx: &'c mut Ctx,
    glsl: Word,
    out: Vec<Instruction>,
    types: HashMap<Word, Word>,
}

impl Lower<'_> {
    fn emit(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.ctx.id();
        self.out.push(inst(op, Some(ty), Some(id), operands));
        id
    }

    /// Ends a rewrite: `rid` (of type `ty`) defined as `op` of the one operand `v`.
    fn result(&mut self, op: Op, ty: Word, rid: Word, v: Word) {
        self.out
            .push(inst(op, Some(ty), Some(rid), vec![Operand::IdRef(v)]));
    }

    fn bin(&mut self, op: Op, ty: Word, a: Word, b: Word) -> Word {
        self.emit(op, ty, vec![Operand::IdRef(a), Operand::IdRef(b)])
    }

    fn glsl(&mut self, n: u32, ty: Word, args: &[Word]) -> Word {
        let mut ops = vec![Operand::IdRef(self.glsl), Operand::LiteralExtInstInteger(n)];
        ops.extend(args.iter().map(|a| Operand::IdRef(*a)));
        self.emit(Op::ExtInst, ty, ops)
    }

    fn select(&mut self, ty: Word, c: Word, a: Word, b: Word) -> Word {
        self.emit(
            Op::Select,
            ty,
            vec![Operand::IdRef(c), Operand::IdRef(a), Operand::IdRef(b)],
        )
    }

    fn components(&self, ty: Word) -> u32 {
        self.ctx
            .def(ty)
            .filter(|d| d.class.opcode == Op::TypeVector)
            .and_then(|d| lit_operand(d, 1))
            .unwrap_or(1)
    }

    /// A type with `ty`'s shape and `elem` components.
    fn shaped(&mut self, ty: Word, elem: Word) -> Word {
        match self.components(ty) {
            1 => elem,
            n => self.ctx.t_vec(elem, n),
        }
    }

    /// A constant of `ty`'s shape; `scalar` makes the component.
    fn splat(&mut self, ty: Word, scalar: Word) -> Word {
        match self.components(ty) {
            1 => scalar,
            n => self.ctx.global(
                Op::ConstantComposite,
                Some(ty),
                vec![Operand::IdRef(scalar); n as usize],
            ),
        }
    }

    /// Integer constant `bits` (low `width` bits) shaped like `ty`.
    fn int_const(&mut self, ty: Word, width: u32, bits: u64) -> Word {
        let t = self.ctx.t_int(width);
        let lit = if width == 64 {
            Operand::LiteralBit64(bits)
        } else {
            Operand::LiteralBit32((bits & ((1u64 << width) - 1)) as u32)
        };
        let c = self.ctx.global(Op::Constant, Some(t), vec![lit]);
        self.splat(ty, c)
    }

    /// Float constant `v` of `width` bits shaped like `ty`.
    fn float_const(&mut self, ty: Word, width: u32, v: f64) -> Result<Word, String> {
        let t = self
            .ctx
            .global(Op::TypeFloat, None, vec![Operand::LiteralBit32(width)]);
        let lit = match width {
            64 => Operand::LiteralBit64(v.to_bits()),
            32 => Operand::LiteralBit32((v as f32).to_bits()),
            _ => return Err("saturating conversions from half are not supported yet".into()),
        };
        let c = self.ctx.global(Op::Constant, Some(t), vec![lit]);
        Ok(self.splat(ty, c))
    }

    fn width(&self, ty: Word) -> Result<u32, String> {
        self.ctx
            .scalar_width(ty)
            .ok_or_else(|| "conversion of unknown width".into())
    }

    /// Integer -> integer with saturation: `OpSatConvertSToU`/`OpSatConvertUToS`, and
    /// `OpSConvert`/`OpUConvert` decorated `SaturatedConversion` (same signedness).
    fn sat_int(
        &mut self,
        i: &Instruction,
        src_signed: bool,
        dst_signed: bool,
    ) -> Result<(), String> {
        let (ty, rid) = (i.result_type.ok_or("type")?, i.result_id.ok_or("id")?);
        let x = id_operand(i, 0).ok_or("conversion operand")?;
        let xt = self
            .types
            .get(&x)
            .copied()
            .ok_or("conversion operand type")?;
        let (ws, wd) = (self.width(xt)?, self.width(ty)?);
        let w = ws.max(wd);
        let wide = self.ctx.t_int(w);
        let wide = self.shaped(ty, wide);
        let mut v = x;
        if ws < w {
            let op = if src_signed {
                Op::SConvert
            } else {
                Op::UConvert
            };
            v = self.emit(op, wide, vec![Operand::IdRef(v)]);
        }
        let umax = |bits: u32| {
            if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            }
        };
        // The destination's range, clamped to in the (wider) source domain.
        match (src_signed, dst_signed) {
            (true, false) => {
                let zero = self.int_const(wide, w, 0);
                v = self.glsl(42, wide, &[v, zero]); // SMax
                if wd < w {
                    let hi = self.int_const(wide, w, umax(wd));
                    v = self.glsl(38, wide, &[v, hi]); // UMin
                }
            }
            (false, true) => {
                let hi = self.int_const(wide, w, umax(wd) >> 1);
                v = self.glsl(38, wide, &[v, hi]); // UMin
            }
            (true, true) if wd < w => {
                let lo = self.int_const(wide, w, !(umax(wd) >> 1));
                let hi = self.int_const(wide, w, umax(wd) >> 1);
                v = self.glsl(45, wide, &[v, lo, hi]); // SClamp
            }
            (false, false) if wd < w => {
                let hi = self.int_const(wide, w, umax(wd));
                v = self.glsl(38, wide, &[v, hi]); // UMin
            }
            _ => {}
        }
        if wd < w {
            self.result(Op::UConvert, ty, rid, v);
        } else {
            self.result(Op::CopyObject, ty, rid, v);
        }
        Ok(())
    }

    /// Float -> integer with a rounding mode and/or saturation (NaN -> 0, out of range ->
    /// the nearest limit).
    fn float_to_int(&mut self, i: &Instruction, mode: Mode) -> Result<(), String> {
        let (ty, rid) = (i.result_type.ok_or("type")?, i.result_id.ok_or("id")?);
        let signed = i.class.opcode == Op::ConvertFToS;
        let x = id_operand(i, 0).ok_or("conversion operand")?;
        let xt = self
            .types
            .get(&x)
            .copied()
            .ok_or("conversion operand type")?;
        let (mut wf, wi) = (self.width(xt)?, self.width(ty)?);
        let mut v = x;
        let mut xt = xt;
        if wf == 16 {
            // half -> float is exact; the rounding and the limits then work in float.
            let f32_scalar = self.float32();
            xt = self.shaped(xt, f32_scalar);
            v = self.emit(Op::FConvert, xt, vec![Operand::IdRef(x)]);
            wf = 32;
        }
        v = match mode.rounding {
            Some(FPRoundingMode::RTE) => self.glsl(2, xt, &[v]),
            Some(FPRoundingMode::RTP) => self.glsl(9, xt, &[v]),
            Some(FPRoundingMode::RTN) => self.glsl(8, xt, &[v]),
            _ => v,
        };
        if !mode.saturate {
            self.out.push(inst(
                i.class.opcode,
                Some(ty),
                Some(rid),
                vec![Operand::IdRef(v)],
            ));
            return Ok(());
        }
        // Limits as floats: the minimum is exact (0 or -2^(w-1)); `limit` = 2^(w-1) or 2^w is
        // the first value out of range; below it, the largest float of the source type.
        let (min, limit) = if signed {
            (-(2f64.powi(wi as i32 - 1)), 2f64.powi(wi as i32 - 1))
        } else {
            (0.0, 2f64.powi(wi as i32))
        };
        let mantissa = if wf == 64 { 53 } else { 24 };
        let below = limit * (1.0 - 2f64.powi(-mantissa));
        let bool_t = self.ctx.t_bool();
        let bt = self.shaped(ty, bool_t);
        let fmin = self.float_const(xt, wf, min)?;
        let fbelow = self.float_const(xt, wf, below)?;
        let flimit = self.float_const(xt, wf, limit)?;
        let clamped = self.glsl(43, xt, &[v, fmin, fbelow]); // FClamp
        let conv = self.emit(i.class.opcode, ty, vec![Operand::IdRef(clamped)]);
        let too_big = self.bin(Op::FOrdGreaterThanEqual, bt, v, flimit);
        let max_bits = if signed {
            (1u64 << (wi - 1)) - 1
        } else if wi == 64 {
            u64::MAX
        } else {
            (1u64 << wi) - 1
        };
        let imax = self.int_const(ty, wi, max_bits);
        let r = self.select(ty, too_big, imax, conv);
        let nan = self.emit(Op::IsNan, bt, vec![Operand::IdRef(v)]);
        let zero = self.int_const(ty, wi, 0);
        let r = self.select(ty, nan, zero, r);
        self.result(Op::CopyObject, ty, rid, r);
        Ok(())
    }
}

impl Lower<'_> {
    /// 32- or 64-bit integer -> `float`, and 64-bit integer -> `double`, with a directed
    /// rounding mode (`convert_float_rtp(int)`, `convert_double_rtz(long)` and friends): the
    /// conversion rounds to nearest; converted back (exactly, in 64 bits; a result of 2^63 or
    /// 2^64, beyond the 64-bit source's range, is above it) and compared with the source it
    /// says whether the result lies above or below, and a step to the neighbouring value
    /// gives the directed result. Exact conversions (8 and 16 bits, 32 bits to `double`) and
    /// round-to-nearest stay one conversion.
    fn int_to_float(&mut self, i: Instruction, mode: Mode) -> Result<(), String> {
        let (ty, rid) = (i.result_type.ok_or("type")?, i.result_id.ok_or("id")?);
        let signed = i.class.opcode == Op::ConvertSToF;
        let x = id_operand(&i, 0).ok_or("conversion operand")?;
        let xt = self
            .types
            .get(&x)
            .copied()
            .ok_or("conversion operand type")?;
        let directed = matches!(
            mode.rounding,
            Some(FPRoundingMode::RTZ | FPRoundingMode::RTP | FPRoundingMode::RTN)
        );
        let wi = self.width(xt)?;
        let fw = self.width(ty)?;
        if fw == 16 {
            if !directed || wi == 8 {
                self.out.push(i);
                return Ok(());
            }
            // Clamped to +-2^17 (beyond 65520 every value rounds as 2^17 does: to infinity or
            // 65504), the integer is exact in float, and float -> half rounds once.
            let lim = 1u64 << 17;
            let v = if wi > 16 {
                if signed {
                    let lo = self.int_const(xt, wi, lim.wrapping_neg());
                    let hi = self.int_const(xt, wi, lim);
                    self.glsl(45, xt, &[x, lo, hi]) // SClamp
                } else {
                    let hi = self.int_const(xt, wi, lim);
                    self.glsl(38, xt, &[x, hi]) // UMin
                }
            } else {
                x
            };
            let f32_scalar = self.float32();
            let ft = self.shaped(ty, f32_scalar);
            let f = self.emit(i.class.opcode, ft, vec![Operand::IdRef(v)]);
            return self.float_to_half(i, f, mode);
        }
        let inexact = (fw == 32 && (wi == 32 || wi == 64)) || (fw == 64 && wi == 64);
        if !directed || !inexact {
            self.out.push(i);
            return Ok(());
        }
        let f = self.emit(i.class.opcode, ty, vec![Operand::IdRef(x)]);
        let i64_scalar = self.ctx.t_int(64);
        let i64t = self.shaped(ty, i64_scalar);
        let bool_scalar = self.ctx.t_bool();
        let bt = self.shaped(ty, bool_scalar);
        let (above, below) = if wi == 32 {
            let widen = if signed { Op::SConvert } else { Op::UConvert };
            let x64 = self.emit(widen, i64t, vec![Operand::IdRef(x)]);
            let back = self.emit(Op::ConvertFToS, i64t, vec![Operand::IdRef(f)]);
            (
                self.bin(Op::SGreaterThan, bt, back, x64),
                self.bin(Op::SLessThan, bt, back, x64),
            )
        } else {
            // f may be 2^63 (signed) or 2^64 (unsigned): above every source value.
            let limit = if signed { 2f64.powi(63) } else { 2f64.powi(64) };
            let mant = if fw == 32 { 24 } else { 53 };
            let flimit = self.float_const(ty, fw, limit)?;
            let fbelow = self.float_const(ty, fw, limit * (1.0 - 2f64.powi(-mant)))?;
            let big = self.bin(Op::FOrdGreaterThanEqual, bt, f, flimit);
            let fmin = self.glsl(37, ty, &[f, fbelow]); // FMin
            let (to_int, gt, lt) = if signed {
                (Op::ConvertFToS, Op::SGreaterThan, Op::SLessThan)
            } else {
                (Op::ConvertFToU, Op::UGreaterThan, Op::ULessThan)
            };
            let back = self.emit(to_int, i64t, vec![Operand::IdRef(fmin)]);
            let gt = self.bin(gt, bt, back, x);
            let lt = self.bin(lt, bt, back, x);
            let small = self.emit(Op::LogicalNot, bt, vec![Operand::IdRef(big)]);
            (
                self.bin(Op::LogicalOr, bt, big, gt),
                self.bin(Op::LogicalAnd, bt, small, lt),
            )
        };
        // f is not 0 whenever the conversion was inexact: its sign is the source's.
        let fzero = self.float_const(ty, fw, 0.0)?;
        let pos = self.bin(Op::FOrdGreaterThan, bt, f, fzero);
        let r = self.directed(ty, fw, mode, f, pos, above, below);
        self.result(Op::CopyObject, ty, rid, r);
        Ok(())
    }

    /// `double` -> `float` with a directed rounding mode (`convert_float_rtz(double)`...):
    /// rounded to nearest, converted back (exactly) and compared with the source, then
    /// stepped to the neighbouring float as [`Self::int_to_float`] does. The step's direction
    /// comes from the source's sign (the nearest float may be a zero).
    fn narrow_float(&mut self, i: Instruction, mode: Mode) -> Result<(), String> {
        let (ty, rid) = (i.result_type.ok_or("type")?, i.result_id.ok_or("id")?);
        let x = id_operand(&i, 0).ok_or("conversion operand")?;
        let xt = self
            .types
            .get(&x)
            .copied()
            .ok_or("conversion operand type")?;
        let directed = matches!(
            mode.rounding,
            Some(FPRoundingMode::RTZ | FPRoundingMode::RTP | FPRoundingMode::RTN)
        );
        let (wi, fw) = (self.width(xt)?, self.width(ty)?);
        if wi == 32 && fw == 64 {
            // float -> double from the bits: lavapipe 25.0.7 turns OpFConvert's
            // double -> float -> double into the source double (`(double)(float)x == x`).
            let w = self.exact_widen(xt, ty, x)?;
            self.result(Op::CopyObject, ty, rid, w);
            return Ok(());
        }
        if directed && wi == 32 && fw == 16 {
            return self.float_to_half(i, x, mode);
        }
        if wi == 64 && fw == 16 {
            // Rounded to odd in float (24 >= 11 + 2 bits), then to half in the mode: one
            // rounding of the double, whatever the driver's double -> half conversion does.
            let f = self.round_to_odd_float(x, xt)?;
            return self.float_to_half(i, f, mode);
        }
        if !directed || wi != 64 || fw != 32 {
            self.out.push(i);
            return Ok(());
        }
        let f = self.emit(Op::FConvert, ty, vec![Operand::IdRef(x)]);
        let back = self.exact_widen(ty, xt, f)?;
        let bool_scalar = self.ctx.t_bool();
        let bt = self.shaped(ty, bool_scalar);
        let above = self.bin(Op::FOrdGreaterThan, bt, back, x);
        let below = self.bin(Op::FOrdLessThan, bt, back, x);
        let zero = self.float_const(xt, 64, 0.0)?;
        let pos = self.bin(Op::FOrdGreaterThan, bt, x, zero);
        let r = self.directed(ty, fw, mode, f, pos, above, below);
        self.result(Op::CopyObject, ty, rid, r);
        Ok(())
    }

    /// `f` (float, shaped `ty`) as the double of the same value (shaped `xt`), exactly even
    /// where the device flushes float subnormals (NVIDIA's Vulkan driver without
    /// `shaderDenormPreserveFloat32`: `OpFConvert` of a subnormal float gives 0, and
    /// `convert_float_rtz(double)` of a value in the float subnormal range came out rounded
    /// to nearest). A zero or subnormal float is its 23-bit significand times 2^-149, computed
    /// in double from the bits; any other float's double is built from its bits in integer
    /// arithmetic (exponent rebiased, significand shifted), with no `OpFConvert`: lavapipe
    /// 25.0.7 folds `OpFConvert` double -> float -> double back into the source double, which
    /// made every narrowing that compares the round trip with its source see it as exact
    /// (docs/devices.md).
    fn exact_widen(&mut self, ty: Word, xt: Word, f: Word) -> Result<Word, String> {
        let u32_scalar = self.ctx.t_int(32);
        let ut = self.shaped(ty, u32_scalar);
        let bool_scalar = self.ctx.t_bool();
        let bt = self.shaped(ty, bool_scalar);
        let bits = self.emit(Op::Bitcast, ut, vec![Operand::IdRef(f)]);
        let exp_mask = self.int_const(ut, 32, 0x7f80_0000);
        let exp = self.bin(Op::BitwiseAnd, ut, bits, exp_mask);
        let zero = self.int_const(ut, 32, 0);
        let tiny = self.bin(Op::IEqual, bt, exp, zero);
        let man_mask = self.int_const(ut, 32, 0x007f_ffff);
        let man = self.bin(Op::BitwiseAnd, ut, bits, man_mask);
        let mag = self.emit(Op::ConvertUToF, xt, vec![Operand::IdRef(man)]);
        let scale = self.float_const(xt, 64, f64::from_bits(0x36a0_0000_0000_0000))?; // 2^-149
        let mag = self.bin(Op::FMul, xt, mag, scale);
        let sign_mask = self.int_const(ut, 32, 0x8000_0000);
        let sign = self.bin(Op::BitwiseAnd, ut, bits, sign_mask);
        let negative = self.bin(Op::INotEqual, bt, sign, zero);
        let neg_mag = self.emit(Op::FNegate, xt, vec![Operand::IdRef(mag)]);
        let tiny_value = self.select(xt, negative, neg_mag, mag);
        let u64_scalar = self.ctx.t_int(64);
        let lt = self.shaped(ty, u64_scalar);
        let abs_mask = self.int_const(ut, 32, 0x7fff_ffff);
        let abs = self.bin(Op::BitwiseAnd, ut, bits, abs_mask);
        let abs = self.emit(Op::UConvert, lt, vec![Operand::IdRef(abs)]);
        let by29 = self.int_const(lt, 64, 29);
        let placed = self.bin(Op::ShiftLeftLogical, lt, abs, by29);
        // Exponent bias 127 -> 1023 (+896); infinities and NaNs 255 -> 2047 (+1792).
        let inf_nan = self.bin(Op::IEqual, bt, exp, exp_mask);
        let normal_bias = self.int_const(lt, 64, 896 << 52);
        let special_bias = self.int_const(lt, 64, 1792 << 52);
        let bias = self.select(lt, inf_nan, special_bias, normal_bias);
        let rebiased = self.bin(Op::IAdd, lt, placed, bias);
        let sign = self.emit(Op::UConvert, lt, vec![Operand::IdRef(sign)]);
        let by32 = self.int_const(lt, 64, 32);
        let sign = self.bin(Op::ShiftLeftLogical, lt, sign, by32);
        let wide_bits = self.bin(Op::BitwiseOr, lt, rebiased, sign);
        let widened = self.emit(Op::Bitcast, xt, vec![Operand::IdRef(wide_bits)]);
        Ok(self.select(xt, tiny, tiny_value, widened))
    }

    /// `x` (double, of `xt`'s shape) rounded to float by round-to-odd: the float nearest `x`
    /// (`OpFConvert`), and where that is inexact and its last bit clear, the float next to it
    /// towards `x` (its last bit set; FLT_MAX for a finite `x` beyond it). Rounding this float
    /// again to fewer than 23 bits rounds as `x` itself would.
    fn round_to_odd_float(&mut self, x: Word, xt: Word) -> Result<Word, String> {
        let f32_scalar = self.float32();
        let ft = self.shaped(xt, f32_scalar);
        let u32_scalar = self.ctx.t_int(32);
        let ut = self.shaped(xt, u32_scalar);
        let bool_scalar = self.ctx.t_bool();
        let bt = self.shaped(xt, bool_scalar);
        let f = self.emit(Op::FConvert, ft, vec![Operand::IdRef(x)]);
        let back = self.exact_widen(ft, xt, f)?;
        // NaN: ordered comparisons are false, nothing changes.
        let inexact = self.bin(Op::FOrdNotEqual, bt, back, x);
        let bits = self.emit(Op::Bitcast, ut, vec![Operand::IdRef(f)]);
        let one = self.int_const(ut, 32, 1);
        let zero = self.int_const(ut, 32, 0);
        let low = self.bin(Op::BitwiseAnd, ut, bits, one);
        let even = self.bin(Op::IEqual, bt, low, zero);
        let adjust = self.bin(Op::LogicalAnd, bt, inexact, even);
        // Towards x: a larger magnitude where f lies between 0 and x.
        let dzero = self.float_const(xt, 64, 0.0)?;
        let pos = self.bin(Op::FOrdGreaterThan, bt, x, dzero);
        let short = self.bin(Op::FOrdLessThan, bt, back, x);
        let grow = self.bin(Op::LogicalEqual, bt, short, pos);
        let inc = self.bin(Op::IAdd, ut, bits, one);
        let dec = self.bin(Op::ISub, ut, bits, one);
        let stepped = self.select(ut, grow, inc, dec);
        let odd = self.select(ut, adjust, stepped, bits);
        Ok(self.emit(Op::Bitcast, ft, vec![Operand::IdRef(odd)]))
    }

    /// The 32-bit float type.
    fn float32(&mut self) -> Word {
        self.ctx
            .global(Op::TypeFloat, None, vec![Operand::LiteralBit32(32)])
    }

    /// Conversion `i` (to `half` or a `half` vector) of `f` (`float` of the same shape) in
    /// `mode`: each component rounded to half precision in that direction
    /// ([`round_to_half_precision`]), then converted exactly.
    fn float_to_half(&mut self, i: Instruction, f: Word, mode: Mode) -> Result<(), String> {
        let (ty, rid) = (i.result_type.ok_or("type")?, i.result_id.ok_or("id")?);
        let m = mode
            .rounding
            .map_or(FPRoundingMode::RTE as u32, |m| m as u32);
        if m == FPRoundingMode::RTE as u32 {
            self.result(Op::FConvert, ty, rid, f);
            return Ok(());
        }
        let v = self.half_precision(ty, f, m)?;
        self.result(Op::FConvert, ty, rid, v);
        Ok(())
    }

    /// `f` (`float`, shaped like the half type `ty`) with each component rounded to half
    /// precision in rounding mode `m` ([`round_to_half_precision`]): a float whose conversion
    /// to `ty` is exact.
    fn half_precision(&mut self, ty: Word, f: Word, m: u32) -> Result<Word, String> {
        let n = self.components(ty);
        let f32t = self.float32();
        let mut comps = Vec::new();
        for k in 0..n {
            let c = if n == 1 {
                f
            } else {
                self.emit(
                    Op::CompositeExtract,
                    f32t,
                    vec![Operand::IdRef(f), Operand::LiteralBit32(k)],
                )
            };
            let r = round_to_half_precision(self.ctx, &mut self.out, c, m)?;
            comps.push(r);
        }
        Ok(if n == 1 {
            comps[0]
        } else {
            let ft = self.ctx.t_vec(f32t, n);
            let ops = comps.iter().map(|c| Operand::IdRef(*c)).collect();
            self.emit(Op::CompositeConstruct, ft, ops)
        })
    }

    /// `half` (or `half` vector) division `i`: the operands' exact `float`s divided in
    /// `float`, rounded to nearest half with integer arithmetic, converted exactly. OpenCL C
    /// 7.4 allows `x / y` 1 ulp in half; NVIDIA's Vulkan driver's half division is up to 2
    /// ulp off, and it turns a float division whose operands and result are converted
    /// from and to half into that same half division, so the rounding to half is done on
    /// the float's bits, where the driver cannot see it. A float quotient within 3 ulp of
    /// float rounded once to half is within 1 ulp of half (correctly rounded where `float`
    /// division is, as on lavapipe: 24 >= 2 * 11 + 2 bits).
    fn half_division(&mut self, i: Instruction) -> Result<(), String> {
        let (ty, rid) = (i.result_type.ok_or("type")?, i.result_id.ok_or("id")?);
        let (a, b) = (
            id_operand(&i, 0).ok_or("division operand")?,
            id_operand(&i, 1).ok_or("division operand")?,
        );
        let f32_scalar = self.float32();
        let ft = self.shaped(ty, f32_scalar);
        let fa = self.emit(Op::FConvert, ft, vec![Operand::IdRef(a)]);
        let fb = self.emit(Op::FConvert, ft, vec![Operand::IdRef(b)]);
        let q = self.bin(Op::FDiv, ft, fa, fb);
        let v = self.half_precision(ty, q, FPRoundingMode::RTE as u32)?;
        self.result(Op::FConvert, ty, rid, v);
        Ok(())
    }

    /// The directed rounding of `f` (of `fw` bits), the nearest value to a source that lies
    /// `above`/`below` it, positive when `pos`: one step up or down (in the bits: away from
    /// or towards zero by the sign) where the mode says so.
    #[allow(clippy::too_many_arguments)]
    fn directed(
        &mut self,
        ty: Word,
        fw: u32,
        mode: Mode,
        f: Word,
        pos: Word,
        above: Word,
        below: Word,
    ) -> Word {
        let bool_scalar = self.ctx.t_bool();
        let bt = self.shaped(ty, bool_scalar);
        let u_scalar = self.ctx.t_int(fw);
        let ut = self.shaped(ty, u_scalar);
        let bits = self.emit(Op::Bitcast, ut, vec![Operand::IdRef(f)]);
        let one = self.int_const(ut, fw, 1);
        let inc = self.bin(Op::IAdd, ut, bits, one);
        let dec = self.bin(Op::ISub, ut, bits, one);
        let up_bits = self.select(ut, pos, inc, dec);
        let down_bits = self.select(ut, pos, dec, inc);
        let up = self.emit(Op::Bitcast, ty, vec![Operand::IdRef(up_bits)]);
        let down = self.emit(Op::Bitcast, ty, vec![Operand::IdRef(down_bits)]);
        match mode.rounding {
            Some(FPRoundingMode::RTP) => self.select(ty, below, up, f),
            Some(FPRoundingMode::RTN) => self.select(ty, above, down, f),
            _ => {
                // Towards zero: down when f > x > 0, up when f < x < 0.
                let neg = self.emit(Op::LogicalNot, bt, vec![Operand::IdRef(pos)]);
                let go_down = self.bin(Op::LogicalAnd, bt, above, pos);
                let go_up = self.bin(Op::LogicalAnd, bt, below, neg);
                let r = self.select(ty, go_up, up, f);
                self.select(ty, go_down, down, r)
            }
        }
    }
}

/// The GLSL.std.450 import (added when missing).
pub(super) fn glsl_import(ctx: &mut Ctx) -> Word {
    let existing = ctx
        .module
        .ext_inst_imports
        .iter()
        .find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == "GLSL.std.450" => i.result_id,
            _ => None,
        });
    existing.unwrap_or_else(|| {
        let id = ctx.id();
        ctx.module.ext_inst_imports.push(inst(
            Op::ExtInstImport,
            None,
            Some(id),
            vec![Operand::LiteralString("GLSL.std.450".into())],
        ));
        id
    })
}

/// Lowers the conversions of the kernel function (see the module documentation).
///
/// # Errors
/// For a conversion whose operand type is unknown.
pub(crate) fn lower_conversions(ctx: &mut Ctx) -> Result<(), String> {
    let mut modes: HashMap<Word, Mode> = HashMap::new();
    for a in &ctx.module.annotations {
        if a.class.opcode != Op::Decorate {
            continue;
        }
        let Some(target) = id_operand(a, 0) else {
            continue;
        };
        match (a.operands.get(1), a.operands.get(2)) {
            (Some(Operand::Decoration(Decoration::SaturatedConversion)), _) => {
                modes.entry(target).or_default().saturate = true;
            }
            (
                Some(Operand::Decoration(Decoration::FPRoundingMode)),
                Some(Operand::FPRoundingMode(m)),
            ) => {
                modes.entry(target).or_default().rounding = Some(*m);
            }
            _ => {}
        }
    }
    let needed = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .any(|i| {
            matches!(i.class.opcode, Op::SatConvertSToU | Op::SatConvertUToS)
                || (matches!(
                    i.class.opcode,
                    Op::ConvertFToS
                        | Op::ConvertFToU
                        | Op::SConvert
                        | Op::UConvert
                        | Op::ConvertSToF
                        | Op::ConvertUToF
                        | Op::FConvert
                ) && i.result_id.is_some_and(|r| modes.contains_key(&r)))
                || i.class.opcode == Op::FConvert
                || (i.class.opcode == Op::FDiv
                    && i.result_type.and_then(|t| ctx.scalar_width(t)) == Some(16))
        });
    if !needed {
        return Ok(());
    }
    let glsl = glsl_import(ctx);
    let types = ctx.value_types();
    let blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let mut l = Lower {
        ctx,
        glsl,
        out: Vec::new(),
        types,
    };
    let mut new_blocks = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        for i in std::mem::take(&mut b.instructions) {
            let mode = i.result_id.and_then(|r| modes.get(&r)).copied();
            match (i.class.opcode, mode) {
                (Op::SatConvertSToU, _) => l.sat_int(&i, true, false)?,
                (Op::SatConvertUToS, _) => l.sat_int(&i, false, true)?,
                (Op::SConvert, Some(m)) if m.saturate => l.sat_int(&i, true, true)?,
                (Op::UConvert, Some(m)) if m.saturate => l.sat_int(&i, false, false)?,
                (Op::ConvertFToS | Op::ConvertFToU, Some(m)) => l.float_to_int(&i, m)?,
                (Op::ConvertSToF | Op::ConvertUToF, Some(m)) => l.int_to_float(i, m)?,
                (Op::FConvert, m) => l.narrow_float(i, m.unwrap_or_default())?,
                (Op::FDiv, _) if i.result_type.and_then(|t| l.ctx.scalar_width(t)) == Some(16) => {
                    l.half_division(i)?
                }
                _ => l.out.push(i),
            }
        }
        b.instructions = std::mem::take(&mut l.out);
        new_blocks.push(b);
    }
    ctx.module.functions[0].blocks = new_blocks;
    Ok(())
}

/// `x` (`double`, of type `xt`: scalar or vector) rounded to `float` by round-to-odd, as
/// instructions appended to `out` (the conversions' own `Lower::round_to_odd_float`).
/// Rounding the result again to half precision in any mode ([`round_to_half_precision`])
/// rounds as `x` itself would (`vstore_half_rtz(double)` and friends).
///
/// # Errors
/// A message when a constant cannot be made.
pub(crate) fn round_to_odd_float(
    ctx: &mut Ctx,
    out: &mut Vec<Instruction>,
    x: Word,
    xt: Word,
) -> Result<Word, String> {
    let mut l = Lower {
        ctx,
        glsl: 0,
        out: Vec::new(),
        types: HashMap::new(),
    };
    let r = l.round_to_odd_float(x, xt)?;
    out.append(&mut l.out);
    Ok(r)
}

/// `x` (a 32-bit float) rounded to a value of half precision in the direction of `mode`
/// (`FPRoundingMode` RTZ, RTP or RTN; OpenCL C 6.15.8 `vstore_half_rtz/rtp/rtn`), or to the
/// nearest, ties to even (RTE: half division), so that the following `OpFConvert` to half is
/// exact whatever rounding the driver applies.
///
/// Integer arithmetic on the float's bits only (a driver may fold a float -> half -> float
/// round trip away, NVIDIA does): `lo`, `|x|` truncated to half precision, keeps the
/// mantissa bits worth at least the half's step at that exponent (`2^(max(e, -14) - 10)`:
/// 13 bits cleared for normal halves, `-1 - e` below 2^-14, zero below 2^-24, 65504 from
/// 65536 on); `hi` is one step above it, infinity past 65504. RTZ takes `lo`, RTP and RTN
/// the one on their side, RTE the nearer, with `x`'s sign. NaN, infinities and values that are already
/// halves come back unchanged.
pub(crate) fn round_to_half_precision(
    ctx: &mut Ctx,
    out: &mut Vec<Instruction>,
    x: Word,
    mode: u32,
) -> Result<Word, String> {
    let f32t = ctx.global(Op::TypeFloat, None, vec![Operand::LiteralBit32(32)]);
    let (u32t, boolt) = (ctx.t_int(32), ctx.t_bool());
    let mut w = (ctx, out);
    // SPIR-V integers are signless: the signed operations below read them as signed.
    type W<'a, 'b> = (&'a mut Ctx, &'b mut Vec<Instruction>);
    let e = |w: &mut W, op: Op, ty: Word, a: &[Word]| {
        let id = w.0.id();
        let ops = a.iter().map(|&v| Operand::IdRef(v)).collect();
        w.1.push(inst(op, Some(ty), Some(id), ops));
        id
    };
    let c = |w: &mut W, v: u32| w.0.c_u32(v);
    let xbits = e(&mut w, Op::Bitcast, u32t, &[x]);
    let abs_mask = c(&mut w, 0x7fff_ffff);
    let abits = e(&mut w, Op::BitwiseAnd, u32t, &[xbits, abs_mask]);
    // Unbiased exponent e (-127 for zeros and float subnormals).
    let c23 = c(&mut w, 23);
    let biased = e(&mut w, Op::ShiftRightLogical, u32t, &[abits, c23]);
    let c127 = c(&mut w, 127);
    let exp = e(&mut w, Op::ISub, u32t, &[biased, c127]);
    // Bits to clear: 13, or -1 - e below 2^-14 (at most 23 where it matters).
    let m14 = c(&mut w, (-14i32) as u32);
    let normal = e(&mut w, Op::SGreaterThanEqual, boolt, &[exp, m14]);
    let minus1 = c(&mut w, u32::MAX);
    let sub_shift = e(&mut w, Op::ISub, u32t, &[minus1, exp]);
    let c13 = c(&mut w, 13);
    let shift = e(&mut w, Op::Select, u32t, &[normal, c13, sub_shift]);
    let c23b = c(&mut w, 23);
    let wide = e(&mut w, Op::UGreaterThan, boolt, &[shift, c23b]);
    let shift = e(&mut w, Op::Select, u32t, &[wide, c23b, shift]);
    let one = c(&mut w, 1);
    let bit = e(&mut w, Op::ShiftLeftLogical, u32t, &[one, shift]);
    let low = e(&mut w, Op::ISub, u32t, &[bit, one]);
    let keep_mask = e(&mut w, Op::Not, u32t, &[low]);
    let lo = e(&mut w, Op::BitwiseAnd, u32t, &[abits, keep_mask]);
    // Below 2^-24: zero. From 2^16 (infinity included): 65504.
    let m24 = c(&mut w, (-24i32) as u32);
    let tiny = e(&mut w, Op::SLessThan, boolt, &[exp, m24]);
    let zero = c(&mut w, 0);
    let lo = e(&mut w, Op::Select, u32t, &[tiny, zero, lo]);
    let c16 = c(&mut w, 16);
    let big = e(&mut w, Op::SGreaterThanEqual, boolt, &[exp, c16]);
    let max_half = c(&mut w, 65504f32.to_bits());
    let lo = e(&mut w, Op::Select, u32t, &[big, max_half, lo]);
    // The step above lo: 2^(max(e, -14) - 10), as the bits (k + 127) << 23.
    let clamped = e(&mut w, Op::Select, u32t, &[normal, exp, m14]);
    let c117 = c(&mut w, 117); // -10 + 127
    let biased_step = e(&mut w, Op::IAdd, u32t, &[clamped, c117]);
    let step_bits = e(&mut w, Op::ShiftLeftLogical, u32t, &[biased_step, c23]);
    let step = e(&mut w, Op::Bitcast, f32t, &[step_bits]);
    let lo_f = e(&mut w, Op::Bitcast, f32t, &[lo]);
    let hi_f = e(&mut w, Op::FAdd, f32t, &[lo_f, step]);
    let max_f = e(&mut w, Op::Bitcast, f32t, &[max_half]);
    let over = e(&mut w, Op::FOrdGreaterThan, boolt, &[hi_f, max_f]);
    let inf = c(&mut w, f32::INFINITY.to_bits());
    let hi_bits = e(&mut w, Op::Bitcast, u32t, &[hi_f]);
    let hi = e(&mut w, Op::Select, u32t, &[over, inf, hi_bits]);
    // The magnitude the mode picks.
    let chosen = if mode == FPRoundingMode::RTZ as u32 {
        lo
    } else if mode == FPRoundingMode::RTE as u32 {
        // The nearer of lo and hi (both differences are exact), lo's last half bit breaking
        // ties; 65520 and up reach hi = infinity.
        let ax = e(&mut w, Op::Bitcast, f32t, &[abits]);
        let d_lo = e(&mut w, Op::FSub, f32t, &[ax, lo_f]);
        let d_hi = e(&mut w, Op::FSub, f32t, &[hi_f, ax]);
        let closer = e(&mut w, Op::FOrdLessThan, boolt, &[d_hi, d_lo]);
        let tie = e(&mut w, Op::FOrdEqual, boolt, &[d_hi, d_lo]);
        let last = e(&mut w, Op::BitwiseAnd, u32t, &[lo, bit]);
        let odd = e(&mut w, Op::INotEqual, boolt, &[last, zero]);
        let tie_up = e(&mut w, Op::LogicalAnd, boolt, &[tie, odd]);
        let up = e(&mut w, Op::LogicalOr, boolt, &[closer, tie_up]);
        e(&mut w, Op::Select, u32t, &[up, hi, lo])
    } else {
        let negative = e(&mut w, Op::INotEqual, boolt, &[abits, xbits]);
        let (neg, pos) = match mode {
            m if m == FPRoundingMode::RTP as u32 => (lo, hi),
            m if m == FPRoundingMode::RTN as u32 => (hi, lo),
            m => return Err(format!("vstore_half: rounding mode {m}")),
        };
        e(&mut w, Op::Select, u32t, &[negative, neg, pos])
    };
    // Exact, NaN or infinite: x itself; otherwise the chosen magnitude with x's sign.
    let exact = e(&mut w, Op::IEqual, boolt, &[lo, abits]);
    let special = e(&mut w, Op::UGreaterThanEqual, boolt, &[abits, inf]);
    let keep = e(&mut w, Op::LogicalOr, boolt, &[exact, special]);
    let sign = e(&mut w, Op::BitwiseXor, u32t, &[xbits, abits]);
    let signed = e(&mut w, Op::BitwiseOr, u32t, &[chosen, sign]);
    let out = e(&mut w, Op::Select, u32t, &[keep, xbits, signed]);
    Ok(e(&mut w, Op::Bitcast, f32t, &[out]))
}
