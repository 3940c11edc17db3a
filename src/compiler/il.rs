//! Kernel SPIR-V from the application (`clCreateProgramWithIL`) made ready for
//! `llvm-spirv-15 -r`, which takes it back to LLVM IR (see [`super::frontend`]).
//!
//! vkcl claims SPIR-V 1.0 to 1.4 (`CL_DEVICE_IL_VERSION`, OpenCL SPIR-V environment 2.0),
//! but llvm-spirv-15 reads only part of 1.4 and vkcl inlines every call. [`prepare`]
//! rewrites, with the same meaning:
//!
//! - specialization constants (`OpSpecConstant`, `OpSpecConstantTrue`/`False` with a `SpecId`)
//!   take the values set with `clSetProgramSpecializationConstant` as their defaults, which
//!   llvm-spirv then uses (with the composites and `OpSpecConstantOp`s built from them);
//! - `DontInline` function control is dropped (vkcl has no calls: the kernel ABI has one entry
//!   point and every function is inlined);
//! - `OpCopyLogical` (1.4) becomes `OpCompositeExtract`s and a new composite;
//! - `OpCompositeConstruct` with a part that is not a module-level constant (llvm-spirv-15
//!   translates it only for constants and aborts otherwise) becomes `OpCompositeInsert`s
//!   into an `OpUndef` (vector parts of a vector one component at a time);
//! - `OpPtrEqual`, `OpPtrNotEqual`, `OpPtrDiff` (1.4) become `OpConvertPtrToU`, `OpIEqual` /
//!   `OpINotEqual` / `OpISub` and an exact `OpSDiv` by the element size (computed as the
//!   distance of `OpPtrAccessChain %p 1` from `%p`, which LLVM folds to the type's store size);
//! - `OpCopyMemory` (which llvm-spirv-15 cannot read) becomes an `OpLoad` and an `OpStore`
//!   of the pointee type, with the source's and the target's memory operands (1.4 allows
//!   one for each);
//! - `OpCopyMemorySized` with two memory operands (1.4: target, then source) keeps one that
//!   holds for both: the union of `Volatile`/`Nontemporal`, and `Aligned` with the smaller
//!   alignment only when both have it;
//! - `OpDecorateString`/`OpMemberDecorateString` (1.4; in OpenCL only `UserSemantic`, which has
//!   no semantics) are dropped;
//! - `OpConstantNull` of a scalar type becomes the zero `OpConstant` or `OpConstantFalse`
//!   (llvm-spirv-15 takes null constants of composite and opaque types only);
//! - `OpVectorShuffle` of two vectors of different lengths (LLVM's `shufflevector` takes one
//!   type) becomes extracts and a new vector;
//! - `OpExpectKHR` becomes a copy of its value and `OpAssumeTrueKHR` is dropped
//!   (`SPV_KHR_expect_assume`, `cl_khr_expect_assume`: hints that llvm-spirv-15 cannot read).
//!
//! [`spec_constants`] lists the specialization constants (id and size) for
//! `clSetProgramSpecializationConstant`'s checks.

use std::collections::{BTreeMap, HashMap};

use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{
    AddressingModel, Capability, Decoration, FunctionControl, LinkageType, MemoryAccess, Op, Word,
};

use super::error::BuildFailure;
use super::spv::{id_operand, inst, lit_operand, Defs, IdAlloc};

/// A specialization constant of a module: its `SpecId` and the size in bytes that
/// `clSetProgramSpecializationConstant` must be given (OpenCL 3.0 API 5.8.3: 1 for a
/// boolean, else the size of its scalar type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecConstant {
    /// The `SpecId` decoration's literal.
    pub id: u32,
    /// Bytes of the value: 1 (bool), 1, 2, 4, 8 (integers), 2, 4, 8 (floats).
    pub size: usize,
}

/// Whether module `words` gives a function or variable `LinkOnceODR` linkage
/// (`SPV_KHR_linkonce_odr`); false for a module rspirv cannot parse.
pub(crate) fn has_linkonce_odr(words: &[u32]) -> bool {
    load(words).is_ok_and(|m| {
        m.annotations.iter().any(|i| {
            i.operands
                .iter()
                .any(|o| matches!(o, Operand::LinkageType(LinkageType::LinkOnceODR)))
        })
    })
}

/// Values set for specialization constants: `SpecId` -> the bytes given to
/// `clSetProgramSpecializationConstant` (host byte order, [`SpecConstant::size`] bytes).
pub type SpecValues = BTreeMap<u32, Vec<u8>>;

/// Parses `words` without letting a malformed module's panic in rspirv escape.
fn load(words: &[u32]) -> Result<Module, BuildFailure> {
    let words = words.to_vec();
    match std::panic::catch_unwind(move || super::spv::load(&words)) {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => Err(BuildFailure::compile(format!("invalid SPIR-V module: {e}"))),
        Err(_) => Err(BuildFailure::compile(
            "invalid SPIR-V module: cannot be parsed",
        )),
    }
}

/// The scalar type `ty` of a spec constant: (bits, is float, is signed); bool is (1, ..).
fn scalar_kind(defs: &Defs, ty: Word) -> Option<(u32, bool, bool)> {
    let t = defs.get(ty)?;
    match t.class.opcode {
        Op::TypeBool => Some((1, false, false)),
        Op::TypeInt => Some((lit_operand(t, 0)?, false, lit_operand(t, 1)? == 1)),
        Op::TypeFloat => Some((lit_operand(t, 0)?, true, false)),
        _ => None,
    }
}

/// `SpecId` decorations: target id -> spec id.
fn spec_ids(module: &Module) -> HashMap<Word, u32> {
    module
        .annotations
        .iter()
        .filter(|i| i.class.opcode == Op::Decorate)
        .filter_map(|i| match i.operands.as_slice() {
            [Operand::IdRef(t), Operand::Decoration(Decoration::SpecId), Operand::LiteralBit32(n)] => {
                Some((*t, *n))
            }
            _ => None,
        })
        .collect()
}

