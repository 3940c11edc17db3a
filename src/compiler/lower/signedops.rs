//! Signed integer instructions on signed integer types, for drivers that read an
//! instruction's signedness from its operands' types.
//!
//! Kernel SPIR-V (llvm-spirv) declares every integer type with signedness 0, and SPIR-V says
//! the signedness of an `OpSRem`, `OpSLessThan` or `SClamp` comes from the opcode alone. Every
//! GLSL or HLSL compiler instead gives signed instructions signed operands, and NVIDIA's
//! Vulkan driver (580.159, H200) gets some signed instructions on unsigned-typed values wrong,
//! silently. Measured with `vkcl-difftest` on 2026-12-02: 27 of 3,000 random kernels
//! differed from the host there (lavapipe: none), and the reduced ones all hold a signed
//! instruction whose operand is a constant (or folds to one) with the sign bit set:
//! `OpSRem %uint %uint_4294967295 %uint_3` gave 0 (the unsigned remainder) where `-1 % 3` is
//! -1; `OpSRem` of -347600648 by 128 gave 120; `1 % -1` gave 1; a loop from `i = -2` while
//! `i < n` (`OpSLessThan` on a phi of `%uint_4294967294`) ran no pass.
//!
//! This pass gives each signed instruction signed-typed operands and result, as glslang would
//! write it: a constant operand becomes the signed constant of the same bits, any other
//! operand an `OpBitcast` to the signed type, and an integer result is computed in the signed
//! type and bitcast back to the original id, so every use stays as it is. A bitcast between
//! integer types of one width changes no bit, so the module computes what it did before on
//! every device.
//!
//! Covered: `OpSDiv`, `OpSRem`, `OpSMod`, `OpSNegate`, `OpShiftRightArithmetic` (the shifted
//! value), `OpSConvert`, `OpConvertSToF`, the four signed comparisons, `GLSL.std.450` `SAbs`,
//! `SSign`, `SMin`, `SMax`, `SClamp` and `FindSMsb`, and `OpGroupNonUniformSMin`/`SMax`.
//! Not covered: `OpAtomicSMin`/`SMax` (their operand is a pointer to memory of the unsigned
//! type) and `OpSMulExtended` (a struct result; vkcl's lowering does not emit it).
//!
//! Used where [`DeviceCaps::signed_int_types`](crate::compiler::caps::DeviceCaps) is set
//! (NVIDIA's driver, or `VKCL_SIGNED_INT_TYPES=1`).

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::inst;

/// `GLSL.std.450` instructions with signed operands: SAbs, SSign, SMin, SMax, SClamp, FindSMsb.
const GLSL_SIGNED: &[u32] = &[5, 7, 39, 42, 45, 74];

/// Which operands (indices into `operands`) of `i` are signed integers, and whether its
/// integer result is signed too; `None` for an instruction this pass leaves alone.
fn signed_roles(i: &Instruction, glsl: Option<Word>) -> Option<(Vec<usize>, bool)> {
    Some(match i.class.opcode {
        Op::SDiv | Op::SRem | Op::SMod => (vec![0, 1], true),
        Op::SNegate | Op::ShiftRightArithmetic | Op::SConvert => (vec![0], true),
        Op::ConvertSToF => (vec![0], false),
        Op::SLessThan | Op::SLessThanEqual | Op::SGreaterThan | Op::SGreaterThanEqual => {
            (vec![0, 1], false)
        }
        Op::GroupNonUniformSMin | Op::GroupNonUniformSMax => (vec![2], true),
        Op::ExtInst => {
            let set = match i.operands.first() {
                Some(Operand::IdRef(s)) => *s,
                _ => return None,
            };
            let number = match i.operands.get(1) {
                Some(Operand::LiteralExtInstInteger(n)) | Some(Operand::LiteralBit32(n)) => *n,
                _ => return None,
            };
            if Some(set) != glsl || !GLSL_SIGNED.contains(&number) {
                return None;
            }
            ((2..i.operands.len()).collect(), true)
        }
        _ => return None,
    })
}

/// The id of the module's `GLSL.std.450` import, if any.
fn glsl_set(ctx: &Ctx) -> Option<Word> {
    ctx.module
        .ext_inst_imports
        .iter()
        .find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == "GLSL.std.450" => i.result_id,
            _ => None,
        })
}

/// Finds or makes signed counterparts of unsigned integer types and constants.
struct Signed {
    /// Unsigned integer scalar or vector type -> its signed counterpart.
    types: HashMap<Word, Word>,
    /// Unsigned constant -> the signed constant of the same bits.
    constants: HashMap<Word, Word>,
}

