//! Vectors of 8 and 16 components, which Vulkan cannot express (no `Vector16` capability), are
//! split into 4-component parts.
//!
//! # Approach
//! The split happens here, on SPIR-V, after [`super::memory`] and before [`super::extinst`],
//! rather than in LLVM (`opt -passes=scalarizer -scalarize-load-store`): the scalarizer
//! leaves kernel parameters and OpenCL built-in calls (`_Z4fabsDv16_f`, which llvm-spirv turns
//! into `OpExtInst` on 16-component vectors) untouched, so a SPIR-V pass would be needed for those
//! anyway; it would also scalarize every 2/3/4-component vector that Vulkan handles natively.
//! Splitting in SPIR-V is exact for every instruction it knows and reports the others by name.
//!
//! Running after [`super::types`] and [`super::entry`] keeps the OpenCL C layout: struct member
//! `Offset`s, array and pointer `ArrayStride`s and the argument-block offsets were all computed
//! with the original types (an `int8` is 32 bytes, 32-aligned). Running after
//! [`super::memory`] means `vloadn`/`vstoren` already are component accesses.
//!
//! # Representation
//! - Memory (and every type that contains a wide vector): the wide vector type is redefined in
//!   place as `OpTypeArray <4 x elem> N/4` with `ArrayStride` = part size, which has the same
//!   bytes as the OpenCL vector. Pointers, structs and arrays built on it change with it; loads
//!   and stores stay whole (an array value), and `OpAccessChain` index paths that step into a
//!   wide vector get an extra index (`c` -> `c / 4, c % 4`).
//! - Values: every SSA value of a wide type becomes N/4 values of type `<4 x elem>` ("parts").
//!   Component-wise instructions (arithmetic, conversions, comparisons, selects, component-wise
//!   `OpenCL.std` built-ins) run once per part; shuffles, constructs, extracts and inserts are
//!   rebuilt from the components they move; a whole array value is assembled
//!   (`OpCompositeConstruct`) only where one is stored or put into an aggregate, and taken apart
//!   (`OpCompositeExtract`) after a load.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::spv::{id_operand, inst, lit_operand};

/// Components per part.
const PART: u32 = 4;

/// OpenCL.std instruction numbers with special handling.
const CL_VLOADN: u32 = 171;
const CL_VSTOREN: u32 = 172;
const CL_VLOAD_HALFN: u32 = 174;
const CL_VSTORE_HALFN: u32 = 177;
const CL_VSTORE_HALFN_R: u32 = 178;
const CL_VLOADA_HALFN: u32 = 179;
const CL_VSTOREA_HALFN: u32 = 180;
const CL_VSTOREA_HALFN_R: u32 = 181;
const CL_SHUFFLE: u32 = 182;
const CL_SHUFFLE2: u32 = 183;

/// Instructions that apply to each component independently: one instruction per part.
const COMPONENT_WISE: &[Op] = &[
    Op::SNegate,
    Op::FNegate,
    Op::IAdd,
    Op::FAdd,
    Op::ISub,
    Op::FSub,
    Op::IMul,
    Op::FMul,
    Op::UDiv,
    Op::SDiv,
    Op::FDiv,
    Op::UMod,
    Op::SRem,
    Op::SMod,
    Op::FRem,
    Op::FMod,
    Op::VectorTimesScalar,
    Op::ShiftRightLogical,
    Op::ShiftRightArithmetic,
    Op::ShiftLeftLogical,
    Op::BitwiseOr,
    Op::BitwiseXor,
    Op::BitwiseAnd,
    Op::Not,
    Op::BitFieldInsert,
    Op::BitFieldSExtract,
    Op::BitFieldUExtract,
    Op::BitReverse,
    Op::BitCount,
    Op::ConvertFToU,
    Op::ConvertFToS,
    Op::ConvertSToF,
    Op::ConvertUToF,
    Op::UConvert,
    Op::SConvert,
    Op::FConvert,
    Op::QuantizeToF16,
    Op::SatConvertSToU,
    Op::SatConvertUToS,
    Op::IsNan,
    Op::IsInf,
    Op::IsFinite,
    Op::IsNormal,
    Op::SignBitSet,
    Op::LessOrGreater,
    Op::Ordered,
    Op::Unordered,
    Op::LogicalEqual,
    Op::LogicalNotEqual,
    Op::LogicalOr,
    Op::LogicalAnd,
    Op::LogicalNot,
    Op::Select,
    Op::IEqual,
    Op::INotEqual,
    Op::UGreaterThan,
    Op::SGreaterThan,
    Op::UGreaterThanEqual,
    Op::SGreaterThanEqual,
    Op::ULessThan,
    Op::SLessThan,
    Op::ULessThanEqual,
    Op::SLessThanEqual,
    Op::FOrdEqual,
    Op::FUnordEqual,
    Op::FOrdNotEqual,
    Op::FUnordNotEqual,
    Op::FOrdLessThan,
    Op::FUnordLessThan,
    Op::FOrdGreaterThan,
    Op::FUnordGreaterThan,
    Op::FOrdLessThanEqual,
    Op::FUnordLessThanEqual,
    Op::FOrdGreaterThanEqual,
    Op::FUnordGreaterThanEqual,
];

/// A wide vector type.
#[derive(Clone, Copy, Debug)]
struct Wide {
    /// Component type.
    elem: Word,
    /// Component count (8 or 16).
    n: u32,
    /// The part type `<4 x elem>`.
    part: Word,
}

impl Wide {
    fn parts(&self) -> u32 {
        self.n / PART
    }
}

/// One component of a value being assembled.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Comp {
    /// An undefined component.
    Undef,
    /// A scalar value.
    Scalar(Word),
    /// Component `idx` of the `width`-component vector `vec`.
    Lane { vec: Word, width: u32, idx: u32 },
}

struct Split<'c> {
    ctx: &'c mut Ctx,
    /// Wide vector types by id.
    wide: HashMap<Word, Wide>,
    /// Types of every value (original types).
    types: HashMap<Word, Word>,
    /// The parts of each wide value.
    parts: HashMap<Word, Vec<Word>>,
    /// Wide values whose own id still holds the whole (array) value: loads, constants.
    whole: HashSet<Word>,
    /// Placeholder parts of values used before their definition (phi operands).
    fwd: HashMap<Word, Vec<Word>>,
    /// Ids replaced by others, substituted over the module at the end.
    alias: HashMap<Word, Word>,
    /// The `OpenCL.std` import.
    opencl_std: Option<Word>,
    /// Instructions of the block being rewritten.
    out: Vec<Instruction>,
}