/// The specialization constants of SPIR-V module `il` (bytes, either byte order), in spec id
/// order.
///
/// # Errors
/// `CompileError` when `il` is not a SPIR-V module rspirv can parse.
pub fn spec_constants(il: &[u8]) -> Result<Vec<SpecConstant>, BuildFailure> {
    let module = load(&super::frontend::words_from_bytes(il)?)?;
    let defs = Defs::new(&module);
    let ids = spec_ids(&module);
    let mut out: Vec<SpecConstant> = module
        .types_global_values
        .iter()
        .filter(|i| {
            matches!(
                i.class.opcode,
                Op::SpecConstant | Op::SpecConstantTrue | Op::SpecConstantFalse
            )
        })
        .filter_map(|i| {
            let id = *ids.get(&i.result_id?)?;
            let (bits, _, _) = scalar_kind(&defs, i.result_type?)?;
            Some(SpecConstant {
                id,
                size: (bits as usize).div_ceil(8),
            })
        })
        .collect();
    out.sort_by_key(|s| s.id);
    out.dedup_by_key(|s| s.id);
    Ok(out)
}

/// The literal operand(s) of an `OpSpecConstant` of `bits`-bit type for `value` (host byte
/// order): SPIR-V 2.2.1, narrower types in the low bits, sign-extended when signed.
fn literal(value: &[u8], bits: u32, signed: bool) -> Option<Operand> {
    let mut b = [0u8; 8];
    let n = value.len().min(8);
    b[..n].copy_from_slice(&value[..n]);
    let v = u64::from_ne_bytes(b);
    Some(match bits {
        64 => Operand::LiteralBit64(v),
        32 => Operand::LiteralBit32(v as u32),
        8 | 16 => {
            let shift = 64 - bits;
            let w = if signed {
                (((v << shift) as i64) >> shift) as u32
            } else {
                ((v << shift) >> shift) as u32
            };
            Operand::LiteralBit32(w)
        }
        _ => return None,
    })
}

/// Sets the defaults of the spec constants named in `values`.
fn apply_spec_values(module: &mut Module, values: &SpecValues) {
    if values.is_empty() {
        return;
    }
    let defs = Defs::new(module);
    let ids = spec_ids(module);
    for i in module.types_global_values.iter_mut() {
        let Some(value) = i
            .result_id
            .and_then(|r| ids.get(&r))
            .and_then(|s| values.get(s))
        else {
            continue;
        };
        match i.class.opcode {
            Op::SpecConstantTrue | Op::SpecConstantFalse => {
                let on = value.iter().any(|b| *b != 0);
                let op = if on {
                    Op::SpecConstantTrue
                } else {
                    Op::SpecConstantFalse
                };
                *i = Instruction::new(op, i.result_type, i.result_id, Vec::new());
            }
            Op::SpecConstant => {
                let kind = i.result_type.and_then(|t| scalar_kind(&defs, t));
                if let Some(lit) = kind.and_then(|(bits, _, signed)| literal(value, bits, signed)) {
                    i.operands = vec![lit];
                }
            }
            _ => {}
        }
    }
}

/// `OpConstantNull` of a scalar type as the zero `OpConstant` (`OpConstantFalse` for bool):
/// llvm-spirv-15 accepts only composite and opaque null constants ("Invalid type").
/// Returns whether anything changed.
fn scalar_nulls_as_zeros(module: &mut Module) -> bool {
    let defs = Defs::new(module);
    let mut changed = false;
    for i in module.types_global_values.iter_mut() {
        if i.class.opcode != Op::ConstantNull {
            continue;
        }
        let Some((bits, _, _)) = i.result_type.and_then(|t| scalar_kind(&defs, t)) else {
            continue;
        };
        *i = match bits {
            1 => Instruction::new(Op::ConstantFalse, i.result_type, i.result_id, Vec::new()),
            64 => Instruction::new(
                Op::Constant,
                i.result_type,
                i.result_id,
                vec![Operand::LiteralBit64(0)],
            ),
            _ => Instruction::new(
                Op::Constant,
                i.result_type,
                i.result_id,
                vec![Operand::LiteralBit32(0)],
            ),
        };
        changed = true;
    }
    changed
}

/// The merged single memory operand of `OpCopyMemory*`'s two (target's, source's), given as
/// operand lists starting with the `MemoryAccess` mask.
fn merge_memory_operands(target: &[Operand], source: &[Operand]) -> Vec<Operand> {
    let mask = |ops: &[Operand]| match ops.first() {
        Some(Operand::MemoryAccess(m)) => *m,
        _ => MemoryAccess::NONE,
    };
    let aligned = |ops: &[Operand]| {
        (mask(ops).contains(MemoryAccess::ALIGNED))
            .then(|| match ops.get(1) {
                Some(Operand::LiteralBit32(a)) => Some(*a),
                _ => None,
            })
            .flatten()
    };
    let kept = MemoryAccess::VOLATILE | MemoryAccess::NONTEMPORAL;
    let mut m = (mask(target) | mask(source)) & kept;
    let align = match (aligned(target), aligned(source)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => None,
    };
    if align.is_some() {
        m |= MemoryAccess::ALIGNED;
    }
    let mut out = vec![Operand::MemoryAccess(m)];
    if let Some(a) = align {
        out.push(Operand::LiteralBit32(a));
    }
    out
}

/// The memory operands of `OpCopyMemory*` (the operands after the pointers and size): the
/// target's and the source's (SPIR-V 1.4); a single one holds for both.
fn split_memory_operands(ops: &[Operand]) -> (&[Operand], &[Operand]) {
    let second = ops
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, o)| matches!(o, Operand::MemoryAccess(_)))
        .map(|(k, _)| k);
    match second {
        Some(k) => (&ops[..k], &ops[k..]),
        None => (ops, ops),
    }
}

/// What the rewriting of function bodies needs: types by id, fresh ids, new global
/// definitions.
struct Rewriter {
    defs: Defs,
    types_of: HashMap<Word, Word>,
    ids: IdAlloc,
    new_globals: Vec<Instruction>,
    /// The unsigned integer type of pointer width (created on first use).
    intptr: Option<Word>,
    ptr_bits: u32,
    consts: HashMap<(Word, u64), Word>,
    new_caps: Vec<Capability>,
}

