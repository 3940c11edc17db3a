//! Memory access for Vulkan.
//!
//! - Logical pointers (into Function, Workgroup and Private variables) cannot do arithmetic in
//!   Vulkan: every `OpPtrAccessChain` and pointer bitcast on them is folded into an
//!   `OpAccessChain` from the variable (root) with an index path.
//! - Physical pointers (`PhysicalStorageBuffer`): `OpInBounds*` become plain chains, loads and
//!   stores get an `Aligned` operand.
//! - `OpCopyMemorySized` (memcpy of a whole object) becomes a load and a store.
//! - Loads and stores through pointer casts of logical pointers ([`pun`]) become accesses to
//!   the scalars they cover.
//! - `vloadn`/`vstoren` become one vector access through a physical pointer, component
//!   loads/stores on private and local memory.
//! - A private or local variable used in ways typed access chains cannot express (8/16-bit
//!   views of wider objects at dynamic offsets, memcpy of part of an object, pointer arithmetic
//!   across objects, pointer comparisons and differences) becomes a byte-addressed array of
//!   words ([`flat`]); [`lower_memory`] retries with it. Those whose pointers are chosen at
//!   run time among variables (phis, selects, pointers stored in memory or converted to
//!   integers) share one such array per work-item or per work-group ([`arena`]).
//! - `__local` variables reached by float atomics that move values (load, store, exchange)
//!   hold integers of the same width instead ([`inthome`]).
//! - Atomics and barriers get Vulkan scopes and semantics: `Device` scope on global memory
//!   (OpenCL 1.2 atomics arrive with `Workgroup`), `SequentiallyConsistent` -> `AcquireRelease`,
//!   `CrossWorkgroupMemory` -> `UniformMemory`.

mod arena;
mod flat;
mod half;
mod inthome;
mod pun;

use std::collections::{HashMap, HashSet};

use flat::Flat;

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::{MemoryAccess, MemorySemantics, Op, Scope, StorageClass, Word};

use super::ctx::Ctx;
use crate::compiler::layout::Layout;
use crate::compiler::spv::{id_operand, inst, lit_operand, Defs};

/// OpenCL.std instruction numbers used here.
const CL_VLOADN: u32 = 171;
const CL_VSTOREN: u32 = 172;

/// A logical pointer: `OpAccessChain root idx...`.
#[derive(Clone)]
struct Logical {
    root: Word,
    sc: StorageClass,
    idx: Vec<Word>,
}

struct Walk<'c> {
    ctx: &'c mut Ctx,
    types: HashMap<Word, Word>,
    logical: HashMap<Word, Logical>,
    /// Pointer bitcasts that could not be folded (only memcpy and lifetime markers may use them).
    views: HashMap<Word, Word>,
    /// Any pointer bitcast: result -> source.
    casts: HashMap<Word, Word>,
    alias: HashMap<Word, Word>,
    opencl_std: Option<Word>,
    out: Vec<Instruction>,
    /// Pointers into byte-addressed variables ([`flat`]).
    flat: HashMap<Word, Flat>,
    /// Every pointer derived from a flat variable (computed before the walk): its root.
    flat_derived: HashMap<Word, Word>,
    /// Offset ids promised to phis for flat pointers defined later in block order.
    pending: HashMap<Word, Word>,
    /// The arenas of this attempt ([`arena`]), when any variable is flat.
    arenas: Option<arena::Arenas>,
    /// Roots of typed pointers converted to integers so far.
    to_int: HashSet<Word>,
    /// Further variables to make byte-addressed when the failing instruction does not name
    /// them (an integer converted to a pointer: the variables converted to integers).
    blame: Vec<Word>,
}