fn op_name(op: Op) -> String {
    format!("Op{op:?}")
}

impl Split<'_> {
    fn emit(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.ctx.id();
        self.types.insert(id, ty);
        self.out.push(inst(op, Some(ty), Some(id), operands));
        id
    }

    fn ty(&self, v: Word) -> Result<Word, String> {
        self.types
            .get(&v)
            .copied()
            .ok_or_else(|| format!("no type for %{v}"))
    }

    /// The wide type of value `v`, if it has one.
    fn wide_of(&self, v: Word) -> Option<Wide> {
        self.types.get(&v).and_then(|t| self.wide.get(t)).copied()
    }

    /// Component type and count of narrow vector type `ty`.
    fn vector(&self, ty: Word) -> Option<(Word, u32)> {
        self.ctx.vector_shape(ty)
    }

    /// Part `k` of wide value `v` (a placeholder when `v` is not defined yet).
    fn part(&mut self, v: Word, k: u32) -> Result<Word, String> {
        let w = self
            .wide_of(v)
            .ok_or("a part of a value that is not a wide vector")?;
        if let Some(p) = self.parts.get(&v) {
            return p
                .get(k as usize)
                .copied()
                .ok_or_else(|| "part index out of range".into());
        }
        let n = w.parts() as usize;
        if !self.fwd.contains_key(&v) {
            let ids = (0..n).map(|_| self.ctx.id()).collect();
            self.fwd.insert(v, ids);
        }
        Ok(self.fwd[&v][k as usize])
    }

    fn all_parts(&mut self, v: Word) -> Result<Vec<Word>, String> {
        let w = self.wide_of(v).ok_or("not a wide vector")?;
        (0..w.parts()).map(|k| self.part(v, k)).collect()
    }

    /// Records the parts of wide value `v`.
    fn define(&mut self, v: Word, parts: Vec<Word>) {
        if let Some(ph) = self.fwd.remove(&v) {
            for (p, r) in ph.into_iter().zip(&parts) {
                self.alias.insert(p, *r);
            }
        }
        self.parts.insert(v, parts);
    }

    /// The whole (array) value of wide value `v`.
    fn whole_value(&mut self, v: Word) -> Result<Word, String> {
        if self.whole.contains(&v) {
            return Ok(v);
        }
        let ty = self.ty(v)?;
        let parts = self.all_parts(v)?;
        Ok(self.emit(
            Op::CompositeConstruct,
            ty,
            parts.into_iter().map(Operand::IdRef).collect(),
        ))
    }

    /// Splits a whole value `v` (its id holds the array) into parts.
    fn split_whole(&mut self, v: Word, w: Wide) {
        let parts = (0..w.parts())
            .map(|k| {
                self.emit(
                    Op::CompositeExtract,
                    w.part,
                    vec![Operand::IdRef(v), Operand::LiteralBit32(k)],
                )
            })
            .collect();
        self.whole.insert(v);
        self.define(v, parts);
    }

    /// An undefined value of type `ty`.
    fn undef(&mut self, ty: Word) -> Word {
        let u = self.ctx.global(Op::Undef, Some(ty), vec![]);
        self.types.insert(u, ty);
        u
    }

    /// Integer constant `v` of integer type `ty`.
    fn int_const(&mut self, ty: Word, v: u64) -> Word {
        let wide = self.ctx.scalar_width(ty) == Some(64);
        let lit = if wide {
            Operand::LiteralBit64(v)
        } else {
            Operand::LiteralBit32(v as u32)
        };
        let c = self.ctx.global(Op::Constant, Some(ty), vec![lit]);
        self.types.insert(c, ty);
        c
    }

    /// The value of integer constant `id`.
    fn const_value(&self, id: Word) -> Option<u64> {
        let d = self.ctx.def(id)?;
        match (d.class.opcode, d.operands.first()) {
            (Op::Constant, Some(Operand::LiteralBit32(v))) => Some(u64::from(*v)),
            (Op::Constant, Some(Operand::LiteralBit64(v))) => Some(*v),
            _ => None,
        }
    }

    /// The components of value `v` (scalar, vector or wide vector).
    fn comps(&mut self, v: Word) -> Result<Vec<Comp>, String> {
        if let Some(w) = self.wide_of(v) {
            let mut out = Vec::new();
            for k in 0..w.parts() {
                let p = self.part(v, k)?;
                out.extend((0..PART).map(|idx| Comp::Lane {
                    vec: p,
                    width: PART,
                    idx,
                }));
            }
            return Ok(out);
        }
        let ty = self.ty(v)?;
        Ok(match self.vector(ty) {
            Some((_, n)) => (0..n)
                .map(|idx| Comp::Lane {
                    vec: v,
                    width: n,
                    idx,
                })
                .collect(),
            None => vec![Comp::Scalar(v)],
        })
    }

    /// The scalar value of component `c`.
    fn scalar(&mut self, elem: Word, c: Comp) -> Word {
        match c {
            Comp::Undef => self.undef(elem),
            Comp::Scalar(s) => s,
            Comp::Lane { vec, idx, .. } => self.emit(
                Op::CompositeExtract,
                elem,
                vec![Operand::IdRef(vec), Operand::LiteralBit32(idx)],
            ),
        }
    }

    /// A value made of `comps` (a scalar for one component, else a vector of `elem`).
    fn build(&mut self, elem: Word, comps: &[Comp]) -> Result<Word, String> {
        if comps.len() == 1 {
            return Ok(self.scalar(elem, comps[0]));
        }
        let len = u32::try_from(comps.len()).map_err(|_| "vector too long")?;
        let ty = self.ctx.t_vec(elem, len);
        if comps.iter().all(|c| *c == Comp::Undef) {
            return Ok(self.undef(ty));
        }
        let mut srcs: Vec<(Word, u32)> = Vec::new();
        let mut lanes_only = true;
        for c in comps {
            match c {
                Comp::Lane { vec, width, .. } => {
                    if !srcs.iter().any(|(v, _)| v == vec) {
                        srcs.push((*vec, *width));
                    }
                }
                Comp::Scalar(_) => lanes_only = false,
                Comp::Undef => {}
            }
        }
        if lanes_only && srcs.len() <= 2 {
            // The identity of one whole source needs no instruction.
            if srcs.len() == 1
                && srcs[0].1 == len
                && comps
                    .iter()
                    .enumerate()
                    .all(|(k, c)| matches!(c, Comp::Lane { idx, .. } if *idx as usize == k))
            {
                return Ok(srcs[0].0);
            }
            let (a, wa) = srcs[0];
            let b = srcs.get(1).map(|s| s.0).unwrap_or(a);
            let mut ops = vec![Operand::IdRef(a), Operand::IdRef(b)];
            for c in comps {
                ops.push(Operand::LiteralBit32(match c {
                    Comp::Lane { vec, idx, .. } if *vec == a => *idx,
                    Comp::Lane { idx, .. } => wa + idx,
                    _ => u32::MAX,
                }));
            }
            return Ok(self.emit(Op::VectorShuffle, ty, ops));
        }
        let scalars: Vec<Operand> = comps
            .iter()
            .map(|c| Operand::IdRef(self.scalar(elem, *c)))
            .collect();
        Ok(self.emit(Op::CompositeConstruct, ty, scalars))
    }

    /// Gives result `rid` of type `rt` the components `comps`.
    fn assemble(&mut self, rid: Word, rt: Word, comps: &[Comp]) -> Result<(), String> {
        if let Some(w) = self.wide.get(&rt).copied() {
            if comps.len() != w.n as usize {
                return Err(format!(
                    "{} components for a {}-component vector",
                    comps.len(),
                    w.n
                ));
            }
            let mut parts = Vec::new();
            for chunk in comps.chunks(PART as usize) {
                parts.push(self.build(w.elem, chunk)?);
            }
            self.define(rid, parts);
            return Ok(());
        }
        let elem = self.vector(rt).map(|v| v.0).unwrap_or(rt);
        let v = self.build(elem, comps)?;
        self.alias.insert(rid, v);
        Ok(())
    }

    /// Splits a dynamic (or constant) component index into (part, lane).
    fn split_index(&mut self, idx: Word) -> Result<(Word, Word), String> {
        let ty = self.ty(idx)?;
        if let Some(c) = self.const_value(idx) {
            let hi = self.int_const(ty, c / u64::from(PART));
            let lo = self.int_const(ty, c % u64::from(PART));
            return Ok((hi, lo));
        }
        let two = self.int_const(ty, 2);
        let three = self.int_const(ty, 3);
        let hi = self.emit(
            Op::ShiftRightLogical,
            ty,
            vec![Operand::IdRef(idx), Operand::IdRef(two)],
        );
        let lo = self.emit(
            Op::BitwiseAnd,
            ty,
            vec![Operand::IdRef(idx), Operand::IdRef(three)],
        );
        Ok((hi, lo))
    }

    /// `(part_index == k)` for each part, from the part index `hi`.
    fn part_is(&mut self, hi: Word, k: u32) -> Result<Word, String> {
        let ty = self.ty(hi)?;
        let c = self.int_const(ty, u64::from(k));
        let b = self.ctx.t_bool();
        Ok(self.emit(Op::IEqual, b, vec![Operand::IdRef(hi), Operand::IdRef(c)]))
    }

    /// Component `idx` (dynamic) of wide value `v`.
    fn extract_dynamic(&mut self, v: Word, idx: Word) -> Result<Word, String> {
        let w = self.wide_of(v).ok_or("not a wide vector")?;
        let (hi, lo) = self.split_index(idx)?;
        let mut acc: Option<Word> = None;
        for k in (0..w.parts()).rev() {
            let p = self.part(v, k)?;
            let e = self.emit(
                Op::VectorExtractDynamic,
                w.elem,
                vec![Operand::IdRef(p), Operand::IdRef(lo)],
            );
            acc = Some(match acc {
                None => e,
                Some(rest) => {
                    let is = self.part_is(hi, k)?;
                    self.emit(
                        Op::Select,
                        w.elem,
                        vec![Operand::IdRef(is), Operand::IdRef(e), Operand::IdRef(rest)],
                    )
                }
            });
        }
        acc.ok_or_else(|| "empty vector".into())
    }

    /// Rewrites one instruction.
    fn instruction(&mut self, i: Instruction) -> Result<(), String> {
        let op = i.class.opcode;
        let rt = i.result_type;
        let rid = i.result_id;
        let rt_wide = rt.and_then(|t| self.wide.get(&t).copied());
        let any_wide_operand = (0..i.operands.len())
            .filter_map(|k| id_operand(&i, k))
            .any(|v| self.wide_of(v).is_some());
        if rt_wide.is_none() && !any_wide_operand {
            return match op {
                Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain => self.access_chain(i),
                Op::CompositeExtract | Op::CompositeInsert => self.literal_path(i, None),
                _ => {
                    self.record(&i);
                    self.out.push(i);
                    Ok(())
                }
            };
        }
        if op == Op::Store {
            return self.whole_operands(i);
        }
        let rid = rid.ok_or_else(|| format!("{} without a result", op_name(op)))?;
        let rt = rt.ok_or_else(|| format!("{} without a type", op_name(op)))?;
        match op {
            Op::Phi => {
                let w = rt_wide.ok_or("phi of a wide vector with another type")?;
                let mut parts = Vec::new();
                for k in 0..w.parts() {
                    let mut ops = Vec::new();
                    for pair in i.operands.chunks(2) {
                        let v = match pair.first() {
                            Some(Operand::IdRef(v)) => *v,
                            _ => return Err("phi operands".into()),
                        };
                        ops.push(Operand::IdRef(self.part(v, k)?));
                        ops.push(pair.get(1).cloned().ok_or("phi operands")?);
                    }
                    parts.push(self.emit(Op::Phi, w.part, ops));
                }
                self.define(rid, parts);
                Ok(())
            }
            Op::VectorShuffle => {
                let (a, b) = (
                    id_operand(&i, 0).ok_or("shuffle operands")?,
                    id_operand(&i, 1).ok_or("shuffle operands")?,
                );
                let ca = self.comps(a)?;
                let cb = self.comps(b)?;
                let mut comps = Vec::new();
                for k in 2..i.operands.len() {
                    let s = lit_operand(&i, k).ok_or("shuffle selector")?;
                    let s = s as usize;
                    comps.push(if s == u32::MAX as usize {
                        Comp::Undef
                    } else if s < ca.len() {
                        ca[s]
                    } else {
                        *cb.get(s - ca.len())
                            .ok_or("shuffle selector out of range")?
                    });
                }
                self.assemble(rid, rt, &comps)
            }
            Op::CompositeConstruct if rt_wide.is_some() => {
                let mut comps = Vec::new();
                for k in 0..i.operands.len() {
                    let v = id_operand(&i, k).ok_or("construct operands")?;
                    comps.extend(self.comps(v)?);
                }
                self.assemble(rid, rt, &comps)
            }
            Op::CompositeExtract
                if id_operand(&i, 0).is_some_and(|b| self.wide_of(b).is_some()) =>
            {
                let b = id_operand(&i, 0).ok_or("extract operands")?;
                let c = lit_operand(&i, 1).ok_or("extract index")?;
                if i.operands.len() != 2 {
                    return Err("extract with a long path from a wide vector".into());
                }
                let p = self.part(b, c / PART)?;
                self.out.push(inst(
                    Op::CompositeExtract,
                    Some(rt),
                    Some(rid),
                    vec![Operand::IdRef(p), Operand::LiteralBit32(c % PART)],
                ));
                self.types.insert(rid, rt);
                Ok(())
            }
            Op::CompositeInsert if rt_wide.is_some() => {
                let w = rt_wide.ok_or("insert type")?;
                let obj = id_operand(&i, 0).ok_or("insert operands")?;
                let b = id_operand(&i, 1).ok_or("insert operands")?;
                let c = lit_operand(&i, 2).ok_or("insert index")?;
                let mut parts = self.all_parts(b)?;
                let k = (c / PART) as usize;
                let target = *parts.get(k).ok_or("insert index out of range")?;
                parts[k] = self.emit(
                    Op::CompositeInsert,
                    w.part,
                    vec![
                        Operand::IdRef(obj),
                        Operand::IdRef(target),
                        Operand::LiteralBit32(c % PART),
                    ],
                );
                self.define(rid, parts);
                Ok(())
            }
            Op::VectorExtractDynamic => {
                let b = id_operand(&i, 0).ok_or("extract operands")?;
                let idx = id_operand(&i, 1).ok_or("extract operands")?;
                let v = self.extract_dynamic(b, idx)?;
                self.alias.insert(rid, v);
                Ok(())
            }
            Op::VectorInsertDynamic => {
                let w = rt_wide.ok_or("insert type")?;
                let obj = id_operand(&i, 1).ok_or("insert operands")?;
                let b = id_operand(&i, 0).ok_or("insert operands")?;
                let idx = id_operand(&i, 2).ok_or("insert operands")?;
                let (hi, lo) = self.split_index(idx)?;
                let mut parts = Vec::new();
                for k in 0..w.parts() {
                    let p = self.part(b, k)?;
                    let ins = self.emit(
                        Op::VectorInsertDynamic,
                        w.part,
                        vec![Operand::IdRef(p), Operand::IdRef(obj), Operand::IdRef(lo)],
                    );
                    let is = self.part_is(hi, k)?;
                    parts.push(self.emit(
                        Op::Select,
                        w.part,
                        vec![Operand::IdRef(is), Operand::IdRef(ins), Operand::IdRef(p)],
                    ));
                }
                self.define(rid, parts);
                Ok(())
            }
            Op::CopyObject if rt_wide.is_some() => {
                let v = id_operand(&i, 0).ok_or("copy operand")?;
                let parts = self.all_parts(v)?;
                self.define(rid, parts);
                Ok(())
            }
            Op::Undef => {
                let w = rt_wide.ok_or("undef type")?;
                let u = self.undef(w.part);
                self.define(rid, vec![u; w.parts() as usize]);
                Ok(())
            }
            Op::Any | Op::All => {
                let v = id_operand(&i, 0).ok_or("any/all operand")?;
                let parts = self.all_parts(v)?;
                let combine = if op == Op::Any {
                    Op::LogicalOr
                } else {
                    Op::LogicalAnd
                };
                let mut acc: Option<Word> = None;
                for p in parts {
                    let r = self.emit(op, rt, vec![Operand::IdRef(p)]);
                    acc = Some(match acc {
                        None => r,
                        Some(a) => {
                            self.emit(combine, rt, vec![Operand::IdRef(a), Operand::IdRef(r)])
                        }
                    });
                }
                self.alias.insert(rid, acc.ok_or("empty vector")?);
                Ok(())
            }
            Op::Bitcast => {
                let v = id_operand(&i, 0).ok_or("bitcast operand")?;
                match (rt_wide, self.wide_of(v)) {
                    (Some(w), Some(src)) if src.n == w.n => self.per_part(&i, w, rid),
                    _ => self.bitcast(v, rid, rt),
                }
            }
            Op::ExtInst if self.opencl_std.is_some() && id_operand(&i, 0) == self.opencl_std => {
                self.ext_inst(i, rt_wide, rid, rt)
            }
            Op::Load if rt_wide.is_some() => {
                let w = rt_wide.ok_or("load type")?;
                self.record(&i);
                self.out.push(i);
                self.split_whole(rid, w);
                Ok(())
            }
            Op::CompositeExtract => {
                // From an aggregate holding wide vectors.
                let b = id_operand(&i, 0).ok_or("extract operands")?;
                let b = if self.wide_of(b).is_some() {
                    self.whole_value(b)?
                } else {
                    b
                };
                let mut i = i;
                i.operands[0] = Operand::IdRef(b);
                self.literal_path(i, rt_wide)
            }
            Op::CompositeConstruct | Op::CompositeInsert => self.whole_operands(i),
            // Sub-group broadcasts and shuffles of vectors (sub_group_broadcast of `int8`,
            // cl_khr_subgroup_ballot's of `char16`): per part, the same scope and lane.
            Op::GroupNonUniformBroadcast
            | Op::GroupNonUniformBroadcastFirst
            | Op::GroupNonUniformShuffle
            | Op::GroupNonUniformShuffleXor
            | Op::GroupNonUniformShuffleUp
            | Op::GroupNonUniformShuffleDown
                if rt_wide.is_some() =>
            {
                let w = rt_wide.ok_or("group operation type")?;
                self.per_part(&i, w, rid)
            }
            _ if COMPONENT_WISE.contains(&op) => {
                let w = rt_wide
                    .ok_or_else(|| format!("{} on vectors of 8 or 16 components", op_name(op)))?;
                self.per_part(&i, w, rid)
            }
            _ => Err(format!(
                "{} on vectors of 8 or 16 components is not supported yet",
                op_name(op)
            )),
        }
    }

    /// Instructions that take whole values (stores, aggregates holding wide vectors).
    fn whole_operands(&mut self, mut i: Instruction) -> Result<(), String> {
        for k in 0..i.operands.len() {
            if let Some(v) = id_operand(&i, k) {
                if self.wide_of(v).is_some() {
                    let wv = self.whole_value(v)?;
                    i.operands[k] = Operand::IdRef(wv);
                }
            }
        }
        if i.class.opcode == Op::CompositeInsert {
            return self.literal_path(i, None);
        }
        self.record(&i);
        self.out.push(i);
        Ok(())
    }

    /// Stores the result type of `i`.
    fn record(&mut self, i: &Instruction) {
        if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
            self.types.insert(id, t);
        }
    }

    /// The operand for part `k` of a component-wise instruction: wide values give their part,
    /// pointers to wide vectors a pointer to the part, anything else itself.
    fn part_operand(&mut self, o: &Operand, k: u32) -> Result<Operand, String> {
        let Operand::IdRef(v) = o else {
            return Ok(o.clone());
        };
        if self.wide_of(*v).is_some() {
            return Ok(Operand::IdRef(self.part(*v, k)?));
        }
        let ty = self.ty(*v).ok();
        if let Some((sc, pointee)) = ty.and_then(|t| self.ctx.ptr_info(t)) {
            if let Some(w) = self.wide.get(&pointee).copied() {
                let pty = self.ctx.t_ptr(sc, w.part);
                let idx = self.ctx.c_u32(k);
                let op = if sc == StorageClass::PhysicalStorageBuffer {
                    Op::AccessChain
                } else {
                    Op::InBoundsAccessChain
                };
                return Ok(Operand::IdRef(self.emit(
                    op,
                    pty,
                    vec![Operand::IdRef(*v), Operand::IdRef(idx)],
                )));
            }
        }
        Ok(o.clone())
    }

    /// One instruction per part.
    fn per_part(&mut self, i: &Instruction, w: Wide, rid: Word) -> Result<(), String> {
        let mut parts = Vec::new();
        for k in 0..w.parts() {
            let ops = i
                .operands
                .iter()
                .map(|o| self.part_operand(o, k))
                .collect::<Result<Vec<_>, _>>()?;
            parts.push(self.emit(i.class.opcode, w.part, ops));
        }
        // Decorations of the result (`SaturatedConversion`, `FPRoundingMode` of conversions)
        // hold for every part.
        let decos: Vec<Instruction> = self
            .ctx
            .module
            .annotations
            .iter()
            .filter(|a| a.class.opcode == Op::Decorate && id_operand(a, 0) == Some(rid))
            .cloned()
            .collect();
        for d in decos {
            for p in &parts {
                let mut c = d.clone();
                c.operands[0] = Operand::IdRef(*p);
                self.ctx.module.annotations.push(c);
            }
        }
        self.define(rid, parts);
        Ok(())
    }

    /// Bytes of scalar or vector type `ty`.
    fn type_bytes(&self, ty: Word) -> Result<u32, String> {
        let width = self
            .ctx
            .scalar_width(ty)
            .ok_or("bitcast of a type without a width")?;
        let n = self
            .wide
            .get(&ty)
            .map(|w| w.n)
            .or_else(|| self.vector(ty).map(|v| v.1))
            .unwrap_or(1);
        Ok(width / 8 * n)
    }

    /// The pieces of value `v` with their types: its parts if it is wide, else itself.
    fn pieces(&mut self, v: Word) -> Result<Vec<(Word, Word)>, String> {
        match self.wide_of(v) {
            Some(w) => Ok(self
                .all_parts(v)?
                .into_iter()
                .map(|p| (p, w.part))
                .collect()),
            None => Ok(vec![(v, self.ty(v)?)]),
        }
    }

    /// The 32-bit words of value `v` (of a type whose size is a multiple of 4 bytes).
    fn words(&mut self, v: Word) -> Result<Vec<Comp>, String> {
        let u32t = self.ctx.t_int(32);
        let mut out = Vec::new();
        for (p, ty) in self.pieces(v)? {
            let bytes = self.type_bytes(ty)?;
            // Pieces of more than 16 bytes (4 x 64 bits) are halved first.
            let halves: Vec<(Word, u32)> = if bytes > 16 {
                let (elem, n) = self.vector(ty).ok_or("bitcast piece type")?;
                let half_ty = self.ctx.t_vec(elem, n / 2);
                let mut hs = Vec::new();
                for h in 0..2 {
                    let mut ops = vec![Operand::IdRef(p), Operand::IdRef(p)];
                    ops.extend((0..n / 2).map(|c| Operand::LiteralBit32(h * n / 2 + c)));
                    hs.push((self.emit(Op::VectorShuffle, half_ty, ops), bytes / 2));
                }
                hs
            } else {
                vec![(p, bytes)]
            };
            for (h, hb) in halves {
                if hb % 4 != 0 || hb == 0 {
                    return Err("bitcast of a value whose size is not a multiple of 4 bytes".into());
                }
                let n = hb / 4;
                let wty = if n == 1 {
                    u32t
                } else {
                    self.ctx.t_vec(u32t, n)
                };
                let wv = self.emit(Op::Bitcast, wty, vec![Operand::IdRef(h)]);
                if n == 1 {
                    out.push(Comp::Scalar(wv));
                } else {
                    out.extend((0..n).map(|idx| Comp::Lane {
                        vec: wv,
                        width: n,
                        idx,
                    }));
                }
            }
        }
        Ok(out)
    }

    /// A value of type `ty` (not wide) from 32-bit `words`.
    fn join_words(&mut self, words: &[Comp], ty: Word) -> Result<Word, String> {
        let u32t = self.ctx.t_int(32);
        if words.len() <= 4 {
            let v = self.build(u32t, words)?;
            return Ok(self.emit(Op::Bitcast, ty, vec![Operand::IdRef(v)]));
        }
        let (elem, n) = self.vector(ty).ok_or("bitcast target type")?;
        let half_ty = self.ctx.t_vec(elem, n / 2);
        let (a, b) = words.split_at(words.len() / 2);
        let a = self.join_words(a, half_ty)?;
        let b = self.join_words(b, half_ty)?;
        let mut ops = vec![Operand::IdRef(a), Operand::IdRef(b)];
        ops.extend((0..n).map(Operand::LiteralBit32));
        Ok(self.emit(Op::VectorShuffle, ty, ops))
    }

    /// `OpBitcast` between types of the same size where one side is wide and the component
    /// counts differ: through 32-bit words.
    fn bitcast(&mut self, v: Word, rid: Word, rt: Word) -> Result<(), String> {
        if self.type_bytes(self.ty(v)?)? != self.type_bytes(rt)? {
            return Err("bitcast between types of different sizes".into());
        }
        let words = self.words(v)?;
        match self.wide.get(&rt).copied() {
            Some(w) => {
                let per = (words.len() / w.parts() as usize).max(1);
                let mut parts = Vec::new();
                for chunk in words.chunks(per) {
                    parts.push(self.join_words(chunk, w.part)?);
                }
                self.define(rid, parts);
            }
            None => {
                let r = self.join_words(&words, rt)?;
                self.alias.insert(rid, r);
            }
        }
        Ok(())
    }

    /// `offset * parts + k` in the type of `offset`.
    fn part_offset(&mut self, offset: Word, parts: u32, k: u32) -> Result<Word, String> {
        let ty = self.ty(offset)?;
        let n = self.int_const(ty, u64::from(parts));
        let m = self.emit(
            Op::IMul,
            ty,
            vec![Operand::IdRef(offset), Operand::IdRef(n)],
        );
        if k == 0 {
            return Ok(m);
        }
        let kc = self.int_const(ty, u64::from(k));
        Ok(self.emit(Op::IAdd, ty, vec![Operand::IdRef(m), Operand::IdRef(kc)]))
    }

    /// `OpenCL.std` instructions on wide vectors.
    fn ext_inst(
        &mut self,
        i: Instruction,
        rt_wide: Option<Wide>,
        rid: Word,
        rt: Word,
    ) -> Result<(), String> {
        let n = lit_operand(&i, 1).ok_or("ext inst number")?;
        let arg = |k: usize| id_operand(&i, 2 + k).ok_or("ext inst operands");
        match n {
            CL_VLOADN | CL_VLOAD_HALFN | CL_VLOADA_HALFN => {
                let w = rt_wide.ok_or("vload type")?;
                let (offset, p) = (arg(0)?, arg(1)?);
                let mut parts = Vec::new();
                for k in 0..w.parts() {
                    let o = self.part_offset(offset, w.parts(), k)?;
                    let mut ops = i.operands.clone();
                    ops[2] = Operand::IdRef(o);
                    ops[3] = Operand::IdRef(p);
                    if let Some(last) = ops.get_mut(4) {
                        *last = Operand::LiteralBit32(PART);
                    }
                    parts.push(self.emit(Op::ExtInst, w.part, ops));
                }
                self.define(rid, parts);
                Ok(())
            }
            CL_VSTOREN | CL_VSTORE_HALFN | CL_VSTORE_HALFN_R | CL_VSTOREA_HALFN
            | CL_VSTOREA_HALFN_R => {
                let (data, offset) = (arg(0)?, arg(1)?);
                let w = self.wide_of(data).ok_or("vstore data")?;
                for k in 0..w.parts() {
                    let o = self.part_offset(offset, w.parts(), k)?;
                    let mut ops = i.operands.clone();
                    ops[2] = Operand::IdRef(self.part(data, k)?);
                    ops[3] = Operand::IdRef(o);
                    let id = self.emit(Op::ExtInst, rt, ops);
                    if k == 0 {
                        self.alias.insert(rid, id);
                    }
                }
                Ok(())
            }
            CL_SHUFFLE | CL_SHUFFLE2 => self.shuffle(&i, n == CL_SHUFFLE2, rid, rt),
            _ => {
                let w = rt_wide.ok_or_else(|| {
                    format!("OpenCL.std {n} with a result that is not a vector of 8 or 16 components is not supported yet")
                })?;
                self.per_part(&i, w, rid)
            }
        }
    }

    /// `shuffle(x, mask)` / `shuffle2(x, y, mask)`: component j is
    /// `x[mask[j] % n]` (or of `(x, y)` concatenated, modulo `2n`).
    fn shuffle(&mut self, i: &Instruction, two: bool, rid: Word, rt: Word) -> Result<(), String> {
        let x = id_operand(i, 2).ok_or("shuffle operands")?;
        let (y, mask) = if two {
            (
                Some(id_operand(i, 3).ok_or("shuffle operands")?),
                id_operand(i, 4).ok_or("shuffle operands")?,
            )
        } else {
            (None, id_operand(i, 3).ok_or("shuffle operands")?)
        };
        let xc = self.comps(x)?;
        let yc = match y {
            Some(y) => self.comps(y)?,
            None => vec![],
        };
        let mc = self.comps(mask)?;
        let mask_ty = self.ty(mask)?;
        let mask_elem = self
            .wide
            .get(&mask_ty)
            .map(|w| w.elem)
            .or_else(|| self.vector(mask_ty).map(|v| v.0))
            .ok_or("shuffle mask type")?;
        let elem = self
            .wide
            .get(&rt)
            .map(|w| w.elem)
            .or_else(|| self.vector(rt).map(|v| v.0))
            .ok_or("shuffle type")?;
        let all: Vec<Comp> = xc.iter().chain(yc.iter()).copied().collect();
        let Some(last) = all.last().copied() else {
            return Err("shuffle of an empty vector".into());
        };
        let total = all.len() as u64;
        if !total.is_power_of_two() {
            return Err("shuffle of a vector whose length is not a power of two".into());
        }
        let lane_mask = self.int_const(mask_elem, total - 1);
        let b = self.ctx.t_bool();
        let mut comps = Vec::new();
        for m in mc {
            let sel = self.scalar(mask_elem, m);
            let sel = self.emit(
                Op::BitwiseAnd,
                mask_elem,
                vec![Operand::IdRef(sel), Operand::IdRef(lane_mask)],
            );
            // Select chain over every source component.
            let mut acc = self.scalar(elem, last);
            for (k, c) in all.iter().enumerate().rev().skip(1) {
                let kc = self.int_const(mask_elem, k as u64);
                let is = self.emit(Op::IEqual, b, vec![Operand::IdRef(sel), Operand::IdRef(kc)]);
                let v = self.scalar(elem, *c);
                acc = self.emit(
                    Op::Select,
                    elem,
                    vec![Operand::IdRef(is), Operand::IdRef(v), Operand::IdRef(acc)],
                );
            }
            comps.push(Comp::Scalar(acc));
        }
        self.assemble(rid, rt, &comps)
    }

    /// Access chains whose index path steps into a wide vector get `c / 4, c % 4`.
    fn access_chain(&mut self, mut i: Instruction) -> Result<(), String> {
        let base = id_operand(&i, 0).ok_or("access chain base")?;
        let bt = self.ty(base)?;
        let Some((_, mut cur)) = self.ctx.ptr_info(bt) else {
            self.record(&i);
            self.out.push(i);
            return Ok(());
        };
        let first = if matches!(
            i.class.opcode,
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain
        ) {
            2
        } else {
            1
        };
        let mut ops: Vec<Operand> = i.operands[..first.min(i.operands.len())].to_vec();
        let mut changed = false;
        for o in i.operands.iter().skip(first) {
            let idx = match o {
                Operand::IdRef(v) => *v,
                _ => return Err("access chain index".into()),
            };
            if let Some(w) = self.wide.get(&cur).copied() {
                let (hi, lo) = self.split_index(idx)?;
                ops.push(Operand::IdRef(hi));
                ops.push(Operand::IdRef(lo));
                cur = w.elem;
                changed = true;
                continue;
            }
            ops.push(o.clone());
            let d = self.ctx.def(cur).ok_or("access chain type")?;
            cur = match d.class.opcode {
                Op::TypeStruct => {
                    let m = self
                        .const_value(idx)
                        .ok_or("struct index is not a constant")?;
                    id_operand(d, m as usize).ok_or("struct index out of range")?
                }
                _ => id_operand(d, 0).ok_or("access chain type")?,
            };
        }
        if changed {
            i.operands = ops;
        }
        self.record(&i);
        self.out.push(i);
        Ok(())
    }

    /// `OpCompositeExtract`/`OpCompositeInsert` on aggregates: literal paths through a wide
    /// vector get `c / 4, c % 4`; a wide result (`result_wide`) is split into parts.
    fn literal_path(
        &mut self,
        mut i: Instruction,
        result_wide: Option<Wide>,
    ) -> Result<(), String> {
        let (base_k, first) = if i.class.opcode == Op::CompositeInsert {
            (1, 2)
        } else {
            (0, 1)
        };
        let base = id_operand(&i, base_k).ok_or("composite base")?;
        let mut cur = self.ty(base)?;
        let mut ops: Vec<Operand> = i.operands[..first.min(i.operands.len())].to_vec();
        let mut changed = false;
        for o in i.operands.iter().skip(first) {
            let Operand::LiteralBit32(c) = o else {
                return Err("composite index".into());
            };
            if let Some(w) = self.wide.get(&cur).copied() {
                ops.push(Operand::LiteralBit32(c / PART));
                ops.push(Operand::LiteralBit32(c % PART));
                cur = w.elem;
                changed = true;
                continue;
            }
            ops.push(o.clone());
            let d = self.ctx.def(cur).ok_or("composite type")?;
            cur = match d.class.opcode {
                Op::TypeStruct => id_operand(d, *c as usize).ok_or("member index out of range")?,
                _ => id_operand(d, 0).ok_or("composite type")?,
            };
        }
        if changed {
            i.operands = ops;
        }
        self.record(&i);
        let rid = i.result_id;
        self.out.push(i);
        if let (Some(w), Some(rid)) = (result_wide, rid) {
            self.split_whole(rid, w);
        }
        Ok(())
    }
}