impl Rewriter {
    fn int_type(&mut self, module_types: &[Instruction], bits: u32) -> Word {
        if let Some(t) = self.intptr {
            return t;
        }
        let found = module_types.iter().chain(&self.new_globals).find(|i| {
            i.class.opcode == Op::TypeInt
                && lit_operand(i, 0) == Some(bits)
                && lit_operand(i, 1) == Some(0)
        });
        let t = match found.and_then(|i| i.result_id) {
            Some(t) => t,
            None => {
                let t = self.ids.next();
                self.new_globals.push(inst(
                    Op::TypeInt,
                    None,
                    Some(t),
                    vec![Operand::LiteralBit32(bits), Operand::LiteralBit32(0)],
                ));
                if bits == 64 {
                    self.new_caps.push(Capability::Int64);
                }
                t
            }
        };
        self.intptr = Some(t);
        t
    }

    fn constant(&mut self, ty: Word, bits: u32, v: u64) -> Word {
        if let Some(c) = self.consts.get(&(ty, v)) {
            return *c;
        }
        let c = self.ids.next();
        let lit = if bits == 64 {
            Operand::LiteralBit64(v)
        } else {
            Operand::LiteralBit32(v as u32)
        };
        self.new_globals
            .push(inst(Op::Constant, Some(ty), Some(c), vec![lit]));
        self.consts.insert((ty, v), c);
        c
    }

    /// The instructions that compute `OpCopyLogical` of `src` (of type `src_ty`) as
    /// `dst_ty`, appended to `out`; returns the result id (`want` when given).
    fn copy_logical(
        &mut self,
        dst_ty: Word,
        src: Word,
        src_ty: Word,
        want: Option<Word>,
        out: &mut Vec<Instruction>,
        depth: u32,
    ) -> Result<Word, String> {
        if dst_ty == src_ty && want.is_none() {
            return Ok(src);
        }
        if depth > 64 {
            return Err("OpCopyLogical: types nested too deeply".into());
        }
        let dst = self
            .defs
            .get(dst_ty)
            .ok_or("OpCopyLogical: unknown type")?
            .clone();
        let srct = self
            .defs
            .get(src_ty)
            .ok_or("OpCopyLogical: unknown type")?
            .clone();
        let members: Vec<(Word, Word)> = match (dst.class.opcode, srct.class.opcode) {
            (Op::TypeStruct, Op::TypeStruct) if dst.operands.len() == srct.operands.len() => dst
                .operands
                .iter()
                .zip(&srct.operands)
                .filter_map(|(a, b)| match (a, b) {
                    (Operand::IdRef(a), Operand::IdRef(b)) => Some((*a, *b)),
                    _ => None,
                })
                .collect(),
            (Op::TypeArray, Op::TypeArray) => {
                let len = id_operand(&dst, 1)
                    .and_then(|l| self.defs.const_u64(l))
                    .ok_or("OpCopyLogical: array length is not a constant")?;
                if len > 4096 {
                    return Err("OpCopyLogical: arrays of more than 4096 elements".into());
                }
                let (a, b) = (id_operand(&dst, 0), id_operand(&srct, 0));
                let (Some(a), Some(b)) = (a, b) else {
                    return Err("OpCopyLogical: bad array type".into());
                };
                vec![(a, b); len as usize]
            }
            _ if dst_ty == src_ty => {
                // Same type at the top with a wanted result id: a plain copy.
                let r = want.unwrap_or_else(|| self.ids.next());
                out.push(inst(
                    Op::CopyObject,
                    Some(dst_ty),
                    Some(r),
                    vec![Operand::IdRef(src)],
                ));
                return Ok(r);
            }
            _ => return Err("OpCopyLogical: types do not match logically".into()),
        };
        let mut parts = Vec::with_capacity(members.len());
        for (k, (d, s)) in members.into_iter().enumerate() {
            let e = self.ids.next();
            out.push(inst(
                Op::CompositeExtract,
                Some(s),
                Some(e),
                vec![Operand::IdRef(src), Operand::LiteralBit32(k as u32)],
            ));
            parts.push(Operand::IdRef(self.copy_logical(
                d,
                e,
                s,
                None,
                out,
                depth + 1,
            )?));
        }
        let parts: Vec<Word> = parts
            .iter()
            .filter_map(|p| match p {
                Operand::IdRef(w) => Some(*w),
                _ => None,
            })
            .collect();
        Ok(self.construct(dst_ty, &parts, want, out))
    }

    /// Whether `id` is a module-level value (constant, undef, spec constant, variable).
    fn is_global(&self, id: Word) -> bool {
        self.defs.get(id).is_some()
    }

    /// A composite of type `ty` from `parts` (as `OpCompositeConstruct` takes them), appended
    /// to `out`; returns its id (`want` when given). llvm-spirv-15 translates
    /// `OpCompositeConstruct` only of constants (it aborts in `ConstantArray::get` and the
    /// like otherwise), so other parts go in with `OpCompositeInsert`s into an `OpUndef`.
    fn construct(
        &mut self,
        ty: Word,
        parts: &[Word],
        want: Option<Word>,
        out: &mut Vec<Instruction>,
    ) -> Word {
        let r = want.unwrap_or_else(|| self.ids.next());
        if parts.iter().all(|p| self.is_global(*p)) {
            let ops = parts.iter().map(|p| Operand::IdRef(*p)).collect();
            out.push(inst(Op::CompositeConstruct, Some(ty), Some(r), ops));
            return r;
        }
        // A vector may be built from smaller vectors: one scalar per component.
        let is_vector = self
            .defs
            .get(ty)
            .is_some_and(|t| t.class.opcode == Op::TypeVector);
        let mut scalars = Vec::new();
        for p in parts {
            let vector = self
                .types_of
                .get(p)
                .and_then(|t| self.defs.get(*t))
                .filter(|t| is_vector && t.class.opcode == Op::TypeVector)
                .and_then(|t| Some((id_operand(t, 0)?, lit_operand(t, 1)?)));
            match vector {
                Some((elem, n)) => {
                    for k in 0..n {
                        let e = self.ids.next();
                        out.push(inst(
                            Op::CompositeExtract,
                            Some(elem),
                            Some(e),
                            vec![Operand::IdRef(*p), Operand::LiteralBit32(k)],
                        ));
                        scalars.push(e);
                    }
                }
                None => scalars.push(*p),
            }
        }
        let undef = self.ids.next();
        self.new_globals
            .push(inst(Op::Undef, Some(ty), Some(undef), Vec::new()));
        let mut cur = undef;
        for (k, p) in scalars.iter().enumerate() {
            let next = if k + 1 == scalars.len() {
                r
            } else {
                self.ids.next()
            };
            out.push(inst(
                Op::CompositeInsert,
                Some(ty),
                Some(next),
                vec![
                    Operand::IdRef(*p),
                    Operand::IdRef(cur),
                    Operand::LiteralBit32(k as u32),
                ],
            ));
            cur = next;
        }
        if scalars.is_empty() {
            out.push(inst(
                Op::CopyObject,
                Some(ty),
                Some(r),
                vec![Operand::IdRef(undef)],
            ));
        }
        r
    }

