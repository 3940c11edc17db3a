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
            let f32t = self.float32();
            let c = if mode == FPRoundingMode::RTE as u32 || self.ctx.scalar_width(elem) == Some(16)
            {
                c
            } else if elem == f32t {
                self.round_to_half_precision(c, mode)?
            } else {
                // double: to float by round-to-odd first, so that rounding that float to half
                // in `mode` rounds as the double would (the nearest float could be a tie or
                // exact where the double is not: 2.49999999999 became 2.5).
                let f = self.round_to_odd_float(c, elem)?;
                self.round_to_half_precision(f, mode)?
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

    /// `x` (a double) rounded to float by round-to-odd
    /// ([`crate::compiler::lower::convert::round_to_odd_float`]).
    fn round_to_odd_float(&mut self, x: Word, xt: Word) -> Result<Word, String> {
        let mut code = Vec::new();
        let r = super::super::convert::round_to_odd_float(self.ctx, &mut code, x, xt)?;
        self.append_typed(code);
        Ok(r)
    }

    /// Appends instructions made outside this pass, recording their result types.
    fn append_typed(&mut self, code: Vec<Instruction>) {
        for i in code {
            if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
                self.types.insert(id, ty);
            }
            self.out.push(i);
        }
    }

    /// `x` (a 32-bit float) rounded to half precision in the direction of `mode`
    /// ([`crate::compiler::lower::convert::round_to_half_precision`]).
    fn round_to_half_precision(&mut self, x: Word, mode: u32) -> Result<Word, String> {
        let mut code = Vec::new();
        let r = super::super::convert::round_to_half_precision(self.ctx, &mut code, x, mode)?;
        self.append_typed(code);
        Ok(r)
    }
}
