//! Byte-addressed private and local variables ("flat" variables).
//!
//! Typed logical pointers ([`super::Walk::fold`]) cannot express everything OpenCL C does
//! with private and `__local` memory: 8- and 16-bit views of wider objects (`(uchar *)` of a
//! `uchar2` array with a dynamic offset), memcpy of part of an object, pointer arithmetic
//! that leaves the indexed element, pointer comparisons and differences. A variable used
//! that way is rewritten as an array of 32-bit words of the same byte size (OpenCL C layout),
//! and every pointer into it as a `uint` byte offset:
//!
//! - access chains add `index * element size` or a member offset, casts keep the offset;
//! - loads and stores of any scalar, vector or aggregate go word by word: whole aligned words
//!   directly, 8- and 16-bit parts with shifts and masks. A partial-word store in `Workgroup`
//!   memory is an atomic AND then OR on the word (other work-items may write the word's other
//!   bytes at the same time), in `Function`/`Private` memory a read-modify-write;
//! - memcpy copies word by word (or in smaller pieces when the alignment says so);
//! - `OpPtrEqual`/`OpPtrNotEqual`/`OpPtrDiff` compare or subtract offsets, and
//!   `OpConvertPtrToU` gives the synthetic address of [`super::Walk::logical_ptr_to_u`].
//!
//! [`super::lower_memory`] first tries the typed form and flattens the variables whose
//! pointers it could not lower, then lowers again. Flat variables whose pointers meet
//! (phis, selects, comparisons) or leave as values (stored, converted to integers) share
//! one such array per kind of memory ([`super::arena`]); the others keep their own.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{MemoryAccess, Op, Scope, StorageClass, Word};

use super::Walk;
use crate::compiler::layout::Layout;
use crate::compiler::spv::{id_operand, inst, lit_operand, Defs};

/// A pointer into a flat variable: the variable (an array of `uint`), its storage class, the
/// byte offset (a `uint` id) and the pointee type the program sees.
#[derive(Clone, Copy)]
pub(super) struct Flat {
    pub var: Word,
    pub sc: StorageClass,
    pub off: Word,
    pub pointee: Word,
}

/// A scalar part of a value: byte offset within the value, type, width in bits, and its
/// path of component indices in the value.
struct Part {
    at: u64,
    ty: Word,
    bits: u32,
    path: Vec<u32>,
}

/// The kind of memory an arena serves: 0 per work-item (`Function`, `Private`), 1 per
/// work-group (`Workgroup`).
pub(super) fn kind_of(sc: StorageClass) -> Option<usize> {
    match sc {
        StorageClass::Function | StorageClass::Private => Some(0),
        StorageClass::Workgroup => Some(1),
        _ => None,
    }
}