/// Splits every vector of 8 or 16 components of the kernel into 4-component parts.
///
/// # Errors
/// For instructions on such vectors that have no split yet (named by opcode).
pub(crate) fn lower_wide_vectors(ctx: &mut Ctx) -> Result<(), String> {
    let wide_types: Vec<(Word, Word, u32)> = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypeVector)
        .filter_map(|i| Some((i.result_id?, id_operand(i, 0)?, lit_operand(i, 1)?)))
        .filter(|(_, _, n)| *n > PART)
        .collect();
    if wide_types.is_empty() {
        return Ok(());
    }
    let mut wide = HashMap::new();
    for (id, elem, n) in &wide_types {
        if n % PART != 0 {
            return Err(format!("vectors of {n} components are not supported"));
        }
        let part = ctx.t_vec(*elem, PART);
        wide.insert(
            *id,
            Wide {
                elem: *elem,
                n: *n,
                part,
            },
        );
    }
    let opencl_std = ctx
        .module
        .ext_inst_imports
        .iter()
        .find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == "OpenCL.std" => i.result_id,
            _ => None,
        });
    let types = ctx.value_types();
    let mut s = Split {
        ctx,
        wide,
        types,
        parts: HashMap::new(),
        whole: HashSet::new(),
        fwd: HashMap::new(),
        alias: HashMap::new(),
        opencl_std,
        out: Vec::new(),
    };
    split_constants(&mut s)?;
    let blocks = std::mem::take(&mut s.ctx.module.functions[0].blocks);
    let mut new_blocks = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        for i in std::mem::take(&mut b.instructions) {
            s.instruction(i)?;
        }
        b.instructions = std::mem::take(&mut s.out);
        new_blocks.push(b);
    }
    if let Some(v) = s.fwd.keys().next() {
        return Err(format!("wide vector %{v} is used but never defined"));
    }
    let alias = std::mem::take(&mut s.alias);
    let wide = std::mem::take(&mut s.wide);
    ctx.module.functions[0].blocks = new_blocks;
    ctx.substitute(&alias);
    redefine_types(ctx, &wide);
    Ok(())
}