impl Walk<'_> {
    fn emit(&mut self, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = self.ctx.id();
        self.types.insert(id, ty);
        self.out.push(inst(op, Some(ty), Some(id), operands));
        id
    }

    fn ty(&self, v: Word) -> Option<Word> {
        self.types.get(&v).copied()
    }

    fn sc_of(&self, ptr: Word) -> Option<StorageClass> {
        if let Some(l) = self.logical.get(&ptr) {
            return Some(l.sc);
        }
        self.ty(ptr).and_then(|t| self.ctx.ptr_info(t)).map(|p| p.0)
    }

    fn const_value(&self, id: Word) -> Option<u64> {
        let d = self.ctx.def(id)?;
        match (d.class.opcode, d.operands.first()) {
            (Op::Constant, Some(Operand::LiteralBit32(v))) => Some(u64::from(*v)),
            (Op::Constant, Some(Operand::LiteralBit64(v))) => Some(*v),
            (Op::ConstantNull, _) => Some(0),
            _ => None,
        }
    }

    /// `a + b` for two integer indices, widening the narrower one (sign-extending).
    fn add_index(&mut self, a: Word, b: Word) -> Result<Word, String> {
        if self.const_value(b) == Some(0) {
            return Ok(a);
        }
        if self.const_value(a) == Some(0) {
            return Ok(b);
        }
        let (ta, tb) = (
            self.ty(a).ok_or("index type")?,
            self.ty(b).ok_or("index type")?,
        );
        let (wa, wb) = (
            self.ctx.scalar_width(ta).unwrap_or(32),
            self.ctx.scalar_width(tb).unwrap_or(32),
        );
        if let (Some(x), Some(y)) = (self.const_value(a), self.const_value(b)) {
            return Ok(if wa.max(wb) == 64 {
                self.ctx.c_u64(x.wrapping_add(y))
            } else {
                self.ctx.c_u32((x.wrapping_add(y)) as u32)
            });
        }
        let (a, b, t) = if wa == wb {
            (a, b, ta)
        } else if wa > wb {
            (a, self.emit(Op::SConvert, ta, vec![Operand::IdRef(b)]), ta)
        } else {
            (self.emit(Op::SConvert, tb, vec![Operand::IdRef(a)]), b, tb)
        };
        Ok(self.emit(Op::IAdd, t, vec![Operand::IdRef(a), Operand::IdRef(b)]))
    }

    /// Defines `result` (pointer to `pointee`) as `base` offset by `first` elements then
    /// indexed by `rest`, for a logical `base`.
    fn fold(
        &mut self,
        result: Word,
        pointee: Word,
        base: &Logical,
        first: Option<Word>,
        rest: &[Word],
    ) -> Result<(), String> {
        let mut idx = base.idx.clone();
        if let Some(f) = first {
            if self.const_value(f) != Some(0) {
                self.check_step(base, f)?;
                let Some(last) = idx.pop() else {
                    return Err(
                        "pointer arithmetic past a private or local variable is not supported yet"
                            .into(),
                    );
                };
                let sum = self.add_index(last, f)?;
                idx.push(sum);
            }
        }
        idx.extend_from_slice(rest);
        let l = Logical {
            root: base.root,
            sc: base.sc,
            idx: idx.clone(),
        };
        if idx.is_empty() {
            self.alias.insert(result, base.root);
        } else {
            let ty = self.ctx.t_ptr(base.sc, pointee);
            let mut ops = vec![Operand::IdRef(base.root)];
            ops.extend(idx.iter().map(|i| Operand::IdRef(*i)));
            self.types.insert(result, ty);
            self.out
                .push(inst(Op::AccessChain, Some(ty), Some(result), ops));
        }
        self.logical.insert(result, l);
        Ok(())
    }

    /// Checks that stepping logical pointer `base` by `f` elements stays inside the object its
    /// last index selects from: an index into the variable's own outermost array (leaving it
    /// is undefined in C), or constants that stay in range. Otherwise (a cast of a vector to
    /// its components stepped dynamically, rows of a 2-D array crossed) the variable must be
    /// byte-addressed ([`flat`]).
    fn check_step(&self, base: &Logical, f: Word) -> Result<(), String> {
        const MSG: &str = "pointer arithmetic across objects in private or local memory";
        let Some(last) = base.idx.last() else {
            return Err(MSG.into());
        };
        let parent = Logical {
            root: base.root,
            sc: base.sc,
            idx: base.idx[..base.idx.len() - 1].to_vec(),
        };
        let container = self.logical_pointee(&parent).ok_or(MSG)?;
        let d = self.ctx.def(container).ok_or(MSG)?;
        let is_array = matches!(d.class.opcode, Op::TypeArray | Op::TypeRuntimeArray);
        if is_array && parent.idx.is_empty() {
            return Ok(());
        }
        let len = match d.class.opcode {
            Op::TypeArray => id_operand(d, 1).and_then(|c| self.const_value(c)),
            Op::TypeVector => lit_operand(d, 1).map(u64::from),
            _ => None,
        };
        match (self.const_value(*last), self.const_value(f), len) {
            (Some(a), Some(b), Some(n))
                if (a as i64).wrapping_add(b as i64) >= 0
                    && ((a as i64).wrapping_add(b as i64) as u64) < n =>
            {
                Ok(())
            }
            _ => Err(MSG.into()),
        }
    }

    /// Pointee type of the logical pointer `l`, following its index path.
    fn logical_pointee(&self, l: &Logical) -> Option<Word> {
        let mut cur = self.ctx.ptr_info(self.ty(l.root)?)?.1;
        for i in &l.idx {
            let d = self.ctx.def(cur)?;
            cur = match d.class.opcode {
                Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector => id_operand(d, 0)?,
                Op::TypeStruct => {
                    let k = self.const_value(*i)? as usize;
                    id_operand(d, k)?
                }
                _ => return None,
            };
        }
        Some(cur)
    }

    /// Folds a pointer bitcast of a logical pointer when the target type is the first
    /// (nested) element of the source; otherwise remembers it as a view.
    fn bitcast_logical(
        &mut self,
        result: Word,
        target_ptr_ty: Word,
        src: &Logical,
    ) -> Result<(), String> {
        let target = self
            .ctx
            .ptr_info(target_ptr_ty)
            .map(|p| p.1)
            .ok_or("bitcast target")?;
        let mut cur = self.logical_pointee(src).ok_or("logical pointer type")?;
        let mut zeros = Vec::new();
        loop {
            if cur == target {
                return self.fold(result, target, src, None, &zeros);
            }
            let Some(d) = self.ctx.def(cur) else { break };
            cur = match d.class.opcode {
                Op::TypeArray | Op::TypeStruct | Op::TypeVector => match id_operand(d, 0) {
                    Some(t) => t,
                    None => break,
                },
                _ => break,
            };
            zeros.push(self.ctx.c_u32(0));
        }
        self.views.insert(result, target_ptr_ty);
        self.logical.insert(result, src.clone());
        Ok(())
    }

    fn resolve_cast(&self, mut p: Word) -> Word {
        while let Some(s) = self.casts.get(&p) {
            p = *s;
        }
        p
    }

    fn check_access(&self, ptr: Word) -> Result<(), String> {
        if self.views.contains_key(&ptr) {
            return Err("reinterpreting private or local memory through a pointer cast is not supported yet".into());
        }
        Ok(())
    }

    fn natural_align(&self, ty: Word) -> u32 {
        let defs = Defs::new(&self.ctx.module);
        let layout = Layout::new(&self.ctx.module, &defs);
        layout.size_align(ty).map(|s| s.align as u32).unwrap_or(4)
    }

    /// Memory operands for an access through `ptr` (Aligned for physical pointers).
    fn mem_operands(&self, ptr: Word, old: &[Operand], value_ty: Word) -> Vec<Operand> {
        if self.sc_of(ptr) != Some(StorageClass::PhysicalStorageBuffer) {
            // Logical accesses: keep only Volatile.
            return match old.first() {
                Some(Operand::MemoryAccess(m)) if m.contains(MemoryAccess::VOLATILE) => {
                    vec![Operand::MemoryAccess(MemoryAccess::VOLATILE)]
                }
                _ => vec![],
            };
        }
        let (mut flags, mut align) = (MemoryAccess::NONE, 0);
        if let Some(Operand::MemoryAccess(m)) = old.first() {
            flags =
                *m & (MemoryAccess::VOLATILE | MemoryAccess::ALIGNED | MemoryAccess::NONTEMPORAL);
            if m.contains(MemoryAccess::ALIGNED) {
                align = match old.get(1) {
                    Some(Operand::LiteralBit32(a)) => *a,
                    _ => 0,
                };
            }
        }
        if align == 0 {
            align = self.natural_align(value_ty).max(1);
        }
        flags |= MemoryAccess::ALIGNED;
        vec![Operand::MemoryAccess(flags), Operand::LiteralBit32(align)]
    }

    fn semantics(&mut self, id: Word, unequal: bool) -> Word {
        let v = self.const_value(id).unwrap_or(0) as u32;
        let mut s = MemorySemantics::from_bits_truncate(v);
        if s.contains(MemorySemantics::SEQUENTIALLY_CONSISTENT) {
            s.remove(MemorySemantics::SEQUENTIALLY_CONSISTENT);
            s |= MemorySemantics::ACQUIRE_RELEASE;
        }
        if unequal && s.intersects(MemorySemantics::RELEASE | MemorySemantics::ACQUIRE_RELEASE) {
            s.remove(MemorySemantics::RELEASE | MemorySemantics::ACQUIRE_RELEASE);
            s |= MemorySemantics::ACQUIRE;
        }
        if s.contains(MemorySemantics::CROSS_WORKGROUP_MEMORY) {
            s.remove(MemorySemantics::CROSS_WORKGROUP_MEMORY);
            s |= MemorySemantics::UNIFORM_MEMORY;
        }
        self.ctx.c_u32(s.bits())
    }

    /// Whether logical pointer `p` points into a variable initialized with `OpConstantNull`
    /// (llvm-spirv turns `memset(p, 0, n)` into a copy from such a variable).
    fn is_zero_data(&self, p: Word) -> bool {
        let Some(l) = self.logical.get(&p) else {
            return false;
        };
        let init = self
            .ctx
            .def(l.root)
            .filter(|d| d.class.opcode == Op::Variable)
            .and_then(|d| id_operand(d, 1));
        init.and_then(|c| self.ctx.def(c))
            .is_some_and(|c| c.class.opcode == Op::ConstantNull)
    }

    /// Emits atomic exchange, load or store `i`; on a float in global memory those would need
    /// Vulkan's float-atomics features, so they run on the integer of the same bits instead (a
    /// pointer cast, possible on physical pointers only). `__local` (Workgroup) variables,
    /// whose logical pointers cannot be cast, mostly hold integers already ([`inthome`]); on
    /// one that could not, a 32-bit float atomic stays as it is: it needs
    /// `shaderSharedFloat32Atomics`, which [`super::finish`] checks.
    fn float_atomic_as_int(&mut self, mut i: Instruction) -> Result<(), String> {
        // Operands that were folded away to their root.
        crate::compiler::spv::for_each_used_id_mut(&mut i, |w| {
            if let Some(a) = self.alias.get(w) {
                *w = *a;
            }
        });
        let op = i.class.opcode;
        let p = id_operand(&i, 0).ok_or("atomic pointer")?;
        let value = if op == Op::AtomicLoad {
            None
        } else {
            Some(id_operand(&i, 3).ok_or("atomic value")?)
        };
        let ty = match value {
            Some(v) => self.ty(v),
            None => i.result_type,
        }
        .ok_or("atomic type")?;
        let is_float = self
            .ctx
            .def(ty)
            .is_some_and(|d| d.class.opcode == Op::TypeFloat);
        if !is_float {
            if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                self.types.insert(r, t);
            }
            self.out.push(i);
            return Ok(());
        }
        match self.sc_of(p) {
            Some(StorageClass::PhysicalStorageBuffer) => {}
            Some(StorageClass::Workgroup) if self.ctx.scalar_width(ty) == Some(32) => {
                if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                    self.types.insert(r, t);
                }
                self.out.push(i);
                return Ok(());
            }
            _ => {
                return Err(
                    "atomics on this float in private or local memory are not supported".into(),
                )
            }
        }
        let w = self.ctx.scalar_width(ty).unwrap_or(32);
        let it = self.ctx.t_int(w);
        let ipt = self.ctx.t_ptr(StorageClass::PhysicalStorageBuffer, it);
        let ip = self.emit(Op::Bitcast, ipt, vec![Operand::IdRef(p)]);
        i.operands[0] = Operand::IdRef(ip);
        if let Some(v) = value {
            let iv = self.emit(Op::Bitcast, it, vec![Operand::IdRef(v)]);
            i.operands[3] = Operand::IdRef(iv);
        }
        match i.result_id {
            Some(rid) => {
                let r = self.ctx.id();
                self.types.insert(r, it);
                self.out.push(inst(op, Some(it), Some(r), i.operands));
                self.types.insert(rid, ty);
                self.out.push(inst(
                    Op::Bitcast,
                    Some(ty),
                    Some(rid),
                    vec![Operand::IdRef(r)],
                ));
            }
            None => self.out.push(inst(op, None, None, i.operands)),
        }
        Ok(())
    }

    /// As [`Walk::semantics`], with any ordering narrowed to `order` (atomic loads may only
    /// acquire, stores only release).
    fn semantics_only(&mut self, id: Word, order: MemorySemantics) -> Word {
        let v = self.const_value(id).unwrap_or(0) as u32;
        let mut s = MemorySemantics::from_bits_truncate(v);
        let orders = MemorySemantics::ACQUIRE
            | MemorySemantics::RELEASE
            | MemorySemantics::ACQUIRE_RELEASE
            | MemorySemantics::SEQUENTIALLY_CONSISTENT;
        if s.intersects(orders) {
            s.remove(orders);
            s |= order;
        }
        if s.contains(MemorySemantics::CROSS_WORKGROUP_MEMORY) {
            s.remove(MemorySemantics::CROSS_WORKGROUP_MEMORY);
            s |= MemorySemantics::UNIFORM_MEMORY;
        }
        self.ctx.c_u32(s.bits())
    }

    fn scope(&mut self, id: Word, min: Option<Scope>) -> Word {
        let v = self.const_value(id).unwrap_or(1) as u32;
        let mut s = if v == Scope::CrossDevice as u32 {
            Scope::Device as u32
        } else {
            v
        };
        if let Some(m) = min {
            // Smaller numbers are wider scopes (Device 1 < Workgroup 2 < Subgroup 3).
            s = s.min(m as u32);
        }
        self.ctx.c_u32(s)
    }

    fn instruction(&mut self, mut i: Instruction) -> Result<(), String> {
        // `OpAtomicCompareExchangeWeak` (C11 `atomic_compare_exchange_weak`) needs the Kernel
        // capability; the strong exchange (same operands) is a valid weak one.
        if i.class.opcode == Op::AtomicCompareExchangeWeak {
            i = inst(
                Op::AtomicCompareExchange,
                i.result_type,
                i.result_id,
                std::mem::take(&mut i.operands),
            );
        }
        let op = i.class.opcode;
        let rid = i.result_id.unwrap_or(0);
        if !self.flat_derived.is_empty() {
            if op == Op::Variable && self.flat_derived.get(&rid) == Some(&rid) {
                return self.flat_variable(&i);
            }
            if op == Op::Variable && self.flat.contains_key(&rid) {
                // A member of an arena ([`arena`]): it lives there.
                return Ok(());
            }
            match self.flat_instruction(i)? {
                None => return Ok(()),
                Some(x) => i = x,
            }
        }
        match op {
            Op::Variable => {
                if let Some(sc) = i
                    .result_type
                    .and_then(|t| self.ctx.ptr_info(t))
                    .map(|p| p.0)
                {
                    self.logical.insert(
                        rid,
                        Logical {
                            root: rid,
                            sc,
                            idx: vec![],
                        },
                    );
                }
            }
            Op::PtrAccessChain
            | Op::InBoundsPtrAccessChain
            | Op::AccessChain
            | Op::InBoundsAccessChain => {
                let base = id_operand(&i, 0).ok_or("access chain base")?;
                let base = self.alias.get(&base).copied().unwrap_or(base);
                let ids: Vec<Word> = (1..i.operands.len())
                    .filter_map(|k| id_operand(&i, k))
                    .collect();
                let has_first = matches!(op, Op::PtrAccessChain | Op::InBoundsPtrAccessChain);
                if let Some(l) = self.logical.get(&base).cloned() {
                    self.check_access(base)?;
                    let pointee = i
                        .result_type
                        .and_then(|t| self.ctx.ptr_info(t))
                        .map(|p| p.1)
                        .ok_or("chain type")?;
                    let (first, rest) = if has_first {
                        (ids.first().copied(), &ids[1.min(ids.len())..])
                    } else {
                        (None, &ids[..])
                    };
                    return self.fold(rid, pointee, &l, first, rest);
                }
                let new_op = if has_first {
                    Op::PtrAccessChain
                } else {
                    Op::AccessChain
                };
                i = inst(
                    new_op,
                    i.result_type,
                    i.result_id,
                    std::mem::take(&mut i.operands),
                );
            }
            Op::Bitcast => {
                let src = id_operand(&i, 0).ok_or("bitcast operand")?;
                let src = self.alias.get(&src).copied().unwrap_or(src);
                let target = i.result_type.unwrap_or(0);
                if self.ctx.ptr_info(target).is_some() {
                    self.casts.insert(rid, src);
                    if let Some(l) = self.logical.get(&src).cloned() {
                        return self.bitcast_logical(rid, target, &l);
                    }
                }
            }
            Op::LifetimeStart | Op::LifetimeStop => return Ok(()),
            Op::Load => {
                let p = id_operand(&i, 0).ok_or("load pointer")?;
                if i.result_type
                    .and_then(|t| self.ctx.ptr_info(t))
                    .is_some_and(|(sc, _)| flat::kind_of(sc).is_some())
                {
                    return Err(
                        "a pointer to private or local memory loaded from memory is not supported"
                            .into(),
                    );
                }
                if self.views.contains_key(&p) {
                    return self.pun_load(&i, p);
                }
                let ty = i.result_type.unwrap_or(0);
                i.operands = [
                    vec![Operand::IdRef(p)],
                    self.mem_operands(p, &i.operands[1..], ty),
                ]
                .concat();
            }
            Op::Store => {
                let p = id_operand(&i, 0).ok_or("store pointer")?;
                let v = id_operand(&i, 1).ok_or("store value")?;
                if self
                    .logical
                    .contains_key(&self.alias.get(&v).copied().unwrap_or(v))
                {
                    // Typed pointers have no value form: both variables become
                    // byte-addressed, the pointer an arena offset ([`arena`]).
                    return Err(
                        "a pointer to private or local memory stored in memory is not supported"
                            .into(),
                    );
                }
                if self.views.contains_key(&p) {
                    return self.pun_store(&i, p);
                }
                let v = id_operand(&i, 1).ok_or("store value")?;
                let ty = self.ty(v).unwrap_or(0);
                i.operands = [
                    vec![Operand::IdRef(p), Operand::IdRef(v)],
                    self.mem_operands(p, &i.operands[2..], ty),
                ]
                .concat();
            }
            Op::CopyMemory | Op::CopyMemorySized => return self.copy_memory(&i),
            Op::ConvertPtrToU
                if id_operand(&i, 0).is_some_and(|p| self.logical.contains_key(&p)) =>
            {
                let p = id_operand(&i, 0).ok_or("ConvertPtrToU operand")?;
                return self.logical_ptr_to_u(&i, p);
            }
            Op::ConvertUToPtr
                if i.result_type
                    .and_then(|t| self.ctx.ptr_info(t))
                    .is_some_and(|(sc, _)| flat::kind_of(sc).is_some()) =>
            {
                let kind = i
                    .result_type
                    .and_then(|t| self.ctx.ptr_info(t))
                    .and_then(|(sc, _)| flat::kind_of(sc));
                let mut to_int: Vec<Word> = self
                    .to_int
                    .iter()
                    .copied()
                    .filter(|r| self.logical.get(r).and_then(|l| flat::kind_of(l.sc)) == kind)
                    .collect();
                to_int.sort_unstable();
                self.blame = to_int;
                return Err(
                    "an integer converted to a pointer to private or local memory is not \
                     supported where no such pointer was converted to an integer"
                        .into(),
                );
            }
            Op::PtrCastToGeneric
                if id_operand(&i, 0).is_some_and(|p| {
                    self.logical
                        .contains_key(&self.alias.get(&p).copied().unwrap_or(p))
                }) =>
            {
                return Err("a generic pointer to private or local memory is not supported".into());
            }
            Op::Phi
            | Op::Select
            | Op::PtrEqual
            | Op::PtrNotEqual
            | Op::ConvertPtrToU
            | Op::PtrDiff => {
                let uses_logical = (0..i.operands.len())
                    .filter_map(|k| id_operand(&i, k))
                    .any(|v| self.logical.contains_key(&v));
                if uses_logical {
                    return Err(format!(
                        "{op:?} on pointers to private or local memory is not supported yet"
                    ));
                }
            }
            // C11 atomic_flag (an `int`): test-and-set is an exchange with 1 whose old value
            // is compared with 0, clear a store of 0 (AtomicFlag* need the Kernel capability).
            Op::AtomicFlagTestAndSet => {
                let (Some(p), Some(sc), Some(sem)) =
                    (id_operand(&i, 0), id_operand(&i, 1), id_operand(&i, 2))
                else {
                    return Err("atomic_flag operands".into());
                };
                let bool_ty = i.result_type.ok_or("atomic_flag result type")?;
                let uint = self.ctx.t_int(32);
                let one = self.ctx.c_u32(1);
                let zero = self.ctx.c_u32(0);
                let old = self.ctx.id();
                self.instruction(inst(
                    Op::AtomicExchange,
                    Some(uint),
                    Some(old),
                    vec![
                        Operand::IdRef(p),
                        Operand::IdScope(sc),
                        Operand::IdMemorySemantics(sem),
                        Operand::IdRef(one),
                    ],
                ))?;
                self.types.insert(old, uint);
                self.types.insert(rid, bool_ty);
                self.out.push(inst(
                    Op::INotEqual,
                    Some(bool_ty),
                    Some(rid),
                    vec![Operand::IdRef(old), Operand::IdRef(zero)],
                ));
                return Ok(());
            }
            Op::AtomicFlagClear => {
                let (Some(p), Some(sc), Some(sem)) =
                    (id_operand(&i, 0), id_operand(&i, 1), id_operand(&i, 2))
                else {
                    return Err("atomic_flag operands".into());
                };
                let zero = self.ctx.c_u32(0);
                return self.instruction(inst(
                    Op::AtomicStore,
                    None,
                    None,
                    vec![
                        Operand::IdRef(p),
                        Operand::IdScope(sc),
                        Operand::IdMemorySemantics(sem),
                        Operand::IdRef(zero),
                    ],
                ));
            }
            op if ATOMICS.contains(&op) => {
                let p = id_operand(&i, 0).ok_or("atomic pointer")?;
                self.check_access(p)?;
                let min = match self.sc_of(p) {
                    Some(StorageClass::PhysicalStorageBuffer) => Some(Scope::Device),
                    _ => None,
                };
                let scope = id_operand(&i, 1).ok_or("atomic scope")?;
                i.operands[1] = Operand::IdScope(self.scope(scope, min));
                let sem = id_operand(&i, 2).ok_or("atomic semantics")?;
                let sem = match op {
                    // Vulkan: loads only acquire, stores only release.
                    Op::AtomicLoad => self.semantics_only(sem, MemorySemantics::ACQUIRE),
                    Op::AtomicStore => self.semantics_only(sem, MemorySemantics::RELEASE),
                    _ => self.semantics(sem, false),
                };
                i.operands[2] = Operand::IdMemorySemantics(sem);
                if op == Op::AtomicCompareExchange {
                    let sem = id_operand(&i, 3).ok_or("atomic semantics")?;
                    i.operands[3] = Operand::IdMemorySemantics(self.semantics(sem, true));
                }
                if matches!(op, Op::AtomicExchange | Op::AtomicLoad | Op::AtomicStore) {
                    return self.float_atomic_as_int(i);
                }
            }
            Op::ControlBarrier => {
                let (e, m, s) = (id_operand(&i, 0), id_operand(&i, 1), id_operand(&i, 2));
                let (Some(e), Some(m), Some(s)) = (e, m, s) else {
                    return Err("barrier operands".into());
                };
                i.operands = vec![
                    Operand::IdScope(self.scope(e, None)),
                    Operand::IdScope(self.scope(m, None)),
                    Operand::IdMemorySemantics(self.semantics(s, false)),
                ];
            }
            Op::MemoryBarrier => {
                let (Some(m), Some(s)) = (id_operand(&i, 0), id_operand(&i, 1)) else {
                    return Err("barrier operands".into());
                };
                i.operands = vec![
                    Operand::IdScope(self.scope(m, None)),
                    Operand::IdMemorySemantics(self.semantics(s, false)),
                ];
            }
            Op::ExtInst if id_operand(&i, 0) == self.opencl_std && self.opencl_std.is_some() => {
                match lit_operand(&i, 1) {
                    Some(CL_VLOADN) => return self.vloadn(&i),
                    Some(CL_VSTOREN) => return self.vstoren(&i),
                    Some(n @ 173..=181) => return self.half(&i, n),
                    _ => {}
                }
            }
            _ => {}
        }
        // Operands that were folded away to their root.
        crate::compiler::spv::for_each_used_id_mut(&mut i, |w| {
            if let Some(a) = self.alias.get(w) {
                *w = *a;
            }
        });
        if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
            self.types.insert(id, t);
        }
        self.out.push(i);
        Ok(())
    }

    /// The pointer to element `index` (an integer id) of the array that `ptr` points into.
    fn element_ptr(&mut self, ptr: Word, index: Word, elem: Word) -> Result<Word, String> {
        if let Some(f) = self.flat.get(&ptr).copied() {
            return self.flat_element(f, index, elem);
        }
        if let Some(l) = self.logical.get(&ptr).cloned() {
            let id = self.ctx.id();
            self.fold(id, elem, &l, Some(index), &[])?;
            return Ok(self.alias.get(&id).copied().unwrap_or(id));
        }
        let pty = self.ty(ptr).ok_or("pointer type")?;
        Ok(self.emit(
            Op::PtrAccessChain,
            pty,
            vec![Operand::IdRef(ptr), Operand::IdRef(index)],
        ))
    }

    fn vector_index(&mut self, offset: Word, n: u32, k: u32) -> Result<Word, String> {
        let ot = self.ty(offset).ok_or("offset type")?;
        let w = self.ctx.scalar_width(ot).unwrap_or(64);
        let (cn, ck) = if w == 64 {
            (self.ctx.c_u64(u64::from(n)), self.ctx.c_u64(u64::from(k)))
        } else {
            (self.ctx.c_u32(n), self.ctx.c_u32(k))
        };
        self.types.insert(cn, ot);
        self.types.insert(ck, ot);
        if let Some(o) = self.const_value(offset) {
            let v = o.wrapping_mul(u64::from(n)).wrapping_add(u64::from(k));
            let c = if w == 64 {
                self.ctx.c_u64(v)
            } else {
                self.ctx.c_u32(v as u32)
            };
            self.types.insert(c, ot);
            return Ok(c);
        }
        let base = self.emit(
            Op::IMul,
            ot,
            vec![Operand::IdRef(offset), Operand::IdRef(cn)],
        );
        self.add_index(base, ck)
    }

    /// For `vloadn`/`vstoren` through a physical pointer `p` to `elem`: a pointer to the
    /// vector `vty` at `p[offset * n]` (one access of the whole vector, aligned as `elem`), so
    /// that a program of many `vloadn` stays small for the driver's compiler. `None` for
    /// private and local pointers.
    fn physical_vector_ptr(
        &mut self,
        p: Word,
        offset: Word,
        n: u32,
        elem: Word,
        vty: Word,
    ) -> Result<Option<Word>, String> {
        if self.flat.contains_key(&p) || self.logical.contains_key(&p) {
            return Ok(None);
        }
        let Some(pty) = self.ty(p) else {
            return Ok(None);
        };
        match self.ctx.ptr_info(pty) {
            Some((StorageClass::PhysicalStorageBuffer, pointee)) if pointee == elem => {}
            _ => return Ok(None),
        }
        let idx = self.vector_index(offset, n, 0)?;
        let ep = if self.const_value(idx) == Some(0) {
            p
        } else {
            self.emit(
                Op::PtrAccessChain,
                pty,
                vec![Operand::IdRef(p), Operand::IdRef(idx)],
            )
        };
        let vpt = self.ctx.t_ptr(StorageClass::PhysicalStorageBuffer, vty);
        Ok(Some(self.emit(Op::Bitcast, vpt, vec![Operand::IdRef(ep)])))
    }

    /// `vloadn(offset, p, n)`: n scalar loads from `p[offset * n + k]`.
    fn vloadn(&mut self, i: &Instruction) -> Result<(), String> {
        let (Some(offset), Some(p), Some(n)) =
            (id_operand(i, 2), id_operand(i, 3), lit_operand(i, 4))
        else {
            return Err("vloadn operands".into());
        };
        let p = self.alias.get(&p).copied().unwrap_or(p);
        let vty = i.result_type.ok_or("vloadn type")?;
        let elem = self
            .ctx
            .def(vty)
            .and_then(|d| id_operand(d, 0))
            .ok_or("vloadn type")?;
        if let Some(vp) = self.physical_vector_ptr(p, offset, n, elem, vty)? {
            let rid = i.result_id.ok_or("vloadn id")?;
            let align = self.natural_align(elem).max(1);
            self.types.insert(rid, vty);
            self.out.push(inst(
                Op::Load,
                Some(vty),
                Some(rid),
                vec![
                    Operand::IdRef(vp),
                    Operand::MemoryAccess(MemoryAccess::ALIGNED),
                    Operand::LiteralBit32(align),
                ],
            ));
            return Ok(());
        }
        let mut comps = Vec::new();
        for k in 0..n {
            let idx = self.vector_index(offset, n, k)?;
            let ep = self.element_ptr(p, idx, elem)?;
            comps.push(self.load_through(ep, elem)?);
        }
        let rid = i.result_id.ok_or("vloadn id")?;
        self.types.insert(rid, vty);
        self.out.push(inst(
            Op::CompositeConstruct,
            Some(vty),
            Some(rid),
            comps.into_iter().map(Operand::IdRef).collect(),
        ));
        Ok(())
    }

    /// `vstoren(data, offset, p)`: n scalar stores to `p[offset * n + k]`.
    fn vstoren(&mut self, i: &Instruction) -> Result<(), String> {
        let (Some(data), Some(offset), Some(p)) =
            (id_operand(i, 2), id_operand(i, 3), id_operand(i, 4))
        else {
            return Err("vstoren operands".into());
        };
        let p = self.alias.get(&p).copied().unwrap_or(p);
        let vty = self.ty(data).ok_or("vstoren type")?;
        let d = self.ctx.def(vty).ok_or("vstoren type")?;
        let (elem, n) = (
            id_operand(d, 0).ok_or("vstoren type")?,
            lit_operand(d, 1).ok_or("vstoren type")?,
        );
        if let Some(vp) = self.physical_vector_ptr(p, offset, n, elem, vty)? {
            let align = self.natural_align(elem).max(1);
            self.out.push(inst(
                Op::Store,
                None,
                None,
                vec![
                    Operand::IdRef(vp),
                    Operand::IdRef(data),
                    Operand::MemoryAccess(MemoryAccess::ALIGNED),
                    Operand::LiteralBit32(align),
                ],
            ));
            return Ok(());
        }
        for k in 0..n {
            let idx = self.vector_index(offset, n, k)?;
            let ep = self.element_ptr(p, idx, elem)?;
            let c = self.emit(
                Op::CompositeExtract,
                elem,
                vec![Operand::IdRef(data), Operand::LiteralBit32(k)],
            );
            self.store_through(ep, c, elem)?;
        }
        Ok(())
    }

    /// For a memcpy of `size` bytes through logical pointer `p` to `ty`: while `ty` is larger,
    /// descends to its first element (same address). Returns the pointer and pointee to use.
    fn narrow_copy_side(
        &mut self,
        p: Word,
        ty: Word,
        size: Option<u64>,
    ) -> Result<(Word, Word), String> {
        let (Some(size), Some(l)) = (size, self.logical.get(&p).cloned()) else {
            return Ok((p, ty));
        };
        if self.views.contains_key(&p) {
            return Ok((p, ty));
        }
        let size_of = |w: &Self, t: Word| {
            let defs = Defs::new(&w.ctx.module);
            Layout::new(&w.ctx.module, &defs)
                .size_align(t)
                .map(|s| s.size)
        };
        let (mut cur, mut zeros) = (ty, Vec::new());
        while size_of(self, cur)? > size {
            let d = self.ctx.def(cur).ok_or("memcpy type")?;
            cur = match d.class.opcode {
                Op::TypeArray | Op::TypeStruct | Op::TypeVector => {
                    id_operand(d, 0).ok_or("memcpy element type")?
                }
                _ => return Ok((p, ty)),
            };
            zeros.push(self.ctx.c_u32(0));
        }
        if zeros.is_empty() || size_of(self, cur)? != size {
            return Ok((p, ty));
        }
        let id = self.ctx.id();
        self.fold(id, cur, &l, None, &zeros)?;
        Ok((self.alias.get(&id).copied().unwrap_or(id), cur))
    }

    /// memcpy (`OpCopyMemorySized`, `OpCopyMemory`) as a load and a store of one object: of
    /// the common type, or of the typed side's type when the other side is a physical pointer
    /// (which can be reinterpreted freely) and the size is exactly that type's size.
    fn copy_memory(&mut self, i: &Instruction) -> Result<(), String> {
        let (Some(dst), Some(src)) = (id_operand(i, 0), id_operand(i, 1)) else {
            return Err("copy operands".into());
        };
        let typed = |w: &Self, p: Word| -> Word {
            let p = w.alias.get(&p).copied().unwrap_or(p);
            let r = w.resolve_cast(p);
            w.alias.get(&r).copied().unwrap_or(r)
        };
        let (d, s) = (typed(self, dst), typed(self, src));
        let pointee = |w: &Self, p: Word| -> Option<Word> {
            if let Some(l) = w.logical.get(&p) {
                if !w.views.contains_key(&p) {
                    return w.logical_pointee(l);
                }
            }
            w.ty(p).and_then(|t| w.ctx.ptr_info(t)).map(|x| x.1)
        };
        let (Some(dt), Some(st)) = (pointee(self, d), pointee(self, s)) else {
            return Err("memcpy between pointers of unknown type".into());
        };
        let (size, align) = if i.class.opcode == Op::CopyMemorySized {
            let size = id_operand(i, 2)
                .and_then(|c| self.const_value(c))
                .ok_or("memcpy of a variable size is not supported yet")?;
            let align = i.operands.iter().skip(3).find_map(|o| match o {
                Operand::LiteralBit32(a) => Some(*a),
                _ => None,
            });
            (Some(size), align)
        } else {
            (None, None)
        };
        // A copy into or out of the first element of a larger private or local object (SROA
        // copies one struct into an array of them): narrow that side to the element.
        let (d, dt) = self.narrow_copy_side(d, dt, size)?;
        let (s, st) = self.narrow_copy_side(s, st, size)?;
        let defs = Defs::new(&self.ctx.module);
        let layout = Layout::new(&self.ctx.module, &defs);
        let size_of = |t: Word| layout.size_align(t).map(|s| s.size).ok();
        let fits = |t: Word| size.is_none() || size == size_of(t);
        let d_phys = self.sc_of(d) == Some(StorageClass::PhysicalStorageBuffer);
        let s_phys = self.sc_of(s) == Some(StorageClass::PhysicalStorageBuffer);
        // A copy from all-zero constant data (llvm-spirv's memset to 0) stores a null value.
        let zero_source = !s_phys && self.is_zero_data(s);
        let ty = if (dt == st || s_phys) && fits(dt) {
            dt
        } else if d_phys && fits(st) {
            st
        } else if zero_source && fits(dt) {
            let null = self.ctx.global(Op::ConstantNull, Some(dt), vec![]);
            let mo = self.mem_operands(d, &[], dt);
            self.out.push(inst(
                Op::Store,
                None,
                None,
                [vec![Operand::IdRef(d), Operand::IdRef(null)], mo].concat(),
            ));
            return Ok(());
        } else {
            return Err(
                "memcpy of a partial object or between different types is not supported yet".into(),
            );
        };
        let cast = |w: &mut Self, p: Word, phys: bool, pt: Word| -> Word {
            if !phys || pt == ty {
                return p;
            }
            let t = w.ctx.t_ptr(StorageClass::PhysicalStorageBuffer, ty);
            w.emit(Op::Bitcast, t, vec![Operand::IdRef(p)])
        };
        let s2 = cast(self, s, s_phys, st);
        let d2 = cast(self, d, d_phys, dt);
        let mem = |w: &Self, p: Word| -> Vec<Operand> {
            let old = align
                .map(|a| {
                    vec![
                        Operand::MemoryAccess(MemoryAccess::ALIGNED),
                        Operand::LiteralBit32(a),
                    ]
                })
                .unwrap_or_default();
            w.mem_operands(p, &old, ty)
        };
        let mo = mem(self, s2);
        let v = self.emit(Op::Load, ty, [vec![Operand::IdRef(s2)], mo].concat());
        let mo = mem(self, d2);
        self.out.push(inst(
            Op::Store,
            None,
            None,
            [vec![Operand::IdRef(d2), Operand::IdRef(v)], mo].concat(),
        ));
        Ok(())
    }
}