impl Walk<'_> {
    /// `op a b` as a `uint` spec-constant expression.
    pub(super) fn spec_op(&mut self, op: Op, a: Word, b: Word) -> Word {
        let u = self.ctx.t_int(32);
        let id = self.ctx.id();
        self.ctx.module.types_global_values.push(inst(
            Op::SpecConstantOp,
            Some(u),
            Some(id),
            vec![
                Operand::LiteralSpecConstantOpInteger(op),
                Operand::IdRef(a),
                Operand::IdRef(b),
            ],
        ));
        id
    }

    pub(super) fn layout_size(&self, ty: Word) -> Result<u64, String> {
        let defs = Defs::new(&self.ctx.module);
        Layout::new(&self.ctx.module, &defs)
            .size_align(ty)
            .map(|s| s.size)
    }

    /// The scalar parts of value type `ty` at byte `base`, in order.
    fn value_parts(
        &self,
        ty: Word,
        base: u64,
        path: &mut Vec<u32>,
        out: &mut Vec<Part>,
    ) -> Result<(), String> {
        let d = self.ctx.def(ty).ok_or("flat access type")?;
        match d.class.opcode {
            Op::TypeInt | Op::TypeFloat => {
                let bits = lit_operand(d, 0).unwrap_or(32);
                if !matches!(bits, 8 | 16 | 32 | 64) {
                    return Err(format!("{bits}-bit value in private or local memory"));
                }
                out.push(Part {
                    at: base,
                    ty,
                    bits,
                    path: path.clone(),
                });
                Ok(())
            }
            Op::TypeVector | Op::TypeArray => {
                let elem = id_operand(d, 0).ok_or("element type")?;
                let n = if d.class.opcode == Op::TypeVector {
                    u64::from(lit_operand(d, 1).unwrap_or(1))
                } else {
                    id_operand(d, 1)
                        .and_then(|c| self.const_value(c))
                        .ok_or("array length")?
                };
                let es = self.layout_size(elem)?;
                for k in 0..n {
                    path.push(k as u32);
                    self.value_parts(elem, base + k * es, path, out)?;
                    path.pop();
                }
                Ok(())
            }
            Op::TypeStruct => {
                let defs = Defs::new(&self.ctx.module);
                let offsets = Layout::new(&self.ctx.module, &defs).member_offsets(ty)?;
                for (k, off) in offsets.iter().enumerate() {
                    let m = id_operand(d, k).ok_or("member type")?;
                    path.push(k as u32);
                    self.value_parts(m, base + off, path, out)?;
                    path.pop();
                }
                Ok(())
            }
            Op::TypePointer
                if matches!(
                    d.operands.first(),
                    Some(Operand::StorageClass(StorageClass::PhysicalStorageBuffer))
                ) =>
            {
                // A pointer to global or constant memory: its 64-bit address.
                out.push(Part {
                    at: base,
                    ty,
                    bits: 64,
                    path: path.clone(),
                });
                Ok(())
            }
            Op::TypePointer => Err(
                "a private or local pointer inside a struct or array loaded or stored as a whole \
                 is not supported"
                    .into(),
            ),
            _ => Err("this type in byte-addressed private or local memory is not supported".into()),
        }
    }

    /// `off + c` as a `uint` id.
    fn off_plus(&mut self, off: Word, c: u64) -> Word {
        if c == 0 {
            return off;
        }
        if let Some(v) = self.const_value(off) {
            return self.ctx.c_u32((v + c) as u32);
        }
        let u = self.ctx.t_int(32);
        let k = self.ctx.c_u32(c as u32);
        self.emit(Op::IAdd, u, vec![Operand::IdRef(off), Operand::IdRef(k)])
    }

    /// An integer id as `uint` (truncated or zero-extended).
    fn as_u32(&mut self, v: Word) -> Word {
        if let Some(c) = self.const_value(v) {
            return self.ctx.c_u32(c as u32);
        }
        let u = self.ctx.t_int(32);
        match self.ty(v).and_then(|t| self.ctx.scalar_width(t)) {
            Some(32) | None => v,
            Some(_) => self.emit(Op::UConvert, u, vec![Operand::IdRef(v)]),
        }
    }

    /// `off + index * size` (`index` any integer id).
    fn off_scaled(&mut self, off: Word, index: Word, size: u64) -> Word {
        if let Some(c) = self.const_value(index) {
            // Negative constant indices wrap in 32 bits, as the sum does.
            return self.off_plus(off, c.wrapping_mul(size) & 0xffff_ffff);
        }
        let u = self.ctx.t_int(32);
        let i = self.as_u32(index);
        let k = self.ctx.c_u32(size as u32);
        let t = if size == 1 {
            i
        } else {
            self.emit(Op::IMul, u, vec![Operand::IdRef(i), Operand::IdRef(k)])
        };
        if self.const_value(off) == Some(0) {
            return t;
        }
        self.emit(Op::IAdd, u, vec![Operand::IdRef(off), Operand::IdRef(t)])
    }

    /// Registers `id` as a flat pointer (offset `off`, pointee `pointee`) like `base`.
    fn flat_define(&mut self, id: Word, base: Flat, off: Word, pointee: Word) {
        self.flat.insert(
            id,
            Flat {
                off,
                pointee,
                ..base
            },
        );
    }

    /// An access chain on flat pointer `base`; `has_first`: the first index steps over whole
    /// pointees (`OpPtrAccessChain`).
    pub(super) fn flat_chain(
        &mut self,
        rid: Word,
        result_pointee: Word,
        base: Flat,
        ids: &[Word],
        has_first: bool,
    ) -> Result<(), String> {
        let mut off = base.off;
        let mut cur = base.pointee;
        let mut rest = ids;
        if has_first {
            if let Some(f) = ids.first() {
                let size = self.layout_size(cur)?;
                off = self.off_scaled(off, *f, size);
                rest = &ids[1..];
            }
        }
        for idx in rest {
            let d = self.ctx.def(cur).ok_or("chain type")?.clone();
            match d.class.opcode {
                Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector => {
                    let elem = id_operand(&d, 0).ok_or("element type")?;
                    let size = self.layout_size(elem)?;
                    off = self.off_scaled(off, *idx, size);
                    cur = elem;
                }
                Op::TypeStruct => {
                    let k = self.const_value(*idx).ok_or("struct index")?;
                    let defs = Defs::new(&self.ctx.module);
                    let offsets = Layout::new(&self.ctx.module, &defs).member_offsets(cur)?;
                    let mo = *offsets.get(k as usize).ok_or("member index")?;
                    off = self.off_plus(off, mo);
                    cur = id_operand(&d, k as usize).ok_or("member type")?;
                }
                _ => return Err("access chain into a scalar".into()),
            }
        }
        self.flat_define(rid, base, off, result_pointee);
        Ok(())
    }

    /// The pointer to word `widx` (a `uint` id) of flat variable `f`.
    fn word_ptr(&mut self, f: &Flat, widx: Word) -> Word {
        let u = self.ctx.t_int(32);
        let pt = self.ctx.t_ptr(f.sc, u);
        self.emit(
            Op::AccessChain,
            pt,
            vec![Operand::IdRef(f.var), Operand::IdRef(widx)],
        )
    }

    /// Word index and bit shift of byte `off + c`: constants where `off` is known to be a
    /// multiple of 4 (`aligned`).
    fn word_of(&mut self, off: Word, c: u64, aligned: bool) -> (Word, Word) {
        let u = self.ctx.t_int(32);
        if aligned {
            let w = if let Some(v) = self.const_value(off) {
                self.ctx.c_u32(((v + c) / 4) as u32)
            } else {
                let two = self.ctx.c_u32(2);
                let base = self.emit(
                    Op::ShiftRightLogical,
                    u,
                    vec![Operand::IdRef(off), Operand::IdRef(two)],
                );
                self.off_plus(base, c / 4)
            };
            let sh = self.ctx.c_u32(((c % 4) * 8) as u32);
            return (w, sh);
        }
        let b = self.off_plus(off, c);
        let two = self.ctx.c_u32(2);
        let three = self.ctx.c_u32(3);
        let w = self.emit(
            Op::ShiftRightLogical,
            u,
            vec![Operand::IdRef(b), Operand::IdRef(two)],
        );
        let low = self.emit(
            Op::BitwiseAnd,
            u,
            vec![Operand::IdRef(b), Operand::IdRef(three)],
        );
        let sh = self.emit(
            Op::ShiftLeftLogical,
            u,
            vec![Operand::IdRef(low), Operand::IdRef(three)],
        );
        (w, sh)
    }

    fn load_word(&mut self, f: &Flat, widx: Word) -> Word {
        let u = self.ctx.t_int(32);
        let p = self.word_ptr(f, widx);
        self.emit(Op::Load, u, vec![Operand::IdRef(p)])
    }

    /// The alignment of byte `off + c` when `off` is a multiple of `base_align`.
    fn addr_align(base_align: u32, c: u64) -> u32 {
        let base = base_align.max(1);
        if c == 0 {
            return base;
        }
        base.min(1u32 << c.trailing_zeros().min(16))
    }

    /// A `bits`-wide integer from byte `off + c` of `f`, where `off` is a multiple of
    /// `base_align` (a value the alignment does not keep within one word is read byte by byte).
    fn flat_load_int(&mut self, f: &Flat, c: u64, bits: u32, base_align: u32) -> Word {
        let u = self.ctx.t_int(32);
        let it = self.ctx.t_int(bits);
        let a = Self::addr_align(base_align, c);
        let aligned4 = base_align >= 4;
        match bits {
            32 if a >= 4 => {
                let (w, _) = self.word_of(f.off, c, true);
                self.load_word(f, w)
            }
            64 if a >= 4 => {
                let lo = self.flat_load_int(f, c, 32, base_align);
                let hi = self.flat_load_int(f, c + 4, 32, base_align);
                self.join64(lo, hi)
            }
            8 | 16 if a >= bits / 8 => {
                let (w, sh) = self.word_of(f.off, c, aligned4);
                let word = self.load_word(f, w);
                let x = self.emit(
                    Op::ShiftRightLogical,
                    u,
                    vec![Operand::IdRef(word), Operand::IdRef(sh)],
                );
                self.emit(Op::UConvert, it, vec![Operand::IdRef(x)])
            }
            _ => {
                // Byte by byte, little-endian.
                let wide = self.ctx.t_int(64);
                let mut acc: Option<Word> = None;
                for k in 0..u64::from(bits / 8) {
                    let b = self.flat_load_int(f, c + k, 8, base_align);
                    let x = self.emit(Op::UConvert, wide, vec![Operand::IdRef(b)]);
                    let s = self.ctx.c_u64(8 * k);
                    let x = self.emit(
                        Op::ShiftLeftLogical,
                        wide,
                        vec![Operand::IdRef(x), Operand::IdRef(s)],
                    );
                    acc = Some(match acc {
                        Some(a) => self.emit(
                            Op::BitwiseOr,
                            wide,
                            vec![Operand::IdRef(a), Operand::IdRef(x)],
                        ),
                        None => x,
                    });
                }
                let v = acc.unwrap_or(0);
                if bits == 64 {
                    v
                } else {
                    self.emit(Op::UConvert, it, vec![Operand::IdRef(v)])
                }
            }
        }
    }

    fn join64(&mut self, lo: Word, hi: Word) -> Word {
        let wide = self.ctx.t_int(64);
        let lo = self.emit(Op::UConvert, wide, vec![Operand::IdRef(lo)]);
        let hi = self.emit(Op::UConvert, wide, vec![Operand::IdRef(hi)]);
        let s = self.ctx.c_u64(32);
        let hi = self.emit(
            Op::ShiftLeftLogical,
            wide,
            vec![Operand::IdRef(hi), Operand::IdRef(s)],
        );
        self.emit(
            Op::BitwiseOr,
            wide,
            vec![Operand::IdRef(lo), Operand::IdRef(hi)],
        )
    }

    /// Stores `mask`-selected bits `val` (already shifted) into word `w` of `f`.
    fn store_bits(&mut self, f: &Flat, w: Word, mask: Word, val: Word) {
        let u = self.ctx.t_int(32);
        let p = self.word_ptr(f, w);
        let inv = self.emit(Op::Not, u, vec![Operand::IdRef(mask)]);
        if f.sc == StorageClass::Workgroup {
            let scope = self.ctx.c_u32(Scope::Workgroup as u32);
            let sem = self.ctx.c_u32(0);
            self.emit(
                Op::AtomicAnd,
                u,
                vec![
                    Operand::IdRef(p),
                    Operand::IdScope(scope),
                    Operand::IdMemorySemantics(sem),
                    Operand::IdRef(inv),
                ],
            );
            self.emit(
                Op::AtomicOr,
                u,
                vec![
                    Operand::IdRef(p),
                    Operand::IdScope(scope),
                    Operand::IdMemorySemantics(sem),
                    Operand::IdRef(val),
                ],
            );
        } else {
            let old = self.emit(Op::Load, u, vec![Operand::IdRef(p)]);
            let kept = self.emit(
                Op::BitwiseAnd,
                u,
                vec![Operand::IdRef(old), Operand::IdRef(inv)],
            );
            let new = self.emit(
                Op::BitwiseOr,
                u,
                vec![Operand::IdRef(kept), Operand::IdRef(val)],
            );
            self.out.push(inst(
                Op::Store,
                None,
                None,
                vec![Operand::IdRef(p), Operand::IdRef(new)],
            ));
        }
    }

    /// Stores integer `v` of `bits` at byte `off + c` of `f` (`off` a multiple of
    /// `base_align`).
    fn flat_store_int(&mut self, f: &Flat, c: u64, bits: u32, v: Word, base_align: u32) {
        let u = self.ctx.t_int(32);
        let a = Self::addr_align(base_align, c);
        let aligned4 = base_align >= 4;
        match bits {
            32 if a >= 4 => {
                let (w, _) = self.word_of(f.off, c, true);
                let p = self.word_ptr(f, w);
                self.out.push(inst(
                    Op::Store,
                    None,
                    None,
                    vec![Operand::IdRef(p), Operand::IdRef(v)],
                ));
            }
            64 if a >= 4 => {
                let (lo, hi) = self.split64(v);
                self.flat_store_int(f, c, 32, lo, base_align);
                self.flat_store_int(f, c + 4, 32, hi, base_align);
            }
            8 | 16 if a >= bits / 8 => {
                let (w, sh) = self.word_of(f.off, c, aligned4);
                let x = self.emit(Op::UConvert, u, vec![Operand::IdRef(v)]);
                let x = self.emit(
                    Op::ShiftLeftLogical,
                    u,
                    vec![Operand::IdRef(x), Operand::IdRef(sh)],
                );
                let ones = self.ctx.c_u32(if bits == 8 { 0xff } else { 0xffff });
                let mask = self.emit(
                    Op::ShiftLeftLogical,
                    u,
                    vec![Operand::IdRef(ones), Operand::IdRef(sh)],
                );
                self.store_bits(f, w, mask, x);
            }
            _ => {
                let wide = self.ctx.t_int(64);
                let byte = self.ctx.t_int(8);
                let x = if bits == 64 {
                    v
                } else {
                    self.emit(Op::UConvert, wide, vec![Operand::IdRef(v)])
                };
                for k in 0..u64::from(bits / 8) {
                    let s = self.ctx.c_u64(8 * k);
                    let y = self.emit(
                        Op::ShiftRightLogical,
                        wide,
                        vec![Operand::IdRef(x), Operand::IdRef(s)],
                    );
                    let b = self.emit(Op::UConvert, byte, vec![Operand::IdRef(y)]);
                    self.flat_store_int(f, c + k, 8, b, base_align);
                }
            }
        }
    }

    fn split64(&mut self, v: Word) -> (Word, Word) {
        let u = self.ctx.t_int(32);
        let wide = self.ctx.t_int(64);
        let lo = self.emit(Op::UConvert, u, vec![Operand::IdRef(v)]);
        let s = self.ctx.c_u64(32);
        let h = self.emit(
            Op::ShiftRightLogical,
            wide,
            vec![Operand::IdRef(v), Operand::IdRef(s)],
        );
        let hi = self.emit(Op::UConvert, u, vec![Operand::IdRef(h)]);
        (lo, hi)
    }

    /// `v` (of type `from`) as `to`, which has the same width.
    fn bits_as(&mut self, v: Word, from: Word, to: Word) -> Word {
        if from == to {
            v
        } else if self.ctx.ptr_info(to).is_some() {
            self.emit(Op::ConvertUToPtr, to, vec![Operand::IdRef(v)])
        } else if self.ctx.ptr_info(from).is_some() {
            self.emit(Op::ConvertPtrToU, to, vec![Operand::IdRef(v)])
        } else {
            self.emit(Op::Bitcast, to, vec![Operand::IdRef(v)])
        }
    }

    /// Whether the byte offset of `f` is known to be a multiple of 4 given access alignment
    /// `align`.
    fn aligned4(align: u32) -> bool {
        align >= 4 && align.is_multiple_of(4)
    }

    /// A value of type `ty` loaded from flat pointer `f` (its alignment `align` in bytes).
    pub(super) fn flat_load(&mut self, f: &Flat, ty: Word, align: u32) -> Result<Word, String> {
        let mut parts = Vec::new();
        self.value_parts(ty, 0, &mut Vec::new(), &mut parts)?;
        let aligned = Self::aligned4(align);
        // Words already read by this access (aligned accesses read each word once).
        let mut words: HashMap<u64, Word> = HashMap::new();
        let mut vals = Vec::new();
        for p in &parts {
            let it = self.ctx.t_int(p.bits);
            let raw = if aligned && p.bits <= 16 && (p.at % 4) + u64::from(p.bits / 8) <= 4 {
                let word = match words.get(&(p.at / 4)) {
                    Some(w) => *w,
                    None => {
                        let w = self.flat_load_int(f, p.at & !3, 32, align);
                        words.insert(p.at / 4, w);
                        w
                    }
                };
                let u = self.ctx.t_int(32);
                let sh = self.ctx.c_u32(((p.at % 4) * 8) as u32);
                let x = self.emit(
                    Op::ShiftRightLogical,
                    u,
                    vec![Operand::IdRef(word), Operand::IdRef(sh)],
                );
                self.emit(Op::UConvert, it, vec![Operand::IdRef(x)])
            } else {
                self.flat_load_int(f, p.at, p.bits, align)
            };
            vals.push(self.bits_as(raw, it, p.ty));
        }
        self.assemble(ty, &parts, &vals, 0)
    }

    /// Rebuilds a value of type `ty` from its parts (those whose path starts at depth
    /// `depth` below `ty`).
    fn assemble(
        &mut self,
        ty: Word,
        parts: &[Part],
        vals: &[Word],
        depth: usize,
    ) -> Result<Word, String> {
        let d = self.ctx.def(ty).ok_or("flat value type")?.clone();
        if matches!(d.class.opcode, Op::TypeInt | Op::TypeFloat) {
            return vals.first().copied().ok_or_else(|| "flat value".into());
        }
        let n = match d.class.opcode {
            Op::TypeVector => lit_operand(&d, 1).unwrap_or(1) as usize,
            Op::TypeArray => id_operand(&d, 1)
                .and_then(|c| self.const_value(c))
                .ok_or("array length")? as usize,
            _ => d.operands.len(),
        };
        let mut comps = Vec::with_capacity(n);
        for k in 0..n {
            let child = match d.class.opcode {
                Op::TypeStruct => id_operand(&d, k),
                _ => id_operand(&d, 0),
            }
            .ok_or("component type")?;
            let (ps, vs): (Vec<usize>, Vec<Word>) = parts
                .iter()
                .enumerate()
                .filter(|(_, p)| p.path.get(depth) == Some(&(k as u32)))
                .map(|(i, _)| (i, vals[i]))
                .unzip();
            let sub: Vec<Part> = ps
                .iter()
                .map(|i| Part {
                    at: parts[*i].at,
                    ty: parts[*i].ty,
                    bits: parts[*i].bits,
                    path: parts[*i].path.clone(),
                })
                .collect();
            comps.push(self.assemble(child, &sub, &vs, depth + 1)?);
        }
        Ok(self.emit(
            Op::CompositeConstruct,
            ty,
            comps.into_iter().map(Operand::IdRef).collect(),
        ))
    }

    /// Stores value `v` of type `ty` through flat pointer `f`.
    pub(super) fn flat_store(
        &mut self,
        f: &Flat,
        v: Word,
        ty: Word,
        align: u32,
    ) -> Result<(), String> {
        let mut parts = Vec::new();
        self.value_parts(ty, 0, &mut Vec::new(), &mut parts)?;
        let aligned = Self::aligned4(align);
        let mut ints = Vec::new();
        for p in &parts {
            let it = self.ctx.t_int(p.bits);
            let c = if p.path.is_empty() {
                v
            } else {
                self.emit(
                    Op::CompositeExtract,
                    p.ty,
                    std::iter::once(Operand::IdRef(v))
                        .chain(p.path.iter().map(|k| Operand::LiteralBit32(*k)))
                        .collect(),
                )
            };
            ints.push(self.bits_as(c, p.ty, it));
        }
        if aligned {
            // Words wholly covered by 8- and 16-bit parts are written at once.
            let mut by_word: HashMap<u64, Vec<usize>> = HashMap::new();
            for (k, p) in parts.iter().enumerate() {
                if p.bits <= 16 && (p.at % 4) + u64::from(p.bits / 8) <= 4 {
                    by_word.entry(p.at / 4).or_default().push(k);
                }
            }
            let mut done = vec![false; parts.len()];
            let mut keys: Vec<u64> = by_word.keys().copied().collect();
            keys.sort_unstable();
            let u = self.ctx.t_int(32);
            for w in keys {
                let ks = &by_word[&w];
                let covered: u32 = ks.iter().map(|k| parts[*k].bits / 8).sum();
                if covered != 4 {
                    continue;
                }
                let mut acc: Option<Word> = None;
                for k in ks {
                    let x = self.emit(Op::UConvert, u, vec![Operand::IdRef(ints[*k])]);
                    let sh = self.ctx.c_u32(((parts[*k].at % 4) * 8) as u32);
                    let x = self.emit(
                        Op::ShiftLeftLogical,
                        u,
                        vec![Operand::IdRef(x), Operand::IdRef(sh)],
                    );
                    acc = Some(match acc {
                        Some(a) => {
                            self.emit(Op::BitwiseOr, u, vec![Operand::IdRef(a), Operand::IdRef(x)])
                        }
                        None => x,
                    });
                    done[*k] = true;
                }
                if let Some(word) = acc {
                    self.flat_store_int(f, w * 4, 32, word, align);
                }
            }
            for (k, p) in parts.iter().enumerate() {
                if !done[k] {
                    self.flat_store_int(f, p.at, p.bits, ints[k], align);
                }
            }
        } else {
            for (k, p) in parts.iter().enumerate() {
                self.flat_store_int(f, p.at, p.bits, ints[k], align);
            }
        }
        Ok(())
    }

    /// The alignment an `OpLoad`/`OpStore`'s memory operands state (0 when none).
    pub(super) fn stated_align(ops: &[Operand]) -> u32 {
        match ops.first() {
            Some(Operand::MemoryAccess(m)) if m.contains(MemoryAccess::ALIGNED) => {
                match ops.get(1) {
                    Some(Operand::LiteralBit32(a)) => *a,
                    _ => 0,
                }
            }
            _ => 0,
        }
    }

    /// The alignment of an access of type `ty` through a flat pointer: the stated one, else
    /// the natural alignment of its scalars.
    pub(super) fn flat_align(&self, stated: u32, ty: Word) -> u32 {
        if stated > 0 {
            return stated;
        }
        self.natural_align(ty)
    }

    /// memcpy of `size` bytes where one side (or both) is a flat pointer; the other side may
    /// be a physical pointer or all-zero data.
    pub(super) fn flat_copy(
        &mut self,
        d: Word,
        s: Word,
        size: u64,
        align: u32,
    ) -> Result<(), String> {
        let fd = self.flat.get(&d).copied();
        let fs = self.flat.get(&s).copied();
        let d_phys = self.sc_of(d) == Some(StorageClass::PhysicalStorageBuffer);
        let s_phys = self.sc_of(s) == Some(StorageClass::PhysicalStorageBuffer);
        let zero_source = fs.is_none() && !s_phys && self.is_zero_data(s);
        if (fd.is_none() && !d_phys) || (fs.is_none() && !s_phys && !zero_source) {
            return Err("memcpy between private or local objects of different layouts".into());
        }
        let align = align.max(1);
        let mut at = 0u64;
        while at < size {
            let left = size - at;
            let mut w = 4u64;
            while w > 1 && (!u64::from(align).is_multiple_of(w) || left < w) {
                w /= 2;
            }
            let bits = (w * 8) as u32;
            let it = self.ctx.t_int(bits);
            let v = if zero_source {
                self.ctx.global(Op::ConstantNull, Some(it), vec![])
            } else if let Some(f) = fs {
                self.flat_load_int(&f, at, bits, align)
            } else {
                let p = self.phys_at(s, at, it);
                self.emit(
                    Op::Load,
                    it,
                    vec![
                        Operand::IdRef(p),
                        Operand::MemoryAccess(MemoryAccess::ALIGNED),
                        Operand::LiteralBit32(w as u32),
                    ],
                )
            };
            if let Some(f) = fd {
                self.flat_store_int(&f, at, bits, v, align);
            } else {
                let p = self.phys_at(d, at, it);
                self.out.push(inst(
                    Op::Store,
                    None,
                    None,
                    vec![
                        Operand::IdRef(p),
                        Operand::IdRef(v),
                        Operand::MemoryAccess(MemoryAccess::ALIGNED),
                        Operand::LiteralBit32(w as u32),
                    ],
                ));
            }
            at += w;
        }
        Ok(())
    }

    /// Physical pointer `p` plus `at` bytes, as a pointer to `ty`.
    fn phys_at(&mut self, p: Word, at: u64, ty: Word) -> Word {
        let wide = self.ctx.t_int(64);
        let a = self.emit(Op::ConvertPtrToU, wide, vec![Operand::IdRef(p)]);
        let a = if at == 0 {
            a
        } else {
            let k = self.ctx.c_u64(at);
            self.emit(Op::IAdd, wide, vec![Operand::IdRef(a), Operand::IdRef(k)])
        };
        let pt = self.ctx.t_ptr(StorageClass::PhysicalStorageBuffer, ty);
        self.emit(Op::ConvertUToPtr, pt, vec![Operand::IdRef(a)])
    }

    /// Pointer comparison, difference or conversion `i` with flat operands.
    pub(super) fn flat_pointer_op(&mut self, i: &Instruction) -> Result<(), String> {
        let op = i.class.opcode;
        let rid = i.result_id.ok_or("pointer op id")?;
        let rt = i.result_type.ok_or("pointer op type")?;
        let a = id_operand(i, 0).and_then(|p| self.flat.get(&p).copied());
        let b = id_operand(i, 1).and_then(|p| self.flat.get(&p).copied());
        let u = self.ctx.t_int(32);
        let value = match (op, a, b) {
            (Op::ConvertPtrToU, Some(a), _) if self.is_arena(a.var) => {
                // The arena offset (see `arena`): NULL is 0.
                match self.ctx.scalar_width(rt) {
                    Some(32) => a.off,
                    _ => self.emit(Op::UConvert, rt, vec![Operand::IdRef(a.off)]),
                }
            }
            (Op::ConvertPtrToU, Some(a), _) => {
                let w = self.ctx.scalar_width(rt).ok_or("ConvertPtrToU width")?;
                let shift = if w == 64 { 32 } else { 20 };
                let base = u64::from(a.var % 4096 + 1) << shift;
                if w == 64 {
                    let wide = self.ctx.t_int(64);
                    let o = self.emit(Op::UConvert, wide, vec![Operand::IdRef(a.off)]);
                    let k = self.ctx.c_u64(base);
                    self.emit(Op::IAdd, wide, vec![Operand::IdRef(o), Operand::IdRef(k)])
                } else {
                    let k = self.ctx.c_u32(base as u32);
                    self.emit(Op::IAdd, u, vec![Operand::IdRef(a.off), Operand::IdRef(k)])
                }
            }
            (Op::PtrEqual | Op::PtrNotEqual, Some(a), Some(b)) => {
                let cmp = if op == Op::PtrEqual {
                    Op::IEqual
                } else {
                    Op::INotEqual
                };
                if a.var == b.var {
                    self.emit(cmp, rt, vec![Operand::IdRef(a.off), Operand::IdRef(b.off)])
                } else {
                    let v = if op == Op::PtrEqual {
                        Op::ConstantFalse
                    } else {
                        Op::ConstantTrue
                    };
                    self.ctx.global(v, Some(rt), vec![])
                }
            }
            (Op::PtrDiff, Some(a), Some(b)) if a.var == b.var => {
                let size = self.layout_size(a.pointee)?.max(1);
                let d = self.emit(
                    Op::ISub,
                    u,
                    vec![Operand::IdRef(a.off), Operand::IdRef(b.off)],
                );
                let k = self.ctx.c_u32(size as u32);
                let q = self.emit(Op::SDiv, u, vec![Operand::IdRef(d), Operand::IdRef(k)]);
                match self.ctx.scalar_width(rt) {
                    Some(32) => q,
                    _ => self.emit(Op::SConvert, rt, vec![Operand::IdRef(q)]),
                }
            }
            _ => {
                return Err(format!(
                "{op:?} between private or local pointers of different variables is not supported"
            ))
            }
        };
        self.types.insert(rid, rt);
        self.out.push(inst(
            Op::CopyObject,
            Some(rt),
            Some(rid),
            vec![Operand::IdRef(value)],
        ));
        Ok(())
    }

    /// An atomic instruction `i` on flat pointer `f` (32-bit integers on an aligned word).
    pub(super) fn flat_atomic(
        &mut self,
        mut i: Instruction,
        f: Flat,
    ) -> Result<Instruction, String> {
        if self.ctx.scalar_width(f.pointee) != Some(32)
            || self
                .ctx
                .def(f.pointee)
                .is_some_and(|d| d.class.opcode != Op::TypeInt)
        {
            return Err(
                "atomics on this type in byte-addressed local memory are not supported".into(),
            );
        }
        let (w, _) = self.word_of(f.off, 0, true);
        let p = self.word_ptr(&f, w);
        i.operands[0] = Operand::IdRef(p);
        Ok(i)
    }
}

