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
                let ep = self.first_scalar(ep)?;
                let h = self.load_through(ep, half)?;
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
            let ep = self.first_scalar(ep)?;
            self.store_through(ep, h, half)?;
        }
        Ok(())
    }

    /// `ep` itself, or, when it points to an array (a `ushort data[16]` viewed as `half *`
    /// at its start: the view folds to the variable), a pointer to the array's first scalar.
    fn first_scalar(&mut self, ep: Word) -> Result<Word, String> {
        let mut ep = ep;
        while let Some((sc, pointee)) = self.ty(ep).and_then(|t| self.ctx.ptr_info(t)) {
            let Some(d) = self
                .ctx
                .def(pointee)
                .filter(|d| d.class.opcode == Op::TypeArray)
            else {
                break;
            };
            let elem = id_operand(d, 0).ok_or("array element type")?;
            let ty = self.ctx.t_ptr(sc, elem);
            let zero = self.ctx.c_u32(0);
            ep = self.emit(
                Op::AccessChain,
                ty,
                vec![Operand::IdRef(ep), Operand::IdRef(zero)],
            );
        }
        Ok(ep)
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
    /// Integer arithmetic on the float's bits only (a driver may fold a float -> half -> float
    /// round trip away, NVIDIA does): `lo`, `|x|` truncated to half precision, keeps the
    /// mantissa bits worth at least the half's step at that exponent (`2^(max(e, -14) - 10)`:
    /// 13 bits cleared for normal halves, `-1 - e` below 2^-14, zero below 2^-24, 65504 from
    /// 65536 on); `hi` is one step above it, infinity past 65504. RTZ takes `lo`, RTP and RTN
    /// the one on their side, with `x`'s sign. NaN, infinities and values that are already
    /// halves come back unchanged.
    fn round_to_half_precision(&mut self, x: Word, mode: u32) -> Result<Word, String> {
        let (f32t, u32t, boolt) = (self.float32(), self.ctx.t_int(32), self.ctx.t_bool());
        // SPIR-V integers are signless: the signed operations below read them as signed.
        let e = |w: &mut Self, op: Op, ty: Word, a: &[Word]| {
            w.emit(op, ty, a.iter().map(|&v| Operand::IdRef(v)).collect())
        };
        let c = |w: &mut Self, v: u32| w.ctx.c_u32(v);
        let xbits = e(self, Op::Bitcast, u32t, &[x]);
        let abs_mask = c(self, 0x7fff_ffff);
        let abits = e(self, Op::BitwiseAnd, u32t, &[xbits, abs_mask]);
        // Unbiased exponent e (-127 for zeros and float subnormals).
        let c23 = c(self, 23);
        let biased = e(self, Op::ShiftRightLogical, u32t, &[abits, c23]);
        let c127 = c(self, 127);
        let exp = e(self, Op::ISub, u32t, &[biased, c127]);
        // Bits to clear: 13, or -1 - e below 2^-14 (at most 23 where it matters).
        let m14 = c(self, (-14i32) as u32);
        let normal = e(self, Op::SGreaterThanEqual, boolt, &[exp, m14]);
        let minus1 = c(self, u32::MAX);
        let sub_shift = e(self, Op::ISub, u32t, &[minus1, exp]);
        let c13 = c(self, 13);
        let shift = e(self, Op::Select, u32t, &[normal, c13, sub_shift]);
        let c23b = c(self, 23);
        let wide = e(self, Op::UGreaterThan, boolt, &[shift, c23b]);
        let shift = e(self, Op::Select, u32t, &[wide, c23b, shift]);
        let one = c(self, 1);
        let bit = e(self, Op::ShiftLeftLogical, u32t, &[one, shift]);
        let low = e(self, Op::ISub, u32t, &[bit, one]);
        let keep_mask = e(self, Op::Not, u32t, &[low]);
        let lo = e(self, Op::BitwiseAnd, u32t, &[abits, keep_mask]);
        // Below 2^-24: zero. From 2^16 (infinity included): 65504.
        let m24 = c(self, (-24i32) as u32);
        let tiny = e(self, Op::SLessThan, boolt, &[exp, m24]);
        let zero = c(self, 0);
        let lo = e(self, Op::Select, u32t, &[tiny, zero, lo]);
        let c16 = c(self, 16);
        let big = e(self, Op::SGreaterThanEqual, boolt, &[exp, c16]);
        let max_half = c(self, 65504f32.to_bits());
        let lo = e(self, Op::Select, u32t, &[big, max_half, lo]);
        // The step above lo: 2^(max(e, -14) - 10), as the bits (k + 127) << 23.
        let clamped = e(self, Op::Select, u32t, &[normal, exp, m14]);
        let c117 = c(self, 117); // -10 + 127
        let biased_step = e(self, Op::IAdd, u32t, &[clamped, c117]);
        let step_bits = e(self, Op::ShiftLeftLogical, u32t, &[biased_step, c23]);
        let step = e(self, Op::Bitcast, f32t, &[step_bits]);
        let lo_f = e(self, Op::Bitcast, f32t, &[lo]);
        let hi_f = e(self, Op::FAdd, f32t, &[lo_f, step]);
        let max_f = e(self, Op::Bitcast, f32t, &[max_half]);
        let over = e(self, Op::FOrdGreaterThan, boolt, &[hi_f, max_f]);
        let inf = c(self, f32::INFINITY.to_bits());
        let hi_bits = e(self, Op::Bitcast, u32t, &[hi_f]);
        let hi = e(self, Op::Select, u32t, &[over, inf, hi_bits]);
        // The magnitude the mode picks.
        let chosen = if mode == FPRoundingMode::RTZ as u32 {
            lo
        } else {
            let negative = e(self, Op::INotEqual, boolt, &[abits, xbits]);
            let (neg, pos) = match mode {
                m if m == FPRoundingMode::RTP as u32 => (lo, hi),
                m if m == FPRoundingMode::RTN as u32 => (hi, lo),
                m => return Err(format!("vstore_half: rounding mode {m}")),
            };
            e(self, Op::Select, u32t, &[negative, neg, pos])
        };
        // Exact, NaN or infinite: x itself; otherwise the chosen magnitude with x's sign.
        let exact = e(self, Op::IEqual, boolt, &[lo, abits]);
        let special = e(self, Op::UGreaterThanEqual, boolt, &[abits, inf]);
        let keep = e(self, Op::LogicalOr, boolt, &[exact, special]);
        let sign = e(self, Op::BitwiseXor, u32t, &[xbits, abits]);
        let signed = e(self, Op::BitwiseOr, u32t, &[chosen, sign]);
        let out = e(self, Op::Select, u32t, &[keep, xbits, signed]);
        Ok(e(self, Op::Bitcast, f32t, &[out]))
    }
}