/// The atomic instructions on a pointer (operand 0) that the memory passes rewrite (the
/// `atomic_flag` ones come apart: Vulkan has no flag type).
pub(super) const ATOMICS: &[Op] = &[
    Op::AtomicLoad,
    Op::AtomicStore,
    Op::AtomicExchange,
    Op::AtomicCompareExchange,
    Op::AtomicIIncrement,
    Op::AtomicIDecrement,
    Op::AtomicIAdd,
    Op::AtomicISub,
    Op::AtomicSMin,
    Op::AtomicUMin,
    Op::AtomicSMax,
    Op::AtomicUMax,
    Op::AtomicAnd,
    Op::AtomicOr,
    Op::AtomicXor,
    Op::AtomicFAddEXT,
];

/// Rewrites the memory accesses of the kernel function.
///
/// First with typed logical pointers only; a private or local variable whose pointers that
/// cannot express (see [`flat`]) is made byte-addressed and the function lowered again from
/// the start, until it lowers or fails for a variable that is already byte-addressed.
///
/// # Errors
/// For memory uses that neither form supports (a message naming the construct).
pub(crate) fn lower_memory(ctx: &mut Ctx) -> Result<(), String> {
    inthome::integer_homes(ctx)?;
    let mut roots = match ctx.module.functions.first() {
        Some(f) => arena::predicted_flat_roots(ctx, &f.blocks),
        None => HashSet::new(),
    };
    let started = std::time::Instant::now();
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        // The copy restarts id allocation where the earlier passes left it.
        let saved = (attempts < 64).then(|| {
            let mut m = ctx.module.clone();
            if let Some(h) = m.header.as_mut() {
                h.bound = ctx.bound();
            }
            m
        });
        match lower_memory_with(ctx, &roots) {
            Ok(()) => {
                tracing::debug!(
                    attempts,
                    flat_variables = roots.len(),
                    ms = started.elapsed().as_millis() as u64,
                    "memory lowered"
                );
                return Ok(());
            }
            Err((msg, blamed)) => {
                let fresh: Vec<Word> = blamed.into_iter().filter(|r| !roots.contains(r)).collect();
                let Some(module) = saved else { return Err(msg) };
                if fresh.is_empty() {
                    return Err(msg);
                }
                *ctx = Ctx::new(module);
                roots.extend(fresh);
            }
        }
    }
}