/// Module-scope constants and undefs of wide types: parts for the function, and the
/// constant itself becomes an array constant (for memory and aggregates).
fn split_constants(s: &mut Split) -> Result<(), String> {
    let globals: Vec<Instruction> = s
        .ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.result_type.is_some_and(|t| s.wide.contains_key(&t)))
        .cloned()
        .collect();
    for g in globals {
        let (Some(id), Some(t)) = (g.result_id, g.result_type) else {
            continue;
        };
        let w = s.wide[&t];
        let parts: Vec<Word> = match g.class.opcode {
            Op::ConstantNull | Op::Undef => {
                let p = s.ctx.global(g.class.opcode, Some(w.part), vec![]);
                vec![p; w.parts() as usize]
            }
            Op::ConstantComposite => {
                let mut parts = Vec::new();
                for chunk in g.operands.chunks(PART as usize) {
                    parts.push(
                        s.ctx
                            .global(Op::ConstantComposite, Some(w.part), chunk.to_vec()),
                    );
                }
                let new_ops: Vec<Operand> = parts.iter().map(|p| Operand::IdRef(*p)).collect();
                if let Some(d) = s
                    .ctx
                    .module
                    .types_global_values
                    .iter_mut()
                    .find(|i| i.result_id == Some(id))
                {
                    d.operands = new_ops;
                }
                parts
            }
            other => {
                return Err(format!(
                    "{} of a vector of 8 or 16 components is not supported yet",
                    op_name(other)
                ))
            }
        };
        for p in &parts {
            s.types.insert(*p, w.part);
        }
        s.whole.insert(id);
        s.parts.insert(id, parts);
    }
    Ok(())
}

