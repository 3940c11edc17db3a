//! Typed views of private and local memory ("type punning"). LLVM's SROA copies structs with
//! wide integer loads that span several members (two `float`s as one `i64`); Vulkan cannot cast
//! logical pointers, so a load or store through such a view becomes accesses to the scalars it
//! covers, reassembled from and split into 32-bit words.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{Op, Word};

use super::{Logical, Walk};
use crate::compiler::layout::Layout;
use crate::compiler::spv::{id_operand, inst, lit_operand, Defs};

/// A scalar of the viewed object: its constant index path below the anchor, type, byte
/// offset within the anchor and width in bits; or (`pad`) a 32-bit word of padding the view
/// covers (the fourth component of a `vec3`, struct padding), read as 0 and never written.
struct Leaf {
    path: Vec<u32>,
    ty: Word,
    offset: u64,
    bits: u32,
    pad: bool,
}

const UNSUPPORTED: &str =
    "reinterpreting private or local memory through a pointer cast is not supported here";

impl Walk<'_> {
    fn size_of(&self, ty: Word) -> Result<u64, String> {
        let defs = Defs::new(&self.ctx.module);
        Layout::new(&self.ctx.module, &defs)
            .size_align(ty)
            .map(|s| s.size)
    }

    /// The type of each prefix of `l`'s index path (entry 0: the root's pointee).
    fn path_types(&self, l: &Logical) -> Result<Vec<Word>, String> {
        let root_ty = self.ty(l.root).ok_or("view root type")?;
        let mut types = vec![self.ctx.ptr_info(root_ty).ok_or("view root")?.1];
        for i in &l.idx {
            let cur = *types.last().unwrap_or(&0);
            let d = self.ctx.def(cur).ok_or("view path type")?;
            let next = match d.class.opcode {
                Op::TypeArray | Op::TypeVector => id_operand(d, 0),
                Op::TypeStruct => {
                    let k = self.const_value(*i).ok_or("struct index")? as usize;
                    id_operand(d, k)
                }
                _ => None,
            };
            types.push(next.ok_or("view path type")?);
        }
        Ok(types)
    }

    /// Byte offset of child `index` of aggregate `ty`.
    fn child_offset(&self, ty: Word, index: u64) -> Result<u64, String> {
        let d = self.ctx.def(ty).ok_or("aggregate type")?;
        match d.class.opcode {
            Op::TypeStruct => {
                let defs = Defs::new(&self.ctx.module);
                let offsets = Layout::new(&self.ctx.module, &defs).member_offsets(ty)?;
                offsets
                    .get(index as usize)
                    .copied()
                    .ok_or_else(|| "member index".into())
            }
            Op::TypeArray | Op::TypeVector => {
                let elem = id_operand(d, 0).ok_or("element type")?;
                Ok(index * self.size_of(elem)?)
            }
            _ => Err(UNSUPPORTED.into()),
        }
    }

    /// The shortest prefix of `l`'s path whose object holds the `size` bytes the view covers,
    /// and the view's byte offset in it. Indices below the prefix must be constants.
    fn anchor(&self, l: &Logical, size: u64) -> Result<(usize, u64), String> {
        let types = self.path_types(l)?;
        let (mut k, mut off) = (l.idx.len(), 0);
        loop {
            if off + size <= self.size_of(types[k])? {
                return Ok((k, off));
            }
            if k == 0 {
                return Err(format!("{UNSUPPORTED}: the view reaches past the variable"));
            }
            k -= 1;
            let i = self
                .const_value(l.idx[k])
                .ok_or_else(|| format!("{UNSUPPORTED}: a dynamic index below the view"))?;
            off += self.child_offset(types[k], i)?;
        }
    }

    /// The scalars of `ty` (at byte `base`) that overlap `[lo, hi)`.
    fn leaves(
        &self,
        ty: Word,
        base: u64,
        (lo, hi): (u64, u64),
        path: &mut Vec<u32>,
        out: &mut Vec<Leaf>,
    ) -> Result<(), String> {
        let size = self.size_of(ty)?;
        if base >= hi || base + size <= lo {
            return Ok(());
        }
        let d = self.ctx.def(ty).ok_or("leaf type")?;
        let (count, elem) = match d.class.opcode {
            Op::TypeInt | Op::TypeFloat => {
                out.push(Leaf {
                    path: path.clone(),
                    ty,
                    offset: base,
                    bits: lit_operand(d, 0).unwrap_or(32),
                    pad: false,
                });
                return Ok(());
            }
            Op::TypeVector => (u64::from(lit_operand(d, 1).unwrap_or(1)), id_operand(d, 0)),
            Op::TypeArray => (
                id_operand(d, 1)
                    .and_then(|c| self.const_value(c))
                    .ok_or("array length")?,
                id_operand(d, 0),
            ),
            Op::TypeStruct => (d.operands.len() as u64, None),
            _ => return Err(UNSUPPORTED.into()),
        };
        for k in 0..count {
            let child = match elem {
                Some(e) => e,
                None => id_operand(d, k as usize).ok_or("member type")?,
            };
            path.push(k as u32);
            self.leaves(child, base + self.child_offset(ty, k)?, (lo, hi), path, out)?;
            path.pop();
        }
        Ok(())
    }

    /// The 32-bit-word parts of value type `ty`: (component type, bits) per component.
    fn parts(&self, ty: Word) -> Result<Vec<(Word, u32)>, String> {
        let d = self.ctx.def(ty).ok_or("view type")?;
        let (n, elem) = match d.class.opcode {
            Op::TypeVector => (
                lit_operand(d, 1).unwrap_or(1),
                id_operand(d, 0).ok_or("vector type")?,
            ),
            Op::TypeInt | Op::TypeFloat => (1, ty),
            _ => return Err(format!("{UNSUPPORTED}: the view is not a scalar or vector")),
        };
        let bits = self.ctx.scalar_width(elem).ok_or("view width")?;
        if bits != 32 && bits != 64 {
            return Err(format!("{UNSUPPORTED}: {bits}-bit view"));
        }
        Ok(vec![(elem, bits); n as usize])
    }

    /// The leaves a view of `size` bytes at `l` covers, their anchor prefix length, checked to
    /// tile the view exactly with 32- and 64-bit scalars and whole 32-bit words of padding
    /// (clang reads and writes a private `float3` as a `float4`, its size).
    fn view_leaves(&self, l: &Logical, size: u64) -> Result<(usize, Vec<Leaf>), String> {
        let (k, off) = self.anchor(l, size)?;
        let types = self.path_types(l)?;
        let mut found = Vec::new();
        self.leaves(types[k], 0, (off, off + size), &mut Vec::new(), &mut found)?;
        let end = off + size;
        let mut leaves = Vec::new();
        let mut at = off;
        let pad_to = |at: &mut u64, to: u64, leaves: &mut Vec<Leaf>| -> Result<(), String> {
            if to < *at || (to - *at) % 4 != 0 || *at % 4 != 0 {
                return Err(format!(
                    "{UNSUPPORTED}: the view does not cover whole 32- or 64-bit scalars"
                ));
            }
            while *at < to {
                leaves.push(Leaf {
                    path: Vec::new(),
                    ty: 0,
                    offset: *at,
                    bits: 32,
                    pad: true,
                });
                *at += 4;
            }
            Ok(())
        };
        for leaf in found {
            if leaf.bits != 32 && leaf.bits != 64 {
                return Err(format!(
                    "{UNSUPPORTED}: the view does not cover whole 32- or 64-bit scalars"
                ));
            }
            pad_to(&mut at, leaf.offset, &mut leaves)?;
            at += u64::from(leaf.bits / 8);
            leaves.push(leaf);
        }
        if at > end {
            return Err(format!("{UNSUPPORTED}: the view ends inside a scalar"));
        }
        pad_to(&mut at, end, &mut leaves)?;
        Ok((k, leaves))
    }

    /// A pointer to `leaf` below the first `k` indices of `l`.
    fn leaf_ptr(&mut self, l: &Logical, k: usize, leaf: &Leaf) -> Word {
        let mut ops = vec![Operand::IdRef(l.root)];
        ops.extend(l.idx[..k].iter().map(|i| Operand::IdRef(*i)));
        for p in &leaf.path {
            let c = self.ctx.c_u32(*p);
            ops.push(Operand::IdRef(c));
        }
        let pty = self.ctx.t_ptr(l.sc, leaf.ty);
        self.emit(Op::AccessChain, pty, ops)
    }

    /// `v` reinterpreted as `to` (no instruction when the types are the same).
    fn reinterpret(&mut self, v: Word, from: Word, to: Word) -> Word {
        if from == to {
            v
        } else {
            self.emit(Op::Bitcast, to, vec![Operand::IdRef(v)])
        }
    }

    /// Splits a scalar `v` of type `ty` and `bits` into 32-bit words.
    fn split_words(&mut self, v: Word, ty: Word, bits: u32, words: &mut Vec<Word>) {
        let u32t = self.ctx.t_int(32);
        if bits == 32 {
            words.push(self.reinterpret(v, ty, u32t));
            return;
        }
        let u64t = self.ctx.t_int(64);
        let x = self.reinterpret(v, ty, u64t);
        let lo = self.emit(Op::UConvert, u32t, vec![Operand::IdRef(x)]);
        let c32 = self.ctx.c_u64(32);
        let h = self.emit(
            Op::ShiftRightLogical,
            u64t,
            vec![Operand::IdRef(x), Operand::IdRef(c32)],
        );
        let hi = self.emit(Op::UConvert, u32t, vec![Operand::IdRef(h)]);
        words.extend([lo, hi]);
    }

    /// A scalar of type `ty` and `bits` from the next words of `words`.
    fn join_words(&mut self, ty: Word, bits: u32, words: &mut impl Iterator<Item = Word>) -> Word {
        let u32t = self.ctx.t_int(32);
        let w0 = words.next().unwrap_or(0);
        if bits == 32 {
            return self.reinterpret(w0, u32t, ty);
        }
        let w1 = words.next().unwrap_or(0);
        let u64t = self.ctx.t_int(64);
        let lo = self.emit(Op::UConvert, u64t, vec![Operand::IdRef(w0)]);
        let hi = self.emit(Op::UConvert, u64t, vec![Operand::IdRef(w1)]);
        let c32 = self.ctx.c_u64(32);
        let hi = self.emit(
            Op::ShiftLeftLogical,
            u64t,
            vec![Operand::IdRef(hi), Operand::IdRef(c32)],
        );
        let x = self.emit(
            Op::BitwiseOr,
            u64t,
            vec![Operand::IdRef(lo), Operand::IdRef(hi)],
        );
        self.reinterpret(x, u64t, ty)
    }

    /// `OpLoad` through the view `ptr`.
    pub(super) fn pun_load(&mut self, i: &Instruction, ptr: Word) -> Result<(), String> {
        let l = self.logical.get(&ptr).cloned().ok_or("view pointer")?;
        let ty = i.result_type.ok_or("load type")?;
        let parts = self.parts(ty)?;
        let size = self.size_of(ty)?;
        let (k, leaves) = match self.view_leaves(&l, size) {
            Ok(v) => v,
            Err(e) => match self.dynamic_element_words(&l, size)? {
                Some(words) => return self.finish_load(i, ty, &parts, words),
                None => return Err(e),
            },
        };
        let mut words = Vec::new();
        for leaf in &leaves {
            if leaf.pad {
                words.push(self.ctx.c_u32(0));
                continue;
            }
            let p = self.leaf_ptr(&l, k, leaf);
            let v = self.emit(Op::Load, leaf.ty, vec![Operand::IdRef(p)]);
            self.split_words(v, leaf.ty, leaf.bits, &mut words);
        }
        self.finish_load(i, ty, &parts, words)
    }

    /// The 32-bit words of a view of `size` bytes at `l` whose last index is dynamic into an
    /// array of 8-, 16- or 32-bit scalars (libclc's `double` argument reduction reads its
    /// byte table of 2/pi as `uint4` at a computed offset): each element the view covers is
    /// loaded at its own dynamic index and shifted into place (little-endian). `None` when
    /// `l` is not of that form.
    fn dynamic_element_words(
        &mut self,
        l: &Logical,
        size: u64,
    ) -> Result<Option<Vec<Word>>, String> {
        let Some(&last) = l.idx.last() else {
            return Ok(None);
        };
        if self.const_value(last).is_some() || size % 4 != 0 {
            return Ok(None);
        }
        let types = self.path_types(l)?;
        let parent = types[types.len() - 2];
        let elem = types[types.len() - 1];
        let is_array = self
            .ctx
            .def(parent)
            .is_some_and(|d| d.class.opcode == Op::TypeArray);
        let scalar = self
            .ctx
            .def(elem)
            .is_some_and(|d| matches!(d.class.opcode, Op::TypeInt | Op::TypeFloat));
        let bits = self.ctx.scalar_width(elem).unwrap_or(0);
        if !is_array || !scalar || !matches!(bits, 8 | 16 | 32) {
            return Ok(None);
        }
        let it = self.ty(last).ok_or("index type")?;
        let iw = self.ctx.scalar_width(it).ok_or("index width")?;
        let u32t = self.ctx.t_int(32);
        let ut = self.ctx.t_int(bits);
        let count = size * 8 / u64::from(bits);
        let per_word = 32 / u64::from(bits);
        let mut words = Vec::new();
        let mut word: Option<Word> = None;
        for m in 0..count {
            let off = if iw == 64 {
                self.ctx.c_u64(m)
            } else {
                self.ctx.c_u32(m as u32)
            };
            let idx = self.emit(
                Op::IAdd,
                it,
                vec![Operand::IdRef(last), Operand::IdRef(off)],
            );
            let mut ops = vec![Operand::IdRef(l.root)];
            ops.extend(l.idx[..l.idx.len() - 1].iter().map(|i| Operand::IdRef(*i)));
            ops.push(Operand::IdRef(idx));
            let pty = self.ctx.t_ptr(l.sc, elem);
            let p = self.emit(Op::AccessChain, pty, ops);
            let v = self.emit(Op::Load, elem, vec![Operand::IdRef(p)]);
            let v = self.reinterpret(v, elem, ut);
            let v = if bits == 32 {
                v
            } else {
                self.emit(Op::UConvert, u32t, vec![Operand::IdRef(v)])
            };
            let shift = (m % per_word) as u32 * bits;
            let v = if shift == 0 {
                v
            } else {
                let c = self.ctx.c_u32(shift);
                self.emit(
                    Op::ShiftLeftLogical,
                    u32t,
                    vec![Operand::IdRef(v), Operand::IdRef(c)],
                )
            };
            word = Some(match word {
                Some(w) => self.emit(
                    Op::BitwiseOr,
                    u32t,
                    vec![Operand::IdRef(w), Operand::IdRef(v)],
                ),
                None => v,
            });
            if (m + 1) % per_word == 0 {
                words.extend(word.take());
            }
        }
        Ok(Some(words))
    }

    /// Ends a view load: the value of type `ty` (components `parts`) from 32-bit `words`, as
    /// load `i`'s result.
    fn finish_load(
        &mut self,
        i: &Instruction,
        ty: Word,
        parts: &[(Word, u32)],
        mut words: Vec<Word>,
    ) -> Result<(), String> {
        let needed: u32 = parts.iter().map(|(_, bits)| bits / 32).sum();
        if words.len() < needed as usize {
            // Trailing padding (see `view_leaves`) reads as zero.
            let zero = self.ctx.c_u32(0);
            words.resize(needed as usize, zero);
        }
        let mut it = words.into_iter();
        let comps: Vec<Word> = parts
            .iter()
            .map(|(t, bits)| self.join_words(*t, *bits, &mut it))
            .collect();
        let value = if comps.len() == 1 && parts[0].0 == ty {
            comps[0]
        } else {
            self.emit(
                Op::CompositeConstruct,
                ty,
                comps.iter().map(|c| Operand::IdRef(*c)).collect(),
            )
        };
        let rid = i.result_id.ok_or("load id")?;
        self.types.insert(rid, ty);
        self.out.push(inst(
            Op::CopyObject,
            Some(ty),
            Some(rid),
            vec![Operand::IdRef(value)],
        ));
        Ok(())
    }

    /// `OpStore` through the view `ptr`.
    pub(super) fn pun_store(&mut self, i: &Instruction, ptr: Word) -> Result<(), String> {
        let l = self.logical.get(&ptr).cloned().ok_or("view pointer")?;
        let v = id_operand(i, 1).ok_or("store value")?;
        let ty = self.ty(v).ok_or("store value type")?;
        let parts = self.parts(ty)?;
        let (k, leaves) = self.view_leaves(&l, self.size_of(ty)?)?;
        let mut words = Vec::new();
        let vector = !(parts.len() == 1 && parts[0].0 == ty);
        for (n, (t, bits)) in parts.iter().enumerate() {
            let c = if vector {
                self.emit(
                    Op::CompositeExtract,
                    *t,
                    vec![Operand::IdRef(v), Operand::LiteralBit32(n as u32)],
                )
            } else {
                v
            };
            self.split_words(c, *t, *bits, &mut words);
        }
        let mut it = words.into_iter();
        for leaf in &leaves {
            if leaf.pad {
                it.next();
                continue;
            }
            let x = self.join_words(leaf.ty, leaf.bits, &mut it);
            let p = self.leaf_ptr(&l, k, leaf);
            self.out.push(inst(
                Op::Store,
                None,
                None,
                vec![Operand::IdRef(p), Operand::IdRef(x)],
            ));
        }
        Ok(())
    }
}

