//! `OpenCL.std` extended instructions -> `GLSL.std.450` and core instructions. Precision is
//! whatever the Vulkan device gives for the GLSL instruction. The `float` math functions whose
//! GLSL precision misses the OpenCL limits (`sin`, `exp`, `pow`... list in
//! `compiler/mathlib.rs`) normally never get here: libclc's implementations are linked and
//! inlined at the LLVM level, and only the simple built-ins they use (`fabs`, `mad`, `trunc`,
//! `mul_hi`...) arrive as `OpenCL.std`. The lowerings below for those functions serve
//! `double`/`half` operands, `native_*`/`half_*` variants and builds without libclc
//! (`VKCL_LIBCLC=0`).

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst, lit_operand};

/// OpenCL.std number -> GLSL.std.450 number, for instructions with the same operands.
const DIRECT: &[(u32, u32)] = &[
    (0, 17),   // acos
    (3, 16),   // asin
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
    (37, 28),  // log
    (38, 30),  // log2
    (48, 26),  // pow
    (50, 26),  // powr
    (53, 2),   // rint -> RoundEven
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

/// GLSL.std.450 instructions (of [`DIRECT`]) that accept 64-bit floats; the transcendental
/// ones (sin, exp, pow, ...) take 16- and 32-bit floats only.
const GLSL_64: &[u32] = &[
    1, 2, 3, 4, 5, 6, 8, 9, 10, 31, 32, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 48, 49, 50, 53, 66,
    67, 68, 69, 79, 80, 81,
];

struct Lower<'c> {
    ctx: &'c mut Ctx,
    glsl: Word,
    out: Vec<Instruction>,
    types: std::collections::HashMap<Word, Word>,
    /// `mad` as two roundings (NoContraction) rather than left to the driver to fuse.
    exact_mad: bool,
    /// Result ids given to another instruction's result (from -> to): their decorations
    /// move with them, all at once at the end ([`retarget_decorations`]).
    renamed: std::collections::HashMap<Word, Word>,
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
            // s_mad_sat: the double-width product (SMulExtended) plus z sign-extended
            // (IAddCarry on the low halves), saturated when the high half is not the low
            // half's sign extension.
            155 => {
                let (x, y, z) = (arg(0)?, arg(1)?, arg(2)?);
                let pair = |l: &mut Self| {
                    // A struct of its own: a shared one might carry layout decorations.
                    let st = l.ctx.id();
                    l.ctx.module.types_global_values.push(inst(
                        Op::TypeStruct,
                        None,
                        Some(st),
                        vec![Operand::IdRef(ty), Operand::IdRef(ty)],
                    ));
                    st
                };
                let part = |l: &mut Self, v: Word, k: u32| {
                    l.emit(
                        Op::CompositeExtract,
                        ty,
                        vec![Operand::IdRef(v), Operand::LiteralBit32(k)],
                    )
                };
                let st = pair(self);
                let p = self.bin(Op::SMulExtended, st, x, y);
                let (lo, hi) = (part(self, p, 0), part(self, p, 1));
                let st2 = pair(self);
                let sum = self.bin(Op::IAddCarry, st2, lo, z);
                let (lo2, carry) = (part(self, sum, 0), part(self, sum, 1));
                let top = self.int_splat(ty, u64::from(w - 1))?;
                let zhi = self.bin(Op::ShiftRightArithmetic, ty, z, top);
                let hi2 = self.bin(Op::IAdd, ty, hi, zhi);
                let hi2 = self.bin(Op::IAdd, ty, hi2, carry);
                let ext = self.bin(Op::ShiftRightArithmetic, ty, lo2, top);
                let fits = self.bin(Op::IEqual, bt, hi2, ext);
                let lim = signed_limit(self, hi2)?;
                self.select(ty, fits, lo2, lim)
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

    /// Number of components of `ty` (1 for scalars).
    fn components(&self, ty: Word) -> u32 {
        self.ctx
            .def(ty)
            .filter(|d| d.class.opcode == Op::TypeVector)
            .and_then(|d| lit_operand(d, 1))
            .unwrap_or(1)
    }

    /// An integer type of `width` bits shaped like `ty` (scalar or vector).
    fn int_like(&mut self, ty: Word, width: u32) -> Word {
        let t = self.ctx.t_int(width);
        match self.components(ty) {
            1 => t,
            n => self.ctx.t_vec(t, n),
        }
    }

    /// Core `OpBitReverse` (LLVM's `bitreverse`, which LLVM makes from shift-and-mask bit
    /// reversal, e.g. `bit_reverse` of `cl_khr_extended_bit_ops`) on 8-, 16- or 64-bit
    /// integers: Vulkan's takes 32-bit operands only. A narrow value is reversed in 32 bits
    /// and shifted down; a 64-bit one as two halves that trade places.
    fn bit_reverse(&mut self, ty: Word, x: Word) -> Result<Word, String> {
        let w = self.ctx.scalar_width(ty).ok_or("integer width")?;
        let t32 = self.int_like(ty, 32);
        Ok(match w {
            64 => {
                let c32 = self.int_splat(ty, 32)?;
                let hi = self.bin(Op::ShiftRightLogical, ty, x, c32);
                let hi = self.emit(Op::UConvert, t32, vec![Operand::IdRef(hi)]);
                let lo = self.emit(Op::UConvert, t32, vec![Operand::IdRef(x)]);
                let rh = self.emit(Op::BitReverse, t32, vec![Operand::IdRef(hi)]);
                let rl = self.emit(Op::BitReverse, t32, vec![Operand::IdRef(lo)]);
                let low = self.emit(Op::UConvert, ty, vec![Operand::IdRef(rh)]);
                let high = self.emit(Op::UConvert, ty, vec![Operand::IdRef(rl)]);
                let high = self.bin(Op::ShiftLeftLogical, ty, high, c32);
                self.bin(Op::BitwiseOr, ty, high, low)
            }
            w if w < 32 => {
                let v = self.emit(Op::UConvert, t32, vec![Operand::IdRef(x)]);
                let r = self.emit(Op::BitReverse, t32, vec![Operand::IdRef(v)]);
                let shift = self.int_splat(t32, u64::from(32 - w))?;
                let r = self.bin(Op::ShiftRightLogical, t32, r, shift);
                self.emit(Op::UConvert, ty, vec![Operand::IdRef(r)])
            }
            _ => self.emit(Op::BitReverse, ty, vec![Operand::IdRef(x)]),
        })
    }

    /// popcount (166), clz (151), ctz (152) on integers of any width: Vulkan's bit
    /// instructions take 32-bit operands only, so narrow types are widened and 64-bit ones
    /// split into halves.
    fn bit_count(&mut self, n: u32, ty: Word, x: Word) -> Result<Word, String> {
        let w = self.ctx.scalar_width(ty).ok_or("integer width")?;
        let t32 = self.int_like(ty, 32);
        // The operation on a 32-bit value, result 32-bit.
        let on32 = |l: &mut Self, v: Word| -> Result<Word, String> {
            Ok(match n {
                166 => l.emit(Op::BitCount, t32, vec![Operand::IdRef(v)]),
                151 => {
                    let msb = l.glsl(75, t32, &[v]);
                    let c31 = l.int_splat(t32, 31)?;
                    l.bin(Op::ISub, t32, c31, msb)
                }
                _ => {
                    let lsb = l.glsl(73, t32, &[v]);
                    let zero = l.int_splat(t32, 0)?;
                    let c32 = l.int_splat(t32, 32)?;
                    let bt32 = l.bool_like(t32);
                    let is0 = l.bin(Op::IEqual, bt32, v, zero);
                    l.select(t32, is0, c32, lsb)
                }
            })
        };
        match w {
            32 => on32(self, x),
            64 => {
                let c32 = self.int_splat(ty, 32)?;
                let hi = self.bin(Op::ShiftRightLogical, ty, x, c32);
                let hi = self.emit(Op::UConvert, t32, vec![Operand::IdRef(hi)]);
                let lo = self.emit(Op::UConvert, t32, vec![Operand::IdRef(x)]);
                let (rh, rl) = (on32(self, hi)?, on32(self, lo)?);
                let r = match n {
                    166 => self.bin(Op::IAdd, t32, rh, rl),
                    _ => {
                        // clz: the high half unless it is all zero; ctz: the other way round.
                        let (first, rfirst, rsecond) =
                            if n == 151 { (hi, rh, rl) } else { (lo, rl, rh) };
                        let zero = self.int_splat(t32, 0)?;
                        let bt32 = self.bool_like(t32);
                        let empty = self.bin(Op::IEqual, bt32, first, zero);
                        let k32 = self.int_splat(t32, 32)?;
                        let more = self.bin(Op::IAdd, t32, k32, rsecond);
                        self.select(t32, empty, more, rfirst)
                    }
                };
                Ok(self.emit(Op::UConvert, ty, vec![Operand::IdRef(r)]))
            }
            8 | 16 => {
                let v = self.emit(Op::UConvert, t32, vec![Operand::IdRef(x)]);
                let r = on32(self, v)?;
                let r = match n {
                    166 => r,
                    151 => {
                        let k = self.int_splat(t32, u64::from(32 - w))?;
                        self.bin(Op::ISub, t32, r, k)
                    }
                    _ => {
                        let kw = self.int_splat(t32, u64::from(w))?;
                        self.glsl(38, t32, &[r, kw])
                    }
                };
                Ok(self.emit(Op::UConvert, ty, vec![Operand::IdRef(r)]))
            }
            _ => Err(format!("bit counts on {w}-bit integers are not supported")),
        }
    }

    /// shuffle (182) and shuffle2 (183): each result component picks the source component its
    /// mask component names (low bits only, as OpenCL says).
    fn shuffle(&mut self, n: u32, ty: Word, a: &[Word]) -> Result<Word, String> {
        let x = a.first().copied().ok_or("shuffle operand")?;
        let (y, mask) = if n == 183 {
            (Some(a[1]), *a.get(2).ok_or("shuffle2 mask")?)
        } else {
            (None, *a.get(1).ok_or("shuffle mask")?)
        };
        let xt = self.types.get(&x).copied().ok_or("shuffle operand type")?;
        let mt = self.types.get(&mask).copied().ok_or("shuffle mask type")?;
        let src_n = u64::from(self.components(xt));
        let elem = self
            .ctx
            .def(ty)
            .and_then(|d| id_operand(d, 0))
            .ok_or("shuffle result type")?;
        let melem = self
            .ctx
            .def(mt)
            .and_then(|d| id_operand(d, 0))
            .ok_or("shuffle mask element type")?;
        let bool_t = self.ctx.t_bool();
        let pick = self.int_splat(melem, src_n - 1)?;
        let second = self.int_splat(melem, src_n)?;
        let mut parts = Vec::new();
        for k in 0..self.components(ty) {
            let m = self.emit(
                Op::CompositeExtract,
                melem,
                vec![Operand::IdRef(mask), Operand::LiteralBit32(k)],
            );
            let idx = self.bin(Op::BitwiseAnd, melem, m, pick);
            let from_x = self.emit(
                Op::VectorExtractDynamic,
                elem,
                vec![Operand::IdRef(x), Operand::IdRef(idx)],
            );
            let v = match y {
                None => from_x,
                Some(y) => {
                    let from_y = self.emit(
                        Op::VectorExtractDynamic,
                        elem,
                        vec![Operand::IdRef(y), Operand::IdRef(idx)],
                    );
                    let in_y = self.bin(Op::BitwiseAnd, melem, m, second);
                    let zero = self.int_splat(melem, 0)?;
                    let use_y = self.bin(Op::INotEqual, bool_t, in_y, zero);
                    self.select(elem, use_y, from_y, from_x)
                }
            };
            parts.push(Operand::IdRef(v));
        }
        Ok(self.emit(Op::CompositeConstruct, ty, parts))
    }

    /// Floating-point built-ins built from bit operations and GLSL instructions: copysign
    /// (13), fdim (24), cbrt (11), maxmag (43), minmag (44), pown (49), rootn (54).
    fn float_builtin(&mut self, n: u32, ty: Word, a: &[Word]) -> Result<Word, String> {
        let arg = |k: usize| {
            a.get(k)
                .copied()
                .ok_or_else(|| format!("OpenCL.std {n}: missing operand"))
        };
        let w = self.ctx.scalar_width(ty).ok_or("float width")?;
        let it = self.int_like(ty, w);
        let bt = self.bool_like(ty);
        let sign_bit = 1u64 << (w - 1);
        Ok(match n {
            13 => {
                let (x, y) = (arg(0)?, arg(1)?);
                let xi = self.emit(Op::Bitcast, it, vec![Operand::IdRef(x)]);
                let yi = self.emit(Op::Bitcast, it, vec![Operand::IdRef(y)]);
                let sign = self.int_splat(it, sign_bit)?;
                let magnitude = self.int_splat(it, sign_bit - 1)?;
                let xm = self.bin(Op::BitwiseAnd, it, xi, magnitude);
                let ys = self.bin(Op::BitwiseAnd, it, yi, sign);
                let r = self.bin(Op::BitwiseOr, it, xm, ys);
                self.emit(Op::Bitcast, ty, vec![Operand::IdRef(r)])
            }
            24 => {
                // x > y ? x - y : +0, NaN when either is NaN.
                let (x, y) = (arg(0)?, arg(1)?);
                let d = self.bin(Op::FSub, ty, x, y);
                let zero = self.splat(ty, 0.0, false)?;
                let gt = self.bin(Op::FOrdGreaterThan, bt, x, y);
                let pos = self.select(ty, gt, d, zero);
                let unordered = self.bin(Op::FUnordNotEqual, bt, x, y);
                let ordered_ne = self.bin(Op::FOrdNotEqual, bt, x, y);
                let nan = self.bin(Op::LogicalNotEqual, bt, unordered, ordered_ne);
                self.select(ty, nan, d, pos)
            }
            11 | 54 => {
                // cbrt(x) = sign(x) |x|^(1/3); rootn(x, k) the same with 1/k, NaN for
                // negative x and even k.
                let x = arg(0)?;
                let ax = self.glsl(4, ty, &[x]);
                let inv = if n == 11 {
                    self.splat(ty, 1.0 / 3.0, false)?
                } else {
                    let k = arg(1)?;
                    let kf = self.emit(Op::ConvertSToF, ty, vec![Operand::IdRef(k)]);
                    let one = self.splat(ty, 1.0, false)?;
                    self.bin(Op::FDiv, ty, one, kf)
                };
                let p = self.glsl(26, ty, &[ax, inv]);
                let r = self.float_builtin(13, ty, &[p, x])?;
                if n == 11 {
                    r
                } else {
                    let k = arg(1)?;
                    let even = self.is_even(k)?;
                    let zero = self.splat(ty, 0.0, false)?;
                    let neg = self.bin(Op::FOrdLessThan, bt, x, zero);
                    let bad = self.bin(Op::LogicalAnd, bt, even, neg);
                    let nan = self.splat(ty, f64::NAN, false)?;
                    self.select(ty, bad, nan, r)
                }
            }
            49 => {
                // pown(x, k) = |x|^k with the sign of x when k is odd.
                let (x, k) = (arg(0)?, arg(1)?);
                let ax = self.glsl(4, ty, &[x]);
                let kf = self.emit(Op::ConvertSToF, ty, vec![Operand::IdRef(k)]);
                let p = self.glsl(26, ty, &[ax, kf]);
                let even = self.is_even(k)?;
                // even: |x|^k; odd: copysign(|x|^k, x)
                let signed = self.float_builtin(13, ty, &[p, x])?;
                self.select(ty, even, p, signed)
            }
            43 | 44 => {
                let (x, y) = (arg(0)?, arg(1)?);
                let ax = self.glsl(4, ty, &[x]);
                let ay = self.glsl(4, ty, &[y]);
                let (first, second) = if n == 43 {
                    (Op::FOrdGreaterThan, Op::FOrdLessThan)
                } else {
                    (Op::FOrdLessThan, Op::FOrdGreaterThan)
                };
                let fallback = self.glsl(if n == 43 { 80 } else { 79 }, ty, &[x, y]);
                let pick_y = self.bin(second, bt, ax, ay);
                let r = self.select(ty, pick_y, y, fallback);
                let pick_x = self.bin(first, bt, ax, ay);
                self.select(ty, pick_x, x, r)
            }
            _ => return Err(format!("OpenCL.std instruction {n} is not supported yet")),
        })
    }

    /// `OpStore ptr value`, `Aligned` (to the value's natural alignment) through physical
    /// pointers.
    fn store(&mut self, ptr: Word, value: Word, value_ty: Word) -> Result<(), String> {
        let pty = self
            .types
            .get(&ptr)
            .copied()
            .ok_or("pointer operand type")?;
        let (sc, _) = self.ctx.ptr_info(pty).ok_or("pointer operand")?;
        let mut ops = vec![Operand::IdRef(ptr), Operand::IdRef(value)];
        if sc == rspirv::spirv::StorageClass::PhysicalStorageBuffer {
            let bytes = self.ctx.scalar_width(value_ty).unwrap_or(32) / 8;
            let n = match self.components(value_ty) {
                3 => 4,
                n => n,
            };
            ops.push(Operand::MemoryAccess(rspirv::spirv::MemoryAccess::ALIGNED));
            ops.push(Operand::LiteralBit32(bytes * n));
        }
        self.out.push(inst(Op::Store, None, None, ops));
        Ok(())
    }

    /// fract (30), frexp (31) and modf (45): a value plus a result stored through a pointer.
    fn with_pointer(&mut self, n: u32, ty: Word, a: &[Word]) -> Result<Word, String> {
        let (x, ptr) = match a {
            [x, p, ..] => (*x, *p),
            _ => return Err(format!("OpenCL.std {n}: missing operand")),
        };
        Ok(match n {
            30 => {
                // fract: min(x - floor(x), 0x1.fffffep-1), *ptr = floor(x); x itself for NaN
                // and ±0, ±0 for ±inf (x - floor(x) is NaN there, which FMin would drop).
                let fl = self.glsl(8, ty, &[x]);
                let d = self.bin(Op::FSub, ty, x, fl);
                let w = self.ctx.scalar_width(ty).unwrap_or(32);
                let below_one = if w == 64 {
                    1.0 - f64::EPSILON / 2.0
                } else {
                    f64::from(1.0f32 - f32::EPSILON / 2.0)
                };
                let c = self.splat(ty, below_one, false)?;
                let r = self.glsl(37, ty, &[d, c]);
                let bt = self.bool_like(ty);
                let inf = self.emit(Op::IsInf, bt, vec![Operand::IdRef(x)]);
                let zero = self.splat(ty, 0.0, false)?;
                let signed_zero = self.float_builtin(13, ty, &[zero, x])?;
                let r = self.select(ty, inf, signed_zero, r);
                let nan = self.emit(Op::IsNan, bt, vec![Operand::IdRef(x)]);
                let is_zero = self.bin(Op::FOrdEqual, bt, x, zero);
                let keep = self.bin(Op::LogicalOr, bt, nan, is_zero);
                let r = self.select(ty, keep, x, r);
                self.store(ptr, fl, ty)?;
                r
            }
            45 => {
                // modf: x - trunc(x) with the sign of x (so -0 for -0 and negative integers;
                // signed zero for infinities), *ptr = trunc(x)
                let t = self.glsl(3, ty, &[x]);
                let d = self.bin(Op::FSub, ty, x, t);
                let bt = self.bool_like(ty);
                let inf = self.emit(Op::IsInf, bt, vec![Operand::IdRef(x)]);
                let zero = self.splat(ty, 0.0, false)?;
                let d = self.select(ty, inf, zero, d);
                let r = self.float_builtin(13, ty, &[d, x])?;
                self.store(ptr, t, ty)?;
                r
            }
            _ => {
                // frexp through FrexpStruct: { mantissa, exponent }. 32-bit subnormals are
                // first scaled by 2^24 (exact), their exponent lowered by 24: llvmpipe's
                // Frexp reads the exponent field only.
                let pty = self.types.get(&ptr).copied().ok_or("frexp pointer type")?;
                let et = self.ctx.ptr_info(pty).ok_or("frexp pointer")?.1;
                // (doubles: by 2^54, the same way.)
                let w = self.ctx.scalar_width(ty);
                let shift = if w == Some(64) { 54 } else { 24 };
                let sub = if matches!(w, Some(32) | Some(64)) {
                    let bt = self.bool_like(ty);
                    let ax = self.glsl(4, ty, &[x]);
                    let min_pos = if w == Some(64) {
                        f64::MIN_POSITIVE
                    } else {
                        f64::from(f32::MIN_POSITIVE)
                    };
                    let min = self.splat(ty, min_pos, false)?;
                    let zero = self.splat(ty, 0.0, false)?;
                    let below = self.bin(Op::FOrdLessThan, bt, ax, min);
                    let nonzero = self.bin(Op::FOrdNotEqual, bt, x, zero);
                    let sub = self.bin(Op::LogicalAnd, bt, below, nonzero);
                    let k = self.splat(ty, 2f64.powi(shift), false)?;
                    let one = self.splat(ty, 1.0, false)?;
                    let scale = self.select(ty, sub, k, one);
                    Some((sub, self.bin(Op::FMul, ty, x, scale)))
                } else {
                    None
                };
                let x = sub.map_or(x, |(_, scaled)| scaled);
                let st = self.ctx.id();
                self.ctx.module.types_global_values.push(inst(
                    Op::TypeStruct,
                    None,
                    Some(st),
                    vec![Operand::IdRef(ty), Operand::IdRef(et)],
                ));
                let r = self.glsl(52, st, &[x]);
                let m = self.emit(
                    Op::CompositeExtract,
                    ty,
                    vec![Operand::IdRef(r), Operand::LiteralBit32(0)],
                );
                let e = self.emit(
                    Op::CompositeExtract,
                    et,
                    vec![Operand::IdRef(r), Operand::LiteralBit32(1)],
                );
                let e = match sub {
                    Some((is_sub, _)) => {
                        let k = self.int_splat(et, shift as u64)?;
                        let lowered = self.bin(Op::ISub, et, e, k);
                        self.select(et, is_sub, lowered, e)
                    }
                    None => e,
                };
                // *exp is 0 for ±inf and NaN.
                let bt = self.bool_like(ty);
                let inf = self.emit(Op::IsInf, bt, vec![Operand::IdRef(x)]);
                let nan = self.emit(Op::IsNan, bt, vec![Operand::IdRef(x)]);
                let special = self.bin(Op::LogicalOr, bt, inf, nan);
                let ezero = self.int_splat(et, 0)?;
                let e = self.select(et, special, ezero, e);
                self.store(ptr, e, et)?;
                m
            }
        })
    }

    /// The `pi` variants (asinpi 5, acospi 2, atanpi 9, atan2pi 10: the GLSL result over pi;
    /// sinpi 60, cospi 16, tanpi 64: the argument reduced exactly to [-1, 1] or [-0.5, 0.5]
    /// first), logb (41), ilogb (33), nan (46) and nextafter (47, exact, on the bits).
    fn more_float(&mut self, n: u32, ty: Word, a: &[Word]) -> Result<Word, String> {
        let arg = |k: usize| {
            a.get(k)
                .copied()
                .ok_or_else(|| format!("OpenCL.std {n}: missing operand"))
        };
        let pi = std::f64::consts::PI;
        Ok(match n {
            2 | 5 | 9 | 10 => {
                let g = match n {
                    2 => 17,
                    5 => 16,
                    9 => 18,
                    _ => 25,
                };
                let args: Vec<Word> = if n == 10 {
                    vec![arg(0)?, arg(1)?]
                } else {
                    vec![arg(0)?]
                };
                let r = self.glsl(g, ty, &args);
                let inv = self.splat(ty, 1.0 / pi, false)?;
                self.bin(Op::FMul, ty, r, inv)
            }
            16 | 60 | 64 => {
                let x = arg(0)?;
                // t = x - period * round(x / period): exact for floats.
                let period = if n == 64 { 1.0 } else { 2.0 };
                let inv_p = self.splat(ty, 1.0 / period, false)?;
                let p = self.splat(ty, period, false)?;
                let q = self.bin(Op::FMul, ty, x, inv_p);
                let q = self.glsl(2, ty, &[q]);
                let m = self.bin(Op::FMul, ty, q, p);
                let t = self.bin(Op::FSub, ty, x, m);
                let k = self.splat(ty, pi, false)?;
                let angle = self.bin(Op::FMul, ty, t, k);
                let g = match n {
                    16 => 14,
                    60 => 13,
                    _ => 15,
                };
                self.glsl(g, ty, &[angle])
            }
            33 | 41 => {
                // Through frexp: x = m 2^e with 0.5 <= |m| < 1, so logb(x) = e - 1.
                let x0 = arg(0)?;
                let xt = self.types.get(&x0).copied().ok_or("logb operand type")?;
                let it = self.int_like(xt, 32);
                // Subnormal doubles: scaled by 2^54 (exact) first, the exponent lowered by 54
                // after (lavapipe's Frexp reads the exponent field only).
                let sub64 = if self.ctx.scalar_width(xt) == Some(64) {
                    let bt = self.bool_like(xt);
                    let ax = self.glsl(4, xt, &[x0]);
                    let min = self.splat(xt, f64::MIN_POSITIVE, false)?;
                    let zero = self.splat(xt, 0.0, false)?;
                    let below = self.bin(Op::FOrdLessThan, bt, ax, min);
                    let nonzero = self.bin(Op::FOrdNotEqual, bt, x0, zero);
                    let sub = self.bin(Op::LogicalAnd, bt, below, nonzero);
                    let k = self.splat(xt, 2f64.powi(54), false)?;
                    let one = self.splat(xt, 1.0, false)?;
                    let scale = self.select(xt, sub, k, one);
                    Some((sub, self.bin(Op::FMul, xt, x0, scale)))
                } else {
                    None
                };
                let x = sub64.map_or(x0, |(_, scaled)| scaled);
                let st = self.ctx.id();
                self.ctx.module.types_global_values.push(inst(
                    Op::TypeStruct,
                    None,
                    Some(st),
                    vec![Operand::IdRef(xt), Operand::IdRef(it)],
                ));
                let fr = self.glsl(52, st, &[x]);
                let e = self.emit(
                    Op::CompositeExtract,
                    it,
                    vec![Operand::IdRef(fr), Operand::LiteralBit32(1)],
                );
                let one = self.int_splat(it, 1)?;
                let e = self.bin(Op::ISub, it, e, one);
                let e = match sub64 {
                    Some((is_sub, _)) => {
                        let k = self.int_splat(it, 54)?;
                        let lowered = self.bin(Op::ISub, it, e, k);
                        self.select(it, is_sub, lowered, e)
                    }
                    None => e,
                };
                let bt = self.bool_like(xt);
                // Subnormal floats (exponent field 0, lavapipe's frexp gets them wrong): the
                // exponent is that of the mantissa's top bit, FindUMsb(m) - 149.
                let e = if self.ctx.scalar_width(xt) == Some(32) {
                    let bits = self.emit(Op::Bitcast, it, vec![Operand::IdRef(x)]);
                    let mmask = self.int_splat(it, 0x007f_ffff)?;
                    let emask = self.int_splat(it, 0x7f80_0000)?;
                    let m = self.bin(Op::BitwiseAnd, it, bits, mmask);
                    let ef = self.bin(Op::BitwiseAnd, it, bits, emask);
                    let zero_i = self.int_splat(it, 0)?;
                    let e0 = self.bin(Op::IEqual, bt, ef, zero_i);
                    let m_set = self.bin(Op::INotEqual, bt, m, zero_i);
                    let sub = self.bin(Op::LogicalAnd, bt, e0, m_set);
                    let msb = self.glsl(75, it, &[m]);
                    let bias = self.int_splat(it, 149)?;
                    let es = self.bin(Op::ISub, it, msb, bias);
                    self.select(it, sub, es, e)
                } else {
                    e
                };
                let zero = self.splat(xt, 0.0, false)?;
                let is0 = self.bin(Op::FOrdEqual, bt, x, zero);
                let inf = self.emit(Op::IsInf, bt, vec![Operand::IdRef(x)]);
                let nan = self.emit(Op::IsNan, bt, vec![Operand::IdRef(x)]);
                if n == 41 {
                    let r = self.emit(Op::ConvertSToF, ty, vec![Operand::IdRef(e)]);
                    let ninf = self.splat(ty, f64::NEG_INFINITY, false)?;
                    let pinf = self.splat(ty, f64::INFINITY, false)?;
                    let r = self.select(ty, is0, ninf, r);
                    let r = self.select(ty, inf, pinf, r);
                    self.select(ty, nan, x, r)
                } else {
                    // FP_ILOGB0 = INT_MIN, FP_ILOGBNAN (and infinities) = INT_MAX.
                    let min = self.int_splat(ty, 0x8000_0000)?;
                    let max = self.int_splat(ty, 0x7fff_ffff)?;
                    let r = self.select(ty, is0, min, e);
                    let special = self.bin(Op::LogicalOr, bt, inf, nan);
                    self.select(ty, special, max, r)
                }
            }
            46 => {
                // nan(code): a quiet NaN carrying the code in its payload.
                let code = arg(0)?;
                let w = self.ctx.scalar_width(ty).ok_or("nan width")?;
                let ct = self.types.get(&code).copied().ok_or("nan code type")?;
                let quiet = match w {
                    64 => 0x7ff8_0000_0000_0000,
                    16 => 0x7e00,
                    _ => 0x7fc0_0000,
                };
                let q = self.int_splat(ct, quiet)?;
                let bits = self.bin(Op::BitwiseOr, ct, code, q);
                self.emit(Op::Bitcast, ty, vec![Operand::IdRef(bits)])
            }
            _ => {
                // nextafter(x, y): one step of the bit pattern towards y.
                let (x, y) = (arg(0)?, arg(1)?);
                let w = self.ctx.scalar_width(ty).ok_or("nextafter width")?;
                let it = self.int_like(ty, w);
                let bt = self.bool_like(ty);
                let xi = self.emit(Op::Bitcast, it, vec![Operand::IdRef(x)]);
                let one = self.int_splat(it, 1)?;
                let up = self.bin(Op::IAdd, it, xi, one);
                let down = self.bin(Op::ISub, it, xi, one);
                let zero = self.splat(ty, 0.0, false)?;
                let towards_y = self.bin(Op::FOrdLessThan, bt, x, y);
                let positive = self.bin(Op::FOrdGreaterThan, bt, x, zero);
                let grow = self.bin(Op::LogicalEqual, bt, towards_y, positive);
                let stepped = self.select(it, grow, up, down);
                // From zero: the smallest subnormal with y's sign.
                let tiny = self.int_splat(it, 1)?;
                let tiny = self.emit(Op::Bitcast, ty, vec![Operand::IdRef(tiny)]);
                let tiny = self.float_builtin(13, ty, &[tiny, y])?;
                let tiny = self.emit(Op::Bitcast, it, vec![Operand::IdRef(tiny)]);
                let is0 = self.bin(Op::FOrdEqual, bt, x, zero);
                let r = self.select(it, is0, tiny, stepped);
                let r = self.emit(Op::Bitcast, ty, vec![Operand::IdRef(r)]);
                let same = self.bin(Op::FOrdEqual, bt, x, y);
                let r = self.select(ty, same, y, r);
                // NaN in, NaN out.
                let unordered = self.bin(Op::FUnordNotEqual, bt, x, y);
                let ordered_ne = self.bin(Op::FOrdNotEqual, bt, x, y);
                let nan = self.bin(Op::LogicalNotEqual, bt, unordered, ordered_ne);
                let sum = self.bin(Op::FAdd, ty, x, y);
                self.select(ty, nan, sum, r)
            }
        })
    }

    /// `(k & 1) == 0` for integer (vector) `k`.
    fn is_even(&mut self, k: Word) -> Result<Word, String> {
        let kt = self.types.get(&k).copied().ok_or("integer operand type")?;
        let one = self.int_splat(kt, 1)?;
        let low = self.bin(Op::BitwiseAnd, kt, k, one);
        let zero = self.int_splat(kt, 0)?;
        let kbt = self.bool_like(kt);
        Ok(self.bin(Op::IEqual, kbt, low, zero))
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

    /// `cross` (OpenCL.std 104): GLSL `Cross` on 3-component vectors; a 4-component one is
    /// the cross product of x, y, z with w = 0 (GLSL has no 4-component cross).
    fn cross(&mut self, ty: Word, a: Word, b: Word) -> Result<Word, String> {
        if self.components(ty) != 4 {
            return Ok(self.glsl(68, ty, &[a, b]));
        }
        let d = self.ctx.def(ty).ok_or("cross type")?.clone();
        let elem = id_operand(&d, 0).ok_or("cross element type")?;
        let v3 = self.ctx.t_vec(elem, 3);
        let xyz = |l: &mut Self, v: Word| {
            l.emit(
                Op::VectorShuffle,
                v3,
                vec![
                    Operand::IdRef(v),
                    Operand::IdRef(v),
                    Operand::LiteralBit32(0),
                    Operand::LiteralBit32(1),
                    Operand::LiteralBit32(2),
                ],
            )
        };
        let (a3, b3) = (xyz(self, a), xyz(self, b));
        let c = self.glsl(68, v3, &[a3, b3]);
        let zero = self.splat(v3, 0.0, false)?;
        Ok(self.emit(
            Op::VectorShuffle,
            ty,
            vec![
                Operand::IdRef(c),
                Operand::IdRef(zero),
                Operand::LiteralBit32(0),
                Operand::LiteralBit32(1),
                Operand::LiteralBit32(2),
                Operand::LiteralBit32(3),
            ],
        ))
    }

    /// `acosh` (OpenCL.std 1) and `asinh` (4): GLSL `Acosh`/`Asinh` (`log(x + sqrt(x*x ± 1))`)
    /// except where that formula fails: above `2^28` (x*x overflows; the result is
    /// `log|x| + ln 2`, with the sign of x for asinh), asinh below `2^-12` (x itself, within
    /// half an ulp) and acosh below 1 (NaN).
    fn inverse_hyperbolic(&mut self, n: u32, ty: Word, x: Word) -> Result<Word, String> {
        let g = if n == 1 { 23 } else { 22 };
        let r = self.glsl(g, ty, &[x]);
        if self.ctx.scalar_width(ty) != Some(32) {
            return Ok(r);
        }
        let bt = self.bool_like(ty);
        let a = self.glsl(4, ty, &[x]);
        let big_limit = self.splat(ty, 2f64.powi(28), false)?;
        let big = self.bin(Op::FOrdGreaterThan, bt, a, big_limit);
        let l = self.glsl(28, ty, &[a]);
        let ln2 = self.splat(ty, std::f64::consts::LN_2, false)?;
        let rb = self.bin(Op::FAdd, ty, l, ln2);
        if n == 1 {
            let r = self.select(ty, big, rb, r);
            let one = self.splat(ty, 1.0, false)?;
            let below = self.bin(Op::FOrdLessThan, bt, x, one);
            let nan = self.splat(ty, f64::NAN, false)?;
            Ok(self.select(ty, below, nan, r))
        } else {
            let rb = self.float_builtin(13, ty, &[rb, x])?; // copysign
            let r = self.select(ty, big, rb, r);
            let small_limit = self.splat(ty, 2f64.powi(-12), false)?;
            let small = self.bin(Op::FOrdLessThan, bt, a, small_limit);
            Ok(self.select(ty, small, x, r))
        }
    }

    /// `ldexp` (OpenCL.std 34) on 32-bit floats: `x` times four exact powers of two whose
    /// exponents add up to `n` clamped to [-400, 400] (enough to reach 0 or infinity from any
    /// float), each built from its bits, the first as large as the exponent range allows. lavapipe's GLSL `Ldexp` works on the exponent field,
    /// wrong for subnormal `x` and for a huge `n`. Other widths: GLSL `Ldexp`.
    fn ldexp(&mut self, ty: Word, x: Word, k: Word) -> Result<Word, String> {
        let w = self.ctx.scalar_width(ty);
        if !matches!(w, Some(32) | Some(64)) {
            return Ok(self.glsl(53, ty, &[x, k]));
        }
        let it = *self.types.get(&k).ok_or("type of an ldexp operand")?;
        if self.ctx.scalar_width(it) != Some(32) {
            return Ok(self.glsl(53, ty, &[x, k]));
        }
        // float: exponents -126..127, n clamped to +-400; double: -1022..1023, +-2200.
        let (limit, emin, emax, bias, mbits) = if w == Some(64) {
            (2200i64, -1022i64, 1023u64, 1023u64, 52u64)
        } else {
            (400, -126, 127, 127, 23)
        };
        let lo = self.int_splat(it, (-limit) as u64)?;
        let hi = self.int_splat(it, limit as u64)?;
        let k = self.glsl(45, it, &[k, lo, hi]); // SClamp
        let wide = w == Some(64);
        let pow2 = |l: &mut Self, e: Word| -> Result<Word, String> {
            let (bt, e) = if wide {
                let i64t = l.int_like(it, 64);
                (i64t, l.emit(Op::SConvert, i64t, vec![Operand::IdRef(e)]))
            } else {
                (it, e)
            };
            let bias = l.int_splat(bt, bias)?;
            let b = l.bin(Op::IAdd, bt, e, bias);
            let sh = l.int_splat(bt, mbits)?;
            let bits = l.bin(Op::ShiftLeftLogical, bt, b, sh);
            Ok(l.emit(Op::Bitcast, ty, vec![Operand::IdRef(bits)]))
        };
        // Greedy parts within the exponent range, the largest first: a small n is one
        // exact-or-once-rounded product, so a subnormal result is rounded once.
        let (plo, phi) = (self.int_splat(it, emin as u64)?, self.int_splat(it, emax)?);
        let mut r = x;
        let mut left = k;
        for _ in 0..4 {
            let part = self.glsl(45, it, &[left, plo, phi]);
            left = self.bin(Op::ISub, it, left, part);
            let f = pow2(self, part)?;
            r = self.bin(Op::FMul, ty, r, f);
        }
        Ok(r)
    }

    /// `hypot` (OpenCL.std 32): `sqrt(x*x + y*y)`, redone per component on `x, y * 2^-80`
    /// where the sum overflows and on `x, y * 2^100` where it is below `2^-100` (exact
    /// power-of-two scalings); an infinite operand gives +inf even with a NaN one. 32-bit floats;
    /// other widths unscaled.
    fn hypot(&mut self, ty: Word, x: Word, y: Word) -> Result<Word, String> {
        let sum = |l: &mut Self, a: Word, b: Word| {
            let aa = l.bin(Op::FMul, ty, a, a);
            let bb = l.bin(Op::FMul, ty, b, b);
            l.bin(Op::FAdd, ty, aa, bb)
        };
        let s = sum(self, x, y);
        // Scaling (powers of two) when the sum of squares overflows or is tiny: float, double.
        let (tiny, down_e, up_e) = match self.ctx.scalar_width(ty) {
            Some(32) => (-100, -80, 100),
            Some(64) => (-900, -600, 600),
            _ => return Ok(self.glsl(31, ty, &[s])),
        };
        let bt = self.bool_like(ty);
        let big = self.emit(Op::IsInf, bt, vec![Operand::IdRef(s)]);
        let tiny_limit = self.splat(ty, 2f64.powi(tiny), false)?;
        let small = self.bin(Op::FOrdLessThan, bt, s, tiny_limit);
        let one = self.splat(ty, 1.0, false)?;
        let (down, up) = (
            self.splat(ty, 2f64.powi(down_e), false)?,
            self.splat(ty, 2f64.powi(up_e), false)?,
        );
        let (down_back, up_back) = (
            self.splat(ty, 2f64.powi(-down_e), false)?,
            self.splat(ty, 2f64.powi(-up_e), false)?,
        );
        let scale = self.select(ty, small, up, one);
        let scale = self.select(ty, big, down, scale);
        let back = self.select(ty, small, up_back, one);
        let back = self.select(ty, big, down_back, back);
        let xs = self.bin(Op::FMul, ty, x, scale);
        let ys = self.bin(Op::FMul, ty, y, scale);
        let s2 = sum(self, xs, ys);
        let r = self.glsl(31, ty, &[s2]);
        let r = self.bin(Op::FMul, ty, r, back);
        // hypot(±inf, y) is +inf even for a NaN y.
        let xi = self.emit(Op::IsInf, bt, vec![Operand::IdRef(x)]);
        let yi = self.emit(Op::IsInf, bt, vec![Operand::IdRef(y)]);
        let any_inf = self.bin(Op::LogicalOr, bt, xi, yi);
        let inf = self.splat(ty, f64::INFINITY, false)?;
        Ok(self.select(ty, any_inf, inf, r))
    }

    /// `round` (OpenCL.std 55): halfway cases away from zero (GLSL `Round` may round them
    /// to even): `t = trunc(x)`, plus `copysign(1, x)` when `|x - t| >= 0.5`. Infinities and
    /// NaN pass through (`x - t` is NaN, the test false).
    fn round_away(&mut self, ty: Word, x: Word) -> Result<Word, String> {
        let bt = self.bool_like(ty);
        let t = self.glsl(3, ty, &[x]);
        let d = self.bin(Op::FSub, ty, x, t);
        let ad = self.glsl(4, ty, &[d]);
        let half = self.splat(ty, 0.5, false)?;
        let up = self.bin(Op::FOrdGreaterThanEqual, bt, ad, half);
        let one = self.splat(ty, 1.0, false)?;
        let s = self.float_builtin(13, ty, &[one, x])?; // copysign(1, x)
        let stepped = self.bin(Op::FAdd, ty, t, s);
        // A select, not `t + 0`: -0.3 rounds to -0.
        Ok(self.select(ty, up, stepped, t))
    }

    /// `length` (OpenCL.std 106) of `x` without the overflow and underflow of
    /// `sqrt(dot(x, x))`: a sum of squares that overflows is redone on `x * 2^-80`, one below
    /// `2^-100` on `x * 2^100` (exact power-of-two scalings), and the root scaled back.
    /// Scalars: `fabs`.
    fn length(&mut self, ty: Word, x: Word) -> Result<Word, String> {
        let xty = *self.types.get(&x).ok_or("type of a length operand")?;
        if self.components(xty) == 1 {
            return Ok(self.glsl(4, ty, &[x]));
        }
        let Some((xs, back)) = self.length_scaled(ty, x)? else {
            // Narrower floats: GLSL Length (no scaling constants for them here).
            return Ok(self.glsl(66, ty, &[x]));
        };
        let s2 = self.bin(Op::Dot, ty, xs, xs);
        let r = self.glsl(31, ty, &[s2]);
        Ok(self.bin(Op::FMul, ty, r, back))
    }

    /// Vector `x` (of scalar type `ty`, float or double) scaled by a power of two so that its
    /// dot product with itself neither overflows nor underflows, and the factor that undoes
    /// the scaling on a length; None for other widths.
    fn length_scaled(&mut self, ty: Word, x: Word) -> Result<Option<(Word, Word)>, String> {
        let xty = *self.types.get(&x).ok_or("type of a length operand")?;
        let (tiny, down_e, up_e) = match self.ctx.scalar_width(ty) {
            Some(32) => (-100, -80, 100),
            Some(64) => (-900, -600, 600),
            _ => return Ok(None),
        };
        let b = self.ctx.t_bool();
        let s = self.bin(Op::Dot, ty, x, x);
        let big = self.emit(Op::IsInf, b, vec![Operand::IdRef(s)]);
        let tiny_limit = self.splat(ty, 2f64.powi(tiny), false)?;
        let small = self.bin(Op::FOrdLessThan, b, s, tiny_limit);
        let one = self.splat(ty, 1.0, false)?;
        let (down, up) = (
            self.splat(ty, 2f64.powi(down_e), false)?,
            self.splat(ty, 2f64.powi(up_e), false)?,
        );
        let (down_back, up_back) = (
            self.splat(ty, 2f64.powi(-down_e), false)?,
            self.splat(ty, 2f64.powi(-up_e), false)?,
        );
        let scale = self.select(ty, small, up, one);
        let scale = self.select(ty, big, down, scale);
        let back = self.select(ty, small, up_back, one);
        let back = self.select(ty, big, down_back, back);
        let xs = self.bin(Op::VectorTimesScalar, xty, x, scale);
        Ok(Some((xs, back)))
    }

    fn ext(&mut self, i: Instruction) -> Result<(), String> {
        let n = lit_operand(&i, 1).ok_or("ext inst number")?;
        let start = self.out.len();
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
        let double = self.ctx.scalar_width(ty) == Some(64);
        let v = if double && n == 107 {
            // normalize of double: lavapipe's GLSL Normalize (x times an inverse square root
            // good to about 1e-12) overflows or underflows in its dot product and misses the
            // limits. Scalars: the sign; vectors: scaled by a power of two, then each component
            // divided by the correctly rounded length.
            let x = arg(0)?;
            if self.components(ty) == 1 {
                self.glsl(6, ty, &[x])
            } else {
                let et = self
                    .ctx
                    .def(ty)
                    .and_then(|d| id_operand(d, 0))
                    .ok_or("normalize type")?;
                // Infinite elements: as if each element were copysign(isinf ? 1 : 0, x).
                let bt = self.bool_like(ty);
                let inf = self.emit(Op::IsInf, bt, vec![Operand::IdRef(x)]);
                let b1 = self.ctx.t_bool();
                let any_inf = self.emit(Op::Any, b1, vec![Operand::IdRef(inf)]);
                let zero = self.splat(ty, 0.0, false)?;
                let sign = self.glsl(6, ty, &[x]);
                let signed_zero = self.bin(Op::FMul, ty, x, zero);
                let unit = self.select(ty, inf, sign, signed_zero);
                let n = self.components(ty);
                let any_v = self.emit(
                    Op::CompositeConstruct,
                    bt,
                    (0..n).map(|_| Operand::IdRef(any_inf)).collect(),
                );
                let x = self.select(ty, any_v, unit, x);
                // Scaled by 2^(1023 - e), e the biased exponent of the largest magnitude
                // (at most 2045): the largest element becomes at least 1 and below 4, so the
                // dot product neither overflows nor underflows, and an element scaled into the
                // subnormal range has a subnormal result too.
                let mut m = None;
                for k in 0..n {
                    let c = self.emit(
                        Op::CompositeExtract,
                        et,
                        vec![Operand::IdRef(x), Operand::LiteralBit32(k)],
                    );
                    let a = self.glsl(4, et, &[c]);
                    m = Some(match m {
                        None => a,
                        Some(p) => self.glsl(40, et, &[p, a]),
                    });
                }
                let m = m.ok_or("normalize of an empty vector")?;
                let u64t = self.ctx.t_int(64);
                let mb = self.emit(Op::Bitcast, u64t, vec![Operand::IdRef(m)]);
                let c52 = self.ctx.c_u64(52);
                let e = self.bin(Op::ShiftRightLogical, u64t, mb, c52);
                let c2045 = self.ctx.c_u64(2045);
                let e = self.glsl(38, u64t, &[e, c2045]); // UMin
                let c2046 = self.ctx.c_u64(2046);
                let se = self.bin(Op::ISub, u64t, c2046, e);
                let sb = self.bin(Op::ShiftLeftLogical, u64t, se, c52);
                let scale = self.emit(Op::Bitcast, et, vec![Operand::IdRef(sb)]);
                let xs = self.bin(Op::VectorTimesScalar, ty, x, scale);
                let s2 = self.bin(Op::Dot, et, xs, xs);
                let l = self.glsl(31, et, &[s2]);
                let lv = self.emit(
                    Op::CompositeConstruct,
                    ty,
                    (0..n).map(|_| Operand::IdRef(l)).collect(),
                );
                let q = self.bin(Op::FDiv, ty, xs, lv);
                // A zero vector stays itself.
                let ezero = self.splat(et, 0.0, false)?;
                let l0 = self.bin(Op::FOrdEqual, b1, l, ezero);
                let l0v = self.emit(
                    Op::CompositeConstruct,
                    bt,
                    (0..n).map(|_| Operand::IdRef(l0)).collect(),
                );
                self.select(ty, l0v, x, q)
            }
        } else if double && n == 56 {
            // rsqrt of double: 1 / sqrt(x), both correctly rounded (lavapipe's GLSL
            // InverseSqrt on doubles is good to about 1e-12 only).
            let one = self.splat(ty, 1.0, false)?;
            let r = self.glsl(31, ty, &[arg(0)?]);
            self.bin(Op::FDiv, ty, one, r)
        } else if double && matches!(n, 96 | 100) {
            // degrees, radians of double: GLSL's Degrees and Radians take no 64-bit operands;
            // one multiplication by the rounded constant (2 ulp allowed).
            let k = if n == 96 {
                180.0 / std::f64::consts::PI
            } else {
                std::f64::consts::PI / 180.0
            };
            let k = self.splat(ty, k, false)?;
            self.bin(Op::FMul, ty, arg(0)?, k)
        } else if let Some((_, g)) = DIRECT.iter().find(|(c, _)| *c == n) {
            self.glsl(*g, ty, &a)
        } else {
            match n {
                1 | 4 => self.inverse_hyperbolic(n, ty, arg(0)?)?,
                34 => self.ldexp(ty, arg(0)?, arg(1)?)?,
                6 => self.glsl(18, ty, &[arg(0)?]),
                104 => self.cross(ty, arg(0)?, arg(1)?)?,
                105 => {
                    let (x, y) = (arg(0)?, arg(1)?);
                    let xty = *self.types.get(&x).ok_or("type of a distance operand")?;
                    let d = self.bin(Op::FSub, xty, x, y);
                    self.length(ty, d)?
                }
                106 => self.length(ty, arg(0)?)?,
                29 => self.emit(
                    Op::FRem,
                    ty,
                    vec![Operand::IdRef(arg(0)?), Operand::IdRef(arg(1)?)],
                ),
                // mad: a product and a sum. OpenCL C lets `mad` (and the `a * b + c` that
                // FP_CONTRACT contracts, which clang marks llvm.fmuladd and llvm-spirv makes
                // this instruction) be a fused multiply-add or two roundings, so the two stay
                // undecorated and the driver may fuse them. NVIDIA's does (it fused libclc's
                // `mad` when that was undecorated: docs/h200.md, `pow`). lavapipe 22.3.6 fuses
                // neither this nor GLSL Fma (`mad(a, a, -rounded a*a)` gives 0 with both);
                // Fma, whose precision Vulkan defines as the multiply's and add's when not
                // NoContraction, would allow the driver nothing more. Only the program's own
                // `mad` arrives here: libclc's, which needs the product rounded on its own
                // (fused, float `pow` was 26.9 ulp off on NVIDIA, `sin` 1535 ulp on
                // lavapipe), is a plain multiply and add by now (compiler/mathlib.rs,
                // "Contraction"). With `-cl-opt-disable` (`exact_mad`) both are rounded
                // (NoContraction).
                42 => {
                    let m = self.emit(
                        Op::FMul,
                        ty,
                        vec![Operand::IdRef(arg(0)?), Operand::IdRef(arg(1)?)],
                    );
                    let r = self.emit(
                        Op::FAdd,
                        ty,
                        vec![Operand::IdRef(m), Operand::IdRef(arg(2)?)],
                    );
                    if self.exact_mad {
                        for t in [m, r] {
                            self.ctx
                                .decorate(t, rspirv::spirv::Decoration::NoContraction, vec![]);
                        }
                    }
                    r
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
                32 => self.hypot(ty, arg(0)?, arg(1)?)?,
                55 => self.round_away(ty, arg(0)?)?,
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
                166 | 151 | 152 => self.bit_count(n, ty, arg(0)?)?,
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
                    // (x & ~c) | (y & c), on the bits of floating-point operands.
                    let (x, y, c) = (arg(0)?, arg(1)?, arg(2)?);
                    let w = self.ctx.scalar_width(ty).ok_or("bitselect width")?;
                    let it = self.int_like(ty, w);
                    let float = it != ty;
                    let bits = |l: &mut Self, v: Word| {
                        if float {
                            l.emit(Op::Bitcast, it, vec![Operand::IdRef(v)])
                        } else {
                            v
                        }
                    };
                    let (x, y, c) = (bits(self, x), bits(self, y), bits(self, c));
                    let nc = self.emit(Op::Not, it, vec![Operand::IdRef(c)]);
                    let l = self.bin(Op::BitwiseAnd, it, x, nc);
                    let r = self.bin(Op::BitwiseAnd, it, y, c);
                    let v = self.bin(Op::BitwiseOr, it, l, r);
                    if float {
                        self.emit(Op::Bitcast, ty, vec![Operand::IdRef(v)])
                    } else {
                        v
                    }
                }
                142..=148 | 154 | 155 | 162..=165 | 202 => self.int_builtin(n, ty, &a)?,
                182 | 183 => self.shuffle(n, ty, &a)?,
                30 | 31 | 45 => self.with_pointer(n, ty, &a)?,
                11 | 13 | 24 | 43 | 44 | 49 | 54 => self.float_builtin(n, ty, &a)?,
                2 | 5 | 9 | 10 | 16 | 33 | 41 | 46 | 47 | 60 | 64 => self.more_float(n, ty, &a)?,
                184 => return Err("printf is not supported yet".into()),
                other => {
                    return Err(format!(
                        "OpenCL.std instruction {other} is not supported yet"
                    ))
                }
            }
        };
        // atan, atanpi, pow, pown, powr, rootn, half_powr: lavapipe's GLSL Atan and Pow give
        // 0 for a NaN x; OpenCL wants NaN (pown(NaN, 0) = 1). A NaN y: NaN for powr, half_powr, and pow unless
        // x is 1 (pow(1, y) = 1 for any y).
        let v = if matches!(n, 6 | 9 | 48 | 49 | 50 | 54 | 75) {
            let x = arg(0)?;
            let bt = self.bool_like(ty);
            let nan = self.emit(Op::IsNan, bt, vec![Operand::IdRef(x)]);
            // pown(x, 0) is 1 even for a NaN x.
            let nan = if n == 49 {
                let k = arg(1)?;
                let kt = *self.types.get(&k).ok_or("pown exponent type")?;
                let zero = self.int_splat(kt, 0)?;
                let k_set = self.bin(Op::INotEqual, bt, k, zero);
                self.bin(Op::LogicalAnd, bt, nan, k_set)
            } else {
                nan
            };
            let v = self.select(ty, nan, x, v);
            let v = if n == 49 {
                let k = arg(1)?;
                let kt = *self.types.get(&k).ok_or("pown exponent type")?;
                let zero = self.int_splat(kt, 0)?;
                let k0 = self.bin(Op::IEqual, bt, k, zero);
                let one = self.splat(ty, 1.0, false)?;
                self.select(ty, k0, one, v)
            } else {
                v
            };
            if matches!(n, 48 | 50 | 75) {
                let y = arg(1)?;
                let ynan = self.emit(Op::IsNan, bt, vec![Operand::IdRef(y)]);
                let ynan = if n == 48 {
                    let one = self.splat(ty, 1.0, false)?;
                    let not_one = self.bin(Op::FUnordNotEqual, bt, x, one);
                    self.bin(Op::LogicalAnd, bt, ynan, not_one)
                } else {
                    ynan
                };
                let v = self.select(ty, ynan, y, v);
                if n == 48 {
                    // pow(1, y) and pow(x, ±0) are 1 whatever the other operand.
                    let one = self.splat(ty, 1.0, false)?;
                    let zero = self.splat(ty, 0.0, false)?;
                    let x1 = self.bin(Op::FOrdEqual, bt, x, one);
                    let y0 = self.bin(Op::FOrdEqual, bt, y, zero);
                    let either = self.bin(Op::LogicalOr, bt, x1, y0);
                    self.select(ty, either, one, v)
                } else {
                    v
                }
            } else {
                v
            }
        } else {
            v
        };
        // Transcendental GLSL instructions take no doubles: refuse rather than emit an
        // invalid module.
        let double_glsl = self.out[start..].iter().any(|i| {
            i.class.opcode == Op::ExtInst
                && id_operand(i, 0) == Some(self.glsl)
                && !matches!(i.operands.get(1), Some(Operand::LiteralExtInstInteger(g)) if GLSL_64.contains(g))
                && i.result_type.is_some_and(|t| {
                    self.ctx.scalar_width(t) == Some(64)
                        && self.ctx.def(t).is_some_and(|d| {
                            d.class.opcode == Op::TypeFloat
                                || id_operand(d, 0)
                                    .and_then(|e| self.ctx.def(e))
                                    .is_some_and(|e| e.class.opcode == Op::TypeFloat)
                        })
                })
        });
        if double_glsl {
            return Err(format!(
                "OpenCL.std instruction {n} on double has no Vulkan counterpart and is not \
                 supported yet"
            ));
        }
        // Give the final value the original id.
        if let Some(last) = self.out.last_mut() {
            if last.result_id == Some(v) {
                last.result_id = Some(rid);
                self.types.insert(rid, ty);
                self.renamed.insert(v, rid);
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

/// Whether `op` is a Kernel-capability relational instruction that Vulkan lacks.
fn kernel_relational(op: Op) -> bool {
    matches!(
        op,
        Op::IsFinite
            | Op::IsNormal
            | Op::SignBitSet
            | Op::Ordered
            | Op::Unordered
            | Op::LessOrGreater
    )
}

impl Lower<'_> {
    /// `OpIsFinite`, `OpIsNormal`, `OpSignBitSet`, `OpOrdered`, `OpUnordered` and
    /// `OpLessOrGreater` (`isfinite`, `isnormal`, `signbit`, `isordered`, `isunordered`,
    /// `islessgreater`) in Shader instructions: NaN/Inf tests, the float's bits for the
    /// exponent and sign, `FOrdNotEqual`.
    fn relational(&mut self, i: Instruction) -> Result<(), String> {
        let (Some(ty), Some(rid)) = (i.result_type, i.result_id) else {
            return Err("relational instruction without a result".into());
        };
        let x = id_operand(&i, 0).ok_or("relational operand")?;
        let y = id_operand(&i, 1);
        let xty = *self.types.get(&x).ok_or("type of a relational operand")?;
        let w = self.ctx.scalar_width(xty).ok_or("float width")?;
        let not = |l: &mut Self, v: Word| l.emit(Op::LogicalNot, ty, vec![Operand::IdRef(v)]);
        let is_nan = |l: &mut Self, v: Word| l.emit(Op::IsNan, ty, vec![Operand::IdRef(v)]);
        let v = match i.class.opcode {
            Op::IsFinite => {
                let nan = is_nan(self, x);
                let inf = self.emit(Op::IsInf, ty, vec![Operand::IdRef(x)]);
                let either = self.bin(Op::LogicalOr, ty, nan, inf);
                not(self, either)
            }
            Op::IsNormal | Op::SignBitSet => {
                let ity = self.int_like(xty, w);
                let bits = self.emit(Op::Bitcast, ity, vec![Operand::IdRef(x)]);
                let mant = match w {
                    16 => 10,
                    64 => 52,
                    _ => 23,
                };
                if i.class.opcode == Op::SignBitSet {
                    let sh = self.int_splat(ity, u64::from(w - 1))?;
                    let s = self.bin(Op::ShiftRightLogical, ity, bits, sh);
                    let zero = self.int_splat(ity, 0)?;
                    self.bin(Op::INotEqual, ty, s, zero)
                } else {
                    let mask = ((1u64 << (w - 1 - mant)) - 1) << mant;
                    let m = self.int_splat(ity, mask)?;
                    let e = self.bin(Op::BitwiseAnd, ity, bits, m);
                    let zero = self.int_splat(ity, 0)?;
                    let not_sub = self.bin(Op::INotEqual, ty, e, zero);
                    let not_inf = self.bin(Op::INotEqual, ty, e, m);
                    self.bin(Op::LogicalAnd, ty, not_sub, not_inf)
                }
            }
            Op::Ordered | Op::Unordered => {
                let y = y.ok_or("relational operand")?;
                let a = is_nan(self, x);
                let b = is_nan(self, y);
                let any = self.bin(Op::LogicalOr, ty, a, b);
                if i.class.opcode == Op::Ordered {
                    not(self, any)
                } else {
                    any
                }
            }
            _ => {
                let y = y.ok_or("relational operand")?;
                self.bin(Op::FOrdNotEqual, ty, x, y)
            }
        };
        if let Some(last) = self.out.last_mut() {
            if last.result_id == Some(v) {
                last.result_id = Some(rid);
                self.types.insert(rid, ty);
                self.renamed.insert(v, rid);
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

/// Replaces every `OpenCL.std` instruction of the kernel function, and the Kernel-only
/// relational instructions (see [`Lower::relational`]). `exact_mad`: `mad` as a multiply and
/// an add each rounded (`NoContraction`, for `-cl-opt-disable`), else left for the driver to
/// fuse.
///
/// # Errors
/// For OpenCL built-ins without a lowering yet (named by number).
pub(crate) fn lower_ext_inst(ctx: &mut Ctx, exact_mad: bool) -> Result<(), String> {
    let cl = ctx
        .module
        .ext_inst_imports
        .iter()
        .find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == "OpenCL.std" => i.result_id,
            _ => None,
        });
    // Core OpBitCount (LLVM's ctpop) and OpBitReverse on other than 32-bit integers: Vulkan
    // only has 32 bits.
    let wide_bit_count = |ctx: &Ctx, i: &Instruction| {
        matches!(i.class.opcode, Op::BitCount | Op::BitReverse)
            && i.result_type.and_then(|t| ctx.scalar_width(t)) != Some(32)
    };
    let any_wide = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .any(|i| wide_bit_count(ctx, i));
    let any_relational = ctx.module.functions[0]
        .blocks
        .iter()
        .flat_map(|b| b.instructions.iter())
        .any(|i| kernel_relational(i.class.opcode));
    if cl.is_none() && !any_wide && !any_relational {
        return Ok(());
    }
    // A placeholder id for the OpenCL.std set when the module imports none.
    let cl = match cl {
        Some(cl) => cl,
        None => ctx.id(),
    };
    let glsl = ctx.id();
    let types = ctx.value_types();
    let blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let mut l = Lower {
        ctx,
        glsl,
        out: Vec::new(),
        types,
        exact_mad,
        renamed: std::collections::HashMap::new(),
    };
    let mut new_blocks = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        for i in std::mem::take(&mut b.instructions) {
            if i.class.opcode == Op::ExtInst && id_operand(&i, 0) == Some(cl) {
                l.ext(i)?;
            } else if kernel_relational(i.class.opcode) {
                l.relational(i)?;
            } else if wide_bit_count(l.ctx, &i) && i.class.opcode == Op::BitReverse {
                let (ty, rid) = (i.result_type.ok_or("type")?, i.result_id.ok_or("id")?);
                let x = id_operand(&i, 0).ok_or("bit reverse operand")?;
                let r = l.bit_reverse(ty, x)?;
                l.out.push(inst(
                    Op::CopyObject,
                    Some(ty),
                    Some(rid),
                    vec![Operand::IdRef(r)],
                ));
            } else if wide_bit_count(l.ctx, &i) {
                // As OpenCL.std popcount.
                let mut ops = vec![Operand::IdRef(cl), Operand::LiteralExtInstInteger(166)];
                ops.extend(i.operands.iter().cloned());
                l.ext(inst(Op::ExtInst, i.result_type, i.result_id, ops))?;
            } else {
                l.out.push(i);
            }
        }
        b.instructions = std::mem::take(&mut l.out);
        new_blocks.push(b);
    }
    let renamed = std::mem::take(&mut l.renamed);
    ctx.module.functions[0].blocks = new_blocks;
    retarget_decorations(ctx, &renamed);
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

/// Moves the decorations of each renamed id (such as `mad`'s `NoContraction`) to the id that
/// replaced it as an instruction's result (`renamed`: from -> to, followed to its end when a
/// new name was renamed again). One pass over the annotations: done per instruction it was
/// quadratic (pyopencl's `bessel_jn`, 4 million words: 50 s of its build).
fn retarget_decorations(ctx: &mut Ctx, renamed: &std::collections::HashMap<Word, Word>) {
    if renamed.is_empty() {
        return;
    }
    for a in ctx.module.annotations.iter_mut() {
        let Some(mut to) = id_operand(a, 0).filter(|_| a.class.opcode == Op::Decorate) else {
            continue;
        };
        let mut steps = 0;
        while let Some(next) = renamed.get(&to).filter(|_| steps <= renamed.len()) {
            to = *next;
            steps += 1;
        }
        if steps > 0 {
            a.operands[0] = Operand::IdRef(to);
        }
    }
}