    /// The replacement of one function-body instruction, or `None` to keep it.
    fn rewrite(
        &mut self,
        module_types: &[Instruction],
        i: &Instruction,
    ) -> Result<Option<Vec<Instruction>>, String> {
        let mut out = Vec::new();
        match i.class.opcode {
            Op::CopyLogical => {
                let (Some(ty), Some(r), Some(src)) = (i.result_type, i.result_id, id_operand(i, 0))
                else {
                    return Err("malformed OpCopyLogical".into());
                };
                let src_ty = *self
                    .types_of
                    .get(&src)
                    .ok_or("OpCopyLogical: operand of unknown type")?;
                self.copy_logical(ty, src, src_ty, Some(r), &mut out, 0)?;
            }
            // SPV_KHR_expect_assume (cl_khr_expect_assume): hints only; llvm-spirv-15 aborts
            // on them. The expectation is the value itself, an assumption nothing.
            Op::ExpectKHR => {
                let (Some(ty), Some(r), Some(v)) = (i.result_type, i.result_id, id_operand(i, 0))
                else {
                    return Err("malformed OpExpectKHR".into());
                };
                out.push(inst(
                    Op::CopyObject,
                    Some(ty),
                    Some(r),
                    vec![Operand::IdRef(v)],
                ));
            }
            Op::AssumeTrueKHR => {}
            Op::VectorShuffle => {
                let (Some(ty), Some(r), Some(a), Some(b)) = (
                    i.result_type,
                    i.result_id,
                    id_operand(i, 0),
                    id_operand(i, 1),
                ) else {
                    return Err("malformed OpVectorShuffle".into());
                };
                let (ta, tb) = (
                    self.types_of.get(&a).copied(),
                    self.types_of.get(&b).copied(),
                );
                if ta == tb {
                    return Ok(None);
                }
                // Vectors of different lengths (LLVM's shufflevector takes one type; llvm-spirv-15
                // aborts): one extract per component, then a new vector.
                let info = |t: Option<Word>| {
                    let t = self.defs.get(t?)?;
                    (t.class.opcode == Op::TypeVector)
                        .then(|| Some((id_operand(t, 0)?, lit_operand(t, 1)?)))
                        .flatten()
                };
                let (Some((elem, na)), Some(_)) = (info(ta), info(tb)) else {
                    return Err("OpVectorShuffle of non-vectors".into());
                };
                let mut parts = Vec::new();
                for k in i.operands.iter().skip(2) {
                    let Operand::LiteralBit32(k) = k else {
                        return Err("malformed OpVectorShuffle".into());
                    };
                    let part = if *k == u32::MAX {
                        // An undefined component.
                        let u = self.ids.next();
                        self.new_globals
                            .push(inst(Op::Undef, Some(elem), Some(u), Vec::new()));
                        u
                    } else {
                        let (src, at) = if *k < na { (a, *k) } else { (b, *k - na) };
                        let e = self.ids.next();
                        out.push(inst(
                            Op::CompositeExtract,
                            Some(elem),
                            Some(e),
                            vec![Operand::IdRef(src), Operand::LiteralBit32(at)],
                        ));
                        e
                    };
                    parts.push(part);
                }
                self.construct(ty, &parts, Some(r), &mut out);
            }
            Op::CompositeConstruct => {
                let parts: Vec<Word> = (0..i.operands.len())
                    .filter_map(|k| id_operand(i, k))
                    .collect();
                if parts.iter().all(|p| self.is_global(*p)) {
                    return Ok(None);
                }
                let (Some(ty), Some(r)) = (i.result_type, i.result_id) else {
                    return Err("malformed OpCompositeConstruct".into());
                };
                self.construct(ty, &parts, Some(r), &mut out);
            }
            Op::PtrEqual | Op::PtrNotEqual | Op::PtrDiff => {
                let (Some(ty), Some(r), Some(a), Some(b)) = (
                    i.result_type,
                    i.result_id,
                    id_operand(i, 0),
                    id_operand(i, 1),
                ) else {
                    return Err(format!("malformed {:?}", i.class.opcode));
                };
                let bits = self.ptr_bits;
                let it = self.int_type(module_types, bits);
                let (ua, ub) = (self.ids.next(), self.ids.next());
                out.push(inst(
                    Op::ConvertPtrToU,
                    Some(it),
                    Some(ua),
                    vec![Operand::IdRef(a)],
                ));
                out.push(inst(
                    Op::ConvertPtrToU,
                    Some(it),
                    Some(ub),
                    vec![Operand::IdRef(b)],
                ));
                match i.class.opcode {
                    Op::PtrEqual | Op::PtrNotEqual => {
                        let op = if i.class.opcode == Op::PtrEqual {
                            Op::IEqual
                        } else {
                            Op::INotEqual
                        };
                        out.push(inst(
                            op,
                            Some(ty),
                            Some(r),
                            vec![Operand::IdRef(ua), Operand::IdRef(ub)],
                        ));
                    }
                    _ => {
                        // (a - b) / sizeof(*b), sizeof(*b) = &b[1] - &b[0].
                        let pty = *self
                            .types_of
                            .get(&b)
                            .ok_or("OpPtrDiff: operand of unknown type")?;
                        let one = self.constant(it, bits, 1);
                        let (next, unext, size, diff) = (
                            self.ids.next(),
                            self.ids.next(),
                            self.ids.next(),
                            self.ids.next(),
                        );
                        out.push(inst(
                            Op::PtrAccessChain,
                            Some(pty),
                            Some(next),
                            vec![Operand::IdRef(b), Operand::IdRef(one)],
                        ));
                        out.push(inst(
                            Op::ConvertPtrToU,
                            Some(it),
                            Some(unext),
                            vec![Operand::IdRef(next)],
                        ));
                        out.push(inst(
                            Op::ISub,
                            Some(it),
                            Some(size),
                            vec![Operand::IdRef(unext), Operand::IdRef(ub)],
                        ));
                        out.push(inst(
                            Op::ISub,
                            Some(it),
                            Some(diff),
                            vec![Operand::IdRef(ua), Operand::IdRef(ub)],
                        ));
                        let rbits = self
                            .defs
                            .get(ty)
                            .filter(|t| t.class.opcode == Op::TypeInt)
                            .and_then(|t| lit_operand(t, 0))
                            .ok_or("OpPtrDiff: result type is not a scalar integer")?;
                        if rbits == bits {
                            out.push(inst(
                                Op::SDiv,
                                Some(ty),
                                Some(r),
                                vec![Operand::IdRef(diff), Operand::IdRef(size)],
                            ));
                        } else {
                            let q = self.ids.next();
                            out.push(inst(
                                Op::SDiv,
                                Some(it),
                                Some(q),
                                vec![Operand::IdRef(diff), Operand::IdRef(size)],
                            ));
                            out.push(inst(
                                Op::SConvert,
                                Some(ty),
                                Some(r),
                                vec![Operand::IdRef(q)],
                            ));
                        }
                    }
                }
            }
            Op::CopyMemory => {
                // llvm-spirv-15 cannot read OpCopyMemory at all: a load and a store of the
                // pointee type, the source's memory operand on the load and the target's on
                // the store (one operand holds for both).
                let (Some(dst), Some(src)) = (id_operand(i, 0), id_operand(i, 1)) else {
                    return Err("malformed OpCopyMemory".into());
                };
                let pointee = self
                    .types_of
                    .get(&dst)
                    .and_then(|t| self.defs.get(*t))
                    .filter(|t| t.class.opcode == Op::TypePointer)
                    .and_then(|t| id_operand(t, 1))
                    .ok_or("OpCopyMemory: target is not a pointer")?;
                let (target_ops, source_ops) = split_memory_operands(&i.operands[2..]);
                let v = self.ids.next();
                let mut load = vec![Operand::IdRef(src)];
                load.extend(source_ops.iter().cloned());
                out.push(inst(Op::Load, Some(pointee), Some(v), load));
                let mut store = vec![Operand::IdRef(dst), Operand::IdRef(v)];
                store.extend(target_ops.iter().cloned());
                out.push(inst(Op::Store, None, None, store));
            }
            Op::CopyMemorySized => {
                let (target_ops, source_ops) = split_memory_operands(&i.operands[3..]);
                if target_ops.len() + 3 == i.operands.len() {
                    return Ok(None);
                }
                let mut c = i.clone();
                c.operands.truncate(3);
                c.operands
                    .extend(merge_memory_operands(target_ops, source_ops));
                out.push(c);
            }
            _ => return Ok(None),
        }
        Ok(Some(out))
    }
}

