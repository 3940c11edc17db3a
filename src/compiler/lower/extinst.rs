//! `OpenCL.std` extended instructions -> `GLSL.std.450` and core instructions. Precision is
//! whatever the Vulkan device gives for the GLSL instruction (full OpenCL precision is later
//! work, through libclc or our own implementations).

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst, lit_operand};

/// OpenCL.std number -> GLSL.std.450 number, for instructions with the same operands.
const DIRECT: &[(u32, u32)] = &[
    (0, 17),   // acos
    (1, 23),   // acosh
    (3, 16),   // asin
    (4, 22),   // asinh
    (6, 18),   // atan
    (7, 25),   // atan2
    (8, 24),   // atanh
    (12, 9),   // ceil
    (14, 14),  // cos
    (15, 20),  // cosh
    (19, 27),  // exp
    (20, 29),  // exp2
    (23, 4),   // fabs
    (25, 8),   // floor
    (26, 50),  // fma
    (27, 80),  // fmax -> NMax (NaN operands ignored, as OpenCL says)
    (28, 79),  // fmin -> NMin
    (34, 53),  // ldexp
    (37, 28),  // log
    (38, 30),  // log2
    (48, 26),  // pow
    (50, 26),  // powr
    (53, 2),   // rint -> RoundEven
    (55, 1),   // round
    (56, 32),  // rsqrt
    (57, 13),  // sin
    (59, 19),  // sinh
    (61, 31),  // sqrt
    (62, 15),  // tan
    (63, 21),  // tanh
    (66, 3),   // trunc
    (67, 14),  // half_cos
    (69, 27),  // half_exp
    (70, 29),  // half_exp2
    (72, 28),  // half_log
    (73, 30),  // half_log2
    (75, 26),  // half_powr
    (77, 32),  // half_rsqrt
    (78, 13),  // half_sin
    (79, 31),  // half_sqrt
    (80, 15),  // half_tan
    (81, 14),  // native_cos
    (83, 27),  // native_exp
    (84, 29),  // native_exp2
    (86, 28),  // native_log
    (87, 30),  // native_log2
    (89, 26),  // native_powr
    (91, 32),  // native_rsqrt
    (92, 13),  // native_sin
    (93, 31),  // native_sqrt
    (94, 15),  // native_tan
    (95, 43),  // fclamp
    (96, 12),  // degrees
    (97, 40),  // fmax_common
    (98, 37),  // fmin_common
    (99, 46),  // mix
    (100, 11), // radians
    (101, 48), // step
    (102, 49), // smoothstep
    (103, 6),  // sign
    (104, 68), // cross
    (105, 67), // distance
    (106, 66), // length
    (107, 69), // normalize
    (108, 67), // fast_distance
    (109, 66), // fast_length
    (110, 69), // fast_normalize
    (141, 5),  // s_abs
    (149, 45), // s_clamp
    (150, 44), // u_clamp
    (156, 42), // s_max
    (157, 41), // u_max
    (158, 39), // s_min
    (159, 38), // u_min
];

struct Lower<'c> {
    ctx: &'c mut Ctx,
    glsl: Word,
    out: Vec<Instruction>,
    types: std::collections::HashMap<Word, Word>,
}