/// One attempt of [`lower_memory`] with the variables `flat_roots` byte-addressed. Errors
/// carry the roots of the logical pointers the failing instruction used.
fn lower_memory_with(ctx: &mut Ctx, flat_roots: &HashSet<Word>) -> Result<(), (String, Vec<Word>)> {
    let types = ctx.value_types();
    let opencl_std = ctx
        .module
        .ext_inst_imports
        .iter()
        .find_map(|i| match i.operands.first() {
            Some(Operand::LiteralString(s)) if s == "OpenCL.std" => i.result_id,
            _ => None,
        });
    let mut logical = HashMap::new();
    for g in &ctx.module.types_global_values {
        if g.class.opcode == Op::Variable {
            if let (Some(id), Some(Operand::StorageClass(sc))) = (g.result_id, g.operands.first()) {
                if matches!(
                    sc,
                    StorageClass::Workgroup | StorageClass::Private | StorageClass::Function
                ) && !flat_roots.contains(&id)
                {
                    logical.insert(
                        id,
                        Logical {
                            root: id,
                            sc: *sc,
                            idx: vec![],
                        },
                    );
                }
            }
        }
    }
    physical_nulls(ctx);
    let blocks = std::mem::take(&mut ctx.module.functions[0].blocks);
    let (flat_derived, arenas) = if flat_roots.is_empty() {
        (HashMap::new(), None)
    } else {
        let keys = [ctx.id(), ctx.id()];
        let (d, a) = arena::plan(ctx, &blocks, flat_roots, keys);
        (d, Some(a))
    };
    let mut w = Walk {
        ctx,
        types,
        logical,
        views: HashMap::new(),
        casts: HashMap::new(),
        alias: HashMap::new(),
        opencl_std,
        out: Vec::new(),
        flat: HashMap::new(),
        flat_derived,
        pending: HashMap::new(),
        arenas: None,
        to_int: HashSet::new(),
        blame: Vec::new(),
    };
    if let Some(a) = arenas {
        let top = w
            .build_arenas(&a, blocks.first())
            .map_err(|e| (e, vec![]))?;
        w.out.extend(top);
        w.arenas = Some(a);
    }
    w.flat_globals(flat_roots).map_err(|e| (e, vec![]))?;
    let mut new_blocks = Vec::with_capacity(blocks.len());
    for mut b in blocks {
        for i in std::mem::take(&mut b.instructions) {
            let roots: Vec<Word> = crate::compiler::spv::used_ids(&i)
                .iter()
                .filter_map(|u| {
                    let u = w.alias.get(u).copied().unwrap_or(*u);
                    w.logical.get(&u).map(|l| l.root)
                })
                .collect();
            if let Err(e) = w.instruction(i) {
                let mut roots = roots;
                roots.append(&mut w.blame);
                return Err((e, roots));
            }
        }
        b.instructions = std::mem::take(&mut w.out);
        new_blocks.push(b);
    }
    if !w.pending.is_empty() {
        return Err(("a phi names a pointer that is never defined".into(), vec![]));
    }
    // Phis may name folded pointers defined later in block order.
    let alias = std::mem::take(&mut w.alias);
    ctx.module.functions[0].blocks = new_blocks;
    ctx.substitute(&alias);
    Ok(())
}

