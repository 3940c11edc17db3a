//! `vload_half`/`vstore_half` and their vector and aligned (`vloada_half`) forms: `half` in
//! memory, `float` (or `double`) in registers, converted with `OpFConvert`.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{FPRoundingMode, Op, Word};

use super::Walk;
use crate::compiler::spv::{id_operand, inst, lit_operand};

const VLOAD_HALF: u32 = 173;
const VLOAD_HALFN: u32 = 174;
const VSTORE_HALF: u32 = 175;
const VSTORE_HALF_R: u32 = 176;
const VSTORE_HALFN: u32 = 177;
const VSTORE_HALFN_R: u32 = 178;
const VLOADA_HALFN: u32 = 179;
const VSTOREA_HALFN_R: u32 = 181;

impl Walk<'_> {
    /// Lowers OpenCL.std instruction `n` (173..=181) of the half family.
    pub(super) fn half(&mut self, i: &Instruction, n: u32) -> Result<(), String> {
        let arg = |k: usize| id_operand(i, 2 + k).ok_or_else(|| format!("OpenCL.std {n}: operand"));
        let half = self
            .ctx
            .global(Op::TypeFloat, None, vec![Operand::LiteralBit32(16)]);
        let components = |w: &Self, ty: Word| -> (Word, u32) {
            match w.ctx.def(ty).filter(|d| d.class.opcode == Op::TypeVector) {
                Some(d) => (
                    id_operand(d, 0).unwrap_or(ty),
                    lit_operand(d, 1).unwrap_or(1),
                ),
                None => (ty, 1),
            }
        };
        // Elements between consecutive vectors: the aligned forms pad 3 to 4.
        let stride = |count: u32, aligned: bool| if aligned && count == 3 { 4 } else { count };
        if matches!(n, VLOAD_HALF | VLOAD_HALFN | VLOADA_HALFN) {
            let (offset, p) = (arg(0)?, arg(1)?);
            let p = self.alias.get(&p).copied().unwrap_or(p);
            let ty = i.result_type.ok_or("vload_half type")?;
            let (elem, count) = components(self, ty);
            let step = stride(count, n == VLOADA_HALFN);
            let mut comps = Vec::new();
            for k in 0..count {
                let idx = self.vector_index(offset, step, k)?;
                let ep = self.element_ptr(p, idx, half)?;
                let mo = self.mem_operands(ep, &[], half);
                let h = self.emit(Op::Load, half, [vec![Operand::IdRef(ep)], mo].concat());
                comps.push(self.emit(Op::FConvert, elem, vec![Operand::IdRef(h)]));
            }
            let rid = i.result_id.ok_or("vload_half id")?;
            self.types.insert(rid, ty);
            let (op, ops) = if count == 1 {
                (Op::CopyObject, vec![Operand::IdRef(comps[0])])
            } else {
                (
                    Op::CompositeConstruct,
                    comps.iter().map(|c| Operand::IdRef(*c)).collect(),
                )
            };
            self.out.push(inst(op, Some(ty), Some(rid), ops));
            return Ok(());
        }
        let (data, offset, p) = (arg(0)?, arg(1)?, arg(2)?);
        let p = self.alias.get(&p).copied().unwrap_or(p);
        // The rounding mode of the `_r` forms: a literal (rspirv reads the operands of an
        // extended instruction as ids, so the literal comes as an id number).
        let mode = match (n, i.operands.get(5)) {
            (VSTORE_HALF_R | VSTORE_HALFN_R | VSTOREA_HALFN_R, Some(m)) => match m {
                Operand::FPRoundingMode(m) => *m as u32,
                Operand::IdRef(m) | Operand::LiteralBit32(m) => *m,
                _ => return Err(format!("OpenCL.std {n}: rounding mode operand {m:?}")),
            },
            _ => FPRoundingMode::RTE as u32,
        };
        let ty = self.ty(data).ok_or("vstore_half type")?;
        let (elem, count) = components(self, ty);
        let aligned = !matches!(
            n,
            VSTORE_HALF | VSTORE_HALF_R | VSTORE_HALFN | VSTORE_HALFN_R
        );
        let step = stride(count, aligned);
        for k in 0..count {
            let c = if count == 1 {
                data
            } else {
                self.emit(
                    Op::CompositeExtract,
                    elem,
                    vec![Operand::IdRef(data), Operand::LiteralBit32(k)],
                )
            };
            let c = if mode == FPRoundingMode::RTE as u32 || elem != self.float32() {
                c
            } else {
                self.round_to_half_precision(c, mode)?
            };
            let h = self.emit(Op::FConvert, half, vec![Operand::IdRef(c)]);
            let idx = self.vector_index(offset, step, k)?;
            let ep = self.element_ptr(p, idx, half)?;
            let mo = self.mem_operands(ep, &[], half);
            self.out.push(inst(
                Op::Store,
                None,
                None,
                [vec![Operand::IdRef(ep), Operand::IdRef(h)], mo].concat(),
            ));
        }
        Ok(())
    }

    /// The 32-bit float type.
    fn float32(&mut self) -> Word {
        self.ctx
            .global(Op::TypeFloat, None, vec![Operand::LiteralBit32(32)])
    }

    /// `x` (a 32-bit float) rounded to a value of half precision in the direction of `mode`
    /// (`FPRoundingMode` RTZ, RTP or RTN; OpenCL C 6.15.8 `vstore_half_rtz/rtp/rtn`), so that
    /// the following `OpFConvert` to half is exact whatever rounding the driver applies.
    ///
    /// The driver's conversion gives one of the two halves around `|x|` (`lo <= |x| <= hi`);
    /// the other is one half-precision step away, found from the exponent in the float's bits:
    /// a step is `2^(max(e, -14) - 10)`, and just below a power of two `2^e` (with `e > -14`) it
    /// is `2^(e - 11)`. Above 65504 the step up is infinity and the step down from infinity is
    /// 65504. NaN, zeros and values that are already halves come back unchanged.
    fn round_to_half_precision(&mut self, x: Word, mode: u32) -> Result<Word, String> {
        let (f32t, u32t, boolt) = (self.float32(), self.ctx.t_int(32), self.ctx.t_bool());
        let i32t = u32t; // SPIR-V integers are signless: the signed ops below read them as signed
        let fc = |w: &mut Self, v: f32| {
            w.ctx.global(
                Op::Constant,
                Some(f32t),
                vec![Operand::LiteralBit32(v.to_bits())],
            )
        };
        let uc = |w: &mut Self, v: u32| w.ctx.c_u32(v);
        let half = self
            .ctx
            .global(Op::TypeFloat, None, vec![Operand::LiteralBit32(16)]);
        let e = |w: &mut Self, op: Op, ty: Word, a: &[Word]| {
            w.emit(op, ty, a.iter().map(|&v| Operand::IdRef(v)).collect())
        };
        // |x| and the driver's nearest half of it, back in float (exact).
        let xbits = e(self, Op::Bitcast, u32t, &[x]);
        let abs_mask = uc(self, 0x7fff_ffff);
        let abits = e(self, Op::BitwiseAnd, u32t, &[xbits, abs_mask]);
        let a = e(self, Op::Bitcast, f32t, &[abits]);
        let h = e(self, Op::FConvert, half, &[a]);
        let near = e(self, Op::FConvert, f32t, &[h]);
        // 2^k as a float from an exponent k (in range here): the bits (k + 127) << 23.
        let pow2 = |w: &mut Self, k: Word| {
            let b = uc(w, 127);
            let biased = e(w, Op::IAdd, i32t, &[k, b]);
            let s23 = uc(w, 23);
            let bits = e(w, Op::ShiftLeftLogical, u32t, &[biased, s23]);
            e(w, Op::Bitcast, f32t, &[bits])
        };
        // The exponent of `near` and whether it is a power of two.
        let bits = e(self, Op::Bitcast, u32t, &[near]);
        let s23 = uc(self, 23);
        let shifted = e(self, Op::ShiftRightLogical, u32t, &[bits, s23]);
        let m8 = uc(self, 0xff);
        let biased = e(self, Op::BitwiseAnd, u32t, &[shifted, m8]);
        let c127 = uc(self, 127);
        let exp = e(self, Op::ISub, i32t, &[biased, c127]);
        let mman = uc(self, 0x7f_ffff);
        let man = e(self, Op::BitwiseAnd, u32t, &[bits, mman]);
        let zero = uc(self, 0);
        let is_pow2 = e(self, Op::IEqual, boolt, &[man, zero]);
        let m14 = uc(self, (-14i32) as u32);
        let above_min = e(self, Op::SGreaterThan, boolt, &[exp, m14]);
        let narrow = e(self, Op::LogicalAnd, boolt, &[is_pow2, above_min]);
        let clamped = e(self, Op::Select, i32t, &[above_min, exp, m14]);
        let c10 = uc(self, 10);
        let c11 = uc(self, 11);
        let k_up = e(self, Op::ISub, i32t, &[clamped, c10]);
        let k_small = e(self, Op::ISub, i32t, &[exp, c11]);
        let step_up = pow2(self, k_up);
        let step_small = pow2(self, k_small);
        let step_down = e(self, Op::Select, f32t, &[narrow, step_small, step_up]);
        // The two neighbours of |x|.
        let up = e(self, Op::FAdd, f32t, &[near, step_up]);
        let max_half = fc(self, 65504.0);
        let inf = fc(self, f32::INFINITY);
        let over = e(self, Op::FOrdGreaterThan, boolt, &[up, max_half]);
        let up = e(self, Op::Select, f32t, &[over, inf, up]);
        let down = e(self, Op::FSub, f32t, &[near, step_down]);
        let near_inf = e(self, Op::IsInf, boolt, &[near]);
        let down = e(self, Op::Select, f32t, &[near_inf, max_half, down]);
        let near_below = e(self, Op::FOrdLessThan, boolt, &[near, a]);
        let lo = e(self, Op::Select, f32t, &[near_below, near, down]);
        let hi = e(self, Op::Select, f32t, &[near_below, up, near]);
        // The magnitude the mode picks: towards zero, or away from it on the mode's side.
        let chosen = if mode == FPRoundingMode::RTZ as u32 {
            lo
        } else {
            let fzero = fc(self, 0.0);
            let positive = e(self, Op::FOrdGreaterThan, boolt, &[x, fzero]);
            let (pos, neg) = match mode {
                m if m == FPRoundingMode::RTP as u32 => (hi, lo),
                m if m == FPRoundingMode::RTN as u32 => (lo, hi),
                m => return Err(format!("vstore_half: rounding mode {m}")),
            };
            e(self, Op::Select, f32t, &[positive, pos, neg])
        };
        // Exact (or NaN): unchanged. Otherwise the chosen magnitude with x's sign.
        let exact = e(self, Op::FUnordEqual, boolt, &[near, a]);
        let nan = e(self, Op::IsNan, boolt, &[x]);
        let keep = e(self, Op::LogicalOr, boolt, &[exact, nan]);
        let sign_mask = uc(self, 0x8000_0000);
        let sign = e(self, Op::BitwiseAnd, u32t, &[xbits, sign_mask]);
        let cbits = e(self, Op::Bitcast, u32t, &[chosen]);
        let signed = e(self, Op::BitwiseOr, u32t, &[cbits, sign]);
        let signed = e(self, Op::Bitcast, f32t, &[signed]);
        Ok(e(self, Op::Select, f32t, &[keep, x, signed]))
    }
}