/// Makes application SPIR-V `words` ready for llvm-spirv-15 (module doc): spec constant
/// `values` applied, SPIR-V 1.4 instructions rewritten, `DontInline` dropped. A module that
/// needs none of it comes back unchanged.
///
/// # Errors
/// `CompileError` when the module cannot be parsed or an instruction is malformed (an
/// `OpCopyLogical` between types that do not match, ...).
pub(crate) fn prepare(words: &[u32], values: &SpecValues) -> Result<Vec<u32>, BuildFailure> {
    let mut module = match load(words) {
        Ok(m) => m,
        // Nothing to apply: llvm-spirv judges (and explains) a module rspirv cannot read.
        Err(_) if values.is_empty() => return Ok(words.to_vec()),
        Err(e) => return Err(e),
    };
    let mut changed = !values.is_empty();
    apply_spec_values(&mut module, values);
    changed |= scalar_nulls_as_zeros(&mut module);

    // Decorations with strings (UserSemantic): no meaning for the kernel.
    let before = module.annotations.len();
    module.annotations.retain(|i| {
        !matches!(
            i.class.opcode,
            Op::DecorateString | Op::MemberDecorateString
        )
    });
    changed |= module.annotations.len() != before;
    // The expect/assume instructions go (below): so do their extension and capability.
    let before = module.extensions.len() + module.capabilities.len();
    module.extensions.retain(|i| {
        !matches!(i.operands.first(), Some(Operand::LiteralString(e)) if e == "SPV_KHR_expect_assume")
    });
    module.capabilities.retain(|i| {
        !matches!(
            i.operands.first(),
            Some(Operand::Capability(Capability::ExpectAssumeKHR))
        )
    });
    changed |= module.extensions.len() + module.capabilities.len() != before;

    let mut types_of = HashMap::new();
    for i in &module.types_global_values {
        if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
            types_of.insert(r, t);
        }
    }
    for f in &module.functions {
        for i in f
            .parameters
            .iter()
            .chain(f.blocks.iter().flat_map(|b| &b.instructions))
        {
            if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                types_of.insert(r, t);
            }
        }
    }
    let ptr_bits = match module
        .memory_model
        .as_ref()
        .and_then(|m| m.operands.first())
    {
        Some(Operand::AddressingModel(AddressingModel::Physical32)) => 32,
        _ => 64,
    };
    let mut rw = Rewriter {
        defs: Defs::new(&module),
        types_of,
        ids: IdAlloc::new(&module),
        new_globals: Vec::new(),
        intptr: None,
        ptr_bits,
        consts: HashMap::new(),
        new_caps: Vec::new(),
    };
    let types = std::mem::take(&mut module.types_global_values);
    let mut failure = None;
    for f in module.functions.iter_mut() {
        if let Some(def) = f.def.as_mut() {
            for op in def.operands.iter_mut() {
                if let Operand::FunctionControl(c) = op {
                    changed |= c.contains(FunctionControl::DONT_INLINE);
                    c.remove(FunctionControl::DONT_INLINE);
                }
            }
        }
        for b in f.blocks.iter_mut() {
            let old = std::mem::take(&mut b.instructions);
            for i in old {
                match rw.rewrite(&types, &i) {
                    Ok(Some(new)) => {
                        changed = true;
                        b.instructions.extend(new);
                    }
                    Ok(None) => b.instructions.push(i),
                    Err(e) => {
                        failure.get_or_insert(e);
                        b.instructions.push(i);
                    }
                }
            }
        }
    }
    if let Some(e) = failure {
        return Err(BuildFailure::compile(format!("invalid SPIR-V module: {e}")));
    }
    if !changed {
        return Ok(words.to_vec());
    }
    module.types_global_values = types;
    // New types first (constants use them), then constants; all after the module's own
    // definitions, before any function.
    // (Undefs of existing types count as constants.)
    let (new_types, new_consts): (Vec<_>, Vec<_>) = rw
        .new_globals
        .into_iter()
        .partition(|i| i.class.opcode == Op::TypeInt);
    module.types_global_values.extend(new_types);
    module.types_global_values.extend(new_consts);
    for cap in rw.new_caps {
        let has = module
            .capabilities
            .iter()
            .any(|i| matches!(i.operands.first(), Some(Operand::Capability(c)) if *c == cap));
        if !has {
            module.capabilities.push(inst(
                Op::Capability,
                None,
                None,
                vec![Operand::Capability(cap)],
            ));
        }
    }
    if let Some(h) = module.header.as_mut() {
        h.bound = rw.ids.bound();
    }
    Ok(module.assemble())
}