impl Signed {
    /// The signed counterpart of `ty` (an integer scalar or vector type), or `None` when `ty`
    /// is no integer type (a float of `OpConvertSToF`'s result, a bool).
    fn ty(&mut self, ctx: &mut Ctx, ty: Word) -> Option<Word> {
        if let Some(&s) = self.types.get(&ty) {
            return Some(s);
        }
        let def = ctx.def(ty)?.clone();
        let s = match def.class.opcode {
            Op::TypeInt => match (def.operands.first(), def.operands.get(1)) {
                (Some(Operand::LiteralBit32(w)), Some(Operand::LiteralBit32(0))) => ctx.global(
                    Op::TypeInt,
                    None,
                    vec![Operand::LiteralBit32(*w), Operand::LiteralBit32(1)],
                ),
                (Some(Operand::LiteralBit32(_)), Some(Operand::LiteralBit32(1))) => ty,
                _ => return None,
            },
            Op::TypeVector => {
                let (Some(Operand::IdRef(elem)), Some(Operand::LiteralBit32(n))) =
                    (def.operands.first(), def.operands.get(1))
                else {
                    return None;
                };
                let (elem, n) = (*elem, *n);
                let se = self.ty(ctx, elem)?;
                ctx.t_vec(se, n)
            }
            _ => return None,
        };
        self.types.insert(ty, s);
        Some(s)
    }

    /// The signed constant of the same bits as constant `id` of unsigned type `ty`, or `None`
    /// when `id` is not a plain constant (`OpConstant`, `OpConstantComposite` of constants,
    /// `OpConstantNull`).
    fn constant(&mut self, ctx: &mut Ctx, id: Word, sty: Word) -> Option<Word> {
        if let Some(&c) = self.constants.get(&id) {
            return Some(c);
        }
        let def = ctx.def(id)?.clone();
        let c = match def.class.opcode {
            Op::Constant | Op::ConstantNull => {
                ctx.global(def.class.opcode, Some(sty), def.operands)
            }
            Op::ConstantComposite => {
                let elem = match ctx.def(sty).map(|d| d.operands.first().cloned()) {
                    Some(Some(Operand::IdRef(e))) => e,
                    _ => return None,
                };
                let mut parts = Vec::with_capacity(def.operands.len());
                for o in &def.operands {
                    let Operand::IdRef(p) = o else { return None };
                    parts.push(Operand::IdRef(self.constant(ctx, *p, elem)?));
                }
                ctx.global(Op::ConstantComposite, Some(sty), parts)
            }
            _ => return None,
        };
        self.constants.insert(id, c);
        Some(c)
    }
}

/// Rewrites every covered signed instruction onto signed types (see the module doc).
///
/// # Errors
/// None today; the signature matches the other passes.
pub(crate) fn sign_signed_ops(ctx: &mut Ctx) -> Result<(), String> {
    let glsl = glsl_set(ctx);
    let any = ctx
        .module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .any(|i| signed_roles(i, glsl).is_some());
    if !any {
        return Ok(());
    }
    let types = ctx.value_types();
    let mut signed = Signed {
        types: HashMap::new(),
        constants: HashMap::new(),
    };
    let mut functions = std::mem::take(&mut ctx.module.functions);
    for b in functions.iter_mut().flat_map(|f| f.blocks.iter_mut()) {
        let mut out = Vec::with_capacity(b.instructions.len());
        for mut i in std::mem::take(&mut b.instructions) {
            let Some((roles, signed_result)) = signed_roles(&i, glsl) else {
                out.push(i);
                continue;
            };
            for k in roles {
                let Some(Operand::IdRef(v)) = i.operands.get(k).cloned() else {
                    continue;
                };
                let Some(&vt) = types.get(&v) else { continue };
                let Some(st) = signed.ty(ctx, vt) else {
                    continue;
                };
                if st == vt {
                    continue;
                }
                let nv = match signed.constant(ctx, v, st) {
                    Some(c) => c,
                    None => {
                        let c = ctx.id();
                        out.push(inst(
                            Op::Bitcast,
                            Some(st),
                            Some(c),
                            vec![Operand::IdRef(v)],
                        ));
                        c
                    }
                };
                i.operands[k] = Operand::IdRef(nv);
            }
            let retype = match (signed_result, i.result_type, i.result_id) {
                (true, Some(rt), Some(rid)) => signed
                    .ty(ctx, rt)
                    .filter(|&st| st != rt)
                    .map(|st| (rt, rid, st)),
                _ => None,
            };
            match retype {
                Some((rt, rid, st)) => {
                    let tmp = ctx.id();
                    i.result_type = Some(st);
                    i.result_id = Some(tmp);
                    out.push(i);
                    out.push(inst(
                        Op::Bitcast,
                        Some(rt),
                        Some(rid),
                        vec![Operand::IdRef(tmp)],
                    ));
                }
                None => out.push(i),
            }
        }
        b.instructions = out;
    }
    ctx.module.functions = functions;
    Ok(())
}