impl Lower<'_> {
    fn emit(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.ctx.id();
        self.types.insert(id, ty);
        self.out.push(inst(op, Some(ty), Some(id), operands));
        id
    }

    fn glsl(&mut self, n: u32, ty: Word, args: &[Word]) -> Word {
        let mut ops = vec![Operand::IdRef(self.glsl), Operand::LiteralExtInstInteger(n)];
        ops.extend(args.iter().map(|a| Operand::IdRef(*a)));
        self.emit(Op::ExtInst, ty, ops)
    }

    /// A constant of scalar-or-vector type `ty` with every component `v`.
    fn splat(&mut self, ty: Word, v: f64, int: bool) -> Result<Word, String> {
        let d = self.ctx.def(ty).ok_or("constant type")?.clone();
        match d.class.opcode {
            Op::TypeVector => {
                let elem = id_operand(&d, 0).ok_or("vector type")?;
                let n = lit_operand(&d, 1).unwrap_or(1);
                let c = self.splat(elem, v, int)?;
                Ok(self.ctx.global(
                    Op::ConstantComposite,
                    Some(ty),
                    vec![Operand::IdRef(c); n as usize],
                ))
            }
            _ => {
                let w = self.ctx.scalar_width(ty).unwrap_or(32);
                let lit = match (int, w) {
                    (true, 64) => Operand::LiteralBit64(v as i64 as u64),
                    (true, _) => Operand::LiteralBit32(v as i64 as u32),
                    (false, 64) => Operand::LiteralBit64(v.to_bits()),
                    (false, 16) => return Err("half constants are not supported yet".into()),
                    (false, _) => Operand::LiteralBit32((v as f32).to_bits()),
                };
                Ok(self.ctx.global(Op::Constant, Some(ty), vec![lit]))
            }
        }
    }

    /// An integer constant of scalar-or-vector type `ty` with every component holding the low
    /// bits of `bits` (SPIR-V wants narrow unsigned literals zero-extended).
    fn int_splat(&mut self, ty: Word, bits: u64) -> Result<Word, String> {
        let d = self.ctx.def(ty).ok_or("constant type")?.clone();
        if d.class.opcode == Op::TypeVector {
            let elem = id_operand(&d, 0).ok_or("vector type")?;
            let n = lit_operand(&d, 1).unwrap_or(1);
            let c = self.int_splat(elem, bits)?;
            return Ok(self.ctx.global(
                Op::ConstantComposite,
                Some(ty),
                vec![Operand::IdRef(c); n as usize],
            ));
        }
        let w = self.ctx.scalar_width(ty).ok_or("integer constant width")?;
        let lit = if w == 64 {
            Operand::LiteralBit64(bits)
        } else {
            Operand::LiteralBit32((bits & ((1u64 << w) - 1)) as u32)
        };
        Ok(self.ctx.global(Op::Constant, Some(ty), vec![lit]))
    }

    /// `op a b` of type `ty`.
    fn bin(&mut self, op: Op, ty: Word, a: Word, b: Word) -> Word {
        self.emit(op, ty, vec![Operand::IdRef(a), Operand::IdRef(b)])
    }

    /// `c ? a : b` of type `ty`.
    fn select(&mut self, ty: Word, c: Word, a: Word, b: Word) -> Word {
        self.emit(
            Op::Select,
            ty,
            vec![Operand::IdRef(c), Operand::IdRef(a), Operand::IdRef(b)],
        )
    }

    /// The integer built-ins without a GLSL counterpart: `add_sat`, `sub_sat`, `hadd`, `rhadd`,
    /// `abs_diff`, `u_mad_sat`, `upsample` (OpenCL.std numbers).
    fn int_builtin(&mut self, n: u32, ty: Word, a: &[Word]) -> Result<Word, String> {
        let arg = |k: usize| {
            a.get(k)
                .copied()
                .ok_or_else(|| format!("OpenCL.std {n}: missing operand"))
        };
        let w = self.ctx.scalar_width(ty).ok_or("integer width")?;
        let bt = self.bool_like(ty);
        let umax = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let smin = 1u64 << (w - 1);
        // Saturation value for a signed overflow whose sign is that of `x`.
        let signed_limit = |l: &mut Self, x: Word| -> Result<Word, String> {
            let zero = l.int_splat(ty, 0)?;
            let neg = l.bin(Op::SLessThan, bt, x, zero);
            let min = l.int_splat(ty, smin)?;
            let max = l.int_splat(ty, smin - 1)?;
            Ok(l.select(ty, neg, min, max))
        };
        Ok(match n {
            // u_add_sat
            144 => {
                let (x, y) = (arg(0)?, arg(1)?);
                let s = self.bin(Op::IAdd, ty, x, y);
                let wrapped = self.bin(Op::ULessThan, bt, s, x);
                let max = self.int_splat(ty, umax)?;
                self.select(ty, wrapped, max, s)
            }
            // u_sub_sat
            163 => {
                let (x, y) = (arg(0)?, arg(1)?);
                let d = self.bin(Op::ISub, ty, x, y);
                let under = self.bin(Op::ULessThan, bt, x, y);
                let zero = self.int_splat(ty, 0)?;
                self.select(ty, under, zero, d)
            }
            // s_add_sat, s_sub_sat: overflow when the result's sign differs from what the
            // operands' signs force.
            143 | 162 => {
                let (x, y) = (arg(0)?, arg(1)?);
                let op = if n == 143 { Op::IAdd } else { Op::ISub };
                let r = self.bin(op, ty, x, y);
                let xr = self.bin(Op::BitwiseXor, ty, x, r);
                let other = if n == 143 {
                    self.bin(Op::BitwiseXor, ty, y, r)
                } else {
                    self.bin(Op::BitwiseXor, ty, x, y)
                };
                let both = self.bin(Op::BitwiseAnd, ty, xr, other);
                let zero = self.int_splat(ty, 0)?;
                let ovf = self.bin(Op::SLessThan, bt, both, zero);
                let lim = signed_limit(self, x)?;
                self.select(ty, ovf, lim, r)
            }
            // hadd, rhadd: (x >> 1) + (y >> 1) + ((x & y) or (x | y)) & 1
            145..=148 => {
                let (x, y) = (arg(0)?, arg(1)?);
                let shift = if n == 145 || n == 147 {
                    Op::ShiftRightArithmetic
                } else {
                    Op::ShiftRightLogical
                };
                let one = self.int_splat(ty, 1)?;
                let hx = self.bin(shift, ty, x, one);
                let hy = self.bin(shift, ty, y, one);
                let both = if n <= 146 {
                    Op::BitwiseAnd
                } else {
                    Op::BitwiseOr
                };
                let b = self.bin(both, ty, x, y);
                let b = self.bin(Op::BitwiseAnd, ty, b, one);
                let s = self.bin(Op::IAdd, ty, hx, hy);
                self.bin(Op::IAdd, ty, s, b)
            }
            // s_abs_diff, u_abs_diff
            142 | 202 => {
                let (x, y) = (arg(0)?, arg(1)?);
                let gt = if n == 142 {
                    Op::SGreaterThan
                } else {
                    Op::UGreaterThan
                };
                let c = self.bin(gt, bt, x, y);
                let d1 = self.bin(Op::ISub, ty, x, y);
                let d2 = self.bin(Op::ISub, ty, y, x);
                self.select(ty, c, d1, d2)
            }
            // u_mad_sat: any high product bit saturates (z cannot bring it back).
            154 => {
                let (x, y, z) = (arg(0)?, arg(1)?, arg(2)?);
                // A struct of its own: a shared one might carry layout decorations.
                let st = self.ctx.id();
                self.ctx.module.types_global_values.push(inst(
                    Op::TypeStruct,
                    None,
                    Some(st),
                    vec![Operand::IdRef(ty), Operand::IdRef(ty)],
                ));
                let r = self.bin(Op::UMulExtended, st, x, y);
                let lo = self.emit(
                    Op::CompositeExtract,
                    ty,
                    vec![Operand::IdRef(r), Operand::LiteralBit32(0)],
                );
                let hi = self.emit(
                    Op::CompositeExtract,
                    ty,
                    vec![Operand::IdRef(r), Operand::LiteralBit32(1)],
                );
                let s = self.int_builtin(144, ty, &[lo, z])?;
                let zero = self.int_splat(ty, 0)?;
                let big = self.bin(Op::INotEqual, bt, hi, zero);
                let max = self.int_splat(ty, umax)?;
                self.select(ty, big, max, s)
            }
            // u_upsample, s_upsample: (hi << w/2) | lo, both widened without sign.
            164 | 165 => {
                let (hi, lo) = (arg(0)?, arg(1)?);
                let h = self.emit(Op::UConvert, ty, vec![Operand::IdRef(hi)]);
                let l = self.emit(Op::UConvert, ty, vec![Operand::IdRef(lo)]);
                let half = self.int_splat(ty, u64::from(w / 2))?;
                let h = self.bin(Op::ShiftLeftLogical, ty, h, half);
                self.bin(Op::BitwiseOr, ty, h, l)
            }
            _ => return Err(format!("OpenCL.std instruction {n} is not supported yet")),
        })
    }

    /// Boolean (vector) type matching the shape of `ty`.
    fn bool_like(&mut self, ty: Word) -> Word {
        let b = self.ctx.t_bool();
        match self
            .ctx
            .def(ty)
            .filter(|d| d.class.opcode == Op::TypeVector)
            .and_then(|d| lit_operand(d, 1))
        {
            Some(n) => self.ctx.t_vec(b, n),
            None => b,
        }
    }

    fn ext(&mut self, i: Instruction) -> Result<(), String> {
        let n = lit_operand(&i, 1).ok_or("ext inst number")?;
        let ty = i.result_type.ok_or("ext inst type")?;
        let rid = i.result_id.ok_or("ext inst id")?;
        let a: Vec<Word> = (2..i.operands.len())
            .filter_map(|k| id_operand(&i, k))
            .collect();
        let arg = |k: usize| {
            a.get(k)
                .copied()
                .ok_or_else(|| format!("OpenCL.std {n}: missing operand"))
        };
        let v = if let Some((_, g)) = DIRECT.iter().find(|(c, _)| *c == n) {
            self.glsl(*g, ty, &a)
        } else {
            match n {
                29 => self.emit(
                    Op::FRem,
                    ty,
                    vec![Operand::IdRef(arg(0)?), Operand::IdRef(arg(1)?)],
                ),
                42 => {
                    let m = self.emit(
                        Op::FMul,
                        ty,
                        vec![Operand::IdRef(arg(0)?), Operand::IdRef(arg(1)?)],
                    );
                    self.emit(
                        Op::FAdd,
                        ty,
                        vec![Operand::IdRef(m), Operand::IdRef(arg(2)?)],
                    )
                }
                68 | 82 => self.emit(
                    Op::FDiv,
                    ty,
                    vec![Operand::IdRef(arg(0)?), Operand::IdRef(arg(1)?)],
                ),
                76 | 90 => {
                    let one = self.splat(ty, 1.0, false)?;
                    self.emit(
                        Op::FDiv,
                        ty,
                        vec![Operand::IdRef(one), Operand::IdRef(arg(0)?)],
                    )
                }
                21 | 71 | 85 => {
                    let k = self.splat(ty, std::f64::consts::LOG2_10, false)?;
                    let m = self.emit(
                        Op::FMul,
                        ty,
                        vec![Operand::IdRef(arg(0)?), Operand::IdRef(k)],
                    );
                    self.glsl(29, ty, &[m])
                }
                39 | 74 | 88 => {
                    let l = self.glsl(30, ty, &[arg(0)?]);
                    let k = self.splat(ty, std::f64::consts::LOG10_2, false)?;
                    self.emit(Op::FMul, ty, vec![Operand::IdRef(l), Operand::IdRef(k)])
                }
                22 => {
                    let e = self.glsl(27, ty, &[arg(0)?]);
                    let one = self.splat(ty, 1.0, false)?;
                    self.emit(Op::FSub, ty, vec![Operand::IdRef(e), Operand::IdRef(one)])
                }
                40 => {
                    let one = self.splat(ty, 1.0, false)?;
                    let s = self.emit(
                        Op::FAdd,
                        ty,
                        vec![Operand::IdRef(arg(0)?), Operand::IdRef(one)],
                    );
                    self.glsl(28, ty, &[s])
                }
                32 => {
                    let (x, y) = (arg(0)?, arg(1)?);
                    let xx = self.emit(Op::FMul, ty, vec![Operand::IdRef(x), Operand::IdRef(x)]);
                    let yy = self.emit(Op::FMul, ty, vec![Operand::IdRef(y), Operand::IdRef(y)]);
                    let s = self.emit(Op::FAdd, ty, vec![Operand::IdRef(xx), Operand::IdRef(yy)]);
                    self.glsl(31, ty, &[s])
                }
                201 => self.emit(Op::CopyObject, ty, vec![Operand::IdRef(arg(0)?)]),
                160 | 203 | 153 | 204 => {
                    let op = if n == 160 || n == 153 {
                        Op::SMulExtended
                    } else {
                        Op::UMulExtended
                    };
                    let st = self.ctx.id();
                    self.ctx.module.types_global_values.push(inst(
                        Op::TypeStruct,
                        None,
                        Some(st),
                        vec![Operand::IdRef(ty), Operand::IdRef(ty)],
                    ));
                    let r = self.emit(
                        op,
                        st,
                        vec![Operand::IdRef(arg(0)?), Operand::IdRef(arg(1)?)],
                    );
                    let hi = self.emit(
                        Op::CompositeExtract,
                        ty,
                        vec![Operand::IdRef(r), Operand::LiteralBit32(1)],
                    );
                    if n == 153 || n == 204 {
                        self.emit(
                            Op::IAdd,
                            ty,
                            vec![Operand::IdRef(hi), Operand::IdRef(arg(2)?)],
                        )
                    } else {
                        hi
                    }
                }
                169 | 170 => self.emit(
                    Op::IMul,
                    ty,
                    vec![Operand::IdRef(arg(0)?), Operand::IdRef(arg(1)?)],
                ),
                167 | 168 => {
                    let m = self.emit(
                        Op::IMul,
                        ty,
                        vec![Operand::IdRef(arg(0)?), Operand::IdRef(arg(1)?)],
                    );
                    self.emit(
                        Op::IAdd,
                        ty,
                        vec![Operand::IdRef(m), Operand::IdRef(arg(2)?)],
                    )
                }
                166 | 151 | 152 => {
                    if self.ctx.scalar_width(ty) != Some(32) {
                        return Err(
                            "popcount/clz/ctz on other than 32-bit integers are not supported yet"
                                .into(),
                        );
                    }
                    let x = arg(0)?;
                    match n {
                        166 => self.emit(Op::BitCount, ty, vec![Operand::IdRef(x)]),
                        151 => {
                            let msb = self.glsl(75, ty, &[x]);
                            let c31 = self.splat(ty, 31.0, true)?;
                            self.emit(Op::ISub, ty, vec![Operand::IdRef(c31), Operand::IdRef(msb)])
                        }
                        _ => {
                            let lsb = self.glsl(73, ty, &[x]);
                            let zero = self.splat(ty, 0.0, true)?;
                            let c32 = self.splat(ty, 32.0, true)?;
                            let bt = self.bool_like(ty);
                            let is0 = self.emit(
                                Op::IEqual,
                                bt,
                                vec![Operand::IdRef(x), Operand::IdRef(zero)],
                            );
                            self.emit(
                                Op::Select,
                                ty,
                                vec![
                                    Operand::IdRef(is0),
                                    Operand::IdRef(c32),
                                    Operand::IdRef(lsb),
                                ],
                            )
                        }
                    }
                }
                161 => {
                    let (x, s) = (arg(0)?, arg(1)?);
                    let w = f64::from(self.ctx.scalar_width(ty).unwrap_or(32));
                    let mask = self.splat(ty, w - 1.0, true)?;
                    let wc = self.splat(ty, w, true)?;
                    let s = self.emit(
                        Op::BitwiseAnd,
                        ty,
                        vec![Operand::IdRef(s), Operand::IdRef(mask)],
                    );
                    let r = self.emit(Op::ISub, ty, vec![Operand::IdRef(wc), Operand::IdRef(s)]);
                    let r = self.emit(
                        Op::BitwiseAnd,
                        ty,
                        vec![Operand::IdRef(r), Operand::IdRef(mask)],
                    );
                    let hi = self.emit(
                        Op::ShiftLeftLogical,
                        ty,
                        vec![Operand::IdRef(x), Operand::IdRef(s)],
                    );
                    let lo = self.emit(
                        Op::ShiftRightLogical,
                        ty,
                        vec![Operand::IdRef(x), Operand::IdRef(r)],
                    );
                    // A rotate by 0 shifts right by 0 too: x | x = x.
                    self.emit(
                        Op::BitwiseOr,
                        ty,
                        vec![Operand::IdRef(hi), Operand::IdRef(lo)],
                    )
                }
                187 => {
                    let (x, y, c) = (arg(0)?, arg(1)?, arg(2)?);
                    let ct = self.types.get(&c).copied().ok_or("select condition type")?;
                    let is_vec = self
                        .ctx
                        .def(ct)
                        .is_some_and(|d| d.class.opcode == Op::TypeVector);
                    let bt = self.bool_like(ct);
                    let zero = self.splat(ct, 0.0, true)?;
                    let cond = if is_vec {
                        self.emit(
                            Op::SLessThan,
                            bt,
                            vec![Operand::IdRef(c), Operand::IdRef(zero)],
                        )
                    } else {
                        self.emit(
                            Op::INotEqual,
                            bt,
                            vec![Operand::IdRef(c), Operand::IdRef(zero)],
                        )
                    };
                    self.emit(
                        Op::Select,
                        ty,
                        vec![Operand::IdRef(cond), Operand::IdRef(y), Operand::IdRef(x)],
                    )
                }
                186 => {
                    let (x, y, c) = (arg(0)?, arg(1)?, arg(2)?);
                    if self
                        .ctx
                        .def(ty)
                        .is_some_and(|d| d.class.opcode == Op::TypeFloat)
                        || self
                            .ctx
                            .def(ty)
                            .and_then(|d| id_operand(d, 0))
                            .and_then(|e| self.ctx.def_op(e))
                            == Some(Op::TypeFloat)
                    {
                        return Err(
                            "bitselect on floating-point values is not supported yet".into()
                        );
                    }
                    let nc = self.emit(Op::Not, ty, vec![Operand::IdRef(c)]);
                    let l = self.emit(
                        Op::BitwiseAnd,
                        ty,
                        vec![Operand::IdRef(x), Operand::IdRef(nc)],
                    );
                    let r = self.emit(
                        Op::BitwiseAnd,
                        ty,
                        vec![Operand::IdRef(y), Operand::IdRef(c)],
                    );
                    self.emit(
                        Op::BitwiseOr,
                        ty,
                        vec![Operand::IdRef(l), Operand::IdRef(r)],
                    )
                }
                142..=148 | 154 | 162..=165 | 202 => self.int_builtin(n, ty, &a)?,
                184 => return Err("printf is not supported yet".into()),
                other => {
                    return Err(format!(
                        "OpenCL.std instruction {other} is not supported yet"
                    ))
                }
            }
        };
        // Give the final value the original id.
        if let Some(last) = self.out.last_mut() {
            if last.result_id == Some(v) {
                last.result_id = Some(rid);
                self.types.insert(rid, ty);
                return Ok(());
            }
        }
        self.out.push(inst(
            Op::CopyObject,
            Some(ty),
            Some(rid),
            vec![Operand::IdRef(v)],
        ));
        Ok(())
    }
}

/// Replaces every `OpenCL.std` instruction of the kernel function.
///
/// # Errors
/// For OpenCL built-ins without a lowering yet (named by number).
pub(crate) fn lower_ext_inst(ctx: &mut Ctx) -> Result<(), String> {
    let Some(cl) = ctx
        .module
        .ext_inst_imports
        .iter()
        .find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == "OpenCL.std" => i.result_id,
            _ => None,
        })
    else {
        return Ok(());
    };
    let glsl = ctx.id();
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
            if i.class.opcode == Op::ExtInst && id_operand(&i, 0) == Some(cl) {
                l.ext(i)?;
            } else {
                l.out.push(i);
            }
        }
        b.instructions = std::mem::take(&mut l.out);
        new_blocks.push(b);
    }
    ctx.module.functions[0].blocks = new_blocks;
    ctx.module
        .ext_inst_imports
        .retain(|i| i.result_id != Some(cl));
    ctx.module.ext_inst_imports.push(inst(
        Op::ExtInstImport,
        None,
        Some(glsl),
        vec![Operand::LiteralString("GLSL.std.450".into())],
    ));
    Ok(())
}