#[cfg(test)]
mod tests {
    use super::*;
    use spirv_tools::assembler::Assembler;
    use spirv_tools::val::Validator;
    use spirv_tools::TargetEnv;

    const HEAD: &str = "OpCapability Addresses\nOpCapability Kernel\nOpCapability Int64\n\
                        OpCapability Int8\nOpCapability Int16\n\
                        OpMemoryModel Physical64 OpenCL\n";

    fn asm(text: &str) -> Vec<u32> {
        asm_whole(&format!("{HEAD}{text}"))
    }

    fn asm_whole(text: &str) -> Vec<u32> {
        let a = spirv_tools::assembler::create(Some(TargetEnv::Universal_1_4));
        a.assemble(text, Default::default())
            .unwrap_or_else(|e| panic!("spirv-as: {e}"))
            .as_words()
            .to_vec()
    }

    /// `prepare`, then spirv-val (SPIR-V 1.4) on the result.
    fn prepared(words: &[u32], values: &SpecValues) -> Module {
        let out = prepare(words, values).unwrap_or_else(|e| panic!("{}", e.log));
        let v = spirv_tools::val::create(Some(TargetEnv::Universal_1_4));
        v.validate(&out, None)
            .unwrap_or_else(|e| panic!("prepared module does not validate: {e}"));
        rspirv::dr::load_words(&out).unwrap()
    }

    fn ops(m: &Module) -> Vec<Op> {
        m.functions
            .iter()
            .flat_map(|f| &f.blocks)
            .flat_map(|b| &b.instructions)
            .map(|i| i.class.opcode)
            .collect()
    }

    fn bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    const PTROPS: &str = r#"
        OpEntryPoint Kernel %k "k"
        %void = OpTypeVoid
        %bool = OpTypeBool
        %uint = OpTypeInt 32 0
        %ulong = OpTypeInt 64 0
        %v4 = OpTypeVector %uint 4
        %p = OpTypePointer CrossWorkgroup %v4
        %pu = OpTypePointer CrossWorkgroup %uint
        %fn = OpTypeFunction %void %p %p %pu
        %k = OpFunction %void None %fn
        %a = OpFunctionParameter %p
        %b = OpFunctionParameter %p
        %o = OpFunctionParameter %pu
        %e = OpLabel
        %eq = OpPtrEqual %bool %a %b
        %ne = OpPtrNotEqual %bool %a %b
        %d64 = OpPtrDiff %ulong %a %b
        %d32 = OpPtrDiff %uint %a %b
        OpReturn
        OpFunctionEnd
    "#;

    #[test]
    fn pointer_comparisons_become_integer_arithmetic() {
        let m = prepared(&asm(PTROPS), &SpecValues::new());
        let o = ops(&m);
        assert!(!o
            .iter()
            .any(|op| matches!(op, Op::PtrEqual | Op::PtrNotEqual | Op::PtrDiff)));
        assert_eq!(o.iter().filter(|op| **op == Op::IEqual).count(), 1);
        assert_eq!(o.iter().filter(|op| **op == Op::INotEqual).count(), 1);
        // Each difference divides by the element size and the 32-bit one narrows after.
        assert_eq!(o.iter().filter(|op| **op == Op::SDiv).count(), 2);
        assert_eq!(o.iter().filter(|op| **op == Op::SConvert).count(), 1);
        assert_eq!(o.iter().filter(|op| **op == Op::PtrAccessChain).count(), 2);
    }

    #[test]
    fn copy_logical_becomes_extracts_and_constructs() {
        let text = r#"
            OpEntryPoint Kernel %k "k"
            %void = OpTypeVoid
            %uint = OpTypeInt 32 0
            %float = OpTypeFloat 32
            %uint_2 = OpConstant %uint 2
            %ia = OpTypeStruct %uint %float
            %ib = OpTypeStruct %uint %float
            %arra = OpTypeArray %ia %uint_2
            %arrb = OpTypeArray %ib %uint_2
            %sa = OpTypeStruct %arra %float
            %sb = OpTypeStruct %arrb %float
            %pb = OpTypePointer CrossWorkgroup %sb
            %fn = OpTypeFunction %void %pb
            %one = OpConstant %uint 1
            %f = OpConstant %float 2.5
            %ca = OpConstantComposite %ia %one %f
            %arr = OpConstantComposite %arra %ca %ca
            %src = OpConstantComposite %sa %arr %f
            %k = OpFunction %void None %fn
            %dst = OpFunctionParameter %pb
            %e = OpLabel
            %c = OpCopyLogical %sb %src
            OpStore %dst %c
            OpReturn
            OpFunctionEnd
        "#;
        let m = prepared(&asm(text), &SpecValues::new());
        let o = ops(&m);
        assert!(!o.contains(&Op::CopyLogical));
        // sb <- (arrb <- 2 x ib <- 2 members) and a float: 2 + 2 + 2*2 extracts, and as
        // many inserts (the parts are not constants).
        assert_eq!(
            o.iter().filter(|op| **op == Op::CompositeExtract).count(),
            8
        );
        assert_eq!(o.iter().filter(|op| **op == Op::CompositeInsert).count(), 8);
        assert!(!o.contains(&Op::CompositeConstruct));

        let bad = text.replace(
            "%sb = OpTypeStruct %arrb %float",
            "%sb = OpTypeStruct %arrb %uint",
        );
        let e = prepare(&asm(&bad), &SpecValues::new()).unwrap_err();
        assert!(e.log.contains("OpCopyLogical"), "{}", e.log);
    }