/// Vulkan has no null constant for physical pointers: NULL becomes `OpConvertUToPtr 0`, computed
/// at the top of the kernel.
fn physical_nulls(ctx: &mut Ctx) {
    let nulls: Vec<(Word, Word)> = ctx
        .module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::ConstantNull)
        .filter_map(|i| Some((i.result_id?, i.result_type?)))
        .filter(|(_, t)| {
            ctx.ptr_info(*t)
                .is_some_and(|(sc, _)| sc == StorageClass::PhysicalStorageBuffer)
        })
        .collect();
    if nulls.is_empty() {
        return;
    }
    let zero = ctx.c_u64(0);
    let mut map = HashMap::new();
    let mut code = Vec::new();
    for (old, ty) in nulls {
        let id = ctx.id();
        code.push(inst(
            Op::ConvertUToPtr,
            Some(ty),
            Some(id),
            vec![Operand::IdRef(zero)],
        ));
        map.insert(old, id);
    }
    let Some(entry) = ctx.module.functions[0].blocks.first_mut() else {
        return;
    };
    let at = entry
        .instructions
        .iter()
        .position(|i| i.class.opcode != Op::Variable)
        .unwrap_or(entry.instructions.len());
    for (k, i) in code.into_iter().enumerate() {
        entry.instructions.insert(at + k, i);
    }
    for i in ctx.module.functions[0]
        .blocks
        .iter_mut()
        .flat_map(|b| b.instructions.iter_mut())
    {
        crate::compiler::spv::for_each_used_id_mut(i, |w| {
            if let Some(n) = map.get(w) {
                *w = *n;
            }
        });
    }
}