impl Walk<'_> {
    /// The offset id of flat pointer `p`, or (for a phi naming a pointer defined later in block
    /// order) an id the definition will copy its offset into.
    fn flat_off_or_pending(&mut self, p: Word) -> Word {
        if let Some(f) = self.flat.get(&p) {
            return f.off;
        }
        if let Some(x) = self.pending.get(&p) {
            return *x;
        }
        let x = self.ctx.id();
        self.pending.insert(p, x);
        x
    }

    /// The offset of pointer `v` chosen by a phi or select whose result has root `root`: its
    /// own offset when it has that root, 0 for an undefined pointer (structurization gives
    /// the paths that do not define a value `OpUndef`).
    fn chosen_offset(&mut self, v: Word, root: Word, what: &str) -> Result<Word, String> {
        if self.flat_derived.get(&v) == Some(&root) {
            return Ok(self.flat_off_or_pending(v));
        }
        if self.ctx.def(v).is_some_and(|d| d.class.opcode == Op::Undef) {
            return Ok(self.ctx.c_u32(0));
        }
        Err(match self.flat_derived.get(&v) {
            Some(_) => format!(
                "a {what} of a pointer into private memory and a pointer into local memory is \
                 not supported (it needs the generic address space, which vkcl does not claim)"
            ),
            None => format!(
                "a {what} of a pointer into private or local memory and a pointer into global \
                 or constant memory is not supported (it needs the generic address space, which \
                 vkcl does not claim)"
            ),
        })
    }

    /// Records flat pointer `id` and fulfils a phi's promise for it.
    fn flat_insert(&mut self, id: Word, f: Flat) {
        if let Some(x) = self.pending.remove(&id) {
            let u = self.ctx.t_int(32);
            self.types.insert(x, u);
            self.out.push(inst(
                Op::CopyObject,
                Some(u),
                Some(x),
                vec![Operand::IdRef(f.off)],
            ));
        }
        self.flat.insert(id, f);
    }

    /// The flat variable behind root `root` (a pointer into it at offset 0).
    fn flat_root(&mut self, root: Word) -> Result<Flat, String> {
        if let Some(f) = self.flat.get(&root) {
            return Ok(*f);
        }
        Err("flat variable used before its declaration".into())
    }

    /// Handles instruction `i` where it touches a flat pointer. `Ok(None)`: done; `Ok(Some)`:
    /// continue with the (possibly rewritten) instruction.
    pub(super) fn flat_instruction(
        &mut self,
        i: Instruction,
    ) -> Result<Option<Instruction>, String> {
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        let operand_flat =
            |w: &Self, k: usize| id_operand(&i, k).and_then(|p| w.flat.get(&p).copied());
        match op {
            Op::AccessChain
            | Op::InBoundsAccessChain
            | Op::PtrAccessChain
            | Op::InBoundsPtrAccessChain => {
                let Some(base) = operand_flat(self, 0) else {
                    return Ok(Some(i));
                };
                let pointee = i
                    .result_type
                    .and_then(|t| self.ctx.ptr_info(t))
                    .map(|p| p.1)
                    .ok_or("chain type")?;
                let ids: Vec<Word> = (1..i.operands.len())
                    .filter_map(|k| id_operand(&i, k))
                    .collect();
                let has_first = matches!(op, Op::PtrAccessChain | Op::InBoundsPtrAccessChain);
                let tmp = self.ctx.id();
                self.flat_chain(tmp, pointee, base, &ids, has_first)?;
                let f = self.flat.remove(&tmp).ok_or("flat chain")?;
                self.flat_insert(rid, f);
                Ok(None)
            }
            Op::Bitcast
            | Op::CopyObject
            | Op::PtrCastToGeneric
            | Op::GenericCastToPtr
            | Op::GenericCastToPtrExplicit => {
                let Some(base) = operand_flat(self, 0) else {
                    return Ok(Some(i));
                };
                let pointee = i
                    .result_type
                    .and_then(|t| self.ctx.ptr_info(t))
                    .map(|p| p.1)
                    .ok_or("a flat pointer converted to a non-pointer")?;
                self.flat_insert(rid, Flat { pointee, ..base });
                Ok(None)
            }
            Op::Load => {
                let Some(f) = operand_flat(self, 0) else {
                    return Ok(Some(i));
                };
                let ty = i.result_type.ok_or("load type")?;
                if self.flat_derived.contains_key(&rid) {
                    // A pointer into private or local memory, kept as its arena offset.
                    let wide = self.ctx.t_int(64);
                    let align = self.flat_align(Self::stated_align(&i.operands[1..]), wide);
                    let v = self.flat_load(&f, wide, align)?;
                    let off = self.as_u32(v);
                    let p = self.arena_pointer(ty, off)?;
                    self.flat_insert(rid, p);
                    return Ok(None);
                }
                let align = self.flat_align(Self::stated_align(&i.operands[1..]), ty);
                let v = self.flat_load(&f, ty, align)?;
                self.types.insert(rid, ty);
                self.out.push(inst(
                    Op::CopyObject,
                    Some(ty),
                    Some(rid),
                    vec![Operand::IdRef(v)],
                ));
                Ok(None)
            }
            Op::Store => {
                let v = id_operand(&i, 1).ok_or("store value")?;
                let stored = self.flat.get(&v).copied();
                let Some(f) = operand_flat(self, 0) else {
                    if stored.is_some() {
                        return Err("a pointer into private or local memory stored to global \
                                    memory is not supported"
                            .into());
                    }
                    return Ok(Some(i));
                };
                if let Some(p) = stored {
                    // A pointer as a value: its arena offset, zero-extended.
                    if !self.is_arena(p.var) {
                        return Err("a stored private or local pointer outside the arena".into());
                    }
                    let wide = self.ctx.t_int(64);
                    let x = self.emit(Op::UConvert, wide, vec![Operand::IdRef(p.off)]);
                    let align = self.flat_align(Self::stated_align(&i.operands[2..]), wide);
                    self.flat_store(&f, x, wide, align)?;
                    return Ok(None);
                }
                let ty = self.ty(v).ok_or("store value type")?;
                let align = self.flat_align(Self::stated_align(&i.operands[2..]), ty);
                self.flat_store(&f, v, ty, align)?;
                Ok(None)
            }
            Op::CopyMemorySized | Op::CopyMemory => {
                let (Some(d), Some(s)) = (id_operand(&i, 0), id_operand(&i, 1)) else {
                    return Ok(Some(i));
                };
                let (d, s) = (
                    self.alias.get(&d).copied().unwrap_or(d),
                    self.alias.get(&s).copied().unwrap_or(s),
                );
                if !self.flat.contains_key(&d) && !self.flat.contains_key(&s) {
                    return Ok(Some(i));
                }
                let (size, align) = if op == Op::CopyMemorySized {
                    let size = id_operand(&i, 2)
                        .and_then(|c| self.const_value(c))
                        .ok_or("memcpy of a variable size is not supported yet")?;
                    let align = i.operands.iter().skip(3).find_map(|o| match o {
                        Operand::LiteralBit32(a) => Some(*a),
                        _ => None,
                    });
                    (size, align.unwrap_or(1))
                } else {
                    let f = self
                        .flat
                        .get(&d)
                        .or(self.flat.get(&s))
                        .copied()
                        .ok_or("copy")?;
                    let size = self.layout_size(f.pointee)?;
                    (size, self.natural_align(f.pointee))
                };
                self.flat_copy(d, s, size, align)?;
                Ok(None)
            }
            Op::Phi => {
                if !self.flat_derived.contains_key(&rid) {
                    return Ok(Some(i));
                }
                let root = self.flat_derived[&rid];
                let base = self.flat_root(root)?;
                let pointee = i
                    .result_type
                    .and_then(|t| self.ctx.ptr_info(t))
                    .map(|p| p.1)
                    .ok_or("phi type")?;
                let mut ops = Vec::new();
                for pair in i.operands.chunks(2) {
                    let (Some(Operand::IdRef(v)), Some(parent)) = (pair.first(), pair.get(1))
                    else {
                        return Err("phi operands".into());
                    };
                    let o = self.chosen_offset(*v, root, "phi")?;
                    ops.push(Operand::IdRef(o));
                    ops.push(parent.clone());
                }
                let u = self.ctx.t_int(32);
                let off = self.emit(Op::Phi, u, ops);
                self.flat_insert(
                    rid,
                    Flat {
                        off,
                        pointee,
                        ..base
                    },
                );
                Ok(None)
            }
            Op::Select => {
                if !self.flat_derived.contains_key(&rid) {
                    return Ok(Some(i));
                }
                let root = self.flat_derived[&rid];
                let base = self.flat_root(root)?;
                let (Some(x), Some(y)) = (id_operand(&i, 1), id_operand(&i, 2)) else {
                    return Err("select operands".into());
                };
                let a = self.chosen_offset(x, root, "select")?;
                let b = self.chosen_offset(y, root, "select")?;
                let cond = id_operand(&i, 0).ok_or("select condition")?;
                let u = self.ctx.t_int(32);
                let off = self.emit(
                    Op::Select,
                    u,
                    vec![Operand::IdRef(cond), Operand::IdRef(a), Operand::IdRef(b)],
                );
                let pointee = i
                    .result_type
                    .and_then(|t| self.ctx.ptr_info(t))
                    .map(|p| p.1)
                    .ok_or("select type")?;
                self.flat_insert(
                    rid,
                    Flat {
                        off,
                        pointee,
                        ..base
                    },
                );
                Ok(None)
            }
            Op::ConvertUToPtr => {
                let Some(ty) = i.result_type.filter(|t| {
                    self.ctx
                        .ptr_info(*t)
                        .is_some_and(|p| kind_of(p.0).is_some())
                }) else {
                    return Ok(Some(i));
                };
                let x = id_operand(&i, 0).ok_or("ConvertUToPtr operand")?;
                let off = self.as_u32(x);
                let f = self.arena_pointer(ty, off)?;
                self.flat_insert(rid, f);
                Ok(None)
            }
            Op::PtrEqual | Op::PtrNotEqual | Op::PtrDiff | Op::ConvertPtrToU => {
                let any = (0..i.operands.len()).any(|k| operand_flat(self, k).is_some());
                if !any {
                    return Ok(Some(i));
                }
                self.flat_pointer_op(&i)?;
                Ok(None)
            }
            op if super::ATOMICS.contains(&op)
                || matches!(op, Op::AtomicFlagTestAndSet | Op::AtomicFlagClear) =>
            {
                let Some(f) = operand_flat(self, 0) else {
                    return Ok(Some(i));
                };
                let i = self.flat_atomic(i, f)?;
                Ok(Some(i))
            }
            Op::LifetimeStart | Op::LifetimeStop => Ok(Some(i)),
            Op::ExtInst => Ok(Some(i)),
            _ => {
                let uses = crate::compiler::spv::used_ids(&i);
                if uses.iter().any(|u| self.flat.contains_key(u)) {
                    return Err(format!(
                        "{op:?} of a pointer into byte-addressed private or local memory is not supported"
                    ));
                }
                Ok(Some(i))
            }
        }
    }

    /// A load of `ty` through `ptr` (flat or not), for the built-in expansions.
    pub(super) fn load_through(&mut self, ptr: Word, ty: Word) -> Result<Word, String> {
        if let Some(f) = self.flat.get(&ptr).copied() {
            let align = self.natural_align(ty);
            return self.flat_load(&f, ty, align);
        }
        let stored = self.same_width_pointee(ptr, ty);
        let mo = self.mem_operands(ptr, &[], stored);
        let v = self.emit(Op::Load, stored, [vec![Operand::IdRef(ptr)], mo].concat());
        if stored == ty {
            return Ok(v);
        }
        Ok(self.emit(Op::Bitcast, ty, vec![Operand::IdRef(v)]))
    }

    /// What `ptr` (a typed pointer) points to when that is another scalar of `ty`'s width
    /// (a private `ushort` array viewed as `half *`: the access chain ends on `ushort`, and
    /// the `half` goes through as its bits), else `ty`.
    fn same_width_pointee(&self, ptr: Word, ty: Word) -> Word {
        let scalar_width = |t: Word| {
            self.ctx
                .def(t)
                .filter(|d| matches!(d.class.opcode, Op::TypeInt | Op::TypeFloat))
                .and_then(|d| crate::compiler::spv::lit_operand(d, 0))
        };
        self.ty(ptr)
            .and_then(|t| self.ctx.ptr_info(t))
            .map(|(_, pointee)| pointee)
            .filter(|&p| {
                p != ty && scalar_width(p).is_some() && scalar_width(p) == scalar_width(ty)
            })
            .unwrap_or(ty)
    }

    /// A store of `v` (type `ty`) through `ptr` (flat or not), for the built-in expansions.
    pub(super) fn store_through(&mut self, ptr: Word, v: Word, ty: Word) -> Result<(), String> {
        if let Some(f) = self.flat.get(&ptr).copied() {
            let align = self.natural_align(ty);
            return self.flat_store(&f, v, ty, align);
        }
        let stored = self.same_width_pointee(ptr, ty);
        let v = if stored == ty {
            v
        } else {
            self.emit(Op::Bitcast, stored, vec![Operand::IdRef(v)])
        };
        let mo = self.mem_operands(ptr, &[], stored);
        self.out.push(inst(
            Op::Store,
            None,
            None,
            [vec![Operand::IdRef(ptr), Operand::IdRef(v)], mo].concat(),
        ));
        Ok(())
    }

    /// Pointer `ptr` (flat) plus `index` elements of `elem`, as a new flat pointer id.
    pub(super) fn flat_element(
        &mut self,
        f: Flat,
        index: Word,
        elem: Word,
    ) -> Result<Word, String> {
        let size = self.layout_size(elem)?;
        let off = self.off_scaled(f.off, index, size);
        let id = self.ctx.id();
        self.flat.insert(
            id,
            Flat {
                off,
                pointee: elem,
                ..f
            },
        );
        Ok(id)
    }
}