    #[test]
    fn copy_memory_takes_the_operands_of_each_side() {
        let text = r#"
            OpEntryPoint Kernel %k "k"
            %void = OpTypeVoid
            %uint = OpTypeInt 32 0
            %ulong = OpTypeInt 64 0
            %four = OpConstant %ulong 4
            %pg = OpTypePointer CrossWorkgroup %uint
            %pf = OpTypePointer Function %uint
            %fn = OpTypeFunction %void %pg
            %k = OpFunction %void None %fn
            %dst = OpFunctionParameter %pg
            %e = OpLabel
            %v = OpVariable %pf Function
            OpCopyMemory %dst %v Volatile Aligned 4
            OpCopyMemory %dst %v Aligned 16 Volatile|Aligned 4
            OpCopyMemorySized %dst %v %four Volatile|Aligned 8 Aligned 4
            OpCopyMemorySized %dst %v %four Aligned 8
            OpReturn
            OpFunctionEnd
        "#;
        let m = prepared(&asm(text), &SpecValues::new());
        let body: Vec<&Instruction> = m.functions[0].blocks[0].instructions.iter().collect();
        let mem = |i: &Instruction, from: usize| i.operands[from..].to_vec();
        let va = |m: MemoryAccess, a: u32| vec![Operand::MemoryAccess(m), Operand::LiteralBit32(a)];
        // body[0] is the variable; then (load, store) twice, then the two sized copies.
        assert_eq!(body[1].class.opcode, Op::Load);
        assert_eq!(mem(body[1], 1), va(MemoryAccess::ALIGNED, 4));
        assert_eq!(body[2].class.opcode, Op::Store);
        assert_eq!(
            mem(body[2], 2),
            vec![Operand::MemoryAccess(MemoryAccess::VOLATILE)]
        );
        assert_eq!(
            mem(body[3], 1),
            va(MemoryAccess::VOLATILE | MemoryAccess::ALIGNED, 4)
        );
        assert_eq!(mem(body[4], 2), va(MemoryAccess::ALIGNED, 16));
        assert_eq!(body[5].class.opcode, Op::CopyMemorySized);
        assert_eq!(
            mem(body[5], 3),
            va(MemoryAccess::VOLATILE | MemoryAccess::ALIGNED, 4)
        );
        assert_eq!(mem(body[6], 3), va(MemoryAccess::ALIGNED, 8));
    }

    #[test]
    fn composites_of_non_constants_become_inserts() {
        let text = r#"
            OpEntryPoint Kernel %k "k"
            %void = OpTypeVoid
            %uint = OpTypeInt 32 0
            %float = OpTypeFloat 32
            %u7 = OpConstant %uint 7
            %f1 = OpConstant %float 1
            %st = OpTypeStruct %uint %float
            %v2 = OpTypeVector %uint 2
            %v4 = OpTypeVector %uint 4
            %fn = OpTypeFunction %void %uint %float %v2
            %k = OpFunction %void None %fn
            %x = OpFunctionParameter %uint
            %y = OpFunctionParameter %float
            %v = OpFunctionParameter %v2
            %e = OpLabel
            %c = OpCompositeConstruct %st %u7 %f1
            %s = OpCompositeConstruct %st %x %y
            %w = OpCompositeConstruct %v4 %v %x %u7
            OpReturn
            OpFunctionEnd
        "#;
        let m = prepared(&asm(text), &SpecValues::new());
        let o = ops(&m);
        // The constant one stays; the struct takes 2 inserts, the vector 2 extracts of %v
        // and 4 inserts.
        assert_eq!(
            o.iter().filter(|op| **op == Op::CompositeConstruct).count(),
            1
        );
        assert_eq!(o.iter().filter(|op| **op == Op::CompositeInsert).count(), 6);
        assert_eq!(
            o.iter().filter(|op| **op == Op::CompositeExtract).count(),
            2
        );
    }

    #[test]
    fn shuffles_of_vectors_of_different_lengths_become_extracts() {
        let text = r#"
            OpEntryPoint Kernel %k "k"
            %void = OpTypeVoid
            %uint = OpTypeInt 32 0
            %v2 = OpTypeVector %uint 2
            %v4 = OpTypeVector %uint 4
            %z2 = OpConstantNull %v2
            %fn = OpTypeFunction %void %v4
            %k = OpFunction %void None %fn
            %x = OpFunctionParameter %v4
            %e = OpLabel
            %same = OpVectorShuffle %v2 %x %x 3 0
            %mixed = OpVectorShuffle %v4 %x %z2 1 4 5 0xffffffff
            OpReturn
            OpFunctionEnd
        "#;
        let m = prepared(&asm(text), &SpecValues::new());
        let o = ops(&m);
        // The same-type shuffle stays; the other takes 3 extracts and 4 inserts.
        assert_eq!(o.iter().filter(|op| **op == Op::VectorShuffle).count(), 1);
        assert_eq!(
            o.iter().filter(|op| **op == Op::CompositeExtract).count(),
            3
        );
        assert_eq!(o.iter().filter(|op| **op == Op::CompositeInsert).count(), 4);
    }

    const SPEC: &str = r#"
        OpEntryPoint Kernel %k "k"
        OpDecorate %b SpecId 1
        OpDecorate %c SpecId 2
        OpDecorate %s SpecId 3
        OpDecorate %u SpecId 4
        OpDecorate %l SpecId 5
        OpDecorate %f SpecId 6
        OpDecorate %ss SpecId 7
        %void = OpTypeVoid
        %bool = OpTypeBool
        %uchar = OpTypeInt 8 0
        %ushort = OpTypeInt 16 0
        %short = OpTypeInt 16 1
        %uint = OpTypeInt 32 0
        %ulong = OpTypeInt 64 0
        %float = OpTypeFloat 32
        %b = OpSpecConstantTrue %bool
        %c = OpSpecConstant %uchar 7
        %s = OpSpecConstant %ushort 9
        %u = OpSpecConstant %uint 11
        %l = OpSpecConstant %ulong 13
        %f = OpSpecConstant %float 1.5
        %ss = OpSpecConstant %short 3
        %sum = OpSpecConstantOp %uint IAdd %u %u
        %fn = OpTypeFunction %void
        %k = OpFunction %void None %fn
        %e = OpLabel
        OpReturn
        OpFunctionEnd
    "#;