impl Walk<'_> {
    /// `OpConvertPtrToU` of a pointer into private or local memory (`(uintptr_t)&x`): Vulkan
    /// has no address for it, so the value is a synthetic one: the byte offset of the
    /// pointee within its variable (OpenCL C layout, dynamic array indices included) plus a
    /// per-variable base, a multiple of 2^20 (2^32 for 64-bit results). Differences within
    /// one variable and alignments (up to 1 MiB) are those of a real layout; the value cannot
    /// be converted back to a pointer.
    pub(super) fn logical_ptr_to_u(&mut self, i: &Instruction, ptr: Word) -> Result<(), String> {
        let l = self.logical.get(&ptr).cloned().ok_or("pointer")?;
        self.to_int.insert(l.root);
        let rt = i.result_type.ok_or("ConvertPtrToU type")?;
        let rid = i.result_id.ok_or("ConvertPtrToU id")?;
        let w = self.ctx.scalar_width(rt).ok_or("ConvertPtrToU width")?;
        let types = self.path_types(&l)?;
        let shift = if w == 64 { 32 } else { 20 };
        let base = u64::from(l.root % 4096 + 1) << shift;
        let konst = |s: &mut Self, v: u64| {
            if w == 64 {
                s.ctx.c_u64(v)
            } else {
                s.ctx.c_u32(v as u32)
            }
        };
        let mut fixed = base;
        let mut dynamic: Option<Word> = None;
        for (k, idx) in l.idx.iter().enumerate() {
            let cur = types[k];
            let d = self.ctx.def(cur).ok_or("pointer path type")?;
            match (d.class.opcode, self.const_value(*idx)) {
                (_, Some(c)) => fixed += self.child_offset(cur, c)?,
                (Op::TypeArray | Op::TypeVector, None) => {
                    let elem = id_operand(d, 0).ok_or("element type")?;
                    let size = self.size_of(elem)?;
                    let it = self.ty(*idx).ok_or("index type")?;
                    let iw = self.ctx.scalar_width(it).ok_or("index width")?;
                    let x = if iw == w {
                        *idx
                    } else {
                        self.emit(Op::SConvert, rt, vec![Operand::IdRef(*idx)])
                    };
                    let sz = konst(self, size);
                    let term = self.emit(Op::IMul, rt, vec![Operand::IdRef(x), Operand::IdRef(sz)]);
                    dynamic = Some(match dynamic {
                        Some(acc) => self.emit(
                            Op::IAdd,
                            rt,
                            vec![Operand::IdRef(acc), Operand::IdRef(term)],
                        ),
                        None => term,
                    });
                }
                _ => return Err(UNSUPPORTED.into()),
            }
        }
        let c = konst(self, fixed);
        let value = match dynamic {
            Some(d) => self.emit(Op::IAdd, rt, vec![Operand::IdRef(c), Operand::IdRef(d)]),
            None => c,
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
}