/// Redefines each wide vector type as an array of its parts, with the same bytes.
fn redefine_types(ctx: &mut Ctx, wide: &HashMap<Word, Wide>) {
    for (id, w) in wide {
        let len = ctx.c_u32(w.parts());
        let bytes = ctx.scalar_width(w.elem).map(|b| b / 8);
        let is_bool = ctx
            .def(w.elem)
            .is_some_and(|d| d.class.opcode == Op::TypeBool);
        if let Some(d) = ctx
            .module
            .types_global_values
            .iter_mut()
            .find(|i| i.result_id == Some(*id))
        {
            *d = inst(
                Op::TypeArray,
                None,
                Some(*id),
                vec![Operand::IdRef(w.part), Operand::IdRef(len)],
            );
        }
        if let (Some(b), false) = (bytes, is_bool) {
            ctx.decorate(
                *id,
                Decoration::ArrayStride,
                vec![Operand::LiteralBit32(b * PART)],
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compiler::reflect::ArgKind;
    use crate::compiler::{compile_source, find_tools, validate, CompiledProgram, DeviceCaps};

    /// Builds `src` for lavapipe's capabilities; every kernel must pass spirv-val.
    fn build(src: &str) -> CompiledProgram {
        let tools = find_tools().expect("clang-15, opt-15 and llvm-spirv-15 are needed");
        let p = compile_source(&tools, src, "", &DeviceCaps::default())
            .unwrap_or_else(|e| panic!("build failed ({:?}):\n{}", e.kind, e.log));
        for k in &p.kernels {
            if let Some(dir) = std::env::var_os("VKCL_TEST_DUMP") {
                let bytes: Vec<u8> = k.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
                let _ = std::fs::write(
                    std::path::Path::new(&dir).join(format!("{}.spv", k.name)),
                    bytes,
                );
            }
            if let Err(e) = validate::validate_vulkan(&k.spirv) {
                panic!("kernel {} does not validate: {e}", k.name);
            }
        }
        p
    }

    #[test]
    fn fixtures_validate() {
        let p = build(include_str!("../testdata/widevec.cl"));
        let names: Vec<&str> = p.kernels.iter().map(|k| k.name.as_str()).collect();
        for k in [
            "stream_int8",
            "stream_float16",
            "copy_long8",
            "by_value",
            "arith_int16",
            "float_math",
            "small_types",
            "mixed",
            "memory_shapes",
            "relational",
            "loops",
        ] {
            assert!(names.contains(&k), "kernel {k} missing from {names:?}");
        }
    }

    #[test]
    fn argument_block_follows_opencl_layout() {
        let p = build(include_str!("../testdata/widevec.cl"));
        let k = p
            .kernels
            .iter()
            .find(|k| k.name == "by_value")
            .expect("by_value");
        let placed: Vec<(u32, u32)> = k.args.iter().map(|a| (a.offset, a.size)).collect();
        // char, int8 (32-aligned), ulong16 (128-aligned), float8, pointer.
        assert_eq!(placed, [(0, 1), (32, 32), (128, 128), (256, 32), (288, 8)]);
        assert!(k.args[..4].iter().all(|a| a.kind == ArgKind::Value));
        assert_eq!(k.args_size, 296);
    }

    #[test]
    fn wide_built_ins_and_pointers() {
        build(
            "__kernel void k(__global float8 *a, __global int16 *b, __global double16 *d) {\n\
               int i = get_global_id(0);\n\
               float8 f = floor(a[i]);\n\
               a[i] = f + mad(f, f, (float8)(1.0f)) + clamp(f, 0.0f, 1.0f);\n\
               int16 x = b[i];\n\
               b[i] = shuffle(x, (uint16)(15,14,13,12,11,10,9,8,7,6,5,4,3,2,1,0)) +\n\
                      convert_int16(abs(x)) + (int16)(any(x > 3), all(x.lo < 2), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);\n\
               d[i] = fmin(d[i], (double16)(2.0)) * 3.0;\n\
               ((__global int *)(b + 1))[i] = x.s9;\n\
             }\n",
        );
    }
}