    #[test]
    fn spec_constants_are_listed_with_their_sizes() {
        let list = spec_constants(&bytes(&asm(SPEC))).unwrap();
        let got: Vec<(u32, usize)> = list.iter().map(|c| (c.id, c.size)).collect();
        assert_eq!(
            got,
            vec![(1, 1), (2, 1), (3, 2), (4, 4), (5, 8), (6, 4), (7, 2)]
        );
        assert!(spec_constants(&bytes(&asm(PTROPS))).unwrap().is_empty());
        assert!(spec_constants(&[0u8; 12]).is_err());
    }

    #[test]
    fn spec_constant_values_become_the_defaults() {
        let mut values = SpecValues::new();
        values.insert(1, vec![0]);
        values.insert(2, vec![200]);
        values.insert(3, 60000u16.to_ne_bytes().to_vec());
        values.insert(5, (u64::MAX - 5).to_ne_bytes().to_vec());
        values.insert(6, (-3.25f32).to_ne_bytes().to_vec());
        values.insert(7, (-2i16).to_ne_bytes().to_vec());
        let m = prepared(&asm(SPEC), &values);
        let def = |name: u32| {
            let ids = spec_ids(&m);
            let target = ids
                .iter()
                .find(|(_, s)| **s == name)
                .map(|(t, _)| *t)
                .unwrap();
            m.types_global_values
                .iter()
                .find(|i| i.result_id == Some(target))
                .unwrap()
                .clone()
        };
        assert_eq!(def(1).class.opcode, Op::SpecConstantFalse);
        assert_eq!(def(2).operands, vec![Operand::LiteralBit32(200)]);
        assert_eq!(def(3).operands, vec![Operand::LiteralBit32(60000)]);
        // Not set: the module's default.
        assert_eq!(def(4).operands, vec![Operand::LiteralBit32(11)]);
        assert_eq!(def(5).operands, vec![Operand::LiteralBit64(u64::MAX - 5)]);
        assert_eq!(
            def(6).operands,
            vec![Operand::LiteralBit32((-3.25f32).to_bits())]
        );
        // A signed 16-bit value is sign-extended into its word (SPIR-V 2.2.1).
        assert_eq!(def(7).operands, vec![Operand::LiteralBit32(-2i32 as u32)]);
    }

    #[test]
    fn string_decorations_and_dont_inline_are_dropped() {
        let text = r#"
            OpEntryPoint Kernel %k "k"
            OpDecorateString %k UserSemantic "FOO"
            OpMemberDecorateString %st 0 UserSemantic "bar"
            %void = OpTypeVoid
            %float = OpTypeFloat 32
            %st = OpTypeStruct %float
            %fn = OpTypeFunction %void
            %ff = OpTypeFunction %float %float
            %g = OpFunction %float DontInline|Pure %ff
            %x = OpFunctionParameter %float
            %ge = OpLabel
            OpReturnValue %x
            OpFunctionEnd
            %k = OpFunction %void None %fn
            %e = OpLabel
            OpReturn
            OpFunctionEnd
        "#;
        let m = prepared(&asm(text), &SpecValues::new());
        assert!(m.annotations.is_empty());
        let control = &m.functions[0].def.as_ref().unwrap().operands[0];
        assert_eq!(*control, Operand::FunctionControl(FunctionControl::PURE));
    }

    #[test]
    fn expect_and_assume_hints_and_scalar_nulls() {
        let text = r#"
            OpCapability Addresses
            OpCapability Kernel
            OpCapability ExpectAssumeKHR
            OpExtension "SPV_KHR_expect_assume"
            OpMemoryModel Physical64 OpenCL
            OpEntryPoint Kernel %k "k"
            %void = OpTypeVoid
            %bool = OpTypeBool
            %uint = OpTypeInt 32 0
            %u1 = OpConstant %uint 1
            %u0 = OpConstantNull %uint
            %fn = OpTypeFunction %void %uint
            %k = OpFunction %void None %fn
            %x = OpFunctionParameter %uint
            %e = OpLabel
            %y = OpExpectKHR %uint %x %u0
            %c = OpUGreaterThan %bool %y %u1
            OpAssumeTrueKHR %c
            OpReturn
            OpFunctionEnd
        "#;
        let m = prepared(&asm_whole(text), &SpecValues::new());
        let o = ops(&m);
        // The scalar null became a zero constant.
        assert!(m.types_global_values.iter().any(|i| {
            i.class.opcode == Op::Constant && i.operands == vec![Operand::LiteralBit32(0)]
        }));
        assert!(!m
            .types_global_values
            .iter()
            .any(|i| i.class.opcode == Op::ConstantNull));
        assert_eq!(o, vec![Op::CopyObject, Op::UGreaterThan, Op::Return]);
        assert!(m.extensions.is_empty());
        assert!(!m.capabilities.iter().any(|i| {
            i.operands.first() == Some(&Operand::Capability(Capability::ExpectAssumeKHR))
        }));
    }

    #[test]
    fn a_module_that_needs_nothing_is_returned_as_given() {
        let text = r#"
            OpEntryPoint Kernel %k "k"
            %void = OpTypeVoid
            %fn = OpTypeFunction %void
            %k = OpFunction %void None %fn
            %e = OpLabel
            OpReturn
            OpFunctionEnd
        "#;
        let words = asm(text);
        assert_eq!(prepare(&words, &SpecValues::new()).unwrap(), words);
        // Words rspirv cannot read pass through to llvm-spirv (which explains) unless values
        // must be applied.
        let junk = vec![rspirv::spirv::MAGIC_NUMBER, 0x10000, 0, 10, 0, 0xffff_ffff];
        assert_eq!(prepare(&junk, &SpecValues::new()).unwrap(), junk);
        let mut values = SpecValues::new();
        values.insert(1, vec![1]);
        assert!(prepare(&junk, &values).is_err());
    }
}