impl Walk<'_> {
    /// The `uint` array type holding `pointee` (rounded up to whole words); a length of
    /// `__local` argument arrays (spec-constant elements) stays a spec-constant expression.
    fn word_array(&mut self, pointee: Word) -> Result<Word, String> {
        let u = self.ctx.t_int(32);
        let d = self.ctx.def(pointee).ok_or("variable type")?.clone();
        if d.class.opcode == Op::TypeArray {
            let len = id_operand(&d, 1).ok_or("array length")?;
            if self
                .ctx
                .def(len)
                .is_some_and(|c| c.class.opcode == Op::SpecConstant)
            {
                let elem = id_operand(&d, 0).ok_or("element type")?;
                let es = self.layout_size(elem)?;
                let (k_es, k3, k4) = (
                    self.ctx.c_u32(es as u32),
                    self.ctx.c_u32(3),
                    self.ctx.c_u32(4),
                );
                let bytes = self.spec_op(Op::IMul, len, k_es);
                let up = self.spec_op(Op::IAdd, bytes, k3);
                let words = self.spec_op(Op::UDiv, up, k4);
                let id = self.ctx.id();
                self.ctx.module.types_global_values.push(inst(
                    Op::TypeArray,
                    None,
                    Some(id),
                    vec![Operand::IdRef(u), Operand::IdRef(words)],
                ));
                return Ok(id);
            }
        }
        let size = self.layout_size(pointee)?;
        let n = self.ctx.c_u32(size.div_ceil(4).max(1) as u32);
        Ok(self.ctx.global(
            Op::TypeArray,
            None,
            vec![Operand::IdRef(u), Operand::IdRef(n)],
        ))
    }

    /// Re-types variable instruction `i` (kept under its id) as a word array and registers it.
    fn flat_retype(&mut self, i: &mut Instruction) -> Result<(), String> {
        let rid = i.result_id.ok_or("variable id")?;
        let (sc, pointee) = i
            .result_type
            .and_then(|t| self.ctx.ptr_info(t))
            .ok_or("variable type")?;
        let arr = self.word_array(pointee)?;
        let pt = self.ctx.t_ptr(sc, arr);
        i.result_type = Some(pt);
        if let Some(init) = id_operand(i, 1) {
            let size = self.layout_size(pointee)?;
            let mut bytes = vec![0u8; size.div_ceil(4) as usize * 4];
            self.constant_bytes(init, 0, &mut bytes)?;
            let z = if bytes.iter().all(|b| *b == 0) {
                self.ctx.global(Op::ConstantNull, Some(arr), vec![])
            } else {
                let words: Vec<Operand> = bytes
                    .chunks(4)
                    .map(|c| {
                        let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                        Operand::IdRef(self.ctx.c_u32(w))
                    })
                    .collect();
                self.ctx.global(Op::ConstantComposite, Some(arr), words)
            };
            i.operands[1] = Operand::IdRef(z);
        }
        self.types.insert(rid, pt);
        let off = self.ctx.c_u32(0);
        self.flat.insert(
            rid,
            Flat {
                var: rid,
                sc,
                off,
                pointee,
            },
        );
        Ok(())
    }

    /// Writes constant `c` (OpenCL C layout) into `out` at byte `at`.
    pub(super) fn constant_bytes(&self, c: Word, at: u64, out: &mut [u8]) -> Result<(), String> {
        let d = self.ctx.def(c).ok_or("initializer")?;
        let ty = d.result_type.ok_or("initializer type")?;
        match d.class.opcode {
            Op::ConstantNull | Op::Undef => Ok(()),
            Op::Constant => {
                let bits = self.ctx.scalar_width(ty).unwrap_or(32);
                let v = match d.operands.first() {
                    Some(Operand::LiteralBit32(v)) => u64::from(*v),
                    Some(Operand::LiteralBit64(v)) => *v,
                    _ => return Err("initializer literal".into()),
                };
                let n = (bits / 8) as usize;
                let at = at as usize;
                out.get_mut(at..at + n)
                    .ok_or("initializer size")?
                    .copy_from_slice(&v.to_le_bytes()[..n]);
                Ok(())
            }
            Op::ConstantTrue | Op::ConstantFalse => Err("bool initializer".into()),
            Op::ConstantComposite => {
                let td = self.ctx.def(ty).ok_or("initializer type")?;
                let offsets: Vec<u64> = match td.class.opcode {
                    Op::TypeStruct => {
                        let defs = Defs::new(&self.ctx.module);
                        Layout::new(&self.ctx.module, &defs).member_offsets(ty)?
                    }
                    _ => {
                        let es = self.layout_size(id_operand(td, 0).ok_or("element type")?)?;
                        (0..d.operands.len() as u64).map(|k| k * es).collect()
                    }
                };
                for (k, o) in offsets.iter().enumerate() {
                    let m = id_operand(d, k).ok_or("initializer member")?;
                    self.constant_bytes(m, at + o, out)?;
                }
                Ok(())
            }
            _ => {
                Err("this initializer of a byte-addressed private variable is not supported".into())
            }
        }
    }

    /// A `Function` variable to flatten.
    pub(super) fn flat_variable(&mut self, i: &Instruction) -> Result<(), String> {
        let mut v = i.clone();
        self.flat_retype(&mut v)?;
        self.out.push(v);
        Ok(())
    }

    /// Flattens the module-scope variables among `roots`.
    pub(super) fn flat_globals(
        &mut self,
        roots: &std::collections::HashSet<Word>,
    ) -> Result<(), String> {
        let n = self.ctx.module.types_global_values.len();
        for k in 0..n {
            let g = &self.ctx.module.types_global_values[k];
            if g.class.opcode != Op::Variable
                || !g.result_id.is_some_and(|r| roots.contains(&r))
                || g.result_id.is_some_and(|r| self.flat.contains_key(&r))
            {
                continue;
            }
            let mut v = g.clone();
            self.flat_retype(&mut v)?;
            // New types were appended; the variable keeps its place after them.
            self.ctx.module.types_global_values[k] = inst(Op::Nop, None, None, vec![]);
            self.ctx.module.types_global_values.push(v);
        }
        self.ctx
            .module
            .types_global_values
            .retain(|g| g.class.opcode != Op::Nop);
        Ok(())
    }
}
